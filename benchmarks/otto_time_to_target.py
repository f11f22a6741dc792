#!/usr/bin/env python
"""Otto: wall time until each library's model reaches LightGBM's best test log loss, every library
at its defaults (``--threads``, 2 by default), early stopping after 50 rounds without improvement on a
validation split.

Split: stratified 80/20 train/test (seed 0), then 10 % of train held out for early stopping (seed 0).
The clock starts before the training set is binned (Dataset / DMatrix construction counts) and a
callback records it after every round; afterwards the test log loss of every prefix of the model is
computed (outside the clock) to find the first round at or below the target: LightGBM's best test log
loss in the same repeat.  Systems run one after the other in each repeat, in their own subprocess.

    python benchmarks/otto_time_to_target.py --repeats 3 --out benchmarks/results/otto_ttt.jsonl
    python benchmarks/otto_time_to_target.py --systems lgbm,mg --repeats 1 --threads 16   # issue 43, 16 cores
"""
import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import emit  # noqa: E402
from otto import split  # noqa: E402  (the same split as benchmarks/otto.py)

PATIENCE = 50
MAX_ROUNDS = 5000
SYSTEMS = ("lgbm", "mg", "xgb")


def log_loss(P, y):
    return float(-np.log(np.clip(P[np.arange(len(y)), y], 1e-15, None)).mean())


def staged_losses(round_raw, n_rounds, y):
    """Test log loss after every round from the raw scores each round adds (linear in the rounds)."""
    from scipy.special import softmax
    raw, curve = 0.0, []
    for i in range(n_rounds):
        raw = raw + round_raw(i)
        curve.append(log_loss(softmax(raw, axis=1), y))
    return curve


def booster_staged_losses(bst, Xte, yte):
    """staged_losses of a LightGBM or multigrove Booster (the same predict signature)."""
    return staged_losses(lambda i: bst.predict(Xte, raw_score=True, start_iteration=i, num_iteration=1),
                         bst.current_iteration(), yte)


def run_lgbm(Xtr, ytr, Xva, yva, Xte, yte, clock, threads=2, max_rounds=MAX_ROUNDS):
    import lightgbm as lgb
    params = dict(objective="multiclass", num_class=9, num_threads=threads, verbose=-1)
    t0 = time.perf_counter()
    train = lgb.Dataset(Xtr, ytr)
    valid = lgb.Dataset(Xva, yva, reference=train)
    bst = lgb.train(params, train, max_rounds, valid_sets=[valid],
                    callbacks=[lgb.early_stopping(PATIENCE, verbose=False),
                               lambda env: clock.append(time.perf_counter() - t0)])
    return booster_staged_losses(bst, Xte, yte)


def run_mg(Xtr, ytr, Xva, yva, Xte, yte, clock, threads=2, max_rounds=MAX_ROUNDS, **params):
    """``params``: added to multigrove's defaults (benchmarks/gpu.py: device_type="cuda")."""
    import multigrove as mg
    params = dict(objective="multiclass", num_class=9, num_threads=threads, verbosity=-1, **params)
    mg.train(params, mg.Dataset(Xtr[:3000], ytr[:3000]), 2)  # compile (and a first transfer) outside the clock
    t0 = time.perf_counter()
    train = mg.Dataset(Xtr, ytr)
    valid = mg.Dataset(Xva, yva, reference=train)
    bst = mg.train(params, train, max_rounds, valid_sets=[valid],
                   callbacks=[mg.early_stopping(PATIENCE, verbose=False),
                              lambda env: clock.append(time.perf_counter() - t0)])
    return booster_staged_losses(bst, Xte, yte)


def run_xgb(Xtr, ytr, Xva, yva, Xte, yte, clock, threads=2):
    import xgboost as xgb

    class Clock(xgb.callback.TrainingCallback):
        def after_iteration(self, model, epoch, evals_log):
            clock.append(time.perf_counter() - t0)
            return False

    params = dict(objective="multi:softprob", num_class=9, nthread=threads, tree_method="hist", eval_metric="mlogloss")
    t0 = time.perf_counter()
    train = xgb.DMatrix(Xtr, ytr)
    valid = xgb.DMatrix(Xva, yva)
    bst = xgb.train(params, train, MAX_ROUNDS, evals=[(valid, "valid")], early_stopping_rounds=PATIENCE,
                    verbose_eval=False, callbacks=[Clock()])
    test = xgb.DMatrix(Xte)
    def margin(start, stop):
        return bst.predict(test, output_margin=True, iteration_range=(start, stop))

    # every range's margin includes the base score: m(0,1) + m(1,2) - m(0,2) isolates it
    base = margin(0, 1) + margin(1, 2) - margin(0, 2)
    return staged_losses(lambda i: margin(i, i + 1) - (0.0 if i == 0 else base), len(clock), yte)


def worker(system, threads):
    data = split()
    clock = []
    curve = np.array({"lgbm": run_lgbm, "mg": run_mg, "xgb": run_xgb}[system](*data, clock, threads=threads))
    print(json.dumps(dict(curve=curve.round(6).tolist(), clock=np.round(clock, 4).tolist())))


def first_reach(record, target):
    curve, clock = np.array(record["curve"]), np.array(record["clock"])
    hit = np.flatnonzero(curve <= target + 1e-12)
    return (int(hit[0]) + 1, float(clock[hit[0]])) if hit.size else (None, None)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--systems", default=",".join(SYSTEMS))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2, help="threads of every library")
    ap.add_argument("--worker", default=None)
    ap.add_argument("--label", default="", help="a name for the run's records")
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    if a.worker:
        return worker(a.worker, a.threads)
    systems = a.systems.split(",")
    rows = []
    for repeat in range(a.repeats):
        records = {}
        for system in systems:
            done = subprocess.run([sys.executable, __file__, "--worker", system, "--threads", str(a.threads)],
                                  capture_output=True, text=True, check=True)
            records[system] = json.loads(done.stdout.strip().splitlines()[-1])
        target = min(records["lgbm"]["curve"])
        for system, rec in records.items():
            rounds, seconds = first_reach(rec, target)
            row = dict(bench="otto_time_to_target", label=a.label, repeat=repeat, system=system, threads=a.threads,
                       target=round(target, 4),
                       rounds_to_target=rounds, seconds_to_target=None if seconds is None else round(seconds, 2),
                       best_test_logloss=round(min(rec["curve"]), 4), rounds_run=len(rec["curve"]),
                       seconds_run=round(rec["clock"][-1], 2),
                       s_per_round=round(float(np.median(np.diff(rec["clock"]))), 4))
            rows.append(row)
            emit(row, a.out)
    summarize(rows, systems)


def summarize(rows, systems):
    print("\n| system | best test log loss | rounds to target | s to target (median, range) "
          "| vs LightGBM (median, range) |")
    print("|---|---|---|---|---|")
    base = {r["repeat"]: r["seconds_to_target"] for r in rows if r["system"] == "lgbm"}
    for system in systems:
        mine = [r for r in rows if r["system"] == system]
        secs = [r["seconds_to_target"] for r in mine if r["seconds_to_target"] is not None]
        ratios = [r["seconds_to_target"] / base[r["repeat"]] for r in mine if r["seconds_to_target"] is not None]
        if not secs:
            print(f"| {system} | {mine[0]['best_test_logloss']} | not reached | - | - |")
            continue
        print(f"| {system} | {np.median([r['best_test_logloss'] for r in mine]):.4f} | {mine[0]['rounds_to_target']} | "
              f"{np.median(secs):.2f} ({min(secs):.2f}-{max(secs):.2f}) | "
              f"{np.median(ratios):.2f}x ({min(ratios):.2f}-{max(ratios):.2f}) |")


if __name__ == "__main__":
    main()
