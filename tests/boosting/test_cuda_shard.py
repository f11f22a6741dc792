"""The device training shard (device_type="cuda") in Numba's CUDA simulator: each kernel of
``kernels/cuda_rows.py`` against its CPU twin, and every request of ``CudaTrainingShard`` against
``TrainingShard`` on the same rows (gradients with weights, missing labels and frozen outputs, sketches,
GOSS and the Bayesian bootstrap, leaf sums, score updates, a custom objective).  See test_cuda_builder.py
for the simulator's set-up."""
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
from multigrove.boosting.builder import BUILD_LEFT, SplitRequest  # noqa: E402
from multigrove.boosting.cuda_shard import CudaTrainingShard  # noqa: E402
from multigrove.boosting.engine import stat_layout  # noqa: E402
from multigrove.boosting.grower import HistogramPool  # noqa: E402
from multigrove.boosting.losses import make_loss  # noqa: E402
from multigrove.boosting.shard import OutputColumn, SampleSpec, TrainingShard  # noqa: E402
from multigrove.boosting.sketch import SketchPlan, gram_product  # noqa: E402
from multigrove.boosting.tree import Tree  # noqa: E402
from multigrove.kernels import cuda_rows  # noqa: E402
from multigrove.kernels.objective import sigmoid_grad_hess_serial, softmax_grad_hess_serial  # noqa: E402
from multigrove.params import Params  # noqa: E402

N = 90


def _launch(kernel, *args):
    kernel[2, 16](*args)


def test_loss_kernels_equal_the_cpu_kernels():
    rng = np.random.default_rng(0)
    raw = rng.normal(scale=3.0, size=(N, 5))
    classes = rng.integers(0, 5, N)
    labels = (rng.random((N, 5)) < 0.3).astype(np.float64)
    for kernel, twin, y in ((cuda_rows.softmax_grad_hess, softmax_grad_hess_serial, classes),
                            (cuda_rows.sigmoid_grad_hess, sigmoid_grad_hess_serial, labels)):
        stats = cuda.to_device(np.zeros((N, 11), np.float32))
        _launch(kernel, cuda.to_device(raw), cuda.to_device(y), stats, 5)
        want = np.zeros((N, 11), np.float32)
        twin(raw, y, want[:, :5], want[:, 5:10])
        np.testing.assert_allclose(stats.copy_to_host(), want, rtol=1e-6, atol=1e-7)
    shift, scale = rng.normal(size=5), rng.random(5) + 0.5
    out = cuda.to_device(np.zeros((N, 6), np.float32))
    _launch(cuda_rows.residual, cuda.to_device(raw), cuda.to_device(labels), cuda.to_device(shift),
            cuda.to_device(scale), out)
    want = np.c_[(raw - (labels - shift) / scale).astype(np.float32), np.zeros(N, np.float32)]
    np.testing.assert_array_equal(out.copy_to_host(), want)


def test_row_kernels_equal_numpy():
    rng = np.random.default_rng(1)
    values = rng.normal(size=(N, 6)).astype(np.float32)
    weights = rng.random(N).astype(np.float32)
    rows = rng.choice(N, 20, replace=False).astype(np.int32)
    mask = (rng.random((N, 3)) < 0.7).astype(np.float32)

    def run(kernel, *args):
        device = cuda.to_device(values)
        _launch(kernel, device, *args)
        return device.copy_to_host()

    want = values.copy()
    want[:, 1:4] *= weights[:, None]
    np.testing.assert_array_equal(run(cuda_rows.scale_rows_by, cuda.to_device(weights), 1, 4), want)
    want = values.copy()
    want[rows, :5] *= np.float32(1.5)
    np.testing.assert_array_equal(run(cuda_rows.scale_rows, cuda.to_device(rows), 5, np.float32(1.5)), want)
    want = values.copy()
    want[:, 2:5] *= mask
    np.testing.assert_array_equal(run(cuda_rows.mask_cells, 2, cuda.to_device(mask)), want)
    want = values.copy()
    want[:, 3:6] = weights[:, None]
    np.testing.assert_array_equal(run(cuda_rows.fill_cells, 3, 6, cuda.to_device(weights[:, None])), want)
    want[:, 3:6] = mask
    np.testing.assert_array_equal(run(cuda_rows.fill_cells, 3, 6, cuda.to_device(mask)), want)
    want = values.copy()
    want[:, [1, 4]] = 0.0
    np.testing.assert_array_equal(run(cuda_rows.zero_columns, cuda.to_device(np.array([1, 4]))), want)
    norms = cuda.device_array(N, np.float32)
    _launch(cuda_rows.row_sq_norms, cuda.to_device(values), 4, norms)
    np.testing.assert_array_equal(norms.copy_to_host(),
                                  (values[:, :4].astype(np.float64) ** 2).sum(axis=1).astype(np.float32))


def test_sketch_kernels_equal_numpy(monkeypatch):
    monkeypatch.setattr(cuda_builder, "MIN_SHARE_ROWS", 16)
    rng = np.random.default_rng(2)
    G = rng.normal(size=(N, 7)).astype(np.float32)
    H = rng.random((N, 7)).astype(np.float32)
    stats = cuda.to_device(np.c_[G, H, np.ones(N, np.float32)])  # gradients, Hessians from column 7, the count
    columns, scale = np.array([5, 1, 5]), np.array([0.5, 2.0, 1.0], np.float32)
    out = cuda.to_device(np.full((N, 7), -1.0, np.float32))
    _launch(cuda_rows.gather_columns, stats, 7, cuda.to_device(columns), cuda.to_device(scale), out, 3)
    np.testing.assert_array_equal(out.copy_to_host(), np.c_[G[:, columns] * scale, H[:, columns], -np.ones(N)])
    out = cuda.to_device(np.full((N, 7), -1.0, np.float32))
    _launch(cuda_rows.gather_columns, stats, 7, cuda.to_device(columns), cuda.to_device(scale), out, -1)
    np.testing.assert_array_equal(out.copy_to_host(), np.c_[G[:, columns] * scale, -np.ones((N, 4))])
    P = rng.normal(size=(7, 2)).astype(np.float32)
    out = cuda.to_device(np.full((N, 4), -1.0, np.float32))
    _launch(cuda_rows.project_rows, stats, 7, cuda.to_device(np.ascontiguousarray(P.T)), out, 2)
    np.testing.assert_allclose(out.copy_to_host()[:, :2], G @ P, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out.copy_to_host()[:, 2], H.mean(axis=1), rtol=1e-6)
    np.testing.assert_array_equal(out.copy_to_host()[:, 3], -1.0)
    work = cuda_builder.row_shares([0], [N], 1, 8)
    assert work.shape[0] > 1
    V = rng.normal(size=(7, 3))
    GV = cuda.device_array((N, 3), np.float32)
    _launch(cuda_rows.times_matrix, stats, cuda.to_device(V.astype(np.float32)), GV)
    products = cuda.to_device(np.zeros((7, 3)))
    cuda_rows.transposed_products[3, 16](stats, GV, cuda.to_device(work), products)
    np.testing.assert_allclose(products.copy_to_host(), gram_product(G, V), rtol=1e-5)
    diagonal = cuda.to_device(np.zeros(7))
    cuda_rows.transposed_diagonal[3, 16](stats, cuda.to_device(work), diagonal)
    np.testing.assert_allclose(diagonal.copy_to_host(), (G.astype(np.float64) ** 2).sum(axis=0), rtol=1e-12)


@pytest.mark.parametrize("n_cols, threads", [(3, 16), (40, 16), (5, 4)])
def test_segment_sums_and_leaf_values_equal_numpy(n_cols, threads, monkeypatch):
    """Columns fewer than, more than and about the block's threads; leaves in several shares."""
    monkeypatch.setattr(cuda_builder, "MIN_SHARE_ROWS", 8)
    rng = np.random.default_rng(n_cols)
    stats = rng.normal(size=(N, n_cols)).astype(np.float32)
    rows = rng.permutation(N).astype(np.int32)
    start, end = np.array([0, 30, 31, 70]), np.array([30, 31, 70, 90])
    work = cuda_builder.row_shares(start, end - start, 1, 20)
    out = cuda.to_device(np.zeros((4, n_cols)))
    cuda_rows.segment_sums[5, threads](cuda.to_device(rows), cuda.to_device(stats), cuda.to_device(work), out)
    want = np.array([stats[rows[a:b]].astype(np.float64).sum(axis=0) for a, b in zip(start, end)])
    np.testing.assert_allclose(out.copy_to_host(), want, rtol=1e-12, atol=1e-12)
    values = rng.normal(size=(4, 2))
    for first_col, columns in ((1, np.zeros((1, 1), np.int32)), (-1, rng.integers(0, n_cols, (4, 2), np.int32))):
        if first_col < 0:
            columns[:, 1] = (columns[:, 0] + 1) % n_cols  # a leaf's columns differ (k-sparse leaves)
        scores = np.zeros((N, max(n_cols, 3)))
        device = cuda.to_device(scores)
        cuda_rows.add_leaf_values[5, threads](cuda.to_device(rows), cuda.to_device(work), cuda.to_device(values),
                                              first_col, cuda.to_device(columns), device)
        for leaf, (a, b) in enumerate(zip(start, end)):
            cols = [first_col, first_col + 1] if first_col >= 0 else columns[leaf]
            scores[np.ix_(rows[a:b], cols)] += values[leaf]
        np.testing.assert_array_equal(device.copy_to_host(), scores)


def _shards(objective, y, weight=None, num_class=0):
    """(CPU shard, device shard) on the same rows, after one round's gradients."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(y.shape[0], 3))
    ds = mg.Dataset(X, np.nan_to_num(y), params={"enable_bundle": False, "is_enable_sparse": False})
    config = Params(objective=objective if isinstance(objective, str) else "regression", num_class=num_class,
                    verbosity=-1, max_bin=15)
    made = []
    for shard_type in (TrainingShard, CudaTrainingShard):
        loss, label = make_loss(objective, num_class, 0, y, ds)
        ds.construct(config, loss.n_outputs)
        layout = stat_layout(loss, weight, config, bool(np.isnan(label).any()) if label.dtype.kind == "f" else False)
        shard = shard_type(ds.store, label, weight, loss, np.full(loss.n_outputs, 0.1), layout, 1)
        shard.scores[...] = np.random.default_rng(4).normal(size=shard.scores.shape)
        shard.compute_gradients()
        made.append(shard)
    return made


def _host(stats):
    return stats if isinstance(stats, np.ndarray) else stats.copy_to_host()


@pytest.mark.parametrize("case", ["regression_weights_missing", "multiclass_weights", "multilabel_missing",
                                  "custom"])
def test_device_gradients_equal_the_cpu_shard(case):
    rng = np.random.default_rng(5)
    weight = rng.random(N) + 0.5
    if case == "regression_weights_missing":
        y = rng.normal(size=(N, 3))
        y[rng.random(y.shape) < 0.2] = np.nan
        cpu, gpu = _shards("regression", y, weight)
    elif case == "multiclass_weights":
        cpu, gpu = _shards("multiclass", rng.integers(0, 4, N).astype(float), weight, num_class=4)
    elif case == "multilabel_missing":
        y = (rng.random((N, 3)) < 0.4).astype(float)
        y[rng.random(y.shape) < 0.2] = np.nan
        cpu, gpu = _shards("multilabel", y)
    else:
        def objective(raw, dataset):
            return raw - 0.5, np.full_like(raw, 2.0)
        cpu, gpu = _shards(objective, rng.normal(size=N))
    np.testing.assert_allclose(_host(gpu.stats), cpu.stats, rtol=1e-6, atol=1e-7)
    for shard in (cpu, gpu):
        shard.freeze_outputs([0])
        shard.compute_gradients()
    np.testing.assert_allclose(_host(gpu.stats), cpu.stats, rtol=1e-6, atol=1e-7)
    assert not _host(gpu.stats)[:, 0].any()


@pytest.mark.parametrize("spec", [SketchPlan(np.array([2, 0]), np.array([1.5, 0.5], np.float32), None),
                                  SketchPlan(None, None, np.arange(8, dtype=np.float32).reshape(4, 2) / 8),
                                  OutputColumn(3)])
def test_device_sketches_norms_and_gram_products_equal_the_cpu_shard(spec, monkeypatch):
    monkeypatch.setattr(cuda_builder, "MIN_SHARE_ROWS", 16)
    cpu, gpu = _shards("multiclass", np.random.default_rng(6).integers(0, 4, N).astype(float), num_class=4)
    assert cpu.set_split_statistics(spec) == gpu.set_split_statistics(spec)
    np.testing.assert_allclose(_host(gpu.split_stats), cpu.split_stats, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gpu.column_sq_norms(), cpu.column_sq_norms(), rtol=1e-10)
    V = np.random.default_rng(7).normal(size=(4, 3))
    np.testing.assert_allclose(gpu.gram_product(V), cpu.gram_product(V), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("spec", [SampleSpec("goss", 1.0, 0.2, 0.3, (1,)),
                                  SampleSpec("bagging", 0.5, 0.0, 0.0, (2,), temperature=1.0, weight_seed=(3,))])
def test_device_row_draws_and_tree_updates_equal_the_cpu_shard(spec, monkeypatch):
    """The same rows drawn, the same statistics scaled, the same leaf sums and score updates (rows left out
    of the sample included) after a tree of three splits."""
    monkeypatch.setattr(cuda_builder, "MIN_SHARE_ROWS", 16)
    cpu, gpu = _shards("regression", np.random.default_rng(8).normal(size=(N, 2)))
    for shard in (cpu, gpu):
        shard.set_split_statistics(SketchPlan(np.array([1]), None, None))
        shard.draw_rows(spec)
    np.testing.assert_array_equal(gpu.sample.rows, cpu.sample.rows)
    np.testing.assert_allclose(_host(gpu.stats), cpu.stats, rtol=1e-6)
    np.testing.assert_allclose(_host(gpu.split_stats), cpu.split_stats, rtol=1e-6)
    for shard in (cpu, gpu):
        shard.begin_tree(4)
        width = shard.split_stats.shape[1]
        pool = gpu.device_histograms.pool(width) if shard is gpu else HistogramPool(shard.store.total_bins, width)
        shard.root(pool.get())
        outs = [pool.get()]
        for leaf, feature in ((0, 0), (1, 1), (0, 2)):
            shard.split([SplitRequest(leaf, leaf + 1 if leaf else 1 + feature, feature, 6, False, BUILD_LEFT)], outs)
    np.testing.assert_allclose(gpu.leaf_sums(4), cpu.leaf_sums(4), rtol=1e-10)
    values = np.random.default_rng(9).normal(size=(4, 2))
    for tree in (_tree(values, np.arange(2, dtype=np.int32), None),  # dense leaves
                 _tree(values[:, :1], np.zeros(0, np.int32), np.array([[1], [0], [1], [1]], np.int32))):  # k-sparse
        for shard in (cpu, gpu):
            shard.apply_tree(tree)
        np.testing.assert_allclose(gpu.scores, cpu.scores, rtol=1e-12)


def _tree(values, output_cols, leaf_cols):
    """A tree of three splits whose leaves hold ``values`` (apply_tree reads only its leaves)."""
    internal = dict(split_feature=np.array([0, 1, 2], np.int32), threshold=np.zeros(3),
                    threshold_bin=np.full(3, 6, np.int32), default_left=np.zeros(3, bool),
                    left_child=np.array([2, -2, -1], np.int32), right_child=np.array([1, -3, -4], np.int32),
                    split_gain=np.ones(3), internal_count=np.full(3, N))
    return Tree(**internal, leaf_value=values, leaf_count=np.full(4, N // 4), output_cols=output_cols,
                leaf_cols=leaf_cols)


def test_training_set_metrics_and_continued_training_on_the_device():
    """The training set as a validation set reads the scores back from the GPU each round; an init model's
    scores reach the GPU before the first round."""
    rng = np.random.default_rng(10)
    X, y = rng.normal(size=(120, 3)), rng.integers(0, 3, 120)
    params = {"objective": "multiclass", "num_class": 3, "verbosity": -1, "num_leaves": 4, "min_data_in_leaf": 5}
    fits = {}
    for device in ("cpu", "cuda"):
        train_set = mg.Dataset(X, y)
        first = mg.train({**params, "device_type": device}, train_set, 2, valid_sets=[train_set],
                         valid_names=["train"])
        more = mg.train({**params, "device_type": device}, mg.Dataset(X, y), 2, init_model=first)
        fits[device] = (first.evals_result["train"]["multi_logloss"], more.predict(X, raw_score=True))
    assert len(fits["cuda"][0]) == 2 and fits["cuda"][0][1] < fits["cuda"][0][0]
    np.testing.assert_allclose(fits["cuda"][0], fits["cpu"][0], rtol=1e-9)
    np.testing.assert_allclose(fits["cuda"][1], fits["cpu"][1], rtol=1e-6, atol=1e-9)
