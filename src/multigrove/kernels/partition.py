"""Split the rows of a node between its two children; add leaf values to row scores."""
from numba import njit, prange


@njit(cache=True, inline="always")
def _goes_left(b, threshold_bin, missing_bin, default_left):
    if b == missing_bin:
        return default_left
    return b <= threshold_bin


@njit(cache=True)
def partition_rows(rows, start, end, binned, feature, threshold_bin, missing_bin, default_left, tmp):
    """Stable in-place partition of ``rows[start:end]``: left rows first, then right rows.

    IN/OUT rows (n,) int32; IN binned (n, F) uint8 (column-major is fastest); a row goes left
    when its bin is ``<= threshold_bin``, or when the bin is ``missing_bin`` and ``default_left``.
    OUT tmp (>= end - start,) int32 scratch.  Returns the number of left rows.
    """
    n_left = 0
    n_right = 0
    for i in range(start, end):
        r = rows[i]
        if _goes_left(binned[r, feature], threshold_bin, missing_bin, default_left):
            rows[start + n_left] = r
            n_left += 1
        else:
            tmp[n_right] = r
            n_right += 1
    for j in range(n_right):
        rows[start + n_left + j] = tmp[j]
    return n_left


@njit(parallel=True, cache=True)
def partition_rows_parallel(rows, start, end, binned, feature, threshold_bin, missing_bin, default_left,
                            n_chunks, tmp, counts):
    """As partition_rows, in parallel over n_chunks chunks: one pass that sorts each chunk's rows
    into its slice of tmp (lefts from the front, rights from the back), then a parallel copy.

    OUT tmp (>= end - start,) int32 scratch; OUT counts (n_chunks,) int64 scratch.
    """
    m = end - start
    for c in prange(n_chunks):
        c0 = start + c * m // n_chunks
        c1 = start + (c + 1) * m // n_chunks
        o = c0 - start
        nl = 0
        nr = 0
        last = c1 - start - 1
        for i in range(c0, c1):
            r = rows[i]
            if _goes_left(binned[r, feature], threshold_bin, missing_bin, default_left):
                tmp[o + nl] = r
                nl += 1
            else:
                tmp[last - nr] = r  # rights in reverse order, restored below
                nr += 1
        counts[c] = nl
    total_left = 0
    for c in range(n_chunks):
        total_left += counts[c]
    for c in prange(n_chunks):
        c0 = c * m // n_chunks
        c1 = (c + 1) * m // n_chunks
        left_before = 0
        for j in range(c):
            left_before += counts[j]
        right_before = c0 - left_before
        nl = counts[c]
        nr = c1 - c0 - nl
        for j in range(nl):
            rows[start + left_before + j] = tmp[c0 + j]
        for j in range(nr):
            rows[start + total_left + right_before + j] = tmp[c1 - 1 - j]
    return total_left


@njit(parallel=True, cache=True)
def add_leaf_values(rows, leaf_start, leaf_end, leaf_value, cols, scores):
    """OUT scores (n, d) float64: scores[rows[leaf_start[l]:leaf_end[l]], cols[l]] += leaf_value[l].
    IN cols (n_leaves, width) int32: the output columns of each leaf's values."""
    n_leaves = leaf_start.shape[0]
    width = cols.shape[1]
    for l in prange(n_leaves):  # one parallel region; leaves hold disjoint rows
        for i in range(leaf_start[l], leaf_end[l]):
            r = rows[i]
            for j in range(width):
                scores[r, cols[l, j]] += leaf_value[l, j]
