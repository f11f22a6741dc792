"""One-vs-rest squared-hinge linear classifiers of one label-tree node (Bonsai eq. 2.6).

A node's classifiers see only the node's examples (rows carrying one of its labels) and only the
features those rows use; weights smaller than ``weight_threshold`` in magnitude are pruned and the
rest stored sparse with global feature ids (the bias weight under id ``n_features``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np
import scipy.sparse as sp

from ..kernels.labeltree import train_squared_hinge


@dataclass(frozen=True)
class LinearConfig:
    C: float = 1.0
    eps: float = 0.1
    max_iter: int = 20
    weight_threshold: float = 0.1
    bias: float = 1.0


@dataclass
class SparseWeights:
    """Rows of pruned weights, one per classifier: CSR (indptr, indices, data)."""
    indptr: np.ndarray   # (K + 1,) int64
    indices: np.ndarray  # int32 global feature ids; n_features = the bias
    data: np.ndarray     # float32


def train_node(X: sp.csr_matrix, rows: np.ndarray, positives: list[np.ndarray] | tuple[np.ndarray, np.ndarray],
               cfg: LinearConfig, seed: int) -> SparseWeights:
    """Train K classifiers on the rows ``rows`` of X (CSR, n x D).

    ``positives``: (pos_indptr, pos_rows) — classifier k's positive examples are the *local* row ids
    pos_rows[pos_indptr[k]:pos_indptr[k+1]] (positions in ``rows``)."""
    pos_indptr, pos_rows = positives
    K = pos_indptr.shape[0] - 1
    n_features = X.shape[1]
    Xn = X[rows]
    cols, local = np.unique(Xn.indices, return_inverse=True)
    W = np.empty((K, cols.shape[0] + 1), np.float32)
    train_squared_hinge(Xn.indptr.astype(np.int64), local.astype(np.int64), Xn.data.astype(np.float64), cfg.bias,
                        pos_indptr.astype(np.int64), pos_rows.astype(np.int64), cfg.C, cfg.eps, cfg.max_iter,
                        seed, numba.get_num_threads(), W)
    keep = np.abs(W) >= cfg.weight_threshold
    feature_ids = np.append(cols, n_features).astype(np.int32)
    r, c = np.nonzero(keep)
    indptr = np.zeros(K + 1, np.int64)
    np.cumsum(np.bincount(r, minlength=K), out=indptr[1:])
    return SparseWeights(indptr, feature_ids[c], W[r, c])
