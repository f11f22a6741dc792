"""The GPU histogram builder: the builder seam of ``builder.py`` answered by CUDA kernels.

``device_type="cuda"`` trains with the one grower (``grower.py``) over this builder instead of
``LocalBuilder``: the binned rows go to the GPU once, each tree's split statistics once, and the root's
histogram, every split's partition and every requested child's histogram are computed there
(``kernels/cuda.py``).  The host receives each histogram the grower scans, each split's count of left
rows and, at the end of a tree, the rows' order by leaf (for the leaf values and the scores).

What this first GPU path does not move to the device yet (issue 44): the gradients and sketches, the
split scans, the leaf values and score updates run on the host's cores; a histogram crosses to the host
for every scanned node.  Stores with bundles or a CSR part are refused (train with ``device_type="cuda"``
bins dense columns only).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from .._dtypes import HIST, INDEX
from ..kernels.store import BinnedStore
from .builder import BUILD_LEFT, BUILD_NONE, PackedCounts, SplitRequest

#: what to install for device_type="cuda"
CUDA_EXTRA = "pip install 'multigrove[cuda]' (numba-cuda) on a machine with an NVIDIA GPU and its driver"


def cuda_runtime():
    """numba.cuda, checked: a clear error when the package or a GPU is missing."""
    try:
        from numba import cuda
    except ImportError as exc:  # pragma: no cover - numba ships numba.cuda; numba-cuda replaces it
        raise RuntimeError(f"device_type='cuda' needs numba's CUDA target: {CUDA_EXTRA}") from exc
    try:
        available = cuda.is_available()
    except Exception as exc:  # noqa: BLE001 - the driver's own error, passed on
        raise RuntimeError(f"device_type='cuda': the CUDA driver could not be loaded ({exc}); {CUDA_EXTRA}") from exc
    if not available:
        raise RuntimeError(f"device_type='cuda' but no CUDA GPU is available to this process; {CUDA_EXTRA}")
    return cuda


def check_cuda_store(store: BinnedStore) -> None:
    """Raise ValueError for a store the CUDA kernels do not read (bundles or a CSR part)."""
    if store.bundle.shape[1] or store.sparse_bins.shape[0]:
        raise ValueError(
            f"device_type='cuda' trains on dense binned columns, but this Dataset was binned with "
            f"{store.bundle.shape[1]} feature bundles and {store.sparse_bins.shape[0]} sparse entries: construct "
            "it with params={'enable_bundle': False, 'is_enable_sparse': False} (train() does so for a Dataset "
            "it constructs)")


class CudaBuilder:
    """Histograms and partitions on a CUDA GPU for one process's binned rows (see the module docstring).

    Same protocol as ``LocalBuilder``: ``begin`` per tree, then ``root``, ``split`` and ``histograms`` for
    the grower, and ``leaf_segments`` / ``other_segments`` once the tree is grown."""

    def __init__(self, store: BinnedStore):
        check_cuda_store(store)
        from ..kernels import cuda as kernels
        self.cuda = cuda_runtime()
        self.kernels = kernels
        self.store = store
        self.n_rows = store.n_rows
        self.total_bins = store.total_bins
        self._binned = self.cuda.to_device(np.ascontiguousarray(store.dense))
        self._dense_base = self.cuda.to_device(np.ascontiguousarray(store.dense_base, np.int64))
        # every row falls in one bin of the first dense column's feature: the node totals are its bins' sums
        first = int(np.searchsorted(store.offsets, store.dense_base[0])) if store.dense.shape[1] else -1
        self._total_bins = (int(store.offsets[first]), int(store.offsets[first + 1])) if first >= 0 else None
        self._tmp = self.cuda.device_array(max(self.n_rows, 1), INDEX)
        self._goes_left = self.cuda.device_array(max(self.n_rows, 1), np.uint8)
        self._n_left = self.cuda.device_array(1, np.int64)
        self._next_slot = self.cuda.device_array(2, np.int64)
        self._no_categories = self.cuda.to_device(np.zeros(0, np.bool_))
        self._hist = None
        self._stats = None
        self._rows = self._other = None
        self.leaf_start = self.leaf_end = self.other_start = self.other_end = np.zeros(1, np.int64)
        self._n_other = 0

    # ------------------------------------------------------------------ per tree
    def begin(self, stats: np.ndarray, rows: np.ndarray | None = None, max_leaves: int = 2,
              other_rows: np.ndarray | None = None, packed: PackedCounts | None = None) -> None:
        """Grow the next tree on ``stats`` (n_rows, C) float32 over ``rows`` (or every row); ``other_rows``
        are partitioned along but enter no histogram (builder.LocalBuilder.begin).  ``packed`` is a hint
        for the CPU kernels' two-column GOSS histograms; here the statistics are summed as given."""
        del packed
        cuda = self.cuda
        self._stats = cuda.to_device(np.ascontiguousarray(stats))
        width = stats.shape[1]
        if self._hist is None or self._hist.shape[1] != width:
            self._hist = cuda.device_array((self.total_bins, width), HIST)
        own = np.arange(self.n_rows, dtype=INDEX) if rows is None else np.ascontiguousarray(rows, INDEX)
        self._rows = cuda.to_device(own)
        other = np.zeros(0, INDEX) if other_rows is None else np.ascontiguousarray(other_rows, INDEX)
        self._n_other = other.shape[0]
        self._other = cuda.to_device(other) if other.shape[0] else None
        self.leaf_start = np.zeros(max_leaves, np.int64)
        self.leaf_end = np.zeros(max_leaves, np.int64)
        self.leaf_end[0] = own.shape[0]
        self.other_start = np.zeros(max_leaves, np.int64)
        self.other_end = np.zeros(max_leaves, np.int64)
        self.other_end[0] = other.shape[0]

    def root(self, out: np.ndarray) -> np.ndarray:
        total = np.empty(out.shape[1], dtype=HIST)
        self._build(self._rows, 0, int(self.leaf_end[0]), out, total)
        return total

    def histograms(self, leaves: Sequence[int], outs: Sequence[np.ndarray]) -> None:
        for leaf, out in zip(leaves, outs):
            start, end = int(self.leaf_start[leaf]), int(self.leaf_end[leaf])
            self._build(self._rows, start, end - start, out, None)

    def split(self, requests: Sequence[SplitRequest], outs: Sequence[np.ndarray | None]) -> None:
        for req, out in zip(requests, outs):
            start, end = int(self.leaf_start[req.leaf]), int(self.leaf_end[req.leaf])
            n_left = self._partition(self._rows, start, end, req)
            self.leaf_end[req.leaf] = start + n_left
            self.leaf_start[req.new_leaf] = start + n_left
            self.leaf_end[req.new_leaf] = end
            if req.build != BUILD_NONE:
                child_start, child_end = (start, start + n_left) if req.build == BUILD_LEFT else (start + n_left, end)
                self._build(self._rows, child_start, child_end - child_start, out, None)
            if self._n_other:
                start, end = int(self.other_start[req.leaf]), int(self.other_end[req.leaf])
                n_left = self._partition(self._other, start, end, req)
                self.other_end[req.leaf] = start + n_left
                self.other_start[req.new_leaf] = start + n_left
                self.other_end[req.new_leaf] = end

    def leaf_segments(self, n_leaves: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(rows, leaf_start, leaf_end): leaf l of the last tree holds rows[leaf_start[l]:leaf_end[l]]."""
        return self._rows.copy_to_host(), self.leaf_start[:n_leaves], self.leaf_end[:n_leaves]

    def other_segments(self, n_leaves: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """As leaf_segments, for the rows left out of the tree's sample."""
        rows = self._other.copy_to_host() if self._n_other else np.zeros(0, INDEX)
        return rows, self.other_start[:n_leaves], self.other_end[:n_leaves]

    # ------------------------------------------------------------------ kernels
    def _build(self, rows, start: int, n: int, out: np.ndarray, total: np.ndarray | None) -> None:
        """The histogram of rows[start:start + n] into out (host); its totals into total when given."""
        kernels, hist = self.kernels, self._hist
        kernels.zero_histogram[kernels.blocks_for(hist.size), kernels.THREADS_PER_BLOCK](hist)
        if n:
            kernels.histogram_rows[kernels.blocks_for(n), kernels.THREADS_PER_BLOCK](
                self._binned, self._dense_base, rows, start, n, self._stats, hist)
        hist.copy_to_host(out)
        if total is not None:
            if self._total_bins is None:  # no feature at all: the totals of the rows themselves
                total[:] = self._stats.copy_to_host()[rows.copy_to_host()[start:start + n]].sum(axis=0, dtype=HIST)
            else:
                lo, hi = self._total_bins
                total[:] = out[lo:hi].sum(axis=0)

    def _partition(self, rows, start: int, end: int, req: SplitRequest) -> int:
        """Reorder rows[start:end] into the split's left rows then its right ones; return the left count."""
        cuda, kernels = self.cuda, self.kernels
        n = end - start
        if n == 0:
            return 0
        rule = req.rule()
        column = int(self.store.feature_slot[rule.feature])
        categories = cuda.to_device(rule.categories) if rule.categories.shape[0] else self._no_categories
        self._n_left.copy_to_device(np.zeros(1, np.int64))
        blocks = kernels.blocks_for(n)
        kernels.mark_sides[blocks, kernels.THREADS_PER_BLOCK](
            self._binned, column, rows, start, n, rule.threshold_bin, int(self.store.missing_bin[rule.feature]),
            rule.default_left, categories, self._goes_left, self._n_left)
        n_left = int(self._n_left.copy_to_host()[0])
        self._next_slot.copy_to_device(np.zeros(2, np.int64))
        kernels.scatter_sides[blocks, kernels.THREADS_PER_BLOCK](rows, start, n, self._goes_left, n_left,
                                                                 self._next_slot, self._tmp)
        kernels.copy_rows[blocks, kernels.THREADS_PER_BLOCK](self._tmp, rows, start, n)
        return n_left
