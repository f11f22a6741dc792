"""Variants of a kernel compiled from its one source: a serial twin of a parallel kernel, or the kernel
with some of the kernels it calls replaced.

A parallel kernel costs seconds to compile (Numba turns every ``prange`` loop into a gufunc of its
own), and small work never needs it: ``pick`` gives the caller the serial twin, the same source
compiled with ``parallel=False`` (``prange`` then runs as ``range`` on the calling thread), below
``PARALLEL_MIN_WORK`` or on one thread.  A fit on small data runs on one thread (the engine's
``SERIAL_FIT_MAX_CELLS``) and compiles no parallel region at all (the first fit's wait is
compilation), and no parallel region is entered for less work than its fork and join cost.

Numba names a cached kernel's files by its qualified name, and keys the entries inside by the
bytecode and the signature only: a twin compiled from the same function object would share the
parallel kernel's entries.  So a variant is a copy of the function under a name of its own
(``bin_segments`` -> ``bin_segments_serial``), with its own cache files.
"""
import types
import warnings

import numba
import numpy as np
from numba import njit
from numba.core.errors import NumbaPerformanceWarning

#: the work (in the caller's unit, each of about a nanosecond on one thread: cells of a row-wise pass, bins x
#: nodes x outputs of a split scan, rows x trees of a prediction) below which a kernel runs its serial twin.
#: A parallel region of Numba's OpenMP layer costs 0.8 us more than a serial call on one thread here and
#: 1.6 us on two; on 16 cores an empty region takes 2.7 us at 2 threads and 7.8 at 16, and a region
#: beats one thread from about 8 us of work at any thread count (benchmarks/region_cost.py); 4,096 units are
#: 4-10 us of work: at two threads a region pays for itself where it is entered, at 16 it about breaks
#: even (scm20d's one-output split scans, 30,000 units, ran 1.2x slower a tree on the serial twin at two
#: threads)
PARALLEL_MIN_WORK = 4096
#: on one thread a parallel kernel runs its loop on the calling thread too, compiled with its arrays marked
#: as not aliasing each other: faster for the large loops (CHANGELOG.md, stop 38: a scan of 50 x 256 bins with
#: five Hessians 1.28 against 3.15 ms), no faster for small ones, where its serial twin is used
ONE_THREAD_PARALLEL_MIN_WORK = 1 << 18


def variant(kernel, suffix: str, parallel: bool = False, **callees):
    """The kernel's source compiled again as ``<name>_<suffix>``.

    Parameters
    ----------
    kernel : numba dispatcher
        A kernel of this package (``@njit(cache=True, ...)``; the variant is cached too).
    suffix : str
        Appended to its name: the variant's cache files are its own.
    parallel : bool, default False
        Compile with ``parallel=True`` (False: a serial twin, ``prange`` as ``range``).
    **callees
        Global names the variant resolves to other kernels instead of the module's (a variant of a
        kernel that calls a parallel kernel calls that kernel's serial twin).
    """
    func = getattr(kernel, "py_func", kernel)  # the plain function itself under NUMBA_DISABLE_JIT
    namespace = func.__globals__ if not callees else {**func.__globals__, **callees}
    copy = types.FunctionType(func.__code__, namespace, f"{func.__name__}_{suffix}", func.__defaults__,
                              func.__closure__)
    copy.__qualname__ = f"{func.__qualname__}_{suffix}"
    copy.__module__ = func.__module__
    copy.__doc__ = f"{func.__name__} compiled {'in parallel' if parallel else 'serially'} (kernels._variants)."
    options = {name: value for name, value in getattr(kernel, "targetoptions", {}).items()
               if value is not None and name != "nopython"}
    return njit(**{**options, "parallel": parallel, "cache": True})(copy)


#: A cached kernel that calls a parallel kernel is itself compiled with ``parallel=True``, although it has no
#: ``prange`` loop of its own (``split.best_splits``, ``split_step.split_step``, ``partition.split_and_build``):
#: compiled serially, it crashed the interpreter when read from the cache in a process after one that had
#: compiled it while reading its parallel callee from the cache (the entry then lacked the callee's parallel
#: region; Numba issues 4807 and 8578; shown by tests/kernels/test_cache_crash.py).  Numba warns at their
#: compilation that nothing was parallelised: expected, and silenced in ``entry_point``.
PARALLEL_CALLER = r"\s*The keyword argument 'parallel=True' was specified but no transformation"


def entry_point(kernel, args: tuple):
    """``kernel``'s compiled function for the Numba types of ``args`` (compiled, or read from the cache, when
    missing), to be called without the dispatcher.  The dispatcher types every argument at every call: 6
    microseconds for a split kernel, whose BinnedStore is 18 arrays, 20 of the three kernel calls a split
    makes.  The compiled function checks the arrays' dtypes but trusts their dimensions and layout: a caller
    must pass arguments of exactly the types ``args`` has (EntryPoints, per tree)."""
    if not hasattr(kernel, "overloads"):  # NUMBA_DISABLE_JIT: the plain function
        return kernel
    types = tuple(kernel.typeof_pyval(arg) for arg in args)
    if types not in kernel.overloads:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", PARALLEL_CALLER, NumbaPerformanceWarning)
            kernel.compile(types)
    return kernel.overloads[types].entry_point


def type_key(arg):
    """A hashable key that tells apart every two arguments Numba types differently, found about ten times
    faster than their Numba types (Numba builds an array's type anew at every ``typeof``: 1.3 ms a tree on
    atp7d's five kernel calls): an array by its dtype, dimensions, layout, alignment and writability, a tuple
    (a NamedTuple of arrays) by its class and its items' keys, a scalar by its class."""
    if isinstance(arg, np.ndarray):
        flags = arg.flags
        return arg.dtype, arg.ndim, flags.c_contiguous, flags.f_contiguous, flags.aligned, flags.writeable
    if isinstance(arg, tuple):
        return type(arg), tuple(type_key(item) for item in arg)
    if arg is None or isinstance(arg, (bool, float, np.generic)):
        return type(arg)
    if isinstance(arg, int):  # Numba types an int as int64, one past its range as uint64
        return int, -(1 << 63) <= arg < (1 << 63)
    return type(arg), id(arg)  # anything else: never shared between two objects


class EntryPoints:
    """The entry points (entry_point) of the kernels one caller calls again and again, by kernel and ``role``
    (where one kernel takes arguments of two kinds).  The caller clears them whenever an argument's type may
    change: the grower and the builder at each tree (a tree's statistics, stores and buffers keep their types
    while it grows).  The entry points found stay, by kernel and type_key of the arguments, so that the next
    tree's first call finds its entry point without Numba's typing."""

    def __init__(self):
        self._entries: dict = {}
        self._by_types: dict = {}

    def clear(self) -> None:
        self._entries.clear()

    def call(self, kernel, *args, role: str = ""):
        """kernel(*args) through the entry point kept for (kernel, role), found from these arguments' types."""
        key = (kernel, role)
        entry = self._entries.get(key)
        if entry is None:
            typed = (kernel, tuple(type_key(arg) for arg in args))
            entry = self._by_types.get(typed)
            if entry is None:
                entry = self._by_types[typed] = entry_point(kernel, args)
            self._entries[key] = entry
        return entry(*args)


def pick(parallel_kernel, serial_kernel, work: float, threads: int | None = None):
    """The parallel kernel for at least PARALLEL_MIN_WORK units of work (ONE_THREAD_PARALLEL_MIN_WORK when
    Numba runs one thread here: ``threads``, where the caller knows it, else asked of Numba), else its serial
    twin."""
    # the thread count (6 microseconds to ask Numba: 0.9 s of rf1's 155,788 splits) decides only between the two
    # thresholds
    if work < PARALLEL_MIN_WORK:
        return serial_kernel
    if work >= ONE_THREAD_PARALLEL_MIN_WORK or (numba.get_num_threads() if threads is None else threads) > 1:
        return parallel_kernel
    return serial_kernel
