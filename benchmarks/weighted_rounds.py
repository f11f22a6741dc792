#!/usr/bin/env python
"""What sample weights cost a single-output regression round, beside LightGBM: 500,000 x 50 and
150,000 x 50 (../shared/bench data, the GOSS sample's size), 32 leaves, 255 bins, 2 threads (``--threads``).

Unweighted squared loss has a constant Hessian, so multigrove's statistics are two columns (gradient,
row count) and the Hessian sums are the counts; weights (and GOSS's amplified rows) make the Hessian a
column of its own, three in all, since the counts stay exact row counts.  LightGBM always keeps
(gradient, Hessian) and derives counts from the Hessians.  Steady s/round = median of rounds 6-30;
the four runs (multigrove / LightGBM, plain / weighted) are interleaved, ``--repeats`` times.

    python benchmarks/weighted_rounds.py --repeats 3 --out benchmarks/results/weighted_rounds.jsonl
    python benchmarks/weighted_rounds.py --threads 1 --rows 500000 --repeats 3   # both libraries on one thread
"""
import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import regression_data  # noqa: E402

ROUNDS = 30
WARM = 5


def steady_seconds(train, dataset) -> float:
    stamps = []
    train(dataset, lambda env: stamps.append(time.perf_counter()))
    return float(np.median(np.diff(stamps[WARM:])))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, nargs="+", default=[500_000, 150_000])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    X_all, _, y_all, _ = regression_data(625_000)
    import lightgbm as lgb

    import multigrove as mg
    shared = dict(learning_rate=0.1, num_leaves=32, lambda_l2=1.0, max_bin=255, num_threads=a.threads, verbosity=-1)
    lgb_params = dict(shared, objective="regression")
    systems = {
        "multigrove": (lambda X, y, w: mg.Dataset(X, y, weight=w),
                       lambda ds, cb: mg.train(shared, ds, ROUNDS, callbacks=[cb])),
        "lightgbm": (lambda X, y, w: lgb.Dataset(X, y, weight=w, free_raw_data=False),
                     lambda ds, cb: lgb.train(lgb_params, ds, ROUNDS, callbacks=[cb])),
    }
    mg.train(shared, mg.Dataset(X_all[:5000], y_all[:5000], weight=np.ones(5000)), 3)  # compile
    mg.train(shared, mg.Dataset(X_all[:5000], y_all[:5000]), 3)
    records = []
    for n_rows in a.rows:
        X, y = X_all[:n_rows], y_all[:n_rows]
        weight = np.random.default_rng(0).uniform(0.5, 1.5, n_rows)
        sets = {(name, kind): make(X, y, None if kind == "plain" else weight)
                for name, (make, _) in systems.items() for kind in ("plain", "weighted")}
        times = {key: [] for key in sets}
        for _ in range(a.repeats):
            for (name, kind), ds in sets.items():
                times[(name, kind)].append(steady_seconds(systems[name][1], ds))
        for name in systems:
            plain, weighted = np.array(times[(name, "plain")]), np.array(times[(name, "weighted")])
            ratio = weighted / plain
            rec = {"bench": "weighted_rounds", "system": name, "n_rows": n_rows, "threads": a.threads,
                   "s_round_plain": [round(float(t), 4) for t in plain],
                   "s_round_weighted": [round(float(t), 4) for t in weighted],
                   "weighted_over_plain": round(float(np.median(ratio)), 3),
                   "weighted_over_plain_range": [round(float(ratio.min()), 3), round(float(ratio.max()), 3)]}
            records.append(rec)
            print(json.dumps(rec), flush=True)
        mg_w, lgb_w = np.array(times[("multigrove", "weighted")]), np.array(times[("lightgbm", "weighted")])
        mg_p, lgb_p = np.array(times[("multigrove", "plain")]), np.array(times[("lightgbm", "plain")])
        print(f"{n_rows} rows, {a.threads} threads: multigrove / LightGBM plain {np.median(mg_p / lgb_p):.2f} "
              f"({(mg_p / lgb_p).min():.2f}-{(mg_p / lgb_p).max():.2f}), weighted {np.median(mg_w / lgb_w):.2f} "
              f"({(mg_w / lgb_w).min():.2f}-{(mg_w / lgb_w).max():.2f})", flush=True)
    if a.out:
        with open(a.out, "a") as fh:
            for rec in records:
                fh.write(json.dumps(rec) + "\n")


if __name__ == "__main__":
    main()
