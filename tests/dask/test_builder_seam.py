"""The histogram-builder seam: the local builder (a TrainingShard over this process's rows) and the
distributed one (DistributedRows over two workers' shards) pass one suite of checks against a naive
histogram of the whole data."""
import numpy as np
import pytest

import multigrove as mg
from multigrove import Params
from multigrove.boosting.builder import BUILD_LEFT, BUILD_RIGHT, SplitRequest
from multigrove.boosting.engine import stat_layout
from multigrove.boosting.losses import make_loss
from multigrove.boosting.shard import SampleSpec, TrainingShard
from multigrove.boosting.sketch import FULL
from multigrove.kernels.binning import bin_matrix

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")
mgd = pytest.importorskip("multigrove.dask")

PARAMS = {"objective": "regression", "target_scaling": "none", "sketch": "none", "num_leaves": 4}


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(1500, 5))
    X[rng.random(X.shape) < 0.1] = np.nan
    Y = np.column_stack([np.nan_to_num(X[:, 0]) * 2, rng.normal(size=1500)])
    return X, Y


def _local(X, Y):
    config = Params.from_dict(PARAMS)
    ds = mg.Dataset(X, Y).construct(config, 2)
    loss, y = make_loss("regression", 0, 0, ds.label, ds)
    init = loss.init_score(y, None)
    return TrainingShard(ds.store, y, None, loss, init, stat_layout(loss, None, config), 2), ds.bin_mapper


def _distributed(client, X, Y):
    config = Params.from_dict(PARAMS)
    placed = mgd._by_worker(mgd._aligned_parts(client, da.from_array(X, chunks=(400, 5)),
                                               da.from_array(Y, chunks=(400, 2)), None, "test"))
    actors = mgd._start_actors(client, config, placed, [])
    run = mgd._prepare(config, actors)
    return run.rows, run.mapper


def _naive(X, Y, mapper, rows):
    binned = np.empty(X.shape, np.uint8)
    bin_matrix(np.ascontiguousarray(X), mapper.bounds, mapper.bound_offsets, binned)
    G = np.mean(Y, axis=0) - Y  # the squared loss's gradient at the start score
    hist = np.zeros((int(mapper.hist_offsets[-1]), 3))
    for f in range(X.shape[1]):
        np.add.at(hist, mapper.hist_offsets[f] + binned[rows, f], np.column_stack([G[rows], np.ones(len(rows))]))
    return hist, binned


@pytest.mark.parametrize("kind", ["local", "distributed"])
def test_builder_suite(client, data, kind):
    X, Y = data
    builder, mapper = _local(X, Y) if kind == "local" else _distributed(client, X, Y)
    builder.compute_gradients()
    builder.set_split_statistics(FULL)
    builder.draw_rows(SampleSpec("all", 1.0, 0.0, 0.0, (0,)))
    builder.begin_tree(4)
    every = np.arange(X.shape[0])
    want, binned = _naive(X, Y, mapper, every)
    root = np.empty_like(want)
    total = builder.root(root)
    np.testing.assert_allclose(root, want, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(total, want[: mapper.hist_offsets[1]].sum(axis=0), rtol=1e-6, atol=1e-4)
    # split leaf 0 on feature 0 at its median bin (missing left); build the left child
    b = int(np.median(binned[:, 0]))
    missing = binned[:, 0] == mapper.missing_bin[0]
    left = every[(binned[:, 0] <= b) | missing]
    out = np.empty_like(want)
    builder.split([SplitRequest(0, 1, 0, b, True, BUILD_LEFT)], [out])
    np.testing.assert_allclose(out, _naive(X, Y, mapper, left)[0], rtol=1e-5, atol=1e-4)
    # split the right child on feature 1, build its right side; then the leaf sums of all three leaves
    right = np.setdiff1d(every, left)
    b1 = int(np.median(binned[right, 1]))
    right_right = right[(binned[right, 1] > b1) & (binned[right, 1] != mapper.missing_bin[1])]
    builder.split([SplitRequest(1, 2, 1, b1, True, BUILD_RIGHT)], [out])
    np.testing.assert_allclose(out, _naive(X, Y, mapper, right_right)[0], rtol=1e-5, atol=1e-4)
    # a histogram the grower dropped (histogram_pool_size), built again from the leaves' rows
    outs = [np.empty_like(want), np.empty_like(want)]
    builder.histograms([0, 2], outs)
    np.testing.assert_allclose(outs[0], _naive(X, Y, mapper, left)[0], rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(outs[1], _naive(X, Y, mapper, right_right)[0], rtol=1e-5, atol=1e-4)
    sums = builder.leaf_sums(3)
    G = np.column_stack([np.mean(Y, axis=0) - Y, np.ones(len(Y))])
    for leaf, members in enumerate([left, np.setdiff1d(right, right_right), right_right]):
        np.testing.assert_allclose(sums[leaf], G[members].sum(axis=0), rtol=1e-5, atol=1e-4)
