"""Row selection for GOSS and row copies for a sampled tree's store."""
import numpy as np
from numba import njit, prange


@njit(parallel=True, cache=True, nogil=True, error_model="numpy")
def row_sq_norms(stats, out):
    """OUT out (n,) float32: the squared L2 norm of every row of stats (n, k) float32."""
    k = stats.shape[1]
    for i in prange(stats.shape[0]):
        acc = 0.0
        for j in range(k):
            acc += stats[i, j] * stats[i, j]
        out[i] = acc


@njit(cache=True, nogil=True, error_model="numpy")
def goss_select(magnitude, threshold, n_top, drawn, out_rows, out_left_out, out_other):
    """Keep the n_top rows of largest magnitude and the rows of the rest that ``drawn`` marks, all in
    ascending row order.

    IN  magnitude (n,); threshold: the n_top-th largest magnitude (rows above it are top rows;
        rows equal to it fill the top in row order); drawn (n - n_top,) bool: the j-th row of the rest
        (in row order) is drawn when drawn[j], n_other of them.
    OUT out_rows (n_top + n_other + 1,) int32: the kept rows, ascending, then one slot of slack.
    OUT out_left_out (n - n_top - n_other + 1,) int32: the other rows, ascending, then one slot of slack.
    OUT out_other (n_other + 1,) int32: the drawn rows of the rest, ascending, then one slot of slack.

    Branch-free: whether a row is kept is a coin flip for the branch predictor, so every row is
    written to each output and only the counters of its outputs advance (the slack slot takes the
    writes past the end).  A draw fixed beforehand leaves no chain from row to row (selection
    sampling's still-needed / still-left made each row wait for the one before: 1.9 ms at 500k rows).
    """
    n = magnitude.shape[0]
    n_rest = drawn.shape[0]
    n_above = 0
    for i in range(n):
        n_above += magnitude[i] > threshold
    ties_left = n_top - n_above  # rows equal to the threshold that still belong to the top
    rest_seen = 0
    k = 0
    j = 0
    q = 0
    for i in range(n):
        m = magnitude[i]
        top = np.int64(m > threshold)
        if m == threshold and ties_left > 0:  # rare: a predictable branch
            top = 1
            ties_left -= 1
        other = (1 - top) * np.int64(drawn[min(rest_seen, n_rest - 1)])  # clamped: top rows after the rest
        kept = top + other
        out_rows[k] = i
        out_other[j] = i
        out_left_out[q] = i
        k += kept
        j += other
        q += 1 - kept
        rest_seen += 1 - top


@njit(cache=True, nogil=True, error_model="numpy")
def split_marked(marked, out_rows, out_left_out):
    """Split the rows by a mark, each side in ascending row order.

    IN  marked (n,) bool.
    OUT out_rows (n_marked + 1,) int32: the marked rows, then one slot of slack.
    OUT out_left_out (n - n_marked + 1,) int32: the other rows, then one slot of slack.

    Branch-free, as goss_select: every row is written to both outputs and only the counter of its
    side advances (a bagging draw is a coin flip for the branch predictor; Knuth's selection
    sampling, which decided row by row, took 3.5 ms at 500k rows and half of them drawn)."""
    k = 0
    q = 0
    for i in range(marked.shape[0]):
        m = np.int64(marked[i])
        out_rows[k] = i
        out_left_out[q] = i
        k += m
        q += 1 - m


@njit(parallel=True, cache=True, nogil=True, error_model="numpy")
def scale_rows(stats, rows, n_cols, factor):
    """OUT stats (n, C) float32, in place: the first n_cols columns of the given rows times factor."""
    for i in prange(rows.shape[0]):
        r = rows[i]
        for j in range(n_cols):
            stats[r, j] *= factor


@njit(parallel=True, cache=True, nogil=True, error_model="numpy")
def scale_rows_by(stats, weights, n_cols):
    """OUT stats (n, C) float32, in place: the first n_cols columns of row i times weights[i] (n,)."""
    for i in prange(stats.shape[0]):
        w = weights[i]
        for j in range(n_cols):
            stats[i, j] *= w


#: rows per task of gather_rows; a constant trip count lets the compiler unroll the copy's inner loop
_TAKE_BLOCK = 16


@njit(parallel=True, cache=True, nogil=True, error_model="numpy")
def gather_rows(matrix, rows, out):
    """OUT out (k, m) C order: row i is matrix row rows[i].  IN matrix (n, m) C order; rows (k,) int32."""
    k = rows.shape[0]
    n_blocks = k // _TAKE_BLOCK
    for b in prange(n_blocks):
        lo = b * _TAKE_BLOCK
        for i in range(_TAKE_BLOCK):
            out[lo + i, :] = matrix[rows[lo + i], :]
    for i in range(n_blocks * _TAKE_BLOCK, k):
        out[i, :] = matrix[rows[i], :]


@njit(parallel=True, cache=True, nogil=True, error_model="numpy")
def gather_column_rows(matrix_cols, rows, out_cols):
    """OUT out_cols (m, k): out_cols[j, i] = matrix_cols[j, rows[i]], matrix_cols (m, n) a matrix's transpose
    (each of its columns contiguous, as BinnedStore.dense_cols).

    Column by column, each a gather from one contiguous column into another: with gather_rows 2.6 ms
    for 150k of 500k rows x 50 uint8 columns, where transposing the C-order copy block by block took 3.3."""
    k = rows.shape[0]
    for j in prange(matrix_cols.shape[0]):
        source = matrix_cols[j]
        target = out_cols[j]
        for i in range(k):
            target[i] = source[rows[i]]


#: a drawn (amplified) GOSS row counts this much in the packed count column (see gather_packed_counts):
#: counts of both kinds stay exact in a float64 sum while each is below 2**26 rows
PACKED_AMPLIFIED_UNIT = float(2 ** 26)


@njit(parallel=True, cache=True, nogil=True, error_model="numpy")
def gather_packed_counts(stats, rows, plain_hessian, out):
    """The statistics of a GOSS sample under a constant Hessian in two columns instead of three.

    IN  stats (n, 3) float32: gradient, Hessian, count (1) of every row; a kept row's Hessian is
        plain_hessian, a drawn row's is amplified.  rows (k,) int32: the sample.
    OUT out (k, 2) float32: row i holds the gradient of row rows[i] and 1 for a kept row or
        PACKED_AMPLIFIED_UNIT for a drawn one, so that a histogram cell's second column sums to
        n_kept + PACKED_AMPLIFIED_UNIT * n_drawn: both counts, hence the Hessian sum and the row
        count (kernels.histogram.unpack_counts)."""
    unit = np.float32(PACKED_AMPLIFIED_UNIT)
    for i in prange(rows.shape[0]):
        r = rows[i]
        out[i, 0] = stats[r, 0]
        out[i, 1] = np.float32(1.0) if stats[r, 1] == plain_hessian else unit
