#!/usr/bin/env python
"""What entering a parallel region costs, by thread count: the floor under which work runs on one thread.

A Numba ``prange`` region over as many tasks as threads is timed empty (the fork/join alone) and with
work of a known one-thread duration split between the threads, against the same work on one thread
without a region.  The break-even is the least work (one-thread microseconds) at which the region is
faster: parallel regions entered for less work than that are a loss (issue 43).  Median of ``--calls``
calls after a warm-up; the threading layer Numba picked is printed.  Then an empty region's cost after a gap of
0 to 50 ms of work on the calling thread: how long the pool's threads wait spinning before they sleep, and what
waking them costs (run it again with ``OMP_WAIT_POLICY=passive``, the test suite's setting, to see a region whose
threads always sleep).

    python benchmarks/region_cost.py --out benchmarks/results/region_cost.jsonl
    OMP_WAIT_POLICY=passive python benchmarks/region_cost.py --out benchmarks/results/region_cost.jsonl
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
from numba import get_num_threads, njit, prange, set_num_threads, threading_layer

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import emit, median_seconds  # noqa: E402

#: milliseconds of work on the calling thread before a region (after_gaps), and the calls timed at each
GAPS_MS = (0, 0.5, 1, 2, 5, 10, 50)
GAP_CALLS = 60
#: one-thread work sizes tried (float64 values summed; about a nanosecond each)
WORK_SIZES = (0, 1_000, 3_000, 10_000, 30_000, 100_000, 300_000)


@njit(cache=True)
def _sum_serial(values):
    total = 0.0
    for i in range(values.shape[0]):
        total += values[i] * values[i]
    return total


@njit(parallel=True, cache=True)
def _sum_region(values, partial):
    n_tasks = partial.shape[0]
    n = values.shape[0]
    for t in prange(n_tasks):
        total = 0.0
        for i in range(t * n // n_tasks, (t + 1) * n // n_tasks):
            total += values[i] * values[i]
        partial[t] = total
    return partial.sum()


def _median_us(call, calls: int) -> float:
    return 1e6 * median_seconds(call, calls)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, nargs="+", default=[2, 4, 8, 16])
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--out")
    a = ap.parse_args()
    threads = [t for t in a.threads if t <= (os.cpu_count() or 1)]
    set_num_threads(max(threads))
    values = np.random.default_rng(0).random(max(WORK_SIZES) or 1)
    _sum_serial(values[:10])
    _sum_region(values[:10], np.zeros(2))
    print(f"threading layer: {threading_layer()}, {os.cpu_count()} CPUs")
    print("| threads | empty region us | " + " | ".join(f"{w:,} values: serial / region us" for w in WORK_SIZES[1:])
          + " | break-even (one-thread us) |")
    print("|---|---|" + "---|" * (len(WORK_SIZES) - 1) + "---|")
    for t in threads:
        set_num_threads(t)
        partial = np.zeros(get_num_threads())
        row = {}
        for w in WORK_SIZES:
            chunk = values[:w]
            for _ in range(50):  # warm the threads and caches
                _sum_region(chunk, partial)
            region = _median_us(lambda chunk=chunk: _sum_region(chunk, partial), a.calls)  # noqa: B023
            serial = _median_us(lambda chunk=chunk: _sum_serial(chunk), a.calls)
            row[w] = (serial, region)
        breakeven = next((row[w][0] for w in WORK_SIZES[1:] if row[w][1] < row[w][0]), float("nan"))
        emit({"bench": "region_cost", "threads": t, "layer": threading_layer(), "cpus": os.cpu_count(),
              "wait_policy": os.environ.get("OMP_WAIT_POLICY", ""), "empty_region_us": row[0][1],
              "serial_us": {w: row[w][0] for w in WORK_SIZES[1:]},
              "region_us": {w: row[w][1] for w in WORK_SIZES[1:]}, "breakeven_serial_us": breakeven}, a.out)
        print(f"| {t} | {row[0][1]:.1f} | " + " | ".join(f"{row[w][0]:.1f} / {row[w][1]:.1f}" for w in WORK_SIZES[1:])
              + f" | {breakeven:.1f} |")
    after_gaps(max(threads), partial=np.zeros(max(threads)), out=a.out)


def after_gaps(threads: int, partial: np.ndarray, out: str | None) -> None:
    """An empty region's cost after ``GAPS_MS`` of work on the calling thread alone (the Python between two
    kernels, or between two rounds): the pool's threads wait for the next region spinning, then asleep, and a
    region that has to wake them costs far more (OMP_WAIT_POLICY, GOMP_SPINCOUNT)."""
    set_num_threads(threads)
    cells = {}
    for gap_ms in GAPS_MS:
        times = []
        for _ in range(GAP_CALLS if gap_ms < 10 else GAP_CALLS // 4):
            until = time.perf_counter() + gap_ms / 1e3
            while time.perf_counter() < until:  # busy, as the interpreter is between two kernels
                pass
            start = time.perf_counter()
            _sum_region(partial[:0], partial)
            times.append(time.perf_counter() - start)
        cells[gap_ms] = 1e6 * float(np.median(times))
    emit({"bench": "region_cost_after_gap", "threads": threads, "layer": threading_layer(),
          "wait_policy": os.environ.get("OMP_WAIT_POLICY", ""), "region_us_after_gap_ms": cells}, out)
    print(f"\nan empty region at {threads} threads after a gap of work on one thread (ms: us): "
          + ", ".join(f"{gap}: {us:.1f}" for gap, us in cells.items()))


if __name__ == "__main__":
    main()
