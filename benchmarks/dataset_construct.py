#!/usr/bin/env python
"""Dataset construction (bin bounds from a 200,000-row sample, then every cell binned): multigrove against
LightGBM, 255 bins, 2 threads; the two interleaved in one process, seconds of each construction (after one
untimed run of each, which compiles).  Data (--data): the dense 500,000 x 50 regression set of
../shared/bench (default), or CSR matrices: issue 18's one-hot set (500,000 rows, 20 one-hot categorical
columns of 50-200 levels and 10 dense columns: 2,624 columns, 15 M entries), its count set (500,000 x 100
counts at density 0.1), Delicious's training rows (12,920 x 500 word features), and a wide set like the
XMC sets' tf-idf (200,000 x 100,000, 20 M uniform values at uniform positions: a column holds about 200).

    python benchmarks/dataset_construct.py --repeats 5 --out benchmarks/results/dataset_construct.jsonl
    python benchmarks/dataset_construct.py --data onehot counts delicious --repeats 5 --out ...
"""
import argparse
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import emit, print_time_ratio, regression_data  # noqa: E402
from sparse_inputs import make_counts, make_onehot, make_wide  # noqa: E402


def load(name, n_rows):
    """(X, y) of one of the sets the docstring names."""
    if name == "dense":
        X, _, y, _ = regression_data(n_rows)
        return X, np.ravel(y)
    if name == "onehot":
        return make_onehot()
    if name == "counts":
        return make_counts()
    if name == "wide":
        return make_wide()
    from multigrove import datasets
    X, Y, _, _ = datasets.load_multi_label("delicious", sparse=True)
    return X, np.asarray(Y[:, 0].todense()).ravel()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", nargs="+", default=["dense"], choices=["dense", "onehot", "counts", "delicious", "wide"])
    ap.add_argument("--n-rows", type=int, default=625_000, help="dense set: rows before its 80 %% training split")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    for name in a.data:
        compare(name, *load(name, a.n_rows), a.repeats, a.out)


def compare(name, X, y, repeats, out):
    import lightgbm as lgb

    import multigrove as mg

    def multigrove_construct():
        mg.Dataset(X, y).construct(mg.Params.from_dict({"max_bin": 255, "num_threads": 2}))

    def lightgbm_construct():
        lgb.Dataset(X, y, params={"max_bin": 255, "num_threads": 2, "verbose": -1}).construct()

    runs = {"multigrove": multigrove_construct, "lightgbm": lightgbm_construct}
    for construct in runs.values():
        construct()
    seconds = {system: [] for system in runs}
    for repeat in range(repeats):
        for system, construct in runs.items():
            started = time.perf_counter()
            construct()
            seconds[system].append(time.perf_counter() - started)
        emit(dict(bench="dataset_construct", data=name, repeat=repeat, n_rows=X.shape[0],
                  **{f"s_{system}": round(values[-1], 4) for system, values in seconds.items()}), out)
    print_time_ratio(f"{name} {X.shape}", "construction", seconds)


if __name__ == "__main__":
    main()
