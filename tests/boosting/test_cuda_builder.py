"""The CUDA builder (device_type="cuda") in Numba's CUDA simulator: its kernels against naive twins, and the
trees it grows against the CPU builder's.

CI has no GPU: NUMBA_ENABLE_CUDASIM=1 runs every CUDA thread as Python.  It must be set before numba.cuda is
first imported; the Makefile's test target sets it, and this module sets it when numba.cuda is not loaded yet.
The CUDA builder sums histograms in float64 with atomic adds (any order), so trees are compared by their
structure and their outputs to float64 rounding.
"""
import os
import sys

import numba
import numpy as np
import pytest

if "numba.cuda" not in sys.modules:
    os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")
    numba.config.ENABLE_CUDASIM = int(os.environ["NUMBA_ENABLE_CUDASIM"])

from numba import cuda  # noqa: E402

import multigrove as mg  # noqa: E402
from multigrove.boosting import cuda_builder  # noqa: E402
from multigrove.boosting.builder import BUILD_LEFT, LocalBuilder, SplitRequest  # noqa: E402
from multigrove.boosting.cuda_builder import CudaBuilder, check_cuda_store  # noqa: E402
from multigrove.boosting.grower import HistogramPool  # noqa: E402
from multigrove.data.storage import dense_store  # noqa: E402
from multigrove.kernels import cuda as kernels  # noqa: E402

from ..kernels import naive  # noqa: E402


def _launch(kernel, n, *args):
    kernel[kernels.blocks_for(n), kernels.THREADS_PER_BLOCK](*args)


def _binned(rng, n=150, n_features=3, bins=5):
    binned = rng.integers(0, bins + 1, size=(n, n_features)).astype(np.uint8)  # bin `bins`: missing
    offsets = np.arange(n_features + 1, dtype=np.int64) * (bins + 1)
    return binned, offsets


@pytest.mark.parametrize("width, cells, threads", [(3, 40, 16), (7, 20, 16), (2, 6144, 16), (2, 6144, 5)])
def test_tiled_histogram_kernel_equals_naive(width, cells, threads, monkeypatch):
    """Shared-memory tiles (small ``cells`` split the statistics and the columns), segments cut in shares;
    5 threads: fewer than a tile's (column, statistic) slots."""
    monkeypatch.setattr(cuda_builder, "MIN_SHARE_ROWS", 40)
    rng = np.random.default_rng(width)
    binned, offsets = _binned(rng, n=300, n_features=4)
    stats = rng.normal(size=(binned.shape[0], width)).astype(np.float32)
    rows = rng.permutation(binned.shape[0]).astype(np.int32)
    segments = [(7, 160), (200, 90), (290, 0)]
    total_bins = int(offsets[-1])
    tiles = cuda_builder.histogram_tiles_of(offsets[:-1], total_bins, width, cells)
    assert tiles is not None and np.all((tiles[:, 5] - tiles[:, 4]) * (tiles[:, 3] - tiles[:, 2]) <= cells)
    work = cuda_builder.row_shares([start for start, _ in segments], [n for _, n in segments], tiles.shape[0],
                                   target_blocks=400)
    assert np.sum((work[:, 0] == 0) & (work[:, 1] == 0)) > 1  # the first segment in several shares
    out = cuda.to_device(np.full((4 * total_bins, width), np.nan))  # four slots; slot 1 is none of the outputs'
    slots = np.array([2, 0, 3], np.int64)
    plan = cuda.to_device(np.r_[np.c_[slots, np.zeros((3, 3), np.int64)], work])  # the slots, then the work
    _launch(kernels.zero_slots, slots.size * total_bins * width, out, plan, slots.size, total_bins)
    kernels.histogram_tiles[min(work.shape[0], 7), threads](
        cuda.to_device(binned), cuda.to_device(offsets[:-1].copy()), cuda.to_device(rows), cuda.to_device(stats),
        cuda.to_device(tiles), plan, slots.size, total_bins, out)
    got = out.copy_to_host()
    for (start, count), slot in zip(segments, slots):
        expect = naive.histogram(binned, rows[start:start + count], stats, offsets)
        np.testing.assert_allclose(got[slot * total_bins:(slot + 1) * total_bins], expect, rtol=1e-12, atol=1e-12)
    assert np.isnan(got[total_bins:2 * total_bins]).all()  # a slot not listed is not touched


def test_histogram_tiles_cover_every_cell_once():
    base = np.array([0, 256, 300, 556, 557], np.int64)  # bins 256, 44, 256, 1, 3
    for width, cells in [(1, 6144), (5, 6144), (400, 6144), (3, 300)]:
        tiles = cuda_builder.histogram_tiles_of(base, 560, width, cells)
        covered = np.zeros((560, width), int)
        for first, _, first_stat, end_stat, first_bin, end_bin in tiles:
            assert first_bin == base[first] and (end_bin - first_bin) * (end_stat - first_stat) <= cells
            covered[first_bin:end_bin, first_stat:end_stat] += 1
        np.testing.assert_array_equal(covered, 1)
    assert cuda_builder.histogram_tiles_of(base, 560, 1, 200) is None  # a 256-bin column exceeds 200 cells
    assert cuda_builder.histogram_tiles_of(base[::-1].copy(), 560, 1, 6144) is None  # not in column order
    work = cuda_builder.row_shares([100, 9000, 5100], [5000, 0, 3000], n_tiles=2, target_blocks=64)
    assert set(work[:, 0]) == {0, 2} and np.all(work[:, 3] - work[:, 2] >= cuda_builder.MIN_SHARE_ROWS // 2)
    assert np.sum(work[:, 0] == 0) == 2 * 3  # 5,000 rows in three shares of 2,048 rows at least, two tiles
    for segment, start, count in [(0, 100, 5000), (2, 5100, 3000)]:
        for tile in range(2):
            mine = work[(work[:, 0] == segment) & (work[:, 1] == tile)]
            np.testing.assert_array_equal(np.sort(np.concatenate([np.arange(a, b) for a, b in mine[:, 2:]])),
                                          np.arange(start, start + count))


@pytest.mark.parametrize("default_left, threads", [(False, 16), (True, 2)])
def test_partition_kernels_equal_naive(default_left, threads, monkeypatch):
    """Two segments partitioned in one launch, each in two shares: a numeric split and a set split.  Two
    threads scatter a share in passes of 2 x SCATTER_RUN rows (a 35-row share: two passes)."""
    monkeypatch.setattr(cuda_builder, "MIN_SHARE_ROWS", 35)
    rng = np.random.default_rng(3)
    binned, offsets = _binned(rng)
    n_rows = binned.shape[0]
    rows = rng.permutation(n_rows).astype(np.int32)
    segments = [(10, 70), (95, 50)]  # rows[10:80] and rows[95:145]
    threshold, missing = 2, 5  # the first split on column 1, the second on column 2
    categories = rng.random(6) < 0.5  # the second split's set (bins 0..5)
    rules = np.array([[10, 1, threshold, missing, default_left, 0, 0, 0, -1],
                      [95, 2, 0, missing, 0, 0, 6, 0, -1]], np.int64)  # kernels.RULE_* columns
    work = cuda_builder.row_shares([10, 95], [70, 50], 1, target_blocks=8)
    assert np.sum(work[:, 0] == 0) == 2 and np.max(work[:, 3] - work[:, 2]) > 2 * kernels.SCATTER_RUN
    plan = cuda.to_device(np.r_[rules, np.c_[work, np.zeros((work.shape[0], 5), np.int64)]])  # rules, then work
    d_rows, goes_left = cuda.to_device(rows), cuda.device_array(n_rows, np.uint8)
    share_left, tmp = cuda.device_array(work.shape[0], np.int64), cuda.device_array(n_rows, np.int32)
    mismatch = cuda.to_device(np.zeros(1, np.int64))
    kernels.count_sides[3, threads](cuda.to_device(binned), d_rows, plan, 2, cuda.to_device(categories), goes_left,
                                    share_left)
    kernels.scatter_sides[3, threads](d_rows, plan, 2, goes_left, share_left, tmp, mismatch)
    kernels.copy_shares[3, threads](tmp, d_rows, plan, 2)
    got, lefts = d_rows.copy_to_host(), plan.copy_to_host()[:2, kernels.RULE_N_LEFT]
    assert mismatch.copy_to_host()[0] == 0  # no count taken by the host (-1): nothing to check
    untouched = np.ones(n_rows, bool)
    for k, (start, count) in enumerate(segments):
        segment = rows[start:start + count]
        if k == 1:
            left = categories[binned[segment, 2]]
        else:
            expect, expect_left = naive.partition(rows.copy(), start, start + count, binned, 1, threshold, missing,
                                                  default_left)
            left = np.isin(segment, expect[start:start + expect_left])
        assert lefts[k] == int(left.sum())  # a stable partition: each side in the segment's order
        np.testing.assert_array_equal(got[start:start + count], np.concatenate([segment[left], segment[~left]]))
        untouched[start:start + count] = False
    np.testing.assert_array_equal(got[untouched], rows[untouched])
    # the counts the host took for the segments, checked by scatter_sides: the right ones pass, a wrong one is flagged
    for expected, flagged in (lefts, 0), ((lefts[0], lefts[1] + 1), 1):
        checked = np.r_[rules, np.c_[work, np.zeros((work.shape[0], 5), np.int64)]]
        checked[:2, kernels.RULE_N_LEFT] = lefts
        checked[:2, kernels.RULE_EXPECTED_LEFT] = expected
        kernels.scatter_sides[3, threads](cuda.to_device(rows), cuda.to_device(checked), 2, goes_left, share_left,
                                          tmp, mismatch)
        assert mismatch.copy_to_host()[0] == flagged


def _data(rng, n=128, n_features=4):  # one block of THREADS_PER_BLOCK: the simulator runs a thread each
    X = rng.normal(size=(n, n_features))
    X[rng.random(X.shape) < 0.1] = np.nan
    return X


def _targets(kind, X, rng):
    signal = np.nan_to_num(X[:, :3])
    if kind == "regression":
        return {}, signal[:, 0] + 0.1 * rng.normal(size=X.shape[0])
    if kind == "multi_target":
        return {}, signal + 0.1 * rng.normal(size=signal.shape)
    if kind == "multiclass":
        return {"objective": "multiclass", "num_class": 3}, np.argmax(signal, axis=1)
    return {"objective": "multilabel"}, (signal > 0).astype(float)


def _assert_same_forest(cpu, gpu, X, rtol=1e-9):
    """Equal trees; leaf values and predictions within ``rtol`` (1e-9: float64 sums in another order; 1e-6 for
    the classification losses, whose GPU exponentials may round a probability's float32 statistic the other
    way in the last bit)."""
    assert len(cpu.trees) == len(gpu.trees)
    for ta, tb in zip(cpu.trees, gpu.trees):
        a, b = ta.to_dict(), tb.to_dict()
        for key in ("split_feature", "threshold_bin", "default_left", "left_child", "right_child", "output_cols",
                    "leaf_cols", "leaf_count"):
            assert a[key] == b[key], key
        np.testing.assert_allclose(tb.leaf_value, ta.leaf_value, rtol=rtol, atol=1e-12)
    np.testing.assert_allclose(gpu.predict(X, raw_score=True), cpu.predict(X, raw_score=True), rtol=rtol, atol=1e-9)


CASES = [
    ("regression", {}),
    ("multi_target", {}),
    ("multiclass", {}),
    ("multilabel", {}),
    ("multi_target", {"growth_policy": "depthwise", "max_depth": 3}),
    ("multiclass", {"growth_policy": "symmetric", "max_depth": 2}),
    ("multiclass", {"sketch": "random_projection", "sketch_k": 2}),
    ("multilabel", {"leaf_sparsity": 1}),
    ("regression", {"bagging_fraction": 0.6, "bagging_freq": 1}),
    ("multi_target", {"data_sample_strategy": "goss", "top_rate": 0.3, "other_rate": 0.3}),
    ("multi_target", {"feature_fraction": 0.5}),
    ("multi_target", {"multi_strategy": "one_vs_all", "bagging_temperature": 1.0}),
    ("multilabel", {"sketch": "top_outputs", "sketch_k": 2, "random_strength": 1.0}),
    ("multi_target", {"histogram_pool_size": 0}),  # dropped device histograms built again from their rows
]


@pytest.mark.parametrize("kind, extra", CASES)
def test_cuda_trees_equal_cpu_trees(kind, extra):
    rng = np.random.default_rng(11)
    X = _data(rng)
    params, y = _targets(kind, X, rng)
    params = {"verbosity": -1, "num_leaves": 6, "min_data_in_leaf": 8, "num_threads": 1, **params, **extra}
    cpu = mg.train(params, mg.Dataset(X, y), 2)
    gpu = mg.train({**params, "device": "cuda"}, mg.Dataset(X, y), 2)
    _assert_same_forest(cpu, gpu, X, 1e-9 if kind in ("regression", "multi_target") else 1e-6)


#: (kind, parameters, the Dataset's other inputs) beyond CASES: row weights, initial scores, missing labels, CSR
#: rows, the binary objective and the svd sketch (about 7 s a case in the simulator)
DATA_CASES = [
    ("multiclass", {"sketch": "svd", "sketch_k": 2}, "weight"),
    ("multi_target", {}, "init_score"),
    ("multilabel", {}, "missing labels"),
    ("binary", {"objective": "binary"}, "csr"),
]


@pytest.mark.parametrize("kind, extra, inputs", DATA_CASES)
def test_cuda_trees_equal_cpu_trees_on_weights_offsets_and_csr_rows(kind, extra, inputs):
    import scipy.sparse as sp
    rng = np.random.default_rng(13)
    X = _data(rng)
    params, y = _targets("multi_target" if kind == "binary" else kind, X, rng)
    if kind == "binary":
        y = (y[:, 0] > 0).astype(float)
    dataset = {}
    if inputs == "weight":
        dataset["weight"] = rng.uniform(0.2, 2.0, size=X.shape[0])
    elif inputs == "init_score":
        dataset["init_score"] = rng.normal(size=y.shape)
    elif inputs == "missing labels":
        y = np.where(rng.random(y.shape) < 0.1, np.nan, y)
    elif inputs == "csr":
        X = sp.csr_matrix(np.nan_to_num(X))
    params = {"verbosity": -1, "num_leaves": 6, "min_data_in_leaf": 8, "num_threads": 1, **params, **extra}
    cpu = mg.train(params, mg.Dataset(X, y, **dataset), 2)
    gpu = mg.train({**params, "device_type": "cuda"}, mg.Dataset(X, y, **dataset), 2)
    _assert_same_forest(cpu, gpu, X, 1e-9 if kind in ("regression", "multi_target") else 1e-6)


@pytest.mark.parametrize("extra", [{}, {"bagging_fraction": 0.7, "bagging_freq": 1}])
def test_cuda_leafwise_splits_go_ahead_in_fewer_builder_calls(extra, monkeypatch):
    """Leaf-wise growth sends the CUDA builder the leaf in turn and the next ones (CudaBuilder.splits_ahead): fewer
    calls, the same trees as one split a call and as the CPU's (the rows a sample left out follow at commit)."""
    rng = np.random.default_rng(12)
    X = _data(rng, n=256)
    params, y = _targets("multi_target", X, rng)
    params = {"verbosity": -1, "num_leaves": 10, "min_data_in_leaf": 6, "num_threads": 1, **params, **extra}
    calls = []
    split = CudaBuilder.split

    def counted(self, requests, outs, scans=None):
        calls.append([req.new_leaf for req in requests])
        return split(self, requests, outs, scans)

    monkeypatch.setattr(CudaBuilder, "split", counted)
    ahead = mg.train({**params, "device_type": "cuda"}, mg.Dataset(X, y), 2)
    batched = list(calls)
    calls.clear()
    monkeypatch.setattr(CudaBuilder, "splits_ahead", 1)
    one_at_a_time = mg.train({**params, "device_type": "cuda"}, mg.Dataset(X, y), 2)
    assert all(len(call) == 1 and call[0] >= 0 for call in calls)
    assert any(new_leaf < 0 for call in batched for new_leaf in call)  # splits ahead of their turn
    assert len(batched) < len(calls)
    _assert_same_forest(one_at_a_time, ahead, X, rtol=1e-12)
    _assert_same_forest(mg.train(params, mg.Dataset(X, y), 2), ahead, X)


def test_cuda_categorical_set_splits_equal_cpu():
    rng = np.random.default_rng(5)
    n = 240
    codes = rng.integers(0, 8, size=n)
    X = np.c_[codes, rng.normal(size=n)]
    y = np.where(np.isin(codes, [1, 4, 6]), 2.0, -1.0) + 0.1 * rng.normal(size=n)
    params = {"verbosity": -1, "num_leaves": 4, "min_data_in_leaf": 5, "min_data_per_group": 5,
              "max_cat_to_onehot": 2, "categorical_feature": [0], "num_threads": 1}
    cpu = mg.train(params, mg.Dataset(X, y), 2)
    gpu = mg.train({**params, "device_type": "cuda"}, mg.Dataset(X, y), 2)
    assert gpu.trees[0].has_set_splits  # the partition kernel ran a set split
    _assert_same_forest(cpu, gpu, X)


def test_cuda_refuses_what_it_does_not_run(monkeypatch):
    rng = np.random.default_rng(0)
    X, y = _data(rng, 100), rng.normal(size=100)
    with pytest.raises(ValueError, match="device_type must be one of"):
        mg.train({"device_type": "gpu", "verbosity": -1}, mg.Dataset(X, y), 1)
    Y = (rng.random((100, 5)) < 0.2).astype(float)
    import scipy.sparse as sp
    with pytest.raises(ValueError, match="trains on the CPU only"):
        mg.train({"objective": "sparse_squared", "device_type": "cuda", "verbosity": -1},
                 mg.Dataset(X, sp.csr_matrix(Y)), 1)
    # a Dataset already binned with bundles and sparse entries (for the CPU)
    X_sparse = np.where(rng.random((300, 6)) < 0.9, 0.0, rng.normal(size=(300, 6)))
    ds = mg.Dataset(X_sparse, rng.normal(size=300), params={"enable_bundle": True, "is_enable_sparse": True})
    ds.construct(mg.Params(), 1)
    with pytest.raises(ValueError, match="dense binned columns"):
        check_cuda_store(ds.store)
    with pytest.raises(ValueError, match="deterministic=True needs device_type='cpu'"):
        mg.train({"device_type": "cuda", "deterministic": True, "verbosity": -1}, mg.Dataset(X, y), 1)
    # no GPU: a clear error, never a silent run on the CPU
    monkeypatch.setattr(cuda, "is_available", lambda: False)
    with pytest.raises(RuntimeError, match="no CUDA GPU"):
        mg.train({"device_type": "cuda", "verbosity": -1}, mg.Dataset(X, y), 1)


def test_cuda_dataset_binned_dense_and_estimators_take_device_type():
    rng = np.random.default_rng(2)
    X_sparse = np.where(rng.random((128, 6)) < 0.9, 0.0, rng.normal(size=(128, 6)))
    y = X_sparse[:, 0] + 0.1 * rng.normal(size=128)
    ds = mg.Dataset(X_sparse, y)
    booster = mg.train({"device_type": "cuda", "verbosity": -1, "min_data_in_leaf": 5}, ds, 2)
    assert ds.store.bundle.shape[1] == 0 and ds.store.sparse_bins.shape[0] == 0
    cpu = mg.train({"verbosity": -1, "min_data_in_leaf": 5, "enable_bundle": False, "is_enable_sparse": False},
                   mg.Dataset(X_sparse, y), 2)
    np.testing.assert_allclose(booster.predict(X_sparse), cpu.predict(X_sparse), rtol=1e-9, atol=1e-9)
    model = mg.GroveRegressor(n_estimators=2, device_type="cuda", early_stopping=False, verbosity=-1,
                              min_data_in_leaf=5).fit(X_sparse, y)
    assert model.get_params()["device_type"] == "cuda"
    assert model.predict(X_sparse).shape == (128,)


def _slot(pool, hist) -> np.ndarray:
    """A device slot's histogram, on the host."""
    first = hist.slot * pool.total_bins
    return pool.arena[first:first + pool.shape[0]].copy_to_host()


def test_cuda_builder_leaf_segments_cover_every_row_once():
    rng = np.random.default_rng(4)
    binned, offsets = _binned(rng, n=120)
    store = dense_store(binned, offsets, np.full(3, 5, np.int32))
    builder = CudaBuilder(store)
    stats = np.c_[rng.normal(size=(120, 1)), np.ones((120, 2))].astype(np.float32)
    builder.begin(stats, max_leaves=3)
    pool = builder.device_histograms.pool(3)
    root, out = pool.get(), pool.get()  # the builder builds into the grower's device slots
    total = builder.root(root)
    np.testing.assert_allclose(total, stats.sum(axis=0, dtype=np.float64), rtol=1e-12)
    np.testing.assert_allclose(_slot(pool, root), naive.histogram(binned, np.arange(120), stats, offsets),
                               rtol=1e-12, atol=1e-12)
    builder.split([SplitRequest(0, 1, 0, 2, True, BUILD_LEFT)], [out])
    rows, start, end = builder.leaf_segments(2)
    assert sorted(rows.tolist()) == list(range(120))
    left = rows[start[0]:end[0]]
    np.testing.assert_allclose(_slot(pool, out), naive.histogram(binned, left, stats, offsets), rtol=1e-12,
                               atol=1e-12)
    b = binned[left, 0]
    assert np.all((b <= 2) | (b == 5))


def test_cuda_builder_children_from_the_grower_counts_and_a_wrong_count_refused():
    """A request with the grower's count of left rows (SplitRequest.n_left) builds its child without reading the
    partition's count back, the same histogram and bounds; a count that disagrees with the partition's is
    refused when the tree's rows are read."""
    rng = np.random.default_rng(4)
    binned, offsets = _binned(rng, n=120)
    store = dense_store(binned, offsets, np.full(3, 5, np.int32))
    stats = np.c_[rng.normal(size=(120, 1)), np.ones((120, 2))].astype(np.float32)
    n_left = int(np.sum((binned[:, 0] <= 2) | (binned[:, 0] == 5)))
    builder = CudaBuilder(store)
    pool = builder.device_histograms.pool(3)
    for count, refused in ((-1, False), (n_left, False), (n_left - 1, True)):
        builder.begin(stats, max_leaves=3)
        root, out = pool.get(), pool.get()
        builder.root(root)
        builder.split([SplitRequest(0, 1, 0, 2, True, BUILD_LEFT, None, count)], [out])
        if refused:
            with pytest.raises(RuntimeError, match="other rows left than its histogram counted"):
                builder.leaf_segments(2)
        else:
            rows, start, end = builder.leaf_segments(2)
            assert (start[1], end[0]) == (n_left, n_left)
            np.testing.assert_allclose(_slot(pool, out), naive.histogram(binned, rows[:n_left], stats, offsets),
                                       rtol=1e-12, atol=1e-12)
        pool.put(root)
        pool.put(out)
    builder.begin(stats, max_leaves=3)  # the flag was cleared: the next tree starts clean
    builder.leaf_segments(1)


def test_cuda_builder_orders_leaf_rows_as_the_cpu_builder(monkeypatch):
    """The stable partition: after three splits (nodes in several shares), every leaf holds the CPU
    builder's rows in the CPU builder's order, the rows left out of a GOSS-like sample too."""
    monkeypatch.setattr(cuda_builder, "MIN_SHARE_ROWS", 40)
    rng = np.random.default_rng(6)
    binned, offsets = _binned(rng, n=300)
    store = dense_store(binned, offsets, np.full(3, 5, np.int32))
    stats = np.c_[rng.normal(size=(300, 1)), np.ones((300, 2))].astype(np.float32)
    sample = np.sort(rng.choice(300, 220, replace=False)).astype(np.int32)
    others = np.setdiff1d(np.arange(300), sample).astype(np.int32)
    requests = [SplitRequest(0, 1, 0, 2, True, BUILD_LEFT), SplitRequest(1, 2, 2, 3, False, BUILD_LEFT),
                SplitRequest(0, 3, 1, 1, False, BUILD_LEFT)]
    segments = []
    for builder in (CudaBuilder(store), LocalBuilder(store, 1)):
        builder.begin(stats, sample, max_leaves=4, other_rows=others)
        pool = builder.device_histograms.pool(3) if isinstance(builder, CudaBuilder) else HistogramPool(
            int(offsets[-1]), 3)
        builder.root(pool.get())
        for request in requests:
            builder.split([request], [pool.get()])
        segments.append((builder.leaf_segments(4), builder.other_segments(4)))
    for got, expect in zip(segments[0], segments[1]):
        for got_part, expect_part in zip(got, expect):
            np.testing.assert_array_equal(got_part, expect_part)


def test_cuda_runtime_restores_the_alias_numba_cuda_compiles_against(monkeypatch):
    """NumPy 2.5 removed np.row_stack, which numba-cuda 0.30.4 overloads when it compiles its first kernel."""
    monkeypatch.delattr(np, "row_stack", raising=False)
    cuda_builder.cuda_runtime()
    assert np.row_stack is np.vstack
