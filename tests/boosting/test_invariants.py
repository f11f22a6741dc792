"""Rung 2: histogram sums equal node totals, parent = left + right, partitions are permutations."""
import numpy as np
import pytest

from multigrove.boosting.builder import LocalBuilder
from multigrove.boosting.grower import GrowerConfig, TreeGrower
from multigrove.boosting.leaves import StatLayout
from multigrove.data.binning import BinMapper
from multigrove.data.storage import dense_store
from multigrove.kernels.histogram import build_histogram_chunks


def _setup(rng, n=2000, F=5, k=3, const=False):
    X = rng.normal(size=(n, F))
    X[rng.random((n, F)) < 0.05] = np.nan
    mapper = BinMapper(max_bin=31).fit(X)
    binned = mapper.transform(X)
    layout = StatLayout.make(k, 1.0 if const else None)
    stats = layout.allocate(n)
    stats[:, :k] = rng.normal(size=(n, k))
    if not const:
        stats[:, k:2 * k] = rng.uniform(0.1, 1.0, size=(n, k))
    return X, mapper, binned, layout, stats


def _grow(mapper, binned, layout, config, stats, n_threads=2):
    """One tree through the local builder; (grown tree, (rows, leaf_start, leaf_end))."""
    builder = LocalBuilder(dense_store(binned, mapper.hist_offsets, mapper.missing_bin), n_threads)
    builder.begin(stats, None, config.num_leaves)
    grown = TreeGrower(mapper.hist_offsets, layout, config).grow(builder)
    return grown, builder.leaf_segments(grown.n_leaves)


def test_every_feature_histogram_sums_to_node_totals(rng):
    X, mapper, binned, layout, stats = _setup(rng)
    rows = np.sort(rng.choice(len(X), 700, replace=False)).astype(np.int32)
    hist = np.empty((mapper.total_bins, layout.n_cols))
    store = dense_store(binned, mapper.hist_offsets, mapper.missing_bin)
    build_histogram_chunks(store, rows, stats, np.empty((2,) + hist.shape), hist, np.empty(layout.n_cols))
    total = stats[rows].astype(np.float64).sum(axis=0)
    for f in range(mapper.n_features):
        feature_bins = hist[mapper.hist_offsets[f]:mapper.hist_offsets[f + 1]]
        np.testing.assert_allclose(feature_bins.sum(axis=0), total, rtol=1e-9)
    assert hist[:, layout.count_col].sum() == pytest.approx(len(rows) * mapper.n_features)


@pytest.mark.parametrize("policy", ["leafwise", "depthwise"])
@pytest.mark.parametrize("const", [False, True])
def test_grown_tree_partitions_rows_and_sums_match(rng, policy, const):
    X, mapper, binned, layout, stats = _setup(rng, const=const)
    config = GrowerConfig(num_leaves=15, min_data_in_leaf=10, growth_policy=policy, lambda_l2=1.0)
    grown, (rows, leaf_start, leaf_end) = _grow(mapper, binned, layout, config, stats)
    # leaves' row segments tile the rows, which are a permutation of all rows
    assert np.array_equal(np.sort(rows), np.arange(len(X)))
    order = np.argsort(leaf_start)
    assert leaf_start[order][0] == 0 and leaf_end[order][-1] == len(X)
    assert np.array_equal(leaf_end[order][:-1], leaf_start[order][1:])
    # each leaf's tracked totals (from histograms and subtraction) equal the sums of its rows
    for leaf in range(len(leaf_start)):
        idx = rows[leaf_start[leaf]:leaf_end[leaf]]
        np.testing.assert_allclose(grown.leaf_sums[leaf], stats[idx].astype(np.float64).sum(axis=0),
                                   rtol=1e-7, atol=1e-6)
        assert len(idx) >= 10
    # parent = left + right for every internal node (counts)
    counts = {}

    def count(c):
        return leaf_end[~c] - leaf_start[~c] if c < 0 else counts[c]
    for node in reversed(range(len(grown.split_feature))):
        counts[node] = count(grown.left_child[node]) + count(grown.right_child[node])
        assert counts[node] == grown.internal_count[node]
    assert counts[0] == len(X)


def test_depthwise_respects_max_depth_and_leaf_budget(rng):
    X, mapper, binned, layout, stats = _setup(rng)
    for depth in (1, 2, 3):
        config = GrowerConfig(num_leaves=100, max_depth=depth, min_data_in_leaf=5, growth_policy="depthwise")
        grown, _ = _grow(mapper, binned, layout, config, stats)
        assert grown.n_leaves <= 2 ** depth
    config = GrowerConfig(num_leaves=7, min_data_in_leaf=5, growth_policy="leafwise")
    assert _grow(mapper, binned, layout, config, stats)[0].n_leaves == 7


def test_root_bin_counts_are_counted_once_per_store_and_never_for_a_sample(rng):
    """The column-wise root reuses the full store's bin counts from its first root; a compact
    sample's root goes row-wise and leaves the full store's counts as they are."""
    from multigrove.kernels.histogram import build_histogram_serial
    n, F = 150_000, 10  # half the rows x (codes + statistics) is past the cache-resident size: column-wise roots
    X = rng.normal(size=(n, F))
    mapper = BinMapper(max_bin=31).fit(X)
    store = dense_store(mapper.transform(X), mapper.hist_offsets, mapper.missing_bin)
    layout = StatLayout.make(1, 1.0)
    builder = LocalBuilder(store, 2)

    def root_equals_serial(stats, rows=None):
        builder.begin(stats, rows, 2)
        got = np.empty((mapper.total_bins, layout.n_cols))
        total = builder.root(got)
        sample = np.arange(n, dtype=np.int32) if rows is None else rows
        expect, expect_total = np.empty_like(got), np.empty(layout.n_cols)
        build_histogram_serial(store, sample, stats, expect, expect_total)
        np.testing.assert_allclose(got, expect, rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(total, expect_total, rtol=1e-9)

    for tree in range(4):
        stats = layout.allocate(n)
        stats[:, 0] = rng.normal(size=n)
        counts_before = builder._bin_counts
        if tree == 2:  # a sample of half the rows: a compact store, its root row-wise
            root_equals_serial(stats, np.sort(rng.choice(n, n // 2, replace=False)).astype(np.int32))
            assert builder._bin_counts is counts_before and builder.tree_store is not store
        else:
            root_equals_serial(stats)
            assert builder._bin_counts is not None  # the column-wise root ran and kept the counts
            if tree > 0:  # counted at the first root only, a sample tree between
                assert builder._bin_counts is counts_before


def test_feature_groups_only_over_a_small_csr_part(rng):
    """LocalBuilder's schedule (kernels.partition.split_and_build: -1 = feature groups) for a middle node (a
    dozen row chunks' work): a store whose CSR entries are a large share of a row's updates stays off feature
    groups at every thread count (each group walks every row's entries); a dense store, and one whose few entries
    are at most SPARSE_GROUP_FREE_SHARE of a row's updates, get them from 2 threads.  A node too small for two
    row chunks gets them on every store (its work is mostly its bins')."""
    import scipy.sparse as sp

    from multigrove.data.bundling import plan_layout
    from multigrove.data.storage import build_store
    n = 6_000
    counts = sp.random(n, 60, density=0.15, random_state=0, data_rvs=lambda k: rng.integers(1, 9, k)).toarray()
    X = np.hstack([rng.normal(size=(n, 4)), counts])
    mapper = BinMapper(max_bin=63).fit(X)
    store = build_store(X, mapper, plan_layout(mapper, mapper.transform(X), enable_bundle=False))
    assert store.sparse_bins.shape[0] > 0 and store.dense.shape[1] >= 2
    plain = build_store(X, mapper, plan_layout(mapper, mapper.transform(X), enable_sparse=False,
                                                enable_bundle=False))
    assert plain.sparse_bins.shape[0] == 0
    rare = sp.random(n, 5, density=0.01, random_state=1, data_rvs=lambda k: rng.integers(1, 9, k)).toarray()
    X_rare = np.hstack([rng.normal(size=(n, 20)), rare])
    mapper_rare = BinMapper(max_bin=63).fit(X_rare)
    mostly_dense = build_store(X_rare, mapper_rare, plan_layout(mapper_rare, mapper_rare.transform(X_rare),
                                                                enable_bundle=False))
    assert 0 < mostly_dense.sparse_bins.shape[0] < n
    for binned, groups in ((store, False), (plain, True), (mostly_dense, True)):
        for width in (3, 5):
            for threads in (2, 4, 16):
                builder = LocalBuilder(binned, threads)
                builder.begin(np.zeros((n, width), np.float32), None, 2)
                assert (builder._schedule(3_000) == -1) == groups, (binned is store, width, threads)
                assert builder._schedule(300) == -1, (binned is store, width, threads)


def test_row_chunks_follow_the_work_at_many_threads(rng):
    """A node too small for a chunk a thread gets the chunks it pays for (each CHUNK_MIN_UPDATES_PER_BIN
    updates a bin) rather than one thread, at 16 threads; at 1 and 2 threads and with deterministic=True the
    schedule is the rule from before (serial, or a chunk each of n_chunks).  The histogram built in those
    chunks is the serial kernel's."""
    import scipy.sparse as sp

    from multigrove.boosting.builder import CHUNK_MIN_UPDATES_PER_BIN, PARALLEL_MIN_WORK
    from multigrove.data.bundling import plan_layout
    from multigrove.data.storage import build_store
    from multigrove.kernels.histogram import build_histogram_serial
    n = 40_000
    counts = sp.random(n, 40, density=0.1, random_state=0, data_rvs=lambda k: rng.integers(1, 9, k)).toarray()
    X = np.hstack([rng.normal(size=(n, 4)), counts])
    mapper = BinMapper(max_bin=255).fit(X)
    store = build_store(X, mapper, plan_layout(mapper, mapper.transform(X), enable_bundle=False))
    assert store.sparse_bins.shape[0] > 0  # a CSR part: feature groups for nodes below two chunks only (Otto's)
    width = 5
    stats = rng.normal(size=(n, width)).astype(np.float32)
    per_row = store.dense.shape[1] + store.bundle.shape[1] + store.sparse_bins.shape[0] / n
    unit = CHUNK_MIN_UPDATES_PER_BIN * store.total_bins  # the updates one chunk must carry
    sizes = [int(u * unit / per_row) + 1 for u in (1, 2, 3, 7, 9, 15, 16, 40)]
    for threads, deterministic in ((1, False), (2, False), (16, False), (2, True), (16, True)):
        builder = LocalBuilder(store, threads, deterministic)
        builder.begin(stats, None, 2)
        for rows in sizes:
            schedule = builder._schedule(rows)
            updates = rows * per_row
            old_serial = updates * width < PARALLEL_MIN_WORK or updates < unit * builder.n_chunks
            if threads < 16 or deterministic:  # serial, or by feature groups where threads share it out
                assert (schedule <= 0) == old_serial, (threads, deterministic, rows)
                below_two = updates < unit * (builder.n_chunks if deterministic else 2)  # no two chunks
                assert schedule != -1 or (threads > 1 and below_two), (threads, deterministic, rows)
            if schedule != 1:
                continue
            chunks = builder._scratch_for(1, rows).shape[0]
            if threads < 16 or deterministic:
                assert chunks == builder.n_chunks
            else:
                assert 2 <= chunks <= 16 and chunks * unit <= updates < (chunks + 1) * unit or chunks == 16
    builder = LocalBuilder(store, 16)
    builder.begin(stats, None, 2)
    rows = sizes[4]  # 9 chunks' work: one thread's before
    assert builder._schedule(rows) == 1 and builder._scratch_for(1, rows).shape[0] == 9
    sample = np.sort(rng.choice(n, rows, replace=False)).astype(np.int32)
    builder.leaf_start[0], builder.leaf_end[0] = 0, rows
    builder.rows = sample
    got = np.empty((store.total_bins, width))
    builder.histograms([0], [got])
    expect, total = np.empty_like(got), np.empty(width)
    build_histogram_serial(store, sample, stats, expect, total)
    np.testing.assert_allclose(got, expect, rtol=1e-9, atol=1e-9)


def test_the_schedule_is_chosen_for_the_child_built(rng, monkeypatch):
    """A split's histogram schedule is found for the rows of the child it builds, as the grower counts them
    (SplitRequest.n_left, the rows going left): a split's smaller child is often far below half its node, and
    half the node (what the builder takes without a count) would give a small child the row chunks of a large
    one.  Either way the child's histogram is the serial kernel's."""
    from multigrove.boosting.builder import BUILD_LEFT, SplitRequest
    from multigrove.kernels.histogram import build_histogram_serial
    n = 40_000
    X = rng.normal(size=(n, 24))  # 1.4 MB of binned rows and statistics: not cache-resident (row chunks)
    mapper = BinMapper(max_bin=63).fit(X)
    binned = mapper.transform(X)
    store = dense_store(binned, mapper.hist_offsets, mapper.missing_bin)
    stats = rng.normal(size=(n, 3)).astype(np.float32)
    threshold = 1  # the lowest bins of feature 0: a few per cent of the rows go left
    left = np.flatnonzero(binned[:, 0] <= threshold).astype(np.int32)
    assert 0 < left.shape[0] < n // 10
    asked = []
    find = LocalBuilder._find_schedule
    monkeypatch.setattr(LocalBuilder, "_find_schedule", lambda self, rows: (asked.append(rows), find(self, rows))[1])
    for n_left, expect_asked in ((left.shape[0], left.shape[0]), (-1, n // 2)):
        builder = LocalBuilder(store, 2)
        builder.begin(stats, None, 2)
        asked.clear()
        hist = np.empty((mapper.total_bins, 3))
        builder.split([SplitRequest(0, 1, 0, threshold, False, BUILD_LEFT, None, n_left)], [hist])
        assert asked == [expect_asked]
        expect = np.empty_like(hist)
        build_histogram_serial(store, left, stats, expect, np.empty(0))
        np.testing.assert_allclose(hist, expect, rtol=1e-9, atol=1e-9)
    assert find(builder, left.shape[0]) != find(builder, n // 2)  # the two counts pick different kernels


@pytest.mark.parametrize("params", [
    {},
    {"bagging_fraction": 0.5, "bagging_freq": 1},
    {"data_sample_strategy": "goss"},
    {"growth_policy": "depthwise", "max_depth": 4},
    {"growth_policy": "symmetric", "max_depth": 4},
    {"categorical_feature": [0]},
])
def test_the_grower_counts_the_rows_going_left(rng, monkeypatch, params):
    """Each request's n_left (the grower's count of the rows going left, from its sums) is the partition's,
    with sample weights, bagging, GOSS, every growth policy and set splits of a categorical feature."""
    import multigrove as mg
    from multigrove.boosting import builder as builders
    n = 3000
    X = rng.normal(size=(n, 6))
    X[:, 0] = rng.integers(0, 8, size=n)
    X[rng.random(X.shape) < 0.05] = np.nan
    y = X[:, 1] + np.nan_to_num(X[:, 0]) * 0.3 + rng.normal(scale=0.2, size=n)
    counted, split = [], builders.LocalBuilder.split

    def spy(self, requests, outs, scans=None):
        before = {req.leaf: (int(self.leaf_start[req.leaf]), int(self.leaf_end[req.leaf])) for req in requests}
        split(self, requests, outs, scans)
        counted.extend((req.n_left, int(self.leaf_end[req.leaf]) - before[req.leaf][0]) for req in requests)
    monkeypatch.setattr(builders.LocalBuilder, "split", spy)
    mg.train({"verbosity": -1, "num_threads": 2, "num_leaves": 15, **params},
             mg.Dataset(X, y, weight=rng.uniform(0.5, 2.0, size=n)), 5)
    assert len(counted) > 20
    assert all(expect == got for expect, got in counted), [c for c in counted if c[0] != c[1]][:5]
