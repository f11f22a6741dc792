"""Gradient histograms of a node's rows over a binned store (see ``kernels/store.py``).

A histogram is one flat float64 array ``(total_bins, C)``: feature f owns the rows
``offsets[f]:offsets[f+1]`` (value bins, then the missing bin), and the C columns are the
per-row statistics the caller packed (gradients of k outputs or of a k-column sketch, their
Hessians unless constant, and a count column), so the same kernels serve single-output,
multi-output and sketched trees.  Every builder also returns the node's statistic totals.

Three schedules, each reading a row's bins and statistics once:

* ``build_histogram_columns``: the root (every row, in order), one dense or bundle column per
  task straight into the output; the column stays in cache and needs no row indices.
* ``build_histogram_chunks``: a node's rows split in chunks with one private histogram each,
  then summed.  The choice for narrow statistics (one output: C = 2 or 3).
* ``build_histogram_wide``: statistic columns split in blocks, each task writing its own columns
  of the output over every row; no private copies of a wide histogram.

``build_histogram_serial`` is the one-thread version for small nodes.
"""
from typing import NamedTuple

import numpy as np
from numba import njit, prange

from ._llvm import add_pair, prefetch
from ._variants import variant
from .store import STORE_ANY, STORE_DENSE

U = np.uint64  # unsigned indices: no negative-index wraparound code in the hot loops
#: the first row index passed to the row-range helpers: a typed zero, because Numba compiles a helper called with
#: the constant 0 as a specialization of its own (Literal[int](0)), a second compile of the same code
FIRST = np.int64(0)

#: what _add_owned_bins_narrow and _wide add: a row's dense and bundle columns, its sparse entries (typed, as FIRST)
COLUMNS = np.int64(1)
ENTRIES = np.int64(2)
#: rows ahead whose binned row is prefetched
PREFETCH_DISTANCE = 16
#: feature groups (build_histogram_features) pay for their parallel region from this much work: cell
#: updates (rows x columns) x statistic columns.  Measured at 2 threads on the panel's stores (serial
#: against 2 groups, microseconds): enb 4,000 of work 11.5 against 12.2, 8,000 17.4 against 14.1; emotions
#: 3,555 38.1 against 37.9, 7,110 40.4 against 35.7; yeast 5,150 52.1 against 42.0; scm20d 6,100 30.5
#: against 27.2 (benchmarks/feature_groups.py's kernels, CHANGELOG.md stop 51).  At 16 threads a region
#: costs 2.9x as much (region_cost.py: 7.8 against 2.7 us) for 15/16 of the work saved instead of 1/2,
#: about 1.5x the break-even: 6,000 is about it at both counts.  (20,000 updates, 100,000 of work at 5
#: columns, while the kernel ran 4-9x slower a row than the serial one: CHANGELOG.md, stop 51.)
FEATURE_GROUP_MIN_WORK = 6_000
#: fix_default_bins sums this few statistic columns one at a time (see there)
NARROW_FIX_COLS = 8


#: the stores the serial histogram compiles for (kernels.store.STORE_ANY; STORE_DENSE in serial_histogram_kernel's
#: variants for dense stores)
STORE_KIND = STORE_ANY
#: the statistic columns of the narrow row loop: 0, either (_dense_rows_2 or _dense_rows_3, chosen per call), or 2
#: or 3 in serial_histogram_kernel's variants, which compile only the loop they run (_dense_rows_3 took 0.9 of
#: a first regressor fit's compile CPU seconds by the listener's exclusive sums, and never ran)
NARROW_WIDTH = 0

@njit(cache=True, nogil=True, error_model="numpy")
def row_updates(store):
    """Histogram cells a row updates on average (its dense and bundle columns and sparse entries)."""
    return store.dense.shape[1] + store.bundle.shape[1] + store.sparse_bins.shape[0] / max(store.dense.shape[0], 1)


# ------------------------------------------------------------------ row-wise accumulation
@njit(cache=True, inline="always", error_model="numpy")
def _add_dense_row(flat, n_cols, dense_base, r, stats, h):
    for j in range(n_cols):
        b = dense_base[j] + flat[r * n_cols + j]
        for c in range(stats.shape[1]):
            h[b, c] += stats[r, c]


@njit(cache=True, inline="always", error_model="numpy")
def _prefetch_row(flat, n_cols, bflat, n_bundles, sf, width, p):
    """Prefetch row p's dense and bundle codes and its statistics (width per row; the first and the
    last of them: a wide row spans several cache lines)."""
    row, w = U(p), U(width)
    prefetch(sf, row * w)
    if width > 8:
        prefetch(sf, row * w + w - U(1))
    if n_cols:
        prefetch(flat, row * U(n_cols))
    if n_bundles:
        prefetch(bflat, row * U(n_bundles))


@njit(cache=True, nogil=True, error_model="numpy")
def _dense_rows_2(store, rows, i0, i1, stats, hf):
    """Two statistic columns (one output, constant Hessian): dense and bundle columns, two rows per
    step, unrolled; returns the first row not done.

    Indices are unsigned in the inner loop: Numba adds negative-index wraparound code to every
    signed index, which costs 20-25 % here (measured)."""
    flat = store.dense.reshape(-1)
    n_cols = store.dense.shape[1]
    bflat = store.bundle.reshape(-1)
    n_bundles = U(store.bundle.shape[1])
    sf = stats.reshape(-1)
    stop = i1 - PREFETCH_DISTANCE - 1
    cols = U(n_cols)
    one, two = U(1), U(2)
    i = i0
    while i + 1 < i1:
        if i < stop:
            _prefetch_row(flat, n_cols, bflat, n_bundles, sf, 2, rows[i + PREFETCH_DISTANCE])
            _prefetch_row(flat, n_cols, bflat, n_bundles, sf, 2, rows[i + PREFETCH_DISTANCE + 1])
        r1 = U(rows[i])
        r2 = U(rows[i + 1])
        a0 = sf[r1 * two]
        a1 = sf[r1 * two + one]
        b0 = sf[r2 * two]
        b1 = sf[r2 * two + one]
        o1 = r1 * cols
        o2 = r2 * cols
        for jj in range(n_cols):
            j = U(jj)
            base = U(store.dense_base[j])
            x = (base + U(flat[o1 + j])) * two
            y = (base + U(flat[o2 + j])) * two
            add_pair(hf, x, a0, a1)
            add_pair(hf, y, b0, b1)
        for jj in range(n_bundles):
            j = U(jj)
            codes = U(store.code_offset[j])
            x = U(store.code_map[codes + U(bflat[r1 * n_bundles + j])]) * two
            y = U(store.code_map[codes + U(bflat[r2 * n_bundles + j])]) * two
            add_pair(hf, x, a0, a1)
            add_pair(hf, y, b0, b1)
        i += 2
    return i


@njit(cache=True, nogil=True, error_model="numpy")
def _dense_rows_3(store, rows, i0, i1, stats, hf):
    """Three statistic columns (one output with its Hessian): as _dense_rows_2."""
    flat = store.dense.reshape(-1)
    n_cols = store.dense.shape[1]
    bflat = store.bundle.reshape(-1)
    n_bundles = U(store.bundle.shape[1])
    sf = stats.reshape(-1)
    stop = i1 - PREFETCH_DISTANCE - 1
    cols = U(n_cols)
    one, two, three = U(1), U(2), U(3)
    i = i0
    while i + 1 < i1:
        if i < stop:
            _prefetch_row(flat, n_cols, bflat, n_bundles, sf, 3, rows[i + PREFETCH_DISTANCE])
            _prefetch_row(flat, n_cols, bflat, n_bundles, sf, 3, rows[i + PREFETCH_DISTANCE + 1])
        r1 = U(rows[i])
        r2 = U(rows[i + 1])
        a0 = sf[r1 * three]
        a1 = sf[r1 * three + one]
        a2 = sf[r1 * three + two]
        b0 = sf[r2 * three]
        b1 = sf[r2 * three + one]
        b2 = sf[r2 * three + two]
        o1 = r1 * cols
        o2 = r2 * cols
        for jj in range(n_cols):
            j = U(jj)
            base = U(store.dense_base[j])
            x = (base + U(flat[o1 + j])) * three
            y = (base + U(flat[o2 + j])) * three
            add_pair(hf, x, a0, a1)
            hf[x + two] += a2
            add_pair(hf, y, b0, b1)
            hf[y + two] += b2
        for jj in range(n_bundles):
            j = U(jj)
            codes = U(store.code_offset[j])
            x = U(store.code_map[codes + U(bflat[r1 * n_bundles + j])]) * three
            y = U(store.code_map[codes + U(bflat[r2 * n_bundles + j])]) * three
            add_pair(hf, x, a0, a1)
            hf[x + two] += a2
            add_pair(hf, y, b0, b1)
            hf[y + two] += b2
        i += 2
    return i


# The thin layers between the kernels and their row loops (_add_rows, _add_rows_narrow, _add_dense_bundle_rows;
# kernels.partition._sort_rows, partition_rows; kernels.split._scan_tasks) are inlined: their bodies are calls,
# and Numba links a called function's code into its caller and optimizes it again, so that every layer cost
# one more optimization of the loops below it (a first fit compiled 25-30 % longer: CHANGELOG.md, stop 48).
# Small helpers called once a node (totals_from_dense, _add_row_totals; kernels.split.left_sums and
# one_output_node_score) are inlined too: a kernel of their own cost a first fit 0.6-0.9 compile CPU seconds
# more (CHANGELOG.md, stop 54).
@njit(cache=True, inline="always", error_model="numpy")
def _add_dense_bundle_rows(store, rows, i0, i1, stats, h):
    """h += the dense and bundle columns' statistics of rows[i0:i1] (one output: 2 or 3 columns)."""
    if store.dense.shape[1] + store.bundle.shape[1] == 0:
        return
    width = stats.shape[1]
    i = i0
    if NARROW_WIDTH == 2 or (NARROW_WIDTH == 0 and width == 2):
        i = _dense_rows_2(store, rows, i0, i1, stats, h.reshape(-1))
    elif NARROW_WIDTH == 3 or (NARROW_WIDTH == 0 and width == 3):
        i = _dense_rows_3(store, rows, i0, i1, stats, h.reshape(-1))
    if i < i1:  # the odd row left
        _add_dense_rows(store.dense, store.dense_base, rows, i, i1, stats, h)
        if STORE_KIND == STORE_ANY:
            _add_bundle_rows(store.bundle, store.code_map, store.code_offset, rows, i, i1, stats, h)


@njit(cache=True, nogil=True, error_model="numpy")
def _add_dense_rows(dense, dense_base, rows, i0, i1, stats, h):
    """h += the dense columns' statistics of rows[i0:i1] (any width)."""
    n_cols = dense.shape[1]
    if n_cols == 0:
        return
    flat = dense.reshape(-1)
    width = stats.shape[1]
    stop = i1 - PREFETCH_DISTANCE
    for i in range(i0, i1):
        if i < stop:
            prefetch(flat, rows[i + PREFETCH_DISTANCE] * n_cols)
        r = U(rows[i])
        o = r * U(n_cols)
        for jj in range(n_cols):
            j = U(jj)
            b = U(dense_base[j]) + U(flat[o + j])
            for c in range(width):
                h[b, c] += stats[r, c]


@njit(cache=True, nogil=True, error_model="numpy")
def _add_bundle_rows(bundle, code_map, code_offset, rows, i0, i1, stats, h):
    """h += the bundle columns' statistics of rows[i0:i1]."""
    n_cols = bundle.shape[1]
    if n_cols == 0:
        return
    width = stats.shape[1]
    for i in range(i0, i1):
        r = U(rows[i])
        for jj in range(n_cols):
            j = U(jj)
            b = U(code_map[U(code_offset[j]) + U(bundle[r, j])])
            for c in range(width):
                h[b, c] += stats[r, c]


@njit(cache=True, nogil=True, error_model="numpy")
def _add_sparse_rows(indptr, bins, rows, i0, i1, stats, h):
    """h += the statistics of the stored (non-default) bins of rows[i0:i1].

    A node's rows are scattered over the CSR rows and the statistics: each is prefetched ahead, the
    row's bin range two distances ahead, then its bins and statistics one distance ahead; with one
    output a row's statistics are loaded once for all its bins (250k of 500k rows with 10 bins each,
    one thread: 6.9 ms before both, 6.0 with the prefetching, 4.6 with both)."""
    if bins.shape[0] == 0:
        return
    width = stats.shape[1]
    sf = stats.reshape(-1)
    hf = h.reshape(-1)
    stop_far = i1 - 2 * PREFETCH_DISTANCE
    stop_near = i1 - PREFETCH_DISTANCE
    for i in range(i0, i1):
        if i < stop_far:
            prefetch(indptr, rows[i + 2 * PREFETCH_DISTANCE])
        if i < stop_near:
            ahead = U(rows[i + PREFETCH_DISTANCE])
            prefetch(bins, indptr[ahead])
            prefetch(sf, ahead * U(width))
        r = U(rows[i])
        if width == 2 or width == 3:  # one output: the row's statistics loaded once, two lanes at a time
            w = U(width)
            first = sf[r * w]
            second = sf[r * w + U(1)]
            third = sf[r * w + U(2)] if width == 3 else 0.0
            for p in range(U(indptr[r]), U(indptr[r + U(1)])):
                x = U(bins[p]) * w
                add_pair(hf, x, first, second)
                if width == 3:
                    hf[x + U(2)] += third
        else:
            for p in range(U(indptr[r]), U(indptr[r + U(1)])):
                b = U(bins[p])
                for c in range(width):
                    h[b, c] += stats[r, c]


@njit(cache=True, inline="always", error_model="numpy")
def _add_stats(h, b, stats, r, width):
    for c in range(width):
        cu = U(c)
        h[b, cu] += stats[r, cu]


@njit(cache=True, nogil=True, error_model="numpy")
def _add_rows_fused(store, rows, i0, i1, stats, h, total, with_total):
    """Every store's statistics of rows[i0:i1] in one pass per row (and the totals): a row of wide
    statistics is read once for all its bins."""
    flat = store.dense.reshape(-1)
    n_dense = store.dense.shape[1]
    n_bundles = store.bundle.shape[1]
    has_sparse = store.sparse_bins.shape[0] > 0
    width = stats.shape[1]
    sf = stats.reshape(-1)
    bflat = store.bundle.reshape(-1)
    stop = i1 - PREFETCH_DISTANCE
    for i in range(i0, i1):
        if i < stop:
            _prefetch_row(flat, n_dense, bflat, n_bundles, sf, width, rows[i + PREFETCH_DISTANCE])
        r = U(rows[i])
        if with_total:
            for c in range(width):
                total[c] += stats[r, U(c)]
        o = r * U(n_dense)
        for jj in range(n_dense):
            j = U(jj)
            _add_stats(h, U(store.dense_base[j]) + U(flat[o + j]), stats, r, width)
        for jj in range(n_bundles):
            j = U(jj)
            _add_stats(h, U(store.code_map[U(store.code_offset[j]) + U(store.bundle[r, j])]), stats, r, width)
        if has_sparse:
            for p in range(U(store.sparse_indptr[r]), U(store.sparse_indptr[r + U(1)])):
                _add_stats(h, U(store.sparse_bins[p]), stats, r, width)


@njit(cache=True, inline="always", error_model="numpy")
def _add_rows_narrow(store, rows, i0, i1, stats, h, total, with_total):
    """_add_rows for one output (2 or 3 statistic columns; right for any): the unrolled dense and bundle
    path, then the sparse rows."""
    _add_dense_bundle_rows(store, rows, i0, i1, stats, h)
    if STORE_KIND == STORE_ANY:
        _add_sparse_rows(store.sparse_indptr, store.sparse_bins, rows, i0, i1, stats, h)
    if with_total:
        _add_row_totals(rows, i0, i1, stats, total)


@njit(cache=True, inline="always", error_model="numpy")
def _add_rows(store, rows, i0, i1, stats, h, total, with_total):
    """h += every store's statistics of rows[i0:i1]; total += their sums when with_total."""
    if stats.shape[1] <= 3:
        _add_rows_narrow(store, rows, i0, i1, stats, h, total, with_total)
    else:
        _add_rows_fused(store, rows, i0, i1, stats, h, total, with_total)


@njit(cache=True, inline="always", error_model="numpy")
def _add_row_totals(rows, i0, i1, stats, total):
    """total += sum of stats[rows[i0:i1]]."""
    width = stats.shape[1]
    for i in range(i0, i1):
        r = rows[i]
        for c in range(width):
            total[c] += stats[r, c]


@njit(cache=True, inline="always", error_model="numpy")
def first_dense_feature(store):
    """The feature of dense column 0 (the store has one): its bins hold every row once."""
    f = 0
    while store.offsets[f] != store.dense_base[0]:
        f += 1
    return f


@njit(cache=True, inline="always", error_model="numpy")
def totals_from_dense(store, h, total):
    """total = the sums of the first dense column's bins (every row falls in one of them); False
    when the store has no dense column (the caller sums the rows instead)."""
    if store.dense.shape[1] == 0:
        return False
    f = first_dense_feature(store)
    total[:] = 0.0
    for b in range(store.offsets[f], store.offsets[f + 1]):  # whole bin rows, as in fix_default_bins
        for c in range(h.shape[1]):
            total[U(c)] += h[U(b), U(c)]
    return True


@njit(cache=True, nogil=True, error_model="numpy")
def fix_default_bins(store, total, h, c0, c1, t0, t1):
    """For the derived features derived[t0:t1] (every one: 0 and len(derived)), set columns c0:c1 of
    their default bins to total minus their other bins.

    IN total (C,) node totals.  IN/OUT h (total_bins, C).

    Wide statistics sum whole bin rows along the contiguous columns: a column at a time strides the
    histogram by C (Delicious, 1,967 columns and 500 derived features: 5.0 ms a node on one thread,
    whole rows 0.98 ms); up to NARROW_FIX_COLS columns a column at a time in a register is faster
    (one-hot set, 3 columns, 2,614 derived features: 25 against 35 us).  Either way each sum runs bin
    by bin from 0.0, then total - sum."""
    narrow = c1 - c0 <= NARROW_FIX_COLS
    others = np.empty(0 if narrow else c1 - c0)
    for t in range(t0, t1):
        f = store.derived[t]
        lo = store.offsets[f]
        hi = store.offsets[f + 1]
        d = lo + store.default_bin[f]
        if narrow:
            for c in range(c0, c1):
                s = 0.0
                for b in range(lo, hi):
                    if b != d:
                        s += h[b, c]
                h[d, c] = total[c] - s
            continue
        others[:] = 0.0
        for b in range(lo, hi):
            if b != d:
                for c in range(c0, c1):
                    others[U(c - c0)] += h[U(b), U(c)]
        for c in range(c0, c1):
            h[U(d), U(c)] = total[U(c)] - others[U(c - c0)]


# ------------------------------------------------------------------ schedules
@njit(cache=True, nogil=True, error_model="numpy")
def build_histogram_serial(store, rows, stats, out, total):
    """One thread (small nodes, where starting a parallel region costs more than the work).

    IN  store: BinnedStore; rows (m,) int32 the node's rows; stats (n, C) float32.
    OUT out (total_bins, C) float64, overwritten.
    OUT total (C,) float64: the node's totals when total has C entries (skipped when it has none)."""
    out[:, :] = 0.0
    with_total = total.shape[0] > 0
    sum_rows = with_total and store.dense.shape[1] == 0
    if with_total:
        total[:] = 0.0
    _add_rows(store, rows, FIRST, rows.shape[0], stats, out, total, sum_rows)
    if with_total:
        totals_from_dense(store, out, total)
        if STORE_KIND == STORE_ANY:  # a dense store derives no default bin
            fix_default_bins(store, total, out, FIRST, out.shape[1], FIRST, store.derived.shape[0])


@njit(parallel=True, cache=True, nogil=True, error_model="numpy")
def build_histogram_chunks(store, rows, stats, scratch, out, total):
    """Rows in chunks, one private histogram per chunk, summed.

    IN as build_histogram_serial.  OUT scratch (n_chunks, total_bins, C) float64 (any content).
    OUT out, total as build_histogram_serial."""
    n_rows = rows.shape[0]
    n_chunks = scratch.shape[0]
    n_bins, width = out.shape
    with_total = total.shape[0] > 0
    sum_rows = with_total and store.dense.shape[1] == 0
    chunk_totals = np.zeros((n_chunks, width))
    for c in prange(n_chunks):
        h = scratch[c]
        h[:, :] = 0.0
        i0 = c * n_rows // n_chunks
        i1 = (c + 1) * n_rows // n_chunks
        _add_rows(store, rows, i0, i1, stats, h, chunk_totals[c], sum_rows)
    for b in prange(n_bins):
        for k in range(width):
            s = 0.0
            for c in range(n_chunks):
                s += scratch[c, b, k]
            out[b, k] = s
    if with_total:
        if not totals_from_dense(store, out, total):
            for k in range(width):
                s = 0.0
                for c in range(n_chunks):
                    s += chunk_totals[c, k]
                total[k] = s
        fix_default_bins(store, total, out, FIRST, width, FIRST, store.derived.shape[0])


@njit(cache=True, nogil=True, error_model="numpy")
def _column_counts(col, stats_t, sums, counts, count):
    """sums[c, v] += stats_t[c, r], and counts[v] += 1 when ``count``, for every row r with col[r] == v.

    Local accumulators (one per statistic column, an integer count) stay in L1 cache; a
    histogram row interleaving them does not (measured: 7.3 ms against 10.5 ms for 500k rows
    x 50 features).  Even and odd rows add to two separate sets (sums[:, :256] and
    sums[:, 256:], the same for counts), summed at the end: where one bin holds most rows, adds
    to one cell would otherwise wait on each other (measured on one thread, 500k rows: a Zipf
    column 0.77 against 0.68 ns a row, a constant column 2.8 against 1.4)."""
    n_stats = stats_t.shape[0]
    n_pairs = col.shape[0] // 2
    odd = U(256)
    if n_stats == 1:
        g = stats_t[0]
        s0 = sums[0]
        for k in range(n_pairs):
            r = U(2 * k)
            v = U(col[r])
            w = U(col[r + U(1)]) + odd
            s0[v] += g[r]
            s0[w] += g[r + U(1)]
            if count:
                counts[v] += 1
                counts[w] += 1
    elif n_stats == 2:
        g = stats_t[0]
        h = stats_t[1]
        s0 = sums[0]
        s1 = sums[1]
        for k in range(n_pairs):
            r = U(2 * k)
            v = U(col[r])
            w = U(col[r + U(1)]) + odd
            s0[v] += g[r]
            s1[v] += h[r]
            s0[w] += g[r + U(1)]
            s1[w] += h[r + U(1)]
            if count:
                counts[v] += 1
                counts[w] += 1
    else:
        for rr in range(2 * n_pairs):
            r = U(rr)
            v = U(col[r]) + (r & U(1)) * odd
            for c in range(n_stats):
                sums[c, v] += stats_t[c, r]
            if count:
                counts[v] += 1
    if col.shape[0] % 2:  # the last row of an odd count
        r = U(col.shape[0] - 1)
        v = U(col[r])
        for c in range(n_stats):
            sums[c, v] += stats_t[c, r]
        if count:
            counts[v] += 1
    for v in range(256):
        for c in range(n_stats):
            sums[c, v] += sums[c, v + 256]
        counts[v] += counts[v + 256]


@njit(cache=True, nogil=True, error_model="numpy")
def _add_column(store, t, stats_t, out, bin_counts, count):
    """out += the statistics of every row for column task t: dense column t, or bundle column
    t - n_dense (rows in order, no row indices).  IN stats_t (C - 1, n): every statistic column but
    the count (the last, 1 per row), each contiguous.  When ``count``, also bin_counts[b] = the
    rows in each bin b the column owns (else the caller takes the count column from bin_counts)."""
    n_stats = stats_t.shape[0]
    n_dense = store.dense_cols.shape[0]
    sums = np.zeros((n_stats, 512))  # two sets of 256 (see _column_counts)
    counts = np.zeros(512, np.int64)
    if t < n_dense:
        col = store.dense_cols[t]
        f = np.searchsorted(store.offsets, store.dense_base[t])  # the column's feature
        n_codes = store.offsets[f + 1] - store.offsets[f]
    else:
        col = store.bundle_cols[t - n_dense]
        n_codes = store.code_offset[t - n_dense + 1] - store.code_offset[t - n_dense]
    _column_counts(col, stats_t, sums, counts, count)
    for v in range(n_codes):
        if t < n_dense:
            b = store.dense_base[t] + v
        else:
            b = store.code_map[store.code_offset[t - n_dense] + v]
        for c in range(n_stats):
            out[b, c] += sums[c, v]
        if count:
            bin_counts[b] += counts[v]


@njit(parallel=True, cache=True, nogil=True, error_model="numpy")
def build_histogram_columns(store, stats, bin_counts, counts_known, scratch, out, total):
    """The histogram of every row (the root without row sampling): one dense or bundle column per
    task, straight into the output (columns own disjoint histogram rows); the statistic columns are
    first copied contiguous, so a task streams only what it adds.  Sparse rows are added by row
    chunks with private histograms.

    IN  store, stats (n, C) as build_histogram_serial (all n rows, in order; the last column is
        the count, 1 per row).
    IN/OUT bin_counts (total_bins,) float64: the rows of every dense and bundle bin, the same for
        every root of a store.  Read when counts_known, else written (then pass it back with
        counts_known on the next root: the columns then add one statistic less a row).
    OUT scratch (n_chunks, total_bins, C): private histograms for the sparse store (unused without one).
    OUT out, total as build_histogram_serial."""
    n_bins, width = out.shape
    n_rows = stats.shape[0]
    stats_t = np.empty((width - 1, n_rows), dtype=stats.dtype)
    n_chunks = scratch.shape[0]
    chunk_totals = np.zeros((n_chunks, width))
    for c in prange(n_chunks):
        r0 = c * n_rows // n_chunks
        r1 = (c + 1) * n_rows // n_chunks
        for k in range(width):
            s = np.float64(0.0)  # float64 sums of float32 statistics (interpreted too: NUMBA_DISABLE_JIT)
            if k < width - 1:
                for r in range(r0, r1):
                    v = stats[r, k]
                    s += v
                    stats_t[k, r] = v
            else:
                for r in range(r0, r1):
                    s += stats[r, k]
            chunk_totals[c, k] = s
    for b in prange(n_bins):
        for k in range(width):
            out[b, k] = 0.0
        if not counts_known:
            bin_counts[b] = 0.0
    for t in prange(store.dense_cols.shape[0] + store.bundle_cols.shape[0]):
        _add_column(store, t, stats_t, out, bin_counts, not counts_known)
    for b in prange(n_bins):
        out[b, width - 1] = bin_counts[b]
    if store.sparse_bins.shape[0] > 0:
        for c in prange(n_chunks):
            h = scratch[c]
            h[:, :] = 0.0
            all_rows = np.arange(c * n_rows // n_chunks, (c + 1) * n_rows // n_chunks).astype(np.int32)
            _add_sparse_rows(store.sparse_indptr, store.sparse_bins, all_rows, FIRST, all_rows.shape[0], stats, h)
        for b in prange(n_bins):
            for k in range(width):
                s = 0.0
                for c in range(n_chunks):
                    s += scratch[c, b, k]
                out[b, k] += s
    for k in range(width):
        s = 0.0
        for c in range(n_chunks):
            s += chunk_totals[c, k]
        total[k] = s
    fix_default_bins(store, total, out, FIRST, width, FIRST, store.derived.shape[0])


@njit(cache=True, inline="always", error_model="numpy")
def _add_stat_block(out, b, stats, r, c0, c1):
    """out[b, c0:c1] += stats[r, c0:c1] (unsigned indices, so the loop vectorises)."""
    for c in range(c0, c1):
        cu = U(c)
        out[b, cu] += stats[r, cu]


class FeatureGroups(NamedTuple):
    """Features in contiguous groups, a task each (build_histogram_features, kernels.split_step): group g owns
    the features ``bounds[g]:bounds[g + 1]`` and their histogram rows.

    A store's CSR part keeps a row's entries together, ascending by bin, so each group finds its own among
    them.  ``entry_start`` indexes them by group: row r's entries in group g are
    ``sparse_bins[indptr[r] + entry_start[r, g]:indptr[r] + entry_start[r, g + 1]]`` (group_entry_starts).
    Without it (shape (0, G + 1): no CSR part, or an index larger than the part itself) each group walks the
    row's entries up to its own: on Otto's store (17 entries a row, 5 statistic columns) 16 groups run one after
    the other on one thread then did 3.1-6.4x the serial kernel's work, and 1.8-4.1x with the index
    (benchmarks/feature_groups.py; CHANGELOG.md, stop 71)."""
    bounds: np.ndarray       # (G + 1,) int64: feature boundaries, 0 first and F last
    entry_start: np.ndarray  # (n_rows, G + 1) uint16, or (0, G + 1): see above

    @property
    def n_groups(self) -> int:
        return int(self.bounds.shape[0]) - 1


@njit(parallel=True, cache=True, nogil=True, error_model="numpy")
def group_entry_starts(indptr, sparse_bins, group_bins, out):
    """OUT out (n, G + 1) uint16: out[r, g] = the number of row r's CSR entries below histogram row
    group_bins[g] (FeatureGroups.entry_start).

    IN indptr (n + 1,) int64, sparse_bins (nnz,) int32 ascending within a row; group_bins (G + 1,) int64
    ascending, 0 first and total_bins last (so out[r, G] is the row's number of entries, at most 65,535)."""
    n_rows = indptr.shape[0] - 1
    for r in prange(n_rows):
        first, stop = indptr[r], indptr[r + 1]
        p = first
        for g in range(group_bins.shape[0]):
            while p < stop and sparse_bins[p] < group_bins[g]:
                p += 1
            out[r, g] = p - first


@njit(parallel=True, cache=True, nogil=True, error_model="numpy")
def build_histogram_features(store, rows, stats, groups, out, total):
    """Features split in groups, one task each, every task over all the node's rows into the histogram
    rows its features own: no private histograms to zero and sum, and each bin summed in row order (the
    same sums as build_histogram_serial).  A task zeroes its rows, adds its dense columns and, of every
    bundle column and every row's sparse entries, those that fall in its rows; after the totals a second
    region derives the default bins, again by groups.  The schedule for small and middle nodes on many
    threads, where private histograms cost threads x bins to zero and sum (measured on scm20d's store,
    8,966 x 61: 1,000 rows 32 us against 46 serial and 44 by row chunks; 4,000 rows 88 against 170 and 102).

    IN as build_histogram_serial; groups: FeatureGroups (builder.feature_groups balances them by work).
    OUT out, total as build_histogram_serial."""
    n_groups = groups.bounds.shape[0] - 1
    for g in prange(n_groups):
        build_owned_bins(store, rows, stats, groups, g, out)
    if total.shape[0] > 0:
        total[:] = 0.0
        if not totals_from_dense(store, out, total):
            _add_row_totals(rows, FIRST, rows.shape[0], stats, total)
        if store.derived.shape[0] > 0:
            for g in prange(n_groups):
                fix_group_default_bins(store, groups, g, total, out)


@njit(cache=True, inline="always", error_model="numpy")
def fix_group_default_bins(store, groups, g, total, out):
    """fix_default_bins for the derived features of group g (FeatureGroups) only: a group's task after its bins
    (build_histogram_features' second region, kernels.split_step's builds)."""
    t0 = np.searchsorted(store.derived, groups.bounds[g])
    t1 = np.searchsorted(store.derived, groups.bounds[g + 1])
    fix_default_bins(store, total, out, FIRST, out.shape[1], t0, t1)


@njit(cache=True, inline="always", error_model="numpy")
def build_owned_bins(store, rows, stats, groups, g, out):
    """OUT out[lo:hi] = the statistics of ``rows`` in the histogram rows [lo, hi) of group g's features
    (FeatureGroups), each bin summed in the serial kernel's row order: one feature group's task of
    build_histogram_features (and of kernels.split_step's build)."""
    lo = store.offsets[groups.bounds[g]]
    hi = store.offsets[groups.bounds[g + 1]]
    for b in range(lo, hi):
        for c in range(out.shape[1]):
            out[U(b), U(c)] = 0.0
    if out.shape[1] <= 3:  # as the serial kernel's narrow path: every row's columns, then its entries
        _add_owned_bins_narrow(store, rows, stats, lo, hi, COLUMNS, groups.entry_start, g, out)
        _add_owned_bins_narrow(store, rows, stats, lo, hi, ENTRIES, groups.entry_start, g, out)
    else:  # as its fused path: a row's columns and entries together
        _add_owned_bins_wide(store, rows, stats, lo, hi, COLUMNS | ENTRIES, groups.entry_start, g, out)


@njit(cache=True, inline="always", error_model="numpy")
def _owned_entries(indptr, stored, entry_start, g, r, bin_lo, bin_hi, from_first, to_last):
    """(p0, p1): row r's CSR entries (ascending) in the histogram rows [bin_lo, bin_hi) of group g, read from
    the group index ``entry_start`` (FeatureGroups) where there is one, else found by walking the row's
    entries: on Otto's rows (17 entries) 16 feature groups took 1.1x as long with a binary search for the
    first (branches mispredicted), 1.5x with a branchless one.  ``from_first`` (bin_lo is 0) and ``to_last``
    (bin_hi is past the last bin): the walk on that side is known to end at the row's end (the first and
    last groups' walks are half as long; one group's, on one thread, none)."""
    p0, stop = U(indptr[r]), U(indptr[r + U(1)])
    if entry_start.shape[0] > 0:
        return p0 + U(entry_start[r, U(g)]), p0 + U(entry_start[r, U(g) + U(1)])
    if not from_first:
        while p0 < stop and U(stored[p0]) < bin_lo:
            p0 += U(1)
    if to_last:
        return p0, stop
    p1 = p0
    while p1 < stop and U(stored[p1]) < bin_hi:
        p1 += U(1)
    return p0, p1


@njit(cache=True, inline="always", error_model="numpy")
def _owned_parts(store, lo, hi, parts):
    """(d0, d1, n_bundles, has_sparse): the dense columns [d0, d1) of the histogram rows [lo, hi), a range
    of whole features (dense columns are ordered by feature: their histogram offsets ascend), the bundle
    columns to test, and whether CSR entries are added; ``parts``: COLUMNS, ENTRIES or both."""
    columns = (parts & COLUMNS) != 0
    d0 = np.searchsorted(store.dense_base, lo) if columns else 0
    d1 = np.searchsorted(store.dense_base, hi) if columns else 0
    n_bundles = store.bundle.shape[1] if columns else 0
    return d0, d1, n_bundles, (parts & ENTRIES) != 0 and store.sparse_bins.shape[0] > 0


@njit(cache=True, nogil=True, error_model="numpy")
def _add_owned_bins_narrow(store, rows, stats, lo, hi, parts, entry_start, g, out):
    """out[lo:hi] += the statistics (1 to 3 columns: one output) of rows whose dense or bundle bins
    (``parts & COLUMNS``) or sparse entries (``parts & ENTRIES``) fall in [lo, hi), a range of whole
    features; a bin summed in the order the serial kernel sums it (a bundled feature's bin can get both a
    code and, where members conflict, an entry); ``entry_start`` and g: the group index of the entries
    (FeatureGroups).  A row's statistics stay in registers: a loop over the
    columns of each bin costs half again as much (measured).

    Before stop 51 one loop served every width (this one, with a column loop for wider statistics) and
    added a row's entries inside the walk that finds them.  One group over every feature then took 3.6-9.5x
    the serial kernel's time (benchmarks/feature_groups.py, a dense store; CHANGELOG.md, stop 51), which
    made feature groups barely faster than one thread.  The wide loop is now apart (the register path in
    it alone made the 5-column loop 9x slower, measured) and the entries' range is found before they are
    added: both run as fast as the serial kernel.  Nothing is prefetched: prefetching each row's codes,
    statistics and entries made the loop about 4x slower."""
    dense, bundle = store.dense, store.bundle
    d0, d1, n_bundles, has_sparse = _owned_parts(store, lo, hi, parts)
    width = stats.shape[1]
    flat = out.reshape(-1)
    ulo, uhi = U(lo), U(hi)
    from_first, to_last = lo == 0, hi >= store.offsets[store.offsets.shape[0] - 1]
    for i in range(rows.shape[0]):
        r = U(rows[i])
        s0 = np.float64(stats[r, U(0)])
        s1 = np.float64(stats[r, U(1)]) if width > 1 else 0.0
        s2 = np.float64(stats[r, U(2)]) if width > 2 else 0.0
        for jj in range(d0, d1):
            j = U(jj)
            _add_row_stats(flat, U(store.dense_base[j]) + U(dense[r, j]), width, s0, s1, s2)
        for jj in range(n_bundles):
            j = U(jj)
            b = U(store.code_map[U(store.code_offset[j]) + U(bundle[r, j])])
            if ulo <= b < uhi:
                _add_row_stats(flat, b, width, s0, s1, s2)
        if has_sparse:
            p0, p1 = _owned_entries(store.sparse_indptr, store.sparse_bins, entry_start, g, r, ulo, uhi, from_first,
                                        to_last)
            for p in range(p0, p1):
                _add_row_stats(flat, U(store.sparse_bins[p]), width, s0, s1, s2)


@njit(cache=True, nogil=True, error_model="numpy")
def _add_owned_bins_wide(store, rows, stats, lo, hi, parts, entry_start, g, out):
    """_add_owned_bins_narrow for more than 3 statistic columns: each bin's columns in a loop."""
    dense, bundle = store.dense, store.bundle
    d0, d1, n_bundles, has_sparse = _owned_parts(store, lo, hi, parts)
    width = stats.shape[1]
    ulo, uhi = U(lo), U(hi)
    from_first, to_last = lo == 0, hi >= store.offsets[store.offsets.shape[0] - 1]
    for i in range(rows.shape[0]):
        r = U(rows[i])
        for jj in range(d0, d1):
            j = U(jj)
            _add_stats(out, U(store.dense_base[j]) + U(dense[r, j]), stats, r, width)
        for jj in range(n_bundles):
            j = U(jj)
            b = U(store.code_map[U(store.code_offset[j]) + U(bundle[r, j])])
            if ulo <= b < uhi:
                _add_stats(out, b, stats, r, width)
        if has_sparse:
            p0, p1 = _owned_entries(store.sparse_indptr, store.sparse_bins, entry_start, g, r, ulo, uhi, from_first,
                                        to_last)
            for p in range(p0, p1):
                _add_stats(out, U(store.sparse_bins[p]), stats, r, width)


@njit(cache=True, inline="always", error_model="numpy")
def _add_row_stats(flat, b, width, s0, s1, s2):
    """flat[b * width:(b + 1) * width] += (s0[, s1[, s2]]): one row's statistics of width 1 to 3, kept in
    registers, added to bin b of a histogram given as one flat array."""
    x = b * U(width)
    if width == 1:
        flat[x] += s0
        return
    add_pair(flat, x, s0, s1)
    if width == 3:
        flat[x + U(2)] += s2


@njit(parallel=True, cache=True, nogil=True, error_model="numpy")
def build_histogram_wide(store, rows, stats, n_blocks, out, total):
    """Statistic columns split in n_blocks blocks, one task each, every task over all the rows
    (no private histograms: the schedule for wide statistics, many outputs).

    IN as build_histogram_serial.  OUT out, total as build_histogram_serial."""
    n_rows = rows.shape[0]
    n_bins, width = out.shape
    with_total = total.shape[0] > 0
    dense = store.dense
    n_dense = dense.shape[1]
    bundle = store.bundle
    n_bundles = bundle.shape[1]
    has_sparse = store.sparse_bins.shape[0] > 0
    dflat, bflat, sf = dense.reshape(-1), bundle.reshape(-1), stats.reshape(-1)
    for blk in prange(n_blocks):
        c0 = blk * width // n_blocks
        c1 = (blk + 1) * width // n_blocks
        for b in range(n_bins):
            for c in range(c0, c1):
                out[U(b), U(c)] = 0.0
        for i in range(n_rows):
            if i + PREFETCH_DISTANCE < n_rows:
                _prefetch_row(dflat, n_dense, bflat, n_bundles, sf, width, rows[i + PREFETCH_DISTANCE])
            r = U(rows[i])
            for jj in range(n_dense):
                j = U(jj)
                _add_stat_block(out, U(store.dense_base[j]) + U(dense[r, j]), stats, r, c0, c1)
            for jj in range(n_bundles):
                j = U(jj)
                _add_stat_block(out, U(store.code_map[U(store.code_offset[j]) + U(bundle[r, j])]), stats, r, c0, c1)
            if has_sparse:
                for p in range(U(store.sparse_indptr[r]), U(store.sparse_indptr[r + U(1)])):
                    _add_stat_block(out, U(store.sparse_bins[p]), stats, r, c0, c1)
        if with_total:
            for c in range(c0, c1):
                total[c] = 0.0
            if n_dense:  # the first dense column's bins hold every row once
                f = 0
                while store.offsets[f] != store.dense_base[0]:
                    f += 1
                for b in range(store.offsets[f], store.offsets[f + 1]):
                    for c in range(c0, c1):
                        total[c] += out[b, c]
            else:
                for i in range(n_rows):
                    r = U(rows[i])
                    for c in range(c0, c1):
                        total[c] += stats[r, U(c)]
            fix_default_bins(store, total, out, c0, c1, FIRST, store.derived.shape[0])


@njit(parallel=True, cache=True, nogil=True, error_model="numpy")
def subtract_histogram(parent, child, out):
    """OUT out = parent - child (out may be parent itself: the sibling's histogram in place)."""
    n_bins, n_cols = parent.shape
    for b in prange(n_bins):
        for c in range(n_cols):
            out[b, c] = parent[b, c] - child[b, c]


@njit(parallel=True, cache=True, nogil=True, error_model="numpy")
def unpack_counts(packed, unit, plain_hessian, amplified_hessian, out):
    """The three statistic columns of a GOSS histogram built on two (see kernels.sampling.gather_packed_counts).

    IN  packed (m, 2) float64: gradient sums, and n_kept + unit * n_drawn per cell (exact integers).
    OUT out (m, 3) float64: gradient, Hessian (n_kept * plain_hessian + n_drawn * amplified_hessian),
        row count (n_kept + n_drawn)."""
    for b in prange(packed.shape[0]):
        code = packed[b, 1]
        drawn = np.floor(code / unit)
        kept = code - drawn * unit
        out[b, 0] = packed[b, 0]
        out[b, 1] = kept * plain_hessian + drawn * amplified_hessian
        out[b, 2] = kept + drawn


#: the statistic widths with a narrow row loop of their own (one output: gradient and count, or with a Hessian)
NARROW_WIDTHS = (2, 3)


def serial_variant_name(dense: bool, width: int) -> str:
    """The suffix of a serial variant for a store of dense columns only (``dense``) or any, and ``width`` statistic
    columns (one of NARROW_WIDTHS, or 0: any width, the fused row loop)."""
    return ("dense_" if dense else "") + (f"narrow{width}" if width else "wide")


def _serial_histogram_variant(dense: bool, width: int):
    """build_histogram_serial for a store of dense columns only (``dense``) or any, and ``width`` statistic columns
    (see serial_variant_name)."""
    name = serial_variant_name(dense, width)
    store_kind = STORE_DENSE if dense else STORE_ANY
    if not width:
        return variant(build_histogram_serial, name, STORE_KIND=store_kind, _add_rows=_add_rows_fused)
    rows_loop = variant(_add_dense_bundle_rows, name, STORE_KIND=store_kind, NARROW_WIDTH=width)
    add_rows = variant(_add_rows_narrow, name, STORE_KIND=store_kind, _add_dense_bundle_rows=rows_loop)
    return variant(build_histogram_serial, name, STORE_KIND=store_kind, _add_rows=add_rows)


# build_histogram_serial's variants (kernels._variants) by (dense store, width): a fit compiles only the row loop
# it runs (every one gives build_histogram_serial's sums)
SERIAL_HISTOGRAMS = {(dense, width): _serial_histogram_variant(dense, width)
                     for dense in (False, True) for width in (*NARROW_WIDTHS, 0)}


def serial_variant_key(dense: bool, width: int) -> tuple[bool, int]:
    """The key of SERIAL_HISTOGRAMS (and kernels.partition.SERIAL_SPLITS) for a store of dense columns only
    (kernels.store.dense_only) or any, and statistics of ``width`` columns: a width without a narrow loop of its
    own takes the fused one (0)."""
    return bool(dense), width if width in NARROW_WIDTHS else 0


def serial_histogram_kernel(dense: bool, width: int):
    """The serial histogram kernel for a store of dense columns only or any, and statistics of ``width``
    columns (serial_variant_key)."""
    return SERIAL_HISTOGRAMS[serial_variant_key(dense, width)]
