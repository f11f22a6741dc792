#!/usr/bin/env python
"""Categorical features on the four tables of ../shared/data/categorical (issue 45), against the peers.

Tasks (SOURCE.md there; 80/20 split, seed 0): flights (100,000 rows with all three targets, drawn with seed 0;
dep_delay, arr_delay, air_time), diamonds (log price), movies (7 genres, multi-label), loans (grade A-G).
Test loss: the mean over targets of the RMSE in units of the target's training standard deviation, the mean
binary log loss over labels, or the multi-class log loss.

Systems, each at its defaults with 2 threads, in its own process: ``mg`` (GroveRegressor / GroveClassifier on
the DataFrame, its category columns categorical), ``mg_onehot`` (the same on one-hot columns), ``lightgbm``
(LGBMRegressor / LGBMClassifier on the DataFrame, native categorical handling, one model per output where it
has no multi-output), ``catboost`` (CatBoostRegressor / CatBoostClassifier with ``cat_features``; MultiRMSE and
MultiLogloss for several outputs).  Seconds per round: the median round of the fit (mg: of both fits where
it compares tree sizes on a small table, loans; LightGBM: its three models' rounds together on flights).

    python benchmarks/categorical.py --out benchmarks/results/categorical.jsonl
    python benchmarks/categorical.py --table benchmarks/results/categorical.jsonl
    python benchmarks/categorical.py --tasks loans --systems mg --mg-params '{"num_leaves": 15}' --label leaves15
    python benchmarks/categorical.py --tasks loans --systems mg --drop state --label no_state
"""
import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import RoundTimer, emit, run_worker, shared_dir  # noqa: E402

TASKS = ("flights", "diamonds", "movies", "loans")
SYSTEMS = ("mg", "mg_onehot", "lightgbm", "catboost")
THREADS = 2
EPS = 1e-15
FLIGHT_TARGETS = ["dep_delay", "arr_delay", "air_time"]
FLIGHT_FEATURES = ["month", "day", "sched_dep_time", "sched_arr_time", "carrier", "flight", "tailnum", "origin",
                   "dest", "distance", "hour", "minute"]
GENRES = ["Action", "Animation", "Comedy", "Drama", "Documentary", "Romance", "Short"]
MOVIE_FEATURES = ["year", "length", "budget", "rating", "votes"] + [f"r{i}" for i in range(1, 11)] + ["mpaa"]
LOAN_DROPPED = ["grade", "sub_grade", "interest_rate", "installment", "balance", "paid_total", "paid_principal",
                "paid_interest", "paid_late_fees", "loan_status", "initial_listing_status", "disbursement_method",
                "issue_month"]


def load(task: str):
    """(kind, X_train, Y_train, X_test, Y_test) with X as DataFrames (category columns categorical)."""
    import pandas as pd
    from sklearn.model_selection import train_test_split
    folder = shared_dir() / "data" / "categorical"
    if task == "flights":
        df = pd.read_parquet(folder / "flights.parquet").dropna(subset=FLIGHT_TARGETS)
        df = df.sample(100_000, random_state=0)
        X, Y, kind = df[FLIGHT_FEATURES], df[FLIGHT_TARGETS].to_numpy(np.float64), "regression"
    elif task == "diamonds":
        df = pd.read_parquet(folder / "diamonds.parquet")
        X = df[["carat", "cut", "color", "clarity", "depth", "table", "x", "y", "z"]]
        Y, kind = np.log(df["price"].to_numpy(np.float64)), "regression"
    elif task == "movies":
        df = pd.read_parquet(folder / "movies.parquet")
        X, Y, kind = df[MOVIE_FEATURES], df[GENRES].to_numpy(np.float64), "multilabel"
    elif task == "loans":
        df = pd.read_parquet(folder / "loans_full_schema.parquet")
        grades = sorted(df["grade"].dropna().unique())
        Y = df["grade"].map({g: i for i, g in enumerate(grades)}).to_numpy(np.int64)
        X, kind = df.drop(columns=LOAN_DROPPED), "multiclass"
    else:
        raise SystemExit(f"unknown task {task!r}")
    Xtr, Xte, Ytr, Yte = train_test_split(X, Y, test_size=0.2, random_state=0)
    return kind, Xtr, Ytr, Xte, Yte


def test_loss(kind: str, Ytr, Yte, P) -> float:
    if kind == "regression":
        Ytr, Yte, P = (np.asarray(a, np.float64).reshape(len(a), -1) for a in (Ytr, Yte, P))
        return float(np.mean(np.sqrt(np.mean((Yte - P) ** 2, axis=0)) / Ytr.std(0)))
    P = np.clip(P, EPS, 1 - EPS)
    if kind == "multiclass":
        P = P / P.sum(1, keepdims=True)
        return float(-np.mean(np.log(P[np.arange(len(Yte)), Yte])))
    return float(-np.mean(Yte * np.log(P) + (1 - Yte) * np.log(1 - P)))


def category_columns(X) -> list:
    return [c for c in X.columns if str(X[c].dtype) == "category"]


def one_hot(Xtr, Xte):
    import pandas as pd
    cats = category_columns(Xtr)
    both = pd.get_dummies(pd.concat([Xtr, Xte]), columns=cats, dummy_na=False, dtype=np.float64)
    return both.iloc[:len(Xtr)], both.iloc[len(Xtr):]


def fit_mg(kind, Xtr, Ytr, Xte, onehot: bool, params: dict):
    import multigrove as mg
    if onehot:
        Xtr, Xte = one_hot(Xtr, Xte)
    est = (mg.GroveRegressor if kind == "regression" else mg.GroveClassifier)(num_threads=THREADS, **params)
    timer = RoundTimer()
    est.fit(Xtr, Ytr, callbacks=[timer])
    P = est.predict(Xte) if kind == "regression" else est.predict_proba(Xte)
    return P, {"rounds": int(est.n_estimators_), "s_per_round": timer.steady()}


def fit_lightgbm(kind, Xtr, Ytr, Xte):
    import lightgbm as lgb
    Y = np.asarray(Ytr)
    columns = 1 if kind == "multiclass" or Y.ndim == 1 else Y.shape[1]
    preds, per_round = [], 0.0
    for j in range(columns):
        cls = lgb.LGBMRegressor if kind == "regression" else lgb.LGBMClassifier
        model = cls(n_jobs=THREADS, verbose=-1)
        timer = RoundTimer()
        model.fit(Xtr, Y if columns == 1 else Y[:, j], callbacks=[timer])
        per_round += timer.steady() or 0.0
        if kind == "regression":
            preds.append(model.predict(Xte))
        elif kind == "multiclass":
            preds.append(model.predict_proba(Xte))
        else:
            preds.append(model.predict_proba(Xte)[:, 1])
    P = preds[0] if kind == "multiclass" else np.column_stack(preds)
    return P, {"models": columns, "s_per_round": per_round}


def fit_catboost(kind, Xtr, Ytr, Xte):
    import catboost as cb
    cats = category_columns(Xtr)

    def strings(X):  # CatBoost's categorical columns: strings, a missing value its own category ("nan")
        X = X.copy()
        for c in cats:
            values = X[c].astype(object)
            X[c] = np.where(values.isna(), "nan", values.astype(str))
        return X
    Y = np.asarray(Ytr)
    if kind == "regression":
        model = cb.CatBoostRegressor(loss_function="MultiRMSE" if Y.ndim == 2 else "RMSE", thread_count=THREADS,
                                     verbose=False)
    elif kind == "multilabel":
        model = cb.CatBoostClassifier(loss_function="MultiLogloss", thread_count=THREADS, verbose=False)
    else:
        model = cb.CatBoostClassifier(thread_count=THREADS, verbose=False)
    model.fit(strings(Xtr), Y, cat_features=cats)
    P = model.predict(strings(Xte)) if kind == "regression" else model.predict_proba(strings(Xte))
    return P, {"rounds": int(model.tree_count_)}


def worker(task: str, system: str, mg_params: dict, drop: list[str]) -> dict:
    kind, Xtr, Ytr, Xte, Yte = load(task)
    drop = [c for c in drop if c in Xtr.columns]
    Xtr, Xte = Xtr.drop(columns=drop), Xte.drop(columns=drop)
    started = time.perf_counter()
    if system in ("mg", "mg_onehot"):
        P, info = fit_mg(kind, Xtr, Ytr, Xte, system == "mg_onehot", mg_params)
    elif system == "lightgbm":
        P, info = fit_lightgbm(kind, Xtr, Ytr, Xte)
    else:
        P, info = fit_catboost(kind, Xtr, Ytr, Xte)
    seconds = time.perf_counter() - started
    return {"bench": "categorical", "task": task, "system": system, "kind": kind,
            "loss": test_loss(kind, Ytr, Yte, P), "fit_s": round(seconds, 2), **info}


def table(path: str) -> None:
    latest = {}
    for line in open(path):
        rec = json.loads(line)
        if not rec.get("label") and not rec.get("drop") and rec.get("mg_params", "{}") == "{}":  # the defaults
            latest[(rec["task"], rec["system"])] = rec
    systems = [s for s in SYSTEMS if any(k[1] == s for k in latest)]
    print("| task | " + " | ".join(f"{s} loss (fit s)" for s in systems)
          + " | mg / LightGBM | mg / CatBoost | mg s/round / LightGBM's |")
    print("|---|" + "---|" * (len(systems) + 3))
    for task in TASKS:
        cells, loss = [], {}
        for s in systems:
            rec = latest.get((task, s))
            if rec is not None and "loss" not in rec:
                rec = None  # a failed run: its error is in the record
            cells.append("—" if rec is None else f"{rec['loss']:.4f} ({rec['fit_s']:.1f})")
            loss[s] = None if rec is None else rec["loss"]
        ratio = [f"{loss['mg'] / loss[p]:.3f}" if loss.get("mg") and loss.get(p) else "—"
                 for p in ("lightgbm", "catboost")]
        ours, theirs = latest.get((task, "mg"), {}), latest.get((task, "lightgbm"), {})
        rounds = (f"{ours['s_per_round'] / theirs['s_per_round']:.2f}"
                  if ours.get("s_per_round") and theirs.get("s_per_round") else "—")
        print(f"| {task} | " + " | ".join(cells) + f" | {ratio[0]} | {ratio[1]} | {rounds} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", nargs="+", default=list(TASKS), choices=TASKS)
    ap.add_argument("--systems", nargs="+", default=list(SYSTEMS), choices=SYSTEMS)
    ap.add_argument("--timeout", type=float, default=3600)
    ap.add_argument("--out")
    ap.add_argument("--table")
    ap.add_argument("--mg-params", default="{}", help="JSON: estimator parameters of the mg systems (variants)")
    ap.add_argument("--drop", nargs="*", default=[], help="feature columns left out (every system)")
    ap.add_argument("--label", default="", help="name of the variant in the records")
    ap.add_argument("--worker", nargs=2, metavar=("TASK", "SYSTEM"), help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.table:
        table(a.table)
        return
    if a.worker:
        print(json.dumps(worker(*a.worker, json.loads(a.mg_params), a.drop)))
        return
    for task in a.tasks:
        for system in a.systems:
            rec, why = run_worker([__file__, "--worker", task, system, "--mg-params", a.mg_params,
                                   "--drop", *a.drop], timeout=a.timeout)
            if rec is None:
                rec = {"bench": "categorical", "task": task, "system": system, "error": why[-500:]}
            if a.label or a.drop or a.mg_params != "{}":
                rec.update(label=a.label, mg_params=a.mg_params, drop=a.drop)
            emit(rec, a.out)


if __name__ == "__main__":
    main()
