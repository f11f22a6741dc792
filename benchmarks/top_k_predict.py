#!/usr/bin/env python
"""Top-k prediction against dense prediction + ranking, on Delicious (983 labels, CSR X), for a model with
k-sparse leaves and one with dense leaves; microseconds per row (median of interleaved repeats), and the
P@1/P@3/P@5 both give (identical by construction).

    python benchmarks/top_k_predict.py --repeats 3 --out benchmarks/results/top_k_predict.jsonl
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
    ap.add_argument("--rounds", type=int, default=50)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out")
    a = ap.parse_args()
    import multigrove as mg
    from multigrove.datasets import load_multi_label
    from multigrove.xmc.metrics import precision_at_k
    Xtr, Ytr, Xte, Yte = load_multi_label("delicious", sparse=True)
    for name, params in (("k-sparse leaves (10)", {"leaf_sparsity": 10}), ("dense leaves", {})):
        model = mg.train({"objective": "multilabel", "num_threads": 2, **params},
                         mg.Dataset(Xtr, Ytr.toarray()), a.rounds)
        model.predict(Xte[:10], top_k=5)  # compile
        times = {"top_k": [], "dense": []}
        for _ in range(a.repeats):
            t0 = time.perf_counter()
            pair = model.predict(Xte, top_k=5)
            times["top_k"].append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            P = model.predict(Xte)
            order = np.argsort(-P, axis=1, kind="stable")[:, :5]
            times["dense"].append(time.perf_counter() - t0)
        ratios = [t / d for t, d in zip(times["top_k"], times["dense"])]
        p_top, p_dense = precision_at_k(Yte, pair, 5), precision_at_k(Yte, P, 5)
        emit({"benchmark": "top_k_predict", "data": "delicious", "model": name, "rounds": a.rounds,
              "top_k_us_per_row": 1e6 * float(np.median(times["top_k"])) / Xte.shape[0],
              "dense_us_per_row": 1e6 * float(np.median(times["dense"])) / Xte.shape[0],
              "ratio_median": float(np.median(ratios)), "ratio_range": [min(ratios), max(ratios)],
              "same_indices": bool(np.array_equal(pair[0], order)),
              "p_at_1_3_5": [float(p_top[0]), float(p_top[2]), float(p_top[4])],
              "p_at_1_3_5_dense": [float(p_dense[0]), float(p_dense[2]), float(p_dense[4])]}, a.out)


if __name__ == "__main__":
    main()
