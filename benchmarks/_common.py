"""Shared helpers for the benchmark scripts: locating the shared harness and data, timing."""
from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def shared_dir() -> Path:
    """../shared next to the checkout (override with MULTIGROVE_SHARED)."""
    env = os.environ.get("MULTIGROVE_SHARED")
    cands = [Path(env)] if env else []
    cands += [ROOT.parent / "shared", ROOT.parent.parent / "shared"]
    for c in cands:
        if (c / "bench" / "peers.py").exists():
            return c
    sys.exit("benchmarks need ../shared/bench/peers.py (set MULTIGROVE_SHARED to the shared folder)")


def import_peers():
    sys.path.insert(0, str(shared_dir() / "bench"))
    import peers  # the shared harness: same synthetic data, same metrics as the peers
    return peers


def regression_data(n_rows: int, n_outputs: int = 1):
    """The shared harness's synthetic regression set of n_rows x 50 (its 80 / 20 split, seed 0, cached in
    /tmp/peers_cache): (X_train, X_test, y_train, y_test) as the harness returns them."""
    import argparse
    spec = argparse.Namespace(task="regression", n_rows=n_rows, n_features=50, n_outputs=n_outputs, seed=0,
                              cache_dir="/tmp/peers_cache")
    Xtr, Xte, ytr, yte, _ = import_peers().get_data(spec)
    return Xtr, Xte, ytr, yte


def above_median(y_train, *others):
    """The benchmarks' binary task from a regression target: each of y_train, *others above y_train's median,
    as 0/1 float64 (raveled)."""
    import numpy as np
    cut = np.median(y_train)
    return tuple((np.ravel(y) > cut).astype(np.float64) for y in (y_train, *others))


def maxrss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


class RoundTimer:
    """A training callback recording the wall time at the end of every round."""

    def __init__(self):
        self.t0 = time.perf_counter()
        self.ts: list[float] = []

    def __call__(self, env) -> None:
        self.ts.append(time.perf_counter())

    def steady(self) -> float | None:
        import numpy as np
        return float(np.median(np.diff(self.ts))) if len(self.ts) >= 3 else None


def thread_cpu_seconds() -> dict[int, float]:
    """CPU seconds each thread of this process has run, by thread id (Linux): from the scheduler's nanosecond
    count (/proc/self/task/<tid>/schedstat, its first field) where the kernel keeps it, else user plus system
    time in clock ticks (stat; 10 ms steps).  Time a thread waited for a core, to another process or a
    neighbour on the host, is not in it."""
    tick = os.sysconf("SC_CLK_TCK")
    seconds = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/schedstat") as schedstat:
                seconds[int(tid)] = int(schedstat.read().split()[0]) / 1e9
            continue
        except (OSError, ValueError, IndexError):
            pass
        try:
            with open(f"/proc/self/task/{tid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:  # the thread ended since the listing
            continue
        seconds[int(tid)] = (int(fields[11]) + int(fields[12])) / tick
    return seconds


def median_seconds(call, repeats: int) -> float:
    """The median wall seconds of ``repeats`` calls of ``call()`` (compile or warm it up before)."""
    import numpy as np
    times = np.empty(repeats)
    for i in range(repeats):
        start = time.perf_counter()
        call()
        times[i] = time.perf_counter() - start
    return float(np.median(times))


def emit(rec: dict, out: str | None) -> None:
    line = json.dumps(rec)
    print(line, flush=True)
    if out:
        with open(out, "a") as f:
            f.write(line + "\n")


def print_time_ratio(label: str, what: str, seconds: dict) -> None:
    """One line: multigrove / LightGBM of ``what`` time over interleaved repeats (median and range), and each
    system's seconds; ``seconds`` maps "multigrove" and "lightgbm" to a list of seconds each."""
    import numpy as np
    ratio = np.array(seconds["multigrove"]) / np.array(seconds["lightgbm"])
    print(f"{label}: multigrove / LightGBM {what} time: median {np.median(ratio):.2f} "
          f"(range {ratio.min():.2f}-{ratio.max():.2f}), {ratio.size} repeats; multigrove "
          f"{min(seconds['multigrove']):.3f}-{max(seconds['multigrove']):.3f} s, LightGBM "
          f"{min(seconds['lightgbm']):.3f}-{max(seconds['lightgbm']):.3f} s")


def run_worker(args: list[str], timeout: float | None = None) -> tuple[dict | None, str]:
    """Run `python <args>` in a fresh process and return (the last JSON object it printed, "") or
    (None, why it gave none): each system is measured in its own process (own peak RSS, no
    interference between peers' thread pools)."""
    try:
        res = subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, f"no result within {timeout:.0f} s"
    line = next((ln for ln in reversed(res.stdout.splitlines()) if ln.startswith("{")), None)
    if line is None:
        return None, res.stderr[-2000:] or f"exit {res.returncode}"
    return json.loads(line), ""


SPLITS_AHEAD_HELP = ("the local builder's batches of splits (LocalBuilder.splits_ahead; default: one split a thread "
                     "from builder.BATCH_MIN_THREADS threads on): 1 grows one split at a time, each in kernels of its "
                     "own, as before stop 65; N > 1 batches N")


BATCH_GROUPS_HELP = ("batches whose splits differ in size shared out by feature groups (on, the default: "
                     "builder.BATCH_GROUP_EXTRA_WORK), or every batch a split a task (off)")


def set_splits_ahead(splits_ahead: int | None) -> None:
    """``--splits-ahead``: the local builder's batches of splits (LocalBuilder.splits_ahead) set in this process, for
    an A/B of the batches (SPLITS_AHEAD_HELP); None leaves the default."""
    if splits_ahead is not None:
        from multigrove.boosting.builder import LocalBuilder
        LocalBuilder.splits_ahead = splits_ahead
