#!/usr/bin/env python
"""Otto's splits by the size of the node: each split timed through the builder seam (``LocalBuilder.split``,
its children's scan included), summed a round by the node's rows.

``GroveClassifier()`` defaults on the 61,878 Otto rows, no early stopping: a warm-up fit of 5 rounds (the
compilation), then ``--rounds`` timed rounds.  On a shared machine whole stretches of a run are slowed by
another tenant's load; the nodes of 16,384 rows and more are a yardstick for that, as their kernels are the
same in the checkouts compared here (row chunks, a parallel partition): each bucket is also given over that
yardstick's time, which compares two runs of different moments.

    python benchmarks/split_sizes.py --threads 2 --out benchmarks/results/split_sizes.jsonl
    PYTHONPATH=<older checkout>/src python benchmarks/split_sizes.py --threads 2 --label before ...
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

#: the buckets' lower bounds, rows of the node split
EDGES = (0, 1_000, 2_000, 4_000, 8_000, 16_384)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--label", default="mg")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()

    import multigrove as mg
    from multigrove.boosting import builder as builders
    from multigrove.datasets import load_otto

    X, y = load_otto()
    timed: list[tuple[int, float]] = []
    split = builders.LocalBuilder.split

    def split_one_by_one(self, requests, outs, scans=None):
        for i, request in enumerate(requests):
            rows = int(self.leaf_end[request.leaf] - self.leaf_start[request.leaf])
            started = time.perf_counter()
            split(self, [request], [outs[i]], None if scans is None else [scans[i]])
            timed.append((rows, time.perf_counter() - started))

    builders.LocalBuilder.split = split_one_by_one
    mg.GroveClassifier(n_estimators=5, early_stopping=False, num_threads=args.threads, verbosity=-1).fit(X, y)
    timed.clear()
    mg.GroveClassifier(n_estimators=args.rounds, early_stopping=False, num_threads=args.threads,
                       verbosity=-1).fit(X, y)
    rows, seconds = np.array(timed).T
    bucket = np.searchsorted(EDGES, rows, side="right") - 1
    ms = [1e3 * float(seconds[bucket == b].sum()) / args.rounds for b in range(len(EDGES))]
    calls = [float((bucket == b).sum()) / args.rounds for b in range(len(EDGES))]
    yardstick = ms[-1]
    emit({"bench": "split_sizes", "label": args.label, "threads": args.threads, "rounds": args.rounds,
          "edges": list(EDGES), "ms_per_round": [round(v, 3) for v in ms], "calls_per_round": calls,
          "below_16384_over_yardstick": round(sum(ms[:-1]) / yardstick, 3),
          "total_ms_per_round": round(sum(ms), 3)}, args.out)


if __name__ == "__main__":
    main()
