"""Fused gradient / diagonal-Hessian kernels for the built-in classification losses, and the
row-wise reductions a sketch needs.

They write straight into (possibly strided) column blocks of the statistics matrix, one pass
over the scores, rows in parallel.  Probabilities are computed in float64: a float32 exp is a
quarter faster, but rounding its argument x to float32 changes exp(x) by x * 6e-8, enough to
break scikit-learn's check that a weight of 2 equals a duplicated row.

The exponentials come from ``exp_nonpositive``, not ``math.exp``: LLVM cannot vectorize a loop
that calls the C library's scalar exp (and this host's Numba has no SVML), so a softmax over 200
classes spent most of its time in 16 M such calls a round.  The polynomial form below vectorizes
and is accurate to one unit in the last place (tests); it made the softmax pass 2.7x faster.
"""
import numpy as np
from numba import njit, prange

from ._llvm import bits_from_float, float_from_bits
from ._variants import variant

U = np.uint64  # unsigned indices: no negative-index wraparound code in the loops

#: exp(x) is returned as 0 below this (exp(-708) = 3.3e-308, the smallest normal float64 is
#: 2.2e-308): a probability that small is 0 in the float32 statistics anyway
EXP_UNDERFLOW = -708.0
_LOG2_E = 1.4426950408889634
_LN2_HIGH = 6.93147180369123816490e-01  # ln 2 split in two so that t * _LN2_HIGH is exact
_LN2_LOW = 1.90821492927058770002e-10
#: rows per task of softmax_grad_hess (its row of exponentials is allocated once per task)
ROW_BLOCK = 256
#: sigmoid_grad_hess buffers rows of this many outputs or more (see there)
SIGMOID_BUFFER_MIN = 4


@njit(inline="always", fastmath={"contract"}, cache=True, error_model="numpy")
def exp_nonpositive(x):
    """exp(x) for x <= 0 (within 1 ulp; 0 below EXP_UNDERFLOW; NaN stays NaN), in a form LLVM
    vectorizes.  x = t ln 2 + r with |r| <= ln(2) / 2; exp(r) by its Taylor polynomial of degree
    13 (remainder below 4e-18); 2**t made from its exponent bits."""
    t = np.floor(x * _LOG2_E + 0.5)
    r = (x - t * _LN2_HIGH) - t * _LN2_LOW
    poly = 1.0 / 6227020800.0
    poly = poly * r + 1.0 / 479001600.0
    poly = poly * r + 1.0 / 39916800.0
    poly = poly * r + 1.0 / 3628800.0
    poly = poly * r + 1.0 / 362880.0
    poly = poly * r + 1.0 / 40320.0
    poly = poly * r + 1.0 / 5040.0
    poly = poly * r + 1.0 / 720.0
    poly = poly * r + 1.0 / 120.0
    poly = poly * r + 1.0 / 24.0
    poly = poly * r + 1.0 / 6.0
    poly = poly * r + 0.5
    poly = poly * r + 1.0
    poly = poly * r + 1.0
    t = t if t > -1022.0 else -1022.0  # also maps NaN to a valid exponent (the result is chosen below)
    t = t if t < 1023.0 else 1023.0
    power = float_from_bits((np.int64(t) + np.int64(1023)) << np.int64(52))
    if x > EXP_UNDERFLOW:
        return poly * power
    return 0.0 if x <= EXP_UNDERFLOW else x


@njit(parallel=True, cache=True, nogil=True, error_model="numpy")
def scaled_residual(raw, y, shift, scale, out_g):
    """IN raw (n, d) float64 scores in standardized units, y (n, d) float64 targets, shift and scale (d,).
    OUT out_g (n, d) = raw - (y - shift) / scale: the squared loss's gradient on standardized targets,
    without a standardized copy of y."""
    n, d = raw.shape
    for ii in prange(n):
        i = U(ii)
        for jj in range(d):
            j = U(jj)
            out_g[i, j] = raw[i, j] - (y[i, j] - shift[j]) / scale[j]


@njit(parallel=True, cache=True, nogil=True, error_model="numpy")
def residual(raw, y, out_g):
    """IN raw (n, d) float64 scores, y (n, d) float64 targets.  OUT out_g (n, d) = raw - y: the squared
    loss's gradient, written by all threads (NumPy's subtraction runs on one: 2-3 ms a round of a
    1,000,000-row regression, a tenth of the round at 16 threads)."""
    n, d = raw.shape
    for ii in prange(n):
        i = U(ii)
        for jj in range(d):
            j = U(jj)
            out_g[i, j] = raw[i, j] - y[i, j]


@njit(inline="always", cache=True, error_model="numpy")
def lane_sum(values, count):
    """values[0] + ... + values[count - 1] in float64, in four interleaved partial sums (a fixed
    order, so the same on every machine, and four times the throughput of one running sum)."""
    s0 = s1 = s2 = s3 = 0.0
    whole = count - count % 4
    for j in range(0, whole, 4):
        s0 += values[j]
        s1 += values[j + 1]
        s2 += values[j + 2]
        s3 += values[j + 3]
    for j in range(whole, count):
        s0 += values[j]
    return (s0 + s1) + (s2 + s3)


@njit(parallel=True, fastmath={"contract"}, cache=True, nogil=True, error_model="numpy")
def softmax_grad_hess(raw, y, out_g, out_h):
    """IN raw (n, K) float64 scores, y (n,) int64 class ids.
    OUT out_g (n, K) = softmax(raw) - onehot(y); OUT out_h (n, K) = p (1 - p)."""
    n, K = raw.shape
    n_blocks = (n + ROW_BLOCK - 1) // ROW_BLOCK
    for blk in prange(n_blocks):
        e = np.empty(K)  # the row's probabilities, in float64
        for ii in range(blk * ROW_BLOCK, min(n, (blk + 1) * ROW_BLOCK)):
            i = U(ii)
            _softmax_row(raw, i, e, K)
            for jj in range(K):
                p = e[jj]
                out_h[i, U(jj)] = p * (1.0 - p)
                out_g[i, U(jj)] = p
            out_g[i, U(y[i])] -= 1.0


@njit(inline="always", fastmath={"contract"}, cache=True, error_model="numpy")
def _row_exponentials(raw, i, e, K):
    """e[:K] = exp(raw[i, :K] - m), m the row's largest score; return m."""
    m = raw[i, U(0)]
    for jj in range(1, K):
        v = raw[i, U(jj)]
        m = v if v > m else m
    for jj in range(K):
        e[jj] = exp_nonpositive(raw[i, U(jj)] - m)
    return m


@njit(inline="always", fastmath={"contract"}, cache=True, error_model="numpy")
def _softmax_row(raw, i, e, K):
    """e[:K] = softmax(raw[i, :K]): exponentials of the scores less their largest, then divided by their sum."""
    _row_exponentials(raw, i, e, K)
    inv = 1.0 / lane_sum(e, K)
    for jj in range(K):
        e[jj] *= inv


_MANTISSA_BITS = np.int64((1 << 52) - 1)
_EXPONENT_OF_ONE = np.int64(1023 << 52)
_SQRT2 = 1.4142135623730951


@njit(inline="always", fastmath={"contract"}, cache=True, error_model="numpy")
def log_positive(x):
    """log(x) for a normal x > 0 (within 2 ulp; NaN stays NaN), in a form LLVM vectorizes, as exp_nonpositive.
    x = m 2**e with m in [sqrt(1/2), sqrt(2)); log m = 2 atanh(s) with s = (m - 1) / (m + 1), |s| < 0.172, by
    its series to s**21 (the next term is below 1e-18 of the sum)."""
    bits = bits_from_float(x)
    e = (bits >> np.int64(52)) - np.int64(1023)
    m = float_from_bits((bits & _MANTISSA_BITS) | _EXPONENT_OF_ONE)  # in [1, 2)
    halve = m > _SQRT2
    m = 0.5 * m if halve else m
    t = np.float64(e + np.int64(1) if halve else e)
    s = (m - 1.0) / (m + 1.0)
    z = s * s
    poly = 1.0 / 21.0
    poly = poly * z + 1.0 / 19.0
    poly = poly * z + 1.0 / 17.0
    poly = poly * z + 1.0 / 15.0
    poly = poly * z + 1.0 / 13.0
    poly = poly * z + 1.0 / 11.0
    poly = poly * z + 1.0 / 9.0
    poly = poly * z + 1.0 / 7.0
    poly = poly * z + 1.0 / 5.0
    poly = poly * z + 1.0 / 3.0
    log_m = 2.0 * s + 2.0 * s * z * poly
    result = t * _LN2_HIGH + (log_m + t * _LN2_LOW)
    return result if x == x else x


@njit(inline="always", fastmath={"contract"}, cache=True, error_model="numpy")
def _sigmoid(x):
    """1 / (1 + exp(-x)) without overflow: e = exp(-|x|); 1 / (1 + e) for x >= 0, e / (1 + e) below."""
    e = exp_nonpositive(-abs(x))
    return (1.0 if x >= 0 else e) / (1.0 + e)


@njit(parallel=True, fastmath={"contract"}, cache=True, nogil=True, error_model="numpy")
def sigmoid_grad_hess(raw, y, out_g, out_h):
    """IN raw (n, L) float64 scores, y (n, L) 0/1.  OUT out_g = sigmoid(raw) - y; OUT out_h = p (1 - p).

    A row of at least SIGMOID_BUFFER_MIN outputs puts its probabilities in a contiguous buffer first:
    out_g and out_h are column slices of the statistics matrix, whose strided stores kept the
    exponentials from vectorising when written in the same loop (Delicious, 12,920 x 983: 33 ms, now
    9.2; the same values).  One output goes straight through (500,000 rows: 1.46 ms, buffered 1.70)."""
    n, L = raw.shape
    if L < SIGMOID_BUFFER_MIN:
        for ii in prange(n):
            i = U(ii)
            for jj in range(L):
                j = U(jj)
                p = _sigmoid(raw[i, j])
                out_g[i, j] = p - y[i, j]
                out_h[i, j] = p * (1.0 - p)
        return
    n_blocks = (n + ROW_BLOCK - 1) // ROW_BLOCK
    for blk in prange(n_blocks):
        p = np.empty(L)
        for ii in range(blk * ROW_BLOCK, min(n, (blk + 1) * ROW_BLOCK)):
            i = U(ii)
            _sigmoid_row(raw, i, p, L)
            for jj in range(L):
                j = U(jj)
                out_g[i, j] = p[jj] - y[i, j]
                out_h[i, j] = p[jj] * (1.0 - p[jj])


@njit(inline="always", fastmath={"contract"}, cache=True, error_model="numpy")
def _sigmoid_row(raw, i, p, L):
    """p[:L] = sigmoid(raw[i, :L]), in a loop of its own (it vectorizes alone, not with the stores after it)."""
    for jj in range(L):
        p[jj] = _sigmoid(raw[i, U(jj)])


@njit(inline="always", cache=True, error_model="numpy")
def _sigmoid_statistics(raw, y, i, p, stats, h_col, L):
    """Row i's gradients sigmoid(raw) - y into stats[i, :L] and Hessians p (1 - p) into stats[i, h_col:] (the
    binary log loss of each of L outputs; y (n, L) labels in [0, 1])."""
    _sigmoid_row(raw, i, p, L)
    for jj in range(L):
        j = U(jj)
        stats[i, j] = p[jj] - y[i, j]
        stats[i, U(h_col) + j] = p[jj] * (1.0 - p[jj])


@njit(inline="always", cache=True, error_model="numpy")
def _softmax_statistics(raw, y, i, p, stats, h_col, K):
    """Row i's gradients softmax(raw) - onehot(y[i]) into stats[i, :K] and Hessians p (1 - p) into
    stats[i, h_col:] (softmax cross-entropy; y (n,) int64 class ids)."""
    _softmax_row(raw, i, p, K)
    for jj in range(K):
        j = U(jj)
        stats[i, j] = p[jj]
        stats[i, U(h_col) + j] = p[jj] * (1.0 - p[jj])
    stats[i, U(y[i])] -= 1.0


@njit(parallel=True, fastmath={"contract"}, cache=True, nogil=True, error_model="numpy")
def round_rows(raw, y, leaf_of_row, leaf_value, stats, h_col, projection_t, out_sketch):
    """A round's pass over the rows in place of three: the last tree's score update, the gradients and
    Hessians of the loss (``_row_statistics``: each loss's kernel is a variant, sigmoid_round and
    softmax_round), and the random projection of the gradients (the row it reads was just written: in cache).
    Delicious (12,920 x 983, a projection to 3): 19-20 ms against 25-32 for add_leaf_values, sigmoid_grad_hess
    and project_rows one after the other (benchmarks/round_pass.py); the same values.

    IN/OUT raw (n, L) float64 scores: leaf_value[leaf_of_row[i]] is added to row i first, where
        leaf_of_row has rows (n,) int32 (and the row's leaf is not -1); leaf_of_row (0,): no update.
    IN  y: the loss's labels; leaf_value (n_leaves, L) float64.
    OUT stats (n, C) float32, C-contiguous: the gradients in columns 0 .. L-1, the Hessians in h_col ..
        h_col + L - 1; the other columns are left as they are.
    IN  projection_t (k, L) float32, the projection transposed, or (0, L): no sketch.
    OUT out_sketch (n, k + 1) float32: the projected gradients, then the row's mean Hessian (when k > 0)."""
    n, L = raw.shape
    k = projection_t.shape[0]
    update = leaf_of_row.shape[0] > 0
    n_blocks = (n + ROW_BLOCK - 1) // ROW_BLOCK
    for blk in prange(n_blocks):
        p = np.empty(L)
        for ii in range(blk * ROW_BLOCK, min(n, (blk + 1) * ROW_BLOCK)):
            i = U(ii)
            leaf = leaf_of_row[i] if update else -1
            if leaf >= 0:
                for jj in range(L):
                    raw[i, U(jj)] += leaf_value[U(leaf), U(jj)]
            _row_statistics(raw, y, i, p, stats, h_col, L)
            if k > 0:
                _project_row(stats, i, h_col, projection_t, out_sketch, L)


_row_statistics = _sigmoid_statistics  # round_rows' own compilation is the log loss's (sigmoid_round's)


#: the log loss clips probabilities to [LOGLOSS_EPS, 1 - LOGLOSS_EPS]: a cell is at most -log(1e-15) = 34.5
LOGLOSS_EPS = 1e-15
#: the largest log loss of a cell or a row, -log(LOGLOSS_EPS)
LOGLOSS_CAP = float(-np.log(LOGLOSS_EPS))


@njit(inline="always", cache=True, error_model="numpy")
def _clipped_probability(values, i, j, from_raw):
    """logloss_rows' p of cell (i, j): the sigmoid of a raw score (``from_raw``) or the probability itself,
    clipped to [LOGLOSS_EPS, 1 - LOGLOSS_EPS]."""
    p = _sigmoid(values[i, j]) if from_raw else values[i, j]
    return min(max(p, LOGLOSS_EPS), 1.0 - LOGLOSS_EPS)


@njit(parallel=True, fastmath={"contract"}, cache=True, nogil=True, error_model="numpy")
def logloss_rows(values, from_raw, y, mask, out_rows, out_cells):
    """The binary log loss of every cell, -(y log p + (1 - y) log(1 - p)), p clipped to LOGLOSS_EPS, summed
    over each row: one pass, no temporaries, logs that vectorize (Delicious' 1,292 x 983 held-out cells took 26
    ms a round in NumPy, the sigmoid, the clip and each log a pass of its own).  A row's cells go to a
    buffer, then into lane_sum: a running sum over them would keep the loop from vectorizing.  A row of 0/1
    labels only (every row of a training or validation set: the losses check their labels) takes one log a
    cell, -log(p) or -log(1 - p), the same value: Delicious' held-out 1,292 x 983 cells in 2.6-2.9 ms against
    3.7-3.9 (benchmarks/logloss_rows.py).

    IN  values (n, d) float64: raw scores when ``from_raw`` (p is their sigmoid), else probabilities;
        y (n, d) labels in [0, 1]; mask (n, d) float32, 0 leaving a cell out, or (0, 0) for none.
    OUT out_rows (n,) float64: each row's sum of (masked) cells.
    OUT out_cells (n, d) float64, the cells themselves, or (0, 0) when not wanted."""
    n, d = values.shape
    masked = mask.shape[0] > 0
    keep = out_cells.shape[0] > 0
    n_blocks = (n + ROW_BLOCK - 1) // ROW_BLOCK
    for blk in prange(n_blocks):
        cells = np.empty(d)
        for ii in range(blk * ROW_BLOCK, min(n, (blk + 1) * ROW_BLOCK)):
            i = U(ii)
            soft = False
            for jj in range(d):
                label = y[i, U(jj)]
                soft |= (label != 0.0) & (label != 1.0)
            if soft:
                for jj in range(d):
                    j = U(jj)
                    p = _clipped_probability(values, i, j, from_raw)
                    label = y[i, j]
                    cells[jj] = -(label * log_positive(p) + (1.0 - label) * log_positive(1.0 - p))
            else:  # 0 x a finite log adds nothing: the log of the label's side alone
                for jj in range(d):
                    j = U(jj)
                    p = _clipped_probability(values, i, j, from_raw)
                    cells[jj] = -log_positive(p if y[i, j] == 1.0 else 1.0 - p)
            if masked:
                for jj in range(d):
                    cells[jj] *= mask[i, U(jj)]
            if keep:
                for jj in range(d):
                    out_cells[i, U(jj)] = cells[jj]
            out_rows[i] = lane_sum(cells, d)


@njit(parallel=True, fastmath={"contract"}, cache=True, nogil=True, error_model="numpy")
def softmax_logloss_rows(raw, y, out_rows):
    """The multi-class log loss of every row, -log p_y with p = softmax(raw[i]) clipped below at LOGLOSS_EPS,
    from the raw scores in one pass: log(sum_j exp(raw_ij - m_i)) + m_i - raw_iy, at most -log(LOGLOSS_EPS).
    A validation set's probabilities are not needed for it: SciPy's softmax over Otto's 6,188 held-out rows and
    the log of each label's took 0.85 ms a round on one thread, a serial part of an early-stopped fit's round.

    IN  raw (n, K) float64 scores, y (n,) int64 class ids in [0, K).
    OUT out_rows (n,) float64."""
    n, K = raw.shape
    n_blocks = (n + ROW_BLOCK - 1) // ROW_BLOCK
    for blk in prange(n_blocks):
        e = np.empty(K)
        for ii in range(blk * ROW_BLOCK, min(n, (blk + 1) * ROW_BLOCK)):
            i = U(ii)
            m = _row_exponentials(raw, i, e, K)
            loss = log_positive(lane_sum(e, K)) + (m - raw[i, U(y[i])])
            out_rows[i] = LOGLOSS_CAP if loss > LOGLOSS_CAP else loss  # NaN scores stay NaN


@njit(parallel=True, fastmath={"contract"}, cache=True, nogil=True, error_model="numpy")
def project_rows(stats, h_col, projection_t, out_g, out_h):
    """One pass over the rows: out_g = G P and, when out_h has a column, out_h = the row means of H.

    IN  stats (n, C) float32, C-contiguous: the gradients G (n, d) in columns 0 .. d-1 and, when out_h has a
        column, the Hessians H (n, d) in h_col .. h_col + d - 1 (the whole matrix, not column slices: a
        slice's rows have a stride Numba does not know, and their dot products did not vectorize; Delicious'
        projection took 9 ms a round);
        projection_t (k, d) float32, the projection P transposed (contiguous rows, so each output is a
        dot product along the contiguous row of G).
    OUT out_g (n, k); OUT out_h (n, 1) or (n, 0)."""
    n = stats.shape[0]
    d = projection_t.shape[1]
    k = projection_t.shape[0]
    with_h = out_h.shape[1] > 0
    for ii in prange(n):
        i = U(ii)
        for c in range(k):
            out_g[i, U(c)] = _dot_from(stats, i, projection_t, U(c), d)
        if with_h:
            out_h[i, U(0)] = _sum_from(stats, i, h_col, d) / d


@njit(inline="always", cache=True, error_model="numpy")
def _project_row(stats, i, h_col, projection_t, out, d):
    """out[i, :k] = the projected gradients of row i, out[i, k] its mean Hessian (round_rows)."""
    k = projection_t.shape[0]
    for c in range(k):
        out[i, U(c)] = _dot_from(stats, i, projection_t, U(c), d)
    out[i, U(k)] = _sum_from(stats, i, h_col, d) / d


@njit(fastmath={"contract", "reassoc"}, cache=True, nogil=True, error_model="numpy")
def _dot_from(A, i, B, c, d):
    """A[i, :d] . B[c, :d] in the type of A, for C-contiguous A and B: a loop LLVM vectorizes, adding in
    vector lanes (reassociated: the same sum on every run and at every thread count of one machine).  A
    function of its own, not inlined by Numba, whose fast-math flags apply only where they are declared."""
    s = A[i, U(0)] * 0
    for jj in range(d):
        s += A[i, U(jj)] * B[c, U(jj)]
    return s


@njit(fastmath={"contract", "reassoc"}, cache=True, nogil=True, error_model="numpy")
def _sum_from(A, i, first, d):
    """A[i, first:first + d].sum() in float64, for a C-contiguous A, vectorized as _dot_from."""
    s = 0.0
    for jj in range(d):
        s += A[i, U(first) + U(jj)]
    return s


# serial twins for small data (kernels._variants): the caller picks by the cells of the scores
scaled_residual_serial = variant(scaled_residual, "serial")
softmax_grad_hess_serial = variant(softmax_grad_hess, "serial")
sigmoid_grad_hess_serial = variant(sigmoid_grad_hess, "serial")
project_rows_serial = variant(project_rows, "serial")
# the round pass of each loss (Loss.round_pass), in parallel and serially
sigmoid_round = variant(round_rows, "sigmoid", parallel=True, _row_statistics=_sigmoid_statistics)
sigmoid_round_serial = variant(round_rows, "sigmoid_serial", _row_statistics=_sigmoid_statistics)
softmax_round = variant(round_rows, "softmax", parallel=True, _row_statistics=_softmax_statistics)
softmax_round_serial = variant(round_rows, "softmax_serial", _row_statistics=_softmax_statistics)
logloss_rows_serial = variant(logloss_rows, "serial")
softmax_logloss_rows_serial = variant(softmax_logloss_rows, "serial")
