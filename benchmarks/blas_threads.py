#!/usr/bin/env python
"""The CPU time NumPy's BLAS threads spend during a fit with a validation set, and the fit's rounds, with the
metrics' weighted sums as multigrove computes them (``plain``: a multiply and a sum, no BLAS) and as a BLAS dot
product (``blas``: what the metrics did before), alternated fit by fit in one process.

NumPy's OpenBLAS runs a dot product of more than 10,000 rows on its own thread pool, whose threads then spin for a
while in wait of the next call: beside the next round's kernels, they take the cores the kernels' threads run on.
The threads of that pool are those alive once NumPy is imported; their CPU time is read from /proc (Linux).

Tasks (``--task``): ``otto_valid``, ``GroveClassifier()`` on Otto's 61,878 rows, 80 % training and 20 % (12,376
rows, shuffled with seed 0) as the validation set whose multi_logloss is evaluated each round, ``--rounds`` rounds
a fit, no early stopping; ``regression_defaults``, ``GroveRegressor(n_estimators=--rounds)`` at its defaults on
200,000 x 20 synthetic rows (y = x0 + sin(x1) + noise), whose early stopping holds out a tenth (20,000 rows).
Printed per variant: the median round and the median fit (binning included) with their ranges over the turns,
the BLAS threads' CPU seconds a fit, and the other threads'.

    python benchmarks/blas_threads.py --fits 8 --out benchmarks/results/blas_threads.jsonl
    python benchmarks/blas_threads.py --task regression_defaults --rounds 60 --fits 4 \
        --out benchmarks/results/blas_threads.jsonl
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
from _common import RoundTimer, emit, thread_cpu_seconds  # noqa: E402

#: rounds of each fit left out of its times
SKIP_ROUNDS = 2
#: seconds between two fits: a BLAS thread still spinning after one fit's last dot product would charge the next
#: fit with its CPU time (0.11 s of the variant without BLAS, in a first version without the pause)
PAUSE_S = 1.0


def task_fit(task: str, threads: int, rounds: int):
    """A function that fits the task once with a round timer (a training callback) and returns nothing."""
    import multigrove as mg
    if task == "otto_valid":
        from multigrove.datasets import load_otto
        X, y = load_otto()
        order = np.random.default_rng(0).permutation(y.shape[0])
        train, valid = order[:y.shape[0] * 4 // 5], order[y.shape[0] * 4 // 5:]
        return lambda timer: mg.GroveClassifier(n_estimators=rounds, early_stopping=False, num_threads=threads,
                                                verbosity=-1).fit(X[train], y[train], eval_set=[(X[valid], y[valid])],
                                                                  callbacks=[timer])
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200_000, 20))
    y = X[:, 0] + np.sin(X[:, 1]) + 0.3 * rng.normal(size=X.shape[0])
    return lambda timer: mg.GroveRegressor(n_estimators=rounds, num_threads=threads, verbosity=-1).fit(
        X, y, callbacks=[timer])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--task", choices=("otto_valid", "regression_defaults"), default="otto_valid")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--fits", type=int, default=6, help="turns: each variant fits once a turn")
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--label", default="")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    blas_pool = set(thread_cpu_seconds()) - {os.getpid()}  # NumPy (imported above) started its BLAS threads

    from multigrove.boosting import metrics
    run_fit = task_fit(args.task, args.threads, args.rounds)
    plain = metrics._weighted_sum
    def blas_dot(weights, per_row):  # the sums as they were before stop 67: weights of 1 where none were given
        return float((np.ones(per_row.shape[0]) if weights is None else weights) @ per_row)

    variants = {"plain": plain, "blas": blas_dot}

    def fit(variant: str) -> tuple[float, float, float, float]:
        time.sleep(PAUSE_S)
        metrics._weighted_sum = variants[variant]
        timer = RoundTimer()
        before = thread_cpu_seconds()
        try:
            run_fit(timer)
        finally:
            metrics._weighted_sum = plain
        seconds = time.perf_counter() - timer.t0
        spent = {tid: cpu - before.get(tid, 0.0) for tid, cpu in thread_cpu_seconds().items()}
        blas_cpu = sum(cpu for tid, cpu in spent.items() if tid in blas_pool)
        return float(np.median(np.diff(timer.ts)[SKIP_ROUNDS - 1:])), seconds, blas_cpu, sum(spent.values()) - blas_cpu

    for variant in variants:  # compile before the timed turns
        fit(variant)
    turns: dict[str, list[tuple[float, float, float, float]]] = {v: [] for v in variants}
    for _ in range(args.fits):
        for variant in variants:
            turns[variant].append(fit(variant))
    print(f"{args.task}, {args.threads} threads, {args.rounds} rounds a fit, {args.fits} turns, "
          f"BLAS threads: {len(blas_pool)}")
    for variant, rows in turns.items():
        rounds, fits, blas_cpu, other_cpu = (np.array(column) for column in zip(*rows))
        print(f"  {variant:5s} round {np.median(rounds) * 1e3:6.1f} ms ({rounds.min() * 1e3:.1f}-"
              f"{rounds.max() * 1e3:.1f}), fit {np.median(fits):.2f} s ({fits.min():.2f}-{fits.max():.2f}), "
              f"BLAS threads {np.median(blas_cpu):.2f} s CPU a fit, others {np.median(other_cpu):.2f} s")
        emit(dict(task=args.task, variant=variant, threads=args.threads, rounds=args.rounds,
                  blas_threads=len(blas_pool), s_per_round_turns=rounds.tolist(), s_per_fit_turns=fits.tolist(),
                  blas_cpu_s=blas_cpu.tolist(), other_cpu_s=other_cpu.tolist(), label=args.label), args.out)
    for what, column in (("round", 0), ("fit", 1)):
        ratio = np.array([b[column] / p[column] for p, b in zip(turns["plain"], turns["blas"])])
        print(f"  {what} with BLAS dot / without: {np.median(ratio):.3f} ({ratio.min():.3f}-{ratio.max():.3f})")


if __name__ == "__main__":
    main()
