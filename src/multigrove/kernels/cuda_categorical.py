"""CUDA kernel of the set splits of categorical features on the GPU (``boosting/cuda_histograms.py``).

``categorical_scores`` is ``kernels.split.scan_categorical`` for every (node, categorical feature) of a scan's
batch, a thread each: the categories of enough rows, then one category against the rest (few categories),
every subset of at most ``max_cat_threshold`` of them (up to ``EXHAUSTIVE_MAX_CATEGORIES``), or the categories
ordered along the leading direction of their gradient sums and each prefix of the order from either end
(LightGBM's method, with the score of every output).  ``cuda_scan.choose_splits`` then compares each feature's
best set with the numeric features' best thresholds.  The order and the sums are the CPU scan's: a set's sums
are added category after category, the power iteration runs the same steps, and the sort is stable.
"""
import math

from numba import cuda, int64

from .cuda_scan import (
    NODE_ACTIVE,
    NODE_SLOT,
    NODE_TOTALS,
    P_COUNT_COL,
    P_H_COL,
    P_H_SCALE,
    P_H_STRIDE,
    P_K,
    P_MIN_DATA,
    P_TOPK,
    _masked,
    _split_score,
)
from .split import DIRECTION_ITERATIONS, EXHAUSTIVE_MAX_CATEGORIES, PLAIN_ONE_VS_REST_MAX_CATEGORIES

#: entries of the categorical parameter vector (``categorical_parameters``): CategoricalScan's scalars
C_ONEHOT, C_THRESHOLD, C_SMOOTH, C_PER_GROUP = range(4)


def categorical_parameters(categorical) -> list:
    """The parameter vector of a CategoricalScan (cat_l2 goes into a second ScanParams vector: ``params_cat``)."""
    return [float(categorical.max_cat_to_onehot), float(categorical.max_cat_threshold),
            float(categorical.cat_smooth), float(categorical.min_data_per_group)]


def work_columns(k: int, max_bins: int) -> int:
    """Columns of a task's row of ``work``: the leading direction and its next iterate (k each), the keys and
    the categories (max_bins each)."""
    return 2 * k + 2 * max_bins


@cuda.jit(device=True, cache=True)
def _category_hessian(arena, row, params):
    """A category's Hessian sum per output (kernels.split._category_hessian)."""
    k = int64(params[P_K])
    h_col = int64(params[P_H_COL])
    if int64(params[P_H_STRIDE]) == 0:
        return params[P_H_SCALE] * arena[row, h_col]
    total = 0.0
    for j in range(k):
        total += arena[row, h_col + j]
    return params[P_H_SCALE] * total / k


@cuda.jit(device=True, cache=True)
def _order_along_direction(arena, first_row, task, work, n_used, params, smooth):
    """Sort the categories work[task, bins_col:bins_col + n_used] (stably) by (v . G_c) / (H_c + smooth), v the
    leading direction of their gradient sums by power iteration (kernels.split._leading_direction)."""
    k = int64(params[P_K])
    max_bins = (work.shape[1] - 2 * k) // 2
    keys_col = 2 * k
    bins_col = keys_col + max_bins
    start = 0
    largest = -1.0
    for i in range(n_used):
        norm = 0.0
        for j in range(k):
            value = arena[first_row + int64(work[task, bins_col + i]), j]
            norm += value * value
        if norm > largest:
            largest = norm
            start = i
    for j in range(k):
        work[task, j] = arena[first_row + int64(work[task, bins_col + start]), j]
    if k == 1:
        work[task, 0] = 1.0
    else:
        for _ in range(DIRECTION_ITERATIONS):
            for j in range(k):
                work[task, k + j] = 0.0
            for i in range(n_used):
                row = first_row + int64(work[task, bins_col + i])
                weight = 0.0
                for j in range(k):
                    weight += arena[row, j] * work[task, j]
                weight /= _category_hessian(arena, row, params) + smooth
                for j in range(k):
                    work[task, k + j] += weight * arena[row, j]
            norm = 0.0
            for j in range(k):
                norm += work[task, k + j] * work[task, k + j]
            norm = math.sqrt(norm)
            if norm == 0.0:
                break
            for j in range(k):
                work[task, j] = work[task, k + j] / norm
    for i in range(n_used):
        row = first_row + int64(work[task, bins_col + i])
        key = 0.0
        for j in range(k):
            key += work[task, j] * arena[row, j]
        work[task, keys_col + i] = key / (_category_hessian(arena, row, params) + smooth)
    for i in range(1, n_used):  # insertion sort: stable, as the CPU's mergesort
        key = work[task, keys_col + i]
        category = work[task, bins_col + i]
        place = i
        while place > 0 and work[task, keys_col + place - 1] > key:
            work[task, keys_col + place] = work[task, keys_col + place - 1]
            work[task, bins_col + place] = work[task, bins_col + place - 1]
            place -= 1
        work[task, keys_col + place] = key
        work[task, bins_col + place] = category


@cuda.jit(device=True, cache=True)
def _best_subset(arena, first_row, task, work, n_used, nodes, node, params_cat, cat_params, heaps, heap_first, acc,
                 cat_left, slot):
    """(score, count_ok) of the best subset of the categories to send left (kernels.split._best_subset), its
    categories marked in cat_left[node, slot]."""
    k = int64(params_cat[P_K])
    bins_col = 2 * k + (work.shape[1] - 2 * k) // 2
    count_col = int64(params_cat[P_COUNT_COL])
    n_total = nodes[node, NODE_TOTALS + count_col]
    least = params_cat[P_MIN_DATA]
    if cat_params[C_PER_GROUP] > least:
        least = cat_params[C_PER_GROUP]
    width = acc.shape[1]
    best = -math.inf
    best_bits = 0
    count_ok = 0
    for bits in range(1, (1 << n_used) - 1):
        size = 0
        for c in range(width):
            acc[task, c] = 0.0
        for i in range(n_used):
            if bits >> i & 1:
                size += 1
                row = first_row + int64(work[task, bins_col + i])
                for c in range(width):
                    acc[task, c] += arena[row, c]
        if size > cat_params[C_THRESHOLD] or acc[task, count_col] < least or n_total - acc[task, count_col] < least:
            continue
        count_ok = 1
        score = _split_score(acc, acc, task, 0, 0, nodes, node, params_cat, heaps, heap_first)
        if score > best:
            best = score
            best_bits = bits
    for i in range(n_used):
        cat_left[node, slot, int64(work[task, bins_col + i])] = best_bits >> i & 1
    return best, count_ok


@cuda.jit(device=True, cache=True)
def _scan_set(arena, first_row, n_bins, task, work, nodes, node, params, params_cat, cat_params, heaps, heap_first,
              acc, cat_left, slot):
    """(best score, count_ok) of one categorical feature of one node (kernels.split.scan_categorical), its best
    set marked in cat_left[node, slot]."""
    k = int64(params[P_K])
    bins_col = 2 * k + (work.shape[1] - 2 * k) // 2
    count_col = int64(params[P_COUNT_COL])
    min_data = params[P_MIN_DATA]
    per_group = cat_params[C_PER_GROUP]
    n_total = nodes[node, NODE_TOTALS + count_col]
    width = acc.shape[1]
    one_hot = n_bins <= cat_params[C_ONEHOT]
    n_used = 0
    for b in range(n_bins):
        count = arena[first_row + b, count_col]
        if count > 0 and (one_hot or count >= cat_params[C_SMOOTH]):
            work[task, bins_col + n_used] = b
            n_used += 1
    plain = one_hot and n_bins <= PLAIN_ONE_VS_REST_MAX_CATEGORIES
    if not one_hot:
        if n_used <= EXHAUSTIVE_MAX_CATEGORIES:
            return _best_subset(arena, first_row, task, work, n_used, nodes, node, params_cat, cat_params, heaps,
                                heap_first, acc, cat_left, slot)
        _order_along_direction(arena, first_row, task, work, n_used, params, cat_params[C_SMOOTH])
    max_in_set = 1 if one_hot else (n_used + 1) // 2  # at most max_cat_threshold of them
    if max_in_set > cat_params[C_THRESHOLD]:
        max_in_set = int64(cat_params[C_THRESHOLD])
    best = -math.inf
    best_end = -1
    best_sign = 1
    count_ok = 0
    for sign_index in range(1 if one_hot else 2):
        sign = 1 if sign_index == 0 else -1
        for c in range(width):
            acc[task, c] = 0.0
        since_last = 0.0
        for i in range(n_used if one_hot else (n_used if n_used < max_in_set else max_in_set)):
            row = first_row + int64(work[task, bins_col + (i if sign == 1 else n_used - 1 - i)])
            if one_hot:
                for c in range(width):
                    acc[task, c] = arena[row, c]
            else:
                for c in range(width):
                    acc[task, c] += arena[row, c]
                since_last += arena[row, count_col]
            n_left = acc[task, count_col]
            if n_left < min_data:
                continue
            n_right = n_total - n_left
            if n_right < min_data or (not one_hot and n_right < per_group):
                if one_hot:
                    continue
                break
            count_ok = 1
            if not one_hot:
                if since_last < per_group:
                    continue
                since_last = 0.0
            if plain:
                score = _split_score(acc, acc, task, 0, 0, nodes, node, params, heaps, heap_first)
            else:
                score = _split_score(acc, acc, task, 0, 0, nodes, node, params_cat, heaps, heap_first)
            if score > best:
                best = score
                best_end = i
                best_sign = sign
    if best_end >= 0:
        for i in range(1 if one_hot else best_end + 1):
            position = best_end if one_hot else (i if best_sign == 1 else n_used - 1 - i)
            cat_left[node, slot, int64(work[task, bins_col + position])] = 1
    return best, count_ok


@cuda.jit(cache=True)
def categorical_scores(arena, nodes, offsets, params, params_cat, cat_params, cat_features, n_nodes, heaps, acc,
                       work, cat_gain, cat_ok, cat_left):
    """Thread per (node, categorical feature): its best set split, as kernels.split.scan_categorical.

    IN arena, nodes, offsets, params: as cuda_scan.threshold_scores; params_cat: params with lambda_l2 + cat_l2;
    cat_params (4,) float64 (categorical_parameters); cat_features (S,) int64: the categorical features.
    OUT heaps ((n_nodes * S) * max(topk, 1),), acc (>= n_nodes * S, C), work (>= n_nodes * S, work_columns)
    float64: scratch; cat_gain (>= n_nodes, S) float64: the best set's score(left) + score(right), -inf when
    none is valid; cat_ok (>= n_nodes, S) uint8: a set left min_data_in_leaf rows both ways; cat_left (>= n_nodes,
    S, max bins + 1) uint8: the best set's categories (1: left)."""
    n_categorical = cat_features.shape[0]
    n_features = offsets.shape[0] - 1
    total_bins = offsets[n_features]
    width = arena.shape[1]
    topk = int64(params[P_TOPK])
    task = cuda.grid(1)
    while task < n_nodes * n_categorical:
        node = task // n_categorical
        slot = task % n_categorical
        f = cat_features[slot]
        for b in range(cat_left.shape[2]):
            cat_left[node, slot, b] = 0
        gain = -math.inf
        ok = 0
        if nodes[node, NODE_ACTIVE] != 0.0 and _masked(nodes, node, f, width):
            first_row = int64(nodes[node, NODE_SLOT]) * total_bins + offsets[f]
            gain, ok = _scan_set(arena, first_row, offsets[f + 1] - offsets[f] - 1, task, work, nodes, node, params,
                                 params_cat, cat_params, heaps, task * topk, acc, cat_left, slot)
        cat_gain[node, slot] = gain
        cat_ok[node, slot] = ok
        task += cuda.gridsize(1)
