#!/usr/bin/env python
"""The CPU time NumPy's BLAS threads spend during a fit with a validation set, and the fit's rounds, with the
metrics' weighted sums as multigrove computes them (``plain``: a multiply and a sum, no BLAS) and as a BLAS dot
product (``blas``: what the metrics did before), alternated fit by fit in one process.

NumPy's OpenBLAS runs a dot product of more than 10,000 rows on its own thread pool, whose threads then spin for a
while in wait of the next call: beside the next round's kernels, they take the cores the kernels' threads run on.
The threads of that pool are those alive once NumPy is imported; their CPU time is read from /proc (Linux).

Task: ``GroveClassifier()`` on Otto's 61,878 rows, 80 % training and 20 % (12,376 rows, shuffled with seed 0)
as the validation set whose multi_logloss is evaluated each round, ``--rounds`` rounds a fit, no early stopping.
Printed per variant: the median round and its range over the turns' medians, the BLAS threads' CPU seconds a fit,
and the other threads'.

    python benchmarks/blas_threads.py --fits 8 --out benchmarks/results/blas_threads.jsonl
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
from _common import RoundTimer, emit  # noqa: E402

#: rounds of each fit left out of its times
SKIP_ROUNDS = 2
#: seconds between two fits: a BLAS thread still spinning after one fit's last dot product would charge the next
#: fit with its CPU time (0.11 s of the variant without BLAS, in a first version without the pause)
PAUSE_S = 1.0


def thread_cpu_seconds() -> dict[int, float]:
    """User plus system CPU seconds of each thread of this process (/proc/self/task)."""
    tick = os.sysconf("SC_CLK_TCK")
    seconds = {}
    for tid in os.listdir("/proc/self/task"):
        with open(f"/proc/self/task/{tid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        seconds[int(tid)] = (int(fields[11]) + int(fields[12])) / tick
    return seconds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--fits", type=int, default=6, help="turns: each variant fits once a turn")
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--label", default="")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    blas_pool = set(thread_cpu_seconds()) - {os.getpid()}  # NumPy (imported above) started its BLAS threads

    import multigrove as mg
    from multigrove.boosting import metrics
    from multigrove.datasets import load_otto
    X, y = load_otto()
    order = np.random.default_rng(0).permutation(y.shape[0])
    n_train = y.shape[0] * 4 // 5
    X_train, y_train, X_valid, y_valid = X[order[:n_train]], y[order[:n_train]], X[order[n_train:]], y[order[n_train:]]
    plain = metrics._weighted_sum
    variants = {"plain": plain, "blas": lambda weights, per_row: float(weights @ per_row)}

    def fit(variant: str) -> tuple[list[float], float, float]:
        time.sleep(PAUSE_S)
        metrics._weighted_sum = variants[variant]
        timer = RoundTimer()
        before = thread_cpu_seconds()
        try:
            mg.GroveClassifier(n_estimators=args.rounds, early_stopping=False, num_threads=args.threads,
                               verbosity=-1).fit(X_train, y_train, eval_set=[(X_valid, y_valid)], callbacks=[timer])
        finally:
            metrics._weighted_sum = plain
        spent = {tid: cpu - before.get(tid, 0.0) for tid, cpu in thread_cpu_seconds().items()}
        blas_cpu = sum(cpu for tid, cpu in spent.items() if tid in blas_pool)
        return np.diff(timer.ts)[SKIP_ROUNDS - 1:].tolist(), blas_cpu, sum(spent.values()) - blas_cpu

    for variant in variants:  # compile before the timed turns
        fit(variant)
    turns: dict[str, list[tuple[float, float, float]]] = {v: [] for v in variants}
    for _ in range(args.fits):
        for variant in variants:
            times, blas_cpu, other_cpu = fit(variant)
            turns[variant].append((float(np.median(times)), blas_cpu, other_cpu))
    print(f"Otto, {args.threads} threads, {len(y_valid)} validation rows, {args.rounds} rounds a fit, "
          f"{args.fits} turns, BLAS threads: {len(blas_pool)}")
    for variant, rows in turns.items():
        medians, blas_cpu, other_cpu = (np.array(column) for column in zip(*rows))
        print(f"  {variant:5s} round {np.median(medians) * 1e3:6.1f} ms ({medians.min() * 1e3:.1f}-"
              f"{medians.max() * 1e3:.1f}), BLAS threads {np.median(blas_cpu):.2f} s CPU a fit, "
              f"others {np.median(other_cpu):.2f} s")
        emit(dict(task="otto_valid", variant=variant, threads=args.threads, rounds=args.rounds,
                  blas_threads=len(blas_pool), s_per_round_turns=medians.tolist(), blas_cpu_s=blas_cpu.tolist(),
                  other_cpu_s=other_cpu.tolist(), label=args.label), args.out)
    ratio = np.array([b[0] / p[0] for p, b in zip(turns["plain"], turns["blas"])])
    print(f"  round with BLAS dot / without: {np.median(ratio):.3f} ({ratio.min():.3f}-{ratio.max():.3f})")


if __name__ == "__main__":
    main()
