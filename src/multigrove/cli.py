"""Command line: ``multigrove train | predict | evaluate | demo``.

Data files: CSV (numeric, with a header row) or ARFF (``.arff`` / ``.arff.gz``); the targets
are the last ``--targets`` columns (default 1).  A sparse ARFF file (``{index value, ...}`` rows)
stays sparse: its features reach the model as a CSR matrix, never densified.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np


def _read_table(path: str, targets: int) -> tuple:
    """(X, Y or None, feature names): X dense, or CSR from a sparse ARFF file; Y dense."""
    p = Path(path)
    if not p.exists():
        raise SystemExit(f"error: data file {path!r} does not exist")
    if p.name.endswith((".arff", ".arff.gz")):
        from .xmc.io import read_arff
        a = read_arff(p)  # CSR when the file's rows are sparse
        M, names = a.X, a.names
    else:
        import csv
        import gzip
        opener = gzip.open if p.name.endswith(".gz") else open
        with opener(p, "rt", newline="") as fh:
            reader = csv.reader(fh)
            names = next(reader)
            rows = []
            for lineno, row in enumerate(reader, start=2):
                if len(row) != len(names):
                    raise SystemExit(f"error: {path}, line {lineno}: expected {len(names)} fields, got {len(row)}")
                try:
                    rows.append([float(v) if v not in ("", "NA", "nan", "?") else np.nan for v in row])
                except ValueError as exc:
                    raise SystemExit(f"error: {path}, line {lineno}: {exc}") from None
        M = np.asarray(rows, dtype=np.float64).reshape(len(rows), len(names))
    if targets == 0:
        return M, None, names
    if not 0 < targets < M.shape[1]:
        raise SystemExit(f"error: --targets must be between 1 and {M.shape[1] - 1}, got {targets}")
    X, Y = M[:, :-targets], M[:, -targets:]
    if hasattr(Y, "toarray"):  # a sparse file: the features stay CSR, the few target columns go dense
        X, Y = X.tocsr(), Y.toarray()
    return X, Y, names[:-targets]


def _params(items: list[str]) -> dict:
    out = {}
    for it in items or []:
        if "=" not in it:
            raise SystemExit(f"error: --param takes key=value, got {it!r}")
        k, v = it.split("=", 1)
        try:
            out[k] = json.loads(v)
        except json.JSONDecodeError:
            out[k] = v
    return out


def cmd_train(a) -> int:
    import multigrove as mg
    X, Y, names = _read_table(a.data, a.targets)
    params = dict(_params(a.param), objective=a.objective)
    ds = mg.Dataset(X, Y, feature_names=names)
    valid, cbs = [], [mg.log_evaluation(a.log_every)] if a.log_every else []
    if a.valid:
        Xv, Yv, _ = _read_table(a.valid, a.targets)
        valid = [mg.Dataset(Xv, Yv, reference=ds)]
        if a.early_stopping:
            cbs.append(mg.early_stopping(a.early_stopping))
    t0 = time.perf_counter()
    bst = mg.train(params, ds, a.rounds, valid_sets=valid, callbacks=cbs)
    bst.save_model(a.model)
    print(f"trained {bst.num_trees()} trees in {time.perf_counter() - t0:.2f} s; model written to {a.model}")
    return 0


def cmd_predict(a) -> int:
    import multigrove as mg
    bst = mg.Booster(model_file=a.model)
    X, _, _ = _read_table(a.data, a.targets)
    P = bst.predict(X, raw_score=a.raw_score)
    P = P.reshape(X.shape[0], -1)
    np.savetxt(a.out, P, delimiter=",", fmt="%.9g")
    print(f"wrote {P.shape[0]} x {P.shape[1]} predictions to {a.out}")
    return 0


def cmd_evaluate(a) -> int:
    import multigrove as mg
    from .boosting.losses import make_loss
    from .boosting.metrics import evaluate
    from .params import objective_default_metric
    bst = mg.Booster(model_file=a.model)
    X, Y, _ = _read_table(a.data, a.targets)
    _, y = make_loss(bst.objective, bst.num_class, bst.n_outputs, Y[:, 0] if Y.shape[1] == 1 else Y, None)
    raw = bst.predict(X, raw_score=True).reshape(X.shape[0], -1)
    prob = bst.predict(X).reshape(X.shape[0], -1)
    metrics = a.metric or list(objective_default_metric(bst.objective))
    for m in metrics:
        for name, value, _ in evaluate(m, y, raw, prob, None, (1, 3, 5)):
            print(f"{name}\t{value:.6g}")
    return 0


def cmd_demo(a) -> int:
    """Train on data that ships with scikit-learn (digits) and on generated multi-target data."""
    import tempfile

    import multigrove as mg
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    from .datasets import make_multioutput_regression

    X, y = load_digits(return_X_y=True)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.25, random_state=0, stratify=y)
    ds = mg.Dataset(Xtr, ytr)
    va = mg.Dataset(Xte, yte, reference=ds)
    print("digits (1,797 images, 64 pixels, 10 classes): one 10-output tree per round")
    t0 = time.perf_counter()
    bst = mg.train({"objective": "multiclass", "metric": ["multi_logloss", "multi_error"], "learning_rate": 0.2,
                    "min_data_in_leaf": 5}, ds, 300, valid_sets=[va],
                   callbacks=[mg.early_stopping(20, verbose=False), mg.log_evaluation(50)])
    acc = float((bst.predict(Xte).argmax(1) == yte).mean())
    print(f"  best iteration {bst.best_iteration}, test accuracy {acc:.4f}, {time.perf_counter() - t0:.1f} s")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "digits.json"
        bst.save_model(path)
        same = np.array_equal(mg.Booster(model_file=path).predict(Xte), bst.predict(Xte))
        print(f"  saved {path.stat().st_size / 1e3:.0f} kB model, reloaded: predictions identical = {same}")

    X, Y = make_multioutput_regression(20_000, 20, 8, seed=0)
    print("generated multi-target regression (20,000 x 20, 8 correlated targets):")
    for strategy in ("multi_output", "one_vs_all"):
        t0 = time.perf_counter()
        reg = mg.GroveRegressor(n_estimators=200, multi_strategy=strategy).fit(X[:15000], Y[:15000])
        print(f"  {strategy:12s}: {reg.booster_.num_trees():5d} trees, test R2 {reg.score(X[15000:], Y[15000:]):.4f}, "
              f"{time.perf_counter() - t0:.1f} s")
    return 0 if acc > 0.9 and same else 1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="multigrove", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    t = sub.add_parser("train", help="train a model on a CSV/ARFF file and save it")
    t.add_argument("--data", required=True)
    t.add_argument("--valid")
    t.add_argument("--targets", type=int, default=1, help="number of target columns (the last ones)")
    t.add_argument("--objective", default="regression")
    t.add_argument("--rounds", type=int, default=100)
    t.add_argument("--early-stopping", type=int, default=0)
    t.add_argument("--log-every", type=int, default=0)
    t.add_argument("--param", action="append", help="extra parameter key=value (repeatable)")
    t.add_argument("--model", required=True, help="output model file (.json)")
    p = sub.add_parser("predict", help="predict with a saved model")
    p.add_argument("--model", required=True)
    p.add_argument("--data", required=True)
    p.add_argument("--targets", type=int, default=0, help="target columns to drop from the data file")
    p.add_argument("--raw-score", action="store_true")
    p.add_argument("--out", required=True)
    e = sub.add_parser("evaluate", help="evaluate a saved model on labelled data")
    e.add_argument("--model", required=True)
    e.add_argument("--data", required=True)
    e.add_argument("--targets", type=int, default=1)
    e.add_argument("--metric", action="append")
    sub.add_parser("demo", help="train on bundled / generated data")
    a = ap.parse_args(argv)
    try:
        return {"train": cmd_train, "predict": cmd_predict, "evaluate": cmd_evaluate, "demo": cmd_demo}[a.command](a)
    except (ValueError, TypeError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
