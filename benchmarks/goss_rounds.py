#!/usr/bin/env python
"""GOSS rounds against full rounds, interleaved in one process: single-output regression 500,000 x 50
(../shared/bench data), 255 bins, 32 leaves, lambda_l2 1, 2 threads, top_rate 0.2, other_rate 0.1.

Three runs per repeat, one after the other on the same Dataset: a full round (no sampling), a GOSS round,
and a GOSS round whose sample histograms are built on three statistic columns (gradient, Hessian, count)
instead of the two the builder packs them into (boosting/builder.py: PackedCounts; the packing turned
off by replacing TrainingShard._packed_counts, so the two GOSS runs grow the same trees).  Steady s/round:
the median of the per-round times after GOSS's warm-up (1 / learning_rate full rounds) and two more.

    python benchmarks/goss_rounds.py --repeats 6 --out benchmarks/results/goss_rounds.jsonl
"""
import argparse
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import emit, regression_data  # noqa: E402

WARM = 12  # 10 warm-up rounds of every row, then two more


def steady_s_per_round(mg, params, ds, rounds):
    stamps = []
    mg.train(params, ds, WARM + rounds, callbacks=[lambda env: stamps.append(time.perf_counter())])
    return float(np.median(np.diff(stamps[WARM:])))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-rows", type=int, default=625_000)  # 80 % train: 500,000 rows
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--repeats", type=int, default=6)
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    Xtr, _, ytr, _ = regression_data(a.n_rows)
    import multigrove as mg
    from multigrove.boosting.shard import TrainingShard
    packed_counts = TrainingShard._packed_counts
    base = dict(learning_rate=0.1, num_leaves=32, lambda_l2=1.0, max_bin=255, num_threads=2, verbosity=-1)
    goss = dict(base, data_sample_strategy="goss", top_rate=0.2, other_rate=0.1)
    ds = mg.Dataset(Xtr, ytr)
    mg.train(goss, ds, WARM + 2)  # compile and bin outside the timings
    times = {"full": [], "goss": [], "goss_three_columns": []}
    for repeat in range(a.repeats):
        for run, params in (("full", base), ("goss", goss), ("goss_three_columns", goss)):
            TrainingShard._packed_counts = packed_counts if run != "goss_three_columns" else (lambda self: None)
            times[run].append(steady_s_per_round(mg, params, ds, a.rounds))
        TrainingShard._packed_counts = packed_counts
        emit(dict(bench="goss_rounds", repeat=repeat, n_rows=Xtr.shape[0],
                  **{f"s_per_round_{run}": round(values[-1], 5) for run, values in times.items()}), a.out)

    def ratio(top, bottom):
        r = np.array(times[top]) / np.array(times[bottom])
        return f"{np.median(r):.2f} ({r.min():.2f}-{r.max():.2f})"
    print(f"GOSS / full {ratio('goss', 'full')}; GOSS on three columns / full {ratio('goss_three_columns', 'full')}; "
          f"GOSS / GOSS on three columns {ratio('goss', 'goss_three_columns')} (median, range; {a.repeats} repeats)")


if __name__ == "__main__":
    main()
