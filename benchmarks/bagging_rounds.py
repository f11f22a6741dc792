#!/usr/bin/env python
"""Bagging rounds against full rounds, multigrove and LightGBM interleaved in one process: single-output
regression 500,000 x 50 (../shared/bench data; ``--objective binary``: its target above the training
median, logistic loss), 255 bins, 32 leaves, lambda_l2 1, 2 threads, ``bagging_freq`` 1 and
``bagging_fraction`` 1 (no bagging), 0.8 and 0.5.

Each repeat trains every (system, fraction) pair once on Datasets built beforehand; steady s/round is the
median of the per-round times after the first few rounds; the test R^2 (binary: ROC AUC) after the rounds
is reported with it.

    python benchmarks/bagging_rounds.py --repeats 3 --out benchmarks/results/bagging_rounds.jsonl
    python benchmarks/bagging_rounds.py --objective binary --repeats 3 --out benchmarks/results/bagging_rounds.jsonl
    PYTHONPATH=/path/to/older/checkout/src python benchmarks/bagging_rounds.py --systems mg   # before/after
"""
import argparse
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import above_median, emit, regression_data  # noqa: E402

BASE = dict(learning_rate=0.1, num_leaves=32, lambda_l2=1.0, max_bin=255, num_threads=2, verbose=-1)
FRACTIONS = (1.0, 0.8, 0.5)
SKIP = 5  # rounds left out of the steady time


def _test_score(objective, model, Xte, yte):
    """Test R^2 (regression) or ROC AUC (binary) of a trained model."""
    from sklearn.metrics import r2_score, roc_auc_score
    return float((roc_auc_score if objective == "binary" else r2_score)(yte, model.predict(Xte)))


def _trainers(systems, Xtr, ytr, base):
    """{system: train(params, rounds, callback) -> model with predict}, each on a Dataset built here."""
    trainers = {}
    if "mg" in systems:
        import multigrove as mg
        print("multigrove from", Path(mg.__file__).parent, file=sys.stderr)
        mg_data = mg.Dataset(Xtr, ytr)
        mg.train(dict(base, bagging_fraction=0.5, bagging_freq=1), mg_data, SKIP)  # compile and bin outside
        trainers["mg"] = lambda params, rounds, cb: mg.train(params, mg_data, rounds, callbacks=[cb])
    if "lgbm" in systems:
        import lightgbm as lgb
        lgb_data = lgb.Dataset(Xtr, ytr, free_raw_data=False)
        lgb_data.construct()
        trainers["lgbm"] = lambda params, rounds, cb: lgb.train(params, lgb_data, rounds, callbacks=[cb])
    return trainers


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-rows", type=int, default=625_000)  # 80 % train: 500,000 rows
    ap.add_argument("--rounds", type=int, default=40)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--systems", nargs="+", default=["mg", "lgbm"], choices=["mg", "lgbm"])
    ap.add_argument("--objective", default="regression", choices=["regression", "binary"])
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    Xtr, Xte, ytr, yte = regression_data(a.n_rows)
    ytr, yte = above_median(ytr, yte) if a.objective == "binary" else (np.ravel(ytr), np.ravel(yte))
    base = dict(BASE, objective=a.objective)
    trainers = _trainers(a.systems, Xtr, ytr, base)
    times = {(s, f): [] for s in trainers for f in FRACTIONS}
    for repeat in range(a.repeats):
        for fraction in FRACTIONS:
            for system, train in trainers.items():
                params = dict(base) if fraction == 1.0 else dict(base, bagging_fraction=fraction, bagging_freq=1)
                stamps = []
                model = train(params, SKIP + a.rounds, lambda env, clock=stamps: clock.append(time.perf_counter()))
                steady = float(np.median(np.diff(stamps[SKIP:])))
                score = _test_score(a.objective, model, Xte, yte)
                times[system, fraction].append(steady)
                emit(dict(bench="bagging_rounds", objective=a.objective, repeat=repeat, system=system,
                          bagging_fraction=fraction, s_per_round=round(steady, 5),
                          **{"test_auc" if a.objective == "binary" else "test_r2": round(score, 5)}), a.out)
    for system in trainers:
        for fraction in FRACTIONS[1:]:
            r = np.array(times[system, fraction]) / np.array(times[system, 1.0])
            print(f"{system} bagging {fraction} / full: {np.median(r):.2f} ({r.min():.2f}-{r.max():.2f})")
    if len(trainers) == 2:
        for fraction in FRACTIONS:
            r = np.array(times["mg", fraction]) / np.array(times["lgbm", fraction])
            print(f"multigrove / LightGBM s/round at fraction {fraction}: "
                  f"{np.median(r):.2f} ({r.min():.2f}-{r.max():.2f})")


if __name__ == "__main__":
    main()
