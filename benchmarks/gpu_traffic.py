#!/usr/bin/env python
"""What crosses between the host and the GPU in a ``device_type="cuda"`` round: copies to the device (count and
bytes), copies back (count and bytes) and copies on the device, on ``gpu.py``'s tasks.

The counts are made by the host's code, so they are the same in Numba's CUDA simulator as on a GPU: this script
runs without one (``NUMBA_ENABLE_CUDASIM=1`` and ``--scale`` at a few hundred rows).  Each figure is the difference
between fits of ``--rounds`` and twice as many rounds, over ``--rounds`` (the set-up left out, as gpu.py's
seconds a round).  Compare two checkouts with ``PYTHONPATH=<checkout>/src``.

    NUMBA_ENABLE_CUDASIM=1 python benchmarks/gpu_traffic.py c200_sketch c200_full single --scale 0.003
    NUMBA_ENABLE_CUDASIM=1 python benchmarks/gpu_traffic.py otto --scale 0.02 --rounds 1 --splits-ahead 1 16
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu  # noqa: E402


def count_copies(counts: Counter) -> None:
    """Wrap the device arrays' copies and ``cuda.to_device`` so that each adds its count and bytes."""
    from numba import cuda
    array_class = type(cuda.device_array(1))

    def to_host(original):
        def copy(self, *args, **kwargs):
            counts["to host"] += 1
            counts["bytes to host"] += int(self.nbytes)
            return original(self, *args, **kwargs)
        return copy

    def to_device(original):
        def copy(self, source, *args, **kwargs):
            on_device = hasattr(source, "copy_to_host")
            counts["on device" if on_device else "to device"] += 1
            counts["bytes on device" if on_device else "bytes to device"] += int(source.nbytes)
            return original(self, source, *args, **kwargs)
        return copy

    def new_array(original):
        def upload(source, *args, **kwargs):
            counts["to device"] += 1
            counts["bytes to device"] += int(getattr(source, "nbytes", 0))
            return original(source, *args, **kwargs)
        return upload

    array_class.copy_to_host = to_host(array_class.copy_to_host)
    array_class.copy_to_device = to_device(array_class.copy_to_device)
    cuda.to_device = new_array(cuda.to_device)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tasks", nargs="+", choices=gpu.TASKS, help="otto: leaf-wise, at multigrove's defaults")
    ap.add_argument("--scale", type=float, default=1.0, help="share of each data set's rows")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--splits-ahead", type=int, nargs="+", default=[None], metavar="N", help=gpu.CUDA_SPLITS_AHEAD_HELP)
    ap.add_argument("--label", default="")
    ap.add_argument("--out")
    a = ap.parse_args()
    counts: Counter = Counter()
    count_copies(counts)
    from multigrove.boosting.cuda_builder import CudaBuilder
    for task, fit in gpu.fits_by_splits_ahead(a.tasks, a.splits_ahead, a.scale, os.cpu_count() or 1):
        fit(1)
        counts.clear()
        fit(a.rounds)
        first = Counter(counts)
        counts.clear()
        fit(2 * a.rounds)
        per_round = {key: (counts[key] - first[key]) / a.rounds for key in sorted(set(counts) | set(first))}
        record = {"bench": "gpu_traffic", "task": task, "scale": a.scale, "label": a.label,
                  "splits_ahead": CudaBuilder.splits_ahead, **per_round}
        print(json.dumps(record), flush=True)
        if a.out:
            with open(a.out, "a") as f:
                f.write(json.dumps(record) + "\n")


if __name__ == "__main__":
    main()
