#!/usr/bin/env python
"""The Python between a round's kernel calls, call by call: how many calls the grower and the builder make a round
(``EntryPoints.call``: the split, scan and batch kernels) and the time from one call's return to the next call,
by pair of kernels.  That time is serial at any number of threads, and it is dearer after a kernel that streamed
much memory: the interpreter's code and data come back from memory (``--part cold`` times single operations
after a pass over ``--sweep-mb`` of memory, against the same operations warm).

Tasks: ``regression`` -- ``mg.train`` on the shared harness's 1,000,000 training rows x 50 (``--rows`` of them),
one output, 32 leaves, lambda 1, 255 bins (round_profile.py's ``regression_1m``); ``otto`` -- ``GroveClassifier()``
defaults.  Three rounds of warm-up, then ``--rounds``.  For an A/B of two checkouts run it twice, once with
``PYTHONPATH=<other checkout>/src``, alternating.

    python benchmarks/kernel_gaps.py --task regression --threads 2 --rounds 12 --label now \
        --out benchmarks/results/kernel_gaps.jsonl
    python benchmarks/kernel_gaps.py --part cold --out benchmarks/results/kernel_gaps.jsonl
    python benchmarks/kernel_gaps.py --part begin --threads 1 --out benchmarks/results/kernel_gaps.jsonl

``--part begin`` times the builder's start of a tree over ``--rows`` rows (LocalBuilder.begin: the rows put back
in store order, the leaves' bounds), after a pass over ``--sweep-mb`` of memory as a round's kernels leave it.
"""
from __future__ import annotations

import argparse
import collections
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import emit, regression_data  # noqa: E402


def _fit_function(task: str, threads: int, rows: int):
    import multigrove as mg
    if task == "regression":
        Xtr, _, ytr, _ = regression_data(1_250_000)
        dataset = mg.Dataset(Xtr[:rows], ytr[:rows])
        params = dict(learning_rate=0.1, num_leaves=32, lambda_l2=1.0, max_bin=255, num_threads=threads, verbosity=-1)
        return lambda n_rounds: mg.train(params, dataset, n_rounds)
    from multigrove.datasets import load_otto
    X, y = load_otto()
    return lambda n_rounds: mg.GroveClassifier(n_estimators=n_rounds, early_stopping=False, num_threads=threads,
                                               verbosity=-1).fit(X, y)


def gaps(task: str, threads: int, rounds: int, rows: int) -> dict:
    """Kernel calls a round and the Python between them (gaps under 2 ms: within a tree)."""
    import numba

    from multigrove.kernels import _variants
    numba.set_num_threads(threads)
    calls: list[tuple[int, int, str]] = []
    original = _variants.EntryPoints.call
    clock = time.perf_counter_ns

    def timed(self, kernel, *args, role=""):
        started = clock()
        result = original(self, kernel, *args, role=role)
        calls.append((started, clock(), getattr(kernel, "__name__", str(kernel))))
        return result

    _variants.EntryPoints.call = timed
    fit = _fit_function(task, threads, rows)
    fit(3)
    calls.clear()
    started = time.perf_counter()
    fit(rounds)
    seconds = (time.perf_counter() - started) / rounds
    between = [(calls[i + 1][0] - calls[i][1], calls[i][2], calls[i + 1][2]) for i in range(len(calls) - 1)]
    within = np.array([ns for ns, *_ in between if ns < 2_000_000]) / 1e3
    by_pair = collections.defaultdict(list)
    for ns, before, after in between:
        if ns < 2_000_000:
            by_pair[f"{before} -> {after}"].append(ns / 1e3)
    pairs = {pair: {"per_round": len(us) / rounds, "median_us": float(np.median(us))}
             for pair, us in sorted(by_pair.items(), key=lambda item: -sum(item[1]))[:6]}
    return {"s_per_round": seconds, "calls_per_round": len(calls) / rounds,
            "gap_median_us": float(np.median(within)), "gap_ms_per_round": float(within.sum() / 1e3 / rounds),
            "pairs": pairs}


def cold(sweep_mb: int, repeats: int) -> dict:
    """Microseconds of single operations right after a kernel's pass over ``sweep_mb`` of memory, and warm."""
    from numba import njit

    @njit(cache=False)
    def sweep(a):  # a read of every cache line, as a large node's kernel reads its rows
        s = 0.0
        for i in range(0, a.shape[0], 8):
            s += a[i]
        return s

    big = np.ones(sweep_mb * 131072)
    sweep(big)
    totals, row, mask = np.zeros((2, 5)), np.ones(5), np.ones((4, 93), np.bool_)
    bounds, listed, left = np.zeros(128, np.int64), [0] * 128, np.ones(5) * 0.5

    @njit(cache=False, nogil=True)
    def kernel_of(a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, a17, a18, a19, i0):
        return a0.shape[0] + i0

    arrays = [np.zeros(10) for _ in range(20)]
    kernel_of(*arrays, 1)
    operations = {
        "a Python call": lambda: None,
        "list item": lambda: listed[7],
        "NumPy scalar read": lambda: int(bounds[7]),
        "NumPy scalar write": lambda: bounds.__setitem__(7, 5),
        "NumPy row write": lambda: totals.__setitem__(0, row),
        "NumPy row copy": lambda: mask[1].copy(),
        "NumPy subtraction (5)": lambda: row - left,
        "a kernel of 20 arrays": lambda: kernel_of(*arrays, 1),
    }
    result = {}
    for name, operation in operations.items():
        after_sweep = []
        for _ in range(repeats):
            sweep(big)
            started = time.perf_counter_ns()
            operation()
            after_sweep.append(time.perf_counter_ns() - started)
        started = time.perf_counter_ns()
        for _ in range(1000):
            operation()
        result[name] = {"cold_us": float(np.median(after_sweep)) / 1e3,
                        "warm_us": (time.perf_counter_ns() - started) / 1e6}
    return result


def begin(threads: int, rows: int, sweep_mb: int, repeats: int) -> dict:
    """Milliseconds of LocalBuilder.begin over ``rows`` rows of 50 features (median and least of ``repeats``)."""
    import numba

    import multigrove as mg
    from multigrove.boosting.builder import LocalBuilder
    numba.set_num_threads(threads)
    rng = np.random.default_rng(0)
    dataset = mg.Dataset(rng.normal(size=(rows, 50)), rng.normal(size=rows))
    dataset.construct(mg.Params(), threads)
    builder = LocalBuilder(dataset.store, threads)
    stats = np.zeros((rows, 2), np.float32)
    memory = np.ones(sweep_mb * 131072)
    seconds = []
    for _ in range(repeats + 5):
        builder.rows[:] = builder.rows[::-1]  # as a tree's partitions leave them: out of order
        memory.sum()
        started = time.perf_counter()
        builder.begin(stats, max_leaves=32)
        seconds.append(time.perf_counter() - started)
    kept = np.array(seconds[5:]) * 1e3
    return {"begin_ms_median": float(np.median(kept)), "begin_ms_least": float(kept.min())}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--part", choices=["gaps", "cold", "begin"], default="gaps")
    ap.add_argument("--task", choices=["regression", "otto"], default="regression")
    ap.add_argument("--rows", type=int, default=1_000_000, help="regression: the training rows used")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=12)
    ap.add_argument("--sweep-mb", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=300)
    ap.add_argument("--label", default="mg")
    ap.add_argument("--out")
    args = ap.parse_args()
    if args.part == "begin":
        record = {"bench": "kernel_gaps", "part": "begin", "label": args.label, "rows": args.rows,
                  "threads": args.threads, **begin(args.threads, args.rows, args.sweep_mb, min(args.repeats, 60))}
        print(f"LocalBuilder.begin over {args.rows:,} rows at {args.threads} threads: "
              f"{record['begin_ms_median']:.3f} ms (least {record['begin_ms_least']:.3f})")
    elif args.part == "cold":
        record = {"bench": "kernel_gaps", "part": "cold", "label": args.label, "sweep_mb": args.sweep_mb,
                  "operations": cold(args.sweep_mb, args.repeats)}
        for name, times in record["operations"].items():
            print(f"{name:24s} {times['cold_us']:7.2f} us after the sweep, {times['warm_us']:6.3f} us warm")
    else:
        record = {"bench": "kernel_gaps", "part": "gaps", "label": args.label, "task": args.task,
                  "rows": args.rows if args.task == "regression" else None, "threads": args.threads,
                  "rounds": args.rounds, **gaps(args.task, args.threads, args.rounds, args.rows)}
        print(f"{args.task} at {args.threads} threads: {record['s_per_round'] * 1e3:.1f} ms a round, "
              f"{record['calls_per_round']:.1f} kernel calls, the Python between them {record['gap_ms_per_round']:.2f} "
              f"ms (median {record['gap_median_us']:.1f} us)")
        for pair, figures in record["pairs"].items():
            print(f"  {pair}: {figures['per_round']:.1f} a round, median {figures['median_us']:.1f} us")
    emit(record, args.out)


if __name__ == "__main__":
    main()
