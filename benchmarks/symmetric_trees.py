#!/usr/bin/env python
"""Symmetric (oblivious) trees: training and prediction speed against CatBoost, and the dedicated
predict kernel against the generic tree walk on the same forest.

Data: make_multioutput_regression, 100,000 x 50, 4 targets (seed 0); 200 rounds of depth-6 trees,
learning rate 0.1, lambda 3, 255 bins (CatBoost: border_count 254), 2 threads, no bootstrap and no
random strength (the same tree for both).  Training: seconds per round (one warm-up fit first).
Prediction: 100,000 rows, wall time of one predict call.  Repeats are interleaved; the table gives
the median and the range of each ratio.

    python benchmarks/symmetric_trees.py --repeats 3 --out benchmarks/results/symmetric_trees.jsonl
"""
import argparse
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import emit  # noqa: E402

ROUNDS = 200


def data():
    from multigrove.datasets import make_multioutput_regression
    X, Y = make_multioutput_regression(n_rows=200_000, n_features=50, n_targets=4, seed=0)
    return X[:100_000], Y[:100_000], X[100_000:]


def fit_mg(X, Y, policy):
    import multigrove as mg
    params = dict(objective="regression", growth_policy=policy, max_depth=6, num_leaves=64, lambda_l2=3.0,
                  learning_rate=0.1, num_threads=2, verbosity=-1, min_data_in_leaf=1, target_scaling="none")
    ds = mg.Dataset(X, Y)
    t0 = time.perf_counter()
    bst = mg.train(params, ds, ROUNDS)
    return bst, (time.perf_counter() - t0) / ROUNDS


def fit_cb(X, Y):
    import catboost as cb
    model = cb.CatBoostRegressor(loss_function="MultiRMSE", iterations=ROUNDS, depth=6, learning_rate=0.1,
                                 l2_leaf_reg=3, border_count=254, bootstrap_type="No", random_strength=0,
                                 thread_count=2, verbose=0, allow_writing_files=False)
    t0 = time.perf_counter()
    model.fit(X, Y)
    return model, (time.perf_counter() - t0) / ROUNDS


def timed(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def walk_predict(bst, X):
    """The generic tree-walk kernel on the same forest (what predict used before symmetric trees)."""
    from multigrove.boosting.tree import stack_trees
    from multigrove.kernels.predict import predict_raw
    raw = np.tile(bst.init_score, (X.shape[0], 1))
    predict_raw(X, np.zeros(0, np.int64), np.zeros(0, np.int32), np.zeros(0), stack_trees(bst.trees), raw)
    return raw


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out")
    args = ap.parse_args()
    X, Y, X_test = data()
    fit_mg(X[:5000], Y[:5000], "symmetric")  # compile outside the timing
    rows = []
    for rep in range(args.repeats):
        sym, sym_s = fit_mg(X, Y, "symmetric")
        leaf, leaf_s = fit_mg(X, Y, "leafwise")
        cbm, cb_s = fit_cb(X, Y)
        sym.predict(X_test[:100])
        walk_predict(sym, X_test[:100])
        t_obl = timed(lambda model=sym: model.predict(X_test, raw_score=True))
        t_walk = timed(lambda model=sym: walk_predict(model, X_test))
        t_leaf = timed(lambda model=leaf: model.predict(X_test, raw_score=True))
        t_cb = timed(lambda model=cbm: model.predict(X_test))
        rmse = float(np.sqrt(np.mean((sym.predict(X) - Y) ** 2)))
        rec = dict(rep=rep, s_per_round=dict(symmetric=sym_s, leafwise_64=leaf_s, catboost=cb_s),
                   predict_s=dict(symmetric_kernel=t_obl, tree_walk=t_walk, leafwise_64=t_leaf, catboost=t_cb),
                   train_rmse_symmetric=rmse)
        rows.append(rec)
        emit(rec, args.out)

    def ratio(a, b, key):
        r = np.array([x[key][a] / x[key][b] for x in rows])
        return f"{np.median(r):.2f} ({r.min():.2f}-{r.max():.2f})"
    print("| ratio | median (range) |\n|---|---|")
    print(f"| training s/round, symmetric / CatBoost | {ratio('symmetric', 'catboost', 's_per_round')} |")
    print(f"| training s/round, symmetric / leaf-wise 64 leaves | {ratio('symmetric', 'leafwise_64', 's_per_round')} |")
    print(f"| predict, symmetric kernel / tree walk (same forest) | "
          f"{ratio('symmetric_kernel', 'tree_walk', 'predict_s')} |")
    print(f"| predict, symmetric / CatBoost | {ratio('symmetric_kernel', 'catboost', 'predict_s')} |")
    print(f"| predict, symmetric / leaf-wise 64 leaves | {ratio('symmetric_kernel', 'leafwise_64', 'predict_s')} |")


if __name__ == "__main__":
    main()
