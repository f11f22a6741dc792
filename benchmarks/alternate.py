#!/usr/bin/env python
"""A task's rounds under settings alternated fit by fit in one process: each thread count of ``--threads`` with each
``splits_ahead`` of ``--splits-ahead`` (the local builder's batches of splits) and each ``--group-index`` (whether
feature groups read a store's CSR entries through their index, builder.GROUP_INDEX_MAX_SHARE) and each
``--batch-groups`` (whether batches whose splits differ in size are shared out by feature groups), in turn,
``--fits`` turns of ``--rounds`` rounds a fit.  Tasks (``--task``): ``otto``, ``GroveClassifier()`` defaults on
Otto's 61,878 rows; ``regression_1m``, one output on the shared harness's 1,000,000 x 50, 255 bins, 32 leaves,
lambda 1 (issue 17's setting; the Dataset binned once); ``rf1`` and ``scm20d``, round_profile.py's
``GroveRegressor()`` defaults on the accuracy panel's training rows (``MULTIGROVE_DATA``).

On this shared 2-core VM the load of other tenants drifts over minutes, and two processes run one after the other
(``round_profile.py``, which profiles each thread count in a process of its own) can differ by more than what they
compare.  Here the settings take turns fit by fit, so that each sees the same drifts; a fit's rounds after its
first two are timed (the first ones allocate the tree's buffers).  Printed per setting: the median and the 10th
percentile (the quiet rounds) of all its rounds, and each turn's median round over the first setting's (median of
the turns and their range).  With one and two threads, the serial share of a one-thread round by Amdahl's law,
2 t2 / t1 - 1, from each turn's medians (issue 43's goal: at most 10 %).

    python benchmarks/alternate.py --threads 1 2 --fits 20 --out benchmarks/results/alternate.jsonl
    python benchmarks/alternate.py --task regression_1m --threads 1 2 --fits 10 --out benchmarks/results/alternate.jsonl
    python benchmarks/alternate.py --task rf1 --threads 2 --splits-ahead 1 2 --fits 10 \
        --out benchmarks/results/alternate.jsonl
    python benchmarks/alternate.py --threads 2 --splits-ahead 1 2 4 8 --fits 30 --out benchmarks/results/alternate.jsonl
    python benchmarks/alternate.py --threads 2 --group-index on off --fits 20 --out benchmarks/results/alternate.jsonl
    python benchmarks/alternate.py --threads 2 --splits-ahead 16 --batch-groups on off --fits 10 \
        --out benchmarks/results/alternate.jsonl
"""
from __future__ import annotations

import argparse
import itertools
import os
import sys
import threading
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import (  # noqa: E402
    BATCH_GROUPS_HELP,
    RoundTimer,
    emit,
    regression_data,
    set_splits_ahead,
    thread_cpu_seconds,
)
from round_profile import TASKS  # noqa: E402

#: rounds of each fit left out of its times
SKIP_ROUNDS = 2


class CpuRoundTimer(RoundTimer):
    """A RoundTimer that also reads every thread's CPU seconds (thread_cpu_seconds) at the end of each round."""

    def __init__(self):
        super().__init__()
        self.cpu: list[dict[int, float]] = []

    def __call__(self, env) -> None:
        super().__call__(env)
        self.cpu.append(thread_cpu_seconds())


def cpu_split(before: dict[int, float], after: dict[int, float], threads: int) -> tuple[float | None, float]:
    """(the serial share of a one-thread round, the CPU seconds of the ``threads`` threads) from the CPU the
    threads ran between two readings.  With ``threads`` threads the calling thread runs the serial part and its
    share of the parallel one, each other thread its share: serial = main - mean(others), and the one-thread
    round = the CPU of all of them.  The others are the ``threads`` - 1 busiest threads besides this one (NumPy's
    idle BLAS threads are left out).  Meaningful where a waiting thread sleeps (OMP_WAIT_POLICY=passive): a
    spinning one charges its wait.  Their CPU seconds over one thread's for the same rounds tell how much slower
    each thread ran beside the others (memory traffic, cache, the regions' start and end)."""
    main = threading.get_native_id()
    spent = {tid: cpu - before.get(tid, 0.0) for tid, cpu in after.items()}
    others = sorted((cpu for tid, cpu in spent.items() if tid != main), reverse=True)[:threads - 1]
    total = spent.get(main, 0.0) + sum(others)
    if threads < 2 or len(others) < threads - 1 or total <= 0:
        return None, total
    return (spent.get(main, 0.0) - sum(others) / len(others)) / total, total


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--task", choices=sorted(TASKS), default="otto")
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--splits-ahead", type=int, nargs="+", default=[None],
                    help="the local builder's splits_ahead (default: its own, by the thread count)")
    ap.add_argument("--group-index", nargs="+", choices=("on", "off"), default=["on"],
                    help="feature groups read the CSR entries through their index (on, the default) or walk each "
                         "row's entries (off)")
    ap.add_argument("--batch-groups", nargs="+", choices=("on", "off"), default=["on"], help=BATCH_GROUPS_HELP)
    ap.add_argument("--fits", type=int, default=12, help="turns: each setting fits once a turn")
    ap.add_argument("--rounds", type=int, default=12)
    ap.add_argument("--label", default="")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    import numba

    import multigrove as mg
    from multigrove.boosting import builder
    from multigrove.boosting.builder import LocalBuilder
    from multigrove.datasets import load_otto
    if args.task == "otto":
        X, y = load_otto()
    elif args.task == "regression_1m":
        X, _, y, _ = regression_data(1_250_000)  # the harness's 80 % train: 1,000,000 rows
        train_set = mg.Dataset(X, y)
    default_ahead = LocalBuilder.splits_ahead
    index_share, group_work = builder.GROUP_INDEX_MAX_SHARE, builder.BATCH_GROUP_EXTRA_WORK

    def fit(threads: int, splits_ahead: int | None, group_index: str,
            batch_groups: str) -> tuple[list[float], tuple[float | None, float]]:
        numba.set_num_threads(threads)
        builder.GROUP_INDEX_MAX_SHARE = index_share if group_index == "on" else 0.0
        builder.BATCH_GROUP_EXTRA_WORK = group_work if batch_groups == "on" else float("inf")
        LocalBuilder.splits_ahead = default_ahead
        set_splits_ahead(splits_ahead)
        timer = CpuRoundTimer()
        if args.task == "otto":
            mg.GroveClassifier(n_estimators=args.rounds, early_stopping=False, num_threads=threads,
                               verbosity=-1).fit(X, y, callbacks=[timer])
        elif args.task == "regression_1m":
            mg.train({"learning_rate": 0.1, "num_leaves": 32, "lambda_l2": 1.0, "max_bin": 255, "num_threads": threads,
                      "verbosity": -1}, train_set, args.rounds, callbacks=[timer])
        else:
            TASKS[args.task](args.rounds, threads, timer, {})
        return np.diff(timer.ts)[SKIP_ROUNDS - 1:].tolist(), \
            cpu_split(timer.cpu[SKIP_ROUNDS - 1], timer.cpu[-1], threads)

    settings = list(itertools.product(args.threads, args.splits_ahead, args.group_index, args.batch_groups))
    for setting in settings:  # compile every setting's kernels before the timed turns
        fit(*setting)
    rounds: dict[tuple, list[float]] = {s: [] for s in settings}
    turn_medians: dict[tuple, list[float]] = {s: [] for s in settings}
    # the threads' CPU is read only where waiting threads sleep: a spinning thread's CPU is mostly its wait
    passive = os.environ.get("OMP_WAIT_POLICY", "").lower() == "passive"
    cpu_shares: dict[tuple, list[float]] = {s: [] for s in settings}
    cpu_rounds: dict[tuple, list[float]] = {s: [] for s in settings}  # CPU seconds of all its threads a round
    for _ in range(args.fits):
        for setting in settings:
            times, (cpu_share, cpu_total) = fit(*setting)
            if passive:
                cpu_rounds[setting].append(cpu_total / len(times))
                if cpu_share is not None:
                    cpu_shares[setting].append(cpu_share)
            rounds[setting] += times
            turn_medians[setting].append(float(np.median(times)))
    first = settings[0]
    for setting in settings:
        ratio = np.array(turn_medians[setting]) / np.array(turn_medians[first])
        rec = {"bench": "alternate", "label": args.label, "task": args.task, "threads": setting[0],
               "splits_ahead": setting[1], "group_index": setting[2], "batch_groups": setting[3],
               "fits": args.fits, "rounds_per_fit": args.rounds, "ms_median": 1e3 * float(np.median(rounds[setting])),
               "ms_quiet": 1e3 * float(np.percentile(rounds[setting], 10)),
               "vs_first_median": float(np.median(ratio)), "vs_first_range": [float(ratio.min()), float(ratio.max())]}
        one = (1, *setting[1:])
        if setting[0] == 2 and one in turn_medians:
            shares = 2 * np.array(turn_medians[setting]) / np.array(turn_medians[one]) - 1
            rec["serial_share_median"], rec["serial_share_range"] = float(np.median(shares)), \
                [float(shares.min()), float(shares.max())]
        if cpu_shares[setting]:
            rec["cpu_serial_share_median"] = float(np.median(cpu_shares[setting]))
            rec["cpu_serial_share_range"] = [float(min(cpu_shares[setting])), float(max(cpu_shares[setting]))]
        if cpu_rounds[setting]:
            rec["cpu_ms_per_round"] = 1e3 * float(np.median(cpu_rounds[setting]))
        print(f"{setting[0]} threads, splits ahead {setting[1] or 'default'}, group index {setting[2]}, batch groups "
              f"{setting[3]}: median {rec['ms_median']:.1f} ms a "
              f"round, quiet {rec['ms_quiet']:.1f}; a turn's median over {first}'s: {rec['vs_first_median']:.3f} "
              f"({rec['vs_first_range'][0]:.3f}-{rec['vs_first_range'][1]:.3f})"
              + (f"; serial share {100 * rec['serial_share_median']:.0f} % ({100 * rec['serial_share_range'][0]:.0f}"
                 f"-{100 * rec['serial_share_range'][1]:.0f} %)" if "serial_share_median" in rec else "")
              + (f"; by the threads' CPU {100 * rec['cpu_serial_share_median']:.0f} % "
                 f"({100 * rec['cpu_serial_share_range'][0]:.0f}-{100 * rec['cpu_serial_share_range'][1]:.0f} %)"
                 if "cpu_serial_share_median" in rec else "")
              + (f"; CPU of its threads {rec['cpu_ms_per_round']:.1f} ms a round" if "cpu_ms_per_round" in rec else ""))
        emit(rec, args.out)


if __name__ == "__main__":
    main()
