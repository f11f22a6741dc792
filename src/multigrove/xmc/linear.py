"""One-vs-rest linear classifiers of one label-tree node (Bonsai eq. 2.6): squared hinge loss, or
logistic loss (as in Parabel and probabilistic label trees).

A node's classifiers see only the node's examples (rows carrying one of its labels) and only the
features those rows use; weights smaller than ``weight_threshold`` in magnitude are pruned and the
rest stored sparse with global feature ids (the bias weight under id ``n_features``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np
import scipy.sparse as sp

from ..kernels.labeltree import BiasedRows, SolverParams, train_logistic, train_squared_hinge


@dataclass(frozen=True)
class LinearConfig:
    C: float = 1.0
    eps: float = 0.1
    max_iter: int = 20
    weight_threshold: float = 0.1
    bias: float = 1.0
    loss: str = "squared_hinge"  # or "log"


LOSSES = {"squared_hinge": train_squared_hinge, "log": train_logistic}
# bytes of solver state per (row, classifier): squared hinge keeps a float32 dual variable, an int8
# label and a shrinking flag; logistic keeps alpha, C - alpha and their log ratio as float32 and the label
STATE_BYTES_PER_ROW = {"squared_hinge": 6, "log": 13}


@dataclass
class SparseWeights:
    """Rows of pruned weights, one per classifier: CSR (indptr, indices, data)."""
    indptr: np.ndarray   # (K + 1,) int64
    indices: np.ndarray  # int32 global feature ids; n_features = the bias
    data: np.ndarray     # float32


# Most bytes the solver's per-call state may take: per (row, classifier) the dual state of
# STATE_BYTES_PER_ROW, per (feature, classifier) a float32 weight copy and a float32 output.  A node
# whose classifiers need more is trained in chunks of classifiers, one after the other; each
# classifier's result does not depend on the chunking (the solver treats them separately).
# 256 MiB: on the synthetic benchmark set (100k rows, a 1,140-label leaf on 89k rows) peak memory
# 190-250 MB below 512 MiB's and 34-84 MB above 128 MiB's, training time the same within the
# machine's run-to-run spread (CHANGELOG.md)
STATE_BUDGET_BYTES = 256 * 2 ** 20


def chunk_size(n_rows: int, n_cols: int, n_threads: int, budget: int | None = None,
               loss: str = "squared_hinge") -> int:
    """Classifiers per solver call so that their state fits in ``budget`` bytes (at least one per thread);
    ``budget`` None reads ``STATE_BUDGET_BYTES`` when called."""
    if budget is None:
        budget = STATE_BUDGET_BYTES
    per_classifier = STATE_BYTES_PER_ROW[loss] * n_rows + 8 * (n_cols + 1)
    return max(n_threads, budget // per_classifier)


def train_node(X: sp.csr_matrix, rows: np.ndarray, positives: list[np.ndarray] | tuple[np.ndarray, np.ndarray],
               cfg: LinearConfig, seed: int, budget: int | None = None) -> SparseWeights:
    """Train K classifiers on the rows ``rows`` of X (CSR, n x D).

    ``positives``: (pos_indptr, pos_rows) — classifier k's positive examples are the *local* row ids
    pos_rows[pos_indptr[k]:pos_indptr[k+1]] (positions in ``rows``).  ``budget``: most bytes of solver
    state at a time (see ``chunk_size``; None: ``STATE_BUDGET_BYTES``)."""
    pos_indptr, pos_rows = positives
    pos_indptr = np.asarray(pos_indptr, np.int64)
    pos_rows = np.asarray(pos_rows, np.int64)
    K = pos_indptr.shape[0] - 1
    n_features = X.shape[1]
    Xn = X[rows]
    # the features the node's rows use, and every entry's position among them (no sort: a mask)
    used = np.zeros(n_features, np.bool_)
    used[Xn.indices] = True
    cols = np.flatnonzero(used)
    del used
    remap = np.zeros(n_features, np.int32)
    remap[cols] = np.arange(cols.shape[0], dtype=np.int32)
    local = remap[Xn.indices]
    del remap
    feature_ids = np.append(cols, n_features).astype(np.int32)
    x = BiasedRows(Xn.indptr.astype(np.int64), local, Xn.data.astype(np.float32, copy=False), float(cfg.bias),
                   cols.shape[0])
    n_threads = numba.get_num_threads()
    settings = SolverParams(float(cfg.C), float(cfg.eps), int(cfg.max_iter), int(seed), n_threads)
    step = chunk_size(Xn.shape[0], cols.shape[0], n_threads, budget, cfg.loss)
    solver = LOSSES[cfg.loss]
    counts, ids, vals = [], [], []
    for k0 in range(0, K, step):
        k1 = min(K, k0 + step)
        p0, p1 = pos_indptr[k0], pos_indptr[k1]
        W = np.empty((k1 - k0, cols.shape[0] + 1), np.float32)
        solver(x, pos_indptr[k0:k1 + 1] - p0, pos_rows[p0:p1], settings, W)
        r, c = np.nonzero(np.abs(W) >= cfg.weight_threshold)
        counts.append(np.bincount(r, minlength=k1 - k0))
        ids.append(feature_ids[c])
        vals.append(W[r, c])
    indptr = np.zeros(K + 1, np.int64)
    if K:
        np.cumsum(np.concatenate(counts), out=indptr[1:])
    return SparseWeights(indptr, np.concatenate(ids) if ids else np.zeros(0, np.int32),
                         np.concatenate(vals) if vals else np.zeros(0, np.float32))
