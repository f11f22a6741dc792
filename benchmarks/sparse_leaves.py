#!/usr/bin/env python
"""Model size and prediction time of top-k sparse leaves vs dense leaves on Delicious (983 labels).

Mulan's train/test split; objective multilabel; learning rate 0.1, lambda_l2 1, 32 leaves, 2 threads,
a fixed number of rounds for every variant (same number of trees); splits scored on a random-projection
sketch (k=5) in all variants, so they differ only in the leaves.  Reported: training time, saved model
size (JSON bytes), prediction time for the 3,185 test rows (median of 5), test mean label log loss
and P@1 / P@5.

    python benchmarks/sparse_leaves.py --out benchmarks/results/sparse_leaves.jsonl
"""
import argparse
import json
import os
import tempfile
import time

import numpy as np

#: splits are scored on a random-projection sketch (k=5) in every variant, so that the variants differ
#: only in how leaves are stored (an unsketched 983-output tree costs ~6 s a round here)
SKETCH = {"sketch": "random_projection", "sketch_k": 5}
VARIANTS = {"dense leaves (983 values)": dict(SKETCH), "top-5 sparse leaves": dict(SKETCH, leaf_sparsity=5),
            "top-20 sparse leaves": dict(SKETCH, leaf_sparsity=20),
            "top-50 sparse leaves": dict(SKETCH, leaf_sparsity=50)}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=200)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    import multigrove as mg
    from multigrove import datasets
    from multigrove.boosting.metrics import precision_at_k
    Xtr, Ytr, Xte, Yte = datasets.load_multi_label("delicious")
    Xtr, Xte = Xtr.astype(np.float32), Xte.astype(np.float32)
    base = dict(objective="multilabel", learning_rate=0.1, num_leaves=32, lambda_l2=1.0, num_threads=2, verbosity=-1)
    mg.train(base, mg.Dataset(Xtr[:500], Ytr[:500]), 2)
    lines = ["| leaves | train s | model MB | predict ms (3,185 rows) | test log loss | P@1 | P@5 |",
             "|---|---|---|---|---|---|---|"]
    for name, extra in VARIANTS.items():
        mg.train(dict(base, **extra), mg.Dataset(Xtr[:500], Ytr[:500]), 2)  # compile this variant's kernels
        t0 = time.perf_counter()
        bst = mg.train(dict(base, **extra), mg.Dataset(Xtr, Ytr), a.rounds)
        fit_s = time.perf_counter() - t0
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "m.json")
            bst.save_model(path)
            size = os.path.getsize(path)
        bst.predict(Xte[:10])
        times = []
        for _ in range(5):
            t1 = time.perf_counter()
            P = bst.predict(Xte)
            times.append(time.perf_counter() - t1)
        Pc = np.clip(P, 1e-15, 1 - 1e-15)
        ll = float(-(Yte * np.log(Pc) + (1 - Yte) * np.log(1 - Pc)).mean())
        rec = dict(variant=name, rounds=a.rounds, fit_s=round(fit_s, 2), model_bytes=size,
                   predict_ms=round(1e3 * float(np.median(times)), 1), test_logloss=round(ll, 5),
                   p_at_1=round(precision_at_k(Yte, P, 1), 4), p_at_5=round(precision_at_k(Yte, P, 5), 4))
        with open(a.out, "a") as f:
            f.write(json.dumps(rec) + "\n")
        lines.append(f"| {name} | {rec['fit_s']} | {size / 1e6:.2f} | {rec['predict_ms']} | {rec['test_logloss']} | "
                     f"{rec['p_at_1']} | {rec['p_at_5']} |")
        print(lines[-1], flush=True)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
