"""Rung 1: every optimized kernel equals its naive twin on generated inputs."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from multigrove.boosting.builder import feature_groups
from multigrove.boosting.tree import Tree, stack_trees
from multigrove.data.binning import BinMapper
from multigrove.kernels.binning import (
    bin_matrix,
    bin_segments,
    distinct_runs,
    keep_filled_cuts,
    sort_short_segments,
)
from multigrove.kernels.bundling import fill_bundle_column
from multigrove.kernels.histogram import (
    build_histogram_chunks,
    build_histogram_columns,
    build_histogram_features,
    build_histogram_serial,
    build_histogram_wide,
    serial_histogram_kernel,
    subtract_histogram,
)
from multigrove.kernels.partition import (
    SplitRule,
    add_leaf_values,
    partition_rows,
    partition_rows_dense,
    partition_rows_parallel,
    rows_in_order,
    rows_in_order_serial,
    split_and_build,
)
from multigrove.kernels.predict import predict_leaf_raw, predict_raw, predict_store, predict_store_serial_dense
from multigrove.kernels.split import (
    REGISTER_MAX_K,
    TASK_BINS,
    FeatureSplits,
    NodeSplits,
    _scan_shared_hessian,
    _scan_shared_hessian_registers,
    add_split_gains,
    best_split_per_feature,
    best_splits_kernel,
    left_sums,
    node_score,
    scan_block_start,
    scan_scratch,
)
from multigrove.kernels.store import dense_only

from . import naive
from .helpers import scan, scan_params, store_of

SETTINGS = settings(max_examples=25, deadline=None)


@st.composite
def binned_problem(draw):
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    n = draw(st.integers(1, 300))
    F = draw(st.integers(1, 6))
    n_vb = rng.integers(1, 12, size=F)               # value bins per feature
    offsets = np.concatenate([[0], np.cumsum(n_vb + 1)]).astype(np.int64)
    binned = np.empty((n, F), dtype=np.uint8)
    for f in range(F):
        b = rng.integers(0, n_vb[f], size=n)
        b[rng.random(n) < draw(st.sampled_from([0.0, 0.2]))] = n_vb[f]   # missing bin
        binned[:, f] = b
    C = draw(st.sampled_from([2, 3, 4, 5, 7, 9]))
    stats = rng.normal(size=(n, C)).astype(np.float32)
    stats[:, -1] = 1.0
    rows = np.sort(rng.choice(n, size=rng.integers(1, n + 1), replace=False)).astype(np.int32)
    return rng, binned, offsets, n_vb, stats, rows


@SETTINGS
@given(st.integers(0, 2**31 - 1), st.integers(1, 300), st.integers(1, 6), st.floats(0, 1), st.booleans(),
       st.sampled_from([0, 40, 300]))
def test_distinct_runs_equal_numpy_unique(seed, n, F, nan_share, sparse, max_sorted):
    """Each feature's distinct values and their counts from its sorted segment (sort_short_segments up to
    max_sorted values, longer ones out of order flagged and sorted by NumPy), NaNs counted
    apart; a sparse column's implicit zeros merged in (naive twin: np.unique of the whole column's non-NaN
    values, zeros included)."""
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(F, n)), rng.integers(0, 3))
    X[rng.random((F, n)) < nan_share] = np.nan
    X[rng.random((F, n)) < 0.3] = -0.0 if seed % 2 else 0.0
    if sparse:  # the stored entries: the non-zeros and a few explicit zeros, in a shuffled order
        stored = (X != 0) | (rng.random((F, n)) < 0.1)
        segments = [rng.permutation(X[f][stored[f]]) for f in range(F)]
    else:
        segments = list(X)
    indptr = np.concatenate([[0], np.cumsum([seg.size for seg in segments])]).astype(np.int64)
    values = np.concatenate(segments).astype(np.float64)
    implicit_zeros = n - np.diff(indptr)
    long_out_of_order = np.empty(F, np.bool_)
    sort_short_segments(values, indptr, max_sorted, long_out_of_order)
    for f in range(F):
        segment = values[indptr[f]:indptr[f + 1]]
        in_order = bool(np.all(segments[f][:-1] <= segments[f][1:]))  # a NaN next to a value counts as out of order
        assert long_out_of_order[f] == (segment.size > max_sorted and not in_order)
        if long_out_of_order[f]:
            np.testing.assert_array_equal(segment, segments[f])  # left to the caller
            segment.sort()
        np.testing.assert_array_equal(segment, np.sort(segments[f]))
    n_distinct, n_missing = np.empty(F, np.int64), np.empty(F, np.int64)
    none_i, none_f = np.empty(0, np.int64), np.empty(0)
    distinct_runs(values, indptr, implicit_zeros, np.zeros(F + 1, np.int64), False, n_distinct, n_missing, none_i,
                  none_f, none_i)  # counting only: nothing written
    starts = np.concatenate([[0], np.cumsum(n_distinct)]).astype(np.int64)
    feats, vals, counts = np.empty(starts[-1], np.int64), np.empty(starts[-1]), np.empty(starts[-1], np.int64)
    n_distinct[:] = n_missing[:] = -1
    distinct_runs(values, indptr, implicit_zeros, starts, True, n_distinct, n_missing, feats, vals, counts)
    for f in range(F):
        uniq, value_counts = np.unique(X[f][~np.isnan(X[f])], return_counts=True)
        assert n_missing[f] == np.isnan(X[f]).sum() and n_distinct[f] == uniq.size
        np.testing.assert_array_equal(feats[starts[f]:starts[f + 1]], f)
        np.testing.assert_array_equal(vals[starts[f]:starts[f + 1]], uniq)
        np.testing.assert_array_equal(counts[starts[f]:starts[f + 1]], value_counts)


@SETTINGS
@given(st.integers(0, 2**31 - 1), st.integers(0, 6), st.sampled_from([1, 2, 3, 10]))
def test_keep_filled_cuts_equal_naive(seed, F, min_count):
    """The cuts kept so that every bin of a feature holds min_count rows (the last short bin joining the
    one before), feature by feature as the naive twin keeps them."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(0, 12, size=F)
    starts = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    counts = rng.integers(1, 6, size=starts[-1]).astype(np.int64)
    cut_after = rng.random(starts[-1]) < 0.7
    cut_after[starts[1:][sizes > 0] - 1] = False  # never after a feature's last value
    candidates = cut_after.copy()
    keep_filled_cuts(counts, starts, min_count, cut_after)
    for f in range(F):
        lo, hi = starts[f], starts[f + 1]
        expected = naive.filled_cuts(counts[lo:hi], set(np.flatnonzero(candidates[lo:hi])), min_count)
        np.testing.assert_array_equal(np.flatnonzero(cut_after[lo:hi]), expected)


@SETTINGS
@given(st.integers(0, 2**31 - 1), st.integers(1, 300), st.integers(1, 8), st.sampled_from([3, 20, 255]), st.booleans(),
       st.sampled_from([1, 3, 7]))
def test_bin_mapper_equals_naive(seed, n, F, max_bin, sparse, min_data_in_bin):
    """The bins learnt from a sample, dense or CSR: a feature of at most max_bin distinct values cuts halfway
    between neighbours, closing a bin once it holds min_data_in_bin sample rows, and ends with +inf; every
    value bin holds min_data_in_bin rows where the feature has as many; the default bin is the most frequent
    bin of the sample (the lowest on ties, NaN counted in the missing bin), with its share; zero_bin is the
    bin of the value 0."""
    rng = np.random.default_rng(seed)
    X = np.column_stack([np.round(rng.normal(size=n), digits) for digits in rng.integers(0, 3, size=F)])
    X[rng.random((n, F)) < rng.uniform(0, 0.9, size=F)] = 0.0
    X[rng.random((n, F)) < 0.05] = np.nan
    m = BinMapper(max_bin=max_bin, min_data_in_bin=min_data_in_bin).fit(sp.csr_matrix(X) if sparse else X)
    B = naive.bin_matrix(X, m.bounds, m.bound_offsets)
    for f in range(F):
        bounds = m.bounds[m.bound_offsets[f]:m.bound_offsets[f + 1]]
        values, counts = np.unique(X[:, f][~np.isnan(X[:, f])], return_counts=True)
        assert bounds[-1] == np.inf and np.all(np.diff(bounds) > 0) and bounds.size <= max(max_bin, 1)
        if values.size <= max_bin:
            cuts = naive.filled_cuts(counts, set(range(values.size - 1)), min_data_in_bin)
            np.testing.assert_array_equal(bounds[:-1], values[cuts] + (values[1:][cuts] - values[cuts]) / 2.0)
        per_bin = np.bincount(B[:, f], minlength=bounds.size + 1)
        if counts.sum() >= min_data_in_bin:
            assert per_bin[:bounds.size].min() >= min_data_in_bin
        assert m.default_bin[f] == np.argmax(per_bin) and m.default_fraction[f] == per_bin.max() / n
        assert m.zero_bin[f] == naive.bin_matrix(np.zeros((1, 1)), bounds, np.array([0, bounds.size]))[0, 0]
        assert m.missing_count[f] == np.isnan(X[:, f]).sum()


@SETTINGS
@given(st.integers(0, 2**31 - 1), st.integers(0, 400), st.sampled_from([1, 5, 300]), st.sampled_from([2, 20, 255]))
def test_bin_segments_equal_naive(seed, n, F, max_bin):
    """The values of each feature's segment binned as bin_matrix's naive twin bins a column."""
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(max(n, 1), F)), rng.integers(0, 4))
    X[rng.random(X.shape) < 0.1] = np.nan
    m = BinMapper(max_bin=max_bin).fit(X)
    X[0] = m.bounds[m.bound_offsets[:-1]]  # values equal to a bound go to that bound's bin
    lengths = rng.integers(0, n + 1, size=F)
    segments = [X[:length, f] for f, length in enumerate(lengths)]
    indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    out = np.empty(indptr[-1], np.uint8)
    bin_segments(np.concatenate(segments), indptr, m.bounds, m.bound_offsets, out)
    expected = naive.bin_matrix(X, m.bounds, m.bound_offsets)
    for f, length in enumerate(lengths):
        np.testing.assert_array_equal(out[indptr[f]:indptr[f + 1]], expected[:length, f])


@SETTINGS
@given(st.integers(0, 2**31 - 1), st.integers(1, 200), st.integers(1, 5))
def test_fill_bundle_column_equals_naive(seed, n, n_members):
    """The first member (in code order) with a coded entry in a row takes the row; uncoded entries and
    later members' entries in a taken row stay out."""
    rng = np.random.default_rng(seed)
    feats, rows, codes = [], [], []
    for f in range(n_members):
        member_rows = np.flatnonzero(rng.random(n) < rng.uniform(0.05, 0.6))
        feats.append(np.full(member_rows.size, f))
        rows.append(member_rows)
        codes.append(rng.integers(-1, 20, member_rows.size))
    feats, rows, codes = np.concatenate(feats), np.concatenate(rows).astype(np.int64), np.concatenate(codes)
    column, fits = np.zeros(n, np.uint8), np.empty(rows.size, np.bool_)
    fill_bundle_column(rows, codes.astype(np.int64), column, fits)
    expected_column, expected_fits = naive.bundle_column(n, feats, rows, codes)
    np.testing.assert_array_equal(column, expected_column)
    np.testing.assert_array_equal(fits, expected_fits)


@SETTINGS
@given(st.integers(0, 2**31 - 1), st.integers(1, 400), st.sampled_from([1, 5, 300]), st.sampled_from([2, 20, 255]))
def test_bin_matrix_equals_naive(seed, n, F, max_bin):
    """Up to 255 value bins (the search table's full width) and more features than one table block."""
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(n, F)), rng.integers(0, 4))
    X[rng.random((n, F)) < 0.1] = np.nan
    m = BinMapper(max_bin=max_bin).fit(X)
    X[0] = m.bounds[m.bound_offsets[:-1]]  # values equal to a bound go to that bound's bin
    X[-1, 0] = -np.inf if n > 1 else X[-1, 0]
    out = np.empty(X.shape, dtype=np.uint8)
    bin_matrix(X, m.bounds, m.bound_offsets, out)
    np.testing.assert_array_equal(out, naive.bin_matrix(X, m.bounds, m.bound_offsets))
    assert np.all(m.n_value_bins <= max_bin)


@pytest.mark.parametrize("n", [30, 5000])
def test_transform_equals_naive_by_columns_or_rows(n):
    """BinMapper.transform bins a small matrix column by column (bin_segments_serial, under the serial work) and a
    larger one by rows (bin_matrix): the same bins as the naive twin either way."""
    rng = np.random.default_rng(n)
    X = np.round(rng.normal(size=(n, 100)), 2)
    X[rng.random(X.shape) < 0.1] = np.nan
    m = BinMapper().fit(X)
    X[0] = m.bounds[m.bound_offsets[:-1]]
    np.testing.assert_array_equal(m.transform(X), naive.bin_matrix(X, m.bounds, m.bound_offsets))
    np.testing.assert_array_equal(m.transform(X.astype(np.float32)),
                                  naive.bin_matrix(X.astype(np.float32), m.bounds, m.bound_offsets))


def _all_histograms(store, rows, stats):
    """Every histogram schedule's output (and totals) for these rows."""
    n_bins, C = store.total_bins, stats.shape[1]
    outs = []
    bin_counts = np.full(n_bins, np.nan)  # written by "columns", read back by "columns, counts known"
    names = ("serial", "chunks", "wide", "features", "columns", "columns, counts known", "serial, this width",
             "serial, any width")
    for name in names:
        out, total = np.full((n_bins, C), np.nan), np.full(C, np.nan)
        if name == "serial":
            build_histogram_serial(store, rows, stats, out, total)
        elif name.startswith("serial, "):  # the variants for this store (dense columns only?) and width, or any
            serial_histogram_kernel(dense_only(store), C if name.endswith("this width") else 0)(
                store, rows, stats, out, total)
        elif name == "features":
            build_histogram_features(store, rows, stats, feature_groups(store, 3), out, total)
        elif name == "chunks":
            build_histogram_chunks(store, rows, stats, np.full((3, n_bins, C), np.nan), out, total)
        elif name == "wide":
            build_histogram_wide(store, rows, stats, min(C, 3), out, total)
        elif rows.shape[0] == store.n_rows and np.array_equal(rows, np.arange(store.n_rows)):
            build_histogram_columns(store, stats, bin_counts, name.endswith("known"), np.full((2, n_bins, C), np.nan),
                                    out, total)
        else:
            continue
        outs.append((name, out, total))
    return outs


@SETTINGS
@given(binned_problem(), st.booleans())
def test_histogram_kernels_equal_naive(problem, every_row):
    rng, binned, offsets, _, stats, rows = problem
    if every_row:
        rows = np.arange(binned.shape[0], dtype=np.int32)
    store = store_of(binned, offsets)
    expect = naive.histogram(binned, rows, stats, offsets)
    built = {}
    for name, out, total in _all_histograms(store, rows, stats):
        np.testing.assert_allclose(out, expect, rtol=1e-12, atol=1e-9, err_msg=name)
        np.testing.assert_allclose(total, stats[rows].sum(axis=0, dtype=np.float64), rtol=1e-12, atol=1e-9)
        built[name] = out
    np.testing.assert_array_equal(built["features"], built["serial"])  # each bin summed in row order
    child = naive.histogram(binned, rows[: len(rows) // 2], stats, offsets)
    sub = np.empty_like(expect)
    subtract_histogram(expect, child, sub)
    np.testing.assert_allclose(sub, expect - child, atol=1e-12)


@SETTINGS
@given(binned_problem())
def test_histogram_skips_totals_when_given_none(problem):
    rng, binned, offsets, _, stats, rows = problem
    store = store_of(binned, offsets)
    out = np.full((store.total_bins, stats.shape[1]), np.nan)
    build_histogram_serial(store, rows, stats, out, np.empty(0))
    np.testing.assert_allclose(out, naive.histogram(binned, rows, stats, offsets), rtol=1e-12, atol=1e-9)


def _scan_setup(rng, stats, const_hess):
    C = stats.shape[1]
    if const_hess:
        return C - 1, C - 1, 0, 1.0
    assume(C >= 3)
    k = (C - 1) // 2
    stats[:, k:2 * k] = np.abs(stats[:, k:2 * k])
    return k, k, 1, 1.0


@pytest.mark.parametrize("k", [1, 2, 3, 4])
@pytest.mark.parametrize("seed", range(4))
def test_register_scan_of_a_small_node_over_many_bins(k, seed):
    """A node of a few rows over features of many bins (most bins empty, the first one too, some rows
    missing): the register scan (one shared Hessian, k <= 4), which scores no empty bin, finds the naive
    twin's thresholds and gains, with the missing rows sent either way."""
    rng = np.random.default_rng(seed)
    n_features, n_bins, n_rows = 6, 200, 30
    offsets = np.arange(n_features + 1, dtype=np.int64) * n_bins
    hist = np.zeros((offsets[-1], k + 2))
    for f in range(n_features):
        bins = rng.integers(1, n_bins - 1, n_rows)  # value bins 1..198 (bin 0 stays empty), or missing
        bins[rng.random(n_rows) < 0.2] = n_bins - 1
        for b in bins:
            hist[offsets[f] + b, :k] += rng.normal(size=k)
            hist[offsets[f] + b, k] += 0.25
            hist[offsets[f] + b, k + 1] += 1.0
    total = hist[:n_bins].sum(axis=0)
    params = scan_params(k, k, 0, 1.0, k + 1, 1.0, 3, 1e-3)
    gain, threshold, left = scan(hist, offsets, total, params)
    expect_gain, expect_bin, expect_left = naive.best_split_per_feature(hist, offsets, total, k, k, 0, 1.0, k + 1,
                                                                        np.ones(n_features, np.bool_), 1.0, 3, 1e-3)
    np.testing.assert_allclose(gain, expect_gain, rtol=1e-12)
    np.testing.assert_array_equal(threshold, expect_bin)
    np.testing.assert_array_equal(left, expect_left)
    assert np.all(hist[offsets[:-1], k + 1] == 0) and left.any()  # the empty first bin, a missing-left winner


@SETTINGS
@given(binned_problem(), st.integers(0, 1), st.sampled_from([0.0, 1.0]), st.integers(1, 10), st.integers(0, 3),
       st.booleans())
def test_split_scan_equals_naive(problem, const_hess, lam, min_data, topk, restricted):
    rng, binned, offsets, _, stats, rows = problem
    C = stats.shape[1]
    k, h_col, h_stride, h_scale = _scan_setup(rng, stats, const_hess)
    hist = naive.histogram(binned, rows, stats, offsets)
    total = hist[offsets[0]:offsets[1]].sum(axis=0)
    mask = rng.random(offsets.size - 1) < 0.8
    params = scan_params(k, h_col, h_stride, h_scale, C - 1, lam, min_data, 1e-3, topk, restricted)
    g, b, d = scan(hist, offsets, total, params, mask)
    eg, eb, ed = naive.best_split_per_feature(hist, offsets, total, k, h_col, h_stride, h_scale, C - 1, mask,
                                              lam, min_data, 1e-3, topk, restricted)
    np.testing.assert_allclose(g, eg, rtol=1e-9)
    ok = np.isfinite(eg)
    np.testing.assert_array_equal(b[ok], eb[ok])
    np.testing.assert_array_equal(d[ok], ed[ok])
    F = offsets.size - 1
    found = FeatureSplits.allocate(1, F)
    best_split_per_feature(hist, hist, False, np.ones(1, np.bool_), total.reshape(1, -1), offsets, mask, params, None,
                           scan_scratch(C, params), found)
    splittable = found.splittable
    for f in range(F):  # splittable: some threshold leaves min_data rows on both sides
        lo, miss = offsets[f], offsets[f + 1] - 1
        n_miss = hist[miss, C - 1]
        lefts = np.cumsum(hist[lo:miss - 1, C - 1])
        sides = [(lefts, total[C - 1] - lefts)] + ([(lefts + n_miss, total[C - 1] - lefts - n_miss)] if n_miss else [])
        expect = any(np.any((a >= min_data) & (r >= min_data)) for a, r in sides)
        assert splittable[0, f] == (expect and mask[f]), f
    parts = sorted((total[j] ** 2 / (h_scale * total[h_col + j * h_stride] + lam)
                    if h_scale * total[h_col + j * h_stride] + lam > 0 else 0.0) for j in range(k))[::-1]
    parent = sum(parts[:topk] if 0 < topk < k else parts)
    assert node_score(total, params) == pytest.approx(parent, rel=1e-12)
    for f in np.flatnonzero(ok):
        out = np.empty(C)
        left_sums(hist, offsets, f, b[f], d[f], out)
        lo, miss = offsets[f], offsets[f + 1] - 1
        expect = hist[lo:lo + b[f] + 1].sum(axis=0) + (hist[miss] if d[f] else 0)
        np.testing.assert_allclose(out, expect, atol=1e-9)


@SETTINGS
@given(binned_problem(), st.integers(1, REGISTER_MAX_K), st.sampled_from([0.0, 1.0]), st.integers(1, 4))
def test_register_scan_equals_array_scan(problem, k, lam, min_data):
    """The shared-Hessian scan with its left sums in registers (k <= REGISTER_MAX_K) gives what the scan over
    an array of sums gives, bit for bit: the same gain, threshold, missing side and splittability."""
    rng, binned, offsets, _, stats, rows = problem
    stats = np.column_stack([rng.normal(size=(stats.shape[0], k)), np.abs(stats[:, :1]) + 0.1,
                             np.ones(stats.shape[0])]).astype(np.float32)
    hist = naive.histogram(binned, rows, stats, offsets)
    total = hist[offsets[0]:offsets[1]].sum(axis=0)
    params = scan_params(k, k, 0, 1.0, k + 1, lam, min_data, 1e-3)
    acc = np.empty(k + 2)
    for f in range(offsets.size - 1):
        expect = _scan_shared_hessian(f, hist, offsets, total, params, acc)
        assert _scan_shared_hessian_registers(f, hist, offsets, total, params) == expect, f


@SETTINGS
@given(binned_problem(), st.integers(0, 1), st.booleans(), st.booleans(), st.sampled_from([0.0, 0.5]),
       st.sampled_from([0, 1 << 20]), st.sampled_from([0, 1]))
def test_best_splits_subtracts_and_scans_both_children(problem, const_hess, scan_first, subtract, min_gain, work,
                                                       topk):
    """The per-split kernel: sibling = parent - child, both scanned, the best split of each and its left sums;
    every variant best_splits_kernel picks (one output; several with one Hessian or their own, dense leaves or
    top-k ones; serial or parallel: ``work``)."""
    rng, binned, offsets, _, stats, rows = problem
    C = stats.shape[1]
    k, h_col, h_stride, h_scale = _scan_setup(rng, stats, const_hess)
    params = scan_params(k, h_col, h_stride, h_scale, C - 1, 1.0, 2, 1e-3, topk=topk, min_gain=min_gain)
    half = rows[rng.random(rows.size) < 0.5]
    child = naive.histogram(binned, half, stats, offsets)
    parent = naive.histogram(binned, rows, stats, offsets)
    sibling = parent - child
    h1 = parent.copy() if subtract else sibling.copy()
    totals = np.array([child[offsets[0]:offsets[1]].sum(0), sibling[offsets[0]:offsets[1]].sum(0)])
    F = offsets.size - 1
    mask = np.ones(F, np.bool_)
    out = NodeSplits.allocate(2, C)
    kernel = best_splits_kernel(params, work)
    kernel(child, h1, 2, subtract, totals, offsets, mask, params, None, scan_scratch(C, params),
           np.array([scan_first, True]), np.zeros((2, F)), FeatureSplits.allocate(2, F), out)
    np.testing.assert_allclose(h1, sibling, atol=1e-9)
    gain, feature, bin_, dleft, lsums = out
    for node, hist in enumerate((child, sibling)):
        if node == 0 and not scan_first:
            assert gain[0] == -np.inf
            continue
        eg, eb, ed = naive.best_split_per_feature(hist, offsets, totals[node], k, h_col, h_stride, h_scale, C - 1,
                                                  mask, 1.0, 2, 1e-3, topk)
        parts = sorted(totals[node][j] ** 2 / (h_scale * totals[node][h_col + j * h_stride] + 1.0)
                       for j in range(k))[::-1]
        best = np.max(eg) - sum(parts[:topk] if 0 < topk < k else parts)
        if not np.isfinite(best) or best <= min_gain:
            assert gain[node] == -np.inf
            continue
        f = int(np.argmax(eg))
        assert gain[node] == pytest.approx(best, rel=1e-9, abs=1e-9)
        assert (feature[node], bin_[node], dleft[node]) == (f, eb[f], ed[f])
        lo, miss = offsets[f], offsets[f + 1] - 1
        np.testing.assert_allclose(lsums[node], hist[lo:lo + eb[f] + 1].sum(0) + (hist[miss] if ed[f] else 0),
                                   atol=1e-9)


@SETTINGS
@given(binned_problem(), st.booleans(), st.integers(1, 4))
def test_partition_kernels_equal_naive(problem, default_left, n_chunks):
    rng, binned, offsets, n_vb, stats, rows = problem
    n = binned.shape[0]
    store = store_of(binned, offsets)
    all_rows = rng.permutation(n).astype(np.int32)
    start = int(rng.integers(0, n))
    end = int(rng.integers(start, n + 1))
    f = int(rng.integers(0, binned.shape[1]))
    thr = int(rng.integers(0, n_vb[f]))
    expect, n_left = naive.partition(all_rows, start, end, binned, f, thr, n_vb[f], default_left)
    rule = SplitRule(f, thr, default_left)
    a = all_rows.copy()
    assert partition_rows(store, a, start, end, rule, np.empty(n, np.int32),
                          np.zeros(0, np.uint8)) == n_left
    np.testing.assert_array_equal(a, expect)
    b = all_rows.copy()
    assert partition_rows_parallel(store, b, start, end, rule, np.empty(n, np.int32),
                                   np.zeros(0, np.uint8), np.empty(n_chunks, np.int64)) == n_left
    np.testing.assert_array_equal(b, expect)
    c = all_rows.copy()  # the variant for stores of dense columns only (this store's)
    assert partition_rows_dense(store, c, start, end, rule, np.empty(n, np.int32), np.zeros(0, np.uint8)) == n_left
    np.testing.assert_array_equal(c, expect)


@SETTINGS
@given(binned_problem(), st.booleans(), st.integers(0, 2), st.integers(1, 2), st.sampled_from([0, 1, 2, 3, -2]))
def test_split_and_build_partitions_and_builds_one_child(problem, default_left, build, n_chunks, schedule):
    rng, binned, offsets, n_vb, stats, rows = problem
    n = binned.shape[0]
    store = store_of(binned, offsets)
    order = rng.permutation(n).astype(np.int32)
    f = int(rng.integers(0, binned.shape[1]))
    thr = int(rng.integers(0, n_vb[f]))
    expect, n_left = naive.partition(order, 0, n, binned, f, thr, n_vb[f], default_left)
    rule = SplitRule(f, thr, default_left)
    C = stats.shape[1]
    out, total = np.full((store.total_bins, C), np.nan), np.full(C, np.nan)
    got = split_and_build(store, order, 0, n, rule, build, stats, schedule, feature_groups(store, 3),
                          np.empty(n, np.int32),
                          np.zeros(0, np.uint8),
                          np.empty(n_chunks, np.int64), np.full((2, store.total_bins, C), np.nan), out, total)
    assert got == n_left
    np.testing.assert_array_equal(order, expect)
    if build:
        child = expect[:n_left] if build == 1 else expect[n_left:]
        np.testing.assert_allclose(out, naive.histogram(binned, child, stats, offsets), rtol=1e-12, atol=1e-9)


def _random_tree(rng, n_features, n_outputs, n_internal, one_col):
    open_slots = [(0, 0), (0, 1)] if n_internal else []
    left = [-1] * n_internal
    right = [-1] * n_internal
    for node in range(1, n_internal):           # attach node to a random open slot of an earlier node
        parent, side = open_slots.pop(rng.integers(len(open_slots)))
        (left if side == 0 else right)[parent] = node
        open_slots += [(node, 0), (node, 1)]
    for leaf, (parent, side) in enumerate(open_slots):
        (left if side == 0 else right)[parent] = ~leaf
    n_leaves = n_internal + 1
    cols = np.array([rng.integers(n_outputs)] if one_col else np.arange(n_outputs), dtype=np.int32)
    return Tree(split_feature=rng.integers(0, n_features, n_internal).astype(np.int32),
                threshold=rng.normal(size=n_internal), threshold_bin=rng.integers(0, 5, n_internal).astype(np.int32),
                default_left=rng.random(n_internal) < 0.5, left_child=np.array(left, np.int32),
                right_child=np.array(right, np.int32), split_gain=np.ones(n_internal),
                internal_count=np.ones(n_internal, np.int64),
                leaf_value=rng.normal(size=(n_leaves, cols.size)),
                leaf_count=np.ones(n_leaves, np.int64), output_cols=cols)


@SETTINGS
@given(st.integers(0, 2**31 - 1), st.integers(1, 5), st.integers(1, 4))
def test_predict_kernels_equal_naive(seed, n_trees, d):
    rng = np.random.default_rng(seed)
    F, n = 4, 60
    trees = [_random_tree(rng, F, d, int(rng.integers(0, 7)), bool(rng.integers(2))) for _ in range(n_trees)]
    for t in trees:
        t.validate(F, d)
    X = rng.normal(size=(n, F))
    X[rng.random((n, F)) < 0.2] = np.nan
    s = stack_trees(trees)
    X[rng.random((n, F)) < 0.3] = 0.0
    no_csr = (np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0))
    out = np.zeros((n, d))
    predict_raw(X, *no_csr, s, out)
    leaves = np.zeros((n, n_trees), np.int32)
    predict_leaf_raw(X, *no_csr, s, leaves)
    M = sp.csr_matrix(np.where(np.isnan(X), np.nan, X))  # NaN stored explicitly, zeros implicit
    csr = (np.empty((0, F)), M.indptr.astype(np.int64), M.indices.astype(np.int64), M.data)
    out_csr, leaves_csr = np.zeros((n, d)), np.zeros((n, n_trees), np.int32)
    predict_raw(*csr, s, out_csr)
    predict_leaf_raw(*csr, s, leaves_csr)
    np.testing.assert_array_equal(out_csr, out)
    np.testing.assert_array_equal(leaves_csr, leaves)
    B = rng.integers(0, 6, size=(n, F)).astype(np.uint8)
    missing_bin = np.full(F, 5, np.int32)
    store = store_of(B, np.arange(F + 1) * 6)
    outb = np.zeros((n, d))
    predict_store(store, np.arange(n, dtype=np.int32), s, outb)
    outb_dense = np.zeros((n, d))  # the serial walk compiled for stores of dense columns only (this one)
    predict_store_serial_dense(store, np.arange(n, dtype=np.int32), s, outb_dense)
    np.testing.assert_array_equal(outb_dense, outb)
    expect, expect_b = np.zeros((n, d)), np.zeros((n, d))
    for ti, t in enumerate(trees):
        for i in range(n):
            leaf = naive.tree_leaf(X[i], t.split_feature, t.threshold, t.default_left, t.left_child, t.right_child)
            assert leaves[i, ti] == leaf
            expect[i, t.output_cols] += t.leaf_value[leaf]
            lb = naive.tree_leaf(B[i], t.split_feature, None, t.default_left, t.left_child, t.right_child,
                                 binned=True, missing_bin=missing_bin, bins=t.threshold_bin)
            expect_b[i, t.output_cols] += t.leaf_value[lb]
    np.testing.assert_allclose(out, expect, atol=1e-12)
    np.testing.assert_allclose(outb, expect_b, atol=1e-12)


@SETTINGS
@given(st.integers(0, 2**31 - 1), st.integers(1, 4))
def test_add_leaf_values_equals_naive(seed, d):
    rng = np.random.default_rng(seed)
    n = 50 if seed % 2 else 20_000  # 20,000 rows: several row chunks, cutting through leaves
    rows = rng.permutation(n).astype(np.int32)
    cuts = np.sort(rng.choice(np.arange(1, n), size=3, replace=False))
    order = rng.permutation(4)  # leaf l's segment is not the l-th: chunks find every leaf's part
    start = np.concatenate([[0], cuts]).astype(np.int64)[order]
    end = np.concatenate([cuts, [n]]).astype(np.int64)[order]
    cols = np.array([np.sort(rng.choice(d + 2, size=d, replace=False)) for _ in range(4)], dtype=np.int32)
    vals = rng.normal(size=(4, d))
    scores = rng.normal(size=(n, d + 2))
    expect = scores.copy()
    for leaf in range(4):
        for r in rows[start[leaf]:end[leaf]]:
            expect[r, cols[leaf]] += vals[leaf]
    add_leaf_values(rows, start, end, vals, -1, cols, scores)
    np.testing.assert_allclose(scores, expect)
    first = int(rng.integers(0, 3))                     # dense leaves over columns first .. first + d - 1
    expect = scores.copy()
    for leaf in range(4):
        expect[rows[start[leaf]:end[leaf]], first:first + d] += vals[leaf]
    add_leaf_values(rows, start, end, vals, first, np.zeros((1, 1), np.int32), scores)
    np.testing.assert_allclose(scores, expect)


@pytest.mark.parametrize("kernel", [rows_in_order, rows_in_order_serial])
@pytest.mark.parametrize("n", [0, 1, 7, 70_001])
def test_rows_in_order_equals_arange(kernel, n):
    rows = np.random.default_rng(n).permutation(n).astype(np.int32)  # as a tree's partitions leave them
    kernel(rows)
    np.testing.assert_array_equal(rows, np.arange(n, dtype=np.int32))


@SETTINGS  # rows past ROW_BLOCK; K on both sides of SIGMOID_BUFFER_MIN
@given(st.integers(0, 2**31 - 1), st.integers(1, 600), st.integers(2, 9))
def test_objective_kernels_equal_numpy(seed, n, K):
    from scipy.special import expit, softmax

    from multigrove.kernels.objective import project_rows, sigmoid_grad_hess, softmax_grad_hess
    rng = np.random.default_rng(seed)
    raw = rng.normal(scale=5, size=(n, K))
    y = rng.integers(0, K, size=n)
    stats = np.full((n, 2 * K + 1), np.nan, np.float32)          # strided column blocks, as in the engine
    softmax_grad_hess(raw, y, stats[:, :K], stats[:, K:2 * K])
    prob = softmax(raw, axis=1)
    np.testing.assert_allclose(stats[:, K:2 * K], prob * (1 - prob), rtol=1e-5, atol=1e-7)
    prob[np.arange(n), y] -= 1
    np.testing.assert_allclose(stats[:, :K], prob, rtol=1e-5, atol=1e-7)
    Y = rng.integers(0, 2, size=(n, K)).astype(float)
    sigmoid_grad_hess(raw, Y, stats[:, :K], stats[:, K:2 * K])
    q = expit(raw)
    np.testing.assert_allclose(stats[:, :K], q - Y, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(stats[:, K:2 * K], q * (1 - q), rtol=1e-5, atol=1e-7)
    P = rng.normal(size=(K, 3)).astype(np.float32)
    out_g, out_h = np.full((n, 3), np.nan, np.float32), np.full((n, 1), np.nan, np.float32)
    project_rows(stats, K, np.ascontiguousarray(P.T), out_g, out_h)
    np.testing.assert_allclose(out_g, stats[:, :K] @ P, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(out_h[:, 0], stats[:, K:2 * K].mean(axis=1), rtol=1e-5)
    from multigrove.kernels.objective import residual, scaled_residual
    targets, shift, scale = rng.normal(size=(n, K)), rng.normal(size=K), rng.uniform(0.1, 3, size=K)
    scaled_residual(raw, targets, shift, scale, stats[:, :K])
    np.testing.assert_array_equal(stats[:, :K], (raw - (targets - shift) / scale).astype(np.float32))
    residual(raw, targets, stats[:, :K])
    np.testing.assert_array_equal(stats[:, :K], (raw - targets).astype(np.float32))


@SETTINGS  # rows past ROW_BLOCK; with and without the tree to add and the projection; both losses
@given(st.integers(0, 2**31 - 1), st.integers(1, 600), st.integers(1, 40), st.booleans(), st.integers(0, 4),
       st.booleans())
def test_round_pass_equals_its_three_passes(seed, n, L, update, k, softmax):
    from scipy.special import expit
    from scipy.special import softmax as softmax_of

    from multigrove.kernels import objective
    kernels = (objective.softmax_round, objective.softmax_round_serial) if softmax else \
        (objective.sigmoid_round, objective.sigmoid_round_serial)
    rng = np.random.default_rng(seed)
    raw0 = rng.normal(scale=5, size=(n, L))
    Y = rng.integers(0, L, size=n) if softmax else rng.integers(0, 2, size=(n, L)).astype(float)
    n_leaves = 5
    leaf_of = rng.integers(-1, n_leaves, size=n).astype(np.int32) if update else np.zeros(0, np.int32)
    leaf_value = rng.normal(size=(n_leaves, L)) if update else np.zeros((0, 0))
    P = rng.normal(size=(L, k)).astype(np.float32)
    expect_raw = raw0.copy()
    if update:
        kept = leaf_of >= 0
        expect_raw[kept] += leaf_value[leaf_of[kept]]
    prob = softmax_of(expect_raw, axis=1) if softmax else expit(expect_raw)
    G, H = prob - (np.eye(L)[Y] if softmax else Y), prob * (1 - prob)
    for kernel in kernels:
        raw = raw0.copy()
        stats = np.full((n, 2 * L + 1), 7.0, np.float32)
        sketch = np.full((n, k + 2), 7.0, np.float32)
        kernel(raw, Y, leaf_of, leaf_value, stats, L, np.ascontiguousarray(P.T), sketch)
        np.testing.assert_allclose(raw, expect_raw, rtol=1e-14, atol=1e-14)
        np.testing.assert_allclose(stats[:, :L], G, rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(stats[:, L:2 * L], H, rtol=1e-5, atol=1e-7)
        assert (stats[:, 2 * L] == 7.0).all()  # the count column is not the kernel's
        if k:
            np.testing.assert_allclose(sketch[:, :k], stats[:, :L].astype(np.float64) @ P, rtol=1e-4, atol=1e-4)
            np.testing.assert_allclose(sketch[:, k], stats[:, L:2 * L].mean(axis=1), rtol=1e-5, atol=1e-7)
        assert (sketch[:, k + 1:] == 7.0).all()


@SETTINGS
@given(st.integers(0, 2**31 - 1), st.integers(1, 300), st.integers(1, 9), st.booleans(), st.sampled_from([0.0, 0.2]))
def test_logloss_rows_equal_numpy(seed, n, K, masked, soft_share):
    """Rows of 0/1 labels (one log a cell) and rows with soft labels (both logs), against NumPy."""
    from scipy.special import expit

    from multigrove.kernels.objective import logloss_rows, logloss_rows_serial
    rng = np.random.default_rng(seed)
    raw = rng.normal(scale=20, size=(n, K))  # past the clip at 1e-15 (|raw| > 34.5) too
    Y = rng.integers(0, 2, size=(n, K)).astype(float)
    Y[rng.random((n, K)) < soft_share] = rng.random()  # soft labels take both logs
    mask = (rng.random((n, K)) < 0.8).astype(np.float32) if masked else np.empty((0, 0), np.float32)
    prob = np.clip(expit(raw), 1e-15, 1 - 1e-15)
    cells = naive.logloss_cells(prob, Y) * (mask if masked else 1.0)
    for kernel in (logloss_rows, logloss_rows_serial):
        for values, from_raw in ((raw, True), (expit(raw), False)):
            rows, kept = np.full(n, np.nan), np.full((n, K), np.nan)
            kernel(values, from_raw, Y, mask, rows, kept)
            np.testing.assert_allclose(kept, cells, rtol=1e-12, atol=1e-12)
            np.testing.assert_allclose(rows, cells.sum(axis=1), rtol=1e-12, atol=1e-12)
            kernel(values, from_raw, Y, mask, rows, np.empty((0, 0)))  # the cells not wanted: only the sums
            np.testing.assert_allclose(rows, cells.sum(axis=1), rtol=1e-12, atol=1e-12)


@SETTINGS
@given(st.lists(st.integers(2, 300), min_size=1, max_size=80), st.integers(1, 40))
def test_scan_blocks_cover_every_feature_once_with_equal_work(bins, n_blocks):
    offsets = np.concatenate([[0], np.cumsum(bins)]).astype(np.int64)
    n_features = len(bins)
    n_blocks = min(n_blocks, n_features)
    starts = [scan_block_start(offsets, b, n_blocks) for b in range(n_blocks + 1)]
    assert starts[0] == 0 and starts[-1] == n_features and starts == sorted(starts)  # contiguous, no gap or overlap
    work = offsets[1:] - offsets[:-1] + TASK_BINS
    fair = work.sum() / n_blocks
    for b in range(n_blocks):
        assert work[starts[b]:starts[b + 1]].sum() <= fair + work.max()  # a block overshoots by at most one feature


def test_exp_nonpositive_within_one_ulp_of_the_c_library():
    """Against the C library's exp (math.exp): NumPy 1.24's own exp is 2 ulp from ours at 5 of these points
    (found by make test-min), NumPy 2's within 1."""
    import math

    from numba import njit

    from multigrove.kernels.objective import EXP_UNDERFLOW, exp_nonpositive

    @njit
    def exp_all(x, out):  # the helper is inlined into compiled kernels only
        for i in range(x.size):
            out[i] = exp_nonpositive(x[i])
    rng = np.random.default_rng(0)
    x = np.concatenate([-rng.exponential(5.0, 20_000), -rng.uniform(0, 1e-6, 1000), np.linspace(-760.0, 0.0, 5001),
                        [0.0, -0.0, -np.log(2) / 2, EXP_UNDERFLOW, -np.inf, np.nan]])
    got = np.empty_like(x)
    with np.errstate(invalid="ignore"):  # interpreted (NUMBA_DISABLE_JIT), -inf and NaN warn on their way to 0 and NaN
        exp_all(x, got)
    want = np.array([math.exp(v) if v == v else v for v in x])
    normal = x > EXP_UNDERFLOW
    assert np.all(np.abs(got[normal] - want[normal]) <= np.spacing(want[normal]))  # at most one ulp
    assert np.all(got[(x <= EXP_UNDERFLOW)] == 0.0)
    assert np.isnan(got[-1])
    assert np.all(got[x == 0.0] == 1.0)


@SETTINGS
@given(st.integers(0, 2**31 - 1), st.integers(1, 30), st.integers(1, 8))
def test_segment_sums_and_topk_sum_equal_numpy(seed, n, topk):
    from multigrove.kernels.split import segment_sums, topk_sum
    rng = np.random.default_rng(seed)
    stats = rng.normal(size=(n, 3)).astype(np.float32)
    rows = rng.permutation(n).astype(np.int32)
    cut = int(rng.integers(0, n + 1))
    start, end = np.array([0, cut], np.int64), np.array([cut, n], np.int64)
    out = np.full((2, 3), np.nan)
    segment_sums(rows, start, end, stats, out)
    np.testing.assert_allclose(out[0], stats[rows[:cut]].sum(0, dtype=np.float64), atol=1e-9)
    np.testing.assert_allclose(out[1], stats[rows[cut:]].sum(0, dtype=np.float64), atol=1e-9)
    v = rng.normal(size=n)
    assert topk_sum(v, n, topk, np.empty(topk)) == pytest.approx(np.sort(v)[::-1][:topk].sum(), rel=1e-12)


@SETTINGS
@given(st.integers(0, 2**31 - 1), st.integers(0, 40), st.integers(1, 6))
def test_segment_labels_equal_a_loop_over_the_segments(seed, n, n_segments):
    """The leaf of each row from rows grouped by leaf, against a loop of slices; overlapping segments (a later
    one wins), gaps (rows in none keep -1) and empty segments included."""
    from multigrove.boosting.shard import leaf_map
    from multigrove.kernels.split import segment_labels
    rng = np.random.default_rng(seed)
    rows = rng.permutation(n).astype(np.int32)
    start = rng.integers(0, n + 1, n_segments).astype(np.int64)
    end = np.minimum(start + rng.integers(0, n + 1, n_segments), n).astype(np.int64)
    want = np.full(n, -1, np.int32)
    for s in range(n_segments):
        want[rows[start[s]:end[s]]] = s
    got = np.full(n, -1, np.int32)
    segment_labels(rows, start, end, got)
    np.testing.assert_array_equal(got, want)
    no_rows = (np.zeros(0, np.int32), np.zeros(n_segments, np.int64), np.zeros(n_segments, np.int64))
    np.testing.assert_array_equal(leaf_map(n, [(rows, start, end), no_rows], n_segments), want)


def test_an_output_without_curvature_scores_zero_instead_of_dividing_by_zero():
    """lambda_l2 = 0 and an output whose Hessians are all 0 on one side (saturated probabilities):
    its G^2 / H term is 0 (its leaf value is 0 too), the others decide the split."""
    from .helpers import scan, scan_params
    # columns [G1, G2, H1, H2, count]; three value bins and an empty missing bin
    hist = np.array([[1.0, 0.0, 1.0, 0.0, 10],
                     [-1.0, 0.5, 1.0, 0.25, 10],
                     [2.0, -0.5, 1.0, 0.25, 10],
                     [0.0, 0.0, 0.0, 0.0, 0]])
    params = scan_params(k=2, h_col=2, h_stride=1, h_scale=1.0, count_col=4, lam=0.0, min_data=1, min_hess=0.0)
    gain, bin_, _ = scan(hist, [0, 4], hist.sum(axis=0), params)
    # after bin 0: left 1^2/1 + 0 (no curvature) and right 1^2/2 + 0^2/0.5 = 1.5; after bin 1: 1 + 5 = 6
    assert bin_[0] == 1
    assert gain[0] == pytest.approx(6.0)  # the children's scores (the parent's is subtracted later)


@SETTINGS
@given(st.integers(0, 2**31 - 1), st.integers(1, 5), st.integers(1, 6), st.integers(1, 6))
def test_predict_top_k_equals_naive(seed, n_trees, d, k):
    from scipy.special import logsumexp

    from multigrove.kernels.predict import predict_top_k
    assume(k <= d)
    rng = np.random.default_rng(seed)
    F, n = 4, 40
    trees = [_random_tree(rng, F, d, int(rng.integers(0, 7)), bool(rng.integers(2))) for _ in range(n_trees)]
    X = rng.normal(size=(n, F))
    s = stack_trees(trees)
    start = np.round(rng.normal(size=d), 1)  # ties in the start scores
    no_csr = (np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0))
    raw = np.tile(start, (n, 1))
    predict_raw(X, *no_csr, s, raw)
    idx, val, lse = np.empty((n, k), np.int64), np.empty((n, k)), np.empty(n)
    predict_top_k(X, *no_csr, s, start, np.argsort(-start, kind="stable").astype(np.int64), float(logsumexp(start)),
                  sum(t.leaf_value.shape[1] for t in trees), 3, idx, val, lse)
    for i in range(n):  # the naive twin: rank every output (ties: the smaller output first)
        order = sorted(range(d), key=lambda c: (-raw[i, c], c))[:k]
        np.testing.assert_array_equal(idx[i], order)
        np.testing.assert_allclose(val[i], raw[i, order], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(lse, logsumexp(raw, axis=1), rtol=1e-9, atol=1e-9)


@SETTINGS
@given(binned_problem(), st.integers(1, 4), st.integers(1, 3))
def test_add_split_gains_equals_naive(problem, k, n_nodes):
    """Symmetric trees: the summed gain of every candidate over a level's nodes."""
    rng, binned, offsets, _, stats, rows = problem
    C = stats.shape[1]
    k = min(k, C - 1)
    h_stride = 1 if 2 * k + 1 <= C else 0
    h_col, h_scale = (k, 1.0) if h_stride else (C - 1, 0.5)
    stats = stats.copy()
    stats[:, k:C - 1] = np.abs(stats[:, k:C - 1])  # Hessians are not negative
    params = scan_params(k, h_col, h_stride, h_scale, C - 1, 1.0, 2, 1e-3)
    node_of_row = rng.integers(0, n_nodes, rows.size)
    hists = [naive.histogram(binned, rows[node_of_row == i], stats, offsets) for i in range(n_nodes)]
    totals = [h[offsets[0]:offsets[1]].sum(0) for h in hists]
    mask = rng.random(offsets.size - 1) < 0.8
    out = np.zeros((2, offsets[-1]))
    for hist, total in zip(hists, totals):
        add_split_gains(hist, total, offsets, mask, params, scan_scratch(C, params), out)
    expected = naive.level_split_gains(hists, totals, offsets, k, h_col, h_stride, h_scale, C - 1, mask, 1.0, 2, 1e-3)
    is_threshold = ~np.isnan(expected)
    np.testing.assert_allclose(out[is_threshold], expected[is_threshold], rtol=1e-9, atol=1e-9)
    assert not out[~is_threshold].any()  # no threshold: left at zero


@SETTINGS
@given(st.integers(0, 2**31 - 1), st.integers(1, 600), st.integers(2, 12), st.sampled_from([1.0, 30.0]))
def test_softmax_logloss_rows_equal_scipy(seed, n, K, scale):
    """-log of each row's label probability, clipped at 1e-15 (raw scores far apart reach the clip), against
    SciPy's softmax."""
    from scipy.special import softmax

    from multigrove.kernels.objective import LOGLOSS_CAP, softmax_logloss_rows, softmax_logloss_rows_serial
    rng = np.random.default_rng(seed)
    raw = rng.normal(scale=scale, size=(n, K))
    y = rng.integers(0, K, n)
    expect = -np.log(np.clip(softmax(raw, axis=1)[np.arange(n), y], 1e-15, None))
    for kernel in (softmax_logloss_rows, softmax_logloss_rows_serial):
        rows = np.full(n, np.nan)
        kernel(raw, y, rows)
        np.testing.assert_allclose(rows, expect, rtol=1e-12, atol=1e-12)
        assert (rows <= LOGLOSS_CAP).all()
    raw[0, 0] = np.nan
    kernel(raw, y, rows)
    assert np.isnan(rows[0])  # a NaN score is not hidden by the clip
