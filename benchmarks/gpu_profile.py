#!/usr/bin/env python
"""Where a ``device_type="cuda"`` round goes: each shard step and GPU builder call timed with the GPU
synchronised before and after, on ``gpu.py``'s tasks (``otto``: Otto's training rows at multigrove's defaults,
leaf-wise growth: a launch and a histogram copy a split).

After a warm fit, two fits of ``--rounds`` and twice as many rounds: each figure is their difference over
``--rounds``, which leaves out the fits' set-up (binning, the transfer of the binned rows), as ``gpu.py``'s
seconds a round do.  Needs a GPU (or ``NUMBA_ENABLE_CUDASIM=1`` and ``--scale`` at a few hundred rows, as a
check of the script).

    python benchmarks/gpu_profile.py c200_sketch single targets16 otto
    python benchmarks/gpu_profile.py otto --splits-ahead 1 16 --rounds 5
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu  # noqa: E402

from multigrove.boosting import cuda_builder, cuda_histograms, cuda_shard  # noqa: E402

BUILDER_CALLS = ("begin", "_build", "_partition", "leaf_segments", "other_segments", "upload")
# the grower's histogram operations on the device (the scans, with the subtraction; symmetric trees' level steps)
SCAN_CALLS = ("scan", "level_gains", "split_sums", "subtract")
SHARD_STEPS = ("compute_gradients", "column_sq_norms", "gram_product", "set_split_statistics", "draw_rows",
               "leaf_sums", "apply_tree")
# called from inside the shard's steps or the builder's calls (uploads: the small inputs of a launch)
NESTED = ("builder.leaf_segments", "builder.other_segments", "builder.upload")


def time_calls(spent: dict, calls: dict) -> None:
    """Wrap the builder's calls and the training shard's steps so that each adds its synchronised time."""
    from numba import cuda

    def wrap(cls, name, label):
        original = getattr(cls, name)

        def timed(*args, **kwargs):
            cuda.synchronize()
            start = time.perf_counter()
            result = original(*args, **kwargs)
            cuda.synchronize()
            spent[label] += time.perf_counter() - start
            calls[label] += 1
            return result
        setattr(cls, name, timed)

    for name in BUILDER_CALLS:
        wrap(cuda_builder.CudaBuilder, name, "builder." + name)
    for name in SHARD_STEPS:
        wrap(cuda_shard.CudaTrainingShard, name, "shard." + name)
    for name in SCAN_CALLS:
        wrap(cuda_histograms.DeviceHistograms, name, "scans." + name)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tasks", nargs="+", choices=gpu.TASKS)
    ap.add_argument("--scale", type=float, default=1.0, help="share of each data set's rows")
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--splits-ahead", type=int, nargs="+", default=[None], metavar="N", help=gpu.CUDA_SPLITS_AHEAD_HELP)
    a = ap.parse_args()
    spent, calls = defaultdict(float), defaultdict(int)
    time_calls(spent, calls)

    def profiled(fit, rounds: int) -> tuple[dict, dict, float]:
        """(seconds by call, calls by call, wall seconds) of one fit of ``rounds`` rounds."""
        spent.clear()
        calls.clear()
        start = time.perf_counter()
        fit(rounds)
        return dict(spent), dict(calls), time.perf_counter() - start

    for task, fit in gpu.fits_by_splits_ahead(a.tasks, a.splits_ahead, a.scale, os.cpu_count() or 1):
        fit(2)
        # two fits, of r and 2r rounds: the difference leaves out the set-up (binning, transfer), as gpu.py's
        spent_r, calls_r, total_r = profiled(fit, a.rounds)
        spent_2r, calls_2r, total_2r = profiled(fit, 2 * a.rounds)
        per_round = {label: (spent_2r[label] - spent_r.get(label, 0.0)) / a.rounds for label in spent_2r}
        print(f"== {task}, at most {cuda_builder.CudaBuilder.splits_ahead} splits a builder call: "
              f"{a.rounds} and {2 * a.rounds} rounds in {total_r:.3f} and {total_2r:.3f} s (synchronised); "
              f"a round {(total_2r - total_r) / a.rounds * 1e3:.2f} ms")
        for label in sorted(per_round, key=per_round.get, reverse=True):
            n_calls = (calls_2r[label] - calls_r.get(label, 0)) / a.rounds
            print(f"  {label:40s} {per_round[label] * 1e3:8.2f} ms/round  {n_calls:7.1f} calls/round")
        outer = sum(v for k, v in per_round.items() if k not in NESTED)
        print(f"  {'rest (the grower, the host)':40s} {((total_2r - total_r) / a.rounds - outer) * 1e3:8.2f} "
              "ms/round", flush=True)

if __name__ == "__main__":
    main()
