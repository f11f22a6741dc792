"""Best split per feature from a node histogram: gain summed over outputs (GBDT-MO eq. 16).

Statistic columns of the histogram: gradients in columns ``0..k-1``; the Hessian of output j
is ``h_scale * hist[:, h_col + j * h_stride]`` (``h_stride = 0`` when all outputs share one
Hessian column, or when the Hessian is a constant and ``h_col`` is the count column); the
unweighted row count is column ``count_col``.

The score of a child is ``sum_j G_j^2 / (H_j + lambda)``; the kernels return, per feature,
the largest ``score(left) + score(right)`` (LightGBM's convention, without the 1/2) over
thresholds and both directions for missing values.  The caller subtracts the parent score.

With ``topk > 0`` leaves keep only their top-k outputs (GBDT-MO eq. 19-22): unrestricted
(Alg. 3) scores each child by the sum of its own k largest ``G_j^2/(H_j+lambda)``; restricted
(Alg. 4) picks the k outputs with the largest ``left_j + right_j`` and scores both children on
them.  ``min_sum_hessian`` applies to the mean over outputs of a child's Hessian sums.
"""
import numpy as np
from numba import njit, prange


@njit(cache=True, inline="always")
def _contrib(acc, total, j, h_col, h_stride, h_scale, lambda_l2, left):
    if left:
        g = acc[j]
        h = h_scale * acc[h_col + j * h_stride]
    else:
        g = total[j] - acc[j]
        h = h_scale * (total[h_col + j * h_stride] - acc[h_col + j * h_stride])
    return g * g / (h + lambda_l2)


@njit(cache=True, inline="always")
def _score(acc, total, k, h_col, h_stride, h_scale, lambda_l2, left):
    if h_stride == 0:  # one Hessian for every output: sum_j G_j^2 / (H + lambda), a single division
        g2 = 0.0
        for j in range(k):
            g = acc[j] if left else total[j] - acc[j]
            g2 += g * g
        h = h_scale * (acc[h_col] if left else total[h_col] - acc[h_col])
        return g2 / (h + lambda_l2)
    s = 0.0
    for j in range(k):
        s += _contrib(acc, total, j, h_col, h_stride, h_scale, lambda_l2, left)
    return s


@njit(cache=True, inline="always")
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


@njit(cache=True)
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


@njit(cache=True, inline="always")
def _split_score(acc, total, k, h_col, h_stride, h_scale, lambda_l2, topk, restricted, buf, heap):
    """score(left) + score(right), dense or with top-k sparse leaves."""
    if topk <= 0 or topk >= k:
        return (_score(acc, total, k, h_col, h_stride, h_scale, lambda_l2, True)
                + _score(acc, total, k, h_col, h_stride, h_scale, lambda_l2, False))
    if restricted:
        for j in range(k):
            buf[j] = (_contrib(acc, total, j, h_col, h_stride, h_scale, lambda_l2, True)
                      + _contrib(acc, total, j, h_col, h_stride, h_scale, lambda_l2, False))
        return topk_sum(buf, k, topk, heap)
    for j in range(k):
        buf[j] = _contrib(acc, total, j, h_col, h_stride, h_scale, lambda_l2, True)
    s = topk_sum(buf, k, topk, heap)
    for j in range(k):
        buf[j] = _contrib(acc, total, j, h_col, h_stride, h_scale, lambda_l2, False)
    return s + topk_sum(buf, k, topk, heap)


@njit(cache=True, inline="always")
def _hess_mean(acc, total, k, h_col, h_stride, h_scale, left):
    s = 0.0
    for j in range(k):
        if left:
            s += acc[h_col + j * h_stride]
        else:
            s += total[h_col + j * h_stride] - acc[h_col + j * h_stride]
    return s * h_scale / k


@njit(cache=True)
def node_score(total, k, h_col, h_stride, h_scale, lambda_l2, topk):
    """sum_j G_j^2 / (H_j + lambda) of one node's sums (C,), over its top-k outputs when topk > 0."""
    buf = np.empty(k)
    for j in range(k):
        g = total[j]
        h = h_scale * total[h_col + j * h_stride] + lambda_l2
        buf[j] = g * g / h if h > 0 else 0.0
    if topk <= 0 or topk >= k:
        return buf.sum()
    return topk_sum(buf, k, topk, np.empty(topk))


@njit(cache=True)
def scan_feature(f, hist, offsets, total, k, h_col, h_stride, h_scale, count_col, lambda_l2,
                 min_data_in_leaf, min_sum_hessian, topk, restricted, acc, buf, heap,
                 out_gain, out_bin, out_default_left):
    """Best threshold of feature f; writes out_gain[f], out_bin[f], out_default_left[f].
    OUT acc (C,), buf (k,), heap (max(topk, 1),): scratch."""
    n_cols = hist.shape[1]
    best_gain = -np.inf
    best_bin = -1
    best_left = False
    lo = offsets[f]
    miss = offsets[f + 1] - 1
    n_value_bins = miss - lo
    shared_h = h_stride == 0 and (topk <= 0 or topk >= k)  # one Hessian for all outputs, dense leaves
    n_total = total[count_col]
    has_missing = hist[miss, count_col] > 0
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
            if n_total - n_left < min_data_in_leaf:
                break  # the right side only shrinks from here on
            if n_left < min_data_in_leaf:
                continue
            if shared_h:
                hl = h_scale * acc[h_col]
                hr = h_scale * (total[h_col] - acc[h_col])
                if hl < min_sum_hessian or hr < min_sum_hessian:
                    continue
                g2l = 0.0
                g2r = 0.0
                for j in range(k):
                    a = acc[j]
                    r = total[j] - a
                    g2l += a * a
                    g2r += r * r
                gain = g2l / (hl + lambda_l2) + g2r / (hr + lambda_l2)
            else:
                if _hess_mean(acc, total, k, h_col, h_stride, h_scale, True) < min_sum_hessian:
                    continue
                if _hess_mean(acc, total, k, h_col, h_stride, h_scale, False) < min_sum_hessian:
                    continue
                gain = _split_score(acc, total, k, h_col, h_stride, h_scale, lambda_l2, topk, restricted, buf, heap)
            if gain > best_gain:
                best_gain = gain
                best_bin = t
                best_left = missing_left
    out_gain[f] = best_gain
    out_bin[f] = best_bin
    out_default_left[f] = best_left


@njit(cache=True, inline="always")
def _scan_masked(f, hist, offsets, total, k, h_col, h_stride, h_scale, count_col, feature_mask, lambda_l2,
                 min_data_in_leaf, min_sum_hessian, topk, restricted, acc, buf, heap,
                 out_gain, out_bin, out_default_left):
    """scan_feature for an allowed feature; 'no split' for a masked one."""
    if feature_mask[f]:
        scan_feature(f, hist, offsets, total, k, h_col, h_stride, h_scale, count_col, lambda_l2,
                     min_data_in_leaf, min_sum_hessian, topk, restricted, acc, buf, heap,
                     out_gain, out_bin, out_default_left)
    else:
        out_gain[f] = -np.inf
        out_bin[f] = -1
        out_default_left[f] = False


@njit(parallel=True, cache=True)
def best_split_per_feature(hist, offsets, total, k, h_col, h_stride, h_scale, count_col,
                           feature_mask, lambda_l2, min_data_in_leaf, min_sum_hessian, topk, restricted,
                           out_gain, out_bin, out_default_left):
    """Scan every feature's bins for its best threshold, features in parallel.

    IN  hist (total_bins, C) float64; offsets (F + 1,) int64; total (C,) float64 node sums.
    IN  feature_mask (F,) bool: features allowed to split.
    IN  topk: 0 for dense leaves, else the number of outputs a leaf keeps; restricted: Alg. 4.
    OUT out_gain (F,) float64: best score(left)+score(right), -inf when no valid split.
    OUT out_bin (F,) int32: left holds value bins <= out_bin.
    OUT out_default_left (F,) bool: missing values go left.
    """
    n_features = offsets.shape[0] - 1
    n_blocks = min(n_features, 16)
    for blk in prange(n_blocks):  # contiguous feature blocks; scratch allocated once per block
        acc = np.empty(hist.shape[1])
        buf = np.empty(k)
        heap = np.empty(max(topk, 1))
        for f in range(blk * n_features // n_blocks, (blk + 1) * n_features // n_blocks):
            _scan_masked(f, hist, offsets, total, k, h_col, h_stride, h_scale, count_col, feature_mask, lambda_l2,
                         min_data_in_leaf, min_sum_hessian, topk, restricted, acc, buf, heap,
                         out_gain, out_bin, out_default_left)


@njit(cache=True)
def best_split_per_feature_serial(hist, offsets, total, k, h_col, h_stride, h_scale, count_col,
                                  feature_mask, lambda_l2, min_data_in_leaf, min_sum_hessian, topk, restricted,
                                  out_gain, out_bin, out_default_left):
    """As best_split_per_feature on one thread (small histograms)."""
    acc = np.empty(hist.shape[1])
    buf = np.empty(k)
    heap = np.empty(max(topk, 1))
    for f in range(offsets.shape[0] - 1):
        _scan_masked(f, hist, offsets, total, k, h_col, h_stride, h_scale, count_col, feature_mask, lambda_l2,
                     min_data_in_leaf, min_sum_hessian, topk, restricted, acc, buf, heap,
                     out_gain, out_bin, out_default_left)


@njit(cache=True)
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


@njit(parallel=True, cache=True)
def segment_sums(rows, seg_start, seg_end, stats, out):
    """OUT out (n_segments, C) float64: out[s] = sum of stats[rows[seg_start[s]:seg_end[s]]].
    Used for leaf values from the full statistics when splits were scored on a sketch."""
    n_cols = stats.shape[1]
    for s in prange(seg_start.shape[0]):
        for c in range(n_cols):
            out[s, c] = 0.0
        for i in range(seg_start[s], seg_end[s]):
            r = rows[i]
            for c in range(n_cols):
                out[s, c] += stats[r, c]
