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


#: the bounds of a feature are searched in a row of this many (its value bins, at most 255, padded with +inf)
SEARCH_WIDTH = 256
#: features whose padded bounds are tabled at once (256 x 256 float64: 512 KB, cache-sized)
FEATURE_BLOCK = 256


@njit(cache=True, inline="always")
def _padded_bin(x, row):
    """The first j with x <= row[j], row (SEARCH_WIDTH,) ascending and +inf-padded; 0 for NaN.

    Eight halvings of fixed size, each a conditional add with no branch: every value costs the same
    eight steps, and the values of a row's features, independent, overlap in the processor (5.9x the
    speed of a binary search whose steps branch on the comparison: 0.09 against 0.53 s for 500k x 50)."""
    base = 0
    base += 128 if row[127] < x else 0
    base += 64 if row[base + 63] < x else 0
    base += 32 if row[base + 31] < x else 0
    base += 16 if row[base + 15] < x else 0
    base += 8 if row[base + 7] < x else 0
    base += 4 if row[base + 3] < x else 0
    base += 2 if row[base + 1] < x else 0
    base += 1 if row[base] < x else 0
    return base


@njit(parallel=True, cache=True)
def bin_matrix(X, bounds, bound_offsets, out):
    """Bin every cell of X.

    IN  X (n, F) float32/float64, C-ordered.
    IN  bounds (sum of value bins,) float64: for feature f, ``bounds[bound_offsets[f]:bound_offsets[f+1]]``
        are the ascending upper bounds of its value bins (at most SEARCH_WIDTH), the last one +inf.
    IN  bound_offsets (F + 1,) int64.
    OUT out (n, F) uint8: value x goes to the first bin j with x <= bound_j; NaN goes to the
        feature's missing bin, whose index is the number of value bins.

    Features go FEATURE_BLOCK at a time: their bounds padded into one table, then every row.
    """
    n, n_features = X.shape
    table = np.empty((FEATURE_BLOCK, SEARCH_WIDTH))
    for f0 in range(0, n_features, FEATURE_BLOCK):
        f1 = min(n_features, f0 + FEATURE_BLOCK)
        table[:, :] = np.inf
        for f in range(f0, f1):
            lo = bound_offsets[f]
            for j in range(bound_offsets[f + 1] - lo):
                table[f - f0, j] = bounds[lo + j]
        for i in prange(n):
            for f in range(f0, f1):
                x = X[i, f]
                if np.isnan(x):
                    out[i, f] = bound_offsets[f + 1] - bound_offsets[f]
                else:
                    out[i, f] = _padded_bin(x, table[f - f0])


@njit(parallel=True, cache=True)
def bin_entries(values, features, bounds, bound_offsets, out):
    """Bin a list of (value, feature) entries (the stored values of a sparse matrix).

    IN  values (m,) float32/float64; features (m,) int32/int64; bounds, bound_offsets as bin_matrix.
    OUT out (m,) uint8."""
    for i in prange(values.shape[0]):
        f = features[i]
        out[i] = _bin_of(values[i], bound_offsets[f], bound_offsets[f + 1], bounds)


@njit(parallel=True, cache=True)
def count_distinct(sorted_columns, n_distinct, n_missing):
    """How many distinct values and NaNs each feature's column holds.

    IN  sorted_columns (F, n) float64, each row (a feature's sample values) ascending, NaN last.
    OUT n_distinct (F,) int64: distinct non-NaN values; n_missing (F,) int64: NaNs."""
    n = sorted_columns.shape[1]
    for f in prange(sorted_columns.shape[0]):
        values = sorted_columns[f]
        distinct = 0
        end = n
        for i in range(n):
            if np.isnan(values[i]):
                end = i
                break
            if i == 0 or values[i] != values[i - 1]:
                distinct += 1
        n_distinct[f] = distinct
        n_missing[f] = n - end


@njit(parallel=True, cache=True)
def distinct_runs(sorted_columns, starts, out_features, out_values, out_counts):
    """Each feature's distinct non-NaN values in ascending order, with their counts.

    IN  sorted_columns (F, n) as count_distinct; starts (F + 1,) int64: feature f's values go to
        ``starts[f]:starts[f+1]`` (the cumulative sum of count_distinct's n_distinct).
    OUT out_features (m,) int64, out_values (m,) float64, out_counts (m,) int64."""
    n = sorted_columns.shape[1]
    for f in prange(sorted_columns.shape[0]):
        values = sorted_columns[f]
        k = starts[f] - 1
        for i in range(n):
            x = values[i]
            if np.isnan(x):
                break
            if i == 0 or x != values[i - 1]:
                k += 1
                out_features[k] = f
                out_values[k] = x
                out_counts[k] = 0
            out_counts[k] += 1
