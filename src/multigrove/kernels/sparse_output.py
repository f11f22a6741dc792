"""Kernels of sparse-output boosting (GBDT-Sparse, Si et al. 2017): gradients of sparse scores against
sparse labels, k-sparse leaf values from the rows' sparse gradients, adding k-sparse leaves to sparse
scores, and the exact split gains of eq. 20 (Alg. 1 run over histogram bins: ``sparse_split_gains``).

Every matrix is CSR with sorted column indices per row (``kernels.sparse.CSR``).  Each
operation that makes a CSR runs in two passes: ``*_sizes`` counts the entries of every row, the
caller allocates, ``*_fill`` writes them; no kernel ever touches an array of n_rows x n_labels.

The losses (``loss`` code, per cell, y the label and z the score):

* 0, squared error ``(z - y)^2 / 2``: gradient ``z - y``;
* 1, the shifted squared hinge of the paper's eq. 9, halved: ``max(1 - z, 0)^2 / 2`` for y = 1 and
  ``max(z, 0)^2 / 2`` for y = 0: gradient ``min(z - 1, 0)`` and ``max(z, 0)``.

Both have a zero gradient where z = y (the paper's assumption 8), so a cell that is neither a label
nor a score has none, and both have a second derivative of at most 1.
"""
from typing import NamedTuple

import numpy as np
from numba import njit, prange

from .sparse import _insert
from .split import _newton_score, topk_sum

LOSS_SQUARED = 0
LOSS_HINGE = 1


@njit(cache=True, inline="always", error_model="numpy")
def _gradient(loss, y, z):
    if loss == LOSS_SQUARED:
        return z - y
    if y > 0.5:
        return min(z - 1.0, 0.0)
    return max(z, 0.0)


@njit(cache=True, nogil=True, error_model="numpy")
def _merge_gradient_row(loss, labels, scores, i, out_indices, out_data, pos, write):
    """Walk the union of row i's label and score columns; count (and, with ``write``, store from
    ``pos``) the non-zero gradients.  Returns the count."""
    y_indices, y_data, z_indices, z_data = labels.indices, labels.data, scores.indices, scores.data
    a, yhi = labels.indptr[i], labels.indptr[i + 1]
    b, zhi = scores.indptr[i], scores.indptr[i + 1]
    count = 0
    while a < yhi or b < zhi:
        if b >= zhi or (a < yhi and y_indices[a] < z_indices[b]):
            col, y, z = y_indices[a], y_data[a], 0.0
            a += 1
        elif a >= yhi or z_indices[b] < y_indices[a]:
            col, y, z = z_indices[b], 0.0, z_data[b]
            b += 1
        else:
            col, y, z = y_indices[a], y_data[a], z_data[b]
            a += 1
            b += 1
        g = _gradient(loss, y, z)
        if g != 0.0:
            if write:
                out_indices[pos + count] = col
                out_data[pos + count] = g
            count += 1
    return count


@njit(parallel=True, cache=True, nogil=True, error_model="numpy")
def sparse_gradient_sizes(loss, labels, scores, out_sizes):
    """IN labels Y and scores Z (CSR, same shape).  OUT out_sizes (n,) int64: the non-zero gradients of
    each row."""
    no_i = np.empty(0, labels.indices.dtype)
    no_d = np.empty(0, np.float32)
    for i in prange(labels.indptr.shape[0] - 1):
        out_sizes[i] = _merge_gradient_row(loss, labels, scores, i, no_i, no_d, 0, False)


@njit(parallel=True, cache=True, nogil=True, error_model="numpy")
def sparse_gradient_fill(loss, labels, scores, out_indptr, out_indices, out_data):
    """IN labels, scores as sparse_gradient_sizes; out_indptr (n + 1,) from its sizes.  OUT out_indices,
    out_data: the gradient matrix G (CSR, sorted, no zeros)."""
    for i in prange(labels.indptr.shape[0] - 1):
        _merge_gradient_row(loss, labels, scores, i, out_indices, out_data, out_indptr[i], True)


@njit(cache=True, inline="always", error_model="numpy")
def _accumulate_row(r, g_indptr, g_indices, g_data, acc, stamp, touched, run, n_touched):
    """acc += row r of G (its three arrays: the callers hold them as locals) on its labels; a label first
    touched in this ``run`` is reset and listed in ``touched`` (acc is valid only where stamp == run).
    Returns the new n_touched."""
    for q in range(g_indptr[r], g_indptr[r + 1]):
        s = g_indices[q]
        if stamp[s] != run:
            stamp[s] = run
            acc[s] = 0.0
            touched[n_touched] = s
            n_touched += 1
        acc[s] += g_data[q]
    return n_touched


class LeafParams(NamedTuple):
    """The scalars of k-sparse leaf values."""
    k: int
    lambda_l2: float
    learning_rate: float


@njit(cache=True, nogil=True, error_model="numpy")
def _leaf_values(lo, hi, rows, grad, row_hess, leaf, acc, stamp, touched, run, out_cols, out_vals):
    """One leaf of sparse_leaf_values; acc, stamp, touched (n_labels,) scratch, ``run`` this leaf's stamp."""
    g_indptr, g_indices, g_data = grad.indptr, grad.indices, grad.data
    k = leaf.k
    n_touched = 0
    hess = 0.0
    for p in range(lo, hi):
        r = rows[p]
        hess += row_hess[r]
        n_touched = _accumulate_row(r, g_indptr, g_indices, g_data, acc, stamp, touched, run, n_touched)
    best_i = np.empty(k, np.int64)
    best_v = np.empty(k, np.float64)
    filled = 0
    for i in range(n_touched):
        s = touched[i]
        if acc[s] != 0.0:
            filled = _insert(best_i, best_v, filled, k, s, abs(acc[s]))
    chosen = np.sort(best_i[:filled])
    sums = np.empty(filled, np.float64)
    for j in range(filled):
        sums[j] = acc[chosen[j]]
    den = hess + leaf.lambda_l2
    scale = -leaf.learning_rate / den if den > 0 else 0.0
    _pad_leaf(chosen, sums, scale, filled, k, out_cols, out_vals)


@njit(parallel=True, cache=True, nogil=True, error_model="numpy")
def sparse_leaf_values(rows, start, end, grad, row_hess, leaf, n_labels, n_blocks, out_cols, out_vals):
    """k-sparse leaf values (GBDT-Sparse eq. 19, Hessian-weighted).

    IN rows (m,) int32: the rows of every leaf, leaf l's in rows[start[l]:end[l]]; grad (CSR) the
    gradients G; row_hess (n,) float32, each row's Hessian bound (its weight); leaf (LeafParams): k,
    lambda_l2, learning_rate; n_labels (G's columns); n_blocks: parallel blocks of leaves (each holds
    O(n_labels) scratch).
    OUT out_cols (n_leaves, k) int32 ascending: the k columns with the largest |p_q| (p = the leaf's
    gradient sum, summed in row order; ties: the smaller column), padded with the smallest unused columns
    (value 0) when fewer are non-zero; out_vals (n_leaves, k) float64: -learning_rate * p_q / (H +
    lambda_l2), H the leaf's Hessian sum.  A leaf costs O(m + t log k) for its m non-zero gradients on
    t distinct labels, never O(n_labels).
    """
    n_leaves = start.shape[0]
    for blk in prange(n_blocks):
        acc = np.empty(n_labels)
        stamp = np.full(n_labels, -1, np.int64)
        touched = np.empty(n_labels, np.int64)
        for node in range(blk * n_leaves // n_blocks, (blk + 1) * n_leaves // n_blocks):
            _leaf_values(start[node], end[node], rows, grad, row_hess, leaf, acc, stamp, touched, node,
                         out_cols[node], out_vals[node])


@njit(cache=True, nogil=True, error_model="numpy")
def _pad_leaf(chosen, sums, scale, filled, k, out_cols, out_vals):
    """Write the leaf's chosen columns (values sums * scale) and the k - filled smallest unused columns
    (value 0), merged in ascending column order."""
    n_pad = k - filled
    pads = np.empty(n_pad, np.int64)
    col, j, got = 0, 0, 0
    while got < n_pad:
        while j < filled and chosen[j] < col:
            j += 1
        if not (j < filled and chosen[j] == col):
            pads[got] = col
            got += 1
        col += 1
    a, b = 0, 0
    for slot in range(k):
        if b >= n_pad or (a < filled and chosen[a] < pads[b]):
            out_cols[slot] = chosen[a]
            out_vals[slot] = sums[a] * scale
            a += 1
        else:
            out_cols[slot] = pads[b]
            out_vals[slot] = 0.0
            b += 1


@njit(cache=True, nogil=True, error_model="numpy")
def _merge_leaf_row(scores, i, cols, vals, out_indices, out_data, pos, write):
    """The union of score row i and one leaf (zero leaf values skipped); count (and store) it."""
    z_indices, z_data = scores.indices, scores.data
    a, hi = scores.indptr[i], scores.indptr[i + 1]
    b, count = 0, 0
    width = cols.shape[0]
    while b < width and vals[b] == 0.0:
        b += 1
    while a < hi or b < width:
        if b >= width or (a < hi and z_indices[a] < cols[b]):
            col, v = z_indices[a], z_data[a]
            a += 1
        elif a >= hi or cols[b] < z_indices[a]:
            col, v = cols[b], vals[b]
            b += 1
        else:
            col, v = cols[b], z_data[a] + vals[b]
            a += 1
            b += 1
        if write:
            out_indices[pos + count] = col
            out_data[pos + count] = v
        count += 1
        while b < width and vals[b] == 0.0:
            b += 1
    return count


@njit(parallel=True, cache=True, nogil=True, error_model="numpy")
def add_leaves_sizes(scores, leaf_of, leaf_cols, leaf_vals, out_sizes):
    """IN scores Z (CSR); leaf_of (n,) int32 the leaf of every row (-1: not in the tree); a tree's k-sparse
    leaves (leaf_cols ascending per leaf, leaf_vals).  OUT out_sizes (n,) int64: entries of each row of
    Z + its leaf's values."""
    no_i = np.empty(0, scores.indices.dtype)
    no_d = np.empty(0, scores.data.dtype)
    for i in prange(scores.indptr.shape[0] - 1):
        leaf = leaf_of[i]
        if leaf < 0:
            out_sizes[i] = scores.indptr[i + 1] - scores.indptr[i]
        else:
            out_sizes[i] = _merge_leaf_row(scores, i, leaf_cols[leaf], leaf_vals[leaf], no_i, no_d, 0, False)


@njit(parallel=True, cache=True, nogil=True, error_model="numpy")
def add_leaves_fill(scores, leaf_of, leaf_cols, leaf_vals, out_indptr, out_indices, out_data):
    """IN as add_leaves_sizes; out_indptr from its sizes.  OUT out_indices, out_data: Z + the leaves (CSR)."""
    no_cols = np.empty(0, leaf_cols.dtype)
    no_vals = np.empty(0, leaf_vals.dtype)
    for i in prange(scores.indptr.shape[0] - 1):
        leaf = leaf_of[i]
        if leaf < 0:
            _merge_leaf_row(scores, i, no_cols, no_vals, out_indices, out_data, out_indptr[i], True)
        else:
            _merge_leaf_row(scores, i, leaf_cols[leaf], leaf_vals[leaf], out_indices, out_data, out_indptr[i], True)


# ------------------------------------------------------------------ exact split gains (eq. 20, Alg. 1 on bins)
@njit(cache=True, inline="always", error_model="numpy")
def _put_row_bin(g, pos, slots, out_pos, write):
    if write:
        out_pos[slots[g]] = pos
    slots[g] += 1


@njit(cache=True, nogil=True, error_model="numpy")
def _row_bins(store, r, pos, bin_feature, slots, out_pos, write):
    """Visit the non-default bins of store row r: count them (write False) or store ``pos`` under each."""
    for j in range(store.dense.shape[1]):
        g = store.dense_base[j] + store.dense[r, j]
        f = bin_feature[g]
        if g != store.offsets[f] + store.default_bin[f]:
            _put_row_bin(g, pos, slots, out_pos, write)
    for j in range(store.bundle.shape[1]):
        code = store.bundle[r, j]
        if code:
            g = store.code_map[store.code_offset[j] + code]
            f = bin_feature[g]
            if g != store.offsets[f] + store.default_bin[f]:
                _put_row_bin(g, pos, slots, out_pos, write)
    if store.sparse_indptr.shape[0]:
        for q in range(store.sparse_indptr[r], store.sparse_indptr[r + 1]):
            _put_row_bin(store.sparse_bins[q], pos, slots, out_pos, write)


@njit(cache=True, nogil=True, error_model="numpy")
def node_bin_counts(store, store_rows, bin_feature, out_counts):
    """IN store_rows (m,): a node's rows of the store; bin_feature (total_bins,) int32: each histogram row's
    feature.  OUT out_counts (total_bins,) int64, zeroed by the caller: the node's rows in each bin that is
    not its feature's default bin (the default bins stay 0: their rows are the node's other rows)."""
    no_pos = np.empty(0, np.int32)
    for p in range(store_rows.shape[0]):
        _row_bins(store, store_rows[p], p, bin_feature, out_counts, no_pos, False)


@njit(cache=True, nogil=True, error_model="numpy")
def node_bin_rows(store, store_rows, bin_feature, bin_ptr, out_pos):
    """IN as node_bin_counts; bin_ptr (total_bins + 1,) int64, the prefix sums of its counts.  OUT out_pos
    (bin_ptr[-1],) int32: the positions in store_rows of each bin's rows, bin b's at bin_ptr[b]:bin_ptr[b+1]
    in ascending order."""
    cursor = bin_ptr[:-1].copy()
    for p in range(store_rows.shape[0]):
        _row_bins(store, store_rows[p], p, bin_feature, cursor, out_pos, True)


@njit(cache=True, nogil=True, error_model="numpy")
def node_label_sums(grad_rows, grad, out_sums):
    """OUT out_sums (n_labels,) float64, zeroed by the caller: p = the sum of the rows' sparse gradients."""
    g_indptr, g_indices, g_data = grad.indptr, grad.indices, grad.data
    for r in grad_rows:
        for q in range(g_indptr[r], g_indptr[r + 1]):
            out_sums[g_indices[q]] += g_data[q]


class SideSums(NamedTuple):
    """The accumulated side of a threshold scan (scratch of one thread): label sums ``acc`` valid where
    ``stamp == run``, the labels touched in ``touched[:n_touched]``."""
    acc: np.ndarray      # (n_labels,) float64
    stamp: np.ndarray    # (n_labels,) int64
    touched: np.ndarray  # (n_labels,) int32
    squares: np.ndarray  # (n_labels + k,) float64: the candidates of a top-k sum
    heap: np.ndarray     # (k,) float64


@njit(cache=True, nogil=True, error_model="numpy")
def _add_bin(b, node, grad, side, run, n_touched):
    """Add the gradients of bin b's rows of the node to the accumulated side; returns the new n_touched."""
    bin_pos, grad_rows = node.bin_pos, node.grad_rows
    g_indptr, g_indices, g_data = grad.indptr, grad.indices, grad.data
    acc, stamp, touched = side.acc, side.stamp, side.touched
    for i in range(node.bin_ptr[b], node.bin_ptr[b + 1]):
        n_touched = _accumulate_row(grad_rows[bin_pos[i]], g_indptr, g_indices, g_data, acc, stamp, touched, run,
                                    n_touched)
    return n_touched


@njit(cache=True, nogil=True, error_model="numpy")
def _pair_score(side, n_touched, run, node_sums, parent_order, hess_acc, hess_rest, p):
    """score(accumulated side) + score(the rest): each side's top-k of p_q^2 / (H + lambda) (eq. 20).
    The rest's sums are node_sums - acc on touched labels and node_sums elsewhere: its largest untouched
    ones are the first untouched labels of parent_order (labels by |node_sums| descending)."""
    k = p.topk
    sq = side.squares
    for i in range(n_touched):
        a = side.acc[side.touched[i]]
        sq[i] = a * a
    s_acc = topk_sum(sq, n_touched, k, side.heap)
    for i in range(n_touched):
        s = side.touched[i]
        d = node_sums[s] - side.acc[s]
        sq[i] = d * d
    m = n_touched
    j = 0
    while m < n_touched + k and j < parent_order.shape[0]:
        s = parent_order[j]
        if side.stamp[s] != run:
            sq[m] = node_sums[s] * node_sums[s]
            m += 1
        j += 1
    s_rest = topk_sum(sq, m, k, side.heap)
    return _newton_score(s_acc, hess_acc, p.lambda_l2) + _newton_score(s_rest, hess_rest, p.lambda_l2)


class NodeRows(NamedTuple):
    """One node's rows for exact sparse split gains (see sparse_split_gains)."""
    bin_ptr: np.ndarray       # (total_bins + 1,) int64
    bin_pos: np.ndarray       # (nnz,) int32: positions in grad_rows, by bin
    grad_rows: np.ndarray     # (m,) int32: the node's rows of G and row_hess
    bin_hess: np.ndarray      # (total_bins,) float64: Hessian sum of each bin (default bins derived)
    bin_count: np.ndarray     # (total_bins,) float64: rows of each bin (default bins derived)
    node_sums: np.ndarray     # (n_labels,) float64: the node's gradient sums p
    parent_order: np.ndarray  # (nnz(p),) int32: labels with p_q != 0 by |p_q| descending
    hess: float
    count: float


class ThresholdScan(NamedTuple):
    """One pass of _scan over a feature's thresholds t = first, first + step, ..., last."""
    lo: int            # the feature's first histogram row
    first: int
    last: int
    step: int          # 1: the left side accumulates (value bins <= t); -1: the right side (bins > t)
    with_missing: int  # the missing bin's histogram row, added to the accumulated side first; -1: not
    direction: int     # the out_gain row written: 1 missing values go left, 0 right
    copy_both: bool    # write the other direction's row too (the node has no missing values)


@njit(cache=True, nogil=True, error_model="numpy")
def _scan(scan, node, grad, p, parent_score, side, run, out_gain):
    """The thresholds of ``scan`` (ThresholdScan), accumulating the side that does not hold the feature's
    default bin; writes out_gain[direction, lo + t] (and [1 - direction] with copy_both).
    Returns whether a threshold left min_data_in_leaf rows on both sides."""
    lo, first, last, step, with_missing = scan.lo, scan.first, scan.last, scan.step, scan.with_missing
    n_touched = 0
    hess_acc = 0.0
    count_acc = 0.0
    count_ok = False
    if with_missing >= 0:
        n_touched = _add_bin(with_missing, node, grad, side, run, n_touched)
        hess_acc += node.bin_hess[with_missing]
        count_acc += node.bin_count[with_missing]
    gain = -np.inf
    t = first
    while (step > 0 and t <= last) or (step < 0 and t >= last):
        b = lo + t if step > 0 else lo + t + 1
        n_touched = _add_bin(b, node, grad, side, run, n_touched)
        hess_acc += node.bin_hess[b]
        count_acc += node.bin_count[b]
        if t == first or node.bin_count[b] > 0:  # an empty bin repeats the previous partition and gain
            gain = -np.inf
            count_rest = node.count - count_acc
            if count_acc >= p.min_data_in_leaf and count_rest >= p.min_data_in_leaf:
                count_ok = True
                hess_rest = node.hess - hess_acc
                if hess_acc >= p.min_sum_hessian and hess_rest >= p.min_sum_hessian:
                    gain = _pair_score(side, n_touched, run, node.node_sums, node.parent_order, hess_acc, hess_rest,
                                       p) - parent_score
        out_gain[scan.direction, lo + t] = gain
        if scan.copy_both:
            out_gain[1 - scan.direction, lo + t] = gain
        t += step
    return count_ok


@njit(cache=True, nogil=True, error_model="numpy")
def _feature_gains(f, node, grad, store, p, parent_score, side, run, out_gain):
    """Every threshold of feature f, both missing directions (eq. 20 gains); returns (splittable, run).

    The scans accumulate the bins on one side of the feature's default bin b0 (for sparse X the zero
    bin, which holds most rows): thresholds below b0 from the left, the others from the right, so the
    default bin's rows are never visited.  With missing values in the node and b0 a value bin, each
    scan runs twice, the missing bin on the accumulated side or not."""
    lo = store.offsets[f]
    n_value = store.missing_bin[f]
    miss = lo + n_value
    b0 = store.default_bin[f]
    for b in range(lo, miss + 1):
        out_gain[0, b] = -np.inf
        out_gain[1, b] = -np.inf
    if n_value < 2:
        return False, run
    has_missing = node.bin_count[miss] > 0
    two_ways = has_missing and b0 != n_value  # the missing bin may join the accumulated side
    ok = False
    last_up = n_value - 2 if b0 == n_value else min(b0 - 1, n_value - 2)
    if last_up >= 0:  # left side accumulated: missing right (0) without the missing bin, left (1) with it
        run += 1
        ok |= _scan(ThresholdScan(lo, 0, last_up, 1, -1, 0, not has_missing), node, grad, p, parent_score, side, run,
                    out_gain)
        if two_ways:
            run += 1
            ok |= _scan(ThresholdScan(lo, 0, last_up, 1, miss, 1, False), node, grad, p, parent_score, side, run,
                        out_gain)
    if b0 == n_value and not has_missing:
        return ok, run  # the ascending scan covered every threshold
    last_down = 0 if b0 == n_value else b0
    if last_down <= n_value - 2:  # right side accumulated: missing left (1) without it, right (0) with it
        run += 1
        ok |= _scan(ThresholdScan(lo, n_value - 2, last_down, -1, -1, 1, not has_missing), node, grad, p,
                    parent_score, side, run, out_gain)
        if two_ways:
            run += 1
            ok |= _scan(ThresholdScan(lo, n_value - 2, last_down, -1, miss, 0, False), node, grad, p, parent_score,
                        side, run, out_gain)
    return ok, run


@njit(parallel=True, cache=True, nogil=True, error_model="numpy")
def sparse_split_gains(node, grad, store, feature_mask, p, n_blocks, out_gain, out_splittable):
    """Exact GBDT-Sparse split gains (eq. 20; Alg. 1 on histogram bins) of every candidate of one node.

    IN  node: NodeRows; grad (CSR) the sparse gradients G; store: the binned store (its offsets,
        missing_bin and default_bin); feature_mask (F,) bool; p: ScanParams
        (topk = k, lambda_l2, min_data_in_leaf, min_sum_hessian); n_blocks: parallel feature blocks (each
        holds O(n_labels) scratch).
    OUT out_gain (2, total_bins) float64: [missing goes left, threshold bin t] = score(left) +
        score(right) - score(node), a side's score the sum of its k largest p_q^2 / (H + lambda_l2);
        -inf where the threshold leaves fewer than min_data_in_leaf rows or min_sum_hessian on a side,
        on the last value bin and the missing bin, and for masked features.
    OUT out_splittable (F,) bool: a threshold left min_data_in_leaf rows on both sides.

    The cost is that of the non-zero gradients of the node's rows outside each feature's default
    bin, plus O(touched labels) per threshold for the top-k sums; no array has n_labels x bins entries.
    """
    n_labels = node.node_sums.shape[0]
    k = p.topk
    offsets = store.offsets
    n_features = offsets.shape[0] - 1
    sq = np.empty(k + 1)
    m = min(k, node.parent_order.shape[0])
    for j in range(m):
        s = node.parent_order[j]
        sq[j] = node.node_sums[s] * node.node_sums[s]
    parent_score = _newton_score(sq[:m].sum(), node.hess, p.lambda_l2)
    for blk in prange(n_blocks):
        side = SideSums(np.empty(n_labels), np.full(n_labels, -1, np.int64), np.empty(n_labels, np.int32),
                        np.empty(n_labels + k), np.empty(k))
        run = 0
        for f in range(blk * n_features // n_blocks, (blk + 1) * n_features // n_blocks):
            if feature_mask[f]:
                ok, run = _feature_gains(f, node, grad, store, p, parent_score, side, run, out_gain)
                out_splittable[f] = ok
            else:
                for b in range(offsets[f], offsets[f + 1]):
                    out_gain[0, b] = -np.inf
                    out_gain[1, b] = -np.inf
                out_splittable[f] = False
