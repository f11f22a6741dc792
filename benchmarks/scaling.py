#!/usr/bin/env python
"""Seconds per round from 1 to 16 threads, multigrove and LightGBM side by side (issue 43's table).

Tasks: ``otto`` -- ``GroveClassifier()`` against ``LGBMClassifier()``, both at their defaults, on the 61,878
Otto rows (``MULTIGROVE_DATA`` or ../shared/data); ``otto_dense`` -- the same with ``is_enable_sparse=False``
(every column binned dense, no CSR part: the builder's feature groups can take small nodes); ``otto_narrow`` --
the same with ``sparse_threshold=0.8``, one-output trees' threshold (the defaults bin a multi-output tree's store
with 0.5: 89 of Otto's 93 features in the CSR part, against 54 at 0.8; ``benchmarks/store_threshold.py``); ``single`` --
one output, 1,000,000 x 50 of the shared
harness (its 80 % train of 1,250,000 rows); ``targets16`` -- the same rows with 16 targets, one multigrove
model at its default sketch against 16 LightGBM models (their rounds summed); ``c200`` -- 200 classes, the
harness's 100,000 x 50 (``benchmarks/compare.py``'s data, 80,000 train rows), multigrove with the random
projection k = 5; ``c200_sklearn`` -- ``make_classification(100_000, 50, n_informative=25, n_classes=200,
n_clusters_per_class=1, random_state=0)``, the same settings.  Settings matched for every task but Otto:
learning rate 0.1, 32 leaves, lambda 1, 255 bins.

Every cell trains in this one process on data binned once, with ``num_threads`` set for both libraries; the
first rounds of each cell (compilation, the thread pool's start) are left out and the rest are timed until
``--budget`` seconds have passed (at least ``--min-rounds``), so that the slow 1-thread cells stay short.
A cell's figure is the median of its timed rounds.  The first multigrove fit compiles the kernels (or
reads them from the cache): its seconds are printed apart.

    python benchmarks/scaling.py --out benchmarks/results/scaling_threads.jsonl
    python benchmarks/scaling.py --tasks otto single --threads 1 2
    python benchmarks/scaling.py --tasks otto --splits-ahead 1   # the batches of splits off (an A/B)
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import (  # noqa: E402
    SPLITS_AHEAD_HELP,
    RoundTimer,
    emit,
    import_peers,
    regression_data,
    set_splits_ahead,
)

MATCHED = dict(learning_rate=0.1, num_leaves=32, lambda_l2=1.0, max_bin=255)
#: rounds of each cell left out of its figure (the thread pool's start at a new thread count); the
#: compilation is outside every cell (the task's first fit)
WARM_ROUNDS = 1
#: the Otto tasks: GroveClassifier's parameters beside its defaults
OTTO_TASKS = {"otto": {}, "otto_dense": {"is_enable_sparse": False}, "otto_narrow": {"sparse_threshold": 0.8}}
TASK_NAMES = ["otto", "otto_dense", "otto_narrow", "single", "targets16", "c200", "c200_sklearn"]


class RoundClock(RoundTimer):
    """A round timer for either library that stops training once the budget is spent."""

    def __init__(self, budget: float, min_rounds: int, stop_exception):
        super().__init__()
        self.budget, self.min_rounds, self.stop_exception = budget, min_rounds, stop_exception

    def __call__(self, env):
        super().__call__(env)
        timed = len(self.ts) - 1 - WARM_ROUNDS  # rounds between stamps after the warm-up
        if timed >= self.min_rounds and self.ts[-1] - self.ts[WARM_ROUNDS] >= self.budget:
            raise self.stop_exception(env.iteration, [])

    def seconds_per_round(self) -> float:
        return float(np.median(np.diff(self.ts[WARM_ROUNDS:])))


def _otto():
    from multigrove.datasets import load_otto
    return load_otto()


def _c200_harness():
    peers = import_peers()
    spec = argparse.Namespace(task="multiclass", n_rows=100_000, n_features=50, n_outputs=200, seed=0,
                              cache_dir="/tmp/peers_cache")
    Xtr, _, ytr, _, _ = peers.get_data(spec)
    return Xtr, np.ravel(ytr).astype(np.int64)


def _c200_sklearn():
    from sklearn.datasets import make_classification
    return make_classification(100_000, 50, n_informative=25, n_classes=200, n_clusters_per_class=1,
                               random_state=0)


def _data(task: str):
    if task in OTTO_TASKS:
        return _otto()
    if task == "single":
        Xtr, _, ytr, _ = regression_data(1_250_000)
        return Xtr, np.ravel(ytr)
    if task == "targets16":
        Xtr, _, Ytr, _ = regression_data(1_250_000, n_outputs=16)
        return Xtr, Ytr
    return _c200_harness() if task == "c200" else _c200_sklearn()


class Task:
    """One task's data, binned once per library, and a round clock for each (library, threads)."""

    def __init__(self, name: str, budget: float, min_rounds: int):
        import lightgbm as lgb

        import multigrove as mg
        self.name, self.budget, self.min_rounds = name, budget, min_rounds
        self.X, self.y = _data(name)
        self.rounds = 10_000  # the clock stops every cell
        if name in OTTO_TASKS:
            return
        self.mg_params = dict(MATCHED, verbosity=-1)
        self.lgb_params = dict(MATCHED, verbosity=-1, objective="regression")
        if name in ("c200", "c200_sklearn"):
            self.mg_params.update(objective="multiclass", num_class=200, sketch="random_projection", sketch_k=5)
            self.lgb_params.update(objective="multiclass", num_class=200)
        self.mg_data = mg.Dataset(self.X, self.y)
        targets = [self.y[:, j] for j in range(self.y.shape[1])] if self.y.ndim == 2 else [self.y]
        base = lgb.Dataset(self.X, targets[0], params={"max_bin": 255, "verbosity": -1}, free_raw_data=False)
        self.lgb_data = [base] + [lgb.Dataset(self.X, t, reference=base, free_raw_data=False) for t in targets[1:]]

    def multigrove(self, threads: int) -> float:
        import multigrove as mg
        clock = RoundClock(self.budget, self.min_rounds, mg.EarlyStopException)
        if self.name in OTTO_TASKS:
            mg.GroveClassifier(n_estimators=self.rounds, early_stopping=False, num_threads=threads,
                               verbosity=-1, **OTTO_TASKS[self.name]).fit(self.X, self.y, callbacks=[clock])
        else:
            mg.train({**self.mg_params, "num_threads": threads}, self.mg_data, self.rounds, callbacks=[clock])
        return clock.seconds_per_round()

    def lightgbm(self, threads: int) -> float:
        import lightgbm as lgb
        from lightgbm.callback import EarlyStopException
        if self.name in OTTO_TASKS:
            clock = RoundClock(self.budget, self.min_rounds, EarlyStopException)
            lgb.LGBMClassifier(n_estimators=self.rounds, n_jobs=threads, verbosity=-1).fit(
                self.X, self.y, callbacks=[clock])
            return clock.seconds_per_round()
        total = 0.0  # 16 targets: the round of the 16 models
        for data in self.lgb_data:
            clock = RoundClock(self.budget / len(self.lgb_data), self.min_rounds, EarlyStopException)
            lgb.train({**self.lgb_params, "num_threads": threads}, data, self.rounds, callbacks=[clock])
            total += clock.seconds_per_round()
        return total


def run_task(name: str, a, threads: list[int], table: dict) -> None:
    """One task's cells, each emitted as soon as it is measured, into ``table``."""
    import numba
    task_start = start = time.perf_counter()
    task = Task(name, a.budget, a.min_rounds)
    print(f"{name}: data and binning {time.perf_counter() - start:.1f} s", flush=True)
    start = time.perf_counter()
    task.multigrove(max(threads))  # compilation (or the cache's read) and the pool's start, untimed
    print(f"{name}: first multigrove fit (compilation) {time.perf_counter() - start:.1f} s", flush=True)
    for t in threads:
        numba.set_num_threads(t)
        for system, run in (("multigrove", task.multigrove), ("lightgbm", task.lightgbm)):
            seconds = run(t)
            table[(name, system, t)] = seconds
            emit({"bench": "scaling", "task": name, "system": system, "threads": t,
                  "s_per_round": seconds, "cpus": os.cpu_count(), "splits_ahead": a.splits_ahead}, a.out)
    print(f"{name}: done in {time.perf_counter() - task_start:.0f} s", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", nargs="+", default=[t for t in TASK_NAMES if t not in ("otto_dense", "otto_narrow")],
                    choices=TASK_NAMES)
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2, 4, 8, 16])
    # 1 s and 2 rounds a cell: with 3 s and 3 rounds the table took over 7 minutes on 16 cores, LightGBM's
    # 200-class rounds at one and two threads taking 3-6 s each (BENCHMARKS.md)
    ap.add_argument("--budget", type=float, default=1.0, help="timed seconds per cell (after the warm-up)")
    ap.add_argument("--min-rounds", type=int, default=2)
    ap.add_argument("--splits-ahead", type=int, help=SPLITS_AHEAD_HELP)
    ap.add_argument("--out")
    a = ap.parse_args()
    set_splits_ahead(a.splits_ahead)
    import numba
    threads = [t for t in a.threads if t <= (os.cpu_count() or 1)]
    numba.set_num_threads(max(threads))
    table = {}
    done = []
    for name in a.tasks:
        try:
            run_task(name, a, threads, table)
            done.append(name)
        except Exception as exc:  # noqa: BLE001 - one task's failure (missing data, say) leaves the others' cells
            print(f"{name}: not run: {type(exc).__name__}: {exc}", flush=True)
            emit({"bench": "scaling", "task": name, "error": f"{type(exc).__name__}: {str(exc)[:200]}"}, a.out)
    print(f"\nseconds per round ({os.cpu_count()} CPUs); ratio = multigrove / LightGBM")
    print("| task | | " + " | ".join(str(t) for t in threads) + " | speed-up 1 → max |")
    print("|---|---|" + "---|" * len(threads) + "---|")
    for name in done:
        for system in ("multigrove", "lightgbm"):
            cells = [table[(name, system, t)] for t in threads]
            print(f"| {name} | {system} | " + " | ".join(f"{c:.4f}" for c in cells)
                  + f" | {cells[0] / cells[-1]:.2f}x |")
        ratios = [table[(name, "multigrove", t)] / table[(name, "lightgbm", t)] for t in threads]
        print(f"| {name} | ratio | " + " | ".join(f"{r:.2f}" for r in ratios) + " | |")


if __name__ == "__main__":
    main()
