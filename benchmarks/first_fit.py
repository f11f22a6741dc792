#!/usr/bin/env python
"""A new user's first fit: a fresh process whose Numba cache is an empty folder, the import included.

Cases (issue 46): ``GroveRegressor().fit`` on 2,000 x 10 (pure defaults: 5-fold cross-validation picks the
rounds), ``GroveClassifier().fit`` on the same rows with 3 classes, ``mg.train`` for 3 rounds of regression,
and the first round of a fresh 2-worker Dask ``LocalCluster`` (``--dask``; the client, the cluster and the
workers' import in the clock).  Each case runs in its own process with ``NUMBA_CACHE_DIR`` pointing at a new
empty folder (``--cache warm``: a folder that ``python -m multigrove compile`` filled first, the warm-up a
Dockerfile or CI step runs; ``--cache second``: the same process run again on the cache the first run left).
LightGBM's first fit of the same data in a fresh process is the reference (``--lightgbm``).

    python benchmarks/first_fit.py --repeats 2 --out benchmarks/results/first_fit.jsonl
    python benchmarks/first_fit.py --cache warm --repeats 2 --out benchmarks/results/first_fit.jsonl
    PYTHONPATH=<older checkout>/src python benchmarks/first_fit.py --label before ...
    python benchmarks/first_fit.py --cases regressor classifier --compile-profile   # where compilation goes
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import emit  # noqa: E402

CASES = {
    "regressor": """
import numpy as np
import multigrove as mg
X, y = DATA
mg.GroveRegressor().fit(X, y)
""",
    "classifier": """
import numpy as np
import multigrove as mg
X, y = DATA
mg.GroveClassifier().fit(X, (y > 0).astype(int) + (X[:, 1] > 0))
""",
    "train_3_rounds": """
import numpy as np
import multigrove as mg
X, y = DATA
mg.train({"objective": "regression", "verbosity": -1}, mg.Dataset(X, y), 3)
""",
    "dask_first_round": """
import numpy as np
import dask.array as da
from dask.distributed import Client, LocalCluster
import multigrove.dask as mgd
X, y = DATA
with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \\
        Client(cluster) as client:
    mgd.train(client, {"objective": "regression", "verbosity": -1},
              da.from_array(X, chunks=(1000, 10)), da.from_array(y, chunks=1000), num_boost_round=1)
""",
    "lightgbm": """
import numpy as np
import lightgbm as lgb
X, y = DATA
lgb.LGBMRegressor(verbose=-1).fit(X, y)
""",
}
DATA = ("(lambda rng: (lambda X: (X, X[:, 0] + rng.normal(size=2000)))(rng.normal(size=(2000, 10))))"
        "(np.random.default_rng(0))")


#: --compile-profile: a listener on Numba's compile events in the case's process, summing the thread CPU seconds
#: of each compile that no other compile encloses (a kernel with the callees compiled for it) by kernel
COMPILE_LISTENER = """
from numba.core import event as _event
_compiles, _open = {}, []
class _Listener(_event.Listener):
    def on_start(self, ev):
        _open.append((ev.data["dispatcher"].py_func.__qualname__, time.thread_time()))
    def on_end(self, ev):
        name, started = _open.pop()
        if not _open:
            _compiles[name] = _compiles.get(name, 0.0) + time.thread_time() - started
_event.register("numba:compile", _Listener())
"""
COMPILE_REPORT = "\nfor _name, _s in _compiles.items():\n    print('COMPILE', _name, _s)\n"


def run_case(case: str, cache_dir: str, profile: bool = False) -> tuple[float, dict]:
    """Seconds of one fresh process running the case (the interpreter's own start excluded: the clock starts
    at the script's first line, before any import), and with ``profile`` the compile CPU seconds by kernel."""
    code = "import time\n_t0 = time.perf_counter()\n" + (COMPILE_LISTENER if profile else "") + \
        CASES[case].replace("DATA", DATA) + "\nprint('SECONDS', time.perf_counter() - _t0)\n" + \
        (COMPILE_REPORT if profile else "")
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=1800)
    lines = [line for line in out.stdout.splitlines() if line.startswith("SECONDS")]
    if out.returncode or not lines:
        raise SystemExit(f"{case} failed:\n{out.stderr[-3000:]}")
    compiles = {line.split()[1]: float(line.split()[2]) for line in out.stdout.splitlines()
                if line.startswith("COMPILE ")}
    return float(lines[-1].split()[1]), compiles


def warm_cache(cache_dir: str) -> float:
    """Fill cache_dir with `python -m multigrove compile`; its seconds."""
    started = time.perf_counter()
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    subprocess.run([sys.executable, "-m", "multigrove", "compile"], env=env, check=True, timeout=3600,
                   stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", nargs="+", default=["regressor", "classifier", "train_3_rounds"], choices=list(CASES))
    ap.add_argument("--dask", action="store_true", help="add the Dask case")
    ap.add_argument("--lightgbm", action="store_true", help="add LightGBM's first fit")
    ap.add_argument("--cache", choices=("empty", "warm", "second"), default="empty")
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--compile-profile", action="store_true",
                    help="also record the compile CPU seconds of the case's kernels (its own process only)")
    ap.add_argument("--label", default="")
    ap.add_argument("--out")
    a = ap.parse_args()
    cases = list(a.cases) + (["dask_first_round"] if a.dask else []) + (["lightgbm"] if a.lightgbm else [])
    for repeat in range(a.repeats):
        with tempfile.TemporaryDirectory(prefix="numba-warm-") as warm_dir:
            warm_s = warm_cache(warm_dir) if a.cache == "warm" else None
            for case in cases:
                with tempfile.TemporaryDirectory(prefix="numba-cache-") as empty_dir:
                    cache_dir = warm_dir if a.cache == "warm" else empty_dir
                    seconds, compiles = run_case(case, cache_dir, a.compile_profile)
                    second = run_case(case, cache_dir)[0] if a.cache == "second" else None
                rec = {"bench": "first_fit", "case": case, "cache": a.cache, "repeat": repeat,
                       "seconds": round(seconds, 2), "label": a.label}
                if warm_s is not None:
                    rec["warmup_s"] = round(warm_s, 1)
                if second is not None:
                    rec["second_s"] = round(second, 2)
                if a.compile_profile:
                    rec["compile_cpu_s"] = round(sum(compiles.values()), 2)
                    rec["compile_cpu_s_by_kernel"] = {name: round(v, 2) for name, v in
                                                      sorted(compiles.items(), key=lambda kv: -kv[1])}
                emit(rec, a.out)

if __name__ == "__main__":
    main()
