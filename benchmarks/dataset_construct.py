#!/usr/bin/env python
"""Dataset construction (bin bounds from a 200,000-row sample, then every cell binned): multigrove against
LightGBM on the dense 500,000 x 50 regression set of ../shared/bench, 255 bins, 2 threads; the two
interleaved in one process, seconds of each construction (after one untimed run of each, which compiles).

    python benchmarks/dataset_construct.py --repeats 5 --out benchmarks/results/dataset_construct.jsonl
"""
import argparse
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import emit, regression_data  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-rows", type=int, default=625_000)  # 80 % train: 500,000 rows
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    Xtr, _, ytr, _ = regression_data(a.n_rows)
    ytr = np.ravel(ytr)
    import lightgbm as lgb

    import multigrove as mg

    def multigrove_construct():
        mg.Dataset(Xtr, ytr).construct(mg.Params.from_dict({"max_bin": 255, "num_threads": 2}))

    def lightgbm_construct():
        lgb.Dataset(Xtr, ytr, params={"max_bin": 255, "num_threads": 2, "verbose": -1}).construct()

    runs = {"multigrove": multigrove_construct, "lightgbm": lightgbm_construct}
    for construct in runs.values():
        construct()
    seconds = {name: [] for name in runs}
    for repeat in range(a.repeats):
        for name, construct in runs.items():
            started = time.perf_counter()
            construct()
            seconds[name].append(time.perf_counter() - started)
        emit(dict(bench="dataset_construct", repeat=repeat, n_rows=Xtr.shape[0],
                  **{f"s_{name}": round(values[-1], 4) for name, values in seconds.items()}), a.out)
    ratio = np.array(seconds["multigrove"]) / np.array(seconds["lightgbm"])
    print(f"multigrove / LightGBM construction time: median {np.median(ratio):.2f} "
          f"(range {ratio.min():.2f}-{ratio.max():.2f}), {a.repeats} repeats")


if __name__ == "__main__":
    main()
