#!/usr/bin/env python
"""Leaf-wise growth's splits ahead of their turn: how many a tree makes, how many have their turn, how many never
do, and the batches they run in, for each rank share (``grower.AHEAD_RANK_SHARE``: a leaf goes ahead only from a
rank within that share of the splits left in the tree).

A split whose turn never comes partitions its leaf's rows, builds and scans a child and is given up: work and
Python for nothing.  The counts are the same on any machine for a thread count (the schedule that decides which
split goes to a batch depends on it, not on timing), so the 16 threads of a 16-core machine are counted here with
``NUMBA_NUM_THREADS=16`` on two cores.  ``--time`` also times the rounds, the shares alternated fit by fit in this
process (the median round of each fit, over the first share's).

    NUMBA_NUM_THREADS=16 python benchmarks/splits_ahead.py --task otto scm20d rf1 --threads 16 \
        --out benchmarks/results/splits_ahead.jsonl
    python benchmarks/splits_ahead.py --task otto --threads 2 --splits-ahead 16 --time --fits 8 \
        --out benchmarks/results/splits_ahead.jsonl

Tasks: round_profile.py's ``otto`` (``GroveClassifier()`` defaults on the 61,878 Otto rows), ``rf1`` and ``scm20d``
(``GroveRegressor()`` defaults on the accuracy panel's training rows, ``MULTIGROVE_DATA``).  No early stopping: a
fixed number of rounds, after three of warm-up.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import BATCH_GROUPS_HELP, SPLITS_AHEAD_HELP, RoundTimer, emit, set_splits_ahead  # noqa: E402
from round_profile import TASKS  # noqa: E402

#: rounds of each fit left out of its times (the first ones allocate the tree's buffers)
SKIP_ROUNDS = 2


def task_fit(task: str, threads: int):
    """fit(n_rounds, callback) for the task (round_profile.TASKS, at its defaults)."""
    def fit(n_rounds: int, callback=lambda env: None) -> None:
        TASKS[task](n_rounds, threads, callback, {})
    return fit


class Counts:
    """Counts of the grower's splits ahead (_split_ahead), of those that had their turn (_commit) and of the builder's
    batches (LocalBuilder._split_batch), by wrapping the three methods.  Of the batches, also the rows of their splits'
    nodes and, summed over the batches, the rows of each batch's largest split: a batch run a split a task lasts at
    least as long as its largest split, so with a split's time in proportion to its rows such batches keep
    rows / (threads x largest) of the threads busy (``batch_balance``).  Batches shared out by feature groups
    (LocalBuilder._batch_by_groups) are counted apart; ``critical_rows`` is the rows a tree's batches keep one
    thread on under that model: the largest split of a batch run a split a task, the rows over the threads times the
    groups' extra work (1 + BATCH_GROUP_EXTRA_WORK a group beyond the first) of one shared out by groups."""

    def __init__(self):
        from multigrove.boosting import builder, grower
        self.ahead = self.committed = self.batches = self.batched = 0
        self.batch_rows = self.largest_rows = self.group_batches = self.critical_rows = 0
        self._by_groups = False
        split_ahead, commit, split_batch = (grower.TreeGrower._split_ahead, grower.TreeGrower._commit,
                                            builder.LocalBuilder._split_batch)
        by_groups = builder.LocalBuilder._batch_by_groups

        def counted_ahead(grower_self, leaf):
            self.ahead += 1
            return split_ahead(grower_self, leaf)

        def counted_commit(grower_self, builder_, leaf, new_index):
            self.committed += 1
            return commit(grower_self, builder_, leaf, new_index)

        def counted_batch(builder_self, requests, scans):
            rows = [int(builder_self.leaf_end[req.leaf] - builder_self.leaf_start[req.leaf]) for req in requests]
            self._by_groups = False
            ran = split_batch(builder_self, requests, scans)
            if ran:
                self.batches += 1
                self.batched += len(ran)
                batch_rows = sum(rows[i] for i in ran)
                if self._by_groups:
                    self.group_batches += 1
                    n_groups = builder_self._feature_groups().n_groups
                    self.critical_rows += batch_rows * builder.batch_group_work(n_groups) / builder_self.n_threads
                else:
                    self.batch_rows += batch_rows
                    self.largest_rows += max(rows[i] for i in ran)
                    self.critical_rows += max(rows[i] for i in ran)
            return ran

        def counted_by_groups(builder_self, node_rows, scratch_rows):
            self._by_groups = by_groups(builder_self, node_rows, scratch_rows)
            return self._by_groups
        grower.TreeGrower._split_ahead, grower.TreeGrower._commit = counted_ahead, counted_commit
        builder.LocalBuilder._split_batch = counted_batch
        builder.LocalBuilder._batch_by_groups = counted_by_groups

    def reset(self) -> None:
        self.ahead = self.committed = self.batches = self.batched = 0
        self.batch_rows = self.largest_rows = self.group_batches = self.critical_rows = 0

    def per_tree(self, trees: int, threads: int) -> dict:
        return {"ahead": self.ahead / trees, "committed": self.committed / trees,
                "never_in_turn": (self.ahead - self.committed) / trees, "batches": self.batches / trees,
                "splits_in_batches": self.batched / trees, "rows_in_batches": self.batch_rows / trees,
                "largest_split_rows": self.largest_rows / trees, "batches_by_groups": self.group_batches / trees,
                "critical_rows": self.critical_rows / trees,
                "batch_balance": self.batch_rows / (threads * self.largest_rows) if self.largest_rows else 0.0}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--task", nargs="+", default=["otto"], choices=["otto", "rf1", "scm20d"])
    ap.add_argument("--threads", type=int, default=2, help="num_threads (above the cores: NUMBA_NUM_THREADS too)")
    ap.add_argument("--shares", type=float, nargs="+", default=[1.0, 0.4], help="AHEAD_RANK_SHARE values")
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--splits-ahead", type=int, help=SPLITS_AHEAD_HELP)
    ap.add_argument("--batch-groups", choices=("on", "off"), default="on", help=BATCH_GROUPS_HELP)
    ap.add_argument("--time", action="store_true", help="also time the rounds, the shares alternated fit by fit")
    ap.add_argument("--fits", type=int, default=6, help="with --time: turns of the shares")
    ap.add_argument("--label", default="mg")
    ap.add_argument("--out")
    args = ap.parse_args()

    import numba

    from multigrove.boosting import builder, grower
    numba.set_num_threads(args.threads)
    if args.batch_groups == "off":
        builder.BATCH_GROUP_EXTRA_WORK = float("inf")
    set_splits_ahead(args.splits_ahead)
    counts = Counts()
    for task in args.task:
        fit = task_fit(task, args.threads)
        fit(3)
        rounds: dict[float, list[float]] = {share: [] for share in args.shares}
        for share in args.shares:
            grower.AHEAD_RANK_SHARE = share
            counts.reset()
            fit(args.rounds)
            emit({"bench": "splits_ahead", "label": args.label, "task": task, "threads": args.threads,
                  "splits_ahead": args.splits_ahead, "share": share, "rounds": args.rounds,
                  "batch_groups": args.batch_groups,
                  "per_tree": {k: round(v, 2) for k, v in counts.per_tree(args.rounds, args.threads).items()}},
                 args.out)
        if not args.time:
            continue
        for _ in range(args.fits):
            for share in args.shares:
                grower.AHEAD_RANK_SHARE = share
                timer = RoundTimer()
                fit(args.rounds + SKIP_ROUNDS, timer)
                rounds[share].append(float(np.median(np.diff(timer.ts[SKIP_ROUNDS - 1:]))))
        first = np.array(rounds[args.shares[0]])
        for share, seconds in rounds.items():
            ratio = np.array(seconds) / first
            emit({"bench": "splits_ahead", "label": args.label, "task": task, "threads": args.threads,
                  "splits_ahead": args.splits_ahead, "share": share, "fits": args.fits,
                  "ms_per_round_median": round(1e3 * float(np.median(seconds)), 2),
                  "vs_first_share": [round(float(np.median(ratio)), 3), round(float(ratio.min()), 3),
                                     round(float(ratio.max()), 3)]}, args.out)


if __name__ == "__main__":
    main()
