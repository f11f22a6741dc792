"""The serial twins of the parallel kernels (kernels._variants) train the same models."""
import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import multigrove as mg
from multigrove.boosting import engine
from multigrove.boosting.builder import LocalBuilder
from multigrove.kernels import _variants, histogram, partition


def _fit(monkeypatch, least_work: float, params: dict, X, y, rounds: int = 8):
    monkeypatch.setattr(_variants, "PARALLEL_MIN_WORK", least_work)
    monkeypatch.setattr(_variants, "ONE_THREAD_PARALLEL_MIN_WORK", least_work)
    monkeypatch.setattr(engine, "SERIAL_FIT_MAX_CELLS", 0)  # two threads even for this small data
    booster = mg.train({"verbosity": -1, "num_threads": 2, **params}, mg.Dataset(X, y), rounds)
    return booster, booster.predict(X)


@pytest.mark.parametrize("case", ["one output", "targets", "classes", "labels, top-k leaves", "categories",
                                  "sparse columns"])
def test_serial_and_parallel_kernels_grow_the_same_trees(monkeypatch, rng, case):
    X = rng.normal(size=(3000, 8))
    X[rng.random(X.shape) < 0.05] = np.nan
    if case == "one output":
        params, y = {}, X[:, 0] - np.nan_to_num(X[:, 1]) ** 2
    elif case == "targets":
        params, y = {"sketch": "none"}, np.nan_to_num(X[:, :3]) + 0.1 * rng.normal(size=(3000, 3))
    elif case == "classes":
        params, y = {"objective": "multiclass"}, np.digitize(np.nan_to_num(X[:, 0]), [-0.5, 0.5])
    elif case == "labels, top-k leaves":
        params, y = {"objective": "multilabel", "leaf_sparsity": 2}, (np.nan_to_num(X[:, :4]) > 0).astype(float)
    elif case == "sparse columns":  # bundled and sparse features: the serial partition for any store
        X = sp.csr_matrix(np.where(rng.random(X.shape) < 0.9, 0.0, np.nan_to_num(X)))
        params, y = {}, X[:, 0].toarray().ravel() + 0.1 * rng.normal(size=3000)
    else:
        codes = rng.integers(0, 12, 3000)
        X = pd.DataFrame({"a": X[:, 0], "b": pd.Categorical(codes), "c": X[:, 2]})
        params, y = {}, np.nan_to_num(X["a"].to_numpy()) + (codes % 3 == 0)
    serial, p_serial = _fit(monkeypatch, 1e30, params, X, y)
    parallel, p_parallel = _fit(monkeypatch, 0, params, X, y)
    for a, b in zip(serial.trees, parallel.trees):
        np.testing.assert_array_equal(a.split_feature, b.split_feature)
        np.testing.assert_array_equal(a.threshold_bin, b.threshold_bin)
    np.testing.assert_allclose(p_parallel, p_serial, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("threads", [1, 2])
def test_pick_chooses_by_work_and_asks_the_thread_count_only_between_its_thresholds(monkeypatch, threads):
    asked = []

    def get_num_threads():
        asked.append(threads)
        return threads

    monkeypatch.setattr(_variants.numba, "get_num_threads", get_num_threads)
    parallel, serial = object(), object()
    low, high = _variants.PARALLEL_MIN_WORK, _variants.ONE_THREAD_PARALLEL_MIN_WORK
    assert _variants.pick(parallel, serial, low - 1) is serial
    assert _variants.pick(parallel, serial, high) is parallel
    assert not asked
    assert _variants.pick(parallel, serial, low) is (parallel if threads > 1 else serial)
    assert _variants.pick(parallel, serial, high - 1) is (parallel if threads > 1 else serial)
    assert asked == [threads, threads]


def test_a_store_of_dense_columns_only_gets_the_dense_serial_kernels(rng):
    """kernels.store.STORE_DENSE: the serial histogram and split of a store whose features are all dense columns
    are the variants compiled without the bundled and sparse features' code, for the statistics' width (2 or 3
    columns: their row loop only); any other store gets the general ones."""
    dense = mg.Dataset(rng.normal(size=(400, 5)), rng.normal(size=400)).construct().store
    X = sp.csr_matrix(np.where(rng.random((400, 5)) < 0.9, 0.0, 1.0 + rng.random((400, 5))))
    mixed = mg.Dataset(X, rng.normal(size=400)).construct().store
    assert (mixed.feature_kind != 0).any()
    for store, is_dense in ((dense, True), (mixed, False)):
        builder = LocalBuilder(store, 1)
        for width, key in ((2, 2), (3, 3), (5, 0), (1, 0)):
            builder.begin(np.ones((400, width), np.float32))
            assert builder._serial_histogram() is histogram.SERIAL_HISTOGRAMS[is_dense, key]
            assert builder._serial_split() is partition.SERIAL_SPLITS[is_dense, key]


@pytest.mark.parametrize("threads", [1, 2])
def test_pick_asks_no_thread_count_when_the_caller_gives_it(monkeypatch, threads):
    monkeypatch.setattr(_variants.numba, "get_num_threads", lambda: pytest.fail("asked Numba for the threads"))
    parallel, serial = object(), object()
    low = _variants.PARALLEL_MIN_WORK
    assert _variants.pick(parallel, serial, low, threads) is (parallel if threads > 1 else serial)
    assert _variants.pick(parallel, serial, low - 1, threads) is serial


def test_every_store_has_one_numba_type(rng):
    """A kernel compiles once per type of its arguments: stores of 1, 2 or 5 dense columns, none or several
    bundles (a 0- or 1-column array is C and Fortran contiguous at once: a Fortran-order copy of one column
    was typed C, and Delicious' store, whose features all went into bundles, compiled the histogram and
    partition kernels again after `multigrove compile`)."""
    from numba import typeof
    onehot = np.eye(12)[rng.integers(0, 12, 600)]  # mutually exclusive columns: bundled
    stores = [mg.Dataset(rng.normal(size=(600, k)), rng.normal(size=600)).construct().store for k in (1, 2, 5)]
    stores += [mg.Dataset(sp.csr_matrix(X), rng.normal(size=600)).construct().store
               for X in (onehot, np.hstack([onehot, onehot[::-1]]), np.hstack([rng.normal(size=(600, 2)), onehot]))]
    assert max(store.bundle_cols.shape[0] for store in stores) >= 2 and min(s.dense_cols.shape[0] for s in stores) == 0
    assert len({typeof(store) for store in stores}) == 1


def test_every_kernel_releases_the_gil():
    """nogil=True on every kernel a caller runs (its variants inherit it): a Dask worker's threads, or fits in
    threads of one process, run their kernels side by side.  And error_model="numpy" on every kernel, inlined
    ones too (see kernels/__init__.py: no divisor test in the loops)."""
    import importlib
    import pkgutil

    from numba.core.registry import CPUDispatcher

    import multigrove.kernels as kernels
    checked = 0
    for info in pkgutil.iter_modules(kernels.__path__):
        if info.name.startswith("cuda"):
            continue
        module = importlib.import_module(f"multigrove.kernels.{info.name}")
        for name, obj in vars(module).items():
            if isinstance(obj, CPUDispatcher):
                assert obj.targetoptions.get("error_model") == "numpy", f"{info.name}.{name}: Python's error model"
            if isinstance(obj, CPUDispatcher) and obj.targetoptions.get("inline", "never") == "never":
                assert obj.targetoptions.get("nogil"), f"{info.name}.{name} holds the GIL"
                checked += 1
    assert checked > 100


def test_type_key_tells_apart_what_numba_types_differently(rng):
    """Two arguments of one type_key have one Numba type (EntryPoints calls one compiled entry point for
    both); arrays that differ in dtype, dimensions, layout or writability get keys of their own."""
    from numba import typeof

    from multigrove.kernels.split import ScanParams
    base = rng.normal(size=(6, 4))
    readonly = base.copy()
    readonly.flags.writeable = False
    params = ScanParams(3, 3, 0, 1.0, 4, 3.0, 1, 1e-3, 0.0, 0, False)
    args = [base, base.copy(), base.astype(np.float32), base.T, base[:, ::2], base[0], base.reshape(-1), readonly,
            np.ones((1, 1)), np.ones(1), np.asfortranarray(base[:, :1]), params, params._replace(k=4),
            params._replace(lambda_l2=1.0), params._replace(lambda_l2=1), 3, 7, 2.5, True, np.float32(1),
            np.int64(4), None, (base, base.T), (base, base)]
    keys = [_variants.type_key(arg) for arg in args]
    for i, a in enumerate(args):
        for j, b in enumerate(args):
            if keys[i] == keys[j]:
                assert typeof(a) == typeof(b), (i, j)
    distinct = {keys[i] for i in (0, 2, 3, 4, 5, 7)}  # float64 C, float32, F, strided, 1-d, read-only
    assert len(distinct) == 6
    assert keys[0] == keys[1] and keys[11] == keys[13] != keys[14] and keys[15] == keys[16]


def test_entry_points_are_found_again_without_numba_typing(monkeypatch, rng):
    """After clear (a new tree), arguments of the types seen before reuse their entry point; another type
    gets its own, which computes the right result."""
    from numba import njit

    @njit(cache=False)
    def total(values, scale):
        return values.sum() * scale

    typed = []
    entry_point = _variants.entry_point
    monkeypatch.setattr(_variants, "entry_point", lambda kernel, args: typed.append(args) or entry_point(kernel, args))
    entries = _variants.EntryPoints()
    values = rng.normal(size=5)
    assert entries.call(total, values, 2.0) == pytest.approx(2 * values.sum())
    entries.clear()
    assert entries.call(total, values + 1, 3.0) == pytest.approx(3 * (values + 1).sum())
    assert len(typed) == 1
    entries.clear()
    assert entries.call(total, np.arange(4, dtype=np.int32), 1.0) == 6.0
    assert len(typed) == 2
