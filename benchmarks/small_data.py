#!/usr/bin/env python
"""Per-tree fixed cost on small data: scm20d (8,966 rows, 61 features, 16 targets), one-output trees.

multigrove with multi_strategy="one_vs_all" (16 one-output trees a round) against 16 LightGBM models
trained one after the other on the same binned Dataset (set_label), both at 32 leaves, lambda_l2 1,
255 bins, 2 threads, 100 rounds; targets standardized.  Reported: the median seconds per tree (steady
rounds), each system in its own subprocess, repeats interleaved.

    python benchmarks/small_data.py --repeats 3 --out benchmarks/results/small_data.jsonl
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

ROUNDS = 100
SETTINGS = dict(objective="regression", learning_rate=0.1, num_leaves=32, lambda_l2=1.0, num_threads=2, max_bin=255)


def load():
    from multigrove import datasets
    X, Y = datasets.load_multi_target("scm20d")
    return X, (Y - Y.mean(0)) / Y.std(0)


def per_tree_mg(X, Y):
    import multigrove as mg
    params = dict(SETTINGS, multi_strategy="one_vs_all", verbosity=-1)
    mg.train(params, mg.Dataset(X[:2000], Y[:2000]), 3)  # compile outside the clock
    ds = mg.Dataset(X, Y)
    ds.construct()
    stamps = []
    mg.train(params, ds, ROUNDS, callbacks=[lambda env, stamps=stamps: stamps.append(time.perf_counter())])
    return float(np.median(np.diff(stamps))) / Y.shape[1]


def per_tree_lgbm(X, Y):
    import lightgbm as lgb
    ds = lgb.Dataset(X, Y[:, 0], params=dict(max_bin=255, verbose=-1), free_raw_data=False)
    ds.construct()
    per_model = []
    for target in range(Y.shape[1]):
        ds.set_label(Y[:, target])
        stamps = []
        lgb.train(dict(SETTINGS, verbose=-1), ds, ROUNDS,
                  callbacks=[lambda env, stamps=stamps: stamps.append(time.perf_counter())])
        per_model.append(np.median(np.diff(stamps)))
    return float(np.median(per_model))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--worker", default=None)
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    if a.worker:
        X, Y = load()
        print(json.dumps({"s_per_tree": {"mg": per_tree_mg, "lgbm": per_tree_lgbm}[a.worker](X, Y)}))
        return
    ratios = []
    for repeat in range(a.repeats):
        got = {}
        for system in ("mg", "lgbm"):
            done = subprocess.run([sys.executable, __file__, "--worker", system], capture_output=True, text=True,
                                  check=True)
            got[system] = json.loads(done.stdout.strip().splitlines()[-1])["s_per_tree"]
        ratios.append(got["mg"] / got["lgbm"])
        emit(dict(bench="small_data_scm20d", repeat=repeat, mg_ms_per_tree=round(got["mg"] * 1e3, 3),
                  lgbm_ms_per_tree=round(got["lgbm"] * 1e3, 3), ratio=round(ratios[-1], 3)), a.out)
    print(f"multigrove / LightGBM time per tree: median {np.median(ratios):.2f}x "
          f"(range {min(ratios):.2f}-{max(ratios):.2f})")


if __name__ == "__main__":
    main()
