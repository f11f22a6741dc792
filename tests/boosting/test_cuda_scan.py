"""The split scans on the device (kernels/cuda_scan.py, boosting/cuda_histograms.py) in Numba's CUDA simulator,
against the CPU scan kernels (kernels/split.py, themselves tested against the naive twins) and the naive twins.

Histograms are written straight into the device slots, so that every case of the scans shows on a few bins:
features with and without missing values, empty bins, masked features, an inactive node, the subtraction of a
sibling, random_strength's noise, min_gain_to_split, every Hessian layout, dense and top-k sparse leaves."""
import os
import sys

import numba
import numpy as np
import pytest

if "numba.cuda" not in sys.modules:
    os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")
    numba.config.ENABLE_CUDASIM = int(os.environ["NUMBA_ENABLE_CUDASIM"])

import multigrove as mg  # noqa: E402
from multigrove.boosting import cuda_histograms  # noqa: E402
from multigrove.boosting.cuda_builder import CudaBuilder  # noqa: E402
from multigrove.boosting.grower import HistogramPool  # noqa: E402
from multigrove.data.storage import dense_store  # noqa: E402
from multigrove.kernels.split import (  # noqa: E402
    CategoricalScan,
    FeatureSplits,
    NodeSplits,
    ScanParams,
    add_split_gains_serial,
    best_splits_kernel,
    scan_scratch,
)

from ..kernels import naive  # noqa: E402

#: (k, h_col, h_stride, h_scale) of the statistics (k gradients, Hessians, a count column last)
LAYOUTS = {
    "one output": (1, 1, 0, 1.0),
    "shared Hessian": (3, 3, 0, 1.0),
    "own Hessians": (2, 2, 1, 1.0),
    "constant Hessian": (2, 2, 0, 0.5),  # h_col is the count column
}


def _problem(seed: int, layout: str, topk: int = 0, restricted: bool = False, n: int = 400, n_features: int = 5,
             value_bins: int = 7):
    """(binned, offsets, stats, params, store): missing values in features 0 and 3, feature 2 with empty bins."""
    rng = np.random.default_rng(seed)
    k, h_col, h_stride, h_scale = LAYOUTS[layout]
    binned = rng.integers(0, value_bins, size=(n, n_features)).astype(np.uint8)
    binned[:, 2] = rng.choice([0, 3, 6], size=n)  # bins 1, 2, 4, 5 empty
    for f in (0, 3):
        binned[rng.random(n) < 0.15, f] = value_bins  # the missing bin
    offsets = np.arange(n_features + 1, dtype=np.int64) * (value_bins + 1)
    if layout == "constant Hessian":
        stats = np.c_[rng.normal(size=(n, k)), np.ones(n)]
    else:
        n_hess = 1 if h_stride == 0 else k
        stats = np.c_[rng.normal(size=(n, k)) + binned[:, :1] * 0.3, rng.uniform(0.1, 1.0, (n, n_hess)), np.ones(n)]
    stats = stats.astype(np.float32)
    count_col = stats.shape[1] - 1
    params = ScanParams(k=k, h_col=h_col, h_stride=h_stride, h_scale=h_scale, count_col=count_col, lambda_l2=1.0,
                        min_data_in_leaf=5, min_sum_hessian=1e-3, min_gain_to_split=0.0, topk=topk,
                        restricted=restricted)
    store = dense_store(binned, offsets, np.full(n_features, value_bins, np.int32))
    return rng, binned, offsets, stats, params, store


def _put(device, pool, hist: np.ndarray):
    """A device slot holding ``hist``."""
    slot = pool.get()
    first = slot.slot * device.total_bins
    pool.arena[first:first + hist.shape[0]].copy_to_device(np.ascontiguousarray(hist))
    return slot


def _slot(device, slot) -> np.ndarray:
    first = slot.slot * device.total_bins
    return slot.pool.arena[first:first + device.total_bins].copy_to_host()


#: (layout, top-k, restricted): dense leaves of every layout; top-k sparse leaves, GBDT-MO's Alg. 3 and 4
SCANS = [(layout, 0, False) for layout in LAYOUTS] + [("shared Hessian", 2, False), ("own Hessians", 1, True),
                                                      ("shared Hessian", 1, True)]


@pytest.mark.parametrize("layout, topk, restricted", SCANS)
@pytest.mark.parametrize("with_noise", [False, True])
def test_device_scan_equals_the_cpu_scan(layout, topk, restricted, with_noise):
    """A split's two children (the larger one by subtraction in place) and an inactive third node, in one scan:
    each node's split, gain, left sums, missing flag and splittable features as split.best_splits gives them."""
    rng, binned, offsets, stats, params, store = _problem(3 + with_noise, layout, topk, restricted)
    n, n_features, n_cols = binned.shape[0], offsets.size - 1, stats.shape[1]
    small_rows = np.flatnonzero(rng.random(n) < 0.35)
    parent = naive.histogram(binned, np.arange(n), stats, offsets)
    small = naive.histogram(binned, small_rows, stats, offsets)
    large = parent - small
    totals = np.array([small[:offsets[1]].sum(0), large[:offsets[1]].sum(0), parent[:offsets[1]].sum(0)])
    mask = np.ones(n_features, np.bool_)
    mask[4] = False
    noise = rng.normal(0.0, 0.5, (3, n_features)) if with_noise else None
    params = params._replace(min_gain_to_split=0.01)

    device = CudaBuilder(store).device_histograms
    pool = device.pool(n_cols)
    small_slot, parent_slot, other = _put(device, pool, small), _put(device, pool, parent), _put(device, pool, parent)
    found = device.scan(params, [small_slot, parent_slot, other], [None, small_slot, None], [True, True, False],
                        totals, np.array([mask, mask, mask]), noise)
    np.testing.assert_allclose(_slot(device, parent_slot), large, rtol=0, atol=1e-12)  # subtracted in place
    np.testing.assert_array_equal(_slot(device, other), parent)  # no slot to subtract: untouched

    best, per_feature = NodeSplits.allocate(2, n_cols), FeatureSplits.allocate(2, n_features)
    cpu_scan = best_splits_kernel(params, 0, 1)  # the serial variant the grower picks for small nodes
    cpu_scan(small.copy(), parent.copy(), 2, True, totals[:2].copy(), offsets, mask, params, None,
             scan_scratch(n_cols, params), np.array([True, True]), np.zeros((2, n_features)) if noise is None
             else noise[:2].copy(), per_feature, best)
    assert np.isfinite(best.gain).any()  # the case tests a split
    for node, hist in enumerate((small, large)):
        np.testing.assert_array_equal(found.splittable[node], per_feature.splittable[node])
        if not np.isfinite(best.gain[node]):
            assert found.gain[node] == -np.inf
            continue
        f = int(best.feature[node])
        assert (found.feature[node], found.threshold_bin[node], found.default_left[node]) == \
            (f, best.threshold_bin[node], best.default_left[node])
        assert found.gain[node] == pytest.approx(best.gain[node], rel=1e-9, abs=1e-12)
        np.testing.assert_allclose(found.left_sums[node], best.left_sums[node], rtol=1e-12, atol=1e-12)
        assert found.has_missing[node] == (hist[offsets[f + 1] - 1, params.count_col] > 0)
    assert found.gain[2] == -np.inf and not found.splittable[2].any()  # inactive
    assert not found.splittable[:, 4].any()  # masked


@pytest.mark.parametrize("layout, topk", [("shared Hessian", 0), ("own Hessians", 0), ("shared Hessian", 2)])
def test_device_level_gains_and_split_sums_equal_the_host_ones(layout, topk):
    """Symmetric growth on the device: the gains summed over a level equal split.add_split_gains node after node
    (and the naive twin, for dense leaves), the chosen split's left sums equal the histograms', and subtract
    turns parents into siblings."""
    rng, binned, offsets, stats, params, store = _problem(9, layout, topk)
    n, n_cols = binned.shape[0], stats.shape[1]
    node_of_row = rng.integers(0, 3, n)
    hists = [naive.histogram(binned, np.flatnonzero(node_of_row == i), stats, offsets) for i in range(3)]
    totals = np.array([h[:offsets[1]].sum(0) for h in hists])
    mask = np.array([True, True, True, False, True])
    device = CudaBuilder(store).device_histograms
    pool = device.pool(n_cols)
    slots = [_put(device, pool, h) for h in hists]
    gains = np.empty((2, int(offsets[-1])))
    device.level_gains(params, slots, totals, mask, gains)
    expect = np.zeros_like(gains)
    for hist, total in zip(hists, totals):
        add_split_gains_serial(hist, total, offsets, mask, params, scan_scratch(n_cols, params), expect)
    np.testing.assert_allclose(gains, expect, rtol=1e-9, atol=1e-12)
    if topk == 0:
        twin = naive.level_split_gains(hists, totals, offsets, *LAYOUTS[layout], params.count_col, mask, 1.0, 5,
                                       1e-3)
        is_threshold = ~np.isnan(twin)
        np.testing.assert_allclose(gains[is_threshold], twin[is_threshold], rtol=1e-9, atol=1e-9)
    assert np.abs(gains).max() > 0

    sums = device.split_sums(3 - 3, 2, True)  # feature 0, threshold bin 2, missing values left
    for hist, got in zip(hists, sums):
        np.testing.assert_allclose(got, hist[0:3].sum(0) + hist[offsets[1] - 1], rtol=1e-12, atol=1e-12)
    device.subtract([(slots[0], slots[1]), (slots[2], slots[1])])
    np.testing.assert_allclose(_slot(device, slots[0]), hists[0] - hists[1], atol=1e-12)
    np.testing.assert_allclose(_slot(device, slots[2]), hists[2] - hists[1], atol=1e-12)


def test_the_pool_grows_its_arena_and_keeps_the_slots_lent():
    rng, binned, offsets, stats, params, store = _problem(1, "one output")
    device = CudaBuilder(store).device_histograms
    pool = device.pool(stats.shape[1])
    hists = [rng.normal(size=(int(offsets[-1]), stats.shape[1])) for _ in range(cuda_histograms.INITIAL_SLOTS + 3)]
    slots = [_put(device, pool, h) for h in hists]
    assert pool.allocated == len(hists) and pool.arena.shape[0] >= len(hists) * device.total_bins
    for slot, hist in zip(slots, hists):
        np.testing.assert_array_equal(_slot(device, slot), hist)
    pool.put(slots[4])
    assert pool.has_free and pool.get() is slots[4]


#: categorical features of test_device_set_splits_equal_the_cpu_ones: (value bins, the regime of its scan)
CATEGORICAL = {1: (3, "one against the rest"), 2: (6, "every subset"), 3: (20, "ordered along a direction")}


@pytest.mark.parametrize("feature", sorted(CATEGORICAL))
@pytest.mark.parametrize("layout, topk", [("shared Hessian", 0), ("own Hessians", 0), ("shared Hessian", 2)])
def test_device_set_splits_equal_the_cpu_ones(feature, layout, topk):
    """The set split of one categorical feature (the others masked) in each regime of split.scan_categorical,
    both children of a split: the set, its gain and left sums, and the splittable flags equal the CPU scan's."""
    rng = np.random.default_rng(feature * 10 + topk)
    n = 600
    bins = [7] + [CATEGORICAL[f][0] for f in (1, 2, 3)]
    binned = np.stack([rng.integers(0, b, n) for b in bins], axis=1).astype(np.uint8)
    binned[rng.random(n) < 0.1, 3] = bins[3]  # missing categories: always right
    offsets = np.concatenate([[0], np.cumsum(np.array(bins) + 1)]).astype(np.int64)
    k, h_col, h_stride, h_scale = LAYOUTS[layout]
    effect = rng.normal(size=(max(bins) + 1, k))
    gradients = sum(effect[binned[:, f]] for f in (1, 2, 3)) + 0.5 * rng.normal(size=(n, k))
    stats = np.c_[gradients, rng.uniform(0.2, 1.0, (n, 1 if h_stride == 0 else k)), np.ones(n)].astype(np.float32)
    n_cols = stats.shape[1]
    params = ScanParams(k=k, h_col=h_col, h_stride=h_stride, h_scale=h_scale, count_col=n_cols - 1, lambda_l2=1.0,
                        min_data_in_leaf=5, min_sum_hessian=1e-3, min_gain_to_split=0.0, topk=topk, restricted=False)
    settings = mg.Params(max_cat_to_onehot=4, max_cat_threshold=8, cat_smooth=5.0, cat_l2=2.0, min_data_per_group=10)
    is_categorical = np.array([False, True, True, True])
    categorical = CategoricalScan.make(is_categorical, np.diff(offsets) - 1, settings)
    store = dense_store(binned, offsets, np.array(bins, np.int32))
    small = naive.histogram(binned, np.flatnonzero(rng.random(n) < 0.4), stats, offsets)
    parent = naive.histogram(binned, np.arange(n), stats, offsets)
    totals = np.array([small[:offsets[1]].sum(0), (parent - small)[:offsets[1]].sum(0)])
    mask = np.arange(4) == feature

    device = CudaBuilder(store).device_histograms
    pool = device.pool(n_cols)
    small_slot, parent_slot = _put(device, pool, small), _put(device, pool, parent)
    found = device.scan(params, [small_slot, parent_slot], [None, small_slot], [True, True], totals,
                        np.array([mask, mask]), None, categorical)
    best, per_feature = NodeSplits.allocate(2, n_cols), FeatureSplits.allocate(2, 4)
    cpu_scan = best_splits_kernel(params, 0, 1)  # the serial variant the grower picks for small nodes
    cpu_scan(small.copy(), parent.copy(), 2, True, totals.copy(), offsets, mask, params, categorical,
             scan_scratch(n_cols, params), np.array([True, True]), np.zeros((2, 4)), per_feature, best)
    assert np.isfinite(best.gain).all()  # both children split on the feature
    width = int(offsets[feature + 1] - offsets[feature])
    for node in range(2):
        assert (found.feature[node], found.threshold_bin[node]) == (feature, -1)
        np.testing.assert_array_equal(found.left_bins[node, :width], categorical.left[node, feature - 1, :width])
        assert found.gain[node] == pytest.approx(best.gain[node], rel=1e-9)
        np.testing.assert_allclose(found.left_sums[node], best.left_sums[node], rtol=1e-12, atol=1e-12)
        np.testing.assert_array_equal(found.splittable[node], per_feature.splittable[node])
    assert found.left_bins[:, :width].sum(axis=1).min() >= 1


def test_cuda_trees_scan_on_the_device(monkeypatch):
    """No histogram crosses to the host, whatever the growth policy, the leaves or the features: the grower
    takes no host histogram buffer, and every copy from the GPU is smaller than one histogram."""
    from numba import cuda
    host_buffers, copied = [], []
    monkeypatch.setattr(HistogramPool, "get", lambda self: host_buffers.append(self) or np.empty(self.shape))
    array_class = type(cuda.device_array(1))
    to_host = array_class.copy_to_host
    monkeypatch.setattr(array_class, "copy_to_host",
                        lambda self, *a, **k: copied.append(self.nbytes) or to_host(self, *a, **k))
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 4))
    X[rng.random(X.shape) < 0.1] = np.nan
    Y = X[:, :3] + 0.1 * rng.normal(size=(200, 3))
    params = {"verbosity": -1, "num_leaves": 5, "min_data_in_leaf": 8, "device_type": "cuda"}
    fits = [({}, Y), ({"growth_policy": "depthwise", "max_depth": 2}, Y),
            ({"growth_policy": "symmetric", "max_depth": 2}, Y), ({"leaf_sparsity": 1}, Y)]
    X_codes = X.copy()
    X_codes[:, 0] = rng.integers(0, 6, 200)
    for extra, label in fits + [({"categorical_feature": [0], "max_cat_to_onehot": 2, "min_data_per_group": 5},
                                 Y + X_codes[:, :1] % 2)]:
        data = mg.Dataset(X_codes if "categorical_feature" in extra else X, label)
        booster = mg.train({**params, **extra}, data, 2)
        one_histogram = data.store.total_bins * 7 * 8  # 3 gradients, 3 Hessians, the count; float64
        assert copied and max(copied) < one_histogram, extra
        copied.clear()
    assert booster.trees[0].has_set_splits
    assert host_buffers == []
