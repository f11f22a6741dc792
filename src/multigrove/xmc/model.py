"""``LabelTreeClassifier``: an ensemble of Bonsai label trees (Khandagale et al. 2020).

Fit: label representations (input Yᵀ X, output Yᵀ Y, or joint), recursive K-way spherical k-means
without balance constraints, one-vs-rest linear classifiers (squared hinge or logistic loss) at
every node trained on the node's examples, small weights pruned.  Predict: beam search per tree,
label scores (products along the path of exp(-max(0, 1 - w.x)^2), or of sigmoid(w.x) with the
logistic loss) averaged over the trees, top-k returned.

X may be dense or CSR; it is converted to CSR float32 and never densified.  Y is a CSR or dense
0/1 indicator (n_rows, n_labels); no dense n x L or L x D matrix is built.

Models are saved as one ``.npz`` of plain arrays plus a JSON header (format, version, parameters,
sizes, SHA-256 of the arrays), written to a temporary file and renamed; ``load`` checks the header,
the checksum and the tree structure before use and never unpickles.
"""
from __future__ import annotations

import json
import time

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.preprocessing import normalize

from .._fileio import atomic_write, check_header, checksum, open_npz
from .._validation import check_indicator, check_int, check_real
from .beam_search import pack_forest, search
from .io import row_of_entry
from .label_tree import REPRESENTATIONS, LabelTree, grow_tree, label_representation
from .linear import LOSSES, LinearConfig

FORMAT = "multigrove-labeltree"
VERSION = 3  # 2 added the `loss` parameter (version 1 files: squared hinge); 3 added `hard_negatives`
# (files of versions 1 and 2 were trained without)
# C when the user leaves it None (CHANGELOG.md): 0.5 was better than or equal to 1 on the four Mulan
# test splits; 8 gave the logistic loss the best PSP@5 of 2, 4, 8, 16 on 80/20 splits of delicious's
# training rows
DEFAULT_C = {"squared_hinge": 0.5, "log": 8.0}
# hard negatives when the user leaves them None (CHANGELOG.md): on six 80/20 splits of the training
# rows they raised the squared hinge's PSP@5 on delicious above Omikuji's; with the logistic loss they
# cost P@1 (delicious -0.0098, corel5k -0.0092), so there they stay off
DEFAULT_HARD_NEGATIVES = {"squared_hinge": True, "log": False}
_TREE_ARRAYS = ("edge_start", "edge_target", "is_leaf", "w_indptr", "w_indices", "w_data")


def _check_X(X, n_features: int | None = None, name: str = "X") -> sp.csr_matrix:
    if sp.issparse(X):
        M = sp.csr_matrix(X, dtype=np.float32, copy=True)
    else:
        arr = np.asarray(X)
        if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
            raise ValueError(f"{name} must be numeric, got dtype {arr.dtype}")
        if arr.ndim != 2:
            raise ValueError(f"{name} must be 2-D (n_rows, n_features), got shape {arr.shape}")
        M = sp.csr_matrix(arr.astype(np.float32))
    M.sum_duplicates()
    M.sort_indices()
    if M.data.size and not np.isfinite(M.data).all():
        row = row_of_entry(M.indptr, int(np.argmax(~np.isfinite(M.data))))
        raise ValueError(f"{name} row {row} holds NaN or infinity; label trees need finite features")
    if n_features is not None and M.shape[1] != n_features:
        raise ValueError(f"{name} has {M.shape[1]} features, but the model was fitted with {n_features}")
    return M


def _check_Y(Y, n_rows: int) -> sp.csr_matrix:
    """The labels as CSR float32 ones (the library's one indicator check, for sparse and dense Y)."""
    M = check_indicator(Y, n_rows)
    return M if sp.issparse(M) else check_indicator(sp.csr_matrix(M))


def _normalize_rows(X: sp.csr_matrix) -> sp.csr_matrix:
    """Rows scaled to unit L2 norm (norms in float64; empty rows stay empty)."""
    return normalize(X.astype(np.float64)).astype(np.float32)


class LabelTreeClassifier(BaseEstimator):
    """Bonsai label-tree ensemble for extreme multi-label classification.

    Parameters
    ----------
    branching : K of the K-way k-means (>= 2); a node with at most K labels is a leaf.
    max_depth : depth at which a node becomes a leaf whatever its number of labels (root = 0).
    representation : ``"input"`` (Yᵀ X), ``"output"`` (Yᵀ Y) or ``"joint"`` (both).
    loss : ``"squared_hinge"`` (Bonsai's choice) or ``"log"`` (logistic regression, as in Parabel and
        probabilistic label trees; about twice the training time; on delicious it raised PSP@k and
        coverage but not P@1, on the other Mulan sets it was below the squared hinge).
    C : inverse L2 regularisation of the classifiers; None picks 0.5 for the squared hinge and 8 for
        the logistic loss.
    eps, max_iter : stopping tolerance and most passes of the dual coordinate-descent solver.
    weight_threshold : weights with smaller magnitude are pruned after training.
    beam_size : nodes kept per level during prediction.
    n_trees : trees in the ensemble (different k-means seeds); scores are averaged.
    hard_negatives : besides the rows carrying one of its labels (Bonsai), a node's classifiers also
        train on the rows to which its parent's classifier for it gives a positive margin, as
        negatives for the labels they lack: the rows the beam search would wrongly send there.
        None: True for the squared hinge (on delicious it raised P@1 and PSP@5, on corel5k it cost
        a little of both), False for the logistic loss (where it cost P@1; CHANGELOG.md).
        False trains exactly as Bonsai does.
    kmeans_max_iter, kmeans_tol : Lloyd iterations and relative objective tolerance.
    normalize : scale every row of X to unit L2 norm (training and prediction alike).
    bias : value of the constant feature appended to every row (0 disables it).
    random_state : seed of tree t is ``random_state + t``.
    verbose : print one line per tree.

    Attributes
    ----------
    trees_ : list of LabelTree
        The fitted trees (node centroids, children, classifier weights in CSR form).
    n_features_in_ : int
    n_labels_ : int
    """

    def __init__(self, branching=100, max_depth=3, representation="input", loss="squared_hinge", C=None,
                 eps=0.1, max_iter=20, weight_threshold=0.1, beam_size=10, n_trees=3, kmeans_max_iter=20,
                 kmeans_tol=1e-4, hard_negatives=None, normalize=True, bias=1.0, random_state=0, verbose=False):
        self.branching = branching
        self.max_depth = max_depth
        self.representation = representation
        self.loss = loss
        self.C = C
        self.eps = eps
        self.max_iter = max_iter
        self.weight_threshold = weight_threshold
        self.beam_size = beam_size
        self.n_trees = n_trees
        self.kmeans_max_iter = kmeans_max_iter
        self.kmeans_tol = kmeans_tol
        self.hard_negatives = hard_negatives
        self.normalize = normalize
        self.bias = bias
        self.random_state = random_state
        self.verbose = verbose

    # ------------------------------------------------------------------ parameters
    def _validate_params(self):
        def integer(name, lo):
            check_int(getattr(self, name), name, lo)

        def number(name, lo, strict):
            check_real(getattr(self, name), name, lo, strict)

        integer("branching", 2)
        integer("max_depth", 1)
        integer("max_iter", 1)
        integer("beam_size", 1)
        integer("n_trees", 1)
        integer("kmeans_max_iter", 1)
        integer("random_state", 0)
        if self.C is not None:
            number("C", 0, True)
        number("eps", 0, True)
        number("weight_threshold", 0, False)
        number("kmeans_tol", 0, False)
        number("bias", 0, False)
        if self.representation not in REPRESENTATIONS:
            raise ValueError(f"representation must be one of {REPRESENTATIONS}, got {self.representation!r}")
        if self.hard_negatives is not None and not isinstance(self.hard_negatives, (bool, np.bool_)):
            raise ValueError(f"hard_negatives must be True, False or None, got {self.hard_negatives!r}")
        if not isinstance(self.normalize, (bool, np.bool_)):
            raise ValueError(f"normalize must be True or False, got {self.normalize!r}")
        if not isinstance(self.loss, str) or self.loss not in LOSSES:
            raise ValueError(f"loss must be one of {tuple(LOSSES)}, got {self.loss!r}")

    def _hard_negatives(self) -> bool:
        return DEFAULT_HARD_NEGATIVES[self.loss] if self.hard_negatives is None else bool(self.hard_negatives)

    def _linear(self) -> LinearConfig:
        C = DEFAULT_C[self.loss] if self.C is None else float(self.C)
        return LinearConfig(C=C, eps=float(self.eps), max_iter=int(self.max_iter),
                            weight_threshold=float(self.weight_threshold), bias=float(self.bias), loss=self.loss)

    # ------------------------------------------------------------------ fit / predict
    def fit(self, X, Y):
        """Grow ``n_trees`` label trees and train their node classifiers.

        Parameters
        ----------
        X : sparse matrix or array-like, shape (n_rows, n_features)
        Y : 0/1 indicator, sparse matrix or array-like, shape (n_rows, n_labels)

        Returns
        -------
        self
        """
        self._validate_params()
        X = _check_X(X)
        if X.shape[0] < 1:
            raise ValueError("X has no rows")
        Y = _check_Y(Y, X.shape[0])
        if self.normalize:
            X = _normalize_rows(X)
        self.n_features_in_ = X.shape[1]
        self.n_labels_ = Y.shape[1]
        V = label_representation(X, Y, self.representation)
        self.trees_ = []
        for t in range(self.n_trees):
            t0 = time.perf_counter()
            tree = grow_tree(X, Y, V, int(self.branching), int(self.max_depth), self._linear(),
                             seed=int(self.random_state) + t, kmeans_max_iter=int(self.kmeans_max_iter),
                             kmeans_tol=float(self.kmeans_tol), hard_negatives=self._hard_negatives())
            self.trees_.append(tree)
            if self.verbose:
                print(f"tree {t + 1}/{self.n_trees}: {tree.n_nodes} nodes, depth {tree.depth}, "
                      f"{tree.w_data.shape[0]} weights, {time.perf_counter() - t0:.1f} s", flush=True)
        self._packed = None
        return self

    def _check_fitted(self):
        if not hasattr(self, "trees_"):
            from sklearn.exceptions import NotFittedError
            raise NotFittedError("this LabelTreeClassifier is not fitted yet; call fit(X, Y) first")

    def predict(self, X, top_k: int = 5) -> tuple[np.ndarray, np.ndarray]:
        """The top-k labels of every row by beam search, scores averaged over the trees.

        Parameters
        ----------
        X : sparse matrix or array-like, shape (n_rows, n_features)
        top_k : int, default 5

        Returns
        -------
        indices : ndarray of int64, shape (n_rows, top_k)
            Labels by descending score; -1 where fewer than top_k labels were reached.
        scores : ndarray of float64, shape (n_rows, top_k)
            0 in the empty slots.  The pair is what ``multigrove.xmc.metrics`` takes.
        """
        return self._top_k(X, top_k, "top_k")

    def predict_top_k(self, X, k: int = 5) -> tuple[np.ndarray, np.ndarray]:
        """The k best labels of every row, best first, with their scores: ``predict(X, top_k=k)`` under the
        name :meth:`multigrove.GroveClassifier.predict_top_k` has, so that code asking either model for its
        top k takes both.

        Parameters
        ----------
        X : sparse matrix or array-like, shape (n_rows, n_features)
        k : int, default 5

        Returns
        -------
        indices, scores : ndarray, shape (n_rows, k)
            As :meth:`predict`.
        """
        return self._top_k(X, k, "k")

    def _top_k(self, X, k, name: str) -> tuple[np.ndarray, np.ndarray]:
        self._check_fitted()
        k = check_int(k, name, 1)
        X = _check_X(X, self.n_features_in_)
        if self.normalize:
            X = _normalize_rows(X)
        if getattr(self, "_packed", None) is None:
            self._packed = pack_forest(self.trees_)
        return search(self.trees_, X, self.n_labels_, float(self.bias), int(self.beam_size), int(k),
                      self._packed, logistic=self.loss == "log")

    # ------------------------------------------------------------------ persistence
    def _arrays(self) -> dict[str, np.ndarray]:
        out = {}
        for t, tree in enumerate(self.trees_):
            for name in _TREE_ARRAYS:
                out[f"tree{t}_{name}"] = np.ascontiguousarray(getattr(tree, name))
        return out

    @staticmethod
    def _digest(arrays: dict[str, np.ndarray]) -> str:
        return checksum(part for name in sorted(arrays)
                        for part in (f"{name}:{arrays[name].dtype.str}:{arrays[name].shape}".encode(),
                                     arrays[name].tobytes()))

    def save(self, path) -> None:
        """Write the model to ``path``: one .npz (no pickle), versioned, with a sha256 of every array; atomic.

        Parameters
        ----------
        path : str or PathLike
        """
        self._check_fitted()
        arrays = self._arrays()
        meta = {"format": FORMAT, "version": VERSION, "params": self.get_params(),
                "n_features": int(self.n_features_in_), "n_labels": int(self.n_labels_),
                "n_trees": len(self.trees_), "sha256": self._digest(arrays)}
        with atomic_write(path) as fh:
            np.savez(fh, meta=np.array(json.dumps(meta)), **arrays)

    @classmethod
    def load(cls, path) -> "LabelTreeClassifier":
        """Read a model written by ``save``; raises ValueError naming what is wrong with the file.

        Parameters
        ----------
        path : str or PathLike

        Returns
        -------
        LabelTreeClassifier
        """
        fname, z = open_npz(path, "model file")
        with z:
            if "meta" not in z.files:
                raise ValueError(f"{fname}: no 'meta' header; not a {FORMAT} file")
            try:
                meta = json.loads(str(z["meta"]))
            except json.JSONDecodeError as err:
                raise ValueError(f"{fname}: header is not valid JSON ({err})") from None
            check_header(meta, FORMAT, VERSION, f"model file {fname!r}")
            arrays = {name: z[name] for name in z.files if name != "meta"}
        try:
            n_trees, D, L = int(meta["n_trees"]), int(meta["n_features"]), int(meta["n_labels"])
            params = dict(meta["params"])
            if meta["version"] == 1:  # before the loss parameter: squared hinge
                params["loss"] = "squared_hinge"
            if meta["version"] <= 2:  # before hard negatives
                params["hard_negatives"] = False
        except (KeyError, TypeError, ValueError) as err:
            raise ValueError(f"{fname}: header misses or garbles {err}") from None
        expected = {f"tree{t}_{name}" for t in range(n_trees) for name in _TREE_ARRAYS}
        if set(arrays) != expected:
            raise ValueError(f"{fname}: arrays {sorted(set(arrays) ^ expected)[:4]} missing or unexpected")
        if cls._digest(arrays) != meta.get("sha256"):
            raise ValueError(f"{fname}: checksum mismatch; the file is corrupted")
        model = cls(**{k: v for k, v in params.items() if k in cls().get_params()})
        try:
            model._validate_params()
        except (TypeError, ValueError) as err:
            raise ValueError(f"{fname}: stored parameters are invalid ({err})") from None
        trees = []
        for t in range(n_trees):
            tree = LabelTree(**{name: arrays[f"tree{t}_{name}"] for name in _TREE_ARRAYS})
            _validate_tree(tree, D, L, f"{fname}: tree {t}")
            trees.append(tree)
        model.trees_ = trees
        model.n_features_in_ = D
        model.n_labels_ = L
        model._packed = None
        return model


def _validate_tree(t: LabelTree, n_features: int, n_labels: int, where: str) -> None:
    def fail(msg):
        raise ValueError(f"{where}: {msg}")

    dtypes = {"edge_start": np.int64, "edge_target": np.int64, "is_leaf": np.bool_, "w_indptr": np.int64,
              "w_indices": np.int32, "w_data": np.float32}
    for name, dt in dtypes.items():
        a = getattr(t, name)
        if a.dtype != dt or a.ndim != 1:
            fail(f"{name} must be a 1-D {np.dtype(dt).name} array, got {a.dtype} {a.shape}")
    n_nodes, n_edges = t.is_leaf.shape[0], t.edge_target.shape[0]
    if n_nodes < 1 or t.edge_start.shape[0] != n_nodes + 1 or t.edge_start[0] != 0 or t.edge_start[-1] != n_edges:
        fail("edge_start does not index the edges of every node")
    if np.any(np.diff(t.edge_start) < 1):
        fail("a node without edges")
    internal = np.repeat(~t.is_leaf, np.diff(t.edge_start))
    parent = np.repeat(np.arange(n_nodes), np.diff(t.edge_start))
    child = t.edge_target[internal]
    if child.size and (np.any(child <= parent[internal]) or child.max() >= n_nodes):
        fail("an internal edge does not lead to a later node")
    if not np.array_equal(np.sort(child), np.arange(1, n_nodes)):
        fail("every node but the root must have exactly one parent")
    labels = t.edge_target[~internal]
    if not np.array_equal(np.sort(labels), np.arange(n_labels)):
        fail(f"the leaves must hold each of the {n_labels} labels exactly once")
    if t.w_indptr.shape[0] != n_edges + 1 or t.w_indptr[0] != 0 or np.any(np.diff(t.w_indptr) < 0) \
            or t.w_indptr[-1] != t.w_data.shape[0] or t.w_indices.shape[0] != t.w_data.shape[0]:
        fail("weight arrays are not a CSR row per edge")
    if t.w_indices.size and (t.w_indices.min() < 0 or t.w_indices.max() > n_features):
        fail(f"a weight's feature id is outside [0, {n_features}]")
    if not np.isfinite(t.w_data).all():
        fail("non-finite weights")
