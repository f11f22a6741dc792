#!/usr/bin/env python
"""The held-out log loss kernel (``kernels.objective.logloss_rows``) on Delicious' held-out shape: 1,292 x 983
raw scores and 0/1 labels (2 % ones), or soft labels with ``--soft``.  Milliseconds, the median of
``--repeats`` calls; the kernel compiled (or read from the cache) before the clock.

    python benchmarks/logloss_rows.py --out benchmarks/results/logloss_rows.jsonl
    PYTHONPATH=<older checkout>/src python benchmarks/logloss_rows.py --label before ...
"""
import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import emit, median_seconds  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_292)
    ap.add_argument("--outputs", type=int, default=983)
    ap.add_argument("--soft", action="store_true", help="labels in (0, 1) in a fifth of the cells")
    ap.add_argument("--repeats", type=int, default=51)
    ap.add_argument("--label", default="now")
    ap.add_argument("--out")
    a = ap.parse_args()
    from multigrove.kernels.objective import logloss_rows
    rng = np.random.default_rng(0)
    raw = rng.normal(scale=6.0, size=(a.rows, a.outputs)) - 4.0
    labels = (rng.random(raw.shape) < 0.02).astype(np.float64)
    if a.soft:
        labels[rng.random(raw.shape) < 0.2] = 0.5
    rows, no_mask, no_cells = np.empty(a.rows), np.empty((0, 0), np.float32), np.empty((0, 0))
    logloss_rows(raw, True, labels, no_mask, rows, no_cells)
    seconds = median_seconds(lambda: logloss_rows(raw, True, labels, no_mask, rows, no_cells), a.repeats)
    emit(dict(bench="logloss_rows", label=a.label, rows=a.rows, outputs=a.outputs, soft=a.soft,
              ms=round(seconds * 1e3, 3), total=float(rows.sum())), a.out)


if __name__ == "__main__":
    main()
