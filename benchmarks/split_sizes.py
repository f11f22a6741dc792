#!/usr/bin/env python
"""A task's splits by the size of the node: each split timed through the builder seam (``LocalBuilder.split``,
its children's scan included), summed a round by the node's rows.

Tasks: ``otto`` -- ``GroveClassifier()`` defaults on the 61,878 Otto rows, no early stopping; ``counts`` --
``sparse_inputs.py``'s 500,000 x 100 CSR counts, one output, 32 leaves, lambda 1, 255 bins.  A warm-up fit of
5 rounds (the compilation), then ``--rounds`` timed rounds.  On a shared machine whole stretches of a run are
slowed by another tenant's load; the largest nodes are a yardstick for that where their kernels are the same
in the checkouts compared (Otto's nodes of 16,384 rows and more: row chunks, a parallel partition): the
smaller buckets are also given over that yardstick's time, which compares two runs of different moments.

    python benchmarks/split_sizes.py --threads 2 --out benchmarks/results/split_sizes.jsonl
    python benchmarks/split_sizes.py --task counts --threads 2 --out benchmarks/results/split_sizes.jsonl
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

#: each task's buckets: their lower bounds, rows of the node split (the last bucket is the yardstick)
EDGES = {"otto": (0, 1_000, 2_000, 4_000, 8_000, 16_384), "counts": (0, 8_000, 32_000, 128_000)}


def _otto(rounds: int, threads: int) -> None:
    import multigrove as mg
    from multigrove.datasets import load_otto
    X, y = load_otto()
    mg.GroveClassifier(n_estimators=rounds, early_stopping=False, num_threads=threads, verbosity=-1).fit(X, y)


def _counts(rounds: int, threads: int) -> None:
    from sparse_inputs import BASE, make_counts

    import multigrove as mg
    mg.train(dict(BASE, objective="regression", verbosity=-1, num_threads=threads), mg.Dataset(*make_counts()),
             rounds)


TASKS = {"otto": _otto, "counts": _counts}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--task", choices=sorted(TASKS), default="otto")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--label", default="mg")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()

    from multigrove.boosting import builder as builders

    timed: list[tuple[int, float]] = []
    split = builders.LocalBuilder.split

    def split_one_by_one(self, requests, outs, scans=None):
        for i, request in enumerate(requests):
            rows = int(self.leaf_end[request.leaf] - self.leaf_start[request.leaf])
            started = time.perf_counter()
            split(self, [request], [outs[i]], None if scans is None else [scans[i]])
            timed.append((rows, time.perf_counter() - started))

    builders.LocalBuilder.split = split_one_by_one
    TASKS[args.task](5, args.threads)
    timed.clear()
    TASKS[args.task](args.rounds, args.threads)
    rows, seconds = np.array(timed).T
    edges = EDGES[args.task]
    bucket = np.searchsorted(edges, rows, side="right") - 1
    ms = [1e3 * float(seconds[bucket == b].sum()) / args.rounds for b in range(len(edges))]
    calls = [float((bucket == b).sum()) / args.rounds for b in range(len(edges))]
    emit({"bench": "split_sizes", "task": args.task, "label": args.label, "threads": args.threads,
          "rounds": args.rounds, "edges": list(edges), "ms_per_round": [round(v, 3) for v in ms],
          "calls_per_round": calls, "smaller_over_yardstick": round(sum(ms[:-1]) / ms[-1], 3) if ms[-1] else None,
          "total_ms_per_round": round(sum(ms), 3)}, args.out)


if __name__ == "__main__":
    main()
