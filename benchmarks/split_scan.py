#!/usr/bin/env python
"""The split scan on its own: ``best_splits_serial`` (one thread) on synthetic node histograms of a given shape.

Features x bins a feature, rows a node (spread uniformly over the value bins, so that a node of few rows has
mostly empty bins), k gradient columns sharing one Hessian column (the default multi-output sketch: k = 3),
one node or two (the sibling's histogram with or without its subtraction from the parent's).  Prints the
median milliseconds of ``--repeats`` calls and nanoseconds a bin; compile time is outside the clock.

    python benchmarks/split_scan.py --shape 411 98 100 --shape 294 256 900 --out benchmarks/results/split_scan.jsonl
    PYTHONPATH=<older checkout>/src python benchmarks/split_scan.py --label before ...
"""
import argparse
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import emit  # noqa: E402


def node_histogram(rng, n_features: int, n_bins: int, rows: int, k: int) -> np.ndarray:
    """(n_features * n_bins, k + 2): k gradient sums, a Hessian and a count column; the last bin of every
    feature (its missing bin) empty."""
    hist = np.zeros((n_features * n_bins, k + 2))
    for f in range(n_features):
        bins = f * n_bins + rng.integers(0, n_bins - 1, rows)
        for j in range(k):
            np.add.at(hist[:, j], bins, rng.normal(size=rows))
        np.add.at(hist[:, k], bins, 0.25)
        np.add.at(hist[:, k + 1], bins, 1.0)
    return hist


def time_scan(n_features: int, n_bins: int, rows: int, k: int, repeats: int) -> dict:
    from multigrove.kernels.split import FeatureSplits, NodeSplits, ScanParams, best_splits_serial, scan_scratch
    rng = np.random.default_rng(0)
    n_cols = k + 2
    offsets = np.arange(n_features + 1, dtype=np.int64) * n_bins
    child = node_histogram(rng, n_features, n_bins, rows, k)
    parent = 2.0 * child
    totals = np.stack([child[:n_bins].sum(0), child[:n_bins].sum(0)])
    params = ScanParams(k, k, 0, 1.0, k + 1, 3.0, 19, 1e-3, 0.0, 0, False)
    mask, active, noise = np.ones(n_features, np.bool_), np.ones(2, np.bool_), np.zeros((2, n_features))
    per_feature, best = FeatureSplits.allocate(2, n_features), NodeSplits.allocate(2, n_cols)
    scratch = scan_scratch(n_cols, params)
    result = {}
    for name, n_nodes, subtract in (("one_node", 1, False), ("two_nodes", 2, False), ("two_nodes_subtract", 2, True)):
        seconds = []
        for rep in range(repeats + 1):  # the first call compiles (or reads the cache)
            sibling = parent.copy()
            started = time.perf_counter()
            best_splits_serial(child, sibling, n_nodes, subtract, totals, offsets, mask, params, None, scratch, active,
                               noise, per_feature, best)
            if rep:
                seconds.append(time.perf_counter() - started)
        median = float(np.median(seconds))
        result[f"{name}_ms"] = round(1e3 * median, 4)
        result[f"{name}_ns_per_bin"] = round(1e9 * median / (n_nodes * n_features * n_bins), 2)
    return result


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shape", nargs=3, type=int, action="append", metavar=("FEATURES", "BINS", "ROWS"))
    ap.add_argument("--k", type=int, default=3, help="gradient columns (one shared Hessian)")
    ap.add_argument("--repeats", type=int, default=30)
    ap.add_argument("--label", default="")
    ap.add_argument("--out")
    a = ap.parse_args()
    for n_features, n_bins, rows in a.shape or [(411, 98, 100), (294, 256, 900)]:
        rec = {"bench": "split_scan", "features": n_features, "bins": n_bins, "rows": rows, "k": a.k,
               "label": a.label, **time_scan(n_features, n_bins, rows, a.k, a.repeats)}
        emit(rec, a.out)


if __name__ == "__main__":
    main()
