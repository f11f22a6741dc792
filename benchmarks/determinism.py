#!/usr/bin/env python
"""The cost of deterministic=True: steady seconds per round with and without it, in one run, repeats
interleaved, on the engine benchmark's single-output regression (500,000 x 50, ../shared/bench data)
and a 16-target regression (200,000 x 50); and whether 1 and 2 threads give the same model file.

    python benchmarks/determinism.py --repeats 3 --out benchmarks/results/determinism.jsonl
"""
import argparse
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import emit, regression_data  # noqa: E402


def steady_seconds(mg, params, ds, rounds: int, warm: int = 5) -> float:
    stamps = []
    mg.train(params, ds, warm + rounds, callbacks=[lambda env: stamps.append(time.perf_counter())])
    return float(np.median(np.diff(stamps[warm:])))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--out")
    a = ap.parse_args()
    import multigrove as mg
    tasks = {}
    for name, n_rows, n_outputs in (("single-output 500k x 50", 625_000, 1), ("16 targets 200k x 50", 250_000, 16)):
        Xtr, _, ytr, _ = regression_data(n_rows, n_outputs)
        tasks[name] = (Xtr, ytr)
    for name, (X, y) in tasks.items():
        base = dict(learning_rate=0.1, num_leaves=32 if np.ndim(y) == 1 else None, lambda_l2=1.0, num_threads=2)
        ds = mg.Dataset(X, y)
        mg.train(base, ds, 2)  # compile and bin outside the clock
        same = [mg.train({**base, "deterministic": True, "num_threads": t}, ds, 10).model_to_string() for t in (1, 2)]
        plain = [mg.train({**base, "num_threads": t}, ds, 10).model_to_string() for t in (1, 2)]
        times = {False: [], True: []}
        for _ in range(a.repeats):
            for det in (False, True):
                times[det].append(steady_seconds(mg, {**base, "deterministic": det}, ds, a.rounds))
        ratios = [d / p for d, p in zip(times[True], times[False])]
        emit({"benchmark": "determinism", "task": name, "s_per_round": times[False],
              "s_per_round_deterministic": times[True], "ratio_median": float(np.median(ratios)),
              "ratio_range": [min(ratios), max(ratios)], "threads_1_2_identical_deterministic": same[0] == same[1],
              "threads_1_2_identical_default": plain[0] == plain[1]}, a.out)


if __name__ == "__main__":
    main()
