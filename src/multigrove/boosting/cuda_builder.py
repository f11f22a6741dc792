"""The GPU histogram builder: the builder seam of ``builder.py`` answered by CUDA kernels.

``device_type="cuda"`` trains with the one grower (``grower.py``) over this builder instead of
``LocalBuilder``: the binned rows go to the GPU once, each tree's split statistics once, and the root's
histogram, every split's partition and every requested child's histogram are computed there
(``kernels/cuda.py``).  A request batch (one split in leaf-wise growth, a whole level in depth-wise and
symmetric growth) is one launch per step: the side marks of every node, the scatter, the children's
histograms.  The host receives each histogram the grower scans, each split's count of left rows and, at
the end of a tree, the rows' order by leaf (for the leaf values and the scores).

What this first GPU path does not move to the device yet (issue 44): the gradients and sketches, the
split scans, the leaf values and score updates run on the host's cores; a histogram crosses to the host
for every scanned node.  Stores with bundles or a CSR part are refused (train with ``device_type="cuda"``
bins dense columns only).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from .._dtypes import HIST, INDEX
from ..kernels.histogram import totals_from_dense
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
        self._tmp = self.cuda.device_array(max(self.n_rows, 1), INDEX)
        self._goes_left = self.cuda.device_array(max(self.n_rows, 1), np.uint8)
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
        self._build(self._rows, [(0, int(self.leaf_end[0]))], [out], total)
        return total

    def histograms(self, leaves: Sequence[int], outs: Sequence[np.ndarray]) -> None:
        segments = [(int(self.leaf_start[leaf]), int(self.leaf_end[leaf] - self.leaf_start[leaf])) for leaf in leaves]
        if segments:
            self._build(self._rows, segments, list(outs), None)

    def split(self, requests: Sequence[SplitRequest], outs: Sequence[np.ndarray | None]) -> None:
        """Every request of the batch in one launch per step: the partitions, then the children's histograms."""
        if not requests:
            return
        segments = [(int(self.leaf_start[r.leaf]), int(self.leaf_end[r.leaf] - self.leaf_start[r.leaf]))
                    for r in requests]
        n_lefts = self._partition(self._rows, segments, requests)
        children, child_outs = [], []
        for req, out, (start, n), n_left in zip(requests, outs, segments, n_lefts):
            self.leaf_end[req.leaf] = start + n_left
            self.leaf_start[req.new_leaf] = start + n_left
            self.leaf_end[req.new_leaf] = start + n
            if req.build != BUILD_NONE:
                children.append((start, n_left) if req.build == BUILD_LEFT else (start + n_left, n - n_left))
                child_outs.append(out)
        if children:
            self._build(self._rows, children, child_outs, None)
        if self._n_other:
            segments = [(int(self.other_start[r.leaf]), int(self.other_end[r.leaf] - self.other_start[r.leaf]))
                        for r in requests]
            for req, (start, n), n_left in zip(requests, segments, self._partition(self._other, segments, requests)):
                self.other_end[req.leaf] = start + n_left
                self.other_start[req.new_leaf] = start + n_left
                self.other_end[req.new_leaf] = start + n

    def leaf_segments(self, n_leaves: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(rows, leaf_start, leaf_end): leaf l of the last tree holds rows[leaf_start[l]:leaf_end[l]]."""
        return self._rows.copy_to_host(), self.leaf_start[:n_leaves], self.leaf_end[:n_leaves]

    def other_segments(self, n_leaves: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """As leaf_segments, for the rows left out of the tree's sample."""
        rows = self._other.copy_to_host() if self._n_other else np.zeros(0, INDEX)
        return rows, self.other_start[:n_leaves], self.other_end[:n_leaves]

    # ------------------------------------------------------------------ kernels
    def _segments(self, segments: list[tuple[int, int]]):
        """The device arrays (segment_start, segment_offset) of (start, n) segments, and their total rows."""
        starts = np.array([start for start, _ in segments], np.int64)
        offsets = np.concatenate([[0], np.cumsum([n for _, n in segments])]).astype(np.int64)
        return self.cuda.to_device(starts), self.cuda.to_device(offsets), int(offsets[-1])

    def _histogram_buffer(self, n_segments: int, width: int):
        """A device buffer for n_segments histograms of this tree's width (grown as batches grow)."""
        rows = n_segments * self.total_bins
        if self._hist is None or self._hist.shape[0] < rows or self._hist.shape[1] != width:
            self._hist = self.cuda.device_array((rows, width), HIST)
        return self._hist

    def _build(self, rows, segments: list[tuple[int, int]], outs: list[np.ndarray], total: np.ndarray | None) -> None:
        """The histograms of the row segments (start, n) into outs (host), in one launch; with ``total``
        (one segment), its totals too."""
        kernels, width = self.kernels, outs[0].shape[1]
        hist = self._histogram_buffer(len(segments), width)
        n_cells = len(segments) * self.total_bins
        kernels.zero_histogram[kernels.blocks_for(n_cells * width), kernels.THREADS_PER_BLOCK](hist, n_cells)
        starts, offsets, n = self._segments(segments)
        if n:
            kernels.histogram_rows[kernels.blocks_for(n), kernels.THREADS_PER_BLOCK](
                self._binned, self._dense_base, rows, starts, offsets, self._stats, hist[:n_cells])
        host = hist[:n_cells].copy_to_host()
        for k, out in enumerate(outs):
            out[...] = host[k * self.total_bins:(k + 1) * self.total_bins]
        if total is not None and not totals_from_dense(self.store, outs[0], total):
            start, count = segments[0]  # no feature at all: the totals of the rows themselves
            total[:] = self._stats.copy_to_host()[rows.copy_to_host()[start:start + count]].sum(axis=0, dtype=HIST)

    def _partition(self, rows, segments: list[tuple[int, int]], requests: Sequence[SplitRequest]) -> list[int]:
        """Reorder each segment of rows into its split's left rows then its right ones, all in one launch per
        step; return each segment's left count."""
        cuda, kernels, store = self.cuda, self.kernels, self.store
        starts, offsets, n = self._segments(segments)
        if n == 0:
            return [0] * len(segments)
        rules = [req.rule() for req in requests]
        features = np.array([rule.feature for rule in rules], np.int64)
        sets = [rule.categories for rule in rules]
        category_offset = np.concatenate([[0], np.cumsum([c.shape[0] for c in sets])]).astype(np.int64)
        categories = np.concatenate(sets + [np.zeros(1, np.bool_)]).astype(np.bool_)
        n_left = cuda.to_device(np.zeros(len(segments), np.int64))
        blocks = kernels.blocks_for(n)
        kernels.mark_sides[blocks, kernels.THREADS_PER_BLOCK](
            self._binned, rows, starts, offsets, cuda.to_device(store.feature_slot[features].astype(np.int64)),
            cuda.to_device(np.array([rule.threshold_bin for rule in rules], np.int64)),
            cuda.to_device(store.missing_bin[features].astype(np.int64)),
            cuda.to_device(np.array([rule.default_left for rule in rules], np.uint8)),
            cuda.to_device(category_offset), cuda.to_device(categories), self._goes_left, n_left)
        kernels.scatter_sides[blocks, kernels.THREADS_PER_BLOCK](
            rows, starts, offsets, self._goes_left, n_left, cuda.to_device(np.zeros(2 * len(segments), np.int64)),
            self._tmp)
        kernels.copy_rows[blocks, kernels.THREADS_PER_BLOCK](self._tmp, rows, starts, offsets)
        return [int(k) for k in n_left.copy_to_host()]
