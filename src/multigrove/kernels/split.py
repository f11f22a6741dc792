"""Best splits from node histograms: gain summed over outputs (GBDT-MO eq. 16).

Statistic columns of a histogram (``ScanParams`` says where each lives): gradients in columns
``0..k-1``; the Hessian of output j is ``h_scale * hist[:, h_col + j * h_stride]``
(``h_stride = 0`` when all outputs share one Hessian column, or when the Hessian is a constant
and ``h_col`` is the count column); the unweighted row count is column ``count_col``.

The score of a child is ``sum_j G_j^2 / (H_j + lambda)``; a split's gain is
``score(left) + score(right) - score(parent)`` (LightGBM's convention, without the 1/2), the
best over thresholds and both directions for missing values.

With ``topk > 0`` leaves keep only their top-k outputs (GBDT-MO eq. 19-22): unrestricted
(Alg. 3) scores each child by the sum of its own k largest ``G_j^2/(H_j+lambda)``; restricted
(Alg. 4) picks the k outputs with the largest ``left_j + right_j`` and scores both children on
them.  ``min_sum_hessian`` applies to the mean over outputs of a child's Hessian sums.
"""
from typing import NamedTuple

import numpy as np
from numba import njit, prange

from ._variants import pick, variant

U = np.uint64  # unsigned indices: no negative-index wraparound code in the loops


class ScanParams(NamedTuple):
    """The scalars of a split scan, passed to the kernels as one argument."""
    k: int                    # gradient columns
    h_col: int                # first Hessian column
    h_stride: int             # 1, or 0 for one Hessian column shared by all outputs
    h_scale: float            # 1.0, or the constant Hessian (h_col is then the count column)
    count_col: int
    lambda_l2: float
    min_data_in_leaf: int
    min_sum_hessian: float
    min_gain_to_split: float
    topk: int                 # 0: dense leaves; else leaves keep their top-k outputs
    restricted: bool          # with topk: GBDT-MO Alg. 4 (shared outputs) instead of Alg. 3


class CategoricalScan(NamedTuple):
    """The categorical features of a scan (LightGBM's parameters; ``None`` in their place when there are
    none, and the scan kernels then compile without this code) and where the sets they choose go."""
    slot: np.ndarray          # (F,) int32: -1 for a numeric feature, else its row of ``left``
    n_categories: np.ndarray  # (F,) int64: the feature's value bins (its categories with a bin)
    max_cat_to_onehot: int    # at most this many categories: one category against the rest
    max_cat_threshold: int    # the most categories a set sends left
    cat_smooth: float         # the ordering's Hessian smoothing, and the fewest rows of a set's category
    cat_l2: float             # added to lambda_l2 in a split's score (PLAIN_ONE_VS_REST_MAX_CATEGORIES)
    min_data_per_group: int   # the fewest rows of a set's right side and between two of its thresholds
    left: np.ndarray          # OUT (n_nodes, n_categorical, max bins) bool: each (node, feature)'s best set

    @classmethod
    def make(cls, categorical: np.ndarray, n_value_bins: np.ndarray, params, n_nodes: int = 2) -> "CategoricalScan":
        """For the features marked in ``categorical`` (F,) bool; params: anything with LightGBM's five names."""
        slot = np.full(categorical.shape[0], -1, np.int32)
        slot[categorical] = np.arange(int(categorical.sum()), dtype=np.int32)
        width = int(n_value_bins[categorical].max(initial=0)) + 1
        return cls(slot, n_value_bins.astype(np.int64), int(params.max_cat_to_onehot), int(params.max_cat_threshold),
                   float(params.cat_smooth), float(params.cat_l2), int(params.min_data_per_group),
                   np.zeros((n_nodes, int(categorical.sum()), width), np.bool_))


class FeatureSplits(NamedTuple):
    """The best threshold of every (node, feature) a scan looked at: arrays (n_nodes, F)."""
    gain: np.ndarray          # float64: best score(left) + score(right), -inf when no valid split
    threshold_bin: np.ndarray  # int32: left holds value bins <= threshold_bin
    default_left: np.ndarray  # bool: missing values go left
    splittable: np.ndarray    # bool: a threshold leaves min_data_in_leaf rows on both sides (the node's
    #                           descendants need not scan the feature otherwise)

    @classmethod
    def allocate(cls, n_nodes: int, n_features: int) -> "FeatureSplits":
        shape = (n_nodes, n_features)
        return cls(np.empty(shape), np.empty(shape, np.int32), np.empty(shape, np.bool_), np.empty(shape, np.bool_))


class NodeSplits(NamedTuple):
    """The best split of each node: arrays (n_nodes,), left_sums (n_nodes, C)."""
    gain: np.ndarray          # float64: over the parent, -inf when no split passes the limits
    feature: np.ndarray       # int32
    threshold_bin: np.ndarray  # int32
    default_left: np.ndarray  # bool
    left_sums: np.ndarray     # float64: the left child's statistic sums

    @classmethod
    def allocate(cls, n_nodes: int, n_cols: int) -> "NodeSplits":
        return cls(np.empty(n_nodes), np.empty(n_nodes, np.int32), np.empty(n_nodes, np.int32),
                   np.empty(n_nodes, np.bool_), np.empty((n_nodes, n_cols)))


@njit(cache=True, inline="always", error_model="numpy")
def _newton_score(g2, h, lambda_l2):
    """g2 / (h + lambda); 0 for an output without curvature (h + lambda = 0: a child whose outputs have
    saturated probabilities under lambda_l2 = 0), as its leaf value is 0 too."""
    den = h + lambda_l2
    return g2 / den if den > 0 else 0.0


@njit(cache=True, inline="always", error_model="numpy")
def _contrib(acc, total, j, p, left):
    if left:
        g = acc[j]
        h = p.h_scale * acc[p.h_col + j * p.h_stride]
    else:
        g = total[j] - acc[j]
        h = p.h_scale * (total[p.h_col + j * p.h_stride] - acc[p.h_col + j * p.h_stride])
    return _newton_score(g * g, h, p.lambda_l2)


@njit(cache=True, inline="always", error_model="numpy")
def _score(acc, total, p, left):
    if p.h_stride == 0:  # one Hessian for every output: sum_j G_j^2 / (H + lambda), a single division
        g2 = 0.0
        for j in range(p.k):
            g = acc[j] if left else total[j] - acc[j]
            g2 += g * g
        h = p.h_scale * (acc[p.h_col] if left else total[p.h_col] - acc[p.h_col])
        return _newton_score(g2, h, p.lambda_l2)
    s = 0.0
    for j in range(p.k):
        s += _contrib(acc, total, j, p, left)
    return s


@njit(cache=True, inline="always", error_model="numpy")
def _sift_down(heap, i, size):
    while True:
        lo = i
        a = 2 * i + 1
        b = a + 1
        if a < size and heap[a] < heap[lo]:
            lo = a
        if b < size and heap[b] < heap[lo]:
            lo = b
        if lo == i:
            return
        heap[i], heap[lo] = heap[lo], heap[i]
        i = lo


@njit(cache=True, nogil=True, error_model="numpy")
def topk_sum(values, n, topk, heap):
    """Sum of the topk largest of values[:n].  OUT heap: scratch of >= topk floats (a min-heap)."""
    if topk >= n:
        s = 0.0
        for j in range(n):
            s += values[j]
        return s
    for j in range(topk):
        heap[j] = values[j]
    for start in range(topk // 2 - 1, -1, -1):
        _sift_down(heap, start, topk)
    for j in range(topk, n):
        if values[j] > heap[0]:
            heap[0] = values[j]
            _sift_down(heap, 0, topk)
    s = 0.0
    for j in range(topk):
        s += heap[j]
    return s


# called, not inlined (inline="always" re-types the callee at each call site: this one, with its _contrib
# and _score inlined many times over, made the multi-output scan compile for 11 s; CHANGELOG.md, stop 48)
@njit(cache=True, nogil=True, error_model="numpy")
def _split_score(acc, total, p, buf, heap):
    """score(left) + score(right), dense or with top-k sparse leaves."""
    k = p.k
    if p.topk <= 0 or p.topk >= k:
        return _score(acc, total, p, True) + _score(acc, total, p, False)
    if p.restricted:
        for j in range(k):
            buf[j] = _contrib(acc, total, j, p, True) + _contrib(acc, total, j, p, False)
        return topk_sum(buf, k, p.topk, heap)
    for j in range(k):
        buf[j] = _contrib(acc, total, j, p, True)
    s = topk_sum(buf, k, p.topk, heap)
    for j in range(k):
        buf[j] = _contrib(acc, total, j, p, False)
    return s + topk_sum(buf, k, p.topk, heap)


@njit(cache=True, inline="always", error_model="numpy")
def _hess_mean(acc, total, p, left):
    s = 0.0
    for j in range(p.k):
        c = p.h_col + j * p.h_stride
        s += acc[c] if left else total[c] - acc[c]
    return s * p.h_scale / p.k


#: the scans that scan_feature and node_score compile: every kind, the layout choosing at run time, or one
#: kind of dense leaves only, in best_splits_kernel's variants (kernels._variants replaces the global; Numba
#: drops a branch on a constant unread, so a fit compiles only the scan it runs: a first 3-class fit's
#: kernels compiled in 2.3 fewer CPU seconds, CHANGELOG.md, stop 54)
SCAN_ANY = 0
SCAN_SHARED_HESSIAN = 1  # one Hessian column for every output (h_stride 0), dense leaves
SCAN_OWN_HESSIANS = 2    # a Hessian column per output, dense leaves
SCAN_KIND = SCAN_ANY


@njit(cache=True, nogil=True, error_model="numpy")
def node_score(total, p):
    """sum_j G_j^2 / (H_j + lambda) of one node's sums (C,), over its top-k outputs when topk > 0."""
    k = p.k
    buf = np.empty(k)
    for j in range(k):
        g = total[j]
        h = p.h_scale * total[p.h_col + j * p.h_stride] + p.lambda_l2
        buf[j] = g * g / h if h > 0 else 0.0
    if SCAN_KIND != SCAN_ANY or p.topk <= 0 or p.topk >= k:
        return buf.sum()
    return topk_sum(buf, k, p.topk, np.empty(p.topk))


@njit(cache=True, inline="always", error_model="numpy")
def one_output_node_score(total, p):
    """node_score of one output's sums (its own top 1): the one-output variants call it in node_score's place."""
    g = total[0]
    h = p.h_scale * total[p.h_col] + p.lambda_l2
    return g * g / h if h > 0 else 0.0


@njit(cache=True, inline="always", error_model="numpy")
def scan_one_output(f, hist, offsets, total, p, acc, buf, heap):
    """scan_feature for one output (k = 1): the left sums live in registers, not in an array (acc, buf
    and heap are not used).  The one-output variants of the scan kernels call it in scan_feature's place."""
    h_scale, lam = p.h_scale, p.lambda_l2
    count_col, h_col = p.count_col, p.h_col
    best_num, best_den = -np.inf, 1.0
    best_bin = -1
    best_left = False
    lo = offsets[f]
    miss = offsets[f + 1] - 1
    n_value_bins = miss - lo
    g_total = total[0]
    h_total = total[h_col]
    n_total = total[count_col]
    has_missing = hist[miss, count_col] > 0
    count_ok = False
    for direction in range(2 if n_value_bins >= 2 else 0):
        missing_left = direction == 1
        if missing_left and not has_missing:
            break
        g_left = hist[miss, 0] if missing_left else 0.0
        h_left = hist[miss, h_col] if missing_left else 0.0
        n_left = hist[miss, count_col] if missing_left else 0.0
        min_data, min_hess = p.min_data_in_leaf, p.min_sum_hessian
        for t in range(n_value_bins - 1):
            b = np.uint64(lo + t)
            n_bin = hist[b, np.uint64(count_col)]
            g_left += hist[b, np.uint64(0)]
            h_left += hist[b, np.uint64(h_col)]
            n_left += n_bin
            # an empty bin repeats the previous threshold's partition and gain, which the strict
            # comparison below never takes again: no branch on it (unpredictable in small nodes)
            if n_total - n_left < min_data:
                break  # the right side only shrinks from here on
            if n_left < min_data:
                continue
            count_ok = True
            hl = h_scale * h_left
            hr = h_scale * (h_total - h_left)
            if (hl < min_hess) | (hr < min_hess):
                continue
            g_right = g_total - g_left
            # gain = num / den, compared as num * best_den > best_num * den: no division per bin
            # (two were most of the scan's time), and an empty bin, which repeats the previous
            # threshold's num and den exactly, never wins again
            dl = hl + lam
            dr = hr + lam
            den = dl * dr
            if den <= 0.0:
                continue  # a side without curvature (lambda_l2 = 0, min_sum_hessian_in_leaf = 0)
            num = g_left * g_left * dr + g_right * g_right * dl
            if num * best_den > best_num * den:
                best_num, best_den = num, den
                best_bin = t
                best_left = missing_left
    best_gain = best_num / best_den if best_bin >= 0 else -np.inf
    return best_gain, best_bin, best_left, count_ok


@njit(cache=True, inline="always", error_model="numpy")
def _ratio_sum(g2l, dl, g2r, dr):
    """(num, den) with num / den = g2l / dl + g2r / dr, a side of den <= 0 (no curvature) adding 0, as
    _newton_score: the scans compare fractions without a division per bin."""
    if dl > 0.0 and dr > 0.0:
        return g2l * dr + g2r * dl, dl * dr
    if dl > 0.0:
        return g2l, dl
    if dr > 0.0:
        return g2r, dr
    return 0.0, 1.0


@njit(cache=True, inline="always", error_model="numpy")
def _scan_shared_hessian(f, hist, offsets, total, p, acc):
    """scan_feature for several outputs sharing one Hessian column with dense leaves (a projected sketch, or
    a constant Hessian): the count and the Hessian sums in registers, the gradient sums in acc, unsigned
    indices, and fractions compared as num * best_den > best_num * den (no division per bin; the gain is
    divided out once at the end)."""
    k = U(p.k)
    h_col, count_col = U(p.h_col), U(p.count_col)
    h_scale, lam = p.h_scale, p.lambda_l2
    min_data, min_hess = p.min_data_in_leaf, p.min_sum_hessian
    best_num, best_den = -np.inf, 1.0
    best_bin = -1
    best_left = False
    lo = U(offsets[f])
    miss = U(offsets[f + 1] - 1)
    n_value_bins = np.int64(miss - lo)
    n_total = total[count_col]
    h_total = total[h_col]
    has_missing = hist[miss, count_col] > 0
    count_ok = False
    for direction in range(2 if n_value_bins >= 2 else 0):
        missing_left = direction == 1
        if missing_left and not has_missing:
            break
        for j in range(k):
            acc[j] = hist[miss, j] if missing_left else 0.0
        h_left = hist[miss, h_col] if missing_left else 0.0
        n_left = hist[miss, count_col] if missing_left else 0.0
        for tt in range(n_value_bins - 1):
            b = lo + U(tt)
            n_bin = hist[b, count_col]
            for j in range(k):
                acc[j] += hist[b, j]
            h_left += hist[b, h_col]
            n_left += n_bin
            if n_bin == 0 and not (tt == 0 and missing_left):
                continue  # same partition as the previous threshold
            if n_total - n_left < min_data:
                break  # the right side only shrinks from here on
            if n_left < min_data:
                continue
            count_ok = True
            hl = h_scale * h_left
            hr = h_scale * (h_total - h_left)
            if hl < min_hess or hr < min_hess:
                continue
            g2l = 0.0
            g2r = 0.0
            for j in range(k):
                a = acc[j]
                r = total[j] - a
                g2l += a * a
                g2r += r * r
            num, den = _ratio_sum(g2l, hl + lam, g2r, hr + lam)
            if num * best_den > best_num * den:
                best_num, best_den = num, den
                best_bin = tt
                best_left = missing_left
    best_gain = best_num / best_den if best_bin >= 0 else -np.inf
    return best_gain, best_bin, best_left, count_ok


#: the most gradient columns _scan_shared_hessian_registers keeps in registers (the default sketch has 3)
REGISTER_MAX_K = 4


@njit(cache=True, inline="always", error_model="numpy")
def _scan_shared_hessian_registers(f, hist, offsets, total, p):
    """_scan_shared_hessian for k <= REGISTER_MAX_K gradient columns: their left sums in four registers (a
    column j >= k reads column 0 and is masked out of the scores, which add the columns in the same order:
    the same gains bit for bit).  A two-node scan at k = 3 takes 0.69x (atp7d's shape) and 0.80x (scene's)
    of the array version's time (benchmarks/split_scan.py; CHANGELOG.md, stop 50).  One body with an array
    for the columns beyond the fourth ran the k = 3 scan 1.6x slower than this one, so k > REGISTER_MAX_K
    keeps its own.

    An empty bin is added to the left sums but not scored, as in _scan_shared_hessian: its threshold
    splits the node's rows as the previous one does.  Most bins of a small node are empty (82 % of those
    rf1's scans walk, 66 % of scene's: benchmarks/empty_bins.py), and the skip took a 64 x 198-bin scan at
    k = 3 from 41 to 25 us for a node of 100 rows, 14 to 11 for 40 rows, 55 to 52 for 400; a node with
    every bin filled takes about 4 % longer (CHANGELOG.md, stop 59)."""
    k = p.k
    h_col, count_col = U(p.h_col), U(p.count_col)
    h_scale, lam = p.h_scale, p.lambda_l2
    min_data, min_hess = p.min_data_in_leaf, p.min_sum_hessian
    c1, c2, c3 = U(1 if k > 1 else 0), U(2 if k > 2 else 0), U(3 if k > 3 else 0)
    m1, m2, m3 = 1.0 if k > 1 else 0.0, 1.0 if k > 2 else 0.0, 1.0 if k > 3 else 0.0
    t0, t1, t2, t3 = total[0], total[c1], total[c2], total[c3]
    best_num, best_den = -np.inf, 1.0
    best_bin = -1
    best_left = False
    lo = U(offsets[f])
    miss = U(offsets[f + 1] - 1)
    n_value_bins = np.int64(miss - lo)
    n_total = total[count_col]
    h_total = total[h_col]
    has_missing = hist[miss, count_col] > 0
    count_ok = False
    for direction in range(2 if n_value_bins >= 2 else 0):
        missing_left = direction == 1
        if missing_left and not has_missing:
            break
        start = 1.0 if missing_left else 0.0
        a0, a1, a2, a3 = start * hist[miss, 0], start * hist[miss, c1], start * hist[miss, c2], start * hist[miss, c3]
        h_left = start * hist[miss, h_col]
        n_left = start * hist[miss, count_col]
        for tt in range(n_value_bins - 1):
            b = lo + U(tt)
            a0 += hist[b, U(0)]
            a1 += hist[b, c1]
            a2 += hist[b, c2]
            a3 += hist[b, c3]
            h_left += hist[b, h_col]
            n_bin = hist[b, count_col]
            n_left += n_bin
            if n_bin == 0 and not (tt == 0 and missing_left):
                continue  # the previous threshold's partition
            if n_total - n_left < min_data:
                break  # the right side only shrinks from here on
            if n_left < min_data:
                continue
            count_ok = True
            hl = h_scale * h_left
            hr = h_scale * (h_total - h_left)
            if hl < min_hess or hr < min_hess:
                continue
            r0, r1, r2, r3 = t0 - a0, t1 - a1, t2 - a2, t3 - a3
            g2l = a0 * a0 + m1 * (a1 * a1) + m2 * (a2 * a2) + m3 * (a3 * a3)
            g2r = r0 * r0 + m1 * (r1 * r1) + m2 * (r2 * r2) + m3 * (r3 * r3)
            num, den = _ratio_sum(g2l, hl + lam, g2r, hr + lam)
            if num * best_den > best_num * den:
                best_num, best_den = num, den
                best_bin = tt
                best_left = missing_left
    best_gain = best_num / best_den if best_bin >= 0 else -np.inf
    return best_gain, best_bin, best_left, count_ok


@njit(cache=True, inline="always", error_model="numpy")
def _own_hessians_score(acc, total, p):
    """score(left) + score(right) of several outputs with their own Hessians and dense leaves, in one pass
    over the outputs (the sums in the order _score and _hess_mean take them: the same gain), or -inf when a
    side's mean Hessian is below min_sum_hessian."""
    h_col, h_stride, h_scale, lam = U(p.h_col), U(p.h_stride), p.h_scale, p.lambda_l2
    h_left = 0.0
    h_right = 0.0
    score_left = 0.0
    score_right = 0.0
    for jj in range(p.k):
        j = U(jj)
        c = h_col + j * h_stride
        a = acc[c]
        r = total[c] - a
        h_left += a
        h_right += r
        g = acc[j]
        g_right = total[j] - g
        score_left += _newton_score(g * g, h_scale * a, lam)
        score_right += _newton_score(g_right * g_right, h_scale * r, lam)
    if h_left * h_scale / p.k < p.min_sum_hessian or h_right * h_scale / p.k < p.min_sum_hessian:
        return -np.inf
    return score_left + score_right


@njit(cache=True, nogil=True, error_model="numpy")
def _leading_direction(hist, lo, bins, n_bins, p, smooth, out):
    """OUT out (k,): the leading eigenvector of sum_c G_c G_c^T / (H_c + smooth) over the categories in
    ``bins[:n_bins]`` (G_c: the category's gradient sums, H_c: its Hessian sum per output), by power
    iteration from the gradient sums of the category of largest norm.  Projected on it, the categories'
    smoothed mean gradients are as spread as on any line: sorting along it, then cutting the order once,
    is the principal-direction heuristic for splitting a set of vectors in two (for one output it is
    LightGBM's ordering by G_c / (H_c + smooth))."""
    k = p.k
    start = 0
    largest = -1.0
    for i in range(n_bins):
        norm = 0.0
        for j in range(k):
            norm += hist[lo + bins[i], j] ** 2
        if norm > largest:
            largest, start = norm, i
    for j in range(k):
        out[j] = hist[lo + bins[start], j]
    if k == 1:
        out[0] = 1.0
        return
    projected = np.empty(k)
    for _ in range(DIRECTION_ITERATIONS):
        projected[:] = 0.0
        for i in range(n_bins):
            b = lo + bins[i]
            weight = 0.0
            for j in range(k):
                weight += hist[b, j] * out[j]
            weight /= _category_hessian(hist, b, p) + smooth
            for j in range(k):
                projected[j] += weight * hist[b, j]
        norm = np.sqrt(np.sum(projected * projected))
        if norm == 0.0:
            return
        for j in range(k):
            out[j] = projected[j] / norm


#: power iterations of _leading_direction (k is small: the outputs, or a sketch's columns)
DIRECTION_ITERATIONS = 12


@njit(cache=True, inline="always", error_model="numpy")
def _category_hessian(hist, b, p):
    """Bin b's Hessian sum per output (the mean over outputs of their own Hessians)."""
    if p.h_stride == 0:
        return p.h_scale * hist[b, p.h_col]
    s = 0.0
    for j in range(p.k):
        s += hist[b, p.h_col + j]
    return p.h_scale * s / p.k


#: a set split of at most this many categories (of cat_smooth rows or more in the node) tries every subset of
#: them: 255 at 8, where ordering along one direction can miss the best set of several outputs
EXHAUSTIVE_MAX_CATEGORIES = 8
#: one category against the rest is scored with lambda_l2 alone on a feature of at most this many categories
#: (LightGBM's one-hot splits, its max_cat_to_onehot = 4), and with lambda_l2 + cat_l2 on a feature of more,
#: which LightGBM splits by sets and regularizes so: the best of many small categories gains by chance.
#: On the categorical tables (CHANGELOG.md, stop 54) loans' test loss went from 1.2298 to 1.2113 (its 50
#: states: 1.2120 without the feature before), flights 0.6265 -> 0.6266, diamonds 0.0841 -> 0.0846, movies
#: the same
PLAIN_ONE_VS_REST_MAX_CATEGORIES = 4


@njit(cache=True, nogil=True, error_model="numpy")
def _with_cat_l2(p, cat):
    """The scan parameters with lambda_l2 + cat.cat_l2."""
    return ScanParams(p.k, p.h_col, p.h_stride, p.h_scale, p.count_col, p.lambda_l2 + cat.cat_l2,
                      p.min_data_in_leaf, p.min_sum_hessian, p.min_gain_to_split, p.topk, p.restricted)


@njit(cache=True, nogil=True, error_model="numpy")
def _best_subset(hist, lo, bins, n_bins, total, q, cat, acc, buf, heap):
    """(score, bits) of the best set of the categories bins[:n_bins] to send left (bit i: bins[i]), over
    every subset of at most max_cat_threshold of them whose two sides hold min_data_in_leaf and
    min_data_per_group rows; (-inf, 0) when none does, and whether any subset had enough rows both ways."""
    count_col = q.count_col
    n_total = total[count_col]
    least = max(q.min_data_in_leaf, cat.min_data_per_group)
    best, best_bits, count_ok = -np.inf, 0, False
    for bits in range(1, (1 << n_bins) - 1):
        size = 0
        for c in range(hist.shape[1]):
            acc[c] = 0.0
        for i in range(n_bins):
            if bits >> i & 1:
                size += 1
                for c in range(hist.shape[1]):
                    acc[c] += hist[lo + bins[i], c]
        if size > cat.max_cat_threshold or acc[count_col] < least or n_total - acc[count_col] < least:
            continue
        count_ok = True
        score = _valid_split_score(acc, total, q, buf, heap)
        if score > best:
            best, best_bits = score, bits
    return best, best_bits, count_ok


@njit(cache=True, nogil=True, error_model="numpy")
def scan_categorical(f, node, hist, offsets, total, p, cat, acc, buf, heap):
    """Best set split of categorical feature f: the categories in the set go left, every other one (and a
    missing value) right.  Up to cat.max_cat_to_onehot categories: one category against the rest.  More:
    the categories of at least cat_smooth rows in the node, scored with lambda_l2 + cat_l2 (as one against the
    rest is beyond PLAIN_ONE_VS_REST_MAX_CATEGORIES categories), each side
    holding min_data_per_group rows; up to EXHAUSTIVE_MAX_CATEGORIES of them every subset of at most
    max_cat_threshold, beyond that the categories ordered along _leading_direction by
    (v . G_c) / (H_c + cat_smooth) and each prefix of the order from either end up to max_cat_threshold
    categories whose rows since the last candidate reach min_data_per_group (LightGBM's method, with the
    score of every output).  Returns as scan_feature; the set goes to cat.left[node, cat.slot[f]].
    OUT acc (C,), buf, heap: scratch."""
    n_cols = hist.shape[1]
    lo = offsets[f]
    n_bins = cat.n_categories[f]
    count_col = p.count_col
    n_total = total[count_col]
    row = cat.left[node, cat.slot[f]]
    row[:] = False
    bins = np.empty(max(n_bins, 1), np.int64)
    n_used = 0
    one_hot = n_bins <= cat.max_cat_to_onehot
    for b in range(n_bins):
        cnt = hist[lo + b, count_col]
        if cnt > 0 and (one_hot or cnt >= cat.cat_smooth):
            bins[n_used] = b
            n_used += 1
    best_gain = -np.inf
    best_end = -1
    best_dir = 1
    count_ok = False
    q = p if one_hot and n_bins <= PLAIN_ONE_VS_REST_MAX_CATEGORIES else _with_cat_l2(p, cat)
    if not one_hot:
        if n_used <= EXHAUSTIVE_MAX_CATEGORIES:
            best_gain, bits, count_ok = _best_subset(hist, lo, bins, n_used, total, q, cat, acc, buf, heap)
            for i in range(n_used):
                row[bins[i]] = bits >> i & 1
            return best_gain, -1, False, count_ok
        direction = np.empty(p.k)
        _leading_direction(hist, lo, bins, n_used, p, cat.cat_smooth, direction)
        keys = np.empty(n_used)
        for i in range(n_used):
            b = lo + bins[i]
            key = 0.0
            for j in range(p.k):
                key += direction[j] * hist[b, j]
            keys[i] = key / (_category_hessian(hist, b, p) + cat.cat_smooth)
        order = np.argsort(keys, kind="mergesort")
        sorted_bins = bins[:n_used][order]
        for i in range(n_used):  # a loop, not a slice copy: see kernels.binning.bin_segments
            bins[i] = sorted_bins[i]
    max_in_set = 1 if one_hot else min(cat.max_cat_threshold, (n_used + 1) // 2)
    for direction_sign in (1, -1):
        if one_hot and direction_sign == -1:
            break
        for c in range(n_cols):
            acc[c] = 0.0
        since_last = 0.0
        for i in range(n_used if one_hot else min(n_used, max_in_set)):
            b = lo + bins[i if direction_sign == 1 else n_used - 1 - i]
            if one_hot:
                for c in range(n_cols):
                    acc[c] = hist[b, c]
            else:
                for c in range(n_cols):
                    acc[c] += hist[b, c]
                since_last += hist[b, count_col]
            n_left = acc[count_col]
            if n_left < p.min_data_in_leaf:
                continue
            n_right = n_total - n_left
            if n_right < p.min_data_in_leaf or (not one_hot and n_right < cat.min_data_per_group):
                if one_hot:
                    continue
                break
            count_ok = True
            if not one_hot:
                if since_last < cat.min_data_per_group:
                    continue
                since_last = 0.0
            gain = _valid_split_score(acc, total, q, buf, heap)
            if gain > best_gain:
                best_gain = gain
                best_end = i
                best_dir = direction_sign
    if best_end >= 0:
        if one_hot:
            row[bins[best_end]] = True
        else:
            for i in range(best_end + 1):
                row[bins[i if best_dir == 1 else n_used - 1 - i]] = True
    return best_gain, -1, False, count_ok


@njit(cache=True, nogil=True, error_model="numpy")
def set_left_sums(hist, offsets, feature, left_bins, out):
    """OUT out (C,): the statistic sums of the left child of a set split (the bins in left_bins go left)."""
    lo = offsets[feature]
    out[:] = 0.0
    for b in range(offsets[feature + 1] - lo):
        if left_bins[b]:
            for c in range(hist.shape[1]):
                out[c] += hist[lo + b, c]


@njit(cache=True, nogil=True, error_model="numpy")
def scan_feature(f, hist, offsets, total, p, acc, buf, heap):
    """Best threshold of feature f: (score(left) + score(right), threshold bin, missing goes left,
    whether any threshold leaves min_data_in_leaf rows on both sides); (-inf, -1, False, ...) when no
    threshold is valid.  OUT acc (C,), buf (k,), heap (max(topk, 1),): scratch.  Several outputs (k > 1;
    scan_one_output is the same for one).

    Without a threshold that leaves enough rows on both sides the feature cannot split any
    descendant either (a child's sides are subsets of the parent's), so the grower stops scanning it."""
    k = p.k
    if SCAN_KIND == SCAN_SHARED_HESSIAN or \
            (SCAN_KIND == SCAN_ANY and p.h_stride == 0 and (p.topk <= 0 or p.topk >= k)):  # one Hessian, dense
        if k <= REGISTER_MAX_K:
            return _scan_shared_hessian_registers(f, hist, offsets, total, p)
        return _scan_shared_hessian(f, hist, offsets, total, p, acc)
    dense = p.topk <= 0 or p.topk >= k
    n_cols = hist.shape[1]
    count_col = p.count_col
    best_gain = -np.inf
    best_bin = -1
    best_left = False
    lo = offsets[f]
    miss = offsets[f + 1] - 1
    n_value_bins = miss - lo
    n_total = total[count_col]
    has_missing = hist[miss, count_col] > 0
    count_ok = False
    for direction in range(2 if n_value_bins >= 2 else 0):
        missing_left = direction == 1
        if missing_left and not has_missing:
            break
        for c in range(n_cols):
            acc[c] = hist[miss, c] if missing_left else 0.0
        for t in range(n_value_bins - 1):
            for c in range(n_cols):
                acc[c] += hist[lo + t, c]
            if hist[lo + t, count_col] == 0 and not (t == 0 and missing_left):
                continue  # same partition as the previous threshold
            n_left = acc[count_col]
            if n_total - n_left < p.min_data_in_leaf:
                break  # the right side only shrinks from here on
            if n_left < p.min_data_in_leaf:
                continue
            count_ok = True
            if SCAN_KIND == SCAN_OWN_HESSIANS or dense:
                gain = _own_hessians_score(acc, total, p)
            else:
                if _hess_mean(acc, total, p, True) < p.min_sum_hessian:
                    continue
                if _hess_mean(acc, total, p, False) < p.min_sum_hessian:
                    continue
                gain = _split_score(acc, total, p, buf, heap)
            if gain > best_gain:
                best_gain = gain
                best_bin = t
                best_left = missing_left
    return best_gain, best_bin, best_left, count_ok


#: the most task blocks of a parallel scan (rows of its scratch)
SCAN_BLOCKS = 32


def scan_scratch(n_cols: int, p) -> np.ndarray:
    """The scan kernels' scratch, allocated once by their caller: one row per task block of the
    statistics' width (C) + the number of outputs (k) + the top-k heap (max(topk, 1)).  Allocating it
    inside the kernel cost 3 allocations a block: an empty scan took 10.9 microseconds, now 4.9."""
    return np.empty((SCAN_BLOCKS, n_cols + p.k + max(p.topk, 1)))


@njit(cache=True, inline="always", error_model="numpy")
def _scratch_parts(row, n_cols, p):
    """(acc (C,), buf (k,), heap (max(topk, 1),)) views of one scratch row."""
    return row[:n_cols], row[n_cols:n_cols + p.k], row[n_cols + p.k:n_cols + p.k + max(p.topk, 1)]


@njit(cache=True, inline="always", error_model="numpy")
def _scan_tasks(t0, t1, h0, h1, subtract, active, totals, offsets, feature_mask, p, categorical, scratch_row,
                out_gain, out_bin, out_left, out_splittable):
    """Scan tasks t0..t1-1; task t is feature t // n_nodes of node t % n_nodes (node 0: h0, node 1: h1).
    With ``subtract``, node 1's task first turns the feature's rows of h1 from the parent's into the
    sibling's (h1 -= h0), while they are in cache for the scan.  The outputs are a FeatureSplits' four
    arrays (taken as one tuple here, a one-thread scan of a two-column histogram took 1.27x as long).
    ``categorical``: a CategoricalScan, or None (this code is then not compiled: Numba prunes the branch)."""
    n_nodes = active.shape[0]
    n_cols = h0.shape[1]
    acc, buf, heap = _scratch_parts(scratch_row, n_cols, p)
    for t in range(t0, t1):
        f = t // n_nodes
        node = t - f * n_nodes
        if node == 1 and subtract:
            for bb in range(offsets[f], offsets[f + 1]):
                b = np.uint64(bb)
                for c in range(n_cols):
                    h1[b, np.uint64(c)] -= h0[b, np.uint64(c)]
        if not (feature_mask[f] and active[node]):
            g, b, dl, ok = -np.inf, -1, False, False
        elif categorical is not None and categorical.slot[f] >= 0:
            g, b, dl, ok = scan_categorical(f, node, h0 if node == 0 else h1, offsets, totals[node], p, categorical,
                                            acc, buf, heap)
        else:
            g, b, dl, ok = scan_feature(f, h0 if node == 0 else h1, offsets, totals[node], p, acc, buf, heap)
        out_gain[node, f] = g
        out_bin[node, f] = b
        out_left[node, f] = dl
        out_splittable[node, f] = ok


@njit(parallel=True, cache=True, nogil=True, error_model="numpy")
def best_split_per_feature(h0, h1, subtract, active, totals, offsets, feature_mask, p, categorical, scratch, out):
    """Scan every feature of one or two node histograms for its best threshold, in parallel over
    (node, feature).

    IN  h0 (total_bins, C) float64: node 0's histogram.  IN/OUT h1: node 1's (with ``subtract``, the
        parent's on entry and node 1's = parent - h0 on exit).  active (n_nodes,) bool: the nodes to
        scan (an inactive node gets -inf everywhere).
    IN  totals (n_nodes, C) node sums; offsets (F + 1,) int64; feature_mask (F,) bool: features
        allowed to split; p: ScanParams; categorical: CategoricalScan or None (no categorical feature);
        scratch (B, W) float64: from scan_scratch (B task blocks).
    OUT out (FeatureSplits, (>= n_nodes, F) arrays): each (node, feature)'s best threshold.
    """
    n_nodes = active.shape[0]
    n_blocks = min(offsets.shape[0] - 1, scratch.shape[0])
    for blk in prange(n_blocks):  # contiguous feature blocks of equal work, each with its scratch row
        t0 = n_nodes * scan_block_start(offsets, blk, n_blocks)
        t1 = n_nodes * scan_block_start(offsets, blk + 1, n_blocks)
        _scan_tasks(t0, t1, h0, h1, subtract, active, totals, offsets, feature_mask, p, categorical, scratch[blk],
                    out.gain, out.threshold_bin, out.default_left, out.splittable)


#: the work of scanning a feature, in bins: its bins plus this (the task's own cost)
TASK_BINS = 8


@njit(cache=True, inline="always", error_model="numpy")
def scan_block_start(offsets, blk, n_blocks):
    """The first feature of scan block blk of n_blocks: blocks of contiguous features (no two threads
    write next to each other) with equal work, bins + TASK_BINS a feature (features differ in bins:
    blocks of equal feature counts gave one of two threads 55 % of scm20d's bins, measured)."""
    n_features = offsets.shape[0] - 1
    target = blk * (offsets[n_features] + TASK_BINS * n_features) // n_blocks
    lo, hi = 0, n_features
    while lo < hi:  # the first feature f whose work before it, offsets[f] + TASK_BINS f, reaches target
        mid = (lo + hi) >> 1
        if offsets[mid] + TASK_BINS * mid < target:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True, inline="always", error_model="numpy")
def left_sums(hist, offsets, feature, threshold_bin, default_left, out):
    """OUT out (C,): the statistic sums of the left child of a split."""
    lo = offsets[feature]
    miss = offsets[feature + 1] - 1
    n_cols = hist.shape[1]
    for c in range(n_cols):
        out[c] = hist[miss, c] if default_left else 0.0
    for t in range(threshold_bin + 1):
        for c in range(n_cols):
            out[c] += hist[lo + t, c]


# parallel=True without a loop of its own: it calls a parallel kernel (kernels._variants.PARALLEL_CALLER)
@njit(parallel=True, cache=True, nogil=True, error_model="numpy")
def best_splits(h0, h1, n_nodes, subtract, totals, offsets, feature_mask, p, categorical, scratch, active,
                feature_noise, per_feature, out):
    """The best split of one or two nodes, after turning h1 from the parent's histogram into the
    sibling's (h1 -= h0) when ``subtract``: one call per split of the tree.

    IN  h0 (total_bins, C); IN/OUT h1 (total_bins, C); totals (n_nodes, C); offsets, feature_mask, p,
        categorical, scratch: as best_split_per_feature; active (>= n_nodes,) bool: nodes to scan.
    IN  feature_noise (>= n_nodes, F): added to each feature's best score when choosing the node's
        feature among those whose gain passes min_gain_to_split (random_strength; zeros for none).
    OUT per_feature (FeatureSplits, (>= n_nodes, F)): as best_split_per_feature.
    OUT out (NodeSplits, (>= n_nodes,)): each node's best split; its gain is -inf when no split passes
        min_data_in_leaf, min_sum_hessian and min_gain_to_split.  A categorical feature's set is
        categorical.left[node, categorical.slot[feature]] (threshold_bin -1).
    """
    best_split_per_feature(h0, h1, subtract, active[:n_nodes], totals, offsets, feature_mask, p, categorical, scratch,
                           per_feature)
    choose_node_splits(h0, h1, n_nodes, totals, offsets, p, categorical, feature_noise, per_feature, out)


@njit(cache=True, inline="always", error_model="numpy")
def choose_node_splits(h0, h1, n_nodes, totals, offsets, p, categorical, feature_noise, per_feature, out):
    """best_splits' choice among the features a scan left in ``per_feature`` (split_step's too): each node's
    feature of best score (with ``feature_noise``) whose gain passes min_gain_to_split, and its left sums
    read from the node's histogram (h0, or h1 for node 1).  OUT out (NodeSplits)."""
    feat_gain = per_feature.gain
    n_features = offsets.shape[0] - 1
    for node in range(n_nodes):
        out.gain[node] = -np.inf
        out.feature[node] = -1
        parent_score = node_score(totals[node], p)
        f = np.int64(-1)  # not the constant -1: type inference would compile left_sums for Literal[int](-1) too
        best = -np.inf
        for ff in range(n_features):
            score = feat_gain[node, ff]
            if np.isfinite(score) and score - parent_score > p.min_gain_to_split \
                    and score + feature_noise[node, ff] > best:
                best = score + feature_noise[node, ff]
                f = ff
        if f < 0:
            continue
        out.gain[node] = feat_gain[node, f] - parent_score
        out.feature[node] = f
        out.threshold_bin[node] = per_feature.threshold_bin[node, f]
        out.default_left[node] = per_feature.default_left[node, f]
        if categorical is not None and categorical.slot[f] >= 0:
            set_left_sums(h0 if node == 0 else h1, offsets, f, categorical.left[node, categorical.slot[f]],
                          out.left_sums[node])
        else:
            left_sums(h0 if node == 0 else h1, offsets, f, out.threshold_bin[node], out.default_left[node],
                      out.left_sums[node])


@njit(cache=True, inline="always", error_model="numpy")
def _valid_split_score(acc, total, p, buf, heap):
    """score(left) + score(right) of the left sums acc, or -inf when a side's mean Hessian is below
    min_sum_hessian; one division per side when all outputs share one Hessian and leaves are dense."""
    if p.h_stride == 0 and (p.topk <= 0 or p.topk >= p.k):
        hl = p.h_scale * acc[p.h_col]
        hr = p.h_scale * (total[p.h_col] - acc[p.h_col])
        if hl < p.min_sum_hessian or hr < p.min_sum_hessian:
            return -np.inf
        g2l = 0.0
        g2r = 0.0
        for j in range(p.k):
            a = acc[j]
            r = total[j] - a
            g2l += a * a
            g2r += r * r
        return _newton_score(g2l, hl, p.lambda_l2) + _newton_score(g2r, hr, p.lambda_l2)
    if _hess_mean(acc, total, p, True) < p.min_sum_hessian or _hess_mean(acc, total, p, False) < p.min_sum_hessian:
        return -np.inf
    return _split_score(acc, total, p, buf, heap)


@njit(cache=True, nogil=True, error_model="numpy")
def _add_feature_gains(f, hist, total, parent_score, offsets, p, acc, buf, heap, out_gain):
    lo = offsets[f]
    miss = offsets[f + 1] - 1
    n_cols = hist.shape[1]
    n_total = total[p.count_col]
    # without missing values here both directions make the same partition: score one, add to both
    n_directions = 2 if hist[miss, p.count_col] > 0 else 1
    for direction in range(n_directions):
        missing_left = direction == 1
        for c in range(n_cols):
            acc[c] = hist[miss, c] if missing_left else 0.0
        gain = 0.0
        for t in range(miss - lo - 1):
            for c in range(n_cols):
                acc[c] += hist[lo + t, c]
            # an empty bin repeats the previous threshold's partition and gain
            if t == 0 or hist[lo + t, p.count_col] > 0:
                gain = 0.0
                n_left = acc[p.count_col]
                if n_left >= p.min_data_in_leaf and n_total - n_left >= p.min_data_in_leaf:
                    score = _valid_split_score(acc, total, p, buf, heap)
                    if score > -np.inf:
                        gain = score - parent_score
            out_gain[direction, lo + t] += gain
            if n_directions == 1:
                out_gain[1, lo + t] += gain


@njit(cache=True, nogil=True, error_model="numpy")
def _add_gain_tasks(f0, f1, hist, total, parent_score, offsets, feature_mask, p, scratch_row, out_gain):
    acc, buf, heap = _scratch_parts(scratch_row, hist.shape[1], p)
    for f in range(f0, f1):
        if feature_mask[f]:
            _add_feature_gains(f, hist, total, parent_score, offsets, p, acc, buf, heap, out_gain)


@njit(parallel=True, cache=True, nogil=True, error_model="numpy")
def add_split_gains(hist, total, offsets, feature_mask, p, scratch, out_gain):
    """Add one node's gain of every candidate split to ``out_gain``: symmetric (oblivious) trees
    split every node of a level by the same (feature, threshold, missing direction), the one whose
    gain summed over the level's nodes is largest.

    IN  hist (total_bins, C): the node's histogram; total (C,): its sums; offsets (F + 1,) int64;
        feature_mask (F,) bool: features allowed to split; p: ScanParams; scratch: from scan_scratch.
    IN/OUT out_gain (2, total_bins) float64: [missing goes left, value bin b of the threshold
        "left holds bins <= b"] += score(left) + score(right) - score(node), for thresholds that
        leave min_data_in_leaf rows and min_sum_hessian on both sides of this node (others add 0:
        the node is split anyway, its side with few rows keeps a leaf value shrunk by lambda_l2).
        The last value bin and the missing bin of a feature are never thresholds (left unchanged).
    """
    n_features = offsets.shape[0] - 1
    if total[p.count_col] < 2 * p.min_data_in_leaf:
        return  # no threshold leaves min_data_in_leaf rows on both sides
    parent_score = node_score(total, p)
    n_blocks = min(n_features, scratch.shape[0])
    for blk in prange(n_blocks):  # contiguous feature blocks of equal work, each with its scratch row
        _add_gain_tasks(scan_block_start(offsets, blk, n_blocks), scan_block_start(offsets, blk + 1, n_blocks),
                        hist, total, parent_score, offsets, feature_mask, p, scratch[blk], out_gain)


@njit(parallel=True, cache=True, nogil=True, error_model="numpy")
def segment_sums(rows, seg_start, seg_end, stats, out):
    """OUT out (n_segments, C) float64: out[s] = sum of stats[rows[seg_start[s]:seg_end[s]]].
    Used for leaf values from the full statistics when splits were scored on a sketch."""
    n_cols = stats.shape[1]
    for s in prange(seg_start.shape[0]):
        su = np.uint64(s)
        for c in range(n_cols):
            out[su, np.uint64(c)] = 0.0
        for i in range(seg_start[su], seg_end[su]):
            r = np.uint64(rows[i])
            for c in range(n_cols):
                cu = np.uint64(c)
                out[su, cu] += stats[r, cu]


@njit(cache=True, nogil=True, error_model="numpy")
def segment_labels(rows, seg_start, seg_end, out):
    """OUT out[rows[i]] = s for every position i of segment s (seg_start[s] <= i < seg_end[s]), the segments in
    order (a row in two segments keeps the later one's number, a row in none its entry): the leaf of each row
    from a builder's rows grouped by leaf.  Serial, a write a row: in Otto's fit (61,878 rows, 127 leaves) the leaf
    map took 0.12 ms a round where NumPy's slices, concatenation and scatter took 0.44 ms, a part of every round no
    thread shortens (CHANGELOG.md, stop 70)."""
    for s in range(seg_start.shape[0]):
        for i in range(seg_start[s], seg_end[s]):
            out[rows[i]] = s


class ScanKernels(NamedTuple):
    """The kernels of one kind of scan (scan_kind): what kernels.split_step compiles its own variant from,
    and best_splits in parallel and serially."""
    tasks: object         # _scan_tasks
    per_feature: object   # best_split_per_feature, in parallel
    choose: object        # choose_node_splits
    best_splits: object
    best_splits_serial: object


def _scan_kernels(suffix: str, scan, score) -> ScanKernels:
    """The kernels of the scan whose feature scan is ``scan`` (scan_feature's place) and whose node score is
    ``score`` (node_score's)."""
    tasks = variant(_scan_tasks, suffix, scan_feature=scan)
    per_feature = (variant(best_split_per_feature, suffix, parallel=True, _scan_tasks=tasks),
                   variant(best_split_per_feature, f"{suffix}_serial", _scan_tasks=tasks))
    choose = variant(choose_node_splits, suffix, node_score=score)
    return ScanKernels(tasks, per_feature[0], choose,
                       variant(best_splits, suffix, parallel=True, best_split_per_feature=per_feature[0],
                               choose_node_splits=choose),
                       variant(best_splits, f"{suffix}_serial", best_split_per_feature=per_feature[1],
                               choose_node_splits=choose))


# The scan's variants (kernels._variants), so that a fit compiles only the scan it runs: one output
# (scan_one_output in scan_feature's place), several with one Hessian or with their own and dense leaves
# (scan_feature and node_score compiled for that SCAN_KIND only), and every kind (top-k leaves); each in
# parallel and serially.  best_splits_kernel picks one.
best_split_per_feature_serial = variant(best_split_per_feature, "serial")
best_splits_serial = variant(best_splits, "serial", best_split_per_feature=best_split_per_feature_serial)
_dense_node_score = variant(node_score, "dense", SCAN_KIND=SCAN_OWN_HESSIANS)  # no top-k branch
#: the scan's kernels by scan_kind ("any": this module's own)
SCAN_KERNELS = {
    "any": ScanKernels(_scan_tasks, best_split_per_feature, choose_node_splits, best_splits, best_splits_serial),
    "one_output": _scan_kernels("one_output", scan_one_output, one_output_node_score),
    "shared": _scan_kernels("shared", variant(scan_feature, "shared", SCAN_KIND=SCAN_SHARED_HESSIAN),
                            _dense_node_score),
    "own": _scan_kernels("own", variant(scan_feature, "own", SCAN_KIND=SCAN_OWN_HESSIANS), _dense_node_score),
}
best_splits_one_output, best_splits_one_output_serial = SCAN_KERNELS["one_output"][3:]
best_splits_shared, best_splits_shared_serial = SCAN_KERNELS["shared"][3:]
best_splits_own, best_splits_own_serial = SCAN_KERNELS["own"][3:]
add_split_gains_serial = variant(add_split_gains, "serial")
segment_sums_serial = variant(segment_sums, "serial")


def scan_kind(p: ScanParams) -> str:
    """The kind of scan for the scan parameters ``p`` (a key of SCAN_KERNELS): the one-output scan for k = 1,
    the dense-leaf scan of one shared Hessian ("shared") or of one Hessian per output ("own"), or every kind's
    ("any": top-k leaves)."""
    if p.k == 1:
        return "one_output"
    if p.topk <= 0 or p.topk >= p.k:
        return "shared" if p.h_stride == 0 else "own"
    return "any"


def best_splits_kernel(p: ScanParams, work: float, threads: int | None = None):
    """The best_splits variant of scan_kind(p) for ``work`` (nodes x bins x k: a bin's scan costs about a
    nanosecond an output): serial as kernels._variants.pick says for ``threads`` Numba threads (None: asked of
    Numba)."""
    kernels = SCAN_KERNELS[scan_kind(p)]
    return pick(kernels.best_splits, kernels.best_splits_serial, work, threads)
