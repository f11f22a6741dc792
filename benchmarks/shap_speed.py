#!/usr/bin/env python
"""SHAP values of a multi-class model: multigrove's TreeSHAP (one walk per vector-leaf tree explains
every class) against LightGBM's pred_contrib (one tree per class), both trained with their defaults for
100 rounds on the same data, 2 threads; microseconds per explained row (median of interleaved repeats)
and the largest additivity error (contributions summed vs raw scores).

    python benchmarks/shap_speed.py --repeats 3 --out benchmarks/results/shap_speed.jsonl
"""
import argparse
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import emit  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=50_000)
    ap.add_argument("--classes", type=int, default=9)
    ap.add_argument("--explain", type=int, default=2_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out")
    a = ap.parse_args()
    import lightgbm as lgb

    import multigrove as mg
    from multigrove.datasets import make_multiclass
    X, y = make_multiclass(a.rows, 30, a.classes, seed=0)
    mg_model = mg.train({"objective": "multiclass", "num_class": a.classes, "num_threads": 2}, mg.Dataset(X, y), 100)
    lgb_model = lgb.train({"objective": "multiclass", "num_class": a.classes, "num_threads": 2, "verbose": -1},
                          lgb.Dataset(X, y), 100)
    rows = X[: a.explain]
    mg_model.predict(rows[:10], pred_contrib=True)  # compile
    times = {"multigrove": [], "lightgbm": []}
    for _ in range(a.repeats):
        t0 = time.perf_counter()
        mg_contrib = mg_model.predict(rows, pred_contrib=True)
        times["multigrove"].append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        lgb_contrib = lgb_model.predict(rows, pred_contrib=True)
        times["lightgbm"].append(time.perf_counter() - t0)
    mg_err = float(np.abs(mg_contrib.sum(axis=1) - mg_model.predict(rows, raw_score=True)).max())
    lgb_raw = lgb_model.predict(rows, raw_score=True)
    lgb_err = float(np.abs(lgb_contrib.reshape(len(rows), a.classes, -1).sum(axis=2) - lgb_raw).max())
    ratios = [m / g for m, g in zip(times["multigrove"], times["lightgbm"])]
    emit({"benchmark": "shap_speed", "rows": a.rows, "classes": a.classes, "explained": a.explain,
          "mg_trees": mg_model.num_trees(), "mg_leaves_per_tree": int(np.mean([t.n_leaves for t in mg_model.trees])),
          "lgb_trees": lgb_model.num_trees(),
          "mg_us_per_row": 1e6 * float(np.median(times["multigrove"])) / len(rows),
          "lgb_us_per_row": 1e6 * float(np.median(times["lightgbm"])) / len(rows),
          "ratio_median": float(np.median(ratios)), "ratio_range": [min(ratios), max(ratios)],
          "mg_additivity_error": mg_err, "lgb_additivity_error": lgb_err}, a.out)


if __name__ == "__main__":
    main()
