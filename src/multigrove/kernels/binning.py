"""Map raw feature values to per-feature bin indices."""
import numpy as np
from numba import njit, prange


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
            lo = bound_offsets[f]
            hi = bound_offsets[f + 1]
            x = X[i, f]
            if np.isnan(x):
                out[i, f] = hi - lo
                continue
            a = lo
            b = hi - 1  # the last bound is +inf, so a bin always exists
            while a < b:
                mid = (a + b) >> 1
                if x <= bounds[mid]:
                    b = mid
                else:
                    a = mid + 1
            out[i, f] = a - lo
