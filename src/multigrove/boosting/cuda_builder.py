"""The GPU histogram builder: the builder seam of ``builder.py`` answered by CUDA kernels.

``device_type="cuda"`` trains with the one grower (``grower.py``) over this builder instead of
``LocalBuilder``: the binned rows go to the GPU once, each tree's split statistics once, and the root's
histogram, every split's partition and every requested child's histogram are computed there
(``kernels/cuda.py``).  A request batch (in leaf-wise growth the leaf in turn and the next ones, split ahead of
their turn: ``splits_ahead``; a whole level in depth-wise and symmetric growth) is one launch per step: the side
marks of every node, the scatter, the children's histograms.

The histograms stay on the GPU: the builder offers the grower ``device_histograms`` (``cuda_histograms.py``),
whose pool lends device slots, and the builder builds each histogram into its slot and runs the batch's scans
there too (the subtraction, the scans, the choice of each node's split: ``kernels/cuda_scan.py``).  The host
receives each node's chosen split and sums and, at the end of a tree, the rows' order by leaf (for the leaf
values and the scores).  A split's count of left rows is the grower's, from the histograms' count column: a call
waits for the GPU once, for its scans' choices (the partitions check the count on the GPU, and the host reads
that check once a tree); the rows a sample left out, outside the histograms, have their counts read back.
Its ``outs`` are always the grower's device slots: the one grower that would pass host arrays, one scoring
with a ``CandidateScorer`` (sparse-output objectives), is refused with ``device_type="cuda"`` before any tree.

The device training shard (``cuda_shard.py``) hands ``begin`` its statistics already on the GPU, and reads
the leaves' rows there (``device_segments``).  Stores with bundles or a CSR part are refused (train with
``device_type="cuda"`` bins dense columns only).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from .._dtypes import HIST, INDEX
from ..kernels.store import BinnedStore
from .builder import BUILD_LEFT, BUILD_NONE, PackedCounts, PendingBoundaries, SplitRequest
from .cuda_histograms import DeviceHistogram, DeviceHistograms

#: what to install for device_type="cuda"
CUDA_EXTRA = "pip install 'multigrove[cuda]' (numba-cuda) on a machine with an NVIDIA GPU and its driver"


def cuda_runtime():
    """numba.cuda, checked: a clear error when the package or a GPU is missing.

    numba-cuda 0.30.4 (the newest release on 2026-11-27) registers an overload of ``np.row_stack`` when it
    compiles its first kernel, and NumPy 2.5 removed that alias of ``np.vstack``: the compilation then fails
    with an AttributeError.  Where the alias is missing, it is restored here (``np.row_stack = np.vstack``,
    what NumPy < 2.5 defines), once a model trains with ``device_type="cuda"``, never at import."""
    if not hasattr(np, "row_stack"):
        np.row_stack = np.vstack
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


#: rows at least in one block's share of a segment (histogram_tiles): its shared tile is added to the
#: histogram once per share, so a share adds about MIN_SHARE_ROWS / 256 times as many values as it flushes
MIN_SHARE_ROWS = 2048
#: blocks per streaming multiprocessor that a launch aims at (shares smaller than MIN_SHARE_ROWS aside)
BLOCKS_PER_SM = 8
#: CudaBuilder.splits_ahead: the splits of one builder call in leaf-wise growth (the leaf in turn and the next ones,
#: grower.TreeGrower._splits_ahead).  Each call is a chain of launches and two waits for the GPU (the partitions'
#: left counts, the scans' choices) whatever its number of splits, and a small node's work is far shorter than
#: the chain: Otto's 126 splits a tree took 0.25 s a round one at a time on an H100 (stop 61).  As many as the CPU
#: builder takes at 16 threads; the splits that never have their turn are about a tenth of a tree's at this
#: number (AHEAD_RANK_SHARE, benchmarks/splits_ahead.py)
CUDA_SPLITS_AHEAD = 16


def histogram_tiles_of(dense_base: np.ndarray, total_bins: int, width: int, cells: int) -> np.ndarray | None:
    """The tiles of ``kernels.cuda.histogram_tiles`` for a store's dense columns and ``width`` statistics:
    (T, 6) int64 rows (first column, end column, first statistic, end statistic, first bin, end bin), each
    tile's (bins x statistics) at most ``cells``.  Statistics are split into the fewest equal ranges that let
    the widest column fit, and the columns of each range are packed in order.  None when the columns' bins
    are not laid out in column order or one column's bins exceed ``cells`` (the builder then refuses the
    store; ``dense_store`` lays columns out in order, at most 256 bins each)."""
    base = np.asarray(dense_base, np.int64)
    if base.shape[0] == 0:
        return np.zeros((0, 6), np.int64)
    end = np.append(base[1:], total_bins)
    bins = end - base
    if np.any(bins < 1) or int(bins.max()) > cells:
        return None
    n_ranges = -(-int(bins.max()) * width // cells)
    stat_edges = np.linspace(0, width, min(n_ranges, width) + 1).round().astype(np.int64)
    tiles = []
    for first_stat, end_stat in zip(stat_edges[:-1], stat_edges[1:]):
        n_stats, first = int(end_stat - first_stat), 0
        for j in range(1, base.shape[0] + 1):
            if j == base.shape[0] or (end[j] - base[first]) * n_stats > cells:
                tiles.append((first, j, first_stat, end_stat, base[first], end[j - 1]))
                first = j
    return np.array(tiles, np.int64)


def row_shares(starts: Sequence[int], counts: Sequence[int], n_tiles: int, target_blocks: int) -> np.ndarray:
    """The work items of the CUDA kernels (``kernels.cuda``): (W, 4) int64 rows (segment, tile, first
    position, end position), segment s being positions starts[s] .. starts[s] + counts[s] - 1 of the rows,
    cut into equal shares of at least MIN_SHARE_ROWS rows such that the items number about
    ``target_blocks``, every share once per tile (``n_tiles`` 1 for the partition kernels)."""
    starts = np.asarray(starts, np.int64)
    counts = np.asarray(counts, np.int64)
    share = max(MIN_SHARE_ROWS, -(-int(counts.sum()) * n_tiles // max(target_blocks, 1)))
    n_shares = -(-counts // share)
    segment = np.repeat(np.arange(counts.shape[0]), n_shares)
    within = np.arange(segment.shape[0]) - np.repeat(np.cumsum(n_shares) - n_shares, n_shares)
    first = starts[segment] + counts[segment] * within // n_shares[segment]
    end = starts[segment] + counts[segment] * (within + 1) // n_shares[segment]
    items = np.empty((segment.shape[0], n_tiles, 4), np.int64)
    items[:, :, 0] = segment[:, None]
    items[:, :, 1] = np.arange(n_tiles)
    items[:, :, 2] = first[:, None]
    items[:, :, 3] = end[:, None]
    return items.reshape(-1, 4)


class CudaBuilder:
    """Histograms and partitions on a CUDA GPU for one process's binned rows (see the module docstring).

    Same protocol as ``LocalBuilder``: ``begin`` per tree, then ``root``, ``split`` and ``histograms`` for
    the grower, and ``leaf_segments`` / ``other_segments`` once the tree is grown; leaf-wise growth sends it
    ``splits_ahead`` splits a call, those after the first ahead of their turn (``commit``)."""

    splits_ahead = CUDA_SPLITS_AHEAD

    def __init__(self, store: BinnedStore):
        check_cuda_store(store)
        self.cuda = cuda_runtime()  # first: it restores what numba-cuda compiles against
        from ..kernels import cuda as kernels
        self.kernels = kernels
        self.store = store
        self.n_rows = store.n_rows
        self.total_bins = store.total_bins
        self._binned = self.cuda.to_device(np.ascontiguousarray(store.dense))
        self._dense_base = self.cuda.to_device(np.ascontiguousarray(store.dense_base, np.int64))
        self._tmp = self.cuda.device_array(max(self.n_rows, 1), INDEX)
        self._goes_left = self.cuda.device_array(max(self.n_rows, 1), np.uint8)
        self._all_rows = self.cuda.to_device(np.arange(self.n_rows, dtype=INDEX))
        self._row_buffer = self.cuda.device_array(max(self.n_rows, 1), INDEX)
        self._other_buffer = self.cuda.device_array(max(self.n_rows, 1), INDEX)
        self._no_categories = self.cuda.to_device(np.zeros(1, np.bool_))  # the partitions' set of no set split
        # set by scatter_sides where a partition's count of left rows is not the one the host took (_split)
        self._mismatch = self.cuda.to_device(np.zeros(1, np.int64))
        self._unchecked = False  # partitions ran on counts the host took, not checked yet (_check_counts)
        self._uploads: dict[str, object] = {}
        self._tiles: dict[int, tuple[np.ndarray, object]] = {}
        current = getattr(self.cuda, "get_current_device", None)
        self._simulator = current is None  # Numba's CUDA simulator has no device to ask: 16 SMs assumed
        n_sms = 16 if self._simulator else int(current().MULTIPROCESSOR_COUNT)
        self._target_blocks = BLOCKS_PER_SM * n_sms
        # the simulator runs each thread of a block as a Python thread: 16 keep CI's tests short
        self._tile_threads = 16 if self._simulator else self.kernels.TILE_THREADS
        self._threads = 16 if self._simulator else self.kernels.THREADS_PER_BLOCK
        self._stats = None
        self._device_histograms = None
        self._rows = self._other = None
        self.leaf_start = self.leaf_end = self.other_start = self.other_end = np.zeros(1, np.int64)
        self._n_other = 0
        self._pending = PendingBoundaries()

    @property
    def device_histograms(self) -> DeviceHistograms:
        """The grower's histograms and scans on this GPU (cuda_histograms.py), made on first use."""
        if self._device_histograms is None:
            self._device_histograms = DeviceHistograms(self)
        return self._device_histograms

    # ------------------------------------------------------------------ per tree
    def begin(self, stats: np.ndarray, rows: np.ndarray | None = None, max_leaves: int = 2,
              other_rows: np.ndarray | None = None, packed: PackedCounts | None = None) -> None:
        """Grow the next tree on ``stats`` (n_rows, C) float32 over ``rows`` (or every row); ``other_rows``
        are partitioned along but enter no histogram (builder.LocalBuilder.begin).  ``packed`` is a hint
        for the CPU kernels' two-column GOSS histograms; here the statistics are summed as given."""
        del packed
        self._check_counts()
        if hasattr(stats, "copy_to_host"):  # the device training shard's statistics, already on the GPU
            self._stats = stats
        else:
            self._stats = self.cuda.to_device(np.ascontiguousarray(stats))
        if rows is None:
            n_own = self.n_rows
            self._rows = self._row_buffer[:n_own]
            self._rows.copy_to_device(self._all_rows)  # device to device: the partitions reorder it
        else:
            n_own = rows.shape[0]
            self._rows = self._row_buffer[:n_own]
            self._rows.copy_to_device(np.ascontiguousarray(rows, INDEX))
        self._n_other = 0 if other_rows is None else other_rows.shape[0]
        self._other = None
        if self._n_other:
            self._other = self._other_buffer[:self._n_other]
            self._other.copy_to_device(np.ascontiguousarray(other_rows, INDEX))
        self.leaf_start = np.zeros(max_leaves, np.int64)
        self.leaf_end = np.zeros(max_leaves, np.int64)
        self.leaf_end[0] = n_own
        self.other_start = np.zeros(max_leaves, np.int64)
        self.other_end = np.zeros(max_leaves, np.int64)
        self.other_end[0] = self._n_other
        self._pending.clear()

    def root(self, out: DeviceHistogram) -> np.ndarray:
        total = np.empty(out.pool.shape[1], dtype=HIST)
        self._build(self._rows, [(0, int(self.leaf_end[0]))], [out], total)
        return total

    def histograms(self, leaves: Sequence[int], outs: Sequence[DeviceHistogram]) -> None:
        segments = [(int(self.leaf_start[leaf]), int(self.leaf_end[leaf] - self.leaf_start[leaf])) for leaf in leaves]
        if segments:
            self._build(self._rows, segments, list(outs), None)

    def split(self, requests: Sequence[SplitRequest], outs: Sequence[DeviceHistogram | None], scans=None) -> None:
        """Every request of the batch in one launch per step: the partitions, then the children's histograms;
        then the children's scans, all in one batch on the device (grower.ChildScan.run_together)."""
        if not requests:
            return
        self._split(requests, outs)
        scans = [scan for scan in scans or () if scan is not None]
        if scans:
            scans[0].run_together(scans)

    def _split(self, requests: Sequence[SplitRequest], outs: Sequence[np.ndarray | None]) -> None:
        """The partitions and the children's histograms of a batch of splits.  The children's bounds are the
        grower's counts of left rows (SplitRequest.n_left: each histogram's count column holds 1 a row, summed in
        float64, so the count is exact): the histograms are launched without waiting for the partition's own
        count, which scatter_sides compares with it (_check_counts, once a tree), and their plan goes to the GPU
        with the partition's, in one copy.  Without the grower's counts, the partition's are read back first (a
        wait for the GPU)."""
        segments = [(int(self.leaf_start[r.leaf]), int(self.leaf_end[r.leaf] - self.leaf_start[r.leaf]))
                    for r in requests]
        if all(0 <= r.n_left <= n for r, (_, n) in zip(requests, segments)):
            n_lefts = [r.n_left for r in requests]
            self._partition_and_build(segments, requests, n_lefts, *self._children(requests, outs, segments, n_lefts))
        else:
            n_lefts = self._partition(self._rows, segments, requests)
            children, child_outs = self._children(requests, outs, segments, n_lefts)
            if children:
                self._build(self._rows, children, child_outs, None)
        for req, (start, _), n_left in zip(requests, segments, n_lefts):
            self._pending.divide(self.leaf_start, self.leaf_end, req, start + n_left)
        if self._n_other:
            segments = [(int(self.other_start[r.leaf]), int(self.other_end[r.leaf] - self.other_start[r.leaf]))
                        for r in requests]
            for req, (start, _), n_left in zip(requests, segments, self._partition(self._other, segments, requests)):
                self._pending.divide(self.other_start, self.other_end, req, start + n_left)

    @staticmethod
    def _children(requests: Sequence[SplitRequest], outs: Sequence[DeviceHistogram | None],
                  segments: list[tuple[int, int]], n_lefts: list[int]) -> tuple[list, list]:
        """(the row segments (start, n) of the children the requests build, their device slots)."""
        children, child_outs = [], []
        for req, out, (start, n), n_left in zip(requests, outs, segments, n_lefts):
            if req.build != BUILD_NONE:
                children.append((start, n_left) if req.build == BUILD_LEFT else (start + n_left, n - n_left))
                child_outs.append(out)
        return children, child_outs

    def commit(self, leaf: int, new_leaf: int) -> None:
        """The split of ``leaf`` made ahead of its turn has it: its right rows become ``new_leaf``'s
        (HistogramBuilder)."""
        self._pending.commit(leaf, new_leaf)

    def leaf_segments(self, n_leaves: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(rows, leaf_start, leaf_end): leaf l of the last tree holds rows[leaf_start[l]:leaf_end[l]]."""
        self._check_counts()
        return self._rows.copy_to_host(), self.leaf_start[:n_leaves], self.leaf_end[:n_leaves]

    def other_segments(self, n_leaves: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """As leaf_segments, for the rows left out of the tree's sample."""
        self._check_counts()
        rows = self._other.copy_to_host() if self._n_other else np.zeros(0, INDEX)
        return rows, self.other_start[:n_leaves], self.other_end[:n_leaves]

    def device_segments(self, n_leaves: int, other: bool = False) -> tuple[object, np.ndarray, np.ndarray]:
        """As leaf_segments (``other``: other_segments) with the rows left on the GPU (None when there are
        no such rows), for the device training shard."""
        self._check_counts()
        if other:
            return self._other, self.other_start[:n_leaves], self.other_end[:n_leaves]
        return self._rows, self.leaf_start[:n_leaves], self.leaf_end[:n_leaves]

    def work(self, starts, counts) -> np.ndarray:
        """row_shares of these segments for one tile, for this GPU's size."""
        return row_shares(starts, counts, 1, self._target_blocks)

    def scratch(self, key: str, shape: tuple, dtype):
        """A device buffer of ``shape`` kept under ``key`` (grown along its first axis when too small), its
        contents undefined: the output of a kernel that writes every entry, with no copy from the host."""
        buffer = self._uploads.get(key)
        if buffer is None or buffer.shape[0] < shape[0] or buffer.shape[1:] != tuple(shape[1:]) \
                or buffer.dtype != np.dtype(dtype):
            buffer = self._uploads[key] = self.cuda.device_array((max(2 * shape[0], 1), *shape[1:]), dtype)
        return buffer[:shape[0]]

    def upload(self, key: str, array: np.ndarray):
        """``array`` copied to a device buffer kept under ``key`` (scratch): a launch's small inputs (work
        items, rules, leaf values) without a device allocation a call."""
        array = np.ascontiguousarray(array)
        view = self.scratch(key, array.shape, array.dtype)
        if array.shape[0]:
            view.copy_to_device(array)
        return view

    # ------------------------------------------------------------------ kernels
    def _build(self, rows, segments: list[tuple[int, int]], outs: list[DeviceHistogram],
               total: np.ndarray | None) -> None:
        """The histograms of the row segments (start, n) into the device slots ``outs``, in one launch; with
        ``total`` (one segment), its totals too."""
        head, work = self._histogram_plan(segments, outs)
        self._build_from(rows, self._plan("histogram_plan", head, work), len(segments), work.shape[0], outs)
        if total is not None:
            self._totals(rows, segments[0], outs[0], total)

    def _histogram_plan(self, segments: list[tuple[int, int]], outs: list[DeviceHistogram]):
        """(the head of the histograms' plan: each segment's slot, the work items) for _build_from."""
        host_tiles, _ = self._tiles_for(outs[0].pool.shape[1])
        work = row_shares([start for start, _ in segments], [n for _, n in segments], host_tiles.shape[0],
                          self._target_blocks)
        return np.array([out.slot for out in outs], np.int64)[:, None], work

    def _build_from(self, rows, plan, n_segments: int, n_work: int, outs: list[DeviceHistogram]) -> None:
        """The histograms of a plan on the GPU (_histogram_plan's, uploaded) into the slots ``outs``."""
        kernels, target, width = self.kernels, outs[0].pool.arena, outs[0].pool.shape[1]
        _, device_tiles = self._tiles_for(width)
        zero_blocks = 1 if self._simulator else kernels.blocks_for(n_segments * self.total_bins * width)
        kernels.zero_slots[zero_blocks, self._threads](target, plan, n_segments, self.total_bins)
        if n_work:
            kernels.histogram_tiles[min(n_work, kernels.MAX_WORK_BLOCKS), self._tile_threads](
                self._binned, self._dense_base, rows, self._stats, device_tiles, plan, n_segments,
                self.total_bins, target)

    def _totals(self, rows, segment: tuple[int, int], hist: DeviceHistogram, total: np.ndarray) -> None:
        """OUT total: the sums of the first dense column's bins of a device histogram (every row falls in one
        of them; kernels.histogram.totals_from_dense), or of the rows themselves without a dense column."""
        store = self.store
        if store.dense.shape[1] == 0:
            start, count = segment
            total[:] = self._stats.copy_to_host()[rows.copy_to_host()[start:start + count]].sum(axis=0, dtype=HIST)
            return
        feature = int(np.flatnonzero(store.offsets[:-1] == store.dense_base[0])[0])
        first = hist.slot * self.total_bins
        bins = hist.pool.arena[first + store.offsets[feature]:first + store.offsets[feature + 1]].copy_to_host()
        total[:] = bins.sum(axis=0)

    def _tiles_for(self, width: int):
        """(host tiles, device tiles) of histogram_tiles for ``width`` statistics."""
        if width not in self._tiles:
            tiles = histogram_tiles_of(self.store.dense_base, self.total_bins, width, self.kernels.TILE_CELLS)
            if tiles is None:  # dense_store lays columns out in order, at most 256 bins each
                raise ValueError("device_type='cuda' needs the dense columns' bins in column order, each column "
                                 f"at most {self.kernels.TILE_CELLS} bins")
            self._tiles[width] = (tiles, self.cuda.to_device(tiles))
        return self._tiles[width]

    def _partition(self, rows, segments: list[tuple[int, int]], requests: Sequence[SplitRequest]) -> list[int]:
        """Reorder each segment of rows into its split's left rows then its right ones, all in one launch per
        step; return each segment's left count, read back."""
        work = self.work([start for start, _ in segments], [n for _, n in segments])
        if work.shape[0] == 0:
            return [0] * len(segments)
        rules, categories = self._rules(segments, requests, None)
        plan = self._plan("partition_plan", rules, work)
        self._launch_partition(rows, plan, len(segments), work.shape[0], categories)
        return [int(k) for k in plan[:len(segments)].copy_to_host()[:, self.kernels.RULE_N_LEFT]]

    def _partition_and_build(self, segments: list[tuple[int, int]], requests: Sequence[SplitRequest],
                             n_lefts: list[int], children: list[tuple[int, int]],
                             child_outs: list[DeviceHistogram]) -> None:
        """The partition of the tree's rows by the grower's counts of left rows ``n_lefts`` (checked on the GPU:
        _check_counts), then the histograms of the ``children`` segments into ``child_outs``; both plans in one
        copy to the GPU (_plans), nothing read back."""
        work = self.work([start for start, _ in segments], [n for _, n in segments])
        if work.shape[0] == 0 and not children:
            return
        rules, categories = self._rules(segments, requests, n_lefts)
        parts = [(rules, work)] + ([self._histogram_plan(children, child_outs)] if children else [])
        plans = self._plans("split_plans", parts)
        if work.shape[0]:
            self._launch_partition(self._rows, plans[0], len(segments), work.shape[0], categories)
            self._unchecked = True
        if children:
            self._build_from(self._rows, plans[1], len(children), parts[1][1].shape[0], child_outs)

    def _launch_partition(self, rows, plan, n_segments: int, n_work: int, categories: np.ndarray) -> None:
        """The partition kernels over an uploaded plan (_rules' rules, then ``n_work`` work items) and the set
        splits' ``categories`` (_rules)."""
        kernels = self.kernels
        categories = self.upload("categories", categories) if categories.shape[0] else self._no_categories
        share_left = self.scratch("share_left", (n_work,), np.int64)  # count_sides writes every item's
        blocks = min(n_work, kernels.MAX_WORK_BLOCKS)
        kernels.count_sides[blocks, self._threads](
            self._binned, rows, plan, n_segments, categories, self._goes_left, share_left)
        kernels.scatter_sides[blocks, self._threads](rows, plan, n_segments, self._goes_left, share_left, self._tmp,
                                                     self._mismatch)
        kernels.copy_shares[blocks, self._threads](self._tmp, rows, plan, n_segments)

    def _rules(self, segments: list[tuple[int, int]], requests: Sequence[SplitRequest],
               expected: list[int] | None) -> tuple[np.ndarray, np.ndarray]:
        """(the partition's rules, a row a segment in kernels.cuda's RULE_* columns; the set splits' categories,
        one after the other, which RULE_SET_FIRST and RULE_SET_END index)."""
        store = self.store
        split_rules = [req.rule() for req in requests]
        sets = [rule.categories for rule in split_rules]
        set_edges = np.concatenate([[0], np.cumsum([c.shape[0] for c in sets])]).astype(np.int64)
        features = np.array([rule.feature for rule in split_rules], np.int64)
        rules = np.stack([np.array([start for start, _ in segments], np.int64),
                          store.feature_slot[features].astype(np.int64),
                          np.array([rule.threshold_bin for rule in split_rules], np.int64),
                          store.missing_bin[features].astype(np.int64),
                          np.array([rule.default_left for rule in split_rules], np.int64),
                          set_edges[:-1], set_edges[1:], np.zeros(len(segments), np.int64),
                          np.full(len(segments), -1, np.int64) if expected is None else
                          np.array(expected, np.int64)], axis=1)
        return rules, np.concatenate(sets).astype(np.bool_)

    def _check_counts(self) -> None:
        """Raise RuntimeError where a partition since the last check counted other left rows than the host took
        for it (_split): the tree's leaves would not hold their histograms' rows.  Once a tree, before its rows
        are read (one small copy back)."""
        if not self._unchecked:
            return
        self._unchecked = False
        if int(self._mismatch.copy_to_host()[0]):
            self._mismatch.copy_to_device(np.zeros(1, np.int64))
            raise RuntimeError("device_type='cuda': a partition sent other rows left than its histogram counted; the "
                               "tree is not kept (a bug of the CUDA builder: please report it with the parameters)")

    def _plan(self, key: str, head: np.ndarray, work: np.ndarray):
        """A launch step's plan (kernels.cuda): the rows of ``head`` (one a segment), then the work items, in one
        int64 array uploaded at once."""
        return self._plans(key, [(head, work)])[0]

    def _plans(self, key: str, parts: list[tuple[np.ndarray, np.ndarray]]) -> list:
        """The plans of several launch steps ((head, work) each, as _plan), one after the other in one int64 array
        uploaded at once (a copy to the GPU waits for its earlier work): a view of each."""
        width = max(max(head.shape[1], work.shape[1]) for head, work in parts)
        sizes = [head.shape[0] + work.shape[0] for head, work in parts]
        plans = np.zeros((sum(sizes), width), np.int64)
        row = 0
        for head, work in parts:
            plans[row:row + head.shape[0], :head.shape[1]] = head
            plans[row + head.shape[0]:row + head.shape[0] + work.shape[0], :work.shape[1]] = work
            row += head.shape[0] + work.shape[0]
        uploaded = self.upload(key, plans)
        bounds = np.cumsum([0, *sizes])
        return [uploaded[first:end] for first, end in zip(bounds[:-1], bounds[1:])]

