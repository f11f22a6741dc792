#!/usr/bin/env python
"""A node's histogram by feature groups against the serial kernel, on one thread: what 16 threads would share.

``build_histogram_features`` gives each of G feature groups all of a node's rows, and each group adds the
bins its features own.  Run on one thread, its time over G is what each of G threads would take, fork/join
aside: the figure that decides whether small and middle nodes gain from many threads, measured here on a
2-core host (issue 43).  Two stores: Otto's (4 dense features and 89 in a CSR part, 17 entries a row) and a
dense 20,000 x 61 one; statistics 5 columns wide (the default sketch: 3 gradient columns, a Hessian and a
count) and 3 (one output).  Nodes are random row subsets; median of ``--repeats`` calls after a warm-up
for the serial kernel, then for each number of groups (whose histogram must equal the serial one bit for bit).
Where the groups index a CSR part (histogram.FeatureGroups.entry_start), the same groups walking each row's
entries instead are timed too (``groups_G_walk_us``): the index's worth.

    python benchmarks/feature_groups.py --out benchmarks/results/feature_groups.jsonl
    PYTHONPATH=<older checkout>/src python benchmarks/feature_groups.py --label before ...
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

NODE_ROWS = (500, 2_000, 8_000)
GROUPS = (1, 2, 4, 8, 16)


def stores() -> dict:
    """name -> BinnedStore of the two stores named in the module docstring (Otto's when its data loads)."""
    import multigrove as mg
    from multigrove.params import Params
    rng = np.random.default_rng(0)
    out = {}
    try:
        from multigrove.datasets import load_otto
        X, y = load_otto()
        out["otto"] = mg.Dataset(X, y).construct(Params(objective="multiclass", num_class=9), n_outputs=9).store
    except (OSError, ValueError) as err:  # the Otto file is not on this machine
        print(f"otto skipped: {err}", file=sys.stderr)
    X = rng.normal(size=(20_000, 61))
    out["dense_20k_x_61"] = mg.Dataset(X, rng.normal(size=20_000)).construct(Params(objective="regression")).store
    return out


def median_us(repeats: int, kernel, *args) -> float:
    """Median microseconds of kernel(*args) over ``repeats`` calls after one."""
    kernel(*args)
    seconds = []
    for _ in range(repeats):
        started = time.perf_counter()
        kernel(*args)
        seconds.append(time.perf_counter() - started)
    return round(1e6 * float(np.median(seconds)), 1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=30)
    ap.add_argument("--label", default="")
    ap.add_argument("--out")
    args = ap.parse_args()
    import numba

    from multigrove.boosting.builder import feature_groups
    from multigrove.kernels.histogram import build_histogram_features, serial_histogram_kernel
    from multigrove.kernels.store import dense_only
    numba.set_num_threads(1)
    rng = np.random.default_rng(1)
    for name, store in stores().items():
        for width in (5, 3):
            serial_kernel = serial_histogram_kernel(dense_only(store), width)
            stats = rng.normal(size=(store.n_rows, width)).astype(np.float32)
            out, expect = np.empty((store.total_bins, width)), np.empty((store.total_bins, width))
            total, expect_total = np.empty(width), np.empty(width)
            for n_rows in NODE_ROWS:
                rows = np.sort(rng.choice(store.n_rows, n_rows, replace=False)).astype(np.int32)
                serial_kernel(store, rows, stats, expect, expect_total)
                rec = {"bench": "feature_groups", "label": args.label, "store": name, "width": width, "rows": n_rows,
                       "serial_us": median_us(args.repeats, serial_kernel, store, rows, stats, expect, expect_total)}
                for n_groups in GROUPS:
                    groups = feature_groups(store, n_groups)
                    build_histogram_features(store, rows, stats, groups, out, total)
                    if not np.array_equal(out, expect):
                        raise AssertionError(f"{name}: {n_groups} groups differ from the serial kernel")
                    used = median_us(args.repeats, build_histogram_features, store, rows, stats, groups, out, total)
                    rec[f"groups_{n_groups}_us"] = used
                    rec[f"groups_{n_groups}_per_group_over_serial"] = round(
                        used / groups.n_groups / rec["serial_us"], 3)
                    if groups.entry_start.shape[0] > 0:
                        walking = groups._replace(entry_start=groups.entry_start[:0])
                        rec[f"groups_{n_groups}_walk_us"] = median_us(args.repeats, build_histogram_features, store,
                                                                      rows, stats, walking, out, total)
                emit(rec, args.out)


if __name__ == "__main__":
    main()
