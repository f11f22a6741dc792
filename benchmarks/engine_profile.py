#!/usr/bin/env python
"""Where a round's seconds go: single-output regression 500,000 x 50 (../shared/bench data), 255 bins,
32 leaves, lambda_l2 1, 2 threads (``--params '{"objective": "binary"}'``: the target above its median).
cProfile over steady rounds (after a warm-up), functions sorted by their own time; a Numba kernel's time
counts in the Python function that calls it (the kernels are called through thin wrappers, so those rows
are the kernels).

    python benchmarks/engine_profile.py                              # this checkout
    PYTHONPATH=/path/to/older/checkout/src python benchmarks/engine_profile.py   # before/after
"""
import argparse
import cProfile
import json
import pstats
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import above_median, regression_data  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-rows", type=int, default=625_000)  # 80 % train: 500,000 rows
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--top", type=int, default=12)
    ap.add_argument("--params", default="{}",
                    help='extra training parameters as JSON, e.g. \'{"data_sample_strategy": "goss"}\'')
    a = ap.parse_args()
    Xtr, _, ytr, _ = regression_data(a.n_rows)
    if json.loads(a.params).get("objective") == "binary":
        ytr, = above_median(ytr)
    import multigrove as mg
    print("multigrove from", Path(mg.__file__).parent)
    defaults = dict(learning_rate=0.1, num_leaves=32, lambda_l2=1.0, max_bin=255, num_threads=2)
    params = {**defaults, **json.loads(a.params)}
    mg.train(params, mg.Dataset(Xtr[:5000], ytr[:5000]), 12)  # compile
    ds = mg.Dataset(Xtr, ytr)
    mg.train(params, ds, 2)  # bin outside the profile
    profiler = cProfile.Profile()
    warm = 12  # past GOSS's warm-up rounds (1 / learning_rate)
    stamps = []

    def clock(env):
        stamps.append(time.perf_counter())
        if env.iteration == warm - 1:
            profiler.enable()

    mg.train(params, ds, warm + a.rounds, callbacks=[clock])
    profiler.disable()
    per_round = float(np.median(np.diff(stamps[warm:])))
    stats = pstats.Stats(profiler).stats
    rows = sorted(((v[2], f"{Path(k[0]).name}:{k[2]}", v[1]) for k, v in stats.items()), reverse=True)
    total = sum(r[0] for r in rows)
    print(f"steady s/round {per_round:.4f} (unprofiled clock), profiled self time {total / a.rounds:.4f} s/round")
    print("| function (file:name) | ms/round | share | calls/round |")
    print("|---|---|---|---|")
    for self_s, name, calls in rows[:a.top]:
        print(f"| {name} | {self_s / a.rounds * 1e3:.2f} | {self_s / total:.0%} | {calls / a.rounds:.0f} |")


if __name__ == "__main__":
    main()
