"""CUDA kernels of the split scans on the GPU (``boosting/cuda_histograms.py``), in Numba's CUDA dialect.

With ``device_type="cuda"`` the histograms stay on the device, each in a slot (rows ``slot * total_bins`` ..
``(slot + 1) * total_bins - 1``) of one arena (slots, total_bins) x C float64, and the grower's scans run
here over a batch of nodes at once (a split's two children, or every node of a depth-wise level):

1. ``subtract_and_prefix``: a node given a slot to subtract first becomes its own histogram (the parent's
   minus its sibling's, LightGBM's subtraction, in place), then each of its (feature, statistic) columns is
   summed along the feature's bins into a prefix buffer: thread per (node, feature, statistic);
2. ``threshold_scores``: every (node, missing direction, threshold bin) scores its split from the prefix
   sums, thread per candidate: the gain of ``kernels/split.py`` (GBDT-MO eq. 16 summed over outputs),
   -inf where a side lacks min_data_in_leaf rows or min_sum_hessian;
3. ``choose_splits``: a block per node takes each feature's best threshold, then the node's best feature
   (random_strength's noise added, min_gain_to_split applied), and writes one row of results: gain,
   feature, threshold bin, missing direction, whether the feature's missing bin has rows, the left child's
   sums and each feature's ``splittable`` flag.  The host receives only these rows.

A tree with categorical features adds ``cuda_categorical.categorical_scores`` (their set splits) before the
third.  Symmetric trees use the first two kernels, ``node_scores`` and ``level_gains`` (each candidate's gain
summed over a level's nodes), ``split_sums`` (the left sums of the level's chosen split) and
``subtract_slots``.

The choices follow ``kernels/split.py``'s scans: the same candidates (a bin without rows repeats the previous
threshold's partition and is not scored, missing values go left only where the node has some), the first of
equal gains in scan order, the first of equal features.  The sums are float64 in another order (a prefix,
then the missing bin), so gains agree with the CPU's to float64 rounding, not bit for bit.
"""
import math

from numba import cuda, float64, int64

#: threads per block of these kernels
SCAN_THREADS = 128

#: entries of the parameter vector (``scan_parameters``): ScanParams' fields as float64
(P_K, P_H_COL, P_H_STRIDE, P_H_SCALE, P_COUNT_COL, P_LAMBDA, P_MIN_DATA, P_MIN_HESSIAN, P_MIN_GAIN, P_TOPK,
 P_RESTRICTED) = range(11)
N_PARAMS = 11

#: columns of a scan's node table (float64, one upload a batch): the node's slot, the slot to subtract first
#: (-1: none), whether to scan it (0 / 1), then its statistic sums (C columns from NODE_TOTALS), then its
#: feature mask (F columns of 0 / 1), then, where the table has them, random_strength's noise on each feature's
#: score (F columns)
NODE_SLOT, NODE_MINUS, NODE_ACTIVE, NODE_TOTALS = 0, 1, 2, 3

#: columns of choose_splits' output rows: gain over the node (-inf: no split), feature, threshold bin,
#: missing goes left (0 / 1), the feature's missing bin has rows (0 / 1); then the left child's sums (C
#: columns from OUT_LEFT_SUMS) and each feature's splittable flag (F columns after them)
OUT_GAIN, OUT_FEATURE, OUT_BIN, OUT_DEFAULT_LEFT, OUT_HAS_MISSING, OUT_LEFT_SUMS = 0, 1, 2, 3, 4, 5


def scan_parameters(p):
    """The parameter vector of a ScanParams, as a list of floats (topk 0 where leaves are dense: topk >= k)."""
    topk = p.topk if 0 < p.topk < p.k else 0
    return [float(p.k), float(p.h_col), float(p.h_stride), float(p.h_scale), float(p.count_col),
            float(p.lambda_l2), float(p.min_data_in_leaf), float(p.min_sum_hessian), float(p.min_gain_to_split),
            float(topk), float(p.restricted)]


def heap_cells(params_vector, n_items: int) -> int:
    """Cells of the top-k heaps of n_items candidates or nodes (``heaps``; 1 where leaves are dense)."""
    return max(1, int(params_vector[P_TOPK]) * n_items)


@cuda.jit(cache=True)
def subtract_slots(arena, pairs, total_bins):
    """For each row (slot, minus) of ``pairs`` (P, 2) int64: histogram ``slot`` -= histogram ``minus``."""
    width = arena.shape[1]
    n_cells = pairs.shape[0] * total_bins * width
    i = cuda.grid(1)
    while i < n_cells:
        row = i // width
        pair = row // total_bins
        b = row % total_bins
        c = i % width
        arena[pairs[pair, 0] * total_bins + b, c] -= arena[pairs[pair, 1] * total_bins + b, c]
        i += cuda.gridsize(1)


@cuda.jit(device=True, cache=True)
def _masked(nodes, node, f, width):
    """Whether feature f is in the node's mask (its column of the node table)."""
    return nodes[node, NODE_TOTALS + width + f] != 0.0


@cuda.jit(cache=True)
def subtract_and_prefix(arena, nodes, offsets, n_nodes, prefix):
    """Thread per (node, feature, statistic column): with a slot to subtract (nodes[node, NODE_MINUS] >= 0),
    the feature's bins of the node's histogram -= that slot's, in place (every feature); then, for an active
    node and a feature of its mask, prefix[node * total_bins + b, c] = the sum of column c over the feature's
    bins up to b.

    IN/OUT arena (slots * total_bins, C) float64.  IN nodes (>= n_nodes, NODE_TOTALS + C + F [+ F]) float64;
    offsets (F + 1,) int64.  OUT prefix (>= n_nodes * total_bins, C) float64."""
    width = arena.shape[1]
    n_features = offsets.shape[0] - 1
    total_bins = offsets[n_features]
    i = cuda.grid(1)
    while i < n_nodes * n_features * width:
        c = i % width
        f = (i // width) % n_features
        node = i // (width * n_features)
        base = int64(nodes[node, NODE_SLOT]) * total_bins
        minus = int64(nodes[node, NODE_MINUS])
        scan = nodes[node, NODE_ACTIVE] != 0.0 and _masked(nodes, node, f, width)
        acc = 0.0
        for b in range(offsets[f], offsets[f + 1]):
            value = arena[base + b, c]
            if minus >= 0:
                value -= arena[minus * total_bins + b, c]
                arena[base + b, c] = value
            if scan:
                acc += value
                prefix[node * total_bins + b, c] = acc
        i += cuda.gridsize(1)


@cuda.jit(device=True, cache=True)
def _left(prefix, arena, row, miss_row, c, direction):
    """The left side's sum of column c: the prefix, plus the missing bin's when missing values go left."""
    if direction == 1:
        return prefix[row, c] + arena[miss_row, c]
    return prefix[row, c]


@cuda.jit(device=True, cache=True)
def _newton_score(g2, h, lambda_l2):
    """g2 / (h + lambda); 0 for an output without curvature (kernels.split._newton_score)."""
    den = h + lambda_l2
    return g2 / den if den > 0 else 0.0


@cuda.jit(device=True, cache=True)
def _heap_push(heap, first, size, topk, value):
    """Offer value to the min-heap heap[first:first + size] of at most topk values (the largest seen so far);
    returns its new size."""
    if size < topk:
        i = size
        heap[first + i] = value
        while i > 0:  # sift up
            parent = (i - 1) // 2
            if heap[first + parent] <= heap[first + i]:
                break
            heap[first + parent], heap[first + i] = heap[first + i], heap[first + parent]
            i = parent
        return size + 1
    if value <= heap[first]:
        return size
    heap[first] = value
    i = 0
    while True:  # sift down
        low = i
        a = 2 * i + 1
        if a < size and heap[first + a] < heap[first + low]:
            low = a
        if a + 1 < size and heap[first + a + 1] < heap[first + low]:
            low = a + 1
        if low == i:
            return size
        heap[first + low], heap[first + i] = heap[first + i], heap[first + low]
        i = low


@cuda.jit(device=True, cache=True)
def _heap_sum(heap, first, size):
    total = 0.0
    for i in range(size):
        total += heap[first + i]
    return total


@cuda.jit(device=True, cache=True)
def _contribution(prefix, arena, row, miss_row, direction, nodes, node, params, j, left):
    """G_j^2 / (H_j + lambda) of output j on the left side (or the right one) of a candidate."""
    h_col = int64(params[P_H_COL]) + j * int64(params[P_H_STRIDE])
    g = _left(prefix, arena, row, miss_row, j, direction)
    h = _left(prefix, arena, row, miss_row, h_col, direction)
    if not left:
        g = nodes[node, NODE_TOTALS + j] - g
        h = nodes[node, NODE_TOTALS + h_col] - h
    return _newton_score(g * g, params[P_H_SCALE] * h, params[P_LAMBDA])


@cuda.jit(device=True, cache=True)
def _top_k_score(prefix, arena, row, miss_row, direction, nodes, node, params, heaps, heap_first):
    """score(left) + score(right) with top-k sparse leaves (GBDT-MO eq. 19-22; kernels.split._split_score):
    each side's k largest contributions (Alg. 3), or the k outputs of largest left + right contribution
    (restricted, Alg. 4), over heaps[heap_first:heap_first + topk]."""
    k = int64(params[P_K])
    topk = int64(params[P_TOPK])
    size = 0
    if params[P_RESTRICTED] != 0.0:
        for j in range(k):
            size = _heap_push(heaps, heap_first, size, topk,
                              _contribution(prefix, arena, row, miss_row, direction, nodes, node, params, j, True)
                              + _contribution(prefix, arena, row, miss_row, direction, nodes, node, params, j, False))
        return _heap_sum(heaps, heap_first, size)
    for j in range(k):
        size = _heap_push(heaps, heap_first, size, topk,
                          _contribution(prefix, arena, row, miss_row, direction, nodes, node, params, j, True))
    score = _heap_sum(heaps, heap_first, size)
    size = 0
    for j in range(k):
        size = _heap_push(heaps, heap_first, size, topk,
                          _contribution(prefix, arena, row, miss_row, direction, nodes, node, params, j, False))
    return score + _heap_sum(heaps, heap_first, size)


@cuda.jit(device=True, cache=True)
def _split_score(prefix, arena, row, miss_row, direction, nodes, node, params, heaps, heap_first):
    """score(left) + score(right) of one candidate whose sides hold enough rows, or -inf where a side's
    Hessian (per output, on average) is below min_sum_hessian: kernels.split's scores."""
    k = int64(params[P_K])
    h_col = int64(params[P_H_COL])
    h_stride = int64(params[P_H_STRIDE])
    h_scale = params[P_H_SCALE]
    lam = params[P_LAMBDA]
    min_hess = params[P_MIN_HESSIAN]
    if params[P_TOPK] > 0.0:  # top-k sparse leaves: the mean Hessian of each side, then the top-k score
        h_left = 0.0
        h_right = 0.0
        for j in range(k):
            c = h_col + j * h_stride
            a = _left(prefix, arena, row, miss_row, c, direction)
            h_left += a
            h_right += nodes[node, NODE_TOTALS + c] - a
        if h_left * h_scale / k < min_hess or h_right * h_scale / k < min_hess:
            return -math.inf
        return _top_k_score(prefix, arena, row, miss_row, direction, nodes, node, params, heaps, heap_first)
    if h_stride == 0:  # one Hessian column for every output (kernels.split._scan_shared_hessian)
        h_left = _left(prefix, arena, row, miss_row, h_col, direction)
        hl = h_scale * h_left
        hr = h_scale * (nodes[node, NODE_TOTALS + h_col] - h_left)
        if hl < min_hess or hr < min_hess:
            return -math.inf
        g2l = 0.0
        g2r = 0.0
        for j in range(k):
            a = _left(prefix, arena, row, miss_row, j, direction)
            r = nodes[node, NODE_TOTALS + j] - a
            g2l += a * a
            g2r += r * r
        dl = hl + lam
        dr = hr + lam
        if dl > 0.0 and dr > 0.0:  # kernels.split._ratio_sum: the CPU scans' num / den
            return (g2l * dr + g2r * dl) / (dl * dr)
        if dl > 0.0:
            return g2l / dl
        if dr > 0.0:
            return g2r / dr
        return 0.0
    h_left = 0.0  # a Hessian column per output (kernels.split._own_hessians_score)
    h_right = 0.0
    score_left = 0.0
    score_right = 0.0
    for j in range(k):
        c = h_col + j * h_stride
        a = _left(prefix, arena, row, miss_row, c, direction)
        r = nodes[node, NODE_TOTALS + c] - a
        h_left += a
        h_right += r
        g = _left(prefix, arena, row, miss_row, j, direction)
        g_right = nodes[node, NODE_TOTALS + j] - g
        score_left += _newton_score(g * g, h_scale * a, lam)
        score_right += _newton_score(g_right * g_right, h_scale * r, lam)
    if h_left * h_scale / k < min_hess or h_right * h_scale / k < min_hess:
        return -math.inf
    return score_left + score_right


@cuda.jit(cache=True)
def threshold_scores(arena, prefix, nodes, offsets, bin_feature, cat_slot, params, n_nodes, heaps, scores,
                     count_ok):
    """Thread per (node, direction, bin b): the split "value bins <= b go left, missing values go left when
    direction is 1" of an active node, for b a threshold of its feature (not the feature's last value bin nor
    its missing bin), the feature numeric (cat_slot[f] < 0: cuda_categorical scans the others) and in the
    node's mask.  scores = score(left) + score(right), -inf where the
    candidate is invalid; count_ok = 1 where both sides hold min_data_in_leaf rows.

    IN arena, prefix (from subtract_and_prefix), nodes, offsets: as subtract_and_prefix; bin_feature
    (total_bins,) int64: each bin's feature; params (N_PARAMS,) float64; heaps (heap_cells of the candidates,)
    float64: scratch.
    OUT scores (>= n_nodes * 2 * total_bins,) float64; count_ok (same,) uint8: index
    (node * 2 + direction) * total_bins + b."""
    total_bins = bin_feature.shape[0]
    width = arena.shape[1]
    count_col = int64(params[P_COUNT_COL])
    min_data = params[P_MIN_DATA]
    i = cuda.grid(1)
    while i < n_nodes * 2 * total_bins:
        b = i % total_bins
        direction = (i // total_bins) % 2
        node = i // (2 * total_bins)
        f = bin_feature[b]
        miss = offsets[f + 1] - 1
        score = -math.inf
        ok = 0
        if nodes[node, NODE_ACTIVE] != 0.0 and _masked(nodes, node, f, width) and b < miss - 1 and cat_slot[f] < 0:
            row = node * total_bins + b
            miss_row = int64(nodes[node, NODE_SLOT]) * total_bins + miss
            n_left = _left(prefix, arena, row, miss_row, count_col, direction)
            if n_left >= min_data and nodes[node, NODE_TOTALS + count_col] - n_left >= min_data:
                ok = 1
                score = _split_score(prefix, arena, row, miss_row, direction, nodes, node, params, heaps,
                                     i * int64(params[P_TOPK]))
        scores[i] = score
        count_ok[i] = ok
        i += cuda.gridsize(1)


@cuda.jit(cache=True)
def node_scores(nodes, params, n_nodes, heaps, out):
    """Thread per node: out[node] = _node_score of the node (level_gains' input).  heaps (heap_cells of the
    nodes,) float64: scratch."""
    node = cuda.grid(1)
    while node < n_nodes:
        out[node] = _node_score(nodes, node, params, heaps, node * int64(params[P_TOPK]))
        node += cuda.gridsize(1)


@cuda.jit(device=True, cache=True)
def _node_score(nodes, node, params, heaps, heap_first):
    """sum_j G_j^2 / (H_j + lambda) of a node's sums, over its top-k outputs with top-k sparse leaves
    (kernels.split.node_score), the heap at heaps[heap_first:heap_first + topk]."""
    k = int64(params[P_K])
    h_col = int64(params[P_H_COL])
    h_stride = int64(params[P_H_STRIDE])
    topk = int64(params[P_TOPK])
    score = 0.0
    size = 0
    for j in range(k):
        g = nodes[node, NODE_TOTALS + j]
        h = params[P_H_SCALE] * nodes[node, NODE_TOTALS + h_col + j * h_stride] + params[P_LAMBDA]
        value = g * g / h if h > 0 else 0.0
        if topk > 0:
            size = _heap_push(heaps, heap_first, size, topk, value)
        else:
            score += value
    return _heap_sum(heaps, heap_first, size) if topk > 0 else score


@cuda.jit(device=True, cache=True)
def _best_threshold(arena, base, f, offsets, scores, count_ok, score_base, count_col, total_bins):
    """(best score, its direction * total_bins + bin, splittable) of feature f of one node: the first best in
    scan order (missing right, then left where the missing bin has rows; thresholds ascending), bins without
    rows not scored (kernels.split.scan_feature)."""
    lo = offsets[f]
    miss = offsets[f + 1] - 1
    n_value_bins = miss - lo
    has_missing = arena[base + miss, count_col] > 0
    best = -math.inf
    where = -1
    splittable = 0
    for direction in range(2 if n_value_bins >= 2 else 0):
        if direction == 1 and not has_missing:
            break
        for t in range(n_value_bins - 1):
            b = lo + t
            if arena[base + b, count_col] == 0 and not (t == 0 and direction == 1):
                continue  # the previous threshold's partition
            index = score_base + direction * total_bins + b
            if count_ok[index] != 0:
                splittable = 1
            if scores[index] > best:
                best = scores[index]
                where = direction * total_bins + b
    return best, where, splittable


@cuda.jit(cache=True)
def choose_splits(arena, prefix, nodes, offsets, params, n_nodes, scores, count_ok, heaps, cat_slot, cat_gain,
                  cat_ok, cat_left, feature_best, feature_where, out):
    """A block per node (grid-stride): each feature's best threshold or set (threads over features), then the
    node's feature of best score plus its noise (where the node table has noise columns) among those whose gain
    passes min_gain_to_split, its left sums (threads over columns): one row of ``out`` (OUT_* columns; a set
    split's threshold bin is -1 and its categories follow the splittable flags, 1 for those going left).

    IN arena, prefix, nodes, offsets, params, scores, count_ok: as threshold_scores; heaps (heap_cells of the
    nodes,) float64: scratch (the node's score, _node_score); cat_slot (F,) int64: each feature's index among
    the categorical ones (-1: numeric); cat_gain, cat_ok, cat_left: cuda_categorical.categorical_scores' (any
    shape without categorical features).
    OUT feature_best (>= n_nodes, F) float64, feature_where (>= n_nodes, F) int64: scratch; out (>= n_nodes,
    OUT_LEFT_SUMS + C + F) float64."""
    chosen = cuda.shared.array(3, float64)  # gain over the node, feature, direction * total_bins + bin
    thread = cuda.threadIdx.x
    n_threads = cuda.blockDim.x
    width = arena.shape[1]
    n_features = offsets.shape[0] - 1
    total_bins = offsets[n_features]
    count_col = int64(params[P_COUNT_COL])
    splittable_col = OUT_LEFT_SUMS + width
    noise_col = NODE_TOTALS + width + n_features
    with_noise = nodes.shape[1] == noise_col + n_features
    for node in range(cuda.blockIdx.x, n_nodes, cuda.gridDim.x):
        base = int64(nodes[node, NODE_SLOT]) * total_bins
        active = nodes[node, NODE_ACTIVE] != 0.0
        for f in range(thread, n_features, n_threads):
            best, where, splittable = -math.inf, -1, 0
            if active and _masked(nodes, node, f, width):
                if cat_slot[f] >= 0:
                    best, splittable = cat_gain[node, cat_slot[f]], cat_ok[node, cat_slot[f]]
                else:
                    best, where, splittable = _best_threshold(arena, base, f, offsets, scores, count_ok,
                                                              node * 2 * total_bins, count_col, total_bins)
            feature_best[node, f] = best
            feature_where[node, f] = where
            out[node, splittable_col + f] = splittable
        cuda.syncthreads()
        if thread == 0:
            parent = _node_score(nodes, node, params, heaps, node * int64(params[P_TOPK]))
            best = -math.inf
            feature = -1
            for f in range(n_features):
                score = feature_best[node, f]
                bonus = nodes[node, noise_col + f] if with_noise else 0.0
                if score > -math.inf and score - parent > params[P_MIN_GAIN] and score + bonus > best:
                    best = score + bonus
                    feature = f
            chosen[1] = feature
            chosen[0] = -math.inf
            out[node, OUT_FEATURE] = feature
            out[node, OUT_BIN] = 0.0
            out[node, OUT_DEFAULT_LEFT] = 0.0
            out[node, OUT_HAS_MISSING] = 0.0
            if feature >= 0:
                chosen[0] = feature_best[node, feature] - parent
                miss = offsets[feature + 1] - 1
                out[node, OUT_HAS_MISSING] = 1.0 if arena[base + miss, count_col] > 0 else 0.0
                if cat_slot[feature] >= 0:
                    out[node, OUT_BIN] = -1.0
                else:
                    where = feature_where[node, feature]
                    chosen[2] = where
                    out[node, OUT_BIN] = where % total_bins - offsets[feature]
                    out[node, OUT_DEFAULT_LEFT] = where // total_bins
            out[node, OUT_GAIN] = chosen[0]
        cuda.syncthreads()
        feature = int64(chosen[1])
        if feature >= 0 and cat_slot[feature] >= 0:  # a set: its bins' sums in order (split.set_left_sums)
            slot = cat_slot[feature]
            set_col = splittable_col + n_features
            lo = base + offsets[feature]
            for c in range(thread, width, n_threads):
                total = 0.0
                for b in range(offsets[feature + 1] - offsets[feature]):
                    if cat_left[node, slot, b] != 0:
                        total += arena[lo + b, c]
                out[node, OUT_LEFT_SUMS + c] = total
            for b in range(thread, out.shape[1] - set_col, n_threads):
                out[node, set_col + b] = cat_left[node, slot, b]
        elif feature >= 0:
            where = int64(chosen[2])
            miss_row = base + offsets[feature + 1] - 1
            row = node * total_bins + where % total_bins
            for c in range(thread, width, n_threads):
                out[node, OUT_LEFT_SUMS + c] = _left(prefix, arena, row, miss_row, c, where // total_bins)
        cuda.syncthreads()


@cuda.jit(cache=True)
def level_gains(offsets, n_nodes, scores, parent_scores, out):
    """Thread per (direction, bin): out[direction, b] = the sum over the level's nodes of the candidate's gain
    over each node (score(left) + score(right) - score(node); 0 where the candidate is invalid in a node), in
    node order (kernels.split.add_split_gains, node after node).  A node without missing values scores the
    direction "missing goes left" as "right" (its missing bin is empty: the same sums).

    IN scores: as threshold_scores; parent_scores (>= n_nodes,) float64: from node_scores.  OUT out (2,
    total_bins) float64."""
    n_features = offsets.shape[0] - 1
    total_bins = offsets[n_features]
    i = cuda.grid(1)
    while i < 2 * total_bins:
        gain = 0.0
        for node in range(n_nodes):
            score = scores[node * 2 * total_bins + i]
            if score > -math.inf:
                gain += score - parent_scores[node]
        out[i // total_bins, i % total_bins] = gain
        i += cuda.gridsize(1)


@cuda.jit(cache=True)
def split_sums(arena, prefix, nodes, n_nodes, total_bins, threshold_row, miss, direction, out):
    """Thread per (node, column): out[node, c] = the left sums of the split at histogram row
    ``threshold_row`` (the feature's missing bin at row ``miss``; missing values left when direction is 1),
    from subtract_and_prefix's prefix of the same nodes.  OUT out (>= n_nodes, C) float64."""
    width = arena.shape[1]
    i = cuda.grid(1)
    while i < n_nodes * width:
        node = i // width
        c = i % width
        base = int64(nodes[node, NODE_SLOT]) * total_bins
        out[node, c] = _left(prefix, arena, node * total_bins + threshold_row, base + miss, c, direction)
        i += cuda.gridsize(1)
