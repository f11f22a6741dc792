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


@njit(inline="always", fastmath={"contract"}, cache=True)
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


@njit(parallel=True, cache=True, nogil=True)
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


@njit(parallel=True, cache=True, nogil=True)
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


@njit(inline="always", cache=True)
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


@njit(parallel=True, fastmath={"contract"}, cache=True, nogil=True)
def softmax_grad_hess(raw, y, out_g, out_h):
    """IN raw (n, K) float64 scores, y (n,) int64 class ids.
    OUT out_g (n, K) = softmax(raw) - onehot(y); OUT out_h (n, K) = p (1 - p)."""
    n, K = raw.shape
    n_blocks = (n + ROW_BLOCK - 1) // ROW_BLOCK
    for blk in prange(n_blocks):
        e = np.empty(K)  # the row's exponentials, in float64
        for ii in range(blk * ROW_BLOCK, min(n, (blk + 1) * ROW_BLOCK)):
            i = U(ii)
            m = raw[i, U(0)]
            for jj in range(1, K):
                v = raw[i, U(jj)]
                m = v if v > m else m
            for jj in range(K):
                e[jj] = exp_nonpositive(raw[i, U(jj)] - m)
            inv = 1.0 / lane_sum(e, K)
            for jj in range(K):
                p = e[jj] * inv
                out_h[i, U(jj)] = p * (1.0 - p)
                out_g[i, U(jj)] = p
            out_g[i, U(y[i])] -= 1.0


_MANTISSA_BITS = np.int64((1 << 52) - 1)
_EXPONENT_OF_ONE = np.int64(1023 << 52)
_SQRT2 = 1.4142135623730951


@njit(inline="always", fastmath={"contract"}, cache=True)
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


@njit(inline="always", fastmath={"contract"}, cache=True)
def _sigmoid(x):
    """1 / (1 + exp(-x)) without overflow: e = exp(-|x|); 1 / (1 + e) for x >= 0, e / (1 + e) below."""
    e = exp_nonpositive(-abs(x))
    return (1.0 if x >= 0 else e) / (1.0 + e)


@njit(parallel=True, fastmath={"contract"}, cache=True, nogil=True)
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
            for jj in range(L):
                p[jj] = _sigmoid(raw[i, U(jj)])
            for jj in range(L):
                j = U(jj)
                out_g[i, j] = p[jj] - y[i, j]
                out_h[i, j] = p[jj] * (1.0 - p[jj])


#: the log loss clips probabilities to [LOGLOSS_EPS, 1 - LOGLOSS_EPS]: a cell is at most -log(1e-15) = 34.5
LOGLOSS_EPS = 1e-15


@njit(parallel=True, fastmath={"contract"}, cache=True, nogil=True)
def logloss_rows(values, from_raw, y, mask, out_rows, out_cells):
    """The binary log loss of every cell, -(y log p + (1 - y) log(1 - p)), p clipped to LOGLOSS_EPS, summed
    over each row: one pass, no temporaries, logs that vectorize (Delicious' 1,292 x 983 held-out cells took 26
    ms a round in NumPy, the sigmoid, the clip and each log a pass of its own).  A row's cells go to a
    buffer, then into lane_sum: a running sum over them would keep the loop from vectorizing.

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
            for jj in range(d):
                j = U(jj)
                p = _sigmoid(values[i, j]) if from_raw else values[i, j]
                p = min(max(p, LOGLOSS_EPS), 1.0 - LOGLOSS_EPS)
                label = y[i, j]
                cells[jj] = -(label * log_positive(p) + (1.0 - label) * log_positive(1.0 - p))
            if masked:
                for jj in range(d):
                    cells[jj] *= mask[i, U(jj)]
            if keep:
                for jj in range(d):
                    out_cells[i, U(jj)] = cells[jj]
            out_rows[i] = lane_sum(cells, d)


@njit(parallel=True, fastmath={"contract"}, cache=True, nogil=True)
def project_rows(G, P_T, H, out_g, out_h):
    """One pass over the rows: out_g = G P and, when out_h has a column, out_h = the row means of H.

    IN  G (n, d) float32 gradients; P_T (k, d) float32, the projection P transposed (contiguous
        rows, so each output is a dot product along the contiguous row of G); H (n, d) Hessians
        (unused when out_h has no column).
    OUT out_g (n, k); OUT out_h (n, 1) or (n, 0)."""
    n, d = G.shape
    k = P_T.shape[0]
    with_h = out_h.shape[1] > 0
    for ii in prange(n):
        i = U(ii)
        for c in range(k):
            out_g[i, U(c)] = _row_dot(G, i, P_T, U(c), d)
        if with_h:
            out_h[i, U(0)] = lane_sum(H[i], d) / d


@njit(inline="always", cache=True)
def _row_dot(A, i, B, c, d):
    """A[i, :d] . B[c, :d] in the type of A, in four interleaved partial sums (see lane_sum)."""
    s0 = s1 = s2 = s3 = A[i, U(0)] * 0
    whole = d - d % 4
    for jj in range(0, whole, 4):
        j = U(jj)
        s0 += A[i, j] * B[c, j]
        s1 += A[i, j + U(1)] * B[c, j + U(1)]
        s2 += A[i, j + U(2)] * B[c, j + U(2)]
        s3 += A[i, j + U(3)] * B[c, j + U(3)]
    for jj in range(whole, d):
        s0 += A[i, U(jj)] * B[c, U(jj)]
    return (s0 + s1) + (s2 + s3)


# serial twins for small data (kernels._variants): the caller picks by the cells of the scores
scaled_residual_serial = variant(scaled_residual, "serial")
softmax_grad_hess_serial = variant(softmax_grad_hess, "serial")
sigmoid_grad_hess_serial = variant(sigmoid_grad_hess, "serial")
project_rows_serial = variant(project_rows, "serial")
logloss_rows_serial = variant(logloss_rows, "serial")
