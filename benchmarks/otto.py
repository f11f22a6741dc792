#!/usr/bin/env python
"""Otto (9 classes) trained to convergence with early stopping: multigrove vs LightGBM vs XGBoost.

Split: stratified 80/20 train/test (seed 0), then 10% of train held out for early stopping
(seed 0).  Settings for all: learning rate 0.1, lambda_l2 1, 255 bins, 32 leaves leaf-wise
(XGBoost: depth 6 depth-wise, as in ../shared/bench/peers.py), 2 threads, early stopping after
50 rounds without improvement of the validation multi-class log loss, at most 3000 rounds.
Each system runs in its own subprocess; times include binning / DMatrix construction.

    python benchmarks/otto.py --out benchmarks/results/otto.jsonl
"""
import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import emit, run_worker  # noqa: E402

SEED = 0


def split():
    from sklearn.model_selection import train_test_split

    from multigrove.datasets import load_otto
    X, y = load_otto()
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.2, stratify=y, random_state=SEED)
    Xtr, Xva, ytr, yva = train_test_split(Xtr, ytr, test_size=0.1, stratify=ytr, random_state=SEED)
    return Xtr, ytr, Xva, yva, Xte, yte


def run(system, max_rounds):
    from sklearn.metrics import accuracy_score, log_loss
    Xtr, ytr, Xva, yva, Xte, yte = split()
    t0 = time.perf_counter()
    if system.startswith("mg"):
        import multigrove as mg
        strategy = "one_vs_all" if system == "mg_ova" else "multi_output"
        params = dict(objective="multiclass", num_class=9, learning_rate=0.1, num_leaves=32, lambda_l2=1.0,
                      max_bin=255, num_threads=2, seed=SEED, multi_strategy=strategy, verbosity=-1)
        mg.train(params, mg.Dataset(Xtr[:3000], ytr[:3000]), 2)  # compile outside the timing
        t0 = time.perf_counter()
        ds = mg.Dataset(Xtr, ytr)
        va = mg.Dataset(Xva, yva, reference=ds)
        bst = mg.train(params, ds, max_rounds, valid_sets=[va], callbacks=[mg.early_stopping(50, verbose=False)])
        fit_s = time.perf_counter() - t0
        P = bst.predict(Xte)
        best, rounds = bst.best_iteration, bst.current_iteration()
    elif system == "lgbm":
        import lightgbm as lgb
        params = dict(objective="multiclass", num_class=9, learning_rate=0.1, num_leaves=32, lambda_l2=1.0,
                      max_bin=255, num_threads=2, seed=SEED, verbose=-1)
        ds = lgb.Dataset(Xtr, ytr)
        va = lgb.Dataset(Xva, yva, reference=ds)
        bst = lgb.train(params, ds, max_rounds, valid_sets=[va],
                        callbacks=[lgb.early_stopping(50, verbose=False)])
        fit_s = time.perf_counter() - t0
        P = bst.predict(Xte, num_iteration=bst.best_iteration)
        best, rounds = bst.best_iteration, bst.current_iteration()
    elif system == "xgb":
        import xgboost as xgb
        params = dict(objective="multi:softprob", num_class=9, eta=0.1, max_depth=6, reg_lambda=1.0,
                      max_bin=256, tree_method="hist", nthread=2, seed=SEED, eval_metric="mlogloss")
        dtr = xgb.QuantileDMatrix(Xtr, ytr, max_bin=256)
        dva = xgb.DMatrix(Xva, yva)
        bst = xgb.train(params, dtr, max_rounds, evals=[(dva, "valid")], early_stopping_rounds=50,
                        verbose_eval=False)
        fit_s = time.perf_counter() - t0
        P = bst.predict(xgb.DMatrix(Xte), iteration_range=(0, bst.best_iteration + 1))
        best, rounds = bst.best_iteration + 1, bst.num_boosted_rounds()
    else:
        raise ValueError(system)
    return dict(system=system, fit_s=round(fit_s, 2), best_iteration=int(best), rounds=int(rounds),
                s_per_round=round(fit_s / rounds, 4), test_accuracy=round(float(accuracy_score(yte, P.argmax(1))), 4),
                test_logloss=round(float(log_loss(yte, P, labels=np.arange(9))), 4), seed=SEED)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--systems", default="mg,lgbm,xgb")
    ap.add_argument("--max-rounds", type=int, default=3000)
    ap.add_argument("--out", required=True)
    ap.add_argument("--worker", default=None)
    a = ap.parse_args()
    if a.worker:
        print(json.dumps(run(a.worker, a.max_rounds)), flush=True)
        return
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    for s in a.systems.split(","):
        rec, err = run_worker([__file__, "--worker", s, "--max-rounds", str(a.max_rounds), "--out", a.out])
        if rec is None:
            print(f"{s} failed:\n{err}", file=sys.stderr)
            continue
        emit(rec, a.out)
    recs = [json.loads(line) for line in open(a.out)]
    print("| system | rounds (best) | train s | s/round | test accuracy | test log loss |\n|---|---|---|---|---|---|")
    for r in recs:
        print(f"| {r['system']} | {r['rounds']} ({r['best_iteration']}) | {r['fit_s']} | {r['s_per_round']} | "
              f"{r['test_accuracy']} | {r['test_logloss']} |")


if __name__ == "__main__":
    main()
