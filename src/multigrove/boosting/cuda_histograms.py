"""The grower's histograms kept on the GPU, and its split scans run there (``device_type="cuda"``).

``CudaBuilder.device_histograms`` hands the grower (``grower.py``) a ``DeviceHistograms``: its histogram pool
then lends slots of a device arena instead of host arrays, the builder builds each requested histogram into
its slot, and the grower's histogram operations go to the kernels of ``kernels/cuda_scan.py``: the scans of a
split's children (or of a whole depth-wise level) in three launches, the subtraction of the smaller child
fused into them, and for symmetric trees the level's summed gains, the chosen split's left sums and the
subtractions.  The host sends each batch's node table (slots, sums, masks) and receives one row of results a
node: the best split, the left child's sums, the features still worth scanning.  No histogram crosses.

Numeric splits and the set splits of categorical features (``kernels/cuda_categorical.py``), dense and top-k
sparse leaves (GBDT-MO's Alg. 3 and 4): every scan of the grower runs here.  (A grower scoring candidates with
a ``CandidateScorer``, for sparse-output objectives, keeps host histograms; those objectives refuse
``device_type="cuda"``.)
"""
from __future__ import annotations

from typing import NamedTuple, Sequence

import numpy as np

from .._dtypes import HIST

#: slots of a fresh arena (doubled whenever every slot is lent)
INITIAL_SLOTS = 8


class DeviceSplits(NamedTuple):
    """The results of a scan on the device, one entry (row) a node: as split.NodeSplits, with the features
    each node's children must scan and whether the chosen feature has missing values in the node."""
    gain: np.ndarray           # (n,) float64: over the node, -inf when no split passes the limits
    feature: np.ndarray        # (n,) int64 (-1: none)
    threshold_bin: np.ndarray  # (n,) int64
    default_left: np.ndarray   # (n,) bool
    has_missing: np.ndarray    # (n,) bool: the feature's missing bin has rows in the node
    left_sums: np.ndarray      # (n, C) float64: the left child's sums (where the gain is finite)
    splittable: np.ndarray     # (n, F) bool: as split.FeatureSplits.splittable
    left_bins: np.ndarray      # (n, B) bool: a set split's categories going left (threshold_bin -1); B is 0
    #                            without categorical features


class DeviceHistogram:
    """A histogram of the grower held in slot ``slot`` of ``pool``'s arena (rows slot * total_bins ...)."""

    __slots__ = ("pool", "slot")

    def __init__(self, pool: "DeviceHistogramPool", slot: int):
        self.pool, self.slot = pool, slot


class DeviceHistogramPool:
    """``grower.HistogramPool``'s protocol (get, put, has_free, allocated, shape) over the slots of one
    device arena of (slots x total_bins, C) float64; when every slot is lent, the arena doubles (its rows
    copied on the device), and the slots lent keep their numbers."""

    def __init__(self, cuda, total_bins: int, n_cols: int):
        self.cuda = cuda
        self.total_bins = max(int(total_bins), 1)
        self.shape = (int(total_bins), int(n_cols))
        self.arena = None
        self._free: list[DeviceHistogram] = []
        self.allocated = 0

    @property
    def has_free(self) -> bool:
        return bool(self._free)

    def get(self) -> DeviceHistogram:
        if self._free:
            return self._free.pop()
        if self.arena is None or (self.allocated + 1) * self.total_bins > self.arena.shape[0]:
            self._grow()
        self.allocated += 1
        return DeviceHistogram(self, self.allocated - 1)

    def put(self, hist: DeviceHistogram | None) -> None:
        if hist is not None:
            self._free.append(hist)

    def _grow(self) -> None:
        old = self.arena
        slots = INITIAL_SLOTS if old is None else 2 * (old.shape[0] // self.total_bins)
        arena = self.cuda.device_array((slots * self.total_bins, self.shape[1]), HIST)
        if old is not None:
            arena[:old.shape[0]].copy_to_device(old)
        self.arena = arena


class DeviceHistograms:
    """The histogram operations of the grower on a CUDA builder's device (see the module docstring)."""

    def __init__(self, builder):
        from ..kernels import cuda_categorical, cuda_scan
        self.builder, self.cuda, self.kernels, self.categorical_kernels = builder, builder.cuda, cuda_scan, \
            cuda_categorical
        offsets = np.asarray(builder.store.offsets, np.int64)
        self.total_bins = int(builder.total_bins)
        self.n_features = offsets.shape[0] - 1
        self._offsets = self.cuda.to_device(offsets)
        self._bin_feature = self.cuda.to_device(
            np.repeat(np.arange(self.n_features, dtype=np.int64), np.diff(offsets)))
        self._pools: dict[int, DeviceHistogramPool] = {}
        self._params: dict[tuple, object] = {}
        self._categorical: dict[int, tuple] = {}  # id of a CategoricalScan -> (it, its device arrays)
        self._numeric_only = None  # the device arrays of a scan without categorical features
        self._threads = 16 if builder._simulator else cuda_scan.SCAN_THREADS
        self._max_blocks = 1 if builder._simulator else 4096
        self._host_out = None
        self._level = None  # the last level_gains call's (node table, number of nodes): split_sums reads it

    def pool(self, n_cols: int) -> DeviceHistogramPool:
        """The pool of histograms of ``n_cols`` statistic columns, made on first use."""
        if n_cols not in self._pools:
            self._pools[n_cols] = DeviceHistogramPool(self.cuda, self.total_bins, n_cols)
        return self._pools[n_cols]

    # ------------------------------------------------------------------ the grower's operations
    def scan(self, params, hists: Sequence[DeviceHistogram], minus: Sequence[DeviceHistogram | None],
             active: Sequence[bool], totals: np.ndarray, masks: np.ndarray, noise: np.ndarray | None,
             categorical=None) -> DeviceSplits:
        """Scan the nodes of a batch: node i's histogram is ``hists[i]`` (minus ``minus[i]`` first, in place,
        where given), its sums totals[i], its features masks[i]; an inactive node is subtracted but not
        scanned.  ``categorical``: the grower's CategoricalScan (None: every feature numeric).  Returns each
        node's best split (kernels.cuda_scan.choose_splits)."""
        kernels, n = self.kernels, len(hists)
        table, arena = self._node_table(hists, minus, active, totals, masks, noise)
        width = arena.shape[1]
        params_d = self._params_of(params)
        cat_slot, cat_features, cat_params, max_bins = self._categorical_arrays(categorical)
        prefix, scores, count_ok, heaps = self._candidates(arena, table, params, params_d, n, cat_slot)
        cat_gain, cat_ok, cat_left = self._set_scores(arena, table, params, params_d, n, categorical, cat_features,
                                                      cat_params, max_bins)
        feature_best = self.builder.scratch("scan_feature_best", (n, self.n_features), np.float64)
        feature_where = self.builder.scratch("scan_feature_where", (n, self.n_features), np.int64)
        n_out = kernels.OUT_LEFT_SUMS + width + self.n_features + max_bins
        out = self.builder.scratch("scan_out", (n, n_out), np.float64)
        kernels.choose_splits[min(n, 65535), self._threads](
            arena, prefix, table, self._offsets, params_d, n, scores, count_ok, heaps, cat_slot, cat_gain, cat_ok,
            cat_left, feature_best, feature_where, out)
        if self._host_out is None or self._host_out.shape[0] < n or self._host_out.shape[1] != n_out:
            self._host_out = self.cuda.pinned_array((max(2 * n, 2), n_out), np.float64)
        host = self._host_out[:n]
        out.copy_to_host(host)
        return DeviceSplits(host[:, kernels.OUT_GAIN].copy(), host[:, kernels.OUT_FEATURE].astype(np.int64),
                            host[:, kernels.OUT_BIN].astype(np.int64), host[:, kernels.OUT_DEFAULT_LEFT] != 0,
                            host[:, kernels.OUT_HAS_MISSING] != 0,
                            host[:, kernels.OUT_LEFT_SUMS:kernels.OUT_LEFT_SUMS + width].copy(),
                            host[:, kernels.OUT_LEFT_SUMS + width:n_out - max_bins] != 0,
                            host[:, n_out - max_bins:] != 0)

    def level_gains(self, params, hists: Sequence[DeviceHistogram], totals: np.ndarray, mask: np.ndarray,
                    out: np.ndarray) -> None:
        """OUT out (2, total_bins): each candidate's gain summed over the level's nodes (hists, totals) over the
        features of ``mask`` (kernels.cuda_scan.level_gains; split.add_split_gains on the host)."""
        n = len(hists)
        masks = np.broadcast_to(np.asarray(mask, np.float64), (n, self.n_features))
        table, arena = self._node_table(hists, [None] * n, [True] * n, totals, masks, None)
        params_d = self._params_of(params)
        _, scores, _, heaps = self._candidates(arena, table, params, params_d, n, self._categorical_arrays(None)[0])
        parent_scores = self.builder.scratch("scan_node_scores", (n,), np.float64)
        self._grid(self.kernels.node_scores, n, table, params_d, n, heaps, parent_scores)  # after the scores
        gains = self.builder.scratch("level_gains", (2, self.total_bins), np.float64)
        self._grid(self.kernels.level_gains, 2 * self.total_bins, self._offsets, n, scores, parent_scores, gains)
        gains.copy_to_host(out)
        self._level = (table, n, arena)

    def split_sums(self, feature: int, threshold_bin: int, default_left: bool) -> np.ndarray:
        """The left sums (n, C) of the level of the last ``level_gains`` call under one split."""
        table, n, arena = self._level
        offsets = self.builder.store.offsets
        prefix = self.builder.scratch("scan_prefix", (n * self.total_bins, arena.shape[1]), HIST)
        out = self.builder.scratch("split_sums", (n, arena.shape[1]), HIST)
        self._grid(self.kernels.split_sums, n * arena.shape[1], arena, prefix, table, n, self.total_bins,
                   int(offsets[feature]) + int(threshold_bin), int(offsets[feature + 1]) - 1, int(default_left), out)
        return out.copy_to_host()

    def subtract(self, pairs: Sequence[tuple[DeviceHistogram, DeviceHistogram]]) -> None:
        """For each (hist, minus): hist -= minus, on the device (one launch)."""
        if not pairs:
            return
        arena = pairs[0][0].pool.arena
        slots = self.builder.upload("subtract_pairs", np.array([(a.slot, b.slot) for a, b in pairs], np.int64))
        self._grid(self.kernels.subtract_slots, len(pairs) * self.total_bins * arena.shape[1], arena, slots,
                   self.total_bins)

    # ------------------------------------------------------------------ helpers
    def _node_table(self, hists, minus, active, totals, masks, noise):
        """(node table, arena): the table on the device, in one upload (kernels.cuda_scan's NODE_* columns)."""
        kernels = self.kernels
        n, n_cols = len(hists), hists[0].pool.shape[1]
        mask_col = kernels.NODE_TOTALS + n_cols
        table = np.empty((n, mask_col + self.n_features * (1 if noise is None else 2)))
        table[:, kernels.NODE_SLOT] = [h.slot for h in hists]
        table[:, kernels.NODE_MINUS] = [-1 if m is None else m.slot for m in minus]
        table[:, kernels.NODE_ACTIVE] = np.asarray(active, np.float64)
        table[:, kernels.NODE_TOTALS:mask_col] = totals
        table[:, mask_col:mask_col + self.n_features] = masks
        if noise is not None:
            table[:, mask_col + self.n_features:] = noise
        return self.builder.upload("scan_nodes", table), hists[0].pool.arena

    def _candidates(self, arena, table, params, params_d, n: int, cat_slot):
        """Launch subtract_and_prefix and threshold_scores over n nodes; (prefix, scores, count_ok, the top-k
        heaps' scratch, free again once threshold_scores is done)."""
        kernels, width = self.kernels, arena.shape[1]
        prefix = self.builder.scratch("scan_prefix", (n * self.total_bins, width), HIST)
        self._grid(kernels.subtract_and_prefix, n * self.n_features * width, arena, table, self._offsets, n, prefix)
        n_candidates = n * 2 * self.total_bins
        scores = self.builder.scratch("scan_scores", (n_candidates,), np.float64)
        count_ok = self.builder.scratch("scan_count_ok", (n_candidates,), np.uint8)
        vector = kernels.scan_parameters(params)
        heaps = self.builder.scratch("scan_heaps", (kernels.heap_cells(vector, n_candidates),), np.float64)
        self._grid(kernels.threshold_scores, n_candidates, arena, prefix, table, self._offsets, self._bin_feature,
                   cat_slot, params_d, n, heaps, scores, count_ok)
        return prefix, scores, count_ok, heaps

    def _set_scores(self, arena, table, params, params_d, n: int, categorical, cat_features, cat_params,
                    max_bins: int):
        """Launch cuda_categorical.categorical_scores over the n nodes' categorical features; (cat_gain, cat_ok,
        cat_left), placeholders without categorical features."""
        if categorical is None:
            return self._numeric_only[1:]
        kernels = self.categorical_kernels
        n_tasks = n * cat_features.shape[0]
        vector = self.kernels.scan_parameters(params)
        with_cat_l2 = params._replace(lambda_l2=params.lambda_l2 + categorical.cat_l2)
        heaps = self.builder.scratch("set_heaps", (self.kernels.heap_cells(vector, n_tasks),), np.float64)
        acc = self.builder.scratch("set_sums", (n_tasks, arena.shape[1]), np.float64)
        work = self.builder.scratch("set_work", (n_tasks, kernels.work_columns(params.k, max_bins)), np.float64)
        cat_gain = self.builder.scratch("set_gain", (n, cat_features.shape[0]), np.float64)
        cat_ok = self.builder.scratch("set_ok", (n, cat_features.shape[0]), np.uint8)
        cat_left = self.builder.scratch("set_left", (n, cat_features.shape[0], max_bins), np.uint8)
        self._grid(kernels.categorical_scores, n_tasks, arena, table, self._offsets, params_d,
                   self._params_of(with_cat_l2), cat_params, cat_features, n, heaps, acc, work, cat_gain, cat_ok,
                   cat_left)
        return cat_gain, cat_ok, cat_left

    def _categorical_arrays(self, categorical):
        """(cat_slot, cat_features, cat_params, max bins + 1) on the device for a CategoricalScan (made once
        each), or for none (cat_slot all -1, max bins 0)."""
        if categorical is None:
            if self._numeric_only is None:
                none = self.cuda.to_device(np.full(self.n_features, -1, np.int64))
                self._numeric_only = (none, self.cuda.to_device(np.full((1, 1), -np.inf)),
                                      self.cuda.to_device(np.zeros((1, 1), np.uint8)),
                                      self.cuda.to_device(np.zeros((1, 1, 1), np.uint8)))
            return self._numeric_only[0], None, None, 0
        entry = self._categorical.get(id(categorical))
        if entry is None or entry[0] is not categorical:
            slot = np.asarray(categorical.slot, np.int64)
            entry = self._categorical[id(categorical)] = (
                categorical, self.cuda.to_device(slot), self.cuda.to_device(np.flatnonzero(slot >= 0).astype(np.int64)),
                self.cuda.to_device(np.array(self.categorical_kernels.categorical_parameters(categorical))),
                int(categorical.left.shape[2]))
        return entry[1:]

    def _grid(self, kernel, n_items: int, *args) -> None:
        """Launch a grid-stride kernel over n_items."""
        blocks = max(1, min(self._max_blocks, -(-n_items // self._threads)))
        kernel[blocks, self._threads](*args)

    def _params_of(self, params):
        """The device copy of a ScanParams' vector (kernels.cuda_scan.scan_parameters), made once."""
        key = tuple(params)
        if key not in self._params:
            self._params[key] = self.cuda.to_device(np.array(self.kernels.scan_parameters(params), np.float64))
        return self._params[key]
