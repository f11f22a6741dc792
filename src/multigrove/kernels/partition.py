"""Split a node's rows between its two children; read one feature's bin of a row from any store;
add leaf values to row scores."""
from typing import NamedTuple

import numpy as np
from numba import njit, prange

from ._llvm import popcount
from ._variants import variant
from .histogram import (
    FEATURE_GROUP_MIN_WORK,
    FIRST,
    SERIAL_HISTOGRAMS,
    build_histogram_chunks,
    build_histogram_features,
    build_histogram_serial,
    build_histogram_wide,
    row_updates,
    serial_variant_key,
    serial_variant_name,
)
from .store import STORE_ANY, STORE_DENSE

U = np.uint64  # unsigned indices: no negative-index wraparound code in the loops
#: the steps of _sort_rows's right-hand output, typed (see kernels.histogram.FIRST)
FORWARD, BACKWARD = np.int64(1), np.int64(-1)


class SplitRule(NamedTuple):
    """The side a row takes: left when its bin of ``feature`` is <= threshold_bin, or when it is the
    feature's missing bin and default_left; for a set split (``categories`` not empty: the feature's bins,
    True for those going left), left when its bin is in the set."""
    feature: int
    threshold_bin: int
    default_left: bool
    categories: np.ndarray = np.zeros(0, np.bool_)


@njit(cache=True, inline="always", error_model="numpy")
def _lower_bound(arr, lo, hi, value):
    """First position p in [lo, hi) with arr[p] >= value (arr ascending there), or hi."""
    while lo < hi:
        mid = (lo + hi) >> 1
        if arr[mid] < value:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True, inline="always", error_model="numpy")
def _sparse_bin(sparse_indptr, sparse_bins, r, lo, hi):
    """The global bin of row r's CSR entry in [lo, hi), or hi when the row has none."""
    if sparse_bins.shape[0] == 0:  # no sparse store (its indptr is then empty)
        return hi
    start = sparse_indptr[r]
    end = sparse_indptr[r + 1]
    if start == end:
        return hi
    p = _lower_bound(sparse_bins, start, end, lo)
    return sparse_bins[p] if p < end and sparse_bins[p] < hi else hi


@njit(cache=True, inline="always", error_model="numpy")
def feature_bin(store, r, f):
    """The bin of feature f in row r, whichever store holds it (see kernels/store.py).  A bundled
    feature's bin is in its bundle column, or (a conflict) in the CSR store."""
    return packed_feature_bin(store.feature_kind[f], store.feature_slot[f], store.dense, store.offsets,
                              store.code_map, store.code_offset, store.bundle_cols, store.default_bin,
                              store.sparse_indptr, store.sparse_bins, r, f)


@njit(cache=True, inline="always", error_model="numpy")
def packed_feature_bin(kind, slot, dense, offsets, code_map, code_offset, bundle_cols, default_bin, sparse_indptr,
                       sparse_bins, r, f):
    """feature_bin from the store's arrays (kind and slot: the feature's): a serial loop over many rows
    passes them as locals, because reading them through the store (18 arrays) at every row updates their
    reference counts at each access outside a parallel region."""
    if kind == 0:  # row-major: a tree walk reads several features of one row
        return dense[r, slot]
    lo = offsets[f]
    hi = offsets[f + 1]
    if kind == 1:
        g = code_map[code_offset[slot] + bundle_cols[slot, r]]
        if not lo <= g < hi or g == lo + default_bin[f]:  # another member's code, or code 0
            g = _sparse_bin(sparse_indptr, sparse_bins, r, lo, hi)
    else:
        g = _sparse_bin(sparse_indptr, sparse_bins, r, lo, hi)
    if g < hi:
        return g - lo
    return default_bin[f]


@njit(cache=True, inline="always", error_model="numpy")
def _seek(arr, p, end, value):
    """First position q >= p in [p, end) with arr[q] >= value (arr ascending): gallop, then bisect,
    so that a long run of smaller entries costs O(log run)."""
    if p >= end or arr[p] >= value:
        return p
    step = 1
    while p + step < end and arr[p + step] < value:
        p += step
        step *= 2
    return _lower_bound(arr, p + 1, min(p + step, end), value) if p + 1 < end else end


#: a sparse feature's node rows are sorted by its entries' sides marked in a byte per row when the node has
#: at least this many rows per entry of the feature (marking and clearing cost two scattered writes an
#: entry); a smaller node merges its rows with the feature's entries instead.  Measured on a feature of
#: 50k entries in 500k rows, marks against merge: 50k node rows 0.15 against 0.46 ms, 12.5k 0.09 against
#: 0.12, 5k 0.08 against 0.03
MARK_MIN_ROWS_PER_ENTRY = 0.25
#: the same for a feature with a row index (kernels/store.py), whose lookup costs a few nanoseconds a row
#: against the marks' two writes an entry.  Measured on Otto's store, 50 nodes in cache, one thread: a feature
#: of 10,385 entries, marks against the index, 4,000 rows 29 against 14 us, 12,000 43 against 44, 40,000 93
#: against 148; one of 30,229 entries, 40,000 rows 148 against 166 (stop 64)
MARK_MIN_ROWS_PER_INDEXED_ENTRY = 1.0


#: the stores the serial partition compiles for (kernels.store.STORE_ANY; STORE_DENSE in the _dense variants:
#: the sparse features' marks alone took 1.1 of a first regressor fit's 14 compile CPU seconds)
STORE_KIND = STORE_ANY


@njit(cache=True, inline="always", error_model="numpy")
def _goes_left_bin(b, missing, default_left, threshold_bin, categories):
    """Whether a row in bin b of a split's feature goes left (missing: the feature's missing bin; the
    SplitRule's fields, read out of it once per loop by the callers: an array field read from the rule at
    every row costs a reference count update a row, and made the partition 4-6x slower)."""
    if categories.shape[0] > 0:
        return categories[b]
    return (b == missing and default_left) or (b != missing and b <= threshold_bin)


@njit(cache=True, nogil=True, error_model="numpy")
def _uses_marks(store, feature, n_rows, marks):
    """Whether the node's n_rows are sorted by marks (see MARK_MIN_ROWS_PER_ENTRY)."""
    n_entries = store.csc_indptr[feature + 1] - store.csc_indptr[feature]
    per_entry = MARK_MIN_ROWS_PER_INDEXED_ENTRY if store.csc_index[feature] >= 0 else MARK_MIN_ROWS_PER_ENTRY
    return store.feature_kind[feature] == 2 and marks.shape[0] > 0 and n_rows >= per_entry * n_entries


@njit(cache=True, nogil=True, error_model="numpy")
def _mark_sides(store, rule, marks):
    """OUT marks (n,) uint8: 1 + (goes left) for every row with an entry of the rule's sparse feature."""
    feature, missing, default_left, threshold_bin, categories = _rule_locals(store, rule)
    for p in range(store.csc_indptr[feature], store.csc_indptr[feature + 1]):
        marks[store.csc_rows[p]] = 1 + _goes_left_bin(np.int64(store.csc_bins[p]), missing, default_left,
                                                      threshold_bin, categories)


@njit(cache=True, nogil=True, error_model="numpy")
def _clear_marks(store, feature, marks):
    """OUT marks: 0 again for every row with an entry of the sparse feature (a function of its own, not a flag
    of _mark_sides: a constant argument is compiled as a specialization of its own, a second compile)."""
    for p in range(store.csc_indptr[feature], store.csc_indptr[feature + 1]):
        marks[store.csc_rows[p]] = 0


@njit(cache=True, inline="always", error_model="numpy")
def _place(r, left, lefts, l0, nl, rights, r0, step, nr):
    """Write row r to both outputs of a branch-free partition (lefts[l0 + nl], rights[r0 + step * nr]) and
    advance only its side's count: the new (nl, nr)."""
    lefts[l0 + nl] = r
    rights[r0 + step * nr] = r
    return nl + left, nr + 1 - left


@njit(cache=True, nogil=True, error_model="numpy")
def _sort_marked(store, rows, c0, c1, rule, marks, lefts, l0, rights, r0, step):
    """As _sort_chunk, for a sparse feature whose entries' sides are marked: a row without a mark has
    the default bin."""
    feature = rule.feature
    default_side = np.int64(_goes_left_bin(np.int64(store.default_bin[feature]), store.missing_bin[feature],
                                           rule.default_left, rule.threshold_bin, rule.categories))
    nl = 0
    nr = 0
    for i in range(c0, c1):
        r = rows[i]
        mark = marks[np.uint64(r)]
        left = np.int64(mark == 2) | (np.int64(mark == 0) & default_side)
        nl, nr = _place(r, left, lefts, l0, nl, rights, r0, step, nr)
    return nl


@njit(cache=True, inline="always", error_model="numpy")
def _rule_locals(store, rule):
    """A split rule's fields as the partition loops read them, once a loop (an array field read from the rule
    at every row updates its reference count: _goes_left_bin): (feature, its missing bin, default_left,
    threshold_bin, categories)."""
    feature = rule.feature
    return feature, store.missing_bin[feature], rule.default_left, rule.threshold_bin, rule.categories


@njit(cache=True, inline="always", error_model="numpy")
def _stored_feature(store, feature):
    """Where a feature's bins are stored, as the partition loops read them: (kind, default bin, first and end
    global bin, slot in its uint8 store, first code of its bundle or 0)."""
    kind = store.feature_kind[feature]
    slot = store.feature_slot[feature]
    code_base = store.code_offset[slot] if kind == 1 else 0
    return (kind, np.int64(store.default_bin[feature]), store.offsets[feature], store.offsets[feature + 1], slot,
            code_base)


@njit(cache=True, nogil=True, error_model="numpy")
def _sort_chunk(store, rows, c0, c1, rule, lefts, l0, rights, r0, step):
    """Sort rows[c0:c1] (ascending) by the rule's side: lefts[l0], lefts[l0 + 1], ... and rights[r0],
    rights[r0 + step], ... (step -1 fills rights backwards).  Returns the number of left rows.

    Branch-free: the side of a row is a coin flip for the branch predictor, so every row is written
    to both outputs and only the counter of its side advances.  A dense feature is read from its
    column; a bundled or sparse one through its row index where it has one (kernels/store.py), else by
    merging the rows with the feature's sparse entries (its column in the by-feature index), which needs
    the rows ascending, as a leaf's rows always are."""
    nl = 0
    nr = 0
    feature, missing, default_left, threshold_bin, categories = _rule_locals(store, rule)
    kind, default, lo, hi, slot, code_base = _stored_feature(store, feature)
    if STORE_KIND == STORE_DENSE or kind == 0:
        col = store.dense_cols[store.feature_slot[feature]]
        for i in range(c0, c1):
            r = rows[i]
            b = col[np.uint64(r)]
            left = _goes_left_bin(b, missing, default_left, threshold_bin, categories)
            nl, nr = _place(r, left, lefts, l0, nl, rights, r0, step, nr)
        return nl
    e1 = store.csc_indptr[feature + 1]
    p = store.csc_indptr[feature]
    # the row index's loop is chosen here, not beside the marks in _sort_rows: chosen there, a dense feature's
    # partition on one thread took 1.2x as long (200,000 x 20 random bins, nodes of 10,000 and 100,000 rows)
    if store.csc_index[feature] >= 0:
        return _sort_indexed(store, rows, c0, c1, rule, lefts, l0, rights, r0, step)
    if kind == 1 and p == e1:  # a bundled feature without conflicts: a side per code, then as dense
        n_codes = store.code_offset[slot + 1] - code_base
        side = np.empty(n_codes, np.bool_)
        for code in range(n_codes):
            g = store.code_map[code_base + code]
            b = g - lo if lo <= g < hi else default
            side[code] = _goes_left_bin(b, missing, default_left, threshold_bin, categories)
        col = store.bundle_cols[slot]
        for i in range(c0, c1):
            r = rows[i]
            left = side[col[np.uint64(r)]]
            nl, nr = _place(r, left, lefts, l0, nl, rights, r0, step, nr)
        return nl
    for i in range(c0, c1):
        r = rows[i]
        p = _seek(store.csc_rows, p, e1, r)
        if p < e1 and store.csc_rows[p] == r:
            b = np.int64(store.csc_bins[p])
        elif kind == 1:
            g = store.code_map[code_base + store.bundle_cols[slot, r]]
            b = g - lo if lo <= g < hi else default
        else:
            b = default
        left = _goes_left_bin(b, missing, default_left, threshold_bin, categories)
        nl, nr = _place(r, left, lefts, l0, nl, rights, r0, step, nr)
    return nl


@njit(cache=True, nogil=True, error_model="numpy")
def _sort_indexed(store, rows, c0, c1, rule, lefts, l0, rights, r0, step):
    """_sort_chunk for a sparse or bundled feature with a row index (kernels/store.py): a row's entry found by
    its bit and the bits below it, in place of the merge with the feature's entries."""
    nl = 0
    nr = 0
    feature, missing, default_left, threshold_bin, categories = _rule_locals(store, rule)
    kind, default, lo, hi, slot, code_base = _stored_feature(store, feature)
    words = store.csc_words[store.csc_index[feature]]
    ranks = store.csc_word_rank[store.csc_index[feature]]
    first = store.csc_indptr[feature]
    csc_bins, code_map, bundle_cols = store.csc_bins, store.code_map, store.bundle_cols
    for i in range(c0, c1):
        r = rows[i]
        w = U(r) >> U(6)
        word = words[w]
        bit = U(r) & U(63)
        if (word >> bit) & U(1):
            b = np.int64(csc_bins[first + ranks[w] + np.int64(popcount(word & ((U(1) << bit) - U(1))))])
        elif kind == 1:  # written out as in _sort_chunk: an inline helper here ran the loop 2-3x slower
            g = code_map[code_base + bundle_cols[slot, r]]
            b = g - lo if lo <= g < hi else default
        else:
            b = default
        left = _goes_left_bin(b, missing, default_left, threshold_bin, categories)
        nl, nr = _place(r, left, lefts, l0, nl, rights, r0, step, nr)
    return nl


@njit(cache=True, inline="always", error_model="numpy")
def _sort_rows(store, rows, c0, c1, rule, marks, marked, lefts, l0, rights, r0, step):
    """_sort_marked when the feature's entries are marked, else _sort_chunk."""
    if marked:
        return _sort_marked(store, rows, c0, c1, rule, marks, lefts, l0, rights, r0, step)
    return _sort_chunk(store, rows, c0, c1, rule, lefts, l0, rights, r0, step)


@njit(cache=True, inline="always", error_model="numpy")
def partition_rows(store, rows, start, end, rule, tmp, marks):
    """Stable in-place partition of ``rows[start:end]``: left rows first, then right rows.

    IN/OUT rows (n,) int32; IN rule (SplitRule): which side each row takes.
    OUT tmp (>= end - start,) int32 scratch; marks (store rows,) uint8 scratch, zero on entry and on
    return (or (0,): sparse features always merge).  Returns the number of left rows.
    """
    if STORE_KIND == STORE_DENSE:  # every feature a dense column: no marks
        n_left = _sort_chunk(store, rows, start, end, rule, rows, start, tmp, FIRST, FORWARD)
    else:
        marked = _uses_marks(store, rule.feature, end - start, marks)
        if marked:
            _mark_sides(store, rule, marks)
        n_left = _sort_rows(store, rows, start, end, rule, marks, marked, rows, start, tmp, FIRST, FORWARD)
        if marked:
            _clear_marks(store, rule.feature, marks)
    for i in range(end - start - n_left):  # a loop, not a slice copy: see kernels.binning.bin_segments
        rows[start + n_left + i] = tmp[i]
    return n_left


@njit(parallel=True, cache=True, nogil=True, error_model="numpy")
def partition_rows_parallel(store, rows, start, end, rule, tmp, marks, counts):
    """As partition_rows, in parallel over counts.shape[0] chunks: one pass sorts each chunk's rows
    into its slice of tmp (lefts from the front, rights from the back), then a parallel copy.

    OUT tmp (>= end - start,) int32 scratch; marks as partition_rows; OUT counts (n_chunks,) int64 scratch.
    """
    n_chunks = counts.shape[0]
    m = end - start
    marked = _uses_marks(store, rule.feature, m, marks)
    if marked:
        _mark_sides(store, rule, marks)
    for c in prange(n_chunks):
        c0 = start + c * m // n_chunks
        c1 = start + (c + 1) * m // n_chunks
        # lefts from the front of the chunk's slice of tmp, rights from its back (reversed below)
        counts[c] = _sort_rows(store, rows, c0, c1, rule, marks, marked, tmp, c0 - start, tmp, c1 - start - 1, BACKWARD)
    if marked:
        _clear_marks(store, rule.feature, marks)
    total_left = 0
    for c in range(n_chunks):
        total_left += counts[c]
    for c in prange(n_chunks):
        c0 = c * m // n_chunks
        c1 = (c + 1) * m // n_chunks
        left_before = 0
        for j in range(c):
            left_before += counts[j]
        right_before = c0 - left_before
        nl = counts[c]
        nr = c1 - c0 - nl
        for j in range(nl):
            rows[start + left_before + j] = tmp[c0 + j]
        for j in range(nr):
            rows[start + total_left + right_before + j] = tmp[c1 - 1 - j]
    return total_left


# parallel=True without a loop of its own: it calls parallel kernels (kernels._variants.PARALLEL_CALLER)
@njit(parallel=True, cache=True, nogil=True, error_model="numpy")
def split_and_build(store, rows, start, end, rule, build, stats, schedule, groups, tmp, marks, counts, scratch, out,
                    total):
    """Partition ``rows[start:end]`` by ``rule`` (SplitRule; parallel when counts has more than one chunk),
    then build the histogram of one child: ``build`` 0 = none, 1 = left, 2 = right.

    ``schedule`` picks the histogram kernel: 0 serial, 1 row chunks (scratch), >= 2 the number of
    statistic-column blocks of build_histogram_wide, < 0 the feature groups ``groups`` of
    build_histogram_features (serial when the child, known only now, is below
    FEATURE_GROUP_MIN_WORK: the caller chose from half the node, and a split's smaller child is
    often far smaller).  Returns the number of left rows.
    OUT tmp, marks, counts, scratch: as the partition and histogram kernels; OUT out, total: the histogram.
    """
    if counts.shape[0] > 1:
        n_left = partition_rows_parallel(store, rows, start, end, rule, tmp, marks, counts)
    else:
        n_left = partition_rows(store, rows, start, end, rule, tmp, marks)
    if build == 0:
        return n_left
    child = _child_rows(rows, start, end, n_left, build)
    if schedule < 0 and child.shape[0] * row_updates(store) * stats.shape[1] < FEATURE_GROUP_MIN_WORK:
        schedule = 0
    if schedule == 0:
        build_histogram_serial(store, child, stats, out, total)
    elif schedule < 0:
        build_histogram_features(store, child, stats, groups, out, total)
    elif schedule == 1:
        build_histogram_chunks(store, child, stats, scratch, out, total)
    else:
        build_histogram_wide(store, child, stats, schedule, out, total)
    return n_left


@njit(cache=True, inline="always", error_model="numpy")
def _child_rows(rows, start, end, n_left, build):
    """The rows of the child ``build`` names (1 left, 2 right) after a partition of rows[start:end]."""
    if build == 1:
        return rows[start:start + n_left]
    return rows[start + n_left:end]


@njit(cache=True, nogil=True, error_model="numpy")
def split_and_build_serial(store, rows, start, end, rule, build, stats, tmp, marks, out, total):
    """split_and_build on the calling thread for a small node: the serial partition, then the serial
    histogram of the child ``build`` names (0 none).  It compiles in a fraction of split_and_build's time
    (no parallel kernel in it), and small data never needs another.  Returns the number of left rows."""
    n_left = partition_rows(store, rows, start, end, rule, tmp, marks)
    if build != 0:
        build_histogram_serial(store, _child_rows(rows, start, end, n_left, build), stats, out, total)
    return n_left


#: add_leaf_values' row chunks: at least this many rows each, at most this many chunks
ADD_LEAF_CHUNK_ROWS = 4096
ADD_LEAF_MAX_CHUNKS = 256


@njit(parallel=True, cache=True, nogil=True, error_model="numpy")
def add_leaf_values(rows, leaf_start, leaf_end, leaf_value, first_col, cols, scores):
    """OUT scores (n, d) float64: adds leaf l's values to the rows rows[leaf_start[l]:leaf_end[l]].

    IN leaf_value (n_leaves, width); the columns they go to: first_col .. first_col + width - 1
    when first_col >= 0 (dense leaves, a one-output tree), else cols (n_leaves, width) int32
    (k-sparse leaves)."""
    n_leaves = leaf_start.shape[0]
    width = leaf_value.shape[1]
    if n_leaves == 0:
        return
    lo, hi = leaf_start[0], leaf_end[0]
    for leaf in range(1, n_leaves):  # loops: NumPy's min and max cost a first fit 0.6 s of compilation
        lo = min(lo, leaf_start[leaf])
        hi = max(hi, leaf_end[leaf])
    # equal row chunks, each adding the part of every leaf inside it: chunks by leaf left one thread
    # the largest leaf (a 1,000,000-row round at 16 threads: 1.95 ms where one thread took 4.1).  The
    # count depends on the rows only (numba.get_num_threads here would keep the kernel out of the cache)
    n_chunks = min(ADD_LEAF_MAX_CHUNKS, max(1, (hi - lo) // ADD_LEAF_CHUNK_ROWS))
    for chunk in prange(n_chunks):
        c_lo = lo + chunk * (hi - lo) // n_chunks
        c_hi = lo + (chunk + 1) * (hi - lo) // n_chunks
        for leaf in range(n_leaves):
            lu = U(leaf)
            for i in range(max(leaf_start[lu], c_lo), min(leaf_end[lu], c_hi)):
                r = U(rows[i])
                if first_col >= 0:
                    c0 = U(first_col)
                    for j in range(width):
                        ju = U(j)
                        scores[r, c0 + ju] += leaf_value[lu, ju]
                else:
                    for j in range(width):
                        ju = U(j)
                        scores[r, U(cols[lu, ju])] += leaf_value[lu, ju]


@njit(parallel=True, cache=True, nogil=True, error_model="numpy")
def rows_in_order(out):
    """OUT out (n,) int32: out[i] = i, the rows in store order that a tree's partitions start from, written
    by all threads.  NumPy's arange and copy ran on one: LocalBuilder.begin took 1.0-1.3 ms a tree of 1,000,000
    rows on this host with them, 0.4-0.6 ms with this kernel (benchmarks/kernel_gaps.py --part begin)."""
    for i in prange(out.shape[0]):
        out[i] = i


# serial twins and variants for small nodes and few rows (kernels._variants)
add_leaf_values_serial = variant(add_leaf_values, "serial")
rows_in_order_serial = variant(rows_in_order, "serial")
partition_rows_dense = variant(partition_rows, "dense", STORE_KIND=STORE_DENSE,
                               _sort_chunk=variant(_sort_chunk, "dense", STORE_KIND=STORE_DENSE))
#: split_and_build_serial's variants by (dense store, width), as kernels.histogram.SERIAL_HISTOGRAMS: the
#: partition for stores of dense columns only (STORE_KIND), the histogram kernel of the same key
SERIAL_SPLITS = {(dense, width): variant(split_and_build_serial, serial_variant_name(dense, width),
                                         build_histogram_serial=kernel,
                                         **({"partition_rows": partition_rows_dense} if dense else {}))
                 for (dense, width), kernel in SERIAL_HISTOGRAMS.items()}


def serial_split_kernel(dense: bool, width: int):
    """split_and_build_serial for a store of dense columns only or any, and statistics of ``width`` columns
    (kernels.histogram.serial_variant_key)."""
    return SERIAL_SPLITS[serial_variant_key(dense, width)]
