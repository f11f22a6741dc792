#!/usr/bin/env python
"""What the grower's Python costs a split, where it runs: between kernels that have evicted its data from the cache.

Two measurements:

``--part in_situ``: Otto (``GroveClassifier()`` defaults, ``--rounds`` rounds after three of warm-up) with the
grower's per-split Python methods wrapped by clocks: microseconds a call and milliseconds a round of each, at
``--threads`` and ``--splits-ahead``; the builder's splits a round run in batches and one a call; and a batch's
builder call split into its kernel and the Python around it.  For an A/B of two checkouts run it twice, once with
``PYTHONPATH=<other checkout>/src``; a method one checkout lacks is left out.  The clock costs about 0.2 us a
call.

``--part cache``: the reads of one node's scan outputs into a leaf (``TreeGrower._read_scan`` of one node: a copy of
the node's feature mask, its gain, feature, bin, missing direction and left sums) timed alone, after a pass over
an array of 0 to 16 MB each time.  A split of Otto's store reads its rows' entries and statistics and reads and
writes histograms of 162 KB each (4,053 bins x 5 statistic columns), and the interpreter's data is no longer all
in the cache when the Python after it runs.

    python benchmarks/split_python.py --part cache --out benchmarks/results/split_python.jsonl
    python benchmarks/split_python.py --part in_situ --threads 2 --splits-ahead 8 --label now \
        --out benchmarks/results/split_python.jsonl
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import SPLITS_AHEAD_HELP, emit, set_splits_ahead  # noqa: E402

#: the grower's methods that run once or twice a split (a ChildScan static method marked by its class)
PER_SPLIT = ("TreeGrower._read_scan", "TreeGrower._sides", "TreeGrower._record_split", "TreeGrower._split_leaf",
             "TreeGrower._split_ahead", "TreeGrower._commit", "TreeGrower._next_in_turn", "TreeGrower._scan_batch",
             "ChildScan.finish_batch")
SWEEP_MB = (0, 1, 4, 16)


def in_situ(threads: int, rounds: int, splits_ahead: int | None) -> dict:
    import numba

    import multigrove as mg
    from multigrove.boosting import grower
    from multigrove.datasets import load_otto
    numba.set_num_threads(threads)
    set_splits_ahead(splits_ahead)
    X, y = load_otto()

    def fit(n_rounds: int) -> None:
        mg.GroveClassifier(n_estimators=n_rounds, early_stopping=False, num_threads=threads, verbosity=-1).fit(X, y)

    fit(3)
    clocks: dict[str, list[int]] = {}
    for qualified in PER_SPLIT:
        owner_name, name = qualified.split(".")
        owner = getattr(grower, owner_name)
        method = owner.__dict__.get(name)
        if method is None:
            continue
        static = isinstance(method, staticmethod)
        func = method.__func__ if static else method
        clock = clocks[qualified] = [0, 0]

        def timed(*args, _func=func, _clock=clock):
            start = time.perf_counter_ns()
            result = _func(*args)
            _clock[0] += time.perf_counter_ns() - start
            _clock[1] += 1
            return result
        setattr(owner, name, staticmethod(timed) if static else timed)
    splits = _count_splits()
    start = time.perf_counter()
    fit(rounds)
    seconds = time.perf_counter() - start
    return {"part": "in_situ", "threads": threads, "rounds": rounds, "splits_ahead": splits_ahead,
            "ms_per_round": 1e3 * seconds / rounds,
            "splits_per_round": {name: splits[name] / rounds for name in ("in_batches", "one_a_call", "batches")},
            # a batch's Python (the builder's and the grower's in the builder call) and its kernel, us a batch
            "batch_us": {"python": (splits["batch_ns"] - splits["batch_kernel_ns"]) / max(splits["batches"], 1) / 1e3,
                         "kernel": splits["batch_kernel_ns"] / max(splits["batches"], 1) / 1e3},
            "methods": {name: {"us_per_call": ns / max(calls, 1) / 1e3, "calls_per_round": calls / rounds,
                               "ms_per_round": ns / 1e6 / rounds} for name, (ns, calls) in clocks.items()}}


def _count_splits() -> dict[str, float]:
    """Count the local builder's splits from now on: run in batches (kernels.split_step.split_batch), and one a
    call; its batches; and the nanoseconds of the batches' builder calls (``_split_batch``, the scans' reads
    included) and of their kernel."""
    from multigrove.boosting.builder import LocalBuilder
    from multigrove.kernels._variants import EntryPoints
    counts = {"in_batches": 0, "one_a_call": 0, "batches": 0, "batch_ns": 0, "batch_kernel_ns": 0}
    split_batch, split_one, call = LocalBuilder._split_batch, LocalBuilder._split_one, EntryPoints.call

    def counted_batch(self, requests, scans):
        start = time.perf_counter_ns()
        ran = split_batch(self, requests, scans)
        if ran:
            counts["batch_ns"] += time.perf_counter_ns() - start
        counts["in_batches"] += len(ran)
        counts["batches"] += bool(ran)
        return ran

    def counted_one(self, *args):
        counts["one_a_call"] += 1
        return split_one(self, *args)

    def clocked_call(self, kernel, *args, **kwargs):
        start = time.perf_counter_ns()
        result = call(self, kernel, *args, **kwargs)
        if getattr(kernel, "__name__", "").startswith("split_batch"):
            counts["batch_kernel_ns"] += time.perf_counter_ns() - start
        return result
    LocalBuilder._split_batch, LocalBuilder._split_one, EntryPoints.call = counted_batch, counted_one, clocked_call
    return counts


def cache(trials: int) -> dict:
    from types import SimpleNamespace

    from multigrove.boosting.grower import TreeGrower, _Leaf
    from multigrove.kernels.split import FeatureSplits, NodeSplits
    best = NodeSplits.allocate(2, 5)
    best.gain[:] = 1.0
    # the grower's own method, on a stand-in holding what it reads: a scan's outputs (Otto's 93 features, 5
    # statistic columns) and no categorical feature
    grower = SimpleNamespace(_categorical=None, _per_feature=FeatureSplits.allocate(2, 93), _best=best)
    leaf = _Leaf(0, 0, np.zeros(5), 0.0, -1, False)

    def read() -> None:
        TreeGrower._read_scan(grower, leaf, None)

    us = {}
    for mb in SWEEP_MB:
        swept = np.ones(mb * 2**20 // 8)
        times = []
        for _ in range(trials):
            swept += 1.0  # every line of the array read and written
            start = time.perf_counter_ns()
            read()
            times.append(time.perf_counter_ns() - start)
        us[str(mb)] = float(np.median(times)) / 1e3
    return {"part": "cache", "trials": trials, "us_after_sweep_mb": us}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--part", choices=("in_situ", "cache"), default="in_situ")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=25)
    ap.add_argument("--splits-ahead", type=int, default=None, help=SPLITS_AHEAD_HELP)
    ap.add_argument("--trials", type=int, default=2000, help="--part cache: reads timed after each sweep size")
    ap.add_argument("--label", default="")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    rec = in_situ(args.threads, args.rounds, args.splits_ahead) if args.part == "in_situ" else cache(args.trials)
    rec = {"bench": "split_python", "label": args.label, **rec}
    if args.part == "in_situ":
        print(f"{rec['ms_per_round']:.1f} ms a round; per split (us a call, ms a round):")
        for name, m in rec["methods"].items():
            print(f"  {name:28s} {m['us_per_call']:7.2f} us x {m['calls_per_round']:6.1f} = "
                  f"{m['ms_per_round']:5.2f} ms")
        print(f"  all of them: {sum(m['ms_per_round'] for m in rec['methods'].values()):.2f} ms a round")
        print("splits a round: " + ", ".join(f"{name} {n:.1f}" for name, n in rec["splits_per_round"].items()))
        print(f"a batch: {rec['batch_us']['python']:.1f} us of Python in the builder's call (its scans' reads "
              f"included), {rec['batch_us']['kernel']:.1f} us of kernel")
    else:
        print("reading a node's scan outputs, median us, after a pass over an array of: " +
              ", ".join(f"{mb} MB {us:.2f}" for mb, us in rec["us_after_sweep_mb"].items()))
    emit(rec, args.out)


if __name__ == "__main__":
    main()
