#!/usr/bin/env python
"""How many of the bins a split scan walks hold no row of the node: the histograms of every node the grower
scans during ``--rounds`` rounds of a panel set's default model (held-out early stopping off), the share of
bins whose count is 0, and the nodes' median row count.

    python benchmarks/empty_bins.py --sets rf1 atp7d scene otto --rounds 30 --out benchmarks/results/empty_bins.jsonl
"""
import argparse
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import emit  # noqa: E402
from accuracy_panel import load  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", nargs="+", default=["rf1", "atp7d", "scene", "otto"])
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--out")
    a = ap.parse_args()
    import multigrove as mg
    from multigrove.boosting import grower
    evaluate = grower.TreeGrower._evaluate
    seen = {"bins": 0, "empty": 0, "rows": []}

    def counting(self, first, second, mask, subtract, scan_small=True):
        evaluate(self, first, second, mask, subtract, scan_small)
        count_col = self.layout.count_col
        for leaf in (first, second):
            if leaf is not None and leaf.hist is not None:
                counts = leaf.hist[:, count_col]
                seen["bins"] += counts.size
                seen["empty"] += int((counts == 0).sum())
                seen["rows"].append(float(leaf.total[count_col]))

    grower.TreeGrower._evaluate = counting
    for name in a.sets:
        seen.update(bins=0, empty=0, rows=[])
        kind, X, Y, _, _ = load(name)
        model = mg.GroveRegressor if kind == "regression" else mg.GroveClassifier
        model(n_estimators=a.rounds, early_stopping=False).fit(X, Y)
        emit(dict(bench="empty_bins", set=name, rounds=a.rounds, nodes=len(seen["rows"]),
                  empty_share=round(seen["empty"] / max(seen["bins"], 1), 3),
                  median_node_rows=float(np.median(seen["rows"]))), a.out)


if __name__ == "__main__":
    main()
