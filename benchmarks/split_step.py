#!/usr/bin/env python
"""A small node's split on Otto's store: one kernel call (``kernels.split_step``: the partition, the smaller
child's histogram by feature groups with its default bins derived, and both children's scan) against the two
calls it replaces (the serial split, ``split_and_build_serial``, then the scan, ``best_splits``).

Otto's store has a CSR part (89 of its 93 features, 17 entries a row) and derived default bins: 4,053 bins, and
statistics 5 columns wide (the default sketch's 3 gradient columns, a Hessian, a count).  A small node's work is
mostly its bins' (the default bins derived, the two children scanned), which the feature groups share out.
Nodes are random row subsets split at a random sparse feature's default bin; median microseconds over
``--trials`` nodes after a warm-up, at the process's thread count (``NUMBA_NUM_THREADS``); both give the same
histograms and splits (tests/kernels/test_split_step.py).

    NUMBA_NUM_THREADS=2 python benchmarks/split_step.py --out benchmarks/results/split_step.jsonl
    NUMBA_NUM_THREADS=1 python benchmarks/split_step.py --out benchmarks/results/split_step.jsonl
    NUMBA_NUM_THREADS=1 python benchmarks/split_step.py --groups 16 --out benchmarks/results/split_step.jsonl

``--groups`` sets the feature groups of the one call (default: one a thread).  On one thread, 16 groups run one
after the other: their time over one group's is the work 16 threads would share (the rows' CSR entries walked by
every group, the partition and the child's sums on the calling thread), fork and join and memory traffic aside.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import emit  # noqa: E402
from feature_groups import stores  # noqa: E402

NODE_ROWS = (300, 1_000, 2_000, 4_000)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=300)
    ap.add_argument("--groups", type=int, default=0, help="feature groups of the one call (0: one a thread)")
    ap.add_argument("--node-rows", type=int, nargs="+", default=list(NODE_ROWS), help="the nodes' sizes")
    ap.add_argument("--label", default="mg")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()

    import numba

    from multigrove.boosting.builder import feature_groups
    from multigrove.kernels.histogram import build_histogram_serial
    from multigrove.kernels.partition import SplitRule, partition_rows, serial_split_kernel
    from multigrove.kernels.split import SCAN_KERNELS, FeatureSplits, NodeSplits, ScanParams, scan_kind, scan_scratch
    from multigrove.kernels.split_step import ScanJob, split_step_kernel

    store = stores().get("otto")
    if store is None:
        sys.exit("Otto's data is not on this machine (MULTIGROVE_DATA)")
    rng = np.random.default_rng(0)
    n, width, n_features = store.n_rows, 5, store.n_features
    stats = rng.normal(size=(n, width)).astype(np.float32)
    stats[:, 3] = rng.random(n) + 0.1  # the Hessian
    stats[:, 4] = 1.0                  # the count
    params = ScanParams(3, 3, 0, 1.0, 4, 1.0, 20, 1e-3, 0.0, 0, False)  # GroveClassifier's defaults
    offsets, mask = store.offsets.astype(np.int64), np.ones(n_features, np.bool_)
    threads = numba.get_num_threads()
    groups = feature_groups(store, args.groups or threads)
    serial_split, scan, fused = serial_split_kernel(False, width), SCAN_KERNELS[scan_kind(params)], \
        split_step_kernel(params)
    tmp, marks, counts = np.empty(n, np.int32), np.zeros(n, np.uint8), np.zeros(1, np.int64)
    sparse_features = np.flatnonzero(store.feature_kind == 2)
    for node_rows in args.node_rows:
        seconds = {"one call": [], "two calls": []}
        for _ in range(args.trials):
            rows = np.sort(rng.choice(n, node_rows, replace=False)).astype(np.int32)
            feature = int(rng.choice(sparse_features))
            rule = SplitRule(feature, int(store.default_bin[feature]), True)
            parent = np.empty((store.total_bins, width))
            build_histogram_serial(store, rows, stats, parent, np.empty(width))
            sorted_rows = rows.copy()
            n_left = partition_rows(store, sorted_rows, 0, node_rows, rule, tmp, marks)
            build = 1 if n_left <= node_rows - n_left else 2
            child = sorted_rows[:n_left] if build == 1 else sorted_rows[n_left:]
            totals = np.empty((2, width))
            totals[0] = stats[child].sum(0, dtype=np.float64)
            totals[1] = stats[rows].sum(0, dtype=np.float64) - totals[0]
            active = np.ones(2, np.bool_)
            for name in seconds:
                node, hist, larger = rows.copy(), np.empty((store.total_bins, width)), parent.copy()
                per_feature, best = FeatureSplits.allocate(2, n_features), NodeSplits.allocate(2, width)
                noise, scratch = np.zeros((2, n_features)), scan_scratch(width, params)
                started = time.perf_counter()
                if name == "one call":
                    job = ScanJob(larger, True, totals, offsets, mask, params, scratch, active, noise, per_feature,
                                  best)
                    fused(store, node, 0, node_rows, rule, build, stats, groups, tmp, marks, counts, hist, job, None)
                else:
                    serial_split(store, node, 0, node_rows, rule, build, stats, tmp, marks, hist, np.empty(width))
                    scan.best_splits(hist, larger, 2, True, totals, offsets, mask, params, None, scratch, active,
                                     noise, per_feature, best)
                seconds[name].append(time.perf_counter() - started)
        warm = min(20, args.trials // 4)
        cell = {name: round(1e6 * float(np.median(values[warm:])), 1) for name, values in seconds.items()}
        emit({"bench": "split_step", "label": args.label, "threads": threads, "groups": groups.n_groups,
              "node_rows": node_rows, "one_call_us": cell["one call"], "two_calls_us": cell["two calls"],
              "ratio": round(cell["one call"] / cell["two calls"], 3)}, args.out)


if __name__ == "__main__":
    main()
