#!/usr/bin/env python
"""Test loss on every multi-output set of ../shared/data: multigrove, CatBoost, LightGBM, XGBoost.

Sets: the seven Mulan multi-label sets on their shipped splits (test mean label log loss), the
fifteen Mulan multi-target sets on a 75/25 split (seed 0; test RMSE in units of each target's
training standard deviation, i.e. the RMSE of the standardized targets), and Otto on a stratified
80/20 split (seed 0; test multi-class log loss).

Modes: ``defaults`` -- every system at its own defaults, nothing set but the threads
(GroveClassifier() / GroveRegressor(); CatBoostClassifier() with MultiLogloss for multi-label,
CatBoostRegressor(loss_function="MultiRMSE"); one LGBMClassifier() / LGBMRegressor() per output;
XGBClassifier() / XGBRegressor() on the whole label matrix); ``fixed`` -- the same with 200 rounds
and learning rate 0.1 for all.  ``--mg-params '{"lambda_l2": 3}' --label NAME`` runs multigrove
with extra parameters (the ablation).  Each run is a fresh subprocess with a time limit; a label
that is constant on the training rows is predicted at its training frequency by the peers that
cannot train on it (CatBoost, LightGBM).  Records go to --out (one JSON line each); ``--table``
prints the latest record of each (set, system) as a table of ratios to CatBoost.

    python benchmarks/accuracy_panel.py --mode defaults --systems mg,catboost,lightgbm,xgboost \
        --out benchmarks/results/accuracy_panel.jsonl
    python benchmarks/accuracy_panel.py --table benchmarks/results/accuracy_panel.jsonl
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

MULTI_LABEL = ["emotions", "yeast", "scene", "enron", "bibtex", "corel5k", "delicious"]
MULTI_TARGET = ["andro", "atp1d", "atp7d", "edm", "enb", "jura", "oes10", "oes97", "osales", "rf1", "scm20d",
                "scpf", "sf1", "sf2", "slump"]
SETS = MULTI_LABEL + MULTI_TARGET + ["otto"]
SYSTEMS = ("mg", "catboost", "lightgbm", "xgboost")
EPS = 1e-15


def load(name):
    """(kind, X_train, Y_train, X_test, Y_test) of one panel set."""
    from sklearn.model_selection import train_test_split

    from multigrove import datasets
    if name in MULTI_LABEL:
        return ("multilabel", *datasets.load_multi_label(name))
    if name == "otto":
        X, y = datasets.load_otto()
        return ("multiclass", *_order(train_test_split(X, y, test_size=0.2, stratify=y, random_state=0)))
    X, Y = datasets.load_multi_target(name)
    return ("regression", *_order(train_test_split(X, Y, test_size=0.25, random_state=0)))


def _order(parts):
    Xtr, Xte, ytr, yte = parts
    return Xtr, ytr, Xte, yte


def test_loss(kind, Ytr, Yte, P):
    """The panel's loss: mean label log loss, multi-class log loss or standardized RMSE."""
    if kind == "regression":
        return float(np.sqrt(np.mean(((Yte - P) / Ytr.std(0)) ** 2)))
    P = np.clip(P, EPS, 1 - EPS)
    if kind == "multiclass":
        P = P / P.sum(1, keepdims=True)
        return float(-np.mean(np.log(P[np.arange(len(Yte)), Yte])))
    return float(-np.mean(Yte * np.log(P) + (1 - Yte) * np.log(1 - P)))


def fit_predict(system, kind, Xtr, Ytr, Xte, fixed, mg_params, threads):
    """Fit one system on the training rows; return its test predictions (probabilities or values)."""
    rounds = dict(n_estimators=200, learning_rate=0.1) if fixed else {}
    if system == "mg":
        import multigrove as mg
        est = (mg.GroveRegressor if kind == "regression" else mg.GroveClassifier)(
            **rounds, **mg_params, num_threads=threads)
        est.fit(Xtr, Ytr)
        return est.predict(Xte) if kind == "regression" else est.predict_proba(Xte), est.n_estimators_
    if system == "catboost":
        return _catboost(kind, Xtr, Ytr, Xte, rounds, threads)
    if system == "lightgbm":
        return _lightgbm(kind, Xtr, Ytr, Xte, rounds, threads)
    if system == "xgboost":
        import xgboost as xgb
        est = (xgb.XGBRegressor if kind == "regression" else xgb.XGBClassifier)(**rounds, n_jobs=threads)
        est.fit(Xtr, Ytr)
        prediction = est.predict(Xte) if kind == "regression" else est.predict_proba(Xte)
        return prediction, est.get_booster().num_boosted_rounds()
    raise ValueError(f"unknown system {system!r}")


def _catboost(kind, Xtr, Ytr, Xte, rounds, threads):
    import catboost as cb
    cbr = {"iterations": rounds["n_estimators"], "learning_rate": rounds["learning_rate"]} if rounds else {}
    common = dict(thread_count=threads, verbose=0, allow_writing_files=False, **cbr)
    if kind == "regression":
        est = cb.CatBoostRegressor(loss_function="MultiRMSE", **common).fit(Xtr, Ytr)
        return est.predict(Xte), est.tree_count_
    if kind == "multiclass":
        est = cb.CatBoostClassifier(**common).fit(Xtr, Ytr)
        return est.predict_proba(Xte), est.tree_count_
    return _label_wise_constants(Ytr, Xte, lambda Y: cb.CatBoostClassifier(loss_function="MultiLogloss", **common)
                                 .fit(Xtr, Y), lambda est: est.predict_proba(Xte))


def _label_wise_constants(Ytr, Xte, fit, predict):
    """Fit on the labels that vary on the training rows; predict the others at their frequency."""
    keep = Ytr.min(0) != Ytr.max(0)
    P = np.tile(np.clip(Ytr.mean(0), EPS, 1 - EPS), (Xte.shape[0], 1))
    est = fit(Ytr[:, keep])
    P[:, keep] = predict(est)
    return P, getattr(est, "tree_count_", None)


def _lightgbm(kind, Xtr, Ytr, Xte, rounds, threads):
    import lightgbm as lgb
    common = dict(n_jobs=threads, verbose=-1, **rounds)
    if kind == "multiclass":
        est = lgb.LGBMClassifier(**common).fit(Xtr, Ytr)
        return est.predict_proba(Xte), est.n_estimators_
    P = np.empty((Xte.shape[0], Ytr.shape[1]))
    for j in range(Ytr.shape[1]):
        y = Ytr[:, j]
        if kind == "regression":
            P[:, j] = lgb.LGBMRegressor(**common).fit(Xtr, y).predict(Xte)
        elif y.min() == y.max():
            P[:, j] = np.clip(y[0], EPS, 1 - EPS)
        else:
            P[:, j] = lgb.LGBMClassifier(**common).fit(Xtr, y).predict_proba(Xte)[:, 1]
    return P, None


def worker(args):
    kind, Xtr, Ytr, Xte, Yte = load(args.set)
    mg_params = json.loads(args.mg_params) if args.mg_params else {}
    t0 = time.perf_counter()
    P, trees = fit_predict(args.system, kind, Xtr, Ytr, Xte, args.mode == "fixed", mg_params, args.threads)
    fit_s = time.perf_counter() - t0
    print(json.dumps(dict(set=args.set, system=args.label or args.system, mode=args.mode, kind=kind,
                          loss=test_loss(kind, Ytr, Yte, np.asarray(P, dtype=np.float64)), fit_s=round(fit_s, 2),
                          rounds=None if trees is None else int(trees), mg_params=mg_params)))


#: the ablation: one lever at a time off the defaults before issue 23 (lambda_l2 0, 20 rows per leaf,
#: 100 rounds, learning rate 0.1, leaf-wise), then combinations; "min_data_in_leaf=None" is the rule
#: min(20, max(1, n // 50)) that became the default
OLD = {"lambda_l2": 0.0, "min_data_in_leaf": 20}
LEVERS = {
    "mg before": OLD,
    "lambda_l2=3": dict(OLD, lambda_l2=3.0),
    "min_data_in_leaf=5": dict(OLD, min_data_in_leaf=5),
    "num_leaves=31": dict(OLD, num_leaves=31),
    "symmetric depth 6": dict(OLD, growth_policy="symmetric"),
    "random_strength=1": dict(OLD, random_strength=1.0),
    "bagging_temperature=1": dict(OLD, bagging_temperature=1.0),
    "1000 rounds, lr 0.03": dict(OLD, n_estimators=1000, learning_rate=0.03),
    "early stopping, 1000 rounds": dict(OLD, n_estimators=1000, early_stopping=True),
    "C1: lambda_l2=3, min_data_in_leaf=20": dict(OLD, lambda_l2=3.0),
    "C2: lambda_l2=3, min_data_in_leaf=None (the new defaults)": {"lambda_l2": 3.0, "min_data_in_leaf": None},
    "C3: symmetric, l2 3, rs 1, bt 1, 1000 rounds lr 0.03, 1 row": {
        "growth_policy": "symmetric", "lambda_l2": 3.0, "random_strength": 1.0, "bagging_temperature": 1.0,
        "n_estimators": 1000, "learning_rate": 0.03, "min_data_in_leaf": 1},
    "C4: C2 + early stopping, 1000 rounds": {"n_estimators": 1000, "early_stopping": True},
    "C5: C2 + 300 rounds, lr 0.05": {"n_estimators": 300, "learning_rate": 0.05},
}


def table(path, mode, baseline="catboost", columns=None):
    latest = {}
    for line in Path(path).read_text().splitlines():
        rec = json.loads(line)
        if rec["mode"] == mode:
            latest[(rec["set"], rec["system"])] = rec
    systems = list(dict.fromkeys(s for _, s in latest))
    if columns:
        systems = [s for s in columns if s in systems]
    print(f"| set | {' | '.join(systems)} | " + " | ".join(f"{s} / {baseline}" for s in systems if s != baseline)
          + " | " + " | ".join(f"{s} fit s" for s in systems) + " |")
    print("|---" * (3 * len(systems)) + "|")
    for name in SETS:
        row = [latest.get((name, s)) for s in systems]
        if not any(row):
            continue
        base = latest.get((name, baseline))
        cells = [f"{r['loss']:.4f}" if r else "—" for r in row]
        ratios = [f"{r['loss'] / base['loss']:.3f}" if r and base else "—"
                  for r, s in zip(row, systems) if s != baseline]
        seconds = [f"{r['fit_s']:.1f}" if r else "—" for r in row]
        print(f"| {name} | " + " | ".join(cells + ratios + seconds) + " |")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mode", choices=("defaults", "fixed"), default="defaults")
    ap.add_argument("--systems", default=",".join(SYSTEMS))
    ap.add_argument("--sets", default=",".join(SETS))
    ap.add_argument("--skip", default="", help="system:set pairs to leave out, e.g. catboost:delicious")
    ap.add_argument("--mg-params", default="")
    ap.add_argument("--label", default="", help="name of the multigrove variant in the records")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=1800.0)
    ap.add_argument("--out")
    ap.add_argument("--table", metavar="JSONL")
    ap.add_argument("--baseline", default="catboost", help="the system --table divides by")
    ap.add_argument("--columns", default="", help="the systems --table shows, in order (default: every one)")
    ap.add_argument("--ablation", default="", help="LEVERS to run, separated by semicolons (all: 'all')")
    ap.add_argument("--worker", action="store_true")
    ap.add_argument("--set", help=argparse.SUPPRESS)
    ap.add_argument("--system", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.table:
        return table(args.table, args.mode, args.baseline, list(filter(None, args.columns.split(","))))
    if args.worker:
        return worker(args)
    skip = set(filter(None, args.skip.split(",")))
    if args.ablation:
        levers = LEVERS if args.ablation == "all" else {k: LEVERS[k] for k in args.ablation.split(";")}
        for name in args.sets.split(","):
            for label, params in levers.items():
                cmd = [__file__, "--worker", "--set", name, "--system", "mg", "--mode", args.mode,
                       "--mg-params", json.dumps(params), "--label", label, "--threads", str(args.threads)]
                rec, why = run_worker(cmd, timeout=args.timeout)
                if rec is None:
                    print(json.dumps(dict(set=name, system=label, error=why.strip()[-300:])), file=sys.stderr)
                    continue
                emit(rec, args.out)
        return None
    for name in args.sets.split(","):
        for system in args.systems.split(","):
            if f"{system}:{name}" in skip:
                continue
            cmd = [__file__, "--worker", "--set", name, "--system", system, "--mode", args.mode,
                   "--mg-params", args.mg_params, "--label", args.label, "--threads", str(args.threads)]
            rec, why = run_worker(cmd, timeout=args.timeout)
            if rec is None:
                rec = dict(set=name, system=args.label or system, mode=args.mode, error=why.strip()[-300:])
                print(json.dumps(rec), file=sys.stderr, flush=True)
                continue
            emit(rec, args.out)


if __name__ == "__main__":
    main()
