"""Map raw feature values to per-feature bin indices."""
import numpy as np
from numba import njit, prange


@njit(cache=True, inline="always")
def _bin_of(x, lo, hi, bounds):
    """Bin of value x of the feature whose bounds are bounds[lo:hi]: the first j with x <= bound_j;
    NaN goes to the missing bin, the number of value bins (hi - lo)."""
    if np.isnan(x):
        return hi - lo
    a = lo
    b = hi - 1  # the last bound is +inf, so a bin always exists
    while a < b:
        mid = (a + b) >> 1
        if x <= bounds[mid]:
            b = mid
        else:
            a = mid + 1
    return a - lo


@njit(parallel=True, cache=True)
def bin_matrix(X, bounds, bound_offsets, out):
    """Bin every cell of X.

    IN  X (n, F) float32/float64, C-ordered.
    IN  bounds (sum of value bins,) float64: for feature f, ``bounds[bound_offsets[f]:bound_offsets[f+1]]``
        are the ascending upper bounds of its value bins, the last one +inf.
    IN  bound_offsets (F + 1,) int64.
    OUT out (n, F) uint8: value x goes to the first bin j with x <= bound_j; NaN goes to the
        feature's missing bin, whose index is the number of value bins.
    """
    n, n_features = X.shape
    for i in prange(n):
        for f in range(n_features):
            out[i, f] = _bin_of(X[i, f], bound_offsets[f], bound_offsets[f + 1], bounds)


@njit(parallel=True, cache=True)
def bin_entries(values, features, bounds, bound_offsets, out):
    """Bin a list of (value, feature) entries (the stored values of a sparse matrix).

    IN  values (m,) float32/float64; features (m,) int32/int64; bounds, bound_offsets as bin_matrix.
    OUT out (m,) uint8."""
    for i in prange(values.shape[0]):
        f = features[i]
        out[i] = _bin_of(values[i], bound_offsets[f], bound_offsets[f + 1], bounds)
