"""Peak memory of training one tree for many outputs: 1,000,000 rows x 50 features x 100 targets.

Each library trains in a fresh process; the record gives the process's resident memory once the data
exist (float64 X and Y, as a user holds them), its peak over training and prediction (ru_maxrss),
and the difference, the memory the library itself used.

    python benchmarks/peak_memory.py --library multigrove --out benchmarks/results/peak_memory.jsonl
    python benchmarks/peak_memory.py --library xgboost    --out benchmarks/results/peak_memory.jsonl
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import emit, maxrss_mb  # noqa: E402


def current_rss_mb() -> float:
    with open("/proc/self/statm") as fh:
        pages = int(fh.read().split()[1])
    import os
    return pages * os.sysconf("SC_PAGE_SIZE") / 2 ** 20


def make_data(rows: int, features: int, outputs: int, seed: int = 0):
    from multigrove.datasets import make_multioutput_regression
    return make_multioutput_regression(rows, features, outputs, seed=seed)


def train_multigrove(X, Y, rounds: int, threads: int):
    import multigrove as mg
    booster = mg.train({"num_threads": threads}, mg.Dataset(X, Y), rounds)  # every other setting at its default
    return booster.predict(X[:100_000])


def train_xgboost(X, Y, rounds: int, threads: int):
    import xgboost as xgb
    # XGBoost's one tree for all outputs (vector leaves), histogram method, its defaults otherwise
    model = xgb.XGBRegressor(n_estimators=rounds, tree_method="hist", multi_strategy="multi_output_tree",
                             n_jobs=threads)
    model.fit(X, Y)
    return model.predict(X[:100_000])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--library", choices=("multigrove", "xgboost"), default="multigrove")
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--features", type=int, default=50)
    ap.add_argument("--outputs", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out")
    a = ap.parse_args()
    X, Y = make_data(a.rows, a.features, a.outputs)
    data_mb = current_rss_mb()
    started = time.perf_counter()
    pred = (train_multigrove if a.library == "multigrove" else train_xgboost)(X, Y, a.rounds, a.threads)
    seconds = time.perf_counter() - started
    peak = maxrss_mb()
    rmse = float(np.sqrt(np.mean((pred - Y[:100_000]) ** 2)))
    emit({"benchmark": "peak_memory", "library": a.library, "rows": a.rows, "features": a.features,
          "outputs": a.outputs, "rounds": a.rounds, "threads": a.threads, "data_rss_mb": round(data_mb),
          "peak_rss_mb": round(peak), "library_mb": round(peak - data_mb), "seconds": round(seconds, 1),
          "train_rmse_first_100k": rmse}, a.out)


if __name__ == "__main__":
    main()
