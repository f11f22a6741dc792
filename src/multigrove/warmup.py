"""Compile every kernel into Numba's on-disk cache before the first real fit.

Numba compiles a kernel the first time it is called and keeps the machine code in its cache
(``NUMBA_CACHE_DIR``, else a ``__pycache__`` folder beside the package's sources, else, where that
folder is read-only, ``~/.cache/numba`` or ``$XDG_CACHE_HOME/numba``).  A fresh container, CI job or
notebook image starts with an empty cache and its first fits wait for the compiler.  Run ::

    python -m multigrove compile          # or: multigrove compile

once, for example in a Dockerfile or a CI step, with the same cache location as the programs that
will train.  It trains and predicts tiny models of every kind multigrove has (one and many outputs,
every objective, sparse inputs, row sampling, the three tree shapes, SHAP and top-k prediction,
label trees), once on data small enough for the serial kernels and once on data large enough for
the parallel ones, in several processes at once: every kernel a user's fit can call is then read
from the cache.  A later run finds them there and takes seconds.
"""
from __future__ import annotations

import concurrent.futures
import multiprocessing
import os
import time
import warnings

import numpy as np

#: rows of the "large" workloads: enough for the parallel kernels (kernels._variants.PARALLEL_MIN_WORK) in
#: every stage: binning, histograms of row chunks, partitions of PARALLEL_PARTITION_MIN_ROWS rows, scans,
#: predictions
LARGE_ROWS = 40_000


def _regression(n_rows: int, n_outputs: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, 12))
    X[rng.random(X.shape) < 0.02] = np.nan
    Y = X[:, :n_outputs] + 0.1 * rng.normal(size=(n_rows, n_outputs))
    return X, np.nan_to_num(Y[:, 0] if n_outputs == 1 else Y)


def _classes(n_rows: int, n_classes: int):
    X, Y = _regression(n_rows, 2)
    return X, (np.digitize(Y[:, 0], np.quantile(Y[:, 0], np.linspace(0, 1, n_classes + 1)[1:-1]))).astype(int)


def _train_and_predict(params: dict, X, y, rounds: int = 3, predict_more: bool = False,
                       valid_rows: int | None = None) -> None:
    """Train on four fifths of the rows, validated on the rest (or on ``valid_rows`` of them), and predict."""
    import multigrove as mg
    cut = X.shape[0] * 4 // 5
    end = X.shape[0] if valid_rows is None else cut + valid_rows
    train_set = mg.Dataset(X[:cut], y[:cut])
    valid_set = mg.Dataset(X[cut:end], y[cut:end], reference=train_set)
    booster = mg.train({"verbosity": -1, **params}, train_set, rounds, valid_sets=[valid_set])
    booster.predict(X)
    if predict_more:
        booster.predict(X[:50], pred_contrib=True)
        booster.predict(X, pred_leaf=True)
        if booster.n_outputs > 1:
            booster.predict(X, top_k=2)


def _one_output(n_rows: int) -> None:
    import multigrove as mg
    X, y = _regression(n_rows, 1)
    _train_and_predict({}, X, y, predict_more=True)
    # bins of at least 3 rows (min_data_in_bin=None's rule for wide histograms and few rows: BinMapper)
    mg.Dataset(X, y, params={"min_data_in_bin": 3}).construct()
    _train_and_predict({"objective": "binary"}, X, (y > 0).astype(float))
    _train_and_predict({"growth_policy": "depthwise", "max_depth": 4}, X, y)
    _train_and_predict({"growth_policy": "symmetric", "max_depth": 3}, X, y)


def _samples(n_rows: int) -> None:
    X, y = _regression(n_rows, 1)
    _train_and_predict({"data_sample_strategy": "goss", "learning_rate": 0.5}, X, y)
    _train_and_predict({"bagging_fraction": 0.5, "bagging_freq": 1, "feature_fraction": 0.8}, X, y)
    X2, Y2 = _regression(n_rows, 3)
    _train_and_predict({"data_sample_strategy": "goss", "learning_rate": 0.5}, X2, Y2)


def _many_outputs(n_rows: int) -> None:
    X, Y = _regression(n_rows, 3)
    _train_and_predict({}, X, Y, predict_more=True)
    _train_and_predict({"sketch": "none", "leaf_sparsity": 2}, X, Y, predict_more=True)
    for valid_rows in (100, 1_000):  # a held-out set that walks the trees (shard.walks_trees): both walk kernels
        _train_and_predict({}, X, Y, valid_rows=valid_rows)
    X6, Y6 = _regression(n_rows, 6)
    _train_and_predict({}, X6, Y6)  # random projection
    _train_and_predict({"multi_strategy": "one_vs_all"}, X6, Y6)


def _classification(n_rows: int) -> None:
    X, y = _classes(n_rows, 3)
    _train_and_predict({"objective": "multiclass"}, X, y, predict_more=True)
    X5, y5 = _classes(n_rows, 5)
    _train_and_predict({"objective": "multiclass"}, X5, y5)
    _, Y = _regression(n_rows, 4)
    _train_and_predict({"objective": "multilabel"}, X, (Y > 0).astype(float), predict_more=True)


def _sparse_inputs(n_rows: int) -> None:
    import scipy.sparse as sp
    rng = np.random.default_rng(1)
    dense = rng.normal(size=(n_rows, 4))
    onehot = sp.csr_matrix((np.ones(n_rows), (np.arange(n_rows), rng.integers(0, 30, n_rows))), shape=(n_rows, 30))
    counts = sp.random(n_rows, 40, density=0.05, format="csr", random_state=2, dtype=np.float64)
    X = sp.hstack([sp.csr_matrix(dense), onehot, counts], format="csr")
    y = dense[:, 0] + onehot[:, :5].toarray().sum(1)
    _train_and_predict({}, X, y, predict_more=True)
    _train_and_predict({"objective": "multilabel"}, X, np.column_stack([y > 0, dense[:, 1] > 0]).astype(float))


def _batches(n_rows: int) -> None:
    """Leaf-wise trees of many small leaves, whose splits go in batches from builder.BATCH_MIN_THREADS threads on
    (kernels.split_step's split_batch, a split a task, and split_batch_groups), over dense columns and over a store
    with a CSR part; nothing on fewer threads, where no batch runs, nor on the small data."""
    import numba

    from .boosting.builder import BATCH_MIN_THREADS
    from .params import Params
    # the threads its fits run: num_threads' default, within Numba's pool (engine._numba_threads)
    if n_rows < LARGE_ROWS or min(Params().threads, numba.config.NUMBA_NUM_THREADS) < BATCH_MIN_THREADS:
        return
    params = {"num_leaves": 127, "min_data_in_leaf": 5}
    for n_outputs in (1, 3):
        X, y = _regression(n_rows, n_outputs)
        _train_and_predict(params, X, y, rounds=2)
    rng = np.random.default_rng(6)
    X = np.where(rng.random((n_rows, 40)) < 0.15, rng.integers(1, 30, size=(n_rows, 40)), 0).astype(np.float64)
    _train_and_predict({**params, "objective": "multiclass"}, X, rng.integers(0, 4, n_rows), rounds=2)


def _sparse_outputs(n_rows: int) -> None:
    import scipy.sparse as sp

    import multigrove as mg
    rng = np.random.default_rng(3)
    X = rng.normal(size=(n_rows, 8))
    Y = sp.csr_matrix((rng.random((n_rows, 40)) < 0.05).astype(np.float64))
    for objective in ("sparse_hinge", "sparse_squared"):
        booster = mg.train({"objective": objective, "verbosity": -1}, mg.Dataset(X, Y), 2,
                           valid_sets=[mg.Dataset(X[:100], Y[:100])])
        booster.predict(X, top_k=3)


def _label_trees(n_rows: int) -> None:
    import scipy.sparse as sp

    from .xmc import LabelTreeClassifier
    rng = np.random.default_rng(4)
    X = sp.random(n_rows, 60, density=0.1, format="csr", random_state=5, dtype=np.float64)
    Y = sp.csr_matrix((rng.random((n_rows, 30)) < 0.08).astype(np.float64))
    LabelTreeClassifier(branching=4, n_trees=1).fit(X, Y).predict(X, top_k=3)


#: (name, function, rows): every kind of fit, small (serial kernels) and large (parallel ones)
WORKLOADS = tuple((f"{fn.__name__.strip('_')} ({size})", fn, rows)
                  for fn in (_one_output, _many_outputs, _classification, _samples, _sparse_inputs, _sparse_outputs,
                             _label_trees, _batches)
                  for size, rows in (("small", 1_000), ("large", LARGE_ROWS)))


def _run(index: int) -> tuple[str, float]:
    name, fn, rows = WORKLOADS[index]
    started = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fn(rows)
    return name, time.perf_counter() - started


def compile_kernels(processes: int | None = None, verbose: bool = True) -> float:
    """Compile every kernel multigrove uses into Numba's cache (see the module's docstring).

    Parameters
    ----------
    processes : int, optional
        Processes compiling side by side (default: the cores this process may use, at most the
        number of workloads); 1 compiles in this process.
    verbose : bool, default True
        Print each workload as it finishes.

    Returns
    -------
    float
        Seconds taken.
    """
    started = time.perf_counter()
    if processes is None:
        processes = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    processes = max(1, min(int(processes), len(WORKLOADS)))
    if processes == 1:
        done = map(_run, range(len(WORKLOADS)))
        for name, seconds in done:
            _report(verbose, name, seconds)
    else:
        # fresh interpreters (spawn): forking a process whose Numba threads already run is unsafe
        context = multiprocessing.get_context("spawn")
        with concurrent.futures.ProcessPoolExecutor(processes, mp_context=context) as pool:
            for future in concurrent.futures.as_completed([pool.submit(_run, i) for i in range(len(WORKLOADS))]):
                _report(verbose, *future.result())
    seconds = time.perf_counter() - started
    if verbose:
        plural = "es" if processes != 1 else ""
        print(f"compiled into {cache_location()} in {seconds:.1f} s ({processes} process{plural})", flush=True)
    return seconds


def _report(verbose: bool, name: str, seconds: float) -> None:
    if verbose:
        print(f"  {name:28s} {seconds:6.1f} s", flush=True)


def cache_location() -> str:
    """Where Numba keeps multigrove's compiled kernels (the folder of one kernel's cache files)."""
    from .kernels.histogram import build_histogram_serial
    return str(build_histogram_serial._cache._cache_path)
