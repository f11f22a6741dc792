"""Training time and peak memory of one label tree against the solver's state budget
(``multigrove.xmc.linear.STATE_BUDGET_BYTES``), on the synthetic set of ``benchmarks/xmc.py``.

Each budget runs in its own process (peak RSS is per process).  Reported: resident memory after the
data is made, peak RSS over fit + predict (sampled every 10 ms), fit seconds, and a checksum of the
predicted top labels (the budget must not change the model).  Run once before, so Numba's cache is warm.

    python benchmarks/xmc_solver_budget.py --budgets 512 256 128 --rows 125000
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time

from _common import emit, run_worker


def _rss_mb() -> float:
    """Current resident memory (not ru_maxrss: the peak here is over fit + predict, after the data)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def worker(budget_mib: int, rows: int, loss: str) -> dict:
    from multigrove import datasets
    from multigrove.xmc import LabelTreeClassifier, linear
    linear.STATE_BUDGET_BYTES = budget_mib * 2**20  # read by chunk_size when it is given no budget
    peak = [0.0]

    def sample():
        while True:
            peak[0] = max(peak[0], _rss_mb())
            time.sleep(0.01)

    threading.Thread(target=sample, daemon=True).start()
    X, Y = datasets.make_extreme_multilabel(n_rows=rows, n_features=50_000, n_labels=20_000, seed=0)
    cut = int(0.8 * rows)
    base = _rss_mb()
    peak[0] = base
    t = time.perf_counter()
    model = LabelTreeClassifier(loss=loss, n_trees=1).fit(X[:cut], Y[:cut])
    fit_s = time.perf_counter() - t
    idx, _ = model.predict(X[cut:], top_k=5)
    return {"budget_mib": budget_mib, "loss": loss, "rows": rows, "rss_after_data_mb": round(base),
            "peak_rss_mb": round(peak[0]), "fit_s": round(fit_s, 1), "top1_checksum": int(idx[:, 0].sum())}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--budgets", type=int, nargs="+", default=[512, 256, 128], help="MiB")
    ap.add_argument("--rows", type=int, default=125_000)
    ap.add_argument("--loss", default="squared_hinge")
    ap.add_argument("--worker", type=int, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker is not None:
        print(json.dumps(worker(a.worker, a.rows, a.loss)), flush=True)
        return
    for b in a.budgets:
        rec, why = run_worker([__file__, "--worker", str(b), "--rows", str(a.rows), "--loss", a.loss])
        if rec is None:
            sys.exit(f"budget {b} MiB gave no result: {why}")
        emit(rec, None)


if __name__ == "__main__":
    main()
