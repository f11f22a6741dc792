"""A cached kernel that calls a parallel kernel is compiled with parallel=True (kernels._variants.PARALLEL_CALLER).

Compiled serially, such a kernel crashed the interpreter when a process read it from the cache after another
process had compiled it while reading its parallel callee from the cache (Numba issues 4807 and 8578).  The
first test replays that sequence in three processes over an empty cache; the second checks the rule on every
kernel of the package (a parallel kernel reached through a kernel inlined into the caller counts too)."""
import importlib
import os
import pkgutil
import subprocess
import sys
import textwrap

import pytest
from numba.core.registry import CPUDispatcher

import multigrove

PROGRAM = textwrap.dedent("""
    import sys
    import numpy as np
    from multigrove.kernels.split import SCAN_KERNELS, FeatureSplits, NodeSplits, ScanParams, scan_scratch
    rng = np.random.default_rng(0)
    offsets = np.array([0, 8, 12, 19, 40], np.int64)
    hist = rng.uniform(0.0, 1.0, (40, 5))
    hist[:, 4] = rng.integers(0, 30, 40)
    params = ScanParams(k=3, h_col=3, h_stride=0, h_scale=1.0, count_col=4, lambda_l2=1.0, min_data_in_leaf=5,
                        min_sum_hessian=1e-3, min_gain_to_split=0.0, topk=0, restricted=False)
    totals = np.array([hist[:8].sum(0), hist[:8].sum(0)])
    per_feature, best = FeatureSplits.allocate(2, 4), NodeSplits.allocate(2, 5)
    kernels = SCAN_KERNELS["shared"]
    if sys.argv[1] == "callee":
        kernels.per_feature(hist, hist.copy(), False, np.ones(2, np.bool_), totals, offsets, np.ones(4, np.bool_),
                            params, None, scan_scratch(5, params), per_feature)
        print(per_feature.gain[0, 0])
    else:
        kernels.best_splits(hist, hist.copy(), 2, False, totals, offsets, np.ones(4, np.bool_), params, None,
                            scan_scratch(5, params), np.ones(2, np.bool_), np.zeros((2, 4)), per_feature, best)
        print(best.gain[0])
""")


@pytest.mark.skipif(os.environ.get("NUMBA_DISABLE_JIT") == "1", reason="the crash is in Numba's cache")
def test_a_caller_compiled_over_a_cached_callee_loads_from_the_cache(tmp_path):
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    script = tmp_path / "scan.py"
    script.write_text(PROGRAM)
    outputs = []
    for step in ("callee", "caller", "caller"):  # the callee alone; the caller over it; the caller from the cache
        done = subprocess.run([sys.executable, str(script), step], env=env, capture_output=True, text=True,
                              timeout=600)
        assert done.returncode == 0, (step, done.returncode, done.stderr[-2000:])
        outputs.append(float(done.stdout.split()[-1]))
    assert outputs[1] == outputs[2] > 0


def _kernels():
    """Every Numba kernel of the package: the modules' kernels, those kept in their tables (variants) and those
    they call."""
    found, pending = {}, []
    for info in pkgutil.walk_packages(multigrove.__path__, "multigrove."):
        if "cuda" in info.name or info.name.endswith("__main__"):
            continue  # CUDA kernels (Numba's CUDA target), and the command line's entry
        pending.extend(vars(importlib.import_module(info.name)).values())
    while pending:
        value = pending.pop()
        if isinstance(value, CPUDispatcher):
            if id(value) not in found:
                found[id(value)] = value
                pending.extend(_callees(value))
        elif isinstance(value, (tuple, list)):
            pending.extend(value)
        elif isinstance(value, dict):
            pending.extend(value.values())
    return list(found.values())


def _callees(kernel):
    """The kernels a kernel's code names (its global names, in its nested code objects too)."""
    func = kernel.py_func
    names, codes = set(), [func.__code__]
    while codes:
        code = codes.pop()
        names.update(code.co_names)
        codes.extend(c for c in code.co_consts if hasattr(c, "co_names"))
    return [func.__globals__[name] for name in names if isinstance(func.__globals__.get(name), CPUDispatcher)]


def _reaches_parallel(kernel, seen=None) -> bool:
    """Whether the kernel calls a parallel kernel, directly or through kernels inlined into it."""
    seen = set() if seen is None else seen
    for callee in _callees(kernel):
        if id(callee) in seen or callee is kernel:
            continue
        seen.add(id(callee))
        if callee.targetoptions.get("parallel") or \
                (callee.targetoptions.get("inline") == "always" and _reaches_parallel(callee, seen)):
            return True
    return False


@pytest.mark.skipif(os.environ.get("NUMBA_DISABLE_JIT") == "1", reason="kernels are plain functions")
def test_every_cached_caller_of_a_parallel_kernel_is_parallel():
    kernels = _kernels()
    assert len(kernels) > 100
    callers = [k for k in kernels if type(k._cache).__name__ == "FunctionCache"
               and k.targetoptions.get("inline") != "always" and _reaches_parallel(k)]
    assert {k.py_func.__name__ for k in callers} >= {"best_splits", "split_step", "split_and_build"}
    serial = sorted(k.py_func.__qualname__ for k in callers if not k.targetoptions.get("parallel"))
    assert serial == []
