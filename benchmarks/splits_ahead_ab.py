#!/usr/bin/env python
"""Batches of splits on and off, alternated within one process: Otto's rounds (``GroveClassifier()`` defaults)
with the local builder's ``splits_ahead`` set to each value of ``--splits-ahead`` in turn, ``--fits`` times, each
fit ``--rounds`` rounds.

On this shared 2-core VM the load of other tenants drifts over minutes, and two processes run one after the
other (``round_profile.py --splits-ahead``) can differ by more than the batches do.  Here the settings take
turns fit by fit in one process, so that each sees the same drifts; a fit's rounds after its first two are
timed (the first ones allocate the tree's buffers).  Printed per setting: the median and the 10th percentile
(the quiet rounds) of all its rounds, and each turn's median over the first setting's.

    NUMBA_NUM_THREADS=2 python benchmarks/splits_ahead_ab.py --splits-ahead 1 2 4 --fits 12 \
        --out benchmarks/results/splits_ahead_ab.jsonl
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import RoundTimer, emit, set_splits_ahead  # noqa: E402

#: rounds of each fit left out of its times
SKIP_ROUNDS = 2


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--splits-ahead", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--fits", type=int, default=12, help="turns: each setting fits once a turn")
    ap.add_argument("--rounds", type=int, default=12)
    ap.add_argument("--label", default="")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    import numba

    import multigrove as mg
    from multigrove.datasets import load_otto
    numba.set_num_threads(args.threads)
    X, y = load_otto()

    def fit(splits_ahead: int) -> list[float]:
        set_splits_ahead(splits_ahead)
        timer = RoundTimer()
        mg.GroveClassifier(n_estimators=args.rounds, early_stopping=False, num_threads=args.threads,
                           verbosity=-1).fit(X, y, callbacks=[timer])
        return np.diff(timer.ts)[SKIP_ROUNDS - 1:].tolist()

    for setting in args.splits_ahead:  # compile every setting's kernels before the timed turns
        fit(setting)
    rounds: dict[int, list[float]] = {s: [] for s in args.splits_ahead}
    turn_medians: dict[int, list[float]] = {s: [] for s in args.splits_ahead}
    for _ in range(args.fits):
        for setting in args.splits_ahead:
            times = fit(setting)
            rounds[setting] += times
            turn_medians[setting].append(float(np.median(times)))
    first = args.splits_ahead[0]
    for setting in args.splits_ahead:
        ratio = np.array(turn_medians[setting]) / np.array(turn_medians[first])
        rec = {"bench": "splits_ahead_ab", "label": args.label, "threads": args.threads, "splits_ahead": setting,
               "fits": args.fits, "rounds_per_fit": args.rounds, "ms_median": 1e3 * float(np.median(rounds[setting])),
               "ms_quiet": 1e3 * float(np.percentile(rounds[setting], 10)),
               "vs_first_median": float(np.median(ratio)), "vs_first_range": [float(ratio.min()), float(ratio.max())]}
        print(f"splits ahead {setting}: median {rec['ms_median']:.1f} ms a round, quiet {rec['ms_quiet']:.1f}; "
              f"a turn's median over splits ahead {first}: {rec['vs_first_median']:.3f} "
              f"({rec['vs_first_range'][0]:.3f}-{rec['vs_first_range'][1]:.3f})")
        emit(rec, args.out)


if __name__ == "__main__":
    main()
