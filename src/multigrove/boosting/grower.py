"""Grow one tree from per-row statistics: leaf-wise (best-first) or depth-wise.

Driver code in Python, every loop over rows or bins in a Numba kernel.  The histogram of the
smaller child is built; the larger child's is the parent's minus it, computed in the
parent's buffer (LightGBM's subtraction trick), so each tree keeps at most one histogram per
open leaf.  Buffers come from a pool that outlives the tree.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from .._dtypes import HIST, INDEX
from ..kernels.histogram import (build_histogram_blocks, build_histogram_rows, build_histogram_serial,
                                 subtract_histogram)
from ..kernels.partition import partition_rows, partition_rows_parallel
from ..kernels.split import best_split_per_feature, best_split_per_feature_serial, left_sums, node_score
from .leaves import StatLayout


@dataclasses.dataclass(frozen=True)
class GrowerConfig:
    num_leaves: int = 31
    max_depth: int = -1
    min_data_in_leaf: int = 20
    min_sum_hessian_in_leaf: float = 1e-3
    lambda_l2: float = 0.0
    min_gain_to_split: float = 0.0
    growth_policy: str = "leafwise"
    n_threads: int = 2
    topk: int = 0               # > 0: score splits for leaves keeping their top-k outputs
    restricted: bool = False    # with topk: GBDT-MO Alg. 4 (shared outputs) instead of Alg. 3


#: widest statistic matrix for which per-thread private histograms (row chunks) pay off
ROW_CHUNK_MAX_COLS = 3
#: nodes with fewer rows are partitioned on one thread
PARALLEL_PARTITION_MIN_ROWS = 16384
#: below this many cell updates a kernel runs on one thread (a parallel region costs ~10-50 us)
PARALLEL_MIN_WORK = 200_000
#: split scans over fewer (bins x outputs) run on one thread
PARALLEL_MIN_SCAN = 4096


class HistogramPool:
    """Reusable histogram buffers of one shape."""

    def __init__(self, n_bins: int, n_cols: int):
        self.shape = (n_bins, n_cols)
        self._free: list[np.ndarray] = []

    def get(self) -> np.ndarray:
        return self._free.pop() if self._free else np.empty(self.shape, dtype=HIST)

    def put(self, buf: np.ndarray | None) -> None:
        if buf is not None:
            self._free.append(buf)


class _Leaf:
    __slots__ = ("index", "start", "end", "depth", "total", "hist", "gain", "feature", "bin",
                 "default_left", "parent", "is_left")

    def __init__(self, index, start, end, depth, total, parent, is_left):
        self.index, self.start, self.end, self.depth = index, start, end, depth
        self.total, self.parent, self.is_left = total, parent, is_left
        self.hist = None
        self.gain = -np.inf
        self.feature = self.bin = -1
        self.default_left = False

    @property
    def count(self) -> int:
        return self.end - self.start


@dataclasses.dataclass
class GrownTree:
    """Structure of a grown tree plus what the engine needs to finish it."""
    split_feature: np.ndarray
    threshold_bin: np.ndarray
    default_left: np.ndarray
    left_child: np.ndarray
    right_child: np.ndarray
    split_gain: np.ndarray
    internal_count: np.ndarray
    leaf_sums: np.ndarray       # (n_leaves, C) statistic sums of each leaf
    leaf_start: np.ndarray      # leaf l holds rows[leaf_start[l]:leaf_end[l]]
    leaf_end: np.ndarray
    rows: np.ndarray


class TreeGrower:
    """Grow trees on one binned matrix; reuses its buffers from tree to tree."""

    def __init__(self, binned: np.ndarray, hist_offsets: np.ndarray, missing_bin: np.ndarray,
                 layout: StatLayout, config: GrowerConfig, pool: HistogramPool | None = None):
        self.binned = binned
        self.binned_col = np.asfortranarray(binned)  # partition reads one feature of many rows
        self.offsets = hist_offsets
        self.missing_bin = missing_bin
        self.layout = layout
        self.cfg = config
        self.pool = pool or HistogramPool(int(hist_offsets[-1]), layout.n_cols)
        n_features = binned.shape[1]
        self._gain = np.empty(n_features, dtype=np.float64)
        self._bin = np.empty(n_features, dtype=np.int32)
        self._dleft = np.empty(n_features, dtype=np.bool_)
        self._tmp = np.empty(binned.shape[0], dtype=INDEX)
        self._counts = np.empty(max(config.n_threads, 1), dtype=np.int64)
        self._scratch = (np.empty((max(config.n_threads, 1), int(hist_offsets[-1]), layout.n_cols), dtype=HIST)
                         if layout.n_cols <= ROW_CHUNK_MAX_COLS else None)

    # ------------------------------------------------------------------ public
    def grow(self, stats: np.ndarray, rows: np.ndarray | None = None,
             feature_mask: np.ndarray | None = None) -> GrownTree:
        cfg = self.cfg
        n = self.binned.shape[0]
        rows = np.arange(n, dtype=INDEX) if rows is None else np.ascontiguousarray(rows, dtype=INDEX)
        self._mask = np.ones(self.binned.shape[1], dtype=np.bool_) if feature_mask is None else feature_mask
        self._stats = stats
        self._rows = rows
        self._nodes: list[tuple] = []  # (feature, bin, default_left, gain, count)
        self._children: list[list[int]] = []

        root = _Leaf(0, 0, rows.shape[0], 0, None, -1, False)
        root.hist = self._build(root)
        f0, f1 = self.offsets[0], self.offsets[1]
        root.total = root.hist[f0:f1].sum(axis=0)
        leaves = [root]
        self._evaluate(root)

        if cfg.growth_policy == "leafwise":
            while len(leaves) < cfg.num_leaves:
                best = max(leaves, key=lambda lf: lf.gain)
                if not np.isfinite(best.gain):
                    break
                leaves.append(self._split(best, len(leaves), last=len(leaves) + 1 == cfg.num_leaves))
        else:
            frontier = [root]
            while frontier and len(leaves) < cfg.num_leaves:
                nxt = []
                for leaf in sorted(frontier, key=lambda lf: -lf.gain):
                    if not np.isfinite(leaf.gain) or len(leaves) >= cfg.num_leaves:
                        break
                    right = self._split(leaf, len(leaves), last=len(leaves) + 1 == cfg.num_leaves)
                    leaves.append(right)
                    nxt += [leaf, right]
                for leaf in frontier:
                    if leaf not in nxt:
                        self.pool.put(leaf.hist)
                        leaf.hist = None
                frontier = nxt
        for leaf in leaves:
            self.pool.put(leaf.hist)
            leaf.hist = None
        return self._finish(leaves)

    # ------------------------------------------------------------------ internals
    def _build(self, leaf: _Leaf) -> np.ndarray:
        hist = self.pool.get()
        rows = self._rows[leaf.start:leaf.end]
        if self.cfg.n_threads == 1 or rows.shape[0] * self.binned.shape[1] * self.layout.n_cols < PARALLEL_MIN_WORK:
            build_histogram_serial(self.binned, rows, self._stats, self.offsets, hist)
        elif self._scratch is not None:
            build_histogram_rows(self.binned, rows, self._stats, self.offsets, self._scratch, hist)
        else:
            build_histogram_blocks(self.binned, rows, self._stats, self.offsets, self.cfg.n_threads, hist)
        return hist

    def _can_split(self, leaf: _Leaf) -> bool:
        cfg = self.cfg
        if cfg.max_depth > 0 and leaf.depth >= cfg.max_depth:
            return False
        return leaf.count >= 2 * cfg.min_data_in_leaf

    def _evaluate(self, leaf: _Leaf) -> None:
        leaf.gain = -np.inf
        if leaf.hist is None or not self._can_split(leaf):
            return
        cfg, lay = self.cfg, self.layout
        parallel = cfg.n_threads > 1 and leaf.hist.shape[0] * lay.k >= PARALLEL_MIN_SCAN
        scan = best_split_per_feature if parallel else best_split_per_feature_serial
        scan(leaf.hist, self.offsets, leaf.total, lay.k, lay.h_col, lay.h_stride, lay.h_scale, lay.count_col,
             self._mask, cfg.lambda_l2, cfg.min_data_in_leaf, cfg.min_sum_hessian_in_leaf, cfg.topk,
             cfg.restricted, self._gain, self._bin, self._dleft)
        f = int(np.argmax(self._gain))
        if not np.isfinite(self._gain[f]):
            return
        gain = float(self._gain[f] - node_score(leaf.total, lay.k, lay.h_col, lay.h_stride, lay.h_scale,
                                                cfg.lambda_l2, cfg.topk))
        if gain <= cfg.min_gain_to_split:
            return
        leaf.gain, leaf.feature, leaf.bin = gain, f, int(self._bin[f])
        leaf.default_left = bool(self._dleft[f])

    def _split(self, leaf: _Leaf, new_index: int, last: bool) -> _Leaf:
        """Split leaf in place (it becomes the left child); return the new right child."""
        f, t = leaf.feature, leaf.bin
        miss = int(self.missing_bin[f])
        hist = leaf.hist
        has_missing = hist[self.offsets[f] + miss, self.layout.count_col] > 0
        left_total = np.empty_like(leaf.total)
        left_sums(hist, self.offsets, f, t, leaf.default_left, left_total)
        right_total = leaf.total - left_total
        default_left = leaf.default_left
        if not has_missing:  # no missing value seen here: send future ones to the larger side
            default_left = left_total[self.layout.count_col] >= right_total[self.layout.count_col]
        if leaf.count >= PARALLEL_PARTITION_MIN_ROWS and self.cfg.n_threads > 1:
            n_left = partition_rows_parallel(self._rows, leaf.start, leaf.end, self.binned_col, f, t, miss,
                                             leaf.default_left, self.cfg.n_threads, self._tmp, self._counts)
        else:
            n_left = partition_rows(self._rows, leaf.start, leaf.end, self.binned_col, f, t, miss,
                                    leaf.default_left, self._tmp)
        node = len(self._nodes)
        self._nodes.append((f, t, default_left, leaf.gain, leaf.count))
        self._children.append([~leaf.index, ~new_index])
        if leaf.parent >= 0:
            self._children[leaf.parent][0 if leaf.is_left else 1] = node

        mid = leaf.start + n_left
        right = _Leaf(new_index, mid, leaf.end, leaf.depth + 1, right_total, node, False)
        leaf.start, leaf.end, leaf.depth, leaf.total = leaf.start, mid, leaf.depth + 1, left_total
        leaf.parent, leaf.is_left = node, True
        left = leaf
        leaf.hist = None
        small, large = (left, right) if left.count <= right.count else (right, left)
        if last or not (self._can_split(small) or self._can_split(large)):
            self.pool.put(hist)
            left.gain = right.gain = -np.inf
            return right
        small.hist = self._build(small)
        if self._can_split(large):
            if hist.size >= PARALLEL_MIN_WORK:
                subtract_histogram(hist, small.hist, hist)
            else:  # small: not worth a parallel region
                np.subtract(hist, small.hist, out=hist)
            large.hist = hist
        else:
            self.pool.put(hist)
        self._evaluate(left)
        self._evaluate(right)
        return right

    def _finish(self, leaves: list[_Leaf]) -> GrownTree:
        leaves = sorted(leaves, key=lambda lf: lf.index)
        m = len(self._nodes)
        nodes = self._nodes
        return GrownTree(
            split_feature=np.array([x[0] for x in nodes], dtype=np.int32),
            threshold_bin=np.array([x[1] for x in nodes], dtype=np.int32),
            default_left=np.array([x[2] for x in nodes], dtype=np.bool_),
            left_child=np.array([c[0] for c in self._children], dtype=np.int32).reshape(m),
            right_child=np.array([c[1] for c in self._children], dtype=np.int32).reshape(m),
            split_gain=np.array([x[3] for x in nodes], dtype=np.float64),
            internal_count=np.array([x[4] for x in nodes], dtype=np.int64),
            leaf_sums=np.array([lf.total for lf in leaves]),
            leaf_start=np.array([lf.start for lf in leaves], dtype=np.int64),
            leaf_end=np.array([lf.end for lf in leaves], dtype=np.int64),
            rows=self._rows,
        )
