"""Rung 1 for kernels.split_step: the partition, the smaller child's histogram and both children's scan in one
call give, bit for bit, what kernels.partition.split_and_build and kernels.split.best_splits give one after the
other (each with naive twins of its own), for every kind of scan, one or two nodes, a child below and above
the feature groups' minimum work, a partition on one thread or in chunks, and dense stores as well as stores
with a CSR part and derived default bins (with and without a dense column, whose bins give the sums).  A batch
of such splits in one call (split_batch, a task a split, or split_batch_groups, a task a feature group) gives what
the serial split and scan give for each in turn."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from multigrove.boosting.builder import feature_groups
from multigrove.data.binning import BinMapper
from multigrove.data.bundling import plan_layout
from multigrove.data.storage import build_store
from multigrove.kernels.histogram import FEATURE_GROUP_MIN_WORK, build_histogram_serial, row_updates
from multigrove.kernels.partition import SplitRule, partition_rows, serial_split_kernel, split_and_build
from multigrove.kernels.split import SCAN_KERNELS, FeatureSplits, NodeSplits, ScanParams, scan_kind, scan_scratch
from multigrove.kernels.split_step import SPLIT_STEPS, ScanBatch, ScanJob, SplitBatch, split_batch_kernel
from multigrove.kernels.store import dense_only

SETTINGS = settings(max_examples=50, deadline=None)

#: (k, h_col, h_stride, h_scale, count_col, width, topk) of each kind of scan: one output with a constant
#: Hessian, a sketch's shared Hessian, a Hessian per output, top-k leaves (every kind's scan)
LAYOUTS = {
    "one_output": (1, 1, 0, 1.0, 1, 2, 0),
    "shared": (3, 3, 0, 1.0, 4, 5, 0),
    "own": (2, 2, 1, 1.0, 4, 5, 0),
    "any": (3, 3, 1, 1.0, 6, 7, 1),
}


@st.composite
def node_problem(draw):
    """A store (dense, or with rare features in a CSR part and derived default bins), a node of it and a split."""
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    n = draw(st.integers(20, 900))
    n_features = draw(st.integers(1, 6))
    X = rng.normal(size=(n, n_features)).round(draw(st.sampled_from([1, 3])))
    n_rare = draw(st.integers(0, 5))  # mostly zero: stored as CSR entries, their zero bins derived
    if n_rare:
        rare = np.where(rng.random((n, n_rare)) < 0.1, rng.normal(size=(n, n_rare)).round(2), 0.0)
        X = np.column_stack([X[:, :draw(st.integers(0, n_features))], rare])  # maybe no dense column
        n_features = X.shape[1]
    X[rng.random(X.shape) < draw(st.sampled_from([0.0, 0.05]))] = np.nan
    mapper = BinMapper(max_bin=draw(st.sampled_from([8, 63])), sample_cnt=n, seed=0)
    mapper.fit(X)
    store = build_store(X, mapper, plan_layout(mapper, X, n_rare > 0, False))
    kind = draw(st.sampled_from(sorted(LAYOUTS)))
    k, h_col, h_stride, h_scale, count_col, width, topk = LAYOUTS[kind]
    stats = rng.normal(size=(n, width)).astype(np.float32)
    stats[:, k:count_col] = rng.random(size=(n, count_col - k)).astype(np.float32) + 0.1  # Hessians
    stats[:, count_col] = 1.0
    params = ScanParams(k, h_col, h_stride, h_scale, count_col, draw(st.sampled_from([0.0, 1.0])),
                        draw(st.sampled_from([1, 5, 20])), 1e-3, 0.0, topk, False)
    assert scan_kind(params) == kind
    rows = np.sort(rng.choice(n, int(rng.integers(2, n + 1)), replace=False)).astype(np.int32)
    f = int(rng.integers(0, n_features))
    rule = SplitRule(f, int(rng.integers(0, max(1, mapper.n_value_bins[f]))), bool(rng.integers(0, 2)))
    return rng, store, stats, params, rows, rule, draw(st.integers(1, 2)), draw(st.integers(1, 3)), \
        draw(st.integers(1, 4))


@SETTINGS
@given(node_problem(), st.sampled_from([1, 2]), st.booleans())
def test_split_step_equals_the_split_then_the_scan(problem, build, noisy):
    _check_split_step(problem, build, noisy)


@pytest.mark.parametrize("n_dense", [0, 3])
def test_feature_groups_derive_the_default_bins_of_a_csr_part(n_dense):
    """A node large enough for the feature groups (the generated ones mostly are not) on a store with a CSR part:
    each group derives its own features' default bins from the child's sums, found as the serial kernel finds them
    (the first dense column's bins, or without one the rows' sums)."""
    rng = np.random.default_rng(n_dense)
    n = 3000 if n_dense else 40000  # without a dense column a row updates about one bin
    rare = np.where(rng.random((n, 6)) < 0.15, rng.normal(size=(n, 6)).round(2), 0.0)
    X = np.column_stack([rng.normal(size=(n, n_dense)).round(2), rare])
    mapper = BinMapper(max_bin=31, sample_cnt=n, seed=0)
    mapper.fit(X)
    store = build_store(X, mapper, plan_layout(mapper, X, True, False))
    assert store.derived.shape[0] >= 6 and store.dense.shape[1] == n_dense
    k, h_col, h_stride, h_scale, count_col, width, topk = LAYOUTS["shared"]
    stats = rng.normal(size=(n, width)).astype(np.float32)
    stats[:, count_col] = 1.0
    params = ScanParams(k, h_col, h_stride, h_scale, count_col, 1.0, 5, 1e-3, 0.0, topk, False)
    rows = np.arange(n, dtype=np.int32)
    # a dense feature at its middle bin, or a sparse one at its zero bin (the positive values go right)
    feature = 0 if n_dense else n_dense
    rule = SplitRule(feature, int(mapper.n_value_bins[0] // 2) if n_dense else int(store.default_bin[feature]), True)
    groups = feature_groups(store, 2)
    assert groups.n_groups == 2
    problem = (rng, store, stats, params, rows, rule, 2, 1, 2)
    for build in (1, 2):
        child = _check_split_step(problem, build, False)
        assert child.shape[0] * row_updates(store) * width >= FEATURE_GROUP_MIN_WORK  # groups built it


def _check_split_step(problem, build, noisy):
    """split_step against split_and_build then best_splits on ``problem`` (node_problem's); returns the child's
    rows."""
    rng, store, stats, params, rows, rule, n_nodes, n_chunks, n_groups = problem
    n, C = stats.shape[0], stats.shape[1]
    F = store.n_features
    groups = feature_groups(store, n_groups)
    offsets = store.offsets.astype(np.int64)
    parent = np.empty((store.total_bins, C))
    build_histogram_serial(store, rows, stats, parent, np.empty(0))
    mask = rng.random(F) < 0.8
    noise = rng.normal(size=(2, F)) if noisy else np.zeros((2, F))
    active = np.array([bool(rng.integers(0, 2)), True])[:n_nodes]

    def run(fused):
        node_rows, hist, h1 = rows.copy(), np.full((store.total_bins, C), np.nan), parent.copy()
        per_feature, best = FeatureSplits.allocate(2, F), NodeSplits.allocate(2, C)
        totals = np.empty((2, C))
        args = (store, node_rows, 0, rows.shape[0], rule, build, stats)
        tmp, marks, counts = np.empty(n, np.int32), np.zeros(0, np.uint8), np.zeros(n_chunks, np.int64)
        if fused:
            # the children's sums as the grower has them (from the parent's scan): here, their rows' sums
            child = _child(rows, rule, store, build)
            totals[0] = stats[child].sum(0, dtype=np.float64)
            totals[1] = stats[rows].sum(0, dtype=np.float64) - totals[0]
            second = h1 if n_nodes == 2 else hist
            job = ScanJob(second, n_nodes == 2, totals, offsets, mask, params, scan_scratch(C, params), active,
                          noise, per_feature, best)
            n_left = SPLIT_STEPS[scan_kind(params)](*args, groups, tmp, marks, counts, hist, job, None)
        else:
            sums = np.empty(C if store.derived.shape[0] else 0)  # the builder's: its default bins are derived from them
            n_left = split_and_build(*args, -1, groups, tmp, marks, counts, np.empty((1, 1, 1)), hist, sums)
            child = node_rows[:n_left] if build == 1 else node_rows[n_left:]
            totals[0] = stats[child].sum(0, dtype=np.float64)
            totals[1] = stats[rows].sum(0, dtype=np.float64) - totals[0]
            full_active = np.array([active[0], n_nodes == 2])
            SCAN_KERNELS[scan_kind(params)].best_splits(hist, h1 if n_nodes == 2 else hist, n_nodes, n_nodes == 2,
                                                        totals, offsets, mask, params, None, scan_scratch(C, params),
                                                        full_active, noise, per_feature, best)
        return n_left, node_rows, hist, h1, per_feature, best

    expect, got = run(False), run(True)
    assert got[0] == expect[0]
    for a, b in zip(got[1:4], expect[1:4]):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(got[4], expect[4]):  # FeatureSplits of the scanned nodes
        np.testing.assert_array_equal(a[:n_nodes], b[:n_nodes])
    best, expect_best = got[5], expect[5]
    np.testing.assert_array_equal(best.gain[:n_nodes], expect_best.gain[:n_nodes])
    np.testing.assert_array_equal(best.feature[:n_nodes], expect_best.feature[:n_nodes])
    split = best.feature[:n_nodes] >= 0  # a node without a split leaves the rest of its row unwritten
    for a, b in zip(best[2:], expect_best[2:]):
        np.testing.assert_array_equal(a[:n_nodes][split], b[:n_nodes][split])
    assert split.any() or not np.isfinite(best.gain[:n_nodes]).any()
    return _child(rows, rule, store, build)


def _child(rows, rule, store, build):
    """The rows of the child ``build`` names, from a partition of a copy of ``rows`` (split_step partitions its
    own rows only when it runs, and the job needs the children's sums before)."""
    copy = rows.copy()
    n_left = partition_rows(store, copy, 0, copy.shape[0], rule, np.empty(store.n_rows, np.int32),
                            np.zeros(0, np.uint8))
    return copy[:n_left] if build == 1 else copy[n_left:]


@SETTINGS
@given(node_problem(), st.integers(1, 4))
def test_split_batch_equals_each_split_then_its_scan(problem, n_splits):
    """kernels.split_step.split_batch (a task a split: the partition, the smaller child's histogram and the scan of
    its children, on one thread) gives, bit for bit, the serial split then the serial scan of each split in turn:
    several nodes (contiguous segments of one rows array), each with its own rule, child, scanned nodes and
    feature mask, their histograms in the slots of one block."""
    rng, store, stats, params, rows, _, _, _, _ = problem
    C, F = stats.shape[1], store.n_features
    offsets = store.offsets.astype(np.int64)
    cuts = np.sort(rng.choice(np.arange(1, rows.shape[0]), min(n_splits - 1, rows.shape[0] - 1), replace=False))
    bounds = np.concatenate([[0], cuts, [rows.shape[0]]]).astype(np.int64)
    m = bounds.shape[0] - 1
    features = rng.integers(0, F, m)
    thresholds = np.array([rng.integers(0, max(1, offsets[f + 1] - offsets[f] - 1)) for f in features], np.int64)
    default_left, builds = rng.integers(0, 2, m).astype(np.bool_), rng.integers(1, 3, m)
    n_nodes, masks = rng.integers(1, 3, m), rng.random((m, F)) < 0.8
    active = np.column_stack([rng.integers(0, 2, m).astype(np.bool_), n_nodes == 2])
    rules = [SplitRule(int(features[i]), int(thresholds[i]), bool(default_left[i])) for i in range(m)]
    totals = np.empty((2 * m, C))
    parents = np.empty((m, store.total_bins, C))
    for i in range(m):  # each node's histogram, and its children's sums as the grower has them (from the parent's)
        segment = rows[bounds[i]:bounds[i + 1]]
        build_histogram_serial(store, segment, stats, parents[i], np.empty(0))
        child = _child(segment, rules[i], store, builds[i])
        totals[2 * i] = stats[child].sum(0, dtype=np.float64)
        totals[2 * i + 1] = stats[segment].sum(0, dtype=np.float64) - totals[2 * i]
    sums = C if store.derived.shape[0] else 0  # the builder's: its default bins are derived from them
    dense, kind = dense_only(store), scan_kind(params)

    expect_rows, expect_n_left = rows.copy(), []
    expect_hists, expect_parents = np.full_like(parents, np.nan), parents.copy()
    expect_found, expect_best = FeatureSplits.allocate(2 * m, F), NodeSplits.allocate(2 * m, C)
    for i in range(m):
        n_left = serial_split_kernel(dense, C)(store, expect_rows, bounds[i], bounds[i + 1], rules[i], builds[i],
                                               stats, np.empty(store.n_rows, np.int32), np.zeros(0, np.uint8),
                                               expect_hists[i], np.empty(sums))
        expect_n_left.append(n_left)
        nodes = slice(2 * i, 2 * i + 2)
        two = n_nodes[i] == 2
        SCAN_KERNELS[kind].best_splits_serial(
            expect_hists[i], expect_parents[i] if two else expect_hists[i], n_nodes[i], two, totals[nodes], offsets,
            masks[i], params, None, scan_scratch(C, params), active[i], np.zeros((2, F)),
            FeatureSplits(*(a[nodes] for a in expect_found)), NodeSplits(*(a[nodes] for a in expect_best)))

    for n_groups in (0, int(rng.integers(1, 6))):  # a task a split (split_batch), or by feature groups
        groups = feature_groups(store, n_groups) if n_groups else None
        got_rows, hists, splits, found, best = _run_split_batch(
            store, rows, stats, params, bounds, features, thresholds, default_left, builds, n_nodes, active, masks,
            totals, parents, sums, groups)
        np.testing.assert_array_equal(got_rows, expect_rows)
        np.testing.assert_array_equal(splits.n_left, expect_n_left)
        np.testing.assert_array_equal(hists[0::2], expect_hists)
        for i in range(m):
            if n_nodes[i] == 2:  # the parent's slot holds the larger child's histogram
                np.testing.assert_array_equal(hists[2 * i + 1], expect_parents[i])
            scanned = slice(2 * i, 2 * i + n_nodes[i])
            for a, b in zip(found, expect_found):
                np.testing.assert_array_equal(a[scanned], b[scanned])
            np.testing.assert_array_equal(best.gain[scanned], expect_best.gain[scanned])
            np.testing.assert_array_equal(best.feature[scanned], expect_best.feature[scanned])
            split = best.feature[scanned] >= 0  # a node without a split leaves the rest of its row unwritten
            for a, b in zip(best[2:], expect_best[2:]):
                np.testing.assert_array_equal(a[scanned][split], b[scanned][split])


def _run_split_batch(store, rows, stats, params, bounds, features, thresholds, default_left, builds, n_nodes, active,
                     masks, totals, parents, sums, groups):
    """split_batch (groups None) or split_batch_groups over the batch test_split_batch_equals_each_split_then_its_scan
    draws: (rows, histograms by slot, SplitBatch, FeatureSplits, NodeSplits) after the call."""
    m, C, F = bounds.shape[0] - 1, stats.shape[1], store.n_features
    got_rows = rows.copy()
    hists = np.full((2 * m, store.total_bins, C), np.nan)  # split i builds in slot 2i; its parent is in 2i + 1
    hists[1::2] = parents
    out_slot = np.arange(0, 2 * m, 2)
    splits = SplitBatch(np.column_stack([bounds[:-1], bounds[1:], features, thresholds, default_left,
                                         builds]).astype(np.int64),  # SPLIT_* columns
                        np.empty((m, sums)), np.empty(m, np.int64))
    scan_plan = np.column_stack([out_slot, np.where(n_nodes == 2, out_slot + 1, out_slot), n_nodes == 2, n_nodes])
    spare = 2  # the grower's buffers may hold more rows than the batch has splits: rows the kernel must not read
    scratch_rows = m + spare if groups is None else max(m + spare, groups.n_groups)  # a row a split, or a group
    scans = ScanBatch(hists, np.vstack([scan_plan, np.full((spare, 4), -1)]).astype(np.int64),
                      np.vstack([active, np.ones((spare, 2), np.bool_)]),
                      np.vstack([totals, np.full((2 * spare, C), np.nan)]),
                      np.vstack([masks, np.ones((spare, F), np.bool_)]),
                      np.empty((scratch_rows, scan_scratch(C, params).shape[1])), np.zeros((2, F)))
    found, best = FeatureSplits.allocate(2 * m, F), NodeSplits.allocate(2 * m, C)
    kernel = split_batch_kernel(dense_only(store), C, scan_kind(params), groups is not None)
    by_groups = () if groups is None else (groups,)
    kernel(store, got_rows, stats, np.empty(store.n_rows, np.int32), np.zeros(0, np.uint8), np.zeros(0, np.bool_),
           splits, store.offsets.astype(np.int64), params, scans, *by_groups, found, best)
    return got_rows, hists, splits, found, best
