#!/usr/bin/env python
"""The CUDA trees against the CPU trees on a real GPU: the check the simulator tests make in CI
(``tests/boosting/test_cuda_builder.py``), run where the kernels compile for the card (the simulator runs
every GPU thread as Python and cannot show a race, a missing synchronisation or a kernel the card rejects).

For each case, both devices train the same model on the same rows. The script prints:
- the first tree whose structure (features, thresholds, missing directions, children) differs, if any;
- the largest difference of the raw predictions, relative to their scale.

The GPU adds its float64 sums in another order, so a near-tie may go the other way. From that tree on, the
models part ways: every later tree grows on other gradients. A case therefore fails when its first tree
differs, or when all trees agree but the predictions differ by more than ``--tolerance``. A later tree that
differs is reported, not failed. The exit status is 1 when any case fails. The first call compiles the CUDA
kernels into Numba's cache (the device session runs this check first, which keeps that compilation out of the
timed steps).

    python benchmarks/gpu_check.py --rows 4000 --rounds 5
    NUMBA_ENABLE_CUDASIM=1 python benchmarks/gpu_check.py --rows 150 --rounds 2   # the script itself, slowly
"""
from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

import multigrove as mg

#: (name, objective settings, extra parameters)
CASES = [
    ("regression", {}, {}),
    ("multi_target", {}, {}),
    ("multiclass", {"objective": "multiclass", "num_class": 3}, {}),
    ("multilabel", {"objective": "multilabel"}, {}),
    ("depthwise", {}, {"growth_policy": "depthwise", "max_depth": 4}),
    ("symmetric", {"objective": "multiclass", "num_class": 3}, {"growth_policy": "symmetric", "max_depth": 3}),
    ("sketch", {"objective": "multiclass", "num_class": 3}, {"sketch": "random_projection", "sketch_k": 2}),
    ("top_k_leaves", {"objective": "multilabel"}, {"leaf_sparsity": 1}),
    ("goss", {}, {"data_sample_strategy": "goss", "top_rate": 0.3, "other_rate": 0.3}),
    ("random_strength", {"objective": "multilabel"}, {"sketch": "top_outputs", "sketch_k": 2, "random_strength": 1.0}),
    ("categorical", {}, {"categorical_feature": [0], "max_cat_to_onehot": 2, "min_data_per_group": 5}),
]


def _data(name: str, objective: dict, rows: int, rng):
    X = rng.normal(size=(rows, 6))
    X[rng.random(X.shape) < 0.1] = np.nan
    if name == "categorical":
        X[:, 0] = rng.integers(0, 12, rows)
    signal = np.nan_to_num(X[:, :3]) + (np.nan_to_num(X[:, :1]) % 3 if name == "categorical" else 0)
    if objective.get("objective") == "multiclass":
        return X, np.argmax(signal + 0.3 * rng.normal(size=signal.shape), axis=1)
    if objective.get("objective") == "multilabel":
        return X, (signal > 0).astype(float)
    if name in ("regression", "goss", "categorical"):
        return X, signal[:, 0] + 0.1 * rng.normal(size=rows)
    return X, signal + 0.1 * rng.normal(size=signal.shape)


def _same_structure(a, b) -> bool:
    first, second = a.to_dict(), b.to_dict()
    return all(first[key] == second[key] for key in ("split_feature", "threshold_bin", "default_left", "left_child",
                                                     "right_child"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=4000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--tolerance", type=float, default=1e-6, help="largest relative difference of predictions")
    ap.add_argument("--cases", nargs="+", choices=[name for name, _, _ in CASES], default=[n for n, _, _ in CASES])
    a = ap.parse_args()
    failed = 0
    for name, objective, extra in CASES:
        if name not in a.cases:
            continue
        rng = np.random.default_rng(len(name))
        X, y = _data(name, objective, a.rows, rng)
        params = {"verbosity": -1, "num_leaves": 15, "min_data_in_leaf": 10, **objective, **extra}
        start = time.perf_counter()
        cpu = mg.train(params, mg.Dataset(X, y), a.rounds)
        gpu = mg.train({**params, "device_type": "cuda"}, mg.Dataset(X, y), a.rounds)
        differ = [i for i, (t, u) in enumerate(zip(cpu.trees, gpu.trees)) if not _same_structure(t, u)]
        expect, got = cpu.predict(X, raw_score=True), gpu.predict(X, raw_score=True)
        difference = float(np.max(np.abs(got - expect)) / max(float(np.max(np.abs(expect))), 1e-12))
        ok = len(cpu.trees) == len(gpu.trees) and (differ[0] > 0 if differ else difference <= a.tolerance)
        failed += not ok
        print(json.dumps({"bench": "gpu_check", "case": name, "rows": a.rows, "trees": len(cpu.trees),
                          "first_different_tree": differ[0] if differ else None, "relative_difference": difference,
                          "ok": ok, "seconds": round(time.perf_counter() - start, 2)}), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
