"""Kernels of sparse-output boosting (GBDT-Sparse, Si et al. 2017): gradients of sparse scores against
sparse labels, k-sparse leaf values from the rows' sparse gradients, and adding k-sparse leaves to
sparse scores.

Every matrix is CSR with sorted column indices per row (``indptr``, ``indices``, ``data``).  Each
operation that makes a CSR runs in two passes: ``*_sizes`` counts the entries of every row, the
caller allocates, ``*_fill`` writes them; no kernel ever touches an array of n_rows x n_labels.

The losses (``loss`` code, per cell, y the label and z the score):

* 0, squared error ``(z - y)^2 / 2``: gradient ``z - y``;
* 1, the shifted squared hinge of the paper's eq. 9, halved: ``max(1 - z, 0)^2 / 2`` for y = 1 and
  ``max(z, 0)^2 / 2`` for y = 0: gradient ``min(z - 1, 0)`` and ``max(z, 0)``.

Both have a zero gradient where z = y (the paper's assumption 8), so a cell that is neither a label
nor a score has none, and both have a second derivative of at most 1.
"""
import numpy as np
from numba import njit, prange

from .sparse import _insert

LOSS_SQUARED = 0
LOSS_HINGE = 1


@njit(cache=True, inline="always")
def _gradient(loss, y, z):
    if loss == LOSS_SQUARED:
        return z - y
    if y > 0.5:
        return min(z - 1.0, 0.0)
    return max(z, 0.0)


@njit(cache=True)
def _merge_gradient_row(loss, y_indices, y_data, ylo, yhi, z_indices, z_data, zlo, zhi, out_indices, out_data,
                        pos, write):
    """Walk the union of one row's label and score columns; count (and, with ``write``, store from
    ``pos``) the non-zero gradients.  Returns the count."""
    a, b, count = ylo, zlo, 0
    while a < yhi or b < zhi:
        if b >= zhi or (a < yhi and y_indices[a] < z_indices[b]):
            col, y, z = y_indices[a], y_data[a], 0.0
            a += 1
        elif a >= yhi or z_indices[b] < y_indices[a]:
            col, y, z = z_indices[b], 0.0, z_data[b]
            b += 1
        else:
            col, y, z = y_indices[a], y_data[a], z_data[b]
            a += 1
            b += 1
        g = _gradient(loss, y, z)
        if g != 0.0:
            if write:
                out_indices[pos + count] = col
                out_data[pos + count] = g
            count += 1
    return count


@njit(parallel=True, cache=True)
def sparse_gradient_sizes(loss, y_indptr, y_indices, y_data, z_indptr, z_indices, z_data, out_sizes):
    """IN labels Y and scores Z (CSR, same shape).  OUT out_sizes (n,) int64: the non-zero gradients of
    each row."""
    no_i = np.empty(0, y_indices.dtype)
    no_d = np.empty(0, np.float32)
    for i in prange(y_indptr.shape[0] - 1):
        out_sizes[i] = _merge_gradient_row(loss, y_indices, y_data, y_indptr[i], y_indptr[i + 1], z_indices, z_data,
                                           z_indptr[i], z_indptr[i + 1], no_i, no_d, 0, False)


@njit(parallel=True, cache=True)
def sparse_gradient_fill(loss, y_indptr, y_indices, y_data, z_indptr, z_indices, z_data, out_indptr, out_indices,
                         out_data):
    """IN Y, Z as sparse_gradient_sizes; out_indptr (n + 1,) from its sizes.  OUT out_indices, out_data:
    the gradient matrix G (CSR, sorted, no zeros)."""
    for i in prange(y_indptr.shape[0] - 1):
        _merge_gradient_row(loss, y_indices, y_data, y_indptr[i], y_indptr[i + 1], z_indices, z_data, z_indptr[i],
                            z_indptr[i + 1], out_indices, out_data, out_indptr[i], True)


@njit(parallel=True, cache=True)
def sparse_leaf_values(rows, start, end, g_indptr, g_indices, g_data, row_hess, k, lambda_l2, learning_rate,
                       out_cols, out_vals):
    """k-sparse leaf values (GBDT-Sparse eq. 19, Hessian-weighted).

    IN rows (m,) int32: the rows of every leaf, leaf l's in rows[start[l]:end[l]]; G (CSR) the gradients;
    row_hess (n,) float32, each row's Hessian bound (its weight); k, lambda_l2, learning_rate.
    OUT out_cols (n_leaves, k) int32 ascending: the k columns with the largest |p_q| (p = the leaf's
    gradient sum; ties: the smaller column), padded with the smallest unused columns (value 0) when
    fewer are non-zero; out_vals (n_leaves, k) float64: -learning_rate * p_q / (H + lambda_l2), H the
    leaf's Hessian sum.  The cost of a leaf is O(m log m) in its m non-zero gradients, never O(L).
    """
    for leaf in prange(start.shape[0]):
        m = 0
        hess = 0.0
        for p in range(start[leaf], end[leaf]):
            r = rows[p]
            m += g_indptr[r + 1] - g_indptr[r]
            hess += row_hess[r]
        cols = np.empty(m, np.int64)
        vals = np.empty(m, np.float64)
        m = 0
        for p in range(start[leaf], end[leaf]):
            r = rows[p]
            for q in range(g_indptr[r], g_indptr[r + 1]):
                cols[m] = g_indices[q]
                vals[m] = g_data[q]
                m += 1
        order = np.argsort(cols, kind="mergesort")
        best_i = np.empty(k, np.int64)
        best_v = np.empty(k, np.float64)
        filled = 0
        q = 0
        while q < m:
            col = cols[order[q]]
            total = 0.0
            while q < m and cols[order[q]] == col:
                total += vals[order[q]]
                q += 1
            if total != 0.0:
                filled = _insert(best_i, best_v, filled, k, col, abs(total))
        chosen = np.sort(best_i[:filled])
        sums = np.zeros(filled, np.float64)
        q = 0
        while q < m:  # the chosen columns' signed sums
            col = cols[order[q]]
            j = np.searchsorted(chosen, col)
            if j < filled and chosen[j] == col:
                sums[j] += vals[order[q]]
            q += 1
        scale = -learning_rate / (hess + lambda_l2) if hess + lambda_l2 > 0 else 0.0
        _pad_leaf(chosen, sums, scale, filled, k, out_cols[leaf], out_vals[leaf])


@njit(cache=True)
def _pad_leaf(chosen, sums, scale, filled, k, out_cols, out_vals):
    """Write the leaf's chosen columns (values sums * scale) and the k - filled smallest unused columns
    (value 0), merged in ascending column order."""
    n_pad = k - filled
    pads = np.empty(n_pad, np.int64)
    col, j, got = 0, 0, 0
    while got < n_pad:
        while j < filled and chosen[j] < col:
            j += 1
        if not (j < filled and chosen[j] == col):
            pads[got] = col
            got += 1
        col += 1
    a, b = 0, 0
    for slot in range(k):
        if b >= n_pad or (a < filled and chosen[a] < pads[b]):
            out_cols[slot] = chosen[a]
            out_vals[slot] = sums[a] * scale
            a += 1
        else:
            out_cols[slot] = pads[b]
            out_vals[slot] = 0.0
            b += 1


@njit(cache=True)
def _merge_leaf_row(z_indices, z_data, lo, hi, cols, vals, out_indices, out_data, pos, write):
    """The union of one score row and one leaf (zero leaf values skipped); count (and store) it."""
    a, b, count = lo, 0, 0
    width = cols.shape[0]
    while b < width and vals[b] == 0.0:
        b += 1
    while a < hi or b < width:
        if b >= width or (a < hi and z_indices[a] < cols[b]):
            col, v = z_indices[a], z_data[a]
            a += 1
        elif a >= hi or cols[b] < z_indices[a]:
            col, v = cols[b], vals[b]
            b += 1
        else:
            col, v = cols[b], z_data[a] + vals[b]
            a += 1
            b += 1
        if write:
            out_indices[pos + count] = col
            out_data[pos + count] = v
        count += 1
        while b < width and vals[b] == 0.0:
            b += 1
    return count


@njit(parallel=True, cache=True)
def add_leaves_sizes(z_indptr, z_indices, z_data, leaf_of, leaf_cols, leaf_vals, out_sizes):
    """IN scores Z (CSR: z_indptr, z_indices, z_data); leaf_of (n,) int32 the leaf of every row (-1: not in the tree); a tree's k-sparse
    leaves (leaf_cols ascending per leaf, leaf_vals).  OUT out_sizes (n,) int64: entries of each row of
    Z + its leaf's values."""
    no_i = np.empty(0, z_indices.dtype)
    no_d = np.empty(0, z_data.dtype)
    for i in prange(z_indptr.shape[0] - 1):
        leaf = leaf_of[i]
        if leaf < 0:
            out_sizes[i] = z_indptr[i + 1] - z_indptr[i]
        else:
            out_sizes[i] = _merge_leaf_row(z_indices, z_data, z_indptr[i], z_indptr[i + 1], leaf_cols[leaf],
                                           leaf_vals[leaf], no_i, no_d, 0, False)


@njit(parallel=True, cache=True)
def add_leaves_fill(z_indptr, z_indices, z_data, leaf_of, leaf_cols, leaf_vals, out_indptr, out_indices, out_data):
    """IN as add_leaves_sizes; out_indptr from its sizes.  OUT out_indices, out_data: Z + the leaves (CSR)."""
    no_cols = np.empty(0, leaf_cols.dtype)
    no_vals = np.empty(0, leaf_vals.dtype)
    for i in prange(z_indptr.shape[0] - 1):
        leaf = leaf_of[i]
        if leaf < 0:
            _merge_leaf_row(z_indices, z_data, z_indptr[i], z_indptr[i + 1], no_cols, no_vals, out_indices,
                            out_data, out_indptr[i], True)
        else:
            _merge_leaf_row(z_indices, z_data, z_indptr[i], z_indptr[i + 1], leaf_cols[leaf], leaf_vals[leaf],
                            out_indices, out_data, out_indptr[i], True)
