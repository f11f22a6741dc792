"""Training parameters: one frozen, self-validating dataclass and its alias table.

Both API layers take their defaults from :class:`Params`: ``multigrove.train`` reads a
dict of these names (or their aliases), the scikit-learn estimators take the same names
as constructor arguments.  Every check raises ``ValueError``/``TypeError`` with a message
of the form ``"max_depth must be >= 1 or -1, got 0"``.
"""
from __future__ import annotations

import dataclasses
import difflib
import numbers
import os
from typing import Any, Mapping

import numpy as np

from ._dtypes import MAX_VALUE_BINS
from ._validation import check_int, check_real

OBJECTIVES = ("regression", "binary", "multiclass", "multilabel", "sparse_squared", "sparse_hinge")
#: objectives whose labels, scores and gradients stay sparse (GBDT-Sparse; boosting/sparse_output.py)
SPARSE_OUTPUT_OBJECTIVES = ("sparse_squared", "sparse_hinge")
OBJECTIVE_ALIASES = {
    "regression_l2": "regression", "l2": "regression", "mse": "regression",
    "mean_squared_error": "regression", "squared_error": "regression",
    "logistic": "binary", "softmax": "multiclass", "multi_logloss": "multiclass",
    "multilabel_logloss": "multilabel", "multi_label": "multilabel",
}
STRATEGIES = ("multi_output", "one_vs_all")
TARGET_SCALINGS = ("auto", "none", "standard")
SAMPLE_STRATEGIES = ("bagging", "goss")
SKETCHES = ("none", "top_outputs", "random_sampling", "random_projection", "svd", "auto")
SPARSE_SPLITS = ("unrestricted", "restricted")
GROW_POLICIES = ("leafwise", "depthwise", "symmetric")
DEVICE_TYPES = ("cpu", "cuda")
METRICS = ("l2", "rmse", "binary_logloss", "binary_error", "multi_logloss", "multi_error",
           "multilabel_logloss", "precision_at_k", "ndcg_at_k", "psprecision_at_k")
METRIC_ALIASES = {
    "mse": "l2", "mean_squared_error": "l2", "regression": "l2", "l2_root": "rmse",
    "root_mean_squared_error": "rmse", "logloss": "binary_logloss", "binary": "binary_logloss",
    "error": "binary_error", "multiclass": "multi_logloss", "softmax": "multi_logloss",
    "mlogloss": "multi_logloss", "merror": "multi_error", "multilabel": "multilabel_logloss",
    "p@k": "precision_at_k", "precision": "precision_at_k", "ndcg": "ndcg_at_k", "ndcg@k": "ndcg_at_k",
    "psp": "psprecision_at_k", "psp@k": "psprecision_at_k",
}

#: alias -> canonical parameter name (the LightGBM / XGBoost / scikit-learn spellings)
ALIASES = {
    "eta": "learning_rate", "shrinkage_rate": "learning_rate",
    "num_leaf": "num_leaves", "max_leaves": "num_leaves", "max_leaf_nodes": "num_leaves",
    "min_child_samples": "min_data_in_leaf", "min_data_per_leaf": "min_data_in_leaf",
    "min_samples_leaf": "min_data_in_leaf",
    "min_child_weight": "min_sum_hessian_in_leaf", "min_sum_hessian": "min_sum_hessian_in_leaf",
    "reg_lambda": "lambda_l2", "lambda": "lambda_l2", "l2_regularization": "lambda_l2",
    "min_split_gain": "min_gain_to_split", "gamma": "min_gain_to_split",
    "max_bins": "max_bin",
    "num_thread": "num_threads", "nthread": "num_threads", "n_jobs": "num_threads",
    "random_state": "seed", "random_seed": "seed",
    "num_classes": "num_class",
    "grow_policy": "growth_policy", "tree_growth": "growth_policy", "depth": "max_depth",
    "l2_leaf_reg": "lambda_l2",
    "metrics": "metric", "eval_metric": "metric",
    "strategy": "multi_strategy",
    "sketch_method": "sketch", "sketch_dim": "sketch_k", "topk": "leaf_sparsity",
    "application": "objective", "app": "objective", "loss": "objective",
    "verbose": "verbosity",
    "is_enable_bundle": "enable_bundle", "bundle": "enable_bundle",
    "is_sparse": "is_enable_sparse", "enable_sparse": "is_enable_sparse", "sparse": "is_enable_sparse",
    "sub_row": "bagging_fraction", "subsample": "bagging_fraction", "bagging": "bagging_fraction",
    "subsample_freq": "bagging_freq",
    "sub_feature": "feature_fraction", "colsample_bytree": "feature_fraction",
    "data_sample_strategy_name": "data_sample_strategy",
    "cat_feature": "categorical_feature", "categorical_column": "categorical_feature",
    "cat_column": "categorical_feature", "categorical_features": "categorical_feature",
    "cat_features": "categorical_feature",
    "one_hot_max_size": "max_cat_to_onehot",
    "device": "device_type",
}

#: default sparse thresholds: measured on Otto, s/round 0.0102 (0.8) vs 0.0112 (0.5) for a binary tree,
#: 0.0199 (0.8) vs 0.0160 (0.5) for its 9-output tree
SPARSE_THRESHOLD_NARROW = 0.8
SPARSE_THRESHOLD_WIDE = 0.5

#: default leaves per tree (num_leaves=None): LightGBM's 31 for one output; a multi-output tree
#: replaces one tree per output, and with 127 leaves it reaches a lower test loss in less time (Otto:
#: LightGBM's best log loss in 0.84-0.89x LightGBM's time; rf1 and scm20d: lower RMSE, CHANGELOG.md)
SINGLE_OUTPUT_LEAVES = 31
MULTI_OUTPUT_LEAVES = 127
#: leaf_sparsity=0 with a sparse-output objective: the labels each leaf keeps (GBDT-Sparse's k)
SPARSE_OUTPUT_LEAF_K = 20

#: min_data_in_leaf=None: LightGBM's 20 rows per leaf, at most one leaf's worth per 50 training rows
MIN_DATA_IN_LEAF = 20
MIN_DATA_ROWS_PER_LEAF = 50

#: levels of a symmetric tree when max_depth is -1 (CatBoost's default depth: 64 leaves)
SYMMETRIC_DEPTH = 6
#: the deepest symmetric tree (2^16 leaves; every level's nodes all split)
SYMMETRIC_MAX_DEPTH = 16

#: the largest bagging_temperature T: a Bayesian bootstrap weight (-log U)^T, U >= 2^-53, is then at most
#: 36.7^10 = 4.5e15, so that a weight times a gradient stays far inside float32 statistics (T = 49 made
#: weights of 1e76: infinite statistics, NaN trees)
MAX_BAGGING_TEMPERATURE = 10.0

#: parameters that decide how a Dataset is binned (the rest only affect training)
DATASET_PARAMS = ("max_bin", "min_data_in_bin", "bin_construct_sample_cnt", "seed", "enable_bundle",
                  "max_conflict_rate", "is_enable_sparse", "sparse_threshold", "categorical_feature", "cat_encoding")
#: cat_encoding's values: see Params
CAT_ENCODINGS = ("auto", "sets", "statistics")


#: parameters of a training run that do not shape the model (left out of model files)
RUN_SETTINGS = ("num_threads", "verbosity", "histogram_pool_size", "device_type")


class MultigroveWarning(UserWarning):
    """A warning from multigrove (silenced by verbosity=-1)."""


def _default_threads() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


@dataclasses.dataclass(frozen=True)
class Params:
    """All training parameters with their defaults (LightGBM's where a counterpart exists)."""

    objective: Any = "regression"          # name in OBJECTIVES, or callable(preds, dataset) -> (grad, hess)
    num_class: int = 0                     # multiclass: number of classes (0 = infer from labels)
    num_outputs: int = 0                   # custom objective: number of outputs (0 = infer from y)
    target_scaling: str = "auto"           # regression: train on standardized targets ("standard"), so that
    #                                        every target weighs the same in the summed gain; "auto": for
    #                                        multi_output trees of several targets (rf1: 1.0095 vs 1.0407 test RMSE)
    multi_strategy: str = "multi_output"   # one tree for all outputs, or one tree per output per round
    growth_policy: str = "leafwise"        # best-first (GBDT-MO Alg. 5), level by level, or "symmetric":
    #                                        oblivious trees, one split per level (CatBoost's), depth max_depth
    #                                        (-1: SYMMETRIC_DEPTH), capped by num_leaves when it is given
    sketch: Any = None                     # score splits on a k-column sketch of the gradients (SketchBoost);
    #                                        None: "random_projection" for a multi-output tree of more than
    #                                        sketch_k outputs with dense leaves, else "none" (see sketch_for)
    sketch_k: int = 3                      # columns of the sketch (ignored by "none" and "auto")
    leaf_sparsity: int = 0                 # 0 = dense leaves; k = each leaf keeps its top-k outputs (GBDT-MO)
    sparse_split: str = "unrestricted"     # split scoring with sparse leaves: GBDT-MO Alg. 3 or Alg. 4
    learning_rate: float = 0.1
    num_leaves: Any = None                 # None: 31 for one-output trees, 127 for multi-output trees (see leaves_for)
    max_depth: int = -1                    # -1 = no limit
    min_data_in_leaf: Any = None           # None: min(20, max(1, n_rows // 50)) (see min_data_for)
    min_sum_hessian_in_leaf: float = 1e-3  # on the mean over outputs of a child's Hessian sums
    lambda_l2: float = 3.0                 # CatBoost's l2_leaf_reg: alone it lowers the test loss of 11 of the
    #                                        accuracy panel's 18 small sets (CHANGELOG.md, issue 23), most the
    #                                        multi-label log losses (a rare label's leaves shrink); with the
    #                                        scaled min_data_in_leaf, 14 of 18; large leaves barely feel it
    min_gain_to_split: float = 0.0
    max_bin: int = 255
    min_data_in_bin: Any = None            # sample rows a value bin holds at least; None: 1, or LightGBM's 3
    #                                        where the bins would number over 2^20 or 64 a row (see BinMapper)
    bin_construct_sample_cnt: int = 200_000
    is_enable_sparse: bool = True          # a feature whose most frequent bin holds >= sparse_threshold of the
    sparse_threshold: Any = None           # rows never visits that bin (its sums come from the node totals);
    #                                        None: 0.8 for one-output trees, 0.5 for multi-output trees, whose wide
    #                                        statistics make a stored entry cost about what a dense cell costs
    enable_bundle: bool = True             # exclusive feature bundling of sparse features (LightGBM's EFB)
    max_conflict_rate: float = 0.0         # EFB: rows where two members are non-default, as a share of the sample
    data_sample_strategy: str = "bagging"  # rows of each tree: "bagging" (bagging_fraction) or "goss"
    bagging_fraction: float = 1.0          # share of rows drawn every bagging_freq rounds (no replacement)
    bagging_freq: int = 0                  # 0 = no bagging
    top_rate: float = 0.2                  # GOSS: rows kept for the largest gradients ...
    other_rate: float = 0.1                # ... and rows drawn from the rest, their statistics times (1 - a) / b
    feature_fraction: float = 1.0          # share of features each tree may split on
    bagging_temperature: float = 0.0       # > 0: Bayesian bootstrap, row weights (-log U)^T every round
    random_strength: float = 0.0           # noise on split scores, in units of a noise split's gain
    boost_from_average: bool = True
    num_threads: int = 0                   # 0 = every core this process may use
    histogram_pool_size: float = -1.0      # MB the histograms kept for the subtraction trick may hold in leaf-wise
    #                                        growth; past it the histogram of the leaf least likely to split next
    #                                        is dropped, and built again from its rows if it splits; < 0: no
    #                                        limit (a tree holds up to num_leaves of them; depth-wise and
    #                                        symmetric growth hold those of a level, whatever the limit)
    device_type: str = "cpu"               # "cuda": the training rows on an NVIDIA GPU (boosting/cuda_shard.py,
    #                                        cuda_builder.py; needs multigrove[cuda]); "cpu": the cores
    deterministic: bool = False            # the same model file whatever num_threads: histograms are summed in
    #                                        row order on every thread count (no per-thread partial sums), at
    #                                        some cost in speed on large nodes (CHANGELOG.md, determinism)
    categorical_feature: Any = "auto"      # features split on sets of categories: "auto" (a DataFrame's category
    #                                        columns, an Arrow table's dictionary columns), or also these columns of
    #                                        integer codes (names or indices; see Dataset)
    max_cat_to_onehot: Any = None          # a categorical feature of at most this many categories in a node: one
    #                                        category against the rest; more: sets of categories ordered along
    #                                        their gradients' leading direction (LightGBM's rule, its default 4).
    #                                        None: one against the rest for every feature, which tested best or
    #                                        level on the categorical tables: flights 0.6260 (LightGBM's 4: 0.6437),
    #                                        loans 1.2113 (1.2258), diamonds 0.0846 (0.0841), movies the same
    #                                        (CHANGELOG.md, stops 43 and 54)
    max_cat_threshold: int = 32            # the most categories a set split sends left
    cat_smooth: float = 10.0               # categories are ordered by their gradient over (Hessian + cat_smooth), and
    #                                        a set split considers categories of at least cat_smooth rows
    cat_l2: float = 10.0                   # added to lambda_l2 in the scores of the splits (sets, or one category
    #                                        against the rest) of a feature of more than 4 categories
    min_data_per_group: int = 100          # rows a set split's side holds at least, and rows between two of its
    #                                        candidate thresholds
    cat_encoding: str = "auto"             # how a categorical feature is split: "sets" (set splits of its categories
    #                                        with a bin: at most max_bin), "statistics" (ordered target statistics in
    #                                        its place: numbers, one per target column; data.target_statistics), or
    #                                        "auto": sets.  The statistics beat sets ordered along a direction on
    #                                        flights' 4,043 planes (0.6357 against 0.6437) but lost to one category
    #                                        against the rest there (0.6265) and on loans (1.2382 against 1.2298)
    seed: int = 0
    metric: Any = None                     # None = the objective's own metric; str or list of str
    eval_at: tuple = (1, 3, 5)             # k values of precision_at_k, ndcg_at_k and psprecision_at_k
    metric_per_output: bool = False        # also report l2, rmse, log losses, binary_error per output: "l2[3]"
    verbosity: int = 0                     # -1 silent, 0 warnings, 1 also info lines (data layout, time)
    given: frozenset = dataclasses.field(default=frozenset(), compare=False, repr=False)  # names set explicitly

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_dict(cls, params: Mapping[str, Any] | None) -> "Params":
        """Build from a user dict, resolving aliases; unknown names raise ValueError."""
        if params is None:
            params = {}
        if not isinstance(params, Mapping):
            raise TypeError(f"params must be a dict, got {type(params).__name__}")
        names = {f.name for f in dataclasses.fields(cls)}
        resolved: dict[str, Any] = {}
        source: dict[str, str] = {}
        for key, value in params.items():
            if not isinstance(key, str):
                raise TypeError(f"parameter names must be strings, got {key!r}")
            canon = ALIASES.get(key, key)
            if canon not in names:
                close = difflib.get_close_matches(key, sorted(names | set(ALIASES)), n=1)
                hint = f"; did you mean '{close[0]}'?" if close else ""
                raise ValueError(f"unknown parameter '{key}'{hint}")
            if canon in resolved:
                raise ValueError(f"parameter '{canon}' given twice (as '{source[canon]}' and '{key}')")
            resolved[canon] = value
            source[canon] = key
        return cls(**resolved, given=frozenset(resolved))

    def replace(self, **changes: Any) -> "Params":
        """A copy with some fields changed.

        Parameters
        ----------
        **changes
            Field names and their new values.

        Returns
        -------
        Params
        """
        return dataclasses.replace(self, **changes)

    def to_dict(self, model_only: bool = False) -> dict:
        """The parameters as a JSON-ready dict (a custom objective is written as ``"custom"``).

        Parameters
        ----------
        model_only : bool, default False
            Leave out the settings of a run that do not shape the model (RUN_SETTINGS: threads, the device,
            verbosity, the histogram pool's size), as the model file does, so that it does not depend on them.
        """
        out = dataclasses.asdict(self)
        del out["given"]
        if model_only:
            for name in RUN_SETTINGS:
                del out[name]
        if callable(self.objective):
            out["objective"] = "custom"
        out["eval_at"] = list(self.eval_at)
        return out

    # ------------------------------------------------------------------ validation
    def __post_init__(self) -> None:
        set_ = lambda name, value: object.__setattr__(self, name, value)  # noqa: E731
        obj = self.objective
        if callable(obj):
            pass
        elif isinstance(obj, str):
            canon = OBJECTIVE_ALIASES.get(obj, obj)
            if canon not in OBJECTIVES:
                raise ValueError(f"objective must be one of {OBJECTIVES} or a callable, got {obj!r}")
            set_("objective", canon)
        else:
            raise TypeError(f"objective must be a string or a callable, got {type(obj).__name__}")
        _choice("multi_strategy", self.multi_strategy, STRATEGIES)
        _choice("target_scaling", self.target_scaling, TARGET_SCALINGS)
        _choice("growth_policy", self.growth_policy, GROW_POLICIES)
        _choice("device_type", self.device_type, DEVICE_TYPES)
        if self.sketch is not None:
            _choice("sketch", self.sketch, SKETCHES)
        set_("sketch_k", _int("sketch_k", self.sketch_k, low=1))
        set_("leaf_sparsity", _int("leaf_sparsity", self.leaf_sparsity, low=0))
        _choice("sparse_split", self.sparse_split, SPARSE_SPLITS)
        if self.multi_strategy == "one_vs_all" and (self.sketch not in (None, "none") or self.leaf_sparsity):
            raise ValueError("sketch and leaf_sparsity apply to multi_output trees; "
                             "multi_strategy='one_vs_all' grows one-output trees")
        if self.objective in SPARSE_OUTPUT_OBJECTIVES:
            if self.multi_strategy != "multi_output":
                raise ValueError(f"objective '{self.objective}' grows one tree for all outputs: multi_strategy must "
                                 f"be 'multi_output', got {self.multi_strategy!r}")
            if self.sparse_split == "restricted":
                raise ValueError(f"objective '{self.objective}' scores splits by GBDT-Sparse eq. 20, each child on "
                                 "its own top-k labels: sparse_split must be 'unrestricted', got 'restricted'")
        set_("learning_rate", _real("learning_rate", self.learning_rate, low=0.0, low_open=True))
        if self.num_leaves is not None:
            set_("num_leaves", _int("num_leaves", self.num_leaves, low=2, high=131072))
        md = _int("max_depth", self.max_depth, low=-1)
        if md == 0:
            raise ValueError("max_depth must be >= 1 or -1 (no limit), got 0")
        set_("max_depth", md)
        if self.growth_policy == "symmetric" and md > SYMMETRIC_MAX_DEPTH:
            raise ValueError(f"max_depth must be <= {SYMMETRIC_MAX_DEPTH} with growth_policy='symmetric' "
                             f"(2^max_depth leaves), got {md}")
        if self.min_data_in_leaf is not None:
            set_("min_data_in_leaf", _int("min_data_in_leaf", self.min_data_in_leaf, low=1))
        set_("min_sum_hessian_in_leaf", _real("min_sum_hessian_in_leaf", self.min_sum_hessian_in_leaf, low=0.0))
        set_("lambda_l2", _real("lambda_l2", self.lambda_l2, low=0.0))
        set_("min_gain_to_split", _real("min_gain_to_split", self.min_gain_to_split, low=0.0))
        set_("max_bin", _int("max_bin", self.max_bin, low=2, high=MAX_VALUE_BINS))
        if self.min_data_in_bin is not None:
            set_("min_data_in_bin", _int("min_data_in_bin", self.min_data_in_bin, low=1))
        set_("bin_construct_sample_cnt", _int("bin_construct_sample_cnt", self.bin_construct_sample_cnt, low=1))
        set_("num_class", _int("num_class", self.num_class, low=0))
        if self.num_class == 1:
            raise ValueError("num_class must be >= 2 (or 0 to infer it), got 1")
        set_("num_outputs", _int("num_outputs", self.num_outputs, low=0))
        if isinstance(self.objective, str):  # a custom objective takes either to know its outputs
            if self.num_class and self.objective != "multiclass":
                raise ValueError(f"num_class={self.num_class} applies to objective 'multiclass' (or a custom "
                                 f"objective), got objective '{self.objective}': drop num_class, or use "
                                 "objective='multiclass'")
            if self.num_outputs:
                raise ValueError(f"num_outputs={self.num_outputs} applies to a custom objective, got objective "
                                 f"'{self.objective}', whose outputs come from the label")
        set_("num_threads", _int("num_threads", self.num_threads, low=0))
        set_("histogram_pool_size", _real("histogram_pool_size", self.histogram_pool_size))
        set_("seed", _int("seed", self.seed, low=0))
        set_("categorical_feature", _categorical_feature(self.categorical_feature))
        if self.max_cat_to_onehot is not None:
            set_("max_cat_to_onehot", _int("max_cat_to_onehot", self.max_cat_to_onehot, low=1))
        set_("max_cat_threshold", _int("max_cat_threshold", self.max_cat_threshold, low=1))
        set_("cat_smooth", _real("cat_smooth", self.cat_smooth, low=0.0))
        set_("cat_l2", _real("cat_l2", self.cat_l2, low=0.0))
        set_("min_data_per_group", _int("min_data_per_group", self.min_data_per_group, low=1))
        _choice("cat_encoding", self.cat_encoding, CAT_ENCODINGS)
        set_("verbosity", _int("verbosity", self.verbosity, low=-1))
        for name in ("boost_from_average", "is_enable_sparse", "enable_bundle", "metric_per_output", "deterministic"):
            set_(name, _bool(name, getattr(self, name)))
        if self.sparse_threshold is not None:
            set_("sparse_threshold", _real("sparse_threshold", self.sparse_threshold, low=0.0, low_open=True))
            _at_most("sparse_threshold", self.sparse_threshold, 1.0)
        set_("max_conflict_rate", _real("max_conflict_rate", self.max_conflict_rate, low=0.0))
        if self.max_conflict_rate >= 1.0:
            raise ValueError(f"max_conflict_rate must be < 1, got {self.max_conflict_rate}")
        self._check_sampling(set_)
        ks = self.eval_at
        if isinstance(ks, numbers.Integral):
            ks = (ks,)
        ks = tuple(_int("eval_at", k, low=1) for k in ks)
        if not ks:
            raise ValueError("eval_at must hold at least one k >= 1, got an empty list")
        set_("eval_at", ks)
        set_("metric", _metrics(self.metric))

    def _check_sampling(self, set_) -> None:
        _choice("data_sample_strategy", self.data_sample_strategy, SAMPLE_STRATEGIES)
        for name in ("bagging_fraction", "feature_fraction", "other_rate"):
            set_(name, _real(name, getattr(self, name), low=0.0, low_open=True))
            _at_most(name, getattr(self, name), 1.0)
        set_("top_rate", _real("top_rate", self.top_rate, low=0.0))
        set_("bagging_temperature", _real("bagging_temperature", self.bagging_temperature, low=0.0))
        _at_most("bagging_temperature", self.bagging_temperature, MAX_BAGGING_TEMPERATURE)
        set_("random_strength", _real("random_strength", self.random_strength, low=0.0))
        if self.data_sample_strategy == "goss" and self.bagging_temperature > 0:
            raise ValueError("bagging_temperature cannot be used with data_sample_strategy='goss' (GOSS weights the "
                             f"rows itself), got bagging_temperature={self.bagging_temperature}")
        set_("bagging_freq", _int("bagging_freq", self.bagging_freq, low=0))
        if self.top_rate + self.other_rate > 1.0:
            raise ValueError(f"top_rate + other_rate must be <= 1, got {self.top_rate} + {self.other_rate}")
        if self.data_sample_strategy == "goss" and self.bagging_fraction < 1.0:
            raise ValueError("bagging_fraction cannot be used with data_sample_strategy='goss' (GOSS draws the rows "
                             f"itself), got bagging_fraction={self.bagging_fraction}")

    def scales_targets(self, n_outputs: int) -> bool:
        """Whether regression trains on standardized targets (see target_scaling).

        Parameters
        ----------
        n_outputs : int
            Outputs of the model being trained.
        """
        if self.target_scaling == "auto":
            return self.multi_strategy == "multi_output" and n_outputs > 1
        return self.target_scaling == "standard"

    def _multi_output_tree(self, n_outputs: int) -> bool:
        return self.multi_strategy == "multi_output" and n_outputs > 1

    def leaves_for(self, n_outputs: int) -> int:
        """The leaves per tree: num_leaves, or when it is None, 31 for one-output trees and
        MULTI_OUTPUT_LEAVES for a multi-output tree, which stands in for n_outputs trees of 31 leaves
        (measured in CHANGELOG.md: Otto, rf1 and scm20d reach a lower test loss, Otto sooner);
        symmetric trees: 2^depth, at most num_leaves.

        Parameters
        ----------
        n_outputs : int
            Outputs of the model being trained.
        """
        if self.growth_policy == "symmetric":
            full = 2 ** self.depth_limit()
            return full if self.num_leaves is None else min(self.num_leaves, full)
        if self.num_leaves is not None:
            return self.num_leaves
        return MULTI_OUTPUT_LEAVES if self._multi_output_tree(n_outputs) else SINGLE_OUTPUT_LEAVES

    def min_data_for(self, n_rows: int) -> int:
        """min_data_in_leaf, or when it is None, min(20, max(1, n_rows // 50)): LightGBM's 20, but on
        fewer than 1,000 rows a leaf may hold 2 % of them (on andro's 36 training rows 20 forbids every
        split; with lambda_l2=3, on the accuracy panel's 14 sets under 1,000 rows the scaled minimum
        lowers the test loss on 10).

        Parameters
        ----------
        n_rows : int
            Training rows.
        """
        if self.min_data_in_leaf is not None:
            return self.min_data_in_leaf
        return int(min(MIN_DATA_IN_LEAF, max(1, n_rows // MIN_DATA_ROWS_PER_LEAF)))

    def one_vs_rest_limit(self) -> int:
        """The most categories a categorical feature may have in a node for a split of one category against
        the rest: max_cat_to_onehot, or every number of categories when it is None."""
        return INT_PARAM_LIMIT if self.max_cat_to_onehot is None else self.max_cat_to_onehot

    def depth_limit(self) -> int:
        """max_depth, or SYMMETRIC_DEPTH for symmetric trees without one (-1: no limit otherwise)."""
        if self.growth_policy == "symmetric" and self.max_depth < 0:
            return SYMMETRIC_DEPTH
        return self.max_depth

    def leaf_k_for(self, n_outputs: int) -> int:
        """The outputs each leaf keeps (0: dense leaves): leaf_sparsity when it is below n_outputs; for a
        sparse-output objective always k-sparse leaves, leaf_sparsity or SPARSE_OUTPUT_LEAF_K, at most
        n_outputs.

        Parameters
        ----------
        n_outputs : int
            Outputs of the model being trained.
        """
        if self.objective in SPARSE_OUTPUT_OBJECTIVES:
            return min(self.leaf_sparsity or SPARSE_OUTPUT_LEAF_K, n_outputs)
        if self.multi_strategy != "multi_output":
            return 0
        return self.leaf_sparsity if 0 < self.leaf_sparsity < n_outputs else 0

    def sketch_for(self, n_outputs: int) -> str:
        """The split-scoring sketch: sketch, or when it is None, a random projection to sketch_k
        columns for a multi-output tree with dense leaves and more than sketch_k outputs (SketchBoost:
        projections of the gradients lose little of the split ranking and regularise; Otto, rf1 and
        scm20d reach a lower test loss), else "none"; top-k sparse leaves score splits by their own
        rule (sparse_split).

        Parameters
        ----------
        n_outputs : int
            Outputs of the model being trained.
        """
        if self.sketch is not None:
            return self.sketch
        if self.objective in SPARSE_OUTPUT_OBJECTIVES:
            return "random_projection"
        sketchable = self._multi_output_tree(n_outputs) and n_outputs > self.sketch_k
        sparse_leaves = 0 < self.leaf_sparsity < n_outputs
        return "random_projection" if sketchable and not sparse_leaves else "none"

    def sparse_threshold_for(self, n_outputs: int) -> float:
        """The sparse threshold to bin with (see the field's comment).

        Parameters
        ----------
        n_outputs : int
            Outputs of the model being trained.
        """
        if self.sparse_threshold is not None:
            return self.sparse_threshold
        wide = self._multi_output_tree(n_outputs)
        return SPARSE_THRESHOLD_WIDE if wide else SPARSE_THRESHOLD_NARROW

    @property
    def threads(self) -> int:
        return self.num_threads or _default_threads()


def _choice(name: str, value: Any, choices: tuple) -> None:
    if value not in choices:
        raise ValueError(f"{name} must be one of {choices}, got {value!r}")


def _bool(name: str, value: Any) -> bool:
    if isinstance(value, (bool, np.bool_)) or (isinstance(value, numbers.Integral) and value in (0, 1)):
        return bool(value)
    raise TypeError(f"{name} must be a bool, got {value!r}")


def _at_most(name: str, value: float, high: float) -> None:
    if value > high:
        raise ValueError(f"{name} must be <= {high}, got {value}")


#: the largest value of an integer parameter (they reach the kernels as int64)
INT_PARAM_LIMIT = 2**62


def _int(name: str, value: Any, low: int | None = None, high: int | None = None) -> int:
    if isinstance(value, numbers.Real) and not isinstance(value, (bool, numbers.Integral)) \
            and float(value).is_integer():
        value = int(value)  # 3.0 from a config file is 3
    # every integer parameter reaches the kernels as int64
    return check_int(value, name, low, INT_PARAM_LIMIT if high is None else high)


def _real(name: str, value: Any, low: float | None = None, low_open: bool = False) -> float:
    return check_real(value, name, low, low_open)


def _categorical_feature(value: Any) -> str | tuple:
    """"auto", or a tuple of column names (str) and indices (int); a comma-separated string (a config file's)
    is split into names, integers among them become indices."""
    if isinstance(value, str):
        if value == "auto":
            return value
        value = [part.strip() for part in value.split(",") if part.strip()]
        value = [int(part) if part.lstrip("-").isdigit() else part for part in value]
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        value = [value]
    if not isinstance(value, (list, tuple, np.ndarray)):
        raise TypeError(f"categorical_feature must be 'auto' or a list of column names or indices, got {value!r}")
    out = []
    for item in value:
        if isinstance(item, (bool, np.bool_)) or not isinstance(item, (str, int, np.integer)):
            raise TypeError(f"categorical_feature must list column names (str) or indices (int), got {item!r}")
        if isinstance(item, (int, np.integer)) and item < 0:
            raise ValueError(f"categorical_feature indices must be >= 0, got {item}")
        out.append(item if isinstance(item, str) else int(item))
    return tuple(out)


def _metrics(value: Any) -> tuple | None:
    if value is None or value == "":
        return None
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple)):
        raise TypeError(f"metric must be a string or a list of strings, got {type(value).__name__}")
    out = []
    for m in value:
        if not isinstance(m, str):
            raise TypeError(f"metric names must be strings, got {m!r}")
        canon = METRIC_ALIASES.get(m, m)
        if canon not in METRICS and canon != "None":
            raise ValueError(f"metric must be one of {METRICS}, got {m!r}")
        if canon != "None" and canon not in out:
            out.append(canon)
    return tuple(out)


def objective_default_metric(objective: Any) -> tuple:
    return {
        "regression": ("l2",), "binary": ("binary_logloss",), "multiclass": ("multi_logloss",),
        "multilabel": ("multilabel_logloss",), "sparse_squared": ("precision_at_k",),
        "sparse_hinge": ("precision_at_k",),
    }.get(objective if isinstance(objective, str) else "custom", ())

