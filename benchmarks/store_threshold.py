#!/usr/bin/env python
"""Otto's round on 1 and 2 threads for each sparse threshold of the store, and what a second thread leaves
serial: whether a store with fewer features in its CSR part shares out better over threads (stop 64: this host's
runs disagreed, BENCHMARKS.md "What a second thread shortens"; scaling.py's otto_narrow and otto_dense ask the
16-core machine).

Every (threshold, threads) pair trains the default multi-output tree (``objective="multiclass"``, the
parameters' defaults: 127 leaves, the random projection k = 3) on a Dataset binned once with that threshold,
in this one process.  The pairs take turns fit by fit, ``--rounds`` rounds each, ``--repeats`` times: on this
shared 2-vCPU host another tenant's load comes and goes within seconds, and fine turns spread it over every pair
alike.  A pair's figures are the 10th percentile (its quiet rounds) and the median of all its rounds after each
fit's first.  Serial share = 2 t2 / t1 - 1 (Amdahl: what a second thread does not shorten, as a share of the
1-thread round), and the round it projects on ``--project`` threads, t1 (s + (1 - s) / n).

    python benchmarks/store_threshold.py --thresholds 0.5 0.7 0.8 0.9 1.0 --repeats 8 \
        --out benchmarks/results/store_threshold.jsonl
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import emit  # noqa: E402
from round_profile import QUIET_PERCENTILE  # noqa: E402  (the quiet round, as round_profile.py reads it)

BASE = {"objective": "multiclass", "num_class": 9, "verbosity": -1}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--thresholds", type=float, nargs="+", default=[0.5, 0.8])
    ap.add_argument("--repeats", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--project", type=int, default=16, help="threads to project the round to (Amdahl)")
    ap.add_argument("--label", default="mg")
    ap.add_argument("--out")
    a = ap.parse_args()
    import numba

    import multigrove as mg
    from multigrove.datasets import load_otto
    X, y = load_otto()
    datasets = {}
    for threshold in a.thresholds:
        binning = {"sparse_threshold": threshold}
        datasets[threshold] = mg.Dataset(X, y, params=binning).construct(mg.Params.from_dict({**BASE, **binning}), 9)
    pairs = [(threshold, threads) for threshold in a.thresholds for threads in (1, 2)]

    def fit(pair, n_rounds):
        threshold, threads = pair
        numba.set_num_threads(threads)
        stamps = []
        mg.train({**BASE, "num_threads": threads}, datasets[threshold], n_rounds,
                 callbacks=[lambda env: stamps.append(time.perf_counter())])
        return list(np.diff(stamps[1:]))

    for pair in pairs:  # compilation and the thread pool's start
        fit(pair, 3)
    rounds = {pair: [] for pair in pairs}
    for _ in range(a.repeats):
        for pair in pairs:
            rounds[pair] += fit(pair, a.rounds)
    lines = [f"| threshold | 1 thread ms (median) | 2 threads ms (median) | serial share | {a.project} threads, "
             "projected ms |", "|---|---|---|---|---|"]
    for threshold in a.thresholds:
        one, two = (np.asarray(rounds[threshold, threads]) for threads in (1, 2))
        t1, t2 = np.percentile(one, QUIET_PERCENTILE), np.percentile(two, QUIET_PERCENTILE)
        share = max(0.0, 2 * t2 / t1 - 1)
        projected = t1 * (share + (1 - share) / a.project)
        emit({"bench": "store_threshold", "label": a.label, "threshold": threshold, "rounds": int(one.size),
              "t1_quiet": t1, "t2_quiet": t2, "t1_median": float(np.median(one)), "t2_median": float(np.median(two)),
              "serial_share": share, "projected_threads": a.project, "projected": projected}, a.out)
        lines.append(f"| {threshold} | {1e3 * t1:.1f} ({1e3 * np.median(one):.1f}) | {1e3 * t2:.1f} "
                     f"({1e3 * np.median(two):.1f}) | {share:.0%} | {1e3 * projected:.1f} |")
    print("\n".join(lines))

if __name__ == "__main__":
    main()
