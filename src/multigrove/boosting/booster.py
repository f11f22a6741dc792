"""Booster: a fitted forest — prediction, importance, and the versioned JSON model file.

Model file (UTF-8 JSON, no pickle):
    {"format": "multigrove.booster", "version": 1, "sha256": <hex of the canonical payload>,
     "model": {"objective", "n_features", "n_outputs", "num_class", "multi_strategy",
               "trees_per_iteration", "init_score": [...], "feature_names": [...],
               "categories": {"feature": [category, ...] or null},
               "target_statistics": {...} (data.target_statistics; the trees' features beyond n_features),
               "best_iteration", "params": {...}, "trees": [Tree.to_dict(), ...]}}
The checksum covers ``json.dumps(model, sort_keys=True, separators=(",", ":"))``, so a
truncated file fails to parse and an edited one fails the checksum; every tree is then
checked by Tree.validate.  Files are written to a temporary file beside the target and
renamed over it, so an interrupted save never leaves a half-written model behind.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import numba
import numpy as np
import scipy.sparse as sp
from scipy.special import logsumexp

from .._fileio import atomic_write, check_header, checksum
from .._validation import check_features, check_int
from ..data.categories import categories_from_json, categories_to_json
from ..data.target_statistics import TargetStatistics
from ..kernels._variants import pick
from ..kernels.predict import (
    Forest,
    ObliviousLevels,
    predict_leaf_raw,
    predict_leaf_raw_serial,
    predict_oblivious,
    predict_oblivious_serial,
    predict_raw,
    predict_raw_serial,
    predict_top_k,
)
from ..kernels.shap import tree_shap
from ..params import SPARSE_OUTPUT_OBJECTIVES
from .losses import link
from .tree import Tree, prediction_work, stack_oblivious, stack_trees

FORMAT = "multigrove.booster"


def _raw_rows(X) -> tuple:
    """(X, indptr, indices, data) as the raw predict kernels take them: dense X with an empty CSR,
    or a CSR matrix with an empty (0, F) X."""
    if sp.issparse(X):
        M = sp.csr_matrix(X)
        return (np.empty((0, M.shape[1])), M.indptr.astype(np.int64), M.indices.astype(np.int64), M.data)
    return X, np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, X.dtype)
#: the newest model file version this code writes and reads; version 2 added categorical features ("categories",
#: and the set splits of Tree): a file is written with the oldest version that holds its model, so that a model
#: without categorical features stays readable by multigrove versions that read version 1 only
VERSION = 2
_CONTRIB_BLOCK = 4096  # rows explained per kernel call (bounds the densified copy of sparse X)
_UNSET = object()  # a cache slot not filled yet
_LINKS = ("regression", "binary", "multiclass", "multilabel", "custom") + SPARSE_OUTPUT_OBJECTIVES


def sum_sparse_leaves(leaves: np.ndarray, trees: list[Tree], n_outputs: int) -> sp.csr_matrix:
    """The raw scores of a sparse-output model (its start score is 0) as CSR (n_rows, n_outputs): the sum
    of the k-sparse leaves each row reaches; leaves (n_rows, T).  Memory O(n_rows T k), never n x L."""
    n = leaves.shape[0]
    cols = [tree.columns()[leaves[:, t]] for t, tree in enumerate(trees)]
    vals = [tree.leaf_value[leaves[:, t]] for t, tree in enumerate(trees)]
    if not trees:
        return sp.csr_matrix((n, n_outputs))
    cols, vals = np.hstack(cols), np.hstack(vals)
    rows = np.repeat(np.arange(n), cols.shape[1])
    scores = sp.csr_matrix((vals.ravel(), (rows, cols.ravel())), shape=(n, n_outputs))  # sums duplicates
    scores.eliminate_zeros()
    scores.sort_indices()
    return scores


class Booster:
    """A trained model.  Build with multigrove.train, or Booster(model_file=path)."""

    def __init__(self, model_file: str | os.PathLike | None = None, model_str: str | None = None):
        self.trees: list[Tree] = []
        self.init_score = np.zeros(1)
        self.objective = "regression"
        self.n_features = 0
        self.n_outputs = 1
        self.num_class = 0
        self.multi_strategy = "multi_output"
        self.trees_per_iteration = 1
        self.feature_names: list[str] = []
        #: {feature index: its category list, or None for integer codes}: the categorical features
        #: (multigrove.data.categories); a DataFrame given to predict is encoded with these lists
        self.categories: dict = {}
        #: the ordered target statistics appended to the input features (data.target_statistics), or None
        self.target_statistics = None
        self.params: dict = {}
        self.best_iteration = 0       # 1-based count of rounds of the best model; 0 = use all
        self.best_score: dict = {}
        self.output_best_iteration: list | None = None  # per output, after per-output early stopping
        self.evals_result: dict = {}  # {data: {metric: [values]}} of the last train() call (not saved)
        self._stack: Forest | None = None
        self._stack_n = -1
        self._levels: ObliviousLevels | None | object = _UNSET  # of the cached stack (see _levels_of)
        if model_file is not None and model_str is not None:
            raise ValueError("give model_file or model_str, not both")
        if model_file is not None:
            path = Path(model_file)
            try:
                text = path.read_text(encoding="utf-8")
            except FileNotFoundError:
                raise FileNotFoundError(f"model file {str(path)!r} does not exist") from None
            except IsADirectoryError:
                raise IsADirectoryError(f"model file {str(path)!r} is a folder, not a model file") from None
            except UnicodeDecodeError:
                raise ValueError(f"model file {str(path)!r} is not a multigrove model (not UTF-8 text)") from None
            self._load_string(text, source=str(path))
        elif model_str is not None:
            self._load_string(model_str, source="model_str")

    # ------------------------------------------------------------------ training-time API
    def _append(self, tree: Tree) -> None:
        self.trees.append(tree)

    def stop_outputs(self, best_iterations: list[int]) -> None:
        """Set each output's leaf values after its best round to 0 (per-output early stopping).

        The model then predicts every output as it did at its own best round.

        Parameters
        ----------
        best_iterations : list of int
            Per output, the 1-based count of rounds of its best model.
        """
        tpi = max(self.trees_per_iteration, 1)
        for j, best in enumerate(best_iterations):
            for tree in self.trees[best * tpi:]:
                if tree.leaf_cols is not None:
                    tree.leaf_value[tree.leaf_cols == j] = 0.0
                else:
                    tree.leaf_value[:, tree.output_cols == j] = 0.0
        self.output_best_iteration = [int(b) for b in best_iterations]
        self._stack = None

    def num_trees(self) -> int:
        """The number of trees (one per round, or one per output a round with one_vs_all)."""
        return len(self.trees)

    def current_iteration(self) -> int:
        """The number of boosting rounds the model holds."""
        return len(self.trees) // max(self.trees_per_iteration, 1)

    def _trees_for(self, num_iteration: int | None, start_iteration: int = 0) -> list[Tree]:
        start_iteration = check_int(start_iteration, "start_iteration", 0, self.current_iteration())
        if num_iteration is None and start_iteration == 0:
            num_iteration = self.best_iteration if self.best_iteration > 0 else self.current_iteration()
        if num_iteration is None or num_iteration <= 0:
            num_iteration = self.current_iteration() - start_iteration
        per = self.trees_per_iteration
        return self.trees[start_iteration * per: (start_iteration + num_iteration) * per]

    def _stacked(self, trees: list[Tree]) -> Forest:
        """The trees as a Forest (the model's own cached while its trees do not change)."""
        if trees is self.trees or len(trees) == len(self.trees):
            if self._stack is None or self._stack_n != len(self.trees):
                self._stack, self._stack_n, self._levels = stack_trees(self.trees), len(self.trees), _UNSET
            return self._stack
        return stack_trees(trees)

    def _levels_of(self, trees: list[Tree]) -> ObliviousLevels | None:
        """The trees by levels for the symmetric-tree kernel, or None (not a symmetric model)."""
        if self.params.get("growth_policy") != "symmetric":
            return None
        if trees is self.trees or len(trees) == len(self.trees):
            self._stacked(trees)
            if self._levels is _UNSET:
                self._levels = stack_oblivious(self.trees)
            return self._levels
        return stack_oblivious(trees)

    # ------------------------------------------------------------------ prediction
    def predict(self, X, raw_score: bool = False, num_iteration: int | None = None,
                pred_leaf: bool = False, start_iteration: int = 0, pred_contrib: bool = False,
                top_k: int | None = None):
        """Predict for raw features X.

        Parameters
        ----------
        X : array-like, pandas DataFrame or scipy.sparse matrix, shape (n_rows, n_features)
        raw_score : bool, default False
            Return raw scores (before the link function).
        num_iteration : int, optional
            Use the trees of this many rounds; defaults to ``best_iteration`` when early stopping
            set one, else all.
        pred_leaf : bool, default False
            Return (n_rows, n_trees) int32: the leaf each row reaches in each tree.
        start_iteration : int, default 0
            Start from this round (staged prediction): the trees of rounds start_iteration ..
            start_iteration + num_iteration - 1 (num_iteration None or <= 0: up to the last round),
            without the start score, so that the raw scores of consecutive ranges add up to the raw
            score of the whole model.
        pred_contrib : bool, default False
            Return SHAP values of the raw score (exact path-dependent TreeSHAP): shape
            (n_rows, n_features + 1, n_outputs), the last column along axis 1 the expected value
            (start score plus each tree's cover-weighted mean output); one-output models drop the
            last axis: (n_rows, n_features + 1), the LightGBM / XGBoost layout.  For every row and
            output, the values sum to the raw score.  Vector and k-sparse leaves are explained in
            one walk per tree.
        top_k : int, optional
            Return ``(indices, scores)``, each (n_rows, top_k): every row's top_k outputs by score,
            best first (ties: the smaller output), with their predictions (probabilities, or raw scores
            with raw_score=True; multiclass probabilities are normalised over every class).  The
            leaf values a row reaches are merged in a sparse accumulator: with k-sparse leaves a row
            costs O(T k) for T trees of k-value leaves, never O(n_outputs); with dense leaves every
            output is touched (O(T n_outputs)).  ``multigrove.xmc.metrics`` takes the pair directly.

        Returns
        -------
        ndarray
            Values (regression), probabilities (binary: P(y=1), shape (n,); multiclass: (n, K);
            multilabel: (n, L) independent probabilities), raw scores, leaf indices or SHAP values
            as asked.  One-output models return shape (n,).  Sparse-output objectives
            (``sparse_hinge``, ``sparse_squared``) return their scores as a scipy CSR matrix (n, L)
            holding only the outputs some reached leaf stores (all others score 0).
        """
        X, _ = check_features(X, n_features=self.n_features, allow_empty=True, expected_names=self.feature_names,
                              categories=self.categories)
        if self.target_statistics is not None:  # the trees read the statistics of the encoded features too
            X = self.target_statistics.encode(X)
        if sum(bool(v) for v in (pred_leaf, pred_contrib, top_k is not None)) > 1:
            raise ValueError("give at most one of pred_leaf, pred_contrib and top_k")
        trees = self._trees_for(num_iteration, start_iteration)
        sparse_scores = self.objective in SPARSE_OUTPUT_OBJECTIVES
        if pred_contrib:
            if sparse_scores:
                raise ValueError(f"pred_contrib is not available for objective '{self.objective}': SHAP values of "
                                 f"{self.n_outputs} sparse outputs would be dense (n_rows x n_features x n_outputs)")
            return self._contributions(X, trees, start_iteration == 0)
        if top_k is not None:
            top_k = check_int(top_k, "top_k", 1, self.n_outputs, "the number of outputs")
            return self._top_k(X, trees, top_k, raw_score, start_iteration == 0)
        rows = _raw_rows(X)
        forest = self._stacked(trees)
        if pred_leaf or sparse_scores:
            out = np.zeros((X.shape[0], len(trees)), dtype=np.int32)
            pick(predict_leaf_raw, predict_leaf_raw_serial, out.size)(*rows, forest, out)
            return out if pred_leaf else sum_sparse_leaves(out, trees, self.n_outputs)
        start = self.init_score if start_iteration == 0 else np.zeros_like(self.init_score)
        raw = np.tile(start, (X.shape[0], 1))
        levels = self._levels_of(trees)  # symmetric trees have their own kernel
        if levels is not None:
            pick(predict_oblivious, predict_oblivious_serial, prediction_work(forest, X.shape[0]))(
                *rows, levels, forest, raw)
        else:
            pick(predict_raw, predict_raw_serial, prediction_work(forest, X.shape[0]))(*rows, forest, raw)
        out = raw if raw_score else self._link(raw)
        return out[:, 0] if self.n_outputs == 1 else out

    def _contributions(self, X, trees: list[Tree], with_start: bool) -> np.ndarray:
        """SHAP values (n, F + 1, n_outputs) of the raw score of these trees (see predict)."""
        n, n_outputs = X.shape[0], self.n_outputs
        out = np.zeros((n, X.shape[1] + 1, n_outputs))
        base = (self.init_score if with_start else np.zeros(n_outputs)) + \
            sum((t.expected_value(n_outputs) for t in trees), np.zeros(n_outputs))
        out[:, -1, :] = base
        if trees and n:
            forest = stack_trees(trees)
            fraction = np.concatenate([t.left_fraction() for t in trees])
            depth = max(t.depth() for t in trees)
            for lo in range(0, n, _CONTRIB_BLOCK):  # sparse X densified a block of rows at a time
                block = X[lo: lo + _CONTRIB_BLOCK]
                dense = np.asarray(block.toarray() if sp.issparse(block) else block, dtype=np.float64)
                tree_shap(np.ascontiguousarray(dense), forest, fraction, depth, out[lo: lo + _CONTRIB_BLOCK])
        if self.target_statistics is not None:  # a statistic's share goes to its categorical feature
            out = self.target_statistics.fold(out, self.n_features, axis=1)
        return out[:, :, 0] if n_outputs == 1 else out

    def _top_k(self, X, trees: list[Tree], k: int, raw_score: bool, with_start: bool) -> tuple:
        """(indices, scores) of every row's k best outputs (see predict)."""
        n = X.shape[0]
        start = self.init_score if with_start else np.zeros(self.n_outputs)
        order = np.argsort(-start, kind="stable").astype(np.int64)
        lse = float(logsumexp(start))
        forest = self._stacked(trees)
        widest = sum(int(t.leaf_value.shape[1]) for t in trees)
        idx, val, row_lse = np.empty((n, k), np.int64), np.empty((n, k)), np.empty(n)
        chunks = max(1, min(n, 4 * numba.get_num_threads()))
        predict_top_k(*_raw_rows(X), forest, start, order, lse, max(widest, 1), chunks, idx, val, row_lse)
        if raw_score or self.objective in ("regression", "custom"):
            return idx, val
        if self.objective == "multiclass":
            return idx, np.exp(val - row_lse[:, None])
        return idx, link(self.objective, val)

    def _link(self, raw: np.ndarray) -> np.ndarray:
        return link(self.objective, raw)

    def refit(self, data, label, weight=None, decay_rate: float = 0.9) -> "Booster":
        """A new Booster with the same trees and leaf values fitted again on (data, label).

        Rows go down the fixed tree structures; tree by tree, in training order, each leaf's value is
        recomputed from the gradients of the new data at the scores of the trees before it
        (-G / (H + lambda_l2) * learning_rate, the model's parameters, on the leaf's own outputs) and
        mixed with the old one: ``decay_rate * old + (1 - decay_rate) * new`` (LightGBM's rule; a leaf
        no row reaches keeps its value).  Regression is refitted in the model's own units (target
        scaling is not redone).  This model is not changed.

        Parameters
        ----------
        data : array-like or sparse matrix, shape (n_rows, n_features)
        label : array-like, the labels as ``Dataset`` takes them (NaN: missing, for the objectives
            that mask it)
        weight : array-like, shape (n_rows,), optional
        decay_rate : float in [0, 1], default 0.9

        Returns
        -------
        Booster
        """
        from .engine import refit_booster
        return refit_booster(self, data, label, weight, decay_rate)

    # ------------------------------------------------------------------ inspection
    def feature_importance(self, importance_type: str = "split", iteration: int | None = None) -> np.ndarray:
        """Importance of each feature.

        Parameters
        ----------
        importance_type : {"split", "gain"}, default "split"
            The number of splits on the feature (int64), or the total gain of those splits (float64).
        iteration : int, optional
            Count only the trees of the first ``iteration`` rounds (default: best_iteration, else all).

        Returns
        -------
        ndarray, shape (n_features,)
        """
        if importance_type not in ("split", "gain"):
            raise ValueError(f"importance_type must be 'split' or 'gain', got {importance_type!r}")
        out = np.zeros(self.n_model_features, dtype=np.float64)
        for t in self._trees_for(iteration):
            w = np.ones(t.n_internal) if importance_type == "split" else t.split_gain
            np.add.at(out, t.split_feature, w)
        if self.target_statistics is not None:  # a statistic's splits count for its categorical feature
            out = self.target_statistics.fold(out, self.n_features, axis=0)
        return out.astype(np.int64) if importance_type == "split" else out

    @property
    def n_model_features(self) -> int:
        """The features the trees split on: the input features, and the target statistics appended to them."""
        extra = 0 if self.target_statistics is None else len(self.target_statistics.features) * \
            self.target_statistics.width
        return self.n_features + extra

    def model_feature_names(self) -> list[str]:
        """The names of the features the trees split on (the input features', then the target statistics')."""
        names = list(self.feature_names)
        return names if self.target_statistics is None else names + self.target_statistics.names(names)

    def feature_name(self) -> list[str]:
        """The feature names (given to the Dataset, or ``f0``, ``f1``, ...)."""
        return list(self.feature_names)

    # ------------------------------------------------------------------ persistence
    def model_to_dict(self) -> dict:
        """The model as a JSON-ready dict (the ``model`` object of the model file)."""
        return {
            "objective": self.objective,
            "n_features": int(self.n_features),
            "n_outputs": int(self.n_outputs),
            "num_class": int(self.num_class),
            "multi_strategy": self.multi_strategy,
            "trees_per_iteration": int(self.trees_per_iteration),
            "init_score": [float(v) for v in self.init_score],
            "feature_names": list(self.feature_names),
            **({"categories": categories_to_json(self.categories)} if self.categories else {}),
            **({"target_statistics": self.target_statistics.to_json()} if self.target_statistics is not None else {}),
            "best_iteration": int(self.best_iteration),
            "output_best_iteration": self.output_best_iteration,
            "params": self.params,
            "trees": [t.to_dict() for t in self.trees],
        }

    def model_to_string(self) -> str:
        """The model file's text: versioned JSON with a sha256 checksum of the model (see the module docstring)."""
        model = self.model_to_dict()
        canon = json.dumps(model, sort_keys=True, separators=(",", ":"), allow_nan=False)
        digest = checksum([canon.encode("utf-8")])
        version = 2 if self.categories or self.target_statistics is not None else 1
        return json.dumps({"format": FORMAT, "version": version, "sha256": digest, "model": model},
                          separators=(",", ":"), allow_nan=False)

    def save_model(self, filename: str | os.PathLike) -> "Booster":
        """Write the model atomically (temporary file in the same directory, then renamed over the target).

        Parameters
        ----------
        filename : str or PathLike

        Returns
        -------
        Booster
            self
        """
        text = self.model_to_string()
        with atomic_write(filename) as fh:
            fh.write(text.encode("utf-8"))
        return self

    @classmethod
    def load_model(cls, filename: str | os.PathLike) -> "Booster":
        """Read a model file written by ``save_model`` (checksum and every tree validated).

        Parameters
        ----------
        filename : str or PathLike

        Returns
        -------
        Booster
        """
        return cls(model_file=filename)

    def _load_string(self, text: str, source: str) -> None:
        where = f"model file {source!r}" if source != "model_str" else "model string"
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{where} is not valid JSON (truncated or not a multigrove model): "
                             f"{exc.msg} at line {exc.lineno} column {exc.colno}") from None
        check_header(doc, FORMAT, VERSION, where)
        model = doc.get("model")
        if not isinstance(model, dict):
            raise ValueError(f"{where} has no 'model' object")
        canon = json.dumps(model, sort_keys=True, separators=(",", ":"), allow_nan=False)
        if checksum([canon.encode("utf-8")]) != doc.get("sha256"):
            raise ValueError(f"{where} fails its sha256 checksum: the file was edited or corrupted")
        self._from_model_dict(model, where)

    def _from_model_dict(self, model: dict, where: str) -> None:
        def need(key, kind):
            value = model.get(key)
            if key not in model or not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
                raise ValueError(f"{where}: field '{key}' is missing or not a {getattr(kind, '__name__', kind)}")
            return model[key]
        objective = need("objective", str)
        if objective not in _LINKS:
            raise ValueError(f"{where}: unknown objective {objective!r}")
        n_features, n_outputs = need("n_features", int), need("n_outputs", int)
        if n_features < 1 or n_outputs < 1:
            raise ValueError(f"{where}: n_features and n_outputs must be >= 1")
        init = np.asarray(need("init_score", list), dtype=np.float64)
        if init.shape != (n_outputs,) or not np.all(np.isfinite(init)):
            raise ValueError(f"{where}: init_score must hold {n_outputs} finite numbers")
        tpi = need("trees_per_iteration", int)
        trees_raw = need("trees", list)
        if tpi < 1 or len(trees_raw) % tpi:
            raise ValueError(f"{where}: {len(trees_raw)} trees is not a multiple of trees_per_iteration={tpi}")
        names = need("feature_names", list)
        if len(names) != n_features:
            raise ValueError(f"{where}: feature_names has {len(names)} names for {n_features} features")
        statistics = TargetStatistics.from_json(model.get("target_statistics"), n_features, where)
        extra = 0 if statistics is None else len(statistics.features) * statistics.width
        trees = []
        for i, td in enumerate(trees_raw):
            if not isinstance(td, dict):
                raise ValueError(f"{where}: tree {i} is not an object")
            trees.append(Tree.from_dict(td, n_features + extra, n_outputs, where=f"{where}, tree {i}"))
        self.objective, self.n_features, self.n_outputs = objective, n_features, n_outputs
        self.num_class = need("num_class", int)
        self.multi_strategy = need("multi_strategy", str)
        self.trees_per_iteration = tpi
        self.init_score = init
        self.feature_names = [str(n) for n in names]
        self.categories = categories_from_json(model.get("categories"), n_features, where)
        self.target_statistics = statistics
        for i, tree in enumerate(trees):
            for node in np.flatnonzero(tree.cat_index >= 0) if tree.cat_index is not None else ():
                if int(tree.split_feature[node]) not in self.categories:
                    raise ValueError(f"{where}, tree {i}: node {node} splits feature {int(tree.split_feature[node])} "
                                     "on a set of categories, but the model has no categories for it")
        self.best_iteration = need("best_iteration", int)
        per_output = model.get("output_best_iteration")
        if per_output is not None and (not isinstance(per_output, list) or len(per_output) != n_outputs
                                       or not all(isinstance(b, int) and b >= 0 for b in per_output)):
            raise ValueError(f"{where}: output_best_iteration must be {n_outputs} integers >= 0")
        self.output_best_iteration = per_output
        self.params = need("params", dict)
        self.trees = trees
        self._stack = None
