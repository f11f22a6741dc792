"""Rung 1 for the sparse stores: histograms (default bins derived from node totals), partitions and the
bin decoder over stores with exclusive feature bundles and CSR rows equal their naive twins on the
plain bin matrix."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit

from multigrove.boosting.builder import feature_groups
from multigrove.data import bundling
from multigrove.data.binning import BinMapper
from multigrove.data.bundling import plan_layout
from multigrove.data.storage import build_store
from multigrove.kernels.histogram import (
    build_histogram_chunks,
    build_histogram_columns,
    build_histogram_features,
    build_histogram_serial,
    build_histogram_wide,
    group_entry_starts,
)
from multigrove.kernels.partition import (
    SplitRule,
    feature_bin,
    partition_rows,
    partition_rows_parallel,
    split_and_build,
)
from multigrove.kernels.store import fill_row_index

from . import naive

SETTINGS = settings(max_examples=25, deadline=None)


@njit(cache=True)
def decode(store, out):
    """out[r, f] = feature_bin(store, r, f) for every row and feature."""
    for r in range(out.shape[0]):
        for f in range(out.shape[1]):
            out[r, f] = feature_bin(store, r, f)


@st.composite
def sparse_problem(draw):
    """Sparse-ish X (some dense columns, groups of mutually exclusive one-hot-like columns, rare
    columns, explicit NaN) binned into a store with bundles and CSR rows."""
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    n = draw(st.integers(20, 300))
    n_dense, n_group, n_rare = draw(st.integers(0, 2)), draw(st.integers(0, 8)), draw(st.integers(0, 6))
    cols = [rng.normal(size=n) for _ in range(n_dense)]
    if n_group:
        level = rng.integers(0, n_group + 1, size=n)      # one-hot of a categorical (level 0: none)
        cols += [(level == j + 1) * rng.integers(1, 4, size=n).astype(float) for j in range(n_group)]
    cols += [np.where(rng.random(n) < 0.05, rng.normal(size=n), 0.0) for _ in range(n_rare)]
    if not cols:
        cols = [rng.normal(size=n)]
    X = np.column_stack(cols)
    X[rng.random(X.shape) < draw(st.sampled_from([0.0, 0.01]))] = np.nan
    sparse_input = draw(st.booleans())
    sample_cnt = draw(st.sampled_from([n, max(10, n // 3)]))  # a small sample: rows outside it may conflict
    mapper = BinMapper(max_bin=draw(st.sampled_from([4, 31])), sample_cnt=sample_cnt, seed=seed % 1000)
    data = sp.csr_matrix(np.where(X == 0, 0, X)) if sparse_input else X
    sample = mapper.sample(data)
    mapper.fit(sample)
    layout = plan_layout(mapper, sample, True, True, draw(st.sampled_from([0.0, 0.1])), 0.6)
    # with the row index, the sparse and bundled features of an entry per 64 rows are partitioned through it;
    # without, every one by the merge with its entries (or by marks)
    store = build_store(data, mapper, layout, row_index=draw(st.booleans()))
    C = draw(st.sampled_from([2, 3, 7, 12]))  # 12: fix_default_bins past NARROW_FIX_COLS
    stats = rng.normal(size=(n, C)).astype(np.float32)
    stats[:, -1] = 1.0
    return rng, mapper, store, mapper.transform(X), stats


@pytest.fixture(autouse=True)
def _bundle_everything(monkeypatch):
    """Bundle even sparse groups, so that small generated data exercise the bundle store."""
    monkeypatch.setattr(bundling, "DENSE_BUNDLE_MIN_FRACTION", 0.0)


@SETTINGS
@given(st.integers(0, 2**31 - 1), st.integers(1, 400), st.integers(1, 6))
def test_row_index_equals_naive(seed, n_rows, n_features):
    """fill_row_index against its naive twin: every row's bit, every word's rank, features left out untouched."""
    rng = np.random.default_rng(seed)
    columns = [np.flatnonzero(rng.random(n_rows) < rng.choice([0.0, 0.02, 0.3, 1.0])) for _ in range(n_features)]
    csc_indptr = np.concatenate([[0], np.cumsum([c.size for c in columns])]).astype(np.int64)
    csc_rows = np.concatenate(columns).astype(np.int32)
    csc_index = np.full(n_features, -1, np.int32)
    chosen = rng.random(n_features) < 0.7
    csc_index[chosen] = np.arange(chosen.sum())
    n_words = (n_rows + 63) // 64
    words, ranks = np.full((chosen.sum(), n_words), 7, np.uint64), np.full((chosen.sum(), n_words), -1, np.int32)
    fill_row_index(csc_indptr, csc_rows, csc_index, words, ranks)
    expect_words, expect_ranks = naive.row_index(csc_indptr, csc_rows, csc_index, n_words)
    np.testing.assert_array_equal(words, expect_words)
    np.testing.assert_array_equal(ranks, expect_ranks)


def test_the_row_index_covers_features_of_an_entry_per_64_rows():
    """build_store indexes the sparse and bundled features of ROW_INDEX_MIN_ENTRIES_PER_WORD entries per word
    and no other (the dense ones, the sparser ones), and none without row_index."""
    rng = np.random.default_rng(0)
    n = 6400  # 100 words
    X = np.column_stack([rng.normal(size=n),                                        # dense
                         np.where(rng.random(n) < 0.1, rng.uniform(1, 2, n), 0.0),  # about 640 entries
                         np.where(np.arange(n) < 300, 1.0, 0.0)])                   # 300, under 4 a word
    mapper = BinMapper(max_bin=15, sample_cnt=n, seed=0)
    mapper.fit(mapper.sample(X))
    layout = plan_layout(mapper, X, True, False)
    store = build_store(X, mapper, layout)
    assert store.feature_kind.tolist() == [0, 2, 2]
    assert store.csc_index.tolist() == [-1, 0, -1] and store.csc_words.shape == (1, 100)
    plain = build_store(X, mapper, layout, row_index=False)
    assert plain.csc_index.tolist() == [-1, -1, -1] and plain.csc_words.shape[0] == 0


@SETTINGS
@given(sparse_problem())
def test_decoding_the_store_returns_each_features_own_bins(problem):
    _, mapper, store, B, _ = problem
    out = np.empty(B.shape, np.int64)
    decode(store, out)
    np.testing.assert_array_equal(out, B)


@SETTINGS
@given(sparse_problem(), st.booleans())
def test_store_histograms_equal_naive(problem, every_row):
    """The default bins never visited row by row are derived exactly (most-frequent-bin subtraction)."""
    rng, mapper, store, B, stats = problem
    n = B.shape[0]
    rows = np.arange(n, dtype=np.int32) if every_row else \
        np.sort(rng.choice(n, int(rng.integers(1, n + 1)), replace=False)).astype(np.int32)
    expect = naive.histogram(B, rows, stats, mapper.hist_offsets)
    C = stats.shape[1]
    outs = []
    bin_counts = np.full(expect.shape[0], np.nan)  # written by "columns", read back by "columns, counts known"
    for name in ("serial", "chunks", "wide", "features", "columns", "columns, counts known"):
        out, total = np.full(expect.shape, np.nan), np.full(C, np.nan)
        if name == "serial":
            build_histogram_serial(store, rows, stats, out, total)
        elif name == "features":
            build_histogram_features(store, rows, stats, feature_groups(store, 5), out, total)
        elif name == "chunks":
            build_histogram_chunks(store, rows, stats, np.full((3,) + expect.shape, np.nan), out, total)
        elif name == "wide":
            build_histogram_wide(store, rows, stats, 2, out, total)
        elif every_row:
            build_histogram_columns(store, stats, bin_counts, name.endswith("known"),
                                    np.full((2,) + expect.shape, np.nan), out, total)
        else:
            continue
        outs.append(name)
        np.testing.assert_allclose(out, expect, rtol=1e-9, atol=1e-6, err_msg=name)
        np.testing.assert_allclose(total, stats[rows].sum(0, dtype=np.float64), rtol=1e-9, atol=1e-6)
    assert len(outs) >= 3


@SETTINGS
@given(sparse_problem(), st.integers(1, 9), st.booleans())
def test_feature_groups_sum_as_one_thread(problem, n_groups, wide):
    """Feature groups over a store with dense, bundle and sparse parts give the serial kernel's histogram
    bit for bit (each bin summed in the same row order), for any number of groups, with the index of the CSR
    entries by group and without it (each group walking a row's entries)."""
    rng, mapper, store, B, stats = problem
    if wide:
        stats = np.ascontiguousarray(np.concatenate([stats, stats[:, :2]], axis=1))
    n = B.shape[0]
    rows = np.sort(rng.choice(n, int(rng.integers(1, n + 1)), replace=False)).astype(np.int32)
    groups = feature_groups(store, n_groups)
    bounds = groups.bounds
    assert bounds[0] == 0 and bounds[-1] == store.n_features and np.all(np.diff(bounds) > 0)
    assert groups.n_groups <= n_groups
    index_bytes = n * (groups.n_groups + 1) * np.dtype(np.uint16).itemsize
    indexed = groups.n_groups >= 2 and store.sparse_bins.shape[0] > 0 and index_bytes <= store.sparse_bins.nbytes
    assert (groups.entry_start.shape[0] == n) == indexed
    C = stats.shape[1]
    expect, expect_total = np.full((store.total_bins, C), np.nan), np.full(C, np.nan)
    build_histogram_serial(store, rows, stats, expect, expect_total)
    walking = groups._replace(entry_start=groups.entry_start[:0])
    for by in (groups, walking):
        out, total = np.full_like(expect, np.nan), np.full(C, np.nan)
        build_histogram_features(store, rows, stats, by, out, total)
        np.testing.assert_array_equal(out, expect)
        np.testing.assert_array_equal(total, expect_total)


def _naive_entry_starts(indptr, sparse_bins, group_bins):
    """group_entry_starts' twin: each row's entries below each group's first bin, counted one by one."""
    out = np.zeros((indptr.shape[0] - 1, group_bins.shape[0]), np.int64)
    for r in range(indptr.shape[0] - 1):
        entries = sparse_bins[indptr[r]:indptr[r + 1]]
        for g, first_bin in enumerate(group_bins):
            out[r, g] = sum(1 for b in entries if b < first_bin)
    return out


@SETTINGS
@given(sparse_problem(), st.integers(2, 9))
def test_group_entry_starts_equal_naive(problem, n_groups):
    """The index of each row's CSR entries by feature group counts, for every row and group, the row's entries
    in the groups before it; its last column is the row's number of entries."""
    rng, mapper, store, B, stats = problem
    if store.sparse_indptr.shape[0] == 0:  # no CSR part: nothing to index
        assert feature_groups(store, n_groups).entry_start.shape[0] == 0
        return
    bounds = feature_groups(store, n_groups).bounds
    group_bins = store.offsets[bounds]
    got = np.full((store.n_rows, bounds.shape[0]), 7, np.uint16)
    group_entry_starts(store.sparse_indptr, store.sparse_bins, group_bins, got)
    expect = _naive_entry_starts(store.sparse_indptr, store.sparse_bins, group_bins)
    np.testing.assert_array_equal(got, expect)
    np.testing.assert_array_equal(got[:, -1], np.diff(store.sparse_indptr))


@SETTINGS
@given(sparse_problem(), st.booleans(), st.integers(1, 3), st.integers(0, 2))
def test_store_partitions_equal_naive(problem, default_left, n_chunks, build):
    rng, mapper, store, B, stats = problem
    n, F = B.shape
    f = int(rng.integers(0, F))
    thr = int(rng.integers(0, max(1, mapper.n_value_bins[f])))
    rows = np.sort(rng.choice(n, int(rng.integers(1, n + 1)), replace=False)).astype(np.int32)  # ascending
    expect, n_left = naive.partition(rows, 0, rows.size, B, f, thr, mapper.missing_bin[f], default_left)
    rule = SplitRule(f, thr, default_left)
    # a sparse feature's rows merged with its entries (no marks), or sorted by marked entries when the rows
    # are at least a quarter as many as the entries (the marks are zero again afterwards)
    for marks in (np.zeros(0, np.uint8), np.zeros(n, np.uint8)):
        a = rows.copy()
        assert partition_rows(store, a, 0, a.size, rule, np.empty(n, np.int32), marks) == n_left
        np.testing.assert_array_equal(a, expect)
        b = rows.copy()
        assert partition_rows_parallel(store, b, 0, b.size, rule, np.empty(n, np.int32), marks,
                                       np.empty(n_chunks, np.int64)) == n_left
        np.testing.assert_array_equal(b, expect)
        assert not marks.any()
    c = rows.copy()
    C = stats.shape[1]
    out, total = np.full((mapper.total_bins, C), np.nan), np.full(C, np.nan)
    assert split_and_build(store, c, 0, c.size, rule, build, stats, 0, feature_groups(store, 2), np.empty(n, np.int32),
                           np.zeros(n, np.uint8),
                           np.empty(1, np.int64), np.empty((1, 1, 1)), out, total) == n_left
    if build:
        child = expect[:n_left] if build == 1 else expect[n_left:]
        np.testing.assert_allclose(out, naive.histogram(B, child, stats, mapper.hist_offsets), rtol=1e-9, atol=1e-6)


@SETTINGS
@given(sparse_problem())
def test_bundles_hold_no_conflict_beyond_the_budget(problem):
    """On the rows the layout was planned on, a budget of 0 leaves every bundle without conflicts;
    the code table maps every member's non-default bin into that member's histogram rows."""
    _, mapper, store, B, _ = problem
    for j in range(store.bundle.shape[1]):
        members = np.flatnonzero((store.feature_kind == 1) & (store.feature_slot == j))
        codes = store.code_map[store.code_offset[j]:store.code_offset[j + 1]]
        for code in codes[1:]:
            owner = np.searchsorted(store.offsets, code, side="right") - 1
            assert owner in members and code - store.offsets[owner] != store.default_bin[owner]
        nondefault = (B[:, members] != store.default_bin[members]).sum(axis=1)
        coded = store.bundle[:, j] > 0
        assert np.all(coded <= (nondefault > 0))  # a code only where a member is non-default


def test_greedy_bundling_respects_the_conflict_budget():
    """Alg. 3 on a sample: total conflicts per bundle stay within the budget, codes within 255."""
    rng = np.random.default_rng(7)
    n, F = 400, 60
    X = np.where(rng.random((n, F)) < 0.03, rng.integers(1, 3, (n, F)).astype(float), 0.0)
    mapper = BinMapper(max_bin=8).fit(X)
    B = mapper.transform(X)
    for rate in (0.0, 0.02, 0.1):
        layout = plan_layout(mapper, X, True, True, rate, 0.8)
        for members in layout.bundles:
            nondefault = (B[:, members] != mapper.default_bin[members]).sum(axis=1)
            conflicts = np.maximum(nondefault - 1, 0).sum()
            assert conflicts <= rate * n
            assert layout.code_offset.size - 1 == len(layout.bundles)
        assert np.all(np.diff(layout.code_offset) <= 256)
        assert sum(len(m) for m in layout.bundles) > 0


@SETTINGS
@given(st.integers(0, 2**31 - 1), st.integers(1, 200), st.integers(1, 30))
def test_degree_order_equals_the_conflict_graph(seed, n, F):
    """Alg. 3's ordering: each feature's weighted degree (the rows it shares with every other feature,
    summed) from its rows' counts equals the row sums of the conflict matrix M'M less its diagonal (the
    naive twin); ties by more non-default rows, then by feature order."""
    rng = np.random.default_rng(seed)
    density = rng.uniform(0, 0.5, F) * (rng.random(F) > 0.2)
    lists = [np.flatnonzero(rng.random(n) < d) for d in density]
    indptr = np.concatenate([[0], np.cumsum([rows.size for rows in lists])]).astype(np.int64)
    rows = np.concatenate(lists).astype(np.int64)
    features = np.sort(rng.choice(F, rng.integers(1, F + 1), replace=False))
    M = sp.csc_matrix((np.ones(indptr[-1]), (rows, np.repeat(np.arange(F), np.diff(indptr)))), shape=(n, F))
    conflicts = (M.T @ M).toarray()[np.ix_(features, features)]
    nondefault = np.diag(conflicts)
    degree = conflicts.sum(axis=1) - nondefault
    expected = features[np.lexsort((-nondefault, -degree))]
    np.testing.assert_array_equal(bundling._degree_order(features, indptr, rows, n), expected)
