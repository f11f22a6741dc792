"""Forest traversal.

A forest is flattened into structure-of-arrays: node arrays for all trees, concatenated
(``tree_node_offset`` gives each tree's slice, child ids are local to the tree, a negative
child ``c`` is leaf ``~c``), and leaf outputs in CSR form (``leaf_ptr``, ``leaf_cols``,
``leaf_vals``, rows indexed by ``tree_leaf_offset[t] + leaf``).  The CSR form serves dense
vector leaves (all columns), one-output trees (one column) and k-sparse leaves alike, and
prediction adds only the stored entries.
"""
import numpy as np
from numba import njit, prange

from ._llvm import prefetch
from .histogram import PREFETCH_DISTANCE
from .partition import feature_bin


@njit(cache=True, inline="always")
def _value(X, indptr, indices, data, i, f):
    """Feature f of row i: from dense X, or (when indptr is not empty) from a CSR matrix, where an
    absent entry is the value 0."""
    if indptr.shape[0] == 0:
        return np.float64(X[i, f])
    lo = indptr[i]
    hi = indptr[i + 1]
    while lo < hi:
        mid = (lo + hi) >> 1
        if indices[mid] < f:
            lo = mid + 1
        else:
            hi = mid
    if lo < indptr[i + 1] and indices[lo] == f:
        return np.float64(data[lo])
    return 0.0


@njit(cache=True, inline="always")
def _leaf_raw(X, indptr, indices, data, i, t, node_feature, node_threshold, node_default_left, node_left,
              node_right, tree_node_offset):
    base = tree_node_offset[t]
    if tree_node_offset[t + 1] == base:
        return 0
    node = 0
    while True:
        g = base + node
        x = _value(X, indptr, indices, data, i, node_feature[g])
        if np.isnan(x):
            go_left = node_default_left[g]
        else:
            go_left = x <= node_threshold[g]
        nxt = node_left[g] if go_left else node_right[g]
        if nxt < 0:
            return ~nxt
        node = nxt


@njit(cache=True, inline="always")
def _leaf_store(store, r, t, node_feature, node_bin, node_default_left, node_left, node_right, tree_node_offset):
    base = tree_node_offset[t]
    if tree_node_offset[t + 1] == base:
        return 0
    node = 0
    while True:
        g = base + node
        f = node_feature[g]
        b = feature_bin(store, r, f)
        if b == store.missing_bin[f]:
            go_left = node_default_left[g]
        else:
            go_left = b <= node_bin[g]
        nxt = node_left[g] if go_left else node_right[g]
        if nxt < 0:
            return ~nxt
        node = nxt


@njit(parallel=True, cache=True)
def predict_raw(X, indptr, indices, data, node_feature, node_threshold, node_default_left, node_left, node_right,
                tree_node_offset, tree_leaf_offset, leaf_ptr, leaf_cols, leaf_vals, out):
    """OUT out (n, d) float64: adds every tree's leaf output for each row of raw features: dense X
    (n, F) with an empty indptr, or the CSR matrix (indptr, indices, data) with X of shape (0, F)."""
    n_trees = tree_node_offset.shape[0] - 1
    n_rows = X.shape[0] if indptr.shape[0] == 0 else indptr.shape[0] - 1
    for i in prange(n_rows):
        for t in range(n_trees):
            leaf = _leaf_raw(X, indptr, indices, data, i, t, node_feature, node_threshold, node_default_left,
                             node_left, node_right, tree_node_offset)
            row = tree_leaf_offset[t] + leaf
            for p in range(leaf_ptr[row], leaf_ptr[row + 1]):
                out[i, leaf_cols[p]] += leaf_vals[p]


@njit(parallel=True, cache=True)
def predict_store(store, rows, node_feature, node_bin, node_default_left, node_left, node_right,
                  tree_node_offset, tree_leaf_offset, leaf_ptr, leaf_cols, leaf_vals, out):
    """OUT out (n, d) float64: as predict_raw, for the rows ``rows`` (m,) int32 of a binned store
    (out is indexed by row id, so rows may be any subset)."""
    n_trees = tree_node_offset.shape[0] - 1
    flat = store.dense.reshape(-1)
    width = store.dense.shape[1]
    ahead = rows.shape[0] - PREFETCH_DISTANCE
    for i in prange(rows.shape[0]):
        r = rows[i]
        if i < ahead and width:  # the rows are scattered: start loading a later row's bins now
            prefetch(flat, rows[i + PREFETCH_DISTANCE] * width)
        for t in range(n_trees):
            leaf = _leaf_store(store, r, t, node_feature, node_bin, node_default_left, node_left,
                               node_right, tree_node_offset)
            row = tree_leaf_offset[t] + leaf
            for p in range(leaf_ptr[row], leaf_ptr[row + 1]):
                out[r, leaf_cols[p]] += leaf_vals[p]


@njit(parallel=True, cache=True)
def predict_leaf_raw(X, indptr, indices, data, node_feature, node_threshold, node_default_left, node_left,
                     node_right, tree_node_offset, out):
    """OUT out (n, T) int32: the leaf each row reaches in each tree (raw features as predict_raw)."""
    n_trees = tree_node_offset.shape[0] - 1
    n_rows = X.shape[0] if indptr.shape[0] == 0 else indptr.shape[0] - 1
    for i in prange(n_rows):
        for t in range(n_trees):
            out[i, t] = _leaf_raw(X, indptr, indices, data, i, t, node_feature, node_threshold, node_default_left,
                                  node_left, node_right, tree_node_offset)
