#!/usr/bin/env python
"""What a second thread shortens in a round: the round split into Python, serial kernels and parallel
regions, at 1 and 2 threads, with the parallel regions entered per round and the time each takes.

Every Numba kernel that multigrove's Python code calls (a module attribute of the package that is a
dispatcher) is wrapped by a clock for the profiled rounds; a kernel compiled with ``parallel=True`` is a
parallel region, and so is a serial kernel that calls one (``split_and_build``: the parallel partition of a
large node and its child's histogram; ``best_splits``: the scan of every feature); serial twins
(``kernels._variants``) are serial kernels.  Python is the rest of the
round: the grower, the builder seam, NumPy calls.  Each thread count runs in a process of its own, after
warm-up rounds (compilation and binning are outside the profile).  By Amdahl's law a part that takes
``t1`` on one thread and ``t2`` on two has a serial share ``2 t2 - t1`` (what a second thread does not
shorten); the table gives it per part and for the round.

    python benchmarks/round_profile.py --task otto --repeats 3 --out benchmarks/results/round_profile.jsonl
    python benchmarks/round_profile.py --task regression_1m --repeats 3 --out benchmarks/results/round_profile.jsonl
    python benchmarks/round_profile.py --task rf1 --repeats 3 --out benchmarks/results/round_profile.jsonl

Tasks: ``otto`` -- ``GroveClassifier()`` defaults on the 61,878 Otto rows (no early stopping: a fixed number of
rounds); ``regression_1m`` -- one output, 1,000,000 x 50 of the shared harness, 255 bins, 32 leaves, lambda 1
(issue 17's setting); ``rf1`` -- ``GroveRegressor()`` defaults on the accuracy panel's rf1 training rows (6,843 x
64, 8 targets, ``MULTIGROVE_DATA``), a dense store whose splits build their children by feature groups; ``scm20d``
-- the same on scm20d's training rows. The clock wrapper costs about a microsecond a call: the unprofiled seconds
per round are given too, as the median round and as the quiet rounds (QUIET_PERCENTILE), the speed-up of which is
the code's on a shared machine.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import SPLITS_AHEAD_HELP, RoundTimer, emit, regression_data, set_splits_ahead  # noqa: E402

#: parallel regions are counted by the time they take on their thread count, in these bounds (microseconds)
REGION_BUCKETS_US = (10, 50, 200, 1000)
#: the "quiet" round: this percentile of a run's unprofiled rounds.  On this shared 2-core VM another tenant's
#: load slows whole stretches of rounds (a run's median at two threads ranged from 30 to 56 ms on Otto within
#: minutes, stop 63), and the faster rounds of a run are the ones it left alone: their speed-up between thread
#: counts is the code's, where the medians' mixes the code with the load of the moment
QUIET_PERCENTILE = 10


def enters_regions(kernel, seen: frozenset = frozenset()) -> bool:
    """Whether a kernel is compiled with parallel=True or calls (through its globals) one that enters them."""
    from numba.core.dispatcher import Dispatcher
    if kernel.targetoptions.get("parallel"):
        return True
    func = kernel.py_func
    for name in func.__code__.co_names:
        callee = func.__globals__.get(name)
        if isinstance(callee, Dispatcher) and id(callee) not in seen and enters_regions(callee, seen | {id(kernel)}):
            return True
    return False


class KernelClock:
    """Wraps the package's kernels by timing closures while ``active``."""

    def __init__(self):
        self.active = False
        self.seconds: dict[tuple[str, bool], float] = defaultdict(float)
        self.calls: dict[tuple[str, bool], int] = defaultdict(int)
        self.region_seconds: list[float] = []

    def _timed(self, name: str, kernel, parallel: bool):
        key = (name, parallel)

        def timed(*args, **kwargs):
            if not self.active:
                return kernel(*args, **kwargs)
            start = time.perf_counter()
            result = kernel(*args, **kwargs)
            elapsed = time.perf_counter() - start
            self.seconds[key] += elapsed
            self.calls[key] += 1
            if parallel:
                self.region_seconds.append(elapsed)
            return result

        timed.kernel = kernel
        return timed

    def install(self) -> int:
        """Replace every dispatcher attribute of the loaded multigrove modules, and every dispatcher held in a
        module-level dict, alone or in a NamedTuple (the serial variants by store and width:
        kernels.partition.SERIAL_SPLITS and kernels.histogram.SERIAL_HISTOGRAMS, which the builder looks up per
        split; kernels.split.SCAN_KERNELS and kernels.split_step.SPLIT_STEPS by kind of scan; left unwrapped,
        their time was counted as Python), and every tuple of dispatchers a package class holds (a loss's round_pass);
        the number of kernels replaced."""
        from numba.core.dispatcher import Dispatcher
        modules = [module for module_name, module in list(sys.modules.items())
                   if module_name.startswith("multigrove") and module is not None]
        found = [(vars(module), attr, value) for module in modules
                 for attr, value in list(vars(module).items()) if isinstance(value, Dispatcher)]
        tables = [table for module in modules for table in list(vars(module).values()) if isinstance(table, dict)]
        found += [(table, key, value) for table in tables for key, value in list(table.items())
                  if isinstance(value, Dispatcher)]
        # kernels.split.SCAN_KERNELS: NamedTuples of dispatchers, by kind of scan
        bundles = [(table, key, value) for table in tables for key, value in list(table.items())
                   if isinstance(value, tuple) and hasattr(value, "_replace")
                   and any(isinstance(item, Dispatcher) for item in value)]
        # class attributes holding a tuple of dispatchers (a loss's round_pass: its parallel and serial one-pass
        # kernels of the gradients, kernels.objective.round_rows); left unwrapped, Otto's 3-4 ms a round of that
        # parallel region were counted as Python
        classes = {id(cls): cls for module in modules for cls in list(vars(module).values())
                   if isinstance(cls, type) and cls.__module__.startswith("multigrove")}
        held = [(cls, attr, value) for cls in classes.values() for attr, value in list(vars(cls).items())
                if type(value) is tuple and any(isinstance(item, Dispatcher) for item in value)]
        kernels = [kernel for _, _, kernel in found] + [item for _, _, bundle in bundles for item in bundle
                                                        if isinstance(item, Dispatcher)]
        kernels += [item for _, _, value in held for item in value if isinstance(item, Dispatcher)]
        # which kernels enter parallel regions, read from their globals before any is replaced
        parallel = {id(kernel): enters_regions(kernel) for kernel in kernels}
        wrapped: dict[int, object] = {}
        for kernel in kernels:
            if id(kernel) not in wrapped:
                wrapped[id(kernel)] = self._timed(kernel.py_func.__name__, kernel, parallel[id(kernel)])
        for namespace, key, kernel in found:
            namespace[key] = wrapped[id(kernel)]
        for table, key, bundle in bundles:
            table[key] = bundle._replace(**{name: wrapped[id(item)] for name, item in bundle._asdict().items()
                                            if isinstance(item, Dispatcher)})
        for cls, attr, value in held:
            setattr(cls, attr, tuple(wrapped[id(item)] if isinstance(item, Dispatcher) else item for item in value))
        return len(wrapped)


def _otto(n_rounds: int, threads: int, callback, params: dict):
    import multigrove as mg
    from multigrove.datasets import load_otto
    X, y = load_otto()
    clf = mg.GroveClassifier(n_estimators=n_rounds, early_stopping=False, num_threads=threads, verbosity=-1,
                             **params)
    clf.fit(X, y, callbacks=[callback])


def _regression(n_rounds: int, threads: int, callback, params: dict):
    import multigrove as mg
    Xtr, _, ytr, _ = regression_data(1_250_000)  # the harness's 80 % train: 1,000,000 rows
    settings = dict(learning_rate=0.1, num_leaves=32, lambda_l2=1.0, max_bin=255, num_threads=threads,
                    verbosity=-1, **params)
    mg.train(settings, mg.Dataset(Xtr, ytr), n_rounds, callbacks=[callback])


def _panel_regressor(name: str):
    """The task of ``GroveRegressor()`` defaults on the accuracy panel's training rows of ``name``."""
    def fit(n_rounds: int, threads: int, callback, params: dict):
        from accuracy_panel import load

        import multigrove as mg
        _, Xtr, Ytr, _, _ = load(name)
        mg.GroveRegressor(n_estimators=n_rounds, early_stopping=False, num_threads=threads,
                          verbosity=-1, **params).fit(Xtr, Ytr, callbacks=[callback])
    return fit


TASKS = {"otto": _otto, "regression_1m": _regression, "rf1": _panel_regressor("rf1"),
         "scm20d": _panel_regressor("scm20d")}


def worker(task: str, threads: int, warm: int, rounds: int, params: dict, splits_ahead: int | None = None) -> dict:
    """Train warm + rounds rounds twice in this process: the first run unprofiled (seconds per round, and
    everything compiled), the second with the kernels clocked from round ``warm`` on."""
    import numba
    numba.set_num_threads(threads)
    set_splits_ahead(splits_ahead)
    clock = KernelClock()
    plain = RoundTimer()
    TASKS[task](warm + rounds, threads, plain, params)
    intervals = np.diff(plain.ts[warm:])
    unprofiled = float(np.median(intervals))
    quiet = float(np.percentile(intervals, QUIET_PERCENTILE))
    n_wrapped = clock.install()
    profiled_stamps: list[float] = []

    def profiled(env):
        profiled_stamps.append(time.perf_counter())
        clock.active = env.iteration >= warm - 1

    TASKS[task](warm + rounds, threads, profiled, params)
    clock.active = False
    round_s = (profiled_stamps[-1] - profiled_stamps[warm - 1]) / rounds
    parallel_s = sum(s for (_, par), s in clock.seconds.items() if par) / rounds
    serial_s = sum(s for (_, par), s in clock.seconds.items() if not par) / rounds
    regions = np.asarray(clock.region_seconds) * 1e6
    edges = (0,) + REGION_BUCKETS_US + (np.inf,)
    buckets = [int(((regions >= lo) & (regions < hi)).sum()) / rounds for lo, hi in zip(edges[:-1], edges[1:])]
    kernels = sorted(({"kernel": name, "parallel": par, "ms_per_round": 1e3 * s / rounds,
                       "calls_per_round": clock.calls[(name, par)] / rounds}
                      for (name, par), s in clock.seconds.items()), key=lambda k: -k["ms_per_round"])
    return {"task": task, "threads": threads, "rounds": rounds, "kernels_wrapped": n_wrapped,
            "splits_ahead": splits_ahead,
            "s_per_round_unprofiled": unprofiled, "s_per_round_quiet": quiet, "s_per_round": round_s,
            "python_s": round_s - parallel_s - serial_s, "serial_kernels_s": serial_s, "parallel_s": parallel_s,
            "regions_per_round": regions.size / rounds, "region_buckets_per_round": buckets,
            "kernels": kernels}


def _share_table(one: dict, two: dict) -> None:
    t1 = one["s_per_round"]
    print(f"\n{one['task']}: 1 thread {1e3 * t1:.1f} ms/round profiled ({1e3 * one['s_per_round_unprofiled']:.1f} "
          f"unprofiled, {1e3 * one['s_per_round_quiet']:.1f} quiet); 2 threads {1e3 * two['s_per_round']:.1f} "
          f"({1e3 * two['s_per_round_unprofiled']:.1f}, {1e3 * two['s_per_round_quiet']:.1f}); speed-up "
          f"{one['s_per_round_unprofiled'] / two['s_per_round_unprofiled']:.2f}x unprofiled, "
          f"{one['s_per_round_quiet'] / two['s_per_round_quiet']:.2f}x quiet")
    print("| part | 1 thread ms | 2 threads ms | serial (2 t2 - t1) ms | share of the 1-thread round |")
    print("|---|---|---|---|---|")
    for part, key in (("Python", "python_s"), ("serial kernels", "serial_kernels_s"),
                      ("parallel regions", "parallel_s"), ("round", "s_per_round")):
        a, b = one[key], two[key]
        serial = max(0.0, 2 * b - a)
        print(f"| {part} | {1e3 * a:.2f} | {1e3 * b:.2f} | {1e3 * serial:.2f} | {serial / t1:.0%} |")
    labels = [f"< {REGION_BUCKETS_US[0]}"] + [f"{lo}-{hi}" for lo, hi in zip(REGION_BUCKETS_US[:-1],
                                                                           REGION_BUCKETS_US[1:])]
    labels.append(f">= {REGION_BUCKETS_US[-1]}")
    for run in (one, two):
        counts = ", ".join(f"{label} us: {n:.1f}" for label, n in zip(labels, run["region_buckets_per_round"]))
        print(f"parallel regions a round at {run['threads']} thread(s): {run['regions_per_round']:.1f} ({counts})")
    print("| kernel | parallel | 1 thread ms/round | calls | 2 threads ms/round | calls |")
    print("|---|---|---|---|---|---|")
    none = {"ms_per_round": 0.0, "calls_per_round": 0}
    by_one = {(k["kernel"], k["parallel"]): k for k in one["kernels"]}
    by_two = {(k["kernel"], k["parallel"]): k for k in two["kernels"]}
    for key in sorted(by_one.keys() | by_two.keys(), key=lambda key: -by_one.get(key, none)["ms_per_round"]
                      - by_two.get(key, none)["ms_per_round"])[:16]:
        a, b = by_one.get(key, none), by_two.get(key, none)
        print(f"| {key[0]} | {'yes' if key[1] else ''} | {a['ms_per_round']:.2f} | {a['calls_per_round']:.1f} | "
              f"{b['ms_per_round']:.2f} | {b['calls_per_round']:.1f} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--task", choices=sorted(TASKS), default="otto")
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--warm", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--label", default="mg")
    ap.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                    help="a training parameter on top of the task's (VALUE a JSON literal, else a string); "
                         "repeatable, and kept in the records")
    ap.add_argument("--splits-ahead", type=int, help=SPLITS_AHEAD_HELP)
    ap.add_argument("--out")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    params = dict(_parse_param(text) for text in a.param)
    if a.worker:
        print(json.dumps(worker(a.task, a.threads[0], a.warm, a.rounds, params, a.splits_ahead)))
        return
    pairs = []
    for repeat in range(a.repeats):  # the thread counts interleaved, repeat after repeat
        runs = {}
        for threads in a.threads:
            cmd = [sys.executable, __file__, "--worker", "--task", a.task, "--threads", str(threads),
                   "--warm", str(a.warm), "--rounds", str(a.rounds)] + [f"--param={text}" for text in a.param] \
                + ([] if a.splits_ahead is None else ["--splits-ahead", str(a.splits_ahead)])
            out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
            runs[threads] = {**json.loads(out.strip().splitlines()[-1]), "label": a.label, "repeat": repeat,
                             "params": params}
            emit(runs[threads], a.out)
        if 1 in runs and 2 in runs:
            pairs.append((serial_share(runs[1], runs[2]), runs[1], runs[2]))
    if pairs:
        pairs.sort(key=lambda pair: pair[0])
        shares = ", ".join(f"{share:.0%}" for share, _, _ in pairs)
        quiet = ", ".join(f"{serial_share(one, two, 's_per_round_quiet'):.0%}" for _, one, two in pairs)
        print(f"\nserial share of a 1-thread round (2 t2 - t1) / t1, profiled, each repeat: {shares}; "
              f"unprofiled, the quiet rounds (percentile {QUIET_PERCENTILE}) of the same repeats: {quiet}; "
              "the median repeat:")
        _share_table(*pairs[len(pairs) // 2][1:])


def _parse_param(text: str) -> tuple[str, object]:
    """NAME=VALUE of --param: VALUE read as a JSON literal (0.8, true, "gbdt"), else kept as a string."""
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise SystemExit(f"--param expects NAME=VALUE, got {text!r}")
    try:
        return name, json.loads(value)
    except json.JSONDecodeError:
        return name, value


def serial_share(one: dict, two: dict, key: str = "s_per_round") -> float:
    """What a second thread does not shorten, as a share of the 1-thread round (Amdahl), from the seconds a
    round under ``key`` (profiled, unprofiled or the quiet rounds')."""
    return max(0.0, 2 * two[key] - one[key]) / one[key]

if __name__ == "__main__":
    main()
