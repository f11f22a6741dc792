#!/usr/bin/env python
"""Prediction from a CSR matrix: multigrove against LightGBM on issue 18's one-hot and count sets (see
sparse_inputs.py), each trained on 200,000 rows for 100 rounds (31 leaves, learning rate 0.1, 255 bins, 2
threads), then `predict` on 100,000 of its rows as CSR (and as the same rows dense, for reference); the
two systems interleaved in one process, seconds of each prediction (after one untimed prediction of
each, which compiles), and each model's R² on those (training) rows.

    python benchmarks/sparse_predict.py --repeats 5 --out benchmarks/results/sparse_predict.jsonl
"""
import argparse
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import emit, print_time_ratio  # noqa: E402
from sparse_inputs import make_counts, make_onehot  # noqa: E402

PARAMS = dict(num_leaves=31, learning_rate=0.1, max_bin=255, num_threads=2)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    import lightgbm as lgb

    import multigrove as mg
    for name, make in (("onehot", make_onehot), ("counts", make_counts)):
        X, y = make(n=200_000)
        models = {"multigrove": mg.train(dict(PARAMS, verbosity=-1), mg.Dataset(X, y), 100),
                  "lightgbm": lgb.train(dict(PARAMS, verbose=-1), lgb.Dataset(X, y), 100)}
        rows = {"csr": X[:100_000].tocsr()}
        rows["dense"] = rows["csr"].toarray()
        for form, X_test in rows.items():
            for model in models.values():
                model.predict(X_test[:100])
            seconds = {system: [] for system in models}
            for repeat in range(a.repeats):
                predictions = {}
                for system, model in models.items():
                    started = time.perf_counter()
                    predictions[system] = model.predict(X_test)
                    seconds[system].append(time.perf_counter() - started)
                r2 = {f"r2_{system}": round(1 - np.mean((y[:100_000] - p) ** 2) / np.var(y[:100_000]), 5)
                      for system, p in predictions.items()}
                emit(dict(bench="sparse_predict", data=name, form=form, repeat=repeat, **r2,
                          **{f"s_{system}": round(values[-1], 4) for system, values in seconds.items()}), a.out)
            print_time_ratio(f"{name} {form} {X_test.shape}", "predict", seconds)


if __name__ == "__main__":
    main()
