"""Top-k selection and sparse-row membership kernels (XMC metrics, top-k prediction), and the CSR
matrix as kernels take it.

Ties are broken by the smaller column index, so every ranking is deterministic.
"""
from typing import NamedTuple

import numpy as np
from numba import njit, prange


class CSR(NamedTuple):
    """A CSR matrix as the kernels take it: scipy's three arrays (column indices sorted within a row)."""
    indptr: np.ndarray
    indices: np.ndarray
    data: np.ndarray


def csr_arrays(matrix) -> CSR:
    """The three arrays of a scipy CSR matrix."""
    return CSR(matrix.indptr, matrix.indices, matrix.data)


@njit(cache=True, inline="always", error_model="numpy")
def _insert(buf_i, buf_v, filled, k, col, val):
    """Insert (col, val) into the descending top-k buffers holding `filled` entries; returns the new count."""
    if filled == k:
        last = buf_v[k - 1]
        if val < last or (val == last and col > buf_i[k - 1]):
            return filled
        pos = k - 1
    else:
        pos = filled
        filled += 1
    while pos > 0 and (buf_v[pos - 1] < val or (buf_v[pos - 1] == val and buf_i[pos - 1] > col)):
        buf_v[pos] = buf_v[pos - 1]
        buf_i[pos] = buf_i[pos - 1]
        pos -= 1
    buf_v[pos] = val
    buf_i[pos] = col
    return filled


@njit(parallel=True, cache=True, nogil=True, error_model="numpy")
def topk_dense_rows(scores, k, out_idx, out_val):
    """IN scores (n, L) float; k.  OUT out_idx (n, k) int64 columns of the k largest scores per row,
    descending (ties: smaller column first), -1 past the row's length; OUT out_val (n, k) float64."""
    n, L = scores.shape
    for i in prange(n):
        filled = 0
        for j in range(L):
            filled = _insert(out_idx[i], out_val[i], filled, k, j, scores[i, j])
        for j in range(filled, k):
            out_idx[i, j] = -1
            out_val[i, j] = 0.0


@njit(parallel=True, cache=True, nogil=True, error_model="numpy")
def topk_csr_rows(indptr, indices, data, k, out_idx, out_val):
    """IN a CSR matrix (indptr, indices, data); k.  OUT out_idx (n, k) int64 columns of the k largest
    stored values per row, descending (ties: smaller column first), -1 when the row has fewer than
    k stored entries; OUT out_val (n, k) float64."""
    n = indptr.shape[0] - 1
    for i in prange(n):
        filled = 0
        for p in range(indptr[i], indptr[i + 1]):
            filled = _insert(out_idx[i], out_val[i], filled, k, indices[p], data[p])
        for j in range(filled, k):
            out_idx[i, j] = -1
            out_val[i, j] = 0.0


@njit(cache=True, inline="always", error_model="numpy")
def _lower_bound(arr, lo, hi, value):
    """First position p in [lo, hi) with arr[p] >= value (arr sorted there), or hi."""
    while lo < hi:
        mid = (lo + hi) >> 1
        if arr[mid] < value:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(parallel=True, cache=True, nogil=True, error_model="numpy")
def row_membership(indptr, indices, cols, out):
    """IN CSR pattern (indptr, indices) with sorted column indices per row; cols (n, k) int64 (-1 = none).
    OUT out (n, k) bool: cols[i, j] is a stored column of row i."""
    n, k = cols.shape
    for i in prange(n):
        lo0 = indptr[i]
        hi0 = indptr[i + 1]
        for j in range(k):
            c = cols[i, j]
            found = False
            if c >= 0:
                p = _lower_bound(indices, lo0, hi0, c)
                found = p < hi0 and indices[p] == c
            out[i, j] = found
