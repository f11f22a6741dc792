"""Best split per feature from a node histogram: gain summed over outputs (GBDT-MO eq. 16).

Statistic columns of the histogram: gradients in columns ``0..k-1``; the Hessian of output j
is ``h_scale * hist[:, h_col + j * h_stride]`` (``h_stride = 0`` and ``h_col`` = the count
column when the Hessian is a constant); the unweighted row count is column ``count_col``.

The score of a child is ``sum_j G_j^2 / (H_j + lambda)``; the kernel returns, per feature,
the largest ``score(left) + score(right)`` (LightGBM's convention, without the 1/2) over
thresholds and both directions for missing values.  The caller subtracts the parent score.
"""
import numpy as np
from numba import njit, prange


@njit(cache=True, inline="always")
def _score(acc, total, k, h_col, h_stride, h_scale, lambda_l2, left):
    s = 0.0
    for j in range(k):
        if left:
            g = acc[j]
            h = h_scale * acc[h_col + j * h_stride]
        else:
            g = total[j] - acc[j]
            h = h_scale * (total[h_col + j * h_stride] - acc[h_col + j * h_stride])
        s += g * g / (h + lambda_l2)
    return s


@njit(cache=True, inline="always")
def _hess_sum(acc, total, k, h_col, h_stride, h_scale, left):
    s = 0.0
    for j in range(k):
        if left:
            s += acc[h_col + j * h_stride]
        else:
            s += total[h_col + j * h_stride] - acc[h_col + j * h_stride]
    return s * h_scale


@njit(cache=True)
def node_score(total, k, h_col, h_stride, h_scale, lambda_l2):
    """sum_j G_j^2 / (H_j + lambda) of one node's statistic sums (C,)."""
    s = 0.0
    for j in range(k):
        g = total[j]
        h = h_scale * total[h_col + j * h_stride] + lambda_l2
        if h > 0:
            s += g * g / h
    return s


@njit(cache=True)
def scan_feature(f, hist, offsets, total, k, h_col, h_stride, h_scale, count_col, lambda_l2,
                 min_data_in_leaf, min_sum_hessian, acc, out_gain, out_bin, out_default_left):
    """Best threshold of feature f; writes out_gain[f], out_bin[f], out_default_left[f]."""
    n_cols = hist.shape[1]
    out_gain[f] = -np.inf
    out_bin[f] = -1
    out_default_left[f] = False
    lo = offsets[f]
    miss = offsets[f + 1] - 1
    n_value_bins = miss - lo
    if n_value_bins < 2:
        return
    has_missing = hist[miss, count_col] > 0
    for direction in range(2):
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
            n_right = total[count_col] - n_left
            if n_right < min_data_in_leaf:
                break  # the right side only shrinks from here on
            if n_left < min_data_in_leaf:
                continue
            if _hess_sum(acc, total, k, h_col, h_stride, h_scale, True) < min_sum_hessian:
                continue
            if _hess_sum(acc, total, k, h_col, h_stride, h_scale, False) < min_sum_hessian:
                continue
            gain = (_score(acc, total, k, h_col, h_stride, h_scale, lambda_l2, True)
                    + _score(acc, total, k, h_col, h_stride, h_scale, lambda_l2, False))
            if gain > out_gain[f]:
                out_gain[f] = gain
                out_bin[f] = t
                out_default_left[f] = missing_left


@njit(parallel=True, cache=True)
def best_split_per_feature(hist, offsets, total, k, h_col, h_stride, h_scale, count_col,
                           feature_mask, lambda_l2, min_data_in_leaf, min_sum_hessian,
                           out_gain, out_bin, out_default_left):
    """Scan every feature's bins for its best threshold, features in parallel.

    IN  hist (total_bins, C) float64; offsets (F + 1,) int64; total (C,) float64 node sums.
    IN  feature_mask (F,) bool: features allowed to split.
    OUT out_gain (F,) float64: best score(left)+score(right), -inf when no valid split.
    OUT out_bin (F,) int32: left holds value bins <= out_bin.
    OUT out_default_left (F,) bool: missing values go left.
    """
    n_features = offsets.shape[0] - 1
    for f in prange(n_features):
        acc = np.empty(hist.shape[1])
        if feature_mask[f]:
            scan_feature(f, hist, offsets, total, k, h_col, h_stride, h_scale, count_col, lambda_l2,
                         min_data_in_leaf, min_sum_hessian, acc, out_gain, out_bin, out_default_left)
        else:
            out_gain[f] = -np.inf
            out_bin[f] = -1
            out_default_left[f] = False


@njit(cache=True)
def best_split_per_feature_serial(hist, offsets, total, k, h_col, h_stride, h_scale, count_col,
                                  feature_mask, lambda_l2, min_data_in_leaf, min_sum_hessian,
                                  out_gain, out_bin, out_default_left):
    """As best_split_per_feature on one thread (small histograms)."""
    acc = np.empty(hist.shape[1])
    for f in range(offsets.shape[0] - 1):
        if feature_mask[f]:
            scan_feature(f, hist, offsets, total, k, h_col, h_stride, h_scale, count_col, lambda_l2,
                         min_data_in_leaf, min_sum_hessian, acc, out_gain, out_bin, out_default_left)
        else:
            out_gain[f] = -np.inf
            out_bin[f] = -1
            out_default_left[f] = False


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
