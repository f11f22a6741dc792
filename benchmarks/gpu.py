#!/usr/bin/env python
"""Seconds per round on a GPU: multigrove ``device_type="cuda"`` against Py-Boost (GPU) and LightGBM (CPU).

Issue 44's table, one command for the lent GPU machine (``../shared/bench/device/README.md``: carry the
LightGBM and Py-Boost wheels and the stubs of Py-Boost's CPU-inference imports).  Tasks, depth-6 trees,
learning rate 0.1, lambda 1, min_data_in_leaf 10, 255 bins:

* ``c200_sketch`` -- 200 classes, the harness's 100,000 x 50 (80,000 train rows), sketch: projection k = 5
  (multigrove ``random_projection``, Py-Boost ``SketchBoost(sketch_method="proj", sketch_outputs=5)``);
* ``c200_full`` -- the same without a sketch;
* ``targets16`` -- 1,000,000 x 50 with 16 regression targets (LightGBM: 16 models, their rounds summed);
* ``single`` -- 1,000,000 x 50, one output (multigrove on the GPU against LightGBM on every CPU core);
* ``otto`` -- time to a target: Otto's split of ``benchmarks/otto.py`` (a validation tenth for early
  stopping after PATIENCE rounds), each library at its defaults.  LightGBM on every CPU core sets the target,
  its best test log loss; multigrove's seconds to reach it (``device_type="cuda"``, the clock from before
  binning, compilation done before it; once per growth policy of ``--otto-growth``: leaf-wise is the default,
  depth-wise builds a level of nodes a launch) against Py-Boost's whole fit (``GradientBoosting("crossentropy")``,
  its own best).  ``--otto-max-rounds`` caps the rounds (a check under the simulator).

A system's seconds per round come from two fits of ``--rounds`` and ``2 x --rounds`` rounds (the difference
over the difference in rounds, which leaves out data transfer, set-up and compilation); the first fit's
time is printed apart (transfer and compilation).  A missing library or GPU is reported in its cell, not
raised.  ``--scale`` shrinks every data set (for a check of the script on a CPU under
``NUMBA_ENABLE_CUDASIM=1``).

    python benchmarks/gpu.py --out benchmarks/results/gpu.jsonl
    NUMBA_ENABLE_CUDASIM=1 python benchmarks/gpu.py --scale 0.002 --rounds 1 --tasks c200_sketch
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from functools import partial
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import emit, import_peers, regression_data  # noqa: E402

TASKS = ("c200_sketch", "c200_full", "targets16", "single", "otto")
TREE = dict(learning_rate=0.1, max_depth=6, num_leaves=64, lambda_l2=1.0, min_data_in_leaf=10, max_bin=255)


def _data(task: str, scale: float):
    if task.startswith("c200"):
        spec = argparse.Namespace(task="multiclass", n_rows=100_000, n_features=50, n_outputs=200, seed=0,
                                  cache_dir="/tmp/peers_cache")
        X, _, y, _, _ = import_peers().get_data(spec)
        y = np.ravel(y).astype(np.int64)
    else:
        X, _, y, _ = regression_data(1_250_000, n_outputs=16 if task == "targets16" else 1)
    n = max(200, int(X.shape[0] * scale))
    return np.ascontiguousarray(X[:n]), y[:n]


def _two_fits(fit, rounds: int) -> tuple[float, float]:
    """(seconds per round from fits of rounds and 2 x rounds, the first fit's seconds)."""
    start = time.perf_counter()
    fit(rounds)
    first = time.perf_counter() - start
    start = time.perf_counter()
    fit(2 * rounds)
    second = time.perf_counter() - start
    start = time.perf_counter()
    fit(rounds)
    again = time.perf_counter() - start  # the same fit once warm: the round figure uses it
    return (second - again) / rounds, first


def _multigrove(task, X, y, threads):
    import multigrove as mg
    params = dict(TREE, growth_policy="depthwise", device_type="cuda", num_threads=threads, verbosity=-1)
    if task.startswith("c200"):
        params.update(objective="multiclass", num_class=200)
        sketch = dict(sketch="random_projection", sketch_k=5) if task == "c200_sketch" else dict(sketch="none")
        params.update(sketch)
    elif task == "targets16":
        params.update(sketch="none")
    data = mg.Dataset(X, y)
    return lambda rounds: mg.train(params, data, rounds)


def otto_fit(scale: float):
    """fit(rounds) of Otto's training rows (benchmarks/otto.py's split; ``scale``: their share, at least 300) at
    multigrove's defaults on the GPU, leaf-wise (gpu_profile.py, gpu_traffic.py)."""
    from otto import split

    import multigrove as mg
    X, y = split()[:2]
    n = max(300, int(len(y) * scale))
    params = dict(objective="multiclass", num_class=9, device_type="cuda", verbosity=-1)
    return lambda rounds: mg.train(params, mg.Dataset(X[:n], y[:n]), rounds)


CUDA_SPLITS_AHEAD_HELP = ("each task once per N: the CUDA builder's splits a call in leaf-wise growth "
                          "(CudaBuilder.splits_ahead; 1: one split a call, as before stop 70; default: its own)")


def fits_by_splits_ahead(tasks, splits_ahead, scale: float, threads: int):
    """(task, fit) for each task and each N of ``splits_ahead`` (``--splits-ahead``; None: the builder's own), the
    CUDA builder's splits a call set to N while that fit is used (gpu_profile.py, gpu_traffic.py)."""
    from multigrove.boosting.cuda_builder import CudaBuilder
    default = CudaBuilder.splits_ahead
    for task in tasks:
        for ahead in splits_ahead:
            CudaBuilder.splits_ahead = default if ahead is None else ahead
            yield task, otto_fit(scale) if task == "otto" else _multigrove(task, *_data(task, scale), threads)


def _pyboost(task, X, y):
    from py_boost import GradientBoosting, SketchBoost
    common = dict(lr=0.1, max_depth=6, lambda_l2=1.0, min_data_in_leaf=10, es=0, verbose=100000)
    if task == "c200_sketch":
        return lambda rounds: SketchBoost("crossentropy", ntrees=rounds, sketch_outputs=5, sketch_method="proj",
                                          **common).fit(X, y)
    if task == "c200_full":
        return lambda rounds: GradientBoosting("crossentropy", ntrees=rounds, **common).fit(X, y)
    Y = y.reshape(len(y), -1)
    return lambda rounds: GradientBoosting("mse", ntrees=rounds, **common).fit(X, Y)


def _lightgbm(task, X, y, threads):
    import lightgbm as lgb
    params = dict(TREE, num_threads=threads, verbosity=-1)
    if task.startswith("c200"):
        params.update(objective="multiclass", num_class=200)
    targets = [y[:, j] for j in range(y.shape[1])] if y.ndim == 2 else [y]
    base = lgb.Dataset(X, targets[0], params={"max_bin": 255, "verbosity": -1}, free_raw_data=False)
    sets = [base] + [lgb.Dataset(X, t, reference=base, free_raw_data=False) for t in targets[1:]]
    return lambda rounds: [lgb.train(params, data, rounds) for data in sets]


def _otto(threads: int, scale: float, max_rounds: int, policies: list[str], out) -> dict:
    """The ``otto`` task's table cells, each emitted as soon as it is measured: LightGBM's best test log loss
    is the target; multigrove runs once per growth policy of ``policies``, then Py-Boost."""
    from otto import split
    from otto_time_to_target import PATIENCE, first_reach, log_loss, run_lgbm, run_mg
    parts = split()
    if scale < 1.0:
        parts = tuple(part[:max(300, int(len(part) * scale))] for part in parts)
    Xtr, ytr, Xva, yva, Xte, yte = parts
    cells = {}

    def record(system: str, cell: dict) -> None:
        cells[system] = cell
        emit({"bench": "gpu", "task": "otto", "system": system, "target": target, **cell, "rows": len(ytr),
              "cpus": os.cpu_count()}, out)

    clock: list = []
    curve = run_lgbm(*parts, clock, threads=threads, max_rounds=max_rounds)
    target = min(curve)
    rounds, seconds = first_reach(dict(curve=curve, clock=clock), target)
    record("LightGBM CPU", dict(best_test_logloss=target, seconds=seconds, rounds=rounds))
    for policy in policies:
        system = f"multigrove cuda, {policy}"
        try:
            clock = []
            curve = run_mg(*parts, clock, threads=threads, max_rounds=max_rounds, device_type="cuda",
                           growth_policy=policy)
            rounds, seconds = first_reach(dict(curve=curve, clock=clock), target)
            record(system, dict(best_test_logloss=min(curve), rounds=rounds, seconds=seconds))
        except Exception as exc:  # noqa: BLE001 - a missing library or GPU is a cell of the table
            record(system, dict(error=f"{type(exc).__name__}: {str(exc)[:120]}"))
    try:
        from py_boost import GradientBoosting
        started = time.perf_counter()
        model = GradientBoosting("crossentropy", ntrees=max_rounds, lr=0.1, es=PATIENCE, verbose=100000)
        model.fit(Xtr, ytr, eval_sets=[{"X": Xva, "y": yva}])
        seconds = time.perf_counter() - started
        record("Py-Boost", dict(best_test_logloss=log_loss(np.asarray(model.predict(Xte)), yte), seconds=seconds))
    except Exception as exc:  # noqa: BLE001
        record("Py-Boost", dict(error=f"{type(exc).__name__}: {str(exc)[:120]}"))
    return cells


def _otto_cell(cell: dict) -> str:
    if "error" in cell:
        return f"not run: {cell['error']}"
    if cell.get("seconds") is None:
        return f"target not reached (best test log loss {cell['best_test_logloss']:.4f})"
    rounds = f", {cell['rounds']} rounds" if "rounds" in cell else ""
    return f"{cell['seconds']:.1f} s{rounds}, test log loss {cell['best_test_logloss']:.4f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", nargs="+", choices=TASKS, default=list(TASKS))
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--scale", type=float, default=1.0, help="share of each data set's rows")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="CPU threads (LightGBM, the host side)")
    ap.add_argument("--otto-max-rounds", type=int, default=5000, help="the most rounds of the otto task's fits")
    ap.add_argument("--otto-growth", nargs="+", choices=("leafwise", "depthwise"), default=["leafwise", "depthwise"],
                    help="the otto task's multigrove fits: one per growth policy (leafwise is the default policy)")
    ap.add_argument("--out")
    a = ap.parse_args()
    table = {}
    for task in a.tasks:
        if task == "otto":
            for system, cell in _otto(a.threads, a.scale, a.otto_max_rounds, a.otto_growth, a.out).items():
                table[(task, system)] = _otto_cell(cell)
            continue
        X, y = _data(task, a.scale)
        systems = {"multigrove cuda": partial(_multigrove, task, X, y, a.threads),
                   "Py-Boost": partial(_pyboost, task, X, y)}
        if task in ("single", "targets16", "c200_full"):
            systems["LightGBM CPU"] = partial(_lightgbm, task, X, y, a.threads)
        for system, make in systems.items():
            try:
                per_round, first = _two_fits(make(), a.rounds)
            except Exception as exc:  # noqa: BLE001 - a missing library or GPU is a cell of the table
                table[(task, system)] = f"not run: {type(exc).__name__}: {str(exc)[:120]}"
                emit({"bench": "gpu", "task": task, "system": system, "error": table[(task, system)]}, a.out)
                continue
            table[(task, system)] = f"{per_round:.4f} (first fit {first:.1f} s)"
            emit({"bench": "gpu", "task": task, "system": system, "s_per_round": per_round, "first_fit_s": first,
                  "rows": X.shape[0], "rounds": a.rounds, "cpus": os.cpu_count()}, a.out)
    print("\n| task | system | s/round (otto: seconds to LightGBM's best test log loss; Py-Boost: its whole fit) |"
          "\n|---|---|---|")
    for (task, system), cell in table.items():
        print(f"| {task} | {system} | {cell} |")


if __name__ == "__main__":
    main()
