#!/usr/bin/env python
"""Small nodes' splits in a batch (``kernels.split_step.split_batch``: one parallel region, a task a split, each
on one thread) against the same splits one at a time, each in its own call (``kernels.split_step.split_step``:
the node's partition, then its smaller child's histogram and both children's scan shared out by feature groups),
and against one thread doing them in turn (the serial split, then the serial scan).

Stores: Otto's (a CSR part: 89 of its 93 features, 17 entries a row; 4,053 bins; derived default bins) and a
dense 20,000 x 61 (``feature_groups.stores``), statistics 5 columns wide (the default sketch's 3 gradient
columns, a Hessian, a count).  A batch is ``--batch`` nodes (default: one a thread) of random disjoint rows,
each split at a random feature (Otto: a sparse one at its default bin; dense: its middle bin).  Microseconds a
split, median over ``--trials`` batches after a warm-up, at the process's thread count; the three give the same
histograms and splits (tests/kernels/test_split_step.py).

    NUMBA_NUM_THREADS=2 python benchmarks/split_batch.py --out benchmarks/results/split_batch.jsonl
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

NODE_ROWS = (300, 1_000, 4_000)
WIDTH = 5


class Nodes:
    """``m`` disjoint random nodes of ``node_rows`` rows each, one after the other in ``rows``, with their splits,
    the histograms of their parents and their children's sums."""

    def __init__(self, store, stats, rng, m: int, node_rows: int):
        from multigrove.kernels.histogram import build_histogram_serial
        from multigrove.kernels.partition import SplitRule, partition_rows
        picked = rng.choice(store.n_rows, m * node_rows, replace=False)
        self.rows = np.concatenate([np.sort(picked[i * node_rows:(i + 1) * node_rows]) for i in range(m)])
        self.rows = self.rows.astype(np.int32)
        self.bounds = np.arange(m + 1, dtype=np.int64) * node_rows
        sparse = np.flatnonzero(store.feature_kind == 2)
        self.rules, self.builds = [], []
        self.parents = np.empty((m, store.total_bins, WIDTH))
        self.totals = np.empty((2 * m, WIDTH))
        tmp = np.empty(store.n_rows, np.int32)
        for i in range(m):
            if sparse.size:
                feature = int(rng.choice(sparse))
                rule = SplitRule(feature, int(store.default_bin[feature]), True)
            else:
                feature = int(rng.integers(store.n_features))
                rule = SplitRule(feature, int((store.offsets[feature + 1] - store.offsets[feature]) // 2), True)
            node = self.rows[self.bounds[i]:self.bounds[i + 1]]
            build_histogram_serial(store, node, stats, self.parents[i], np.empty(WIDTH))
            copy = node.copy()
            n_left = partition_rows(store, copy, 0, node_rows, rule, tmp, np.zeros(0, np.uint8))
            build = 1 if n_left <= node_rows - n_left else 2
            child = copy[:n_left] if build == 1 else copy[n_left:]
            self.totals[2 * i] = stats[child].sum(0, dtype=np.float64)
            self.totals[2 * i + 1] = stats[node].sum(0, dtype=np.float64) - self.totals[2 * i]
            self.rules.append(rule)
            self.builds.append(build)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=200)
    ap.add_argument("--batch", type=int, default=0, help="nodes a batch (0: one a thread)")
    ap.add_argument("--label", default="mg")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()

    import numba

    from multigrove.boosting.builder import feature_groups
    from multigrove.kernels.partition import serial_split_kernel
    from multigrove.kernels.split import SCAN_KERNELS, FeatureSplits, NodeSplits, ScanParams, scan_kind, scan_scratch
    from multigrove.kernels.split_step import ScanBatch, ScanJob, SplitBatch, split_batch_kernel, split_step_kernel
    from multigrove.kernels.store import dense_only

    threads = numba.get_num_threads()
    m = args.batch or threads
    rng = np.random.default_rng(0)
    params = ScanParams(3, 3, 0, 1.0, 4, 1.0, 20, 1e-3, 0.0, 0, False)  # GroveClassifier's defaults
    kind = scan_kind(params)
    scratch_width = scan_scratch(WIDTH, params).shape[1]
    for name, store in stores().items():
        n, n_features = store.n_rows, store.n_features
        stats = rng.normal(size=(n, WIDTH)).astype(np.float32)
        stats[:, 3] = rng.random(n) + 0.1  # the Hessian
        stats[:, 4] = 1.0                  # the count
        offsets, mask = store.offsets.astype(np.int64), np.ones(n_features, np.bool_)
        groups = feature_groups(store, threads)
        serial_split, scan = serial_split_kernel(dense_only(store), WIDTH), SCAN_KERNELS[kind]
        fused, batch = split_step_kernel(params), split_batch_kernel(dense_only(store), WIDTH, kind)
        tmp, marks, counts = np.empty(n, np.int32), np.zeros(n, np.uint8), np.zeros(1, np.int64)
        noise, active = np.zeros((2, n_features)), np.ones(2, np.bool_)
        for node_rows in NODE_ROWS:
            seconds = {"batch": [], "one at a time": [], "one thread": []}
            for _ in range(args.trials):
                nodes = Nodes(store, stats, rng, m, node_rows)
                for way in seconds:
                    rows, hists = nodes.rows.copy(), np.empty((2 * m, store.total_bins, WIDTH))
                    hists[1::2] = nodes.parents
                    found, best = FeatureSplits.allocate(2 * m, n_features), NodeSplits.allocate(2 * m, WIDTH)
                    splits = SplitBatch(np.array([(nodes.bounds[i], nodes.bounds[i + 1], rule.feature,
                                                   rule.threshold_bin, 1, nodes.builds[i])
                                                  for i, rule in enumerate(nodes.rules)], np.int64),
                                        np.empty((m, WIDTH)), np.empty(m, np.int64))
                    slots = np.arange(0, 2 * m, 2)
                    scans = ScanBatch(hists, np.column_stack([slots, slots + 1, np.ones(m), np.full(m, 2)]).astype(
                                          np.int64), np.ones((m, 2), np.bool_), nodes.totals,
                                      np.ones((m, n_features), np.bool_), np.empty((m, scratch_width)), noise)
                    started = time.perf_counter()  # the kernels' time (the batch's arrays are the builder's work)
                    if way == "batch":
                        batch(store, rows, stats, tmp, np.zeros(0, np.uint8), np.zeros(0, np.bool_), splits,
                              offsets, params, scans, found, best)
                    for i in range(m if way != "batch" else 0):
                        start, end = int(nodes.bounds[i]), int(nodes.bounds[i + 1])
                        totals, scratch = nodes.totals[2 * i:2 * i + 2], scan_scratch(WIDTH, params)
                        per_feature = FeatureSplits(*(a[2 * i:2 * i + 2] for a in found))
                        chosen = NodeSplits(*(a[2 * i:2 * i + 2] for a in best))
                        if way == "one at a time":
                            job = ScanJob(hists[2 * i + 1], True, totals, offsets, mask, params, scratch, active,
                                          noise, per_feature, chosen)
                            fused(store, rows, start, end, nodes.rules[i], nodes.builds[i], stats, groups, tmp, marks,
                                  counts, hists[2 * i], job, None)
                        else:
                            serial_split(store, rows, start, end, nodes.rules[i], nodes.builds[i], stats, tmp, marks,
                                         hists[2 * i], np.empty(WIDTH))
                            scan.best_splits_serial(hists[2 * i], hists[2 * i + 1], 2, True, totals, offsets, mask,
                                                    params, None, scratch, active, noise, per_feature, chosen)
                    seconds[way].append((time.perf_counter() - started) / m)
            warm = min(20, args.trials // 4)
            cell = {way: round(1e6 * float(np.median(values[warm:])), 1) for way, values in seconds.items()}
            emit({"bench": "split_batch", "label": args.label, "store": name, "threads": threads, "batch": m,
                  "node_rows": node_rows, "batch_us": cell["batch"], "one_at_a_time_us": cell["one at a time"],
                  "one_thread_us": cell["one thread"],
                  "batch_vs_one_at_a_time": round(cell["batch"] / cell["one at a time"], 3)}, args.out)


if __name__ == "__main__":
    main()
