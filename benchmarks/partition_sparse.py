#!/usr/bin/env python
"""The partition of a node by a sparse feature of Otto's store, by node size: ``kernels.partition.partition_rows``
(the row index where the feature has one, else the merge with its entries or the marks) on one thread.

Two features: Otto's densest sparse one (30,229 entries in 61,878 rows) and the median one (10,385).  For each
node size, 50 random nodes (rows ascending) are partitioned 20 times inside one compiled loop, so that the
kernel's time is measured without the call's overhead and with the nodes in cache; the best of three such loops,
in microseconds a partition.  Compare checkouts with ``PYTHONPATH=<older checkout>/src``.

    NUMBA_NUM_THREADS=1 python benchmarks/partition_sparse.py --out benchmarks/results/partition_sparse.jsonl
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

NODE_ROWS = (300, 1_000, 4_000, 12_000, 40_000)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=50)
    ap.add_argument("--label", default="mg")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    from numba import njit

    from multigrove.kernels.partition import SplitRule, partition_rows

    @njit
    def partitions(store, nodes, rule, tmp, marks, repeats):
        left = 0
        for _ in range(repeats):
            for k in range(nodes.shape[0]):
                rows = nodes[k].copy()
                left += partition_rows(store, rows, 0, rows.shape[0], rule, tmp, marks)
        return left

    store = stores().get("otto")
    if store is None:
        sys.exit("Otto's data is not on this machine (MULTIGROVE_DATA)")
    rng = np.random.default_rng(0)
    n = store.n_rows
    tmp, marks = np.empty(n, np.int32), np.zeros(n, np.uint8)
    entries = np.diff(store.csc_indptr)
    sparse = np.flatnonzero(store.feature_kind == 2)
    by_entries = sparse[np.argsort(entries[sparse], kind="stable")]
    indexed = getattr(store, "csc_index", np.full(store.n_features, -1))
    for feature in (by_entries[-1], by_entries[by_entries.size // 2]):
        rule = SplitRule(int(feature), 0, True)
        for node_rows in NODE_ROWS:
            nodes = np.stack([np.sort(rng.choice(n, node_rows, replace=False)).astype(np.int32)
                              for _ in range(args.nodes)])
            partitions(store, nodes, rule, tmp, marks, 1)  # compilation
            best = np.inf
            for _ in range(3):
                started = time.perf_counter()
                partitions(store, nodes, rule, tmp, marks, 20)
                best = min(best, time.perf_counter() - started)
            emit({"bench": "partition_sparse", "label": args.label, "entries": int(entries[feature]),
                  "indexed": bool(indexed[feature] >= 0), "node_rows": node_rows,
                  "us": round(1e6 * best / (20 * args.nodes), 2)}, args.out)


if __name__ == "__main__":
    main()
