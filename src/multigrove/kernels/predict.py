"""Forest traversal.

A forest is flattened into structure-of-arrays: node arrays for all trees, concatenated
(``tree_node_offset`` gives each tree's slice, child ids are local to the tree, a negative
child ``c`` is leaf ``~c``), and leaf outputs in CSR form (``leaf_ptr``, ``leaf_cols``,
``leaf_vals``, rows indexed by ``tree_leaf_offset[t] + leaf``).  The CSR form serves dense
vector leaves (all columns), one-output trees (one column) and k-sparse leaves alike, and
prediction adds only the stored entries.  The arrays travel together as one ``Forest``; a forest
of symmetric trees also has its ``ObliviousLevels``.
"""
import math
from typing import NamedTuple

import numpy as np
from numba import njit, prange

from ._variants import variant
from .partition import packed_feature_bin
from .store import STORE_ANY, STORE_DENSE

#: the stores the walk of a binned store compiles for (kernels.store.STORE_ANY; STORE_DENSE in the _dense variant)
STORE_KIND = STORE_ANY


class Forest(NamedTuple):
    """The trees of a model flattened for the kernels (built by ``boosting.tree.stack_trees``)."""
    node_feature: np.ndarray       # (n_nodes,) int32: the feature each internal node splits on
    node_threshold: np.ndarray     # (n_nodes,) float64: raw values <= threshold go left
    node_bin: np.ndarray           # (n_nodes,) int32: the same threshold as a bin of the training store
    node_default_left: np.ndarray  # (n_nodes,) bool: where a missing value goes
    node_left: np.ndarray          # (n_nodes,) int32: child node local to the tree, or ~leaf
    node_right: np.ndarray         # (n_nodes,) int32
    tree_node_offset: np.ndarray   # (T + 1,) int64: tree t's nodes
    tree_leaf_offset: np.ndarray   # (T + 1,) int64: tree t's leaves (rows of the leaf CSR)
    leaf_ptr: np.ndarray           # (n_leaves + 1,) int64: leaf CSR row pointers
    leaf_cols: np.ndarray          # (n_entries,) int32: the outputs a leaf sets
    leaf_vals: np.ndarray          # (n_entries,) float64: their values
    node_cat: np.ndarray           # (n_nodes,) int32: a set split's set (boosting.tree), -1 for a numeric split
    cat_offsets: np.ndarray        # (n_sets + 1,) int64
    cat_codes: np.ndarray          # (n_set_entries,) float64: the category codes a set sends left
    cat_bins: np.ndarray           # (n_set_entries,) int32: the same categories' bins of the training data


class ObliviousLevels(NamedTuple):
    """A forest of symmetric trees by levels (built by ``boosting.tree.stack_oblivious``; see
    predict_oblivious)."""
    level_feature: np.ndarray       # (T, max_depth) int32
    level_threshold: np.ndarray     # (T, max_depth) float64
    level_default_left: np.ndarray  # (T, max_depth) bool
    tree_depth: np.ndarray          # (T,) int64
    index_offset: np.ndarray        # (T + 1,) int64: tree t's slice of leaf_of_index
    leaf_of_index: np.ndarray       # (sum of 2**depth,) int32: the leaf of each index


#: sparse rows are predicted at most this many to a parallel task; a task scatters its rows, one at a time,
#: into a dense row of its own (zeroed once per task), so that a node reads a feature with one load instead
#: of a search of the row's entries (issue 18's count set, 100,000 rows x 100 trees: 0.24 s against 0.95)
SPARSE_TASK_ROWS = 4096
#: and in at least this many tasks where there are as many rows, so that every thread has work
SPARSE_MIN_TASKS = 16


@njit(cache=True, inline="always", error_model="numpy")
def _n_tasks(n_rows, dense):
    """Parallel tasks of a raw predict kernel: a row each for dense X, rows split evenly for CSR."""
    if dense:
        return n_rows
    return max(min(n_rows, SPARSE_MIN_TASKS), (n_rows + SPARSE_TASK_ROWS - 1) // SPARSE_TASK_ROWS)


@njit(cache=True, inline="always", error_model="numpy")
def _task_rows(task, n_tasks, n_rows):
    """The CSR rows of one of n_tasks tasks."""
    return range(task * n_rows // n_tasks, (task + 1) * n_rows // n_tasks)


@njit(cache=True, inline="always", error_model="numpy")
def _scatter_row(indptr, indices, data, i, row):
    """row (1, F), all zeros: set CSR row i's stored values (an absent entry is the value 0)."""
    for p in range(indptr[i], indptr[i + 1]):
        row[0, indices[p]] = data[p]


@njit(cache=True, inline="always", error_model="numpy")
def _clear_row(indptr, indices, i, row):
    """Undo _scatter_row: row (1, F) all zeros again, in the row's entries' time."""
    for p in range(indptr[i], indptr[i + 1]):
        row[0, indices[p]] = 0.0


@njit(cache=True, inline="always", error_model="numpy")
def goes_left(x, g, forest):
    """Whether raw value x goes left at node g: a numeric split's x <= threshold (missing: default_left), a
    set split's x among its category codes (missing: right)."""
    j = forest.node_cat[g]
    if j >= 0:
        if np.isnan(x):
            return False
        for p in range(forest.cat_offsets[j], forest.cat_offsets[j + 1]):
            if forest.cat_codes[p] == x:
                return True
        return False
    if np.isnan(x):
        return forest.node_default_left[g]
    return x <= forest.node_threshold[g]


@njit(cache=True, inline="always", error_model="numpy")
def _leaf_raw(X, i, t, forest):
    """The leaf row i of dense X (n, F) reaches in tree t."""
    base = forest.tree_node_offset[t]
    if forest.tree_node_offset[t + 1] == base:
        return 0
    node = 0
    while True:
        g = base + node
        nxt = forest.node_left[g] if goes_left(X[i, forest.node_feature[g]], g, forest) else forest.node_right[g]
        if nxt < 0:
            return ~nxt
        node = nxt


#: rows of a binned store per task of predict_store and leaf_index_store: a task walks its rows down one tree
#: after the other, so that a tree's nodes stay in cache
STORE_BLOCK = 64


@njit(cache=True, nogil=True, error_model="numpy")
def _store_leaves(store, rows, i0, i1, forest, t, out):
    """OUT out (i1 - i0,): the leaf that row rows[i] of a binned store reaches in tree t, for i in [i0, i1).

    The arrays are read as locals: reading them through the store (18 arrays) or the forest at every node
    updates reference counts at each access (a 400-row prediction took 640 us, now 19; 1,920 rows of
    Delicious's CSR store on one thread 24 ms, now 3.7)."""
    node_offset, node_feature, node_bin = forest.tree_node_offset, forest.node_feature, forest.node_bin
    node_default_left, node_left, node_right = forest.node_default_left, forest.node_left, forest.node_right
    node_cat, cat_offsets, cat_bins = forest.node_cat, forest.cat_offsets, forest.cat_bins
    dense, kind, slot, missing = store.dense, store.feature_kind, store.feature_slot, store.missing_bin
    offsets, code_map, code_offset, bundle_cols = store.offsets, store.code_map, store.code_offset, store.bundle_cols
    default_bin, sparse_indptr, sparse_bins = store.default_bin, store.sparse_indptr, store.sparse_bins
    base = node_offset[t]
    for i in range(i0, i1):
        if node_offset[t + 1] == base:  # a tree of one leaf
            out[i - i0] = 0
            continue
        r = rows[i]
        node = 0
        while True:
            g = base + node
            f = node_feature[g]
            if STORE_KIND == STORE_DENSE:
                b = np.int64(dense[r, slot[f]])
            else:
                b = packed_feature_bin(kind[f], slot[f], dense, offsets, code_map, code_offset, bundle_cols,
                                       default_bin, sparse_indptr, sparse_bins, r, f)
            j = node_cat[g]
            if j >= 0:  # a set split (see goes_left): its categories' bins
                left = False
                for p in range(cat_offsets[j], cat_offsets[j + 1]):
                    left |= cat_bins[p] == b
            elif b == missing[f]:
                left = node_default_left[g]
            else:
                left = b <= node_bin[g]
            nxt = node_left[g] if left else node_right[g]
            if nxt < 0:
                out[i - i0] = ~nxt
                break
            node = nxt


@njit(cache=True, inline="always", error_model="numpy")
def _add_leaves(X, r, i, forest, out):
    """out[i] += the leaf values row r of dense X reaches in every tree."""
    # the leaf arrays as locals: read through the Forest in the loop, predict took 2-4 % longer (200k rows
    # x 100 trees, three interleaved pairs)
    leaf_offset, leaf_ptr, leaf_cols, leaf_vals = forest.tree_leaf_offset, forest.leaf_ptr, forest.leaf_cols, \
        forest.leaf_vals
    for t in range(forest.tree_node_offset.shape[0] - 1):
        row = leaf_offset[t] + _leaf_raw(X, r, t, forest)
        for p in range(leaf_ptr[row], leaf_ptr[row + 1]):
            out[i, leaf_cols[p]] += leaf_vals[p]


@njit(parallel=True, cache=True, nogil=True, error_model="numpy")
def predict_raw(X, indptr, indices, data, forest, out):
    """OUT out (n, d) float64: adds every tree's leaf output for each row of raw features: dense X
    (n, F) with an empty indptr, or the CSR matrix (indptr, indices, data) with X of shape (0, F).
    IN forest: a Forest."""
    dense = indptr.shape[0] == 0
    n_rows = X.shape[0] if dense else indptr.shape[0] - 1
    n_tasks = _n_tasks(n_rows, dense)
    for task in prange(n_tasks):
        if dense:
            _add_leaves(X, task, task, forest, out)
        else:
            row = np.zeros((1, X.shape[1]))
            for i in _task_rows(task, n_tasks, n_rows):
                _scatter_row(indptr, indices, data, i, row)
                _add_leaves(row, 0, i, forest, out)
                _clear_row(indptr, indices, i, row)


#: rows per block of predict_oblivious: a block's leaf indices stay in L1 while every tree is applied
OBLIVIOUS_BLOCK = 64


@njit(parallel=True, cache=True, nogil=True, error_model="numpy")
def predict_oblivious(X, indptr, indices, data, levels, forest, out):
    """OUT out (n, d) float64: as predict_raw for a forest of symmetric trees, given by their
    ObliviousLevels (the Forest gives the leaf values): tree t compares feature level_feature[t, l]
    with level_threshold[t, l] (missing: level_default_left[t, l]) at each level l < tree_depth[t]; a
    right turn at level l sets bit l of the row's index, and the row's leaf is
    leaf_of_index[index_offset[t] + index].  No comparison waits on the previous one's result, so a
    block of OBLIVIOUS_BLOCK rows of dense X goes through each tree level by level: the inner loops over
    rows have no branches to mispredict and the tree's levels stay in registers.  CSR rows go one at a
    time, each scattered into a dense row (see SPARSE_TASK_ROWS)."""
    dense = indptr.shape[0] == 0
    n_rows = X.shape[0] if dense else indptr.shape[0] - 1
    n_tasks = (n_rows + OBLIVIOUS_BLOCK - 1) // OBLIVIOUS_BLOCK if dense else _n_tasks(n_rows, dense)
    for task in prange(n_tasks):
        if dense:
            lo = task * OBLIVIOUS_BLOCK
            index = np.empty(min(lo + OBLIVIOUS_BLOCK, n_rows) - lo, np.int64)
            _oblivious_block(X, lo, lo, levels, forest, index, out)
        else:
            row = np.zeros((1, X.shape[1]))
            index = np.empty(1, np.int64)
            for i in _task_rows(task, n_tasks, n_rows):
                _scatter_row(indptr, indices, data, i, row)
                _oblivious_block(row, 0, i, levels, forest, index, out)
                _clear_row(indptr, indices, i, row)


@njit(cache=True, inline="always", error_model="numpy")
def _oblivious_block(X, lo, out_lo, levels, forest, index, out):
    """out[out_lo + j] += the leaf values row lo + j of dense X reaches in every symmetric tree, for the
    block's index.shape[0] rows (index: their scratch)."""
    level_feature, level_threshold = levels.level_feature, levels.level_threshold
    level_default_left, tree_depth = levels.level_default_left, levels.tree_depth
    index_offset, leaf_of_index = levels.index_offset, levels.leaf_of_index
    leaf_offset, leaf_ptr, leaf_cols, leaf_vals = forest.tree_leaf_offset, forest.leaf_ptr, forest.leaf_cols, \
        forest.leaf_vals
    size = index.shape[0]
    for t in range(tree_depth.shape[0]):
        index[:] = 0
        for level in range(tree_depth[t]):
            f = level_feature[t, level]
            thr = level_threshold[t, level]
            missing_right = not level_default_left[t, level]
            for j in range(size):  # a plain strided read: the loop the compiler can unroll
                x = X[lo + j, f]
                right = missing_right if np.isnan(x) else x > thr
                index[j] |= np.int64(right) << level
        base = index_offset[t]
        first_leaf = leaf_offset[t]
        for j in range(size):
            row = first_leaf + leaf_of_index[base + index[j]]
            for p in range(leaf_ptr[row], leaf_ptr[row + 1]):
                out[out_lo + j, leaf_cols[p]] += leaf_vals[p]


@njit(parallel=True, cache=True, nogil=True, error_model="numpy")
def predict_store(store, rows, forest, out):
    """OUT out (n, d) float64: as predict_raw, for the rows ``rows`` (m,) int32 of a binned store
    (out is indexed by row id, so rows may be any subset)."""
    n_trees = forest.tree_node_offset.shape[0] - 1
    leaf_offset, leaf_ptr, leaf_cols, leaf_vals = forest.tree_leaf_offset, forest.leaf_ptr, forest.leaf_cols, \
        forest.leaf_vals
    n_rows = rows.shape[0]
    for task in prange((n_rows + STORE_BLOCK - 1) // STORE_BLOCK):
        i0 = task * STORE_BLOCK
        i1 = min(n_rows, i0 + STORE_BLOCK)
        leaves = np.empty(i1 - i0, np.int32)
        for t in range(n_trees):
            _store_leaves(store, rows, i0, i1, forest, t, leaves)
            for i in range(i0, i1):
                row = leaf_offset[t] + leaves[i - i0]
                r = rows[i]
                for p in range(leaf_ptr[row], leaf_ptr[row + 1]):
                    out[r, leaf_cols[p]] += leaf_vals[p]


@njit(parallel=True, cache=True, nogil=True, error_model="numpy")
def predict_leaf_raw(X, indptr, indices, data, forest, out):
    """OUT out (n, T) int32: the leaf each row reaches in each tree (raw features as predict_raw)."""
    n_trees = forest.tree_node_offset.shape[0] - 1
    dense = indptr.shape[0] == 0
    n_rows = X.shape[0] if dense else indptr.shape[0] - 1
    n_tasks = _n_tasks(n_rows, dense)
    for task in prange(n_tasks):
        if dense:
            for t in range(n_trees):
                out[task, t] = _leaf_raw(X, task, t, forest)
        else:
            row = np.zeros((1, X.shape[1]))
            for i in _task_rows(task, n_tasks, n_rows):
                _scatter_row(indptr, indices, data, i, row)
                for t in range(n_trees):
                    out[i, t] = _leaf_raw(row, 0, t, forest)
                _clear_row(indptr, indices, i, row)


@njit(cache=True, nogil=True, error_model="numpy")
def _push_top(idx, val, filled, k, c, v):
    """Insert label c with score v into the ranked (idx, val)[:filled] (best first, ties: the smaller
    label first), keeping at most k; returns the new fill."""
    pos = filled
    while pos > 0 and (val[pos - 1] < v or (val[pos - 1] == v and idx[pos - 1] > c)):
        pos -= 1
    if pos >= k:
        return filled
    last = filled if filled < k else k - 1
    for j in range(last, pos, -1):
        idx[j] = idx[j - 1]
        val[j] = val[j - 1]
    idx[pos] = c
    val[pos] = v
    return filled + 1 if filled < k else k


@njit(parallel=True, cache=True, nogil=True, error_model="numpy")
def predict_top_k(X, indptr, indices, data, forest, start, start_order, start_lse, max_touched, n_chunks, out_idx,
                  out_val, out_lse):
    """OUT out_idx (n, k) int64, out_val (n, k) float64: each row's k best outputs by raw score
    (start score + its trees' leaf values), best first, ties to the smaller output; OUT out_lse (n,):
    log sum_c exp(raw score c) over every output (the softmax normalizer).

    The leaf values a row reaches are summed in a sparse accumulator (a dense scratch of the outputs
    per chunk of rows, reset through the list of outputs touched), so a row costs O(entries of its
    leaves + k * those entries), not O(outputs): an output no leaf touches scores its start score, and
    the best of those come first in ``start_order`` (every output by descending start score, ties to the
    smaller), read only until k untouched ones are found.  start_lse = log sum_c exp(start c).
    max_touched >= the entries a row can reach (the sum of the trees' widest leaves)."""
    n_trees = forest.tree_node_offset.shape[0] - 1
    dense = indptr.shape[0] == 0
    n_rows = X.shape[0] if dense else indptr.shape[0] - 1
    leaf_offset, leaf_ptr, leaf_cols, leaf_vals = forest.tree_leaf_offset, forest.leaf_ptr, forest.leaf_cols, \
        forest.leaf_vals  # as locals: see _add_leaves
    n_out = start.shape[0]
    k = out_idx.shape[1]
    for chunk in prange(n_chunks):
        acc = np.zeros(n_out)
        seen = np.zeros(n_out, np.bool_)
        touched = np.empty(max_touched, np.int64)
        features = np.zeros((0 if dense else 1, X.shape[1]))  # a CSR row scattered (see SPARSE_TASK_ROWS)
        for i in range(chunk * n_rows // n_chunks, (chunk + 1) * n_rows // n_chunks):
            n_touched = 0
            if not dense:
                _scatter_row(indptr, indices, data, i, features)
            for t in range(n_trees):
                row = leaf_offset[t] + (_leaf_raw(X, i, t, forest) if dense else _leaf_raw(features, 0, t, forest))
                for p in range(leaf_ptr[row], leaf_ptr[row + 1]):
                    c = leaf_cols[p]
                    if not seen[c]:
                        seen[c] = True
                        touched[n_touched] = c
                        n_touched += 1
                    acc[c] += leaf_vals[p]
            filled = np.int64(0)  # not the constant 0: _push_top would be compiled for Literal[int](0) too
            shift = start_lse
            for j in range(n_touched):
                c = touched[j]
                score = start[c] + acc[c]
                filled = _push_top(out_idx[i], out_val[i], filled, k, c, score)
                if score > shift:
                    shift = score
            untouched = 0
            for j in range(start_order.shape[0]):
                if untouched == k:
                    break
                c = start_order[j]
                if not seen[c]:
                    filled = _push_top(out_idx[i], out_val[i], filled, k, c, start[c])
                    untouched += 1
            # the softmax normalizer: every start score, with the touched outputs' start terms replaced
            total = math.exp(start_lse - shift)
            for j in range(n_touched):
                c = touched[j]
                total += math.exp(start[c] + acc[c] - shift) - math.exp(start[c] - shift)
            out_lse[i] = shift + math.log(max(total, 1e-300))
            for j in range(filled, k):
                out_idx[i, j] = -1
                out_val[i, j] = -np.inf
            for j in range(n_touched):
                c = touched[j]
                acc[c] = 0.0
                seen[c] = False
            if not dense:
                _clear_row(indptr, indices, i, features)


@njit(parallel=True, cache=True, nogil=True, error_model="numpy")
def leaf_index_store(store, rows, forest, out):
    """OUT out (m, T) int32: the leaf that row rows[i] of a binned store reaches in each tree."""
    n_trees = forest.tree_node_offset.shape[0] - 1
    n_rows = rows.shape[0]
    for task in prange((n_rows + STORE_BLOCK - 1) // STORE_BLOCK):
        i0 = task * STORE_BLOCK
        i1 = min(n_rows, i0 + STORE_BLOCK)
        leaves = np.empty(i1 - i0, np.int32)
        for t in range(n_trees):
            _store_leaves(store, rows, i0, i1, forest, t, leaves)
            out[i0:i1, t] = leaves


# serial twins for few rows or trees (kernels._variants): the caller picks by rows x trees
predict_raw_serial = variant(predict_raw, "serial")
predict_oblivious_serial = variant(predict_oblivious, "serial")
predict_store_serial = variant(predict_store, "serial")
predict_store_serial_dense = variant(predict_store, "serial_dense",  # for stores of dense columns only
                                     _store_leaves=variant(_store_leaves, "dense", STORE_KIND=STORE_DENSE))
predict_leaf_raw_serial = variant(predict_leaf_raw, "serial")
leaf_index_store_serial = variant(leaf_index_store, "serial")
