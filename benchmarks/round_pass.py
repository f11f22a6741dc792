#!/usr/bin/env python
"""A loss's round pass against its three passes: the last tree's score update (``add_leaf_values``), the
gradients and Hessians (``sigmoid_grad_hess`` or ``softmax_grad_hess``) and the random projection
(``project_rows``) one after the other, against ``sigmoid_round`` / ``softmax_round`` doing all three in one pass
over the rows.  By default the multi-label log loss at Delicious' shape (12,920 x 983 labels, a projection to 3
columns, 127 leaves); ``--objective multiclass --rows 49502 --outputs 9`` is Otto's.  Milliseconds, median of
``--repeats`` calls, the two interleaved; the kernels compiled (or read from the cache) before the clock.

    python benchmarks/round_pass.py --out benchmarks/results/round_pass.jsonl
    python benchmarks/round_pass.py --objective multiclass --rows 49502 --outputs 9 --out <file>
"""
import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import emit, median_seconds  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--objective", choices=("multilabel", "multiclass"), default="multilabel")
    ap.add_argument("--rows", type=int, default=12_920)
    ap.add_argument("--outputs", type=int, default=983)
    ap.add_argument("--sketch-k", type=int, default=3)
    ap.add_argument("--leaves", type=int, default=127)
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--rounds", type=int, default=3, help="interleaved measurements of both")
    ap.add_argument("--label", default="now")
    ap.add_argument("--out")
    a = ap.parse_args()
    from multigrove.kernels import objective
    from multigrove.kernels.partition import add_leaf_values
    n, L, k = a.rows, a.outputs, a.sketch_k
    rng = np.random.default_rng(0)
    raw = rng.normal(size=(n, L)) - 3.0
    if a.objective == "multiclass":
        labels = rng.integers(0, L, n)
        gradients, round_pass = objective.softmax_grad_hess, objective.softmax_round
    else:
        labels = (rng.random((n, L)) < 0.02).astype(np.float64)
        gradients, round_pass = objective.sigmoid_grad_hess, objective.sigmoid_round
    leaf_of_row = rng.integers(0, a.leaves, n).astype(np.int32)
    leaf_value = rng.normal(scale=1e-3, size=(a.leaves, L))
    rows = np.argsort(leaf_of_row, kind="stable").astype(np.int32)
    start = np.searchsorted(leaf_of_row[rows], np.arange(a.leaves)).astype(np.int64)
    end = np.r_[start[1:], n].astype(np.int64)
    projection_t = rng.normal(size=(k, L)).astype(np.float32)
    stats = np.empty((n, 2 * L + 1), np.float32)
    sketch = np.empty((n, k + 2), np.float32)
    no_cols = np.zeros((1, 1), np.int32)

    def three_passes():
        add_leaf_values(rows, start, end, leaf_value, 0, no_cols, raw)
        gradients(raw, labels, stats[:, :L], stats[:, L:2 * L])
        objective.project_rows(stats, L, projection_t, sketch[:, :k], sketch[:, k:k + 1])

    def one_pass():
        round_pass(raw, labels, leaf_of_row, leaf_value, stats, L, projection_t, sketch)

    three_passes()
    one_pass()
    for rnd in range(a.rounds):
        separate = 1e3 * median_seconds(three_passes, a.repeats)
        fused = 1e3 * median_seconds(one_pass, a.repeats)
        rec = dict(bench="round_pass", label=a.label, objective=a.objective, rows=n, outputs=L, sketch_k=k, round=rnd,
                   three_passes_ms=round(separate, 2), round_pass_ms=round(fused, 2), ratio=round(fused / separate, 3))
        emit(rec, a.out)


if __name__ == "__main__":
    main()
