"""Grow one tree from histograms: leaf-wise (best-first, GBDT-MO Alg. 5), depth-wise or symmetric.

The grower never touches a row: a ``HistogramBuilder`` (``builder.py``) gives it the root's
histogram and, at every split, partitions the rows and returns the histogram of the smaller
child.  The larger child's histogram is the parent's minus it, computed in the parent's buffer
(LightGBM's subtraction trick).  The grower hands the builder, with each split, the scan of both
children (``ChildScan``: the subtraction and both scans, one kernel call); the local builder runs it
inside the split's own call where it builds the child by feature groups (``kernels.split_step``), and
any other builder after the histogram.  Depth-wise growth sends the splits of a whole level to the
builder at once, so a distributed builder pays one round trip per level.  A builder that offers
``device_histograms`` (the GPU's) keeps the histograms: the grower's buffers are then its device slots, and
its scans, subtractions and symmetric levels run through it, a batch of nodes at a time (``_scan_on_device``).

Symmetric (oblivious) growth, CatBoost's tree shape, splits every node of a level by the one (feature,
threshold, missing direction) whose gain summed over the level is largest: 2^depth leaves, a strong
regulariser on small data, and a tree a row descends by ``depth`` comparisons whose results form its leaf's
number (``Tree.oblivious``).

``random_strength`` adds Gaussian noise to the scores that choose a split (CatBoost's idea: a
near-tie between candidates is decided at random, which decorrelates the trees).  Its scale is the
gain a split on pure noise would have: ``sum_i ||g_i||^2 / H`` (H: the node's Hessian sum per
output), which is what a threshold drawn at random gains when the gradients carry no signal; it
shrinks with the gradients as training converges.  Leaf-wise and depth-wise growth add one draw to
each feature's best score (the feature is chosen with noise, its threshold without); symmetric
growth adds one to every candidate's summed score, scaled by the nodes of the level.

A leaf keeps its histogram until it splits (the subtraction needs it): up to num_leaves histograms
of total_bins x C each, which on tens of thousands of sparse features reaches hundreds of MB.  With
``histogram_pool_bytes`` (``histogram_pool_size``) leaf-wise growth keeps at most that many bytes: past
it the histogram of the leaf of lowest gain (the least likely to split next) is given up, and should
that leaf split after all the builder builds its histogram again from its rows (``histograms``).  The
histograms, hence the trees, are the same; only time moves.  Depth-wise and symmetric growth split a
level's leaves together and keep all of theirs.

Statistics too wide for histograms (a sparse-output objective whose splits are scored on every label,
GBDT-Sparse eq. 20) come with a ``CandidateScorer``: the builder's histograms then hold only the
Hessian and count columns (for the children's sizes and the missing-value direction), and the scorer
gives the gain of every candidate threshold of a leaf from the leaf's rows.  Growth is unchanged.
"""
from __future__ import annotations

import dataclasses
import heapq
import math
from typing import Protocol

import numpy as np

from .._dtypes import HIST
from ..kernels._variants import EntryPoints, pick
from ..kernels.split import (
    CategoricalScan,
    FeatureSplits,
    NodeSplits,
    ScanParams,
    add_split_gains,
    add_split_gains_serial,
    best_splits_kernel,
    left_sums,
    node_score,
    scan_scratch,
)
from ..kernels.split_step import ScanBatch, ScanJob
from .builder import BUILD_LEFT, BUILD_NONE, BUILD_RIGHT, HistogramBuilder, SplitRequest
from .leaves import StatLayout

#: histogram_pool_size never keeps fewer histograms than this (a split needs its parent's and one more)
MIN_POOL_HISTOGRAMS = 2
#: leaf-wise growth looks at most this many leaves in turn for each split it makes ahead of its turn
#: (TreeGrower._next_in_turn): rf1's trees, whose large leaves come first, looked through up to 127 a split
AHEAD_LOOKS_PER_SPLIT = 4
#: leaf-wise growth splits ahead of their turn only leaves ranked (by gain, among the leaves not split yet) within this
#: share of the splits left in the tree.  Each split in turn adds two children, which often outrank the leaves
#: waiting: of Otto's leaves split ahead from ranks in the top quarter of the splits left 90 % had their turn, from
#: the second quarter 60 %, from the second half 23 % and 3 % (16 splits ahead).  At 0.4 instead of the whole
#: share, Otto's trees made 11.7 splits a tree whose turn never came instead of 40.2, and 71.2 splits ahead in
#: their turn instead of 73.0; scm20d's (16 threads) 2.4 instead of 11.8, and 7.5 instead of 7.7 (CHANGELOG.md,
#: stop 69)
AHEAD_RANK_SHARE = 0.4
#: splits ahead of their turn are batched into one kernel call (kernels.split_step.split_batch) where the pool's
#: histograms of a tree fit one array of at most this many bytes (its pages are touched only as used)
BATCH_BLOCK_BYTES = 2**31


class CandidateScorer(Protocol):
    """Scores split candidates of a leaf from its rows (for statistics that have no histogram)."""

    def candidate_gains(self, leaf: int, hist: np.ndarray, total: np.ndarray, feature_mask: np.ndarray,
                        params: ScanParams, out_gain: np.ndarray, out_splittable: np.ndarray) -> None:
        """IN hist (total_bins, C), total (C,): the leaf's Hessian and count histogram and sums.
        OUT out_gain (2, total_bins): [missing goes left, threshold bin] gain over the leaf, -inf where
        invalid; out_splittable (F,): a threshold left min_data_in_leaf rows on both sides."""


@dataclasses.dataclass(frozen=True)
class GrowerConfig:
    num_leaves: int = 31
    max_depth: int = -1
    min_data_in_leaf: int = 20
    min_sum_hessian_in_leaf: float = 1e-3
    lambda_l2: float = 0.0
    min_gain_to_split: float = 0.0
    growth_policy: str = "leafwise"  # "leafwise", "depthwise" or "symmetric" (needs max_depth >= 1)
    n_threads: int = 2
    topk: int = 0               # > 0: score splits for leaves keeping their top-k outputs
    restricted: bool = False    # with topk: GBDT-MO Alg. 4 (shared outputs) instead of Alg. 3
    random_strength: float = 0.0  # noise on split scores, in units of a noise split's gain (module docstring)
    histogram_pool_bytes: int = -1  # >= 0: histograms kept for subtraction hold at most this (module docstring)
    categorical_features: tuple = ()  # features split on sets of categories (kernels.split.scan_categorical)
    max_cat_to_onehot: int = 4
    max_cat_threshold: int = 32
    cat_smooth: float = 10.0
    cat_l2: float = 10.0
    min_data_per_group: int = 100


def _finite_or_zero(gain: float) -> float:
    """A symmetric split's recorded gain in a node where the threshold is invalid (too few rows): 0."""
    return float(gain) if np.isfinite(gain) else 0.0


class HistogramPool:
    """Reusable histogram buffers of one shape.  After ``reserve`` they are slots of one array (``block``), which a
    kernel that takes many histograms at once (kernels.split_step.split_batch) reads by slot."""

    def __init__(self, n_bins: int, n_cols: int):
        self.shape = (n_bins, n_cols)
        self._free: list[np.ndarray] = []
        self.allocated = 0
        self.block: np.ndarray | None = None  # (slots, n_bins, n_cols)
        self._views: list[np.ndarray] = []  # the block's slots as the buffers lent
        self._slots: dict[int, int] = {}  # id of a buffer of the block -> its slot
        self._unused = 0  # the block's slots from here on were never lent

    @property
    def has_free(self) -> bool:
        return bool(self._free) or (self.block is not None and self._unused < self.block.shape[0])

    def get(self) -> np.ndarray:
        if self._free:
            return self._free.pop()
        self.allocated += 1
        if self.block is not None and self._unused < self.block.shape[0]:
            self._unused += 1
            return self._views[self._unused - 1]
        return np.empty(self.shape, dtype=HIST)

    def put(self, buf: np.ndarray | None) -> None:
        if buf is not None:
            self._free.append(buf)

    def reserve(self, n_slots: int) -> None:
        """Lend buffers from a block of at least ``n_slots`` from now on, where no buffer is lent (a grower
        gives every buffer back at the end of its tree).  The block's pages are touched as its slots are used
        (np.empty), as the separate buffers' were; the buffers lent before are dropped.  Past the block, the
        pool lends separate buffers again (slot -1)."""
        if (self.block is not None and self.block.shape[0] >= n_slots) or len(self._free) < self.allocated:
            return
        self.block = np.empty((n_slots, *self.shape), dtype=HIST)
        self._views = [self.block[slot] for slot in range(n_slots)]  # each slot's one view: the buffer lent
        self._slots = {id(view): slot for slot, view in enumerate(self._views)}
        self._free, self.allocated, self._unused = [], 0, 0

    def slot(self, buf: np.ndarray) -> int:
        """The slot of a buffer lent from the block, else -1."""
        return self._slots.get(id(buf), -1)


class HistogramPools:
    """Histogram pools by shape, lent to the growers of trainings that take turns: the folds of a
    cross-validation advance one tree each in lockstep, and the buffers one fold's tree has just given
    back, still in cache, serve the next fold's (scene's cross-validation: 0.94-0.96x the time of a pool
    per fold, and a fifth of the histograms' memory)."""

    def __init__(self):
        self._pools: dict[tuple[int, int], HistogramPool] = {}

    def pool(self, n_bins: int, n_cols: int) -> HistogramPool:
        """The pool of histograms of n_bins x n_cols, made on first use."""
        key = (int(n_bins), int(n_cols))
        if key not in self._pools:
            self._pools[key] = HistogramPool(*key)
        return self._pools[key]


class _Leaf:
    __slots__ = ("index", "depth", "total", "count", "hist", "gain", "feature", "bin", "default_left", "left_total",
                 "parent", "is_left", "scan_mask", "left_bins", "has_missing", "ahead")

    def __init__(self, index, depth, total, count, parent, is_left):
        # count: total's row count as a Python float, read where a split is decided (a NumPy scalar read there, after
        # the kernels have evicted the interpreter's data from the cache, costs a microsecond or more)
        self.index, self.depth, self.total, self.count = index, depth, total, count
        self.parent, self.is_left = parent, is_left
        self.hist = None
        self.gain = -np.inf
        self.feature = self.bin = -1
        self.default_left = False
        self.left_total = None
        self.scan_mask = None  # features this leaf's children must scan (None: as the tree's mask)
        self.left_bins = None  # a set split: (bins of the feature,) bool, True for the bins going left
        self.has_missing = False  # a scan on the device: the best split's feature has missing values here
        self.ahead = None  # split ahead of its turn: (left child, right child, default_left) until _commit


class ChildScan:
    """The scan of a split's two children, handed to the builder with the split (HistogramBuilder.split): node 0
    is the smaller child, whose histogram the split builds into ``small_hist``; the larger one's is the parent's
    histogram minus it, in the parent's buffer.  A builder that can run the scan in the split's own kernel call
    asks for its ``job`` (where ``fusable``) and calls ``finish`` after that call; any other calls ``run``."""

    __slots__ = ("grower", "small", "large", "small_hist", "parent_hist", "can_small", "can_large", "mask")

    def __init__(self, grower: "TreeGrower", small: _Leaf, large: _Leaf, small_hist: np.ndarray,
                 parent_hist: np.ndarray, can_small: bool, can_large: bool, mask: np.ndarray):
        self.grower, self.small, self.large = grower, small, large
        self.small_hist, self.parent_hist = small_hist, parent_hist
        self.can_small, self.can_large, self.mask = can_small, can_large, mask

    @property
    def categorical(self) -> CategoricalScan | None:
        """The grower's categorical features (the scan kernels' ``categorical`` argument)."""
        return self.grower._categorical

    def fusable(self, n_groups: int) -> bool:
        """Whether a kernel whose tasks are ``n_groups`` feature groups can run this scan (kernels.split_step):
        histograms that hold the split statistics, and a scratch row for every group."""
        return self.grower._scorer is None and n_groups <= self.grower._scan_scratch.shape[0]

    def job(self) -> ScanJob:
        """The scan as kernels.split_step takes it (draws the scan's random_strength noise)."""
        grower = self.grower
        second = self.large if self.can_large else None
        n_nodes, noise = grower._scan_inputs(self.small, second, self.can_small)
        return ScanJob(self.parent_hist if self.can_large else self.small_hist, self.can_large, grower._totals,
                       grower.offsets, self.mask, grower.params, grower._scan_scratch, grower._active_views[n_nodes],
                       noise, grower._per_feature, grower._best)

    def finish(self) -> None:
        """Read the results of the scan the builder ran (``job``) into the children."""
        self._attach()
        self.grower._read_scan(self.small, self.large if self.can_large else None)
        self._release()

    def run(self) -> None:
        """Run the scan with the grower's own kernel (after the builder's split) and read its results."""
        self._attach()
        self.grower._evaluate(self.small, self.large if self.can_large else None, self.mask,
                              subtract=self.can_large, scan_small=self.can_small)
        self._release()

    @property
    def params(self) -> ScanParams:
        """The scan's parameters (the grower's)."""
        return self.grower.params

    @property
    def offsets(self) -> np.ndarray:
        """(F + 1,) int64: each feature's bins in the histograms."""
        return self.grower.offsets

    @property
    def batchable(self) -> bool:
        """Whether kernels.split_step.split_batch can run this scan: the grower has batch buffers (_reserve_batch),
        histograms of the split statistics, no categorical feature, no random_strength noise."""
        grower = self.grower
        return grower._batch is not None and grower._scorer is None and grower._categorical is None \
            and grower._noise_scale == 0

    @staticmethod
    def batch(scans: list["ChildScan"]) -> tuple[ScanBatch, FeatureSplits, NodeSplits] | None:
        """The scans of a batch of splits as kernels.split_step.split_batch takes them (split i's in slot i; the
        outputs of its 2 nodes in rows 2i, 2i + 1), or None where a histogram is not a slot of the pool's block
        (HistogramPool.reserve)."""
        return scans[0].grower._scan_batch(scans)

    @staticmethod
    def finish_batch(scans: list["ChildScan"]) -> None:
        """Read the results of the batch's scans (``batch``, then the builder's kernel) into the children."""
        grower = scans[0].grower
        for scan in scans:
            scan._attach()
        grower._read_scans([(scan.small, scan.large if scan.can_large else None) for scan in scans],
                           *grower._batch_found)
        for scan in scans:
            scan._release()

    @staticmethod
    def run_together(scans: list["ChildScan"]) -> None:
        """Run the scans of a batch of splits as one scan on the device (a builder whose histograms are the
        grower's device slots: TreeGrower.device_histograms), and read their results."""
        for scan in scans:
            scan._attach()
        scans[0].grower._scan_on_device([(scan.small, scan.large if scan.can_large else None, scan.mask,
                                          scan.can_large, scan.can_small) for scan in scans])
        for scan in scans:
            scan._release()

    def _attach(self) -> None:
        self.small.hist = self.small_hist
        if self.can_large:
            self.large.hist = self.parent_hist
        else:
            self.grower.pool.put(self.parent_hist)

    def _release(self) -> None:
        for child in (self.small, self.large):
            if child.hist is not None and not math.isfinite(child.gain):
                # no split left in it: its buffer goes back to the pool now, not at the tree's end (rf1's pool
                # held 113 histograms of 405 KB, now 58)
                self.grower.pool.put(child.hist)
                child.hist = None


@dataclasses.dataclass
class GrownTree:
    """Structure of a grown tree plus the statistic sums of its leaves."""
    split_feature: np.ndarray
    threshold_bin: np.ndarray
    default_left: np.ndarray
    left_child: np.ndarray
    right_child: np.ndarray
    split_gain: np.ndarray
    internal_count: np.ndarray
    leaf_sums: np.ndarray       # (n_leaves, C) statistic sums of each leaf (of the split statistics)
    left_bins: list = dataclasses.field(default_factory=list)  # per node: a set split's bins going left, or None

    @property
    def n_leaves(self) -> int:
        return int(self.leaf_sums.shape[0])


class TreeGrower:
    """Grow trees whose split statistics have a given layout; reuses its buffers from tree to tree."""

    def __init__(self, hist_offsets: np.ndarray, layout: StatLayout, config: GrowerConfig,
                 pools: HistogramPools | None = None):
        self.offsets = np.asarray(hist_offsets, dtype=np.int64)
        self._missing_bins = (self.offsets[1:] - 1).tolist()  # each feature's last bin: its missing values'
        self.layout = layout
        self.config = config
        # a grower gives every buffer back at the end of its tree: growers that take turns can share them
        self.pool = self._host_pool = (pools or HistogramPools()).pool(int(self.offsets[-1]), layout.n_cols)
        self._device = None  # the builder's DeviceHistograms while a tree's histograms live on its device
        hist_bytes = self._hist_bytes = int(self.offsets[-1]) * layout.n_cols * np.dtype(HIST).itemsize
        self._batch: ScanBatch | None = None  # the buffers of a batch of splits' scans (_reserve_batch)
        self._batch_found: tuple[FeatureSplits, NodeSplits] | None = None  # and of their results
        self._entries = EntryPoints()
        self._hist_cap = None if config.histogram_pool_bytes < 0 else \
            max(MIN_POOL_HISTOGRAMS, config.histogram_pool_bytes // max(hist_bytes, 1))
        self.params = ScanParams(k=layout.k, h_col=layout.h_col, h_stride=layout.h_stride,
                                 h_scale=float(layout.h_scale), count_col=layout.count_col,
                                 lambda_l2=float(config.lambda_l2), min_data_in_leaf=int(config.min_data_in_leaf),
                                 min_sum_hessian=float(config.min_sum_hessian_in_leaf),
                                 min_gain_to_split=float(config.min_gain_to_split), topk=int(config.topk),
                                 restricted=bool(config.restricted))
        n_features = self.offsets.shape[0] - 1
        self._per_feature = FeatureSplits.allocate(2, n_features)
        self._best = NodeSplits.allocate(2, layout.n_cols)
        self._totals = np.empty((2, layout.n_cols))
        self._scan_scratch = scan_scratch(layout.n_cols, self.params)
        self._scan_kernels: dict[int, object] = {}  # best_splits_kernel's pick by number of nodes scanned
        self._active = np.empty(2, np.bool_)
        self._active_views = {1: self._active[:1], 2: self._active}  # the nodes a scan of 1 or 2 nodes scans
        self._no_noise = np.zeros((2, n_features))
        self._rng = None
        self._noise_scale = 0.0
        categorical = np.zeros(n_features, np.bool_)
        categorical[list(config.categorical_features)] = True
        self._categorical = CategoricalScan.make(categorical, np.diff(self.offsets) - 1, config) \
            if categorical.any() else None

    # ------------------------------------------------------------------ public
    def grow(self, builder: HistogramBuilder, feature_mask: np.ndarray | None = None,
             rng: np.random.Generator | None = None, grad_sq_sum: float = 0.0,
             scorer: CandidateScorer | None = None) -> GrownTree:
        """Grow one tree.

        Parameters
        ----------
        builder : HistogramBuilder
            The rows of the tree.
        feature_mask : ndarray of bool (n_features,), optional
            Features the tree may split on (None: all).
        rng : numpy.random.Generator, optional
            Draws the split-score noise (needed when random_strength > 0).
        grad_sq_sum : float
            sum over rows of ||g_i||^2 of the split statistics (the noise scale's numerator).
        scorer : CandidateScorer, optional
            Scores the candidates when the histograms hold no gradient columns (module docstring).
        """
        config = self.config
        n_features = self.offsets.shape[0] - 1
        self._device = self._device_histograms(builder, scorer)
        self.pool = self._host_pool if self._device is None else self._device.pool(self.layout.n_cols)
        self._mask = np.ones(n_features, np.bool_) if feature_mask is None else \
            np.ascontiguousarray(feature_mask, dtype=np.bool_)
        self._entries.clear()  # the scans' entry points, for this tree's histograms and masks
        self._nodes: list[tuple] = []  # (feature, bin, default_left, gain, count, left bins or None)
        self._children: list[list[int]] = []
        self._rng = rng
        self._scorer = scorer
        self._noise_scale = 0.0
        ahead = self._splits_ahead(builder) if config.growth_policy != "symmetric" else 1
        # the most splits of a builder call: a leaf-wise batch (the leaf in turn and ``ahead`` others: _next_in_turn
        # sends ``ahead`` others with a leaf of ahead_max_rows or more, which may yet go to the batch, as that bound
        # is a power of two), or a depth-wise level; reserved before the root's histogram, so that every histogram of
        # the tree is in the pool's block
        self._reserve_batch(1 if ahead <= 1 else ahead + 1 if config.growth_policy == "leafwise"
                            else config.num_leaves // 2 + 1)
        root_hist = self.pool.get()
        root_total = builder.root(root_hist)
        root = _Leaf(0, 0, root_total, float(root_total[self.layout.count_col]), -1, False)
        root.hist = root_hist
        leaves = self._leaves = [root]
        if config.random_strength > 0:
            if rng is None:
                raise ValueError("random_strength > 0 needs a random generator (rng)")
            layout = self.layout
            h_per_output = layout.h_scale * float(root.total[layout.h_col] if layout.h_stride == 0 else
                                               np.mean(layout.hess(root.total)))
            self._noise_scale = config.random_strength * grad_sq_sum / h_per_output if h_per_output > 0 else 0.0
        if config.growth_policy == "symmetric":
            leaves = self._grow_symmetric(builder, root)
            return self._finish(leaves)
        self._evaluate(root, None, self._mask, subtract=False)
        if config.growth_policy == "leafwise":
            # the leaf of the largest gain, the lowest index among equal gains (a leaf's index is its place
            # in ``leaves``), from a heap: each leaf is scanned once between two of its splits, so no entry
            # goes stale, and leaves without a valid split never enter it
            heap = [(-root.gain, 0, root)] if math.isfinite(root.gain) else []
            while heap and len(leaves) < config.num_leaves:
                best = heapq.heappop(heap)[2]
                if best.ahead is not None:
                    best, right = self._commit(builder, best, len(leaves))  # its left child in its place
                    new = [right]
                else:
                    # ``ahead`` small leaves a batch: a large one's split runs alone, in regions of its own
                    small = best.count < self._ahead_max_rows
                    others = [] if ahead <= 1 else self._next_in_turn(
                        heap, ahead - small, config.num_leaves - len(leaves) - 1, self._ahead_max_rows)
                    new = self._split_level(builder, [best], len(leaves), others)
                leaves += new
                for leaf in (best, *new):
                    if math.isfinite(leaf.gain):
                        heapq.heappush(heap, (-leaf.gain, leaf.index, leaf))
            for leaf in leaves:  # split ahead, and its turn never came: its children's histograms go back
                if leaf.ahead is not None:
                    for child in leaf.ahead[:2]:
                        self.pool.put(child.hist)
                    leaf.ahead = None
        else:
            frontier = [root]
            while frontier and len(leaves) < config.num_leaves:
                ready = [lf for lf in sorted(frontier, key=lambda lf: -lf.gain) if np.isfinite(lf.gain)]
                ready = ready[:config.num_leaves - len(leaves)]
                for leaf in frontier:
                    if leaf not in ready:
                        self.pool.put(leaf.hist)
                        leaf.hist = None
                if not ready:
                    break
                new = self._split_level(builder, ready, len(leaves))
                leaves += new
                frontier = ready + new
        for leaf in leaves:
            self.pool.put(leaf.hist)
            leaf.hist = None
        return self._finish(leaves)

    # ------------------------------------------------------------------ internals
    def _device_histograms(self, builder: HistogramBuilder, scorer: CandidateScorer | None):
        """The builder's histograms on a device (``device_histograms``, cuda_histograms.py), unless a scorer
        scores this tree's candidates from its rows; else None (host arrays)."""
        device = getattr(builder, "device_histograms", None)
        return None if scorer is not None else device

    def _can_split(self, depth: int, count: float) -> bool:
        config = self.config
        if config.max_depth > 0 and depth >= config.max_depth:
            return False
        return count >= 2 * config.min_data_in_leaf

    def _splits_ahead(self, builder: HistogramBuilder) -> int:
        """How many splits leaf-wise growth sends the builder at once: the leaf whose turn it is and the next ones
        by gain, split ahead of their turn (the builder's ``splits_ahead``; 1 for a builder that cannot keep a
        split pending until ``commit``), of fewer rows than its ``ahead_max_rows`` (where it has one).

        A split ahead of its turn gives the tree it would have had in turn: a leaf's split and its children's
        scans depend on the leaf alone, its children are recorded (numbered, put on the heap) when its turn
        comes (``_commit``), and the leaves whose turn never comes keep their rows.  Not where a split draws
        from the generator (random_strength: the draws would follow the builder's order), scores its children
        from their rows (a scorer: by leaf number) or may have its histogram given up (histogram_pool_size)."""
        ahead = int(getattr(builder, "splits_ahead", 1))
        self._ahead_max_rows = float(getattr(builder, "ahead_max_rows", np.inf))
        if ahead <= 1 or self._ahead_max_rows <= 0 or self.config.random_strength > 0 or self._scorer is not None \
                or self._hist_cap is not None:
            return 1
        return ahead

    def _next_in_turn(self, heap: list, n: int, splits_left: int, max_rows: float) -> list[_Leaf]:
        """Up to ``n`` leaves next in turn (by gain, then number) that are not split yet and have fewer than
        ``max_rows`` rows: from the first AHEAD_LOOKS_PER_SPLIT x n entries of the heap's array (the top of the heap,
        nearly the first in turn; which leaves go ahead moves time only, never the tree) and, among them, the first
        AHEAD_RANK_SHARE x ``splits_left`` by rank (a leaf ranked below the splits left in the tree never has its
        turn, and one ranked in their second half seldom has it)."""
        if n <= 0 or splits_left <= 0:
            return []
        top = sorted(heap[:AHEAD_LOOKS_PER_SPLIT * n])[:max(1, int(AHEAD_RANK_SHARE * splits_left))]
        return [leaf for _, _, leaf in top if leaf.ahead is None and leaf.count < max_rows][:n]

    def _commit(self, builder: HistogramBuilder, leaf: _Leaf, new_index: int) -> tuple[_Leaf, _Leaf]:
        """Record the split of ``leaf``, made ahead of its turn, now that it comes: its left child takes its number
        and its place among the leaves, the right child gets ``new_index``; the builder's rows follow (``commit``).
        Return the two children."""
        left, right, default_left = leaf.ahead
        leaf.ahead = None
        node = self._record_node(leaf, new_index, default_left, leaf.count)
        left.parent = right.parent = node
        right.index = new_index
        self._leaves[leaf.index] = left
        builder.commit(leaf.index, new_index)
        return left, right

    def _split_level(self, builder: HistogramBuilder, to_split: list[_Leaf], n_leaves: int,
                     ahead: list[_Leaf] = ()) -> list[_Leaf]:
        """Split every leaf of ``to_split`` in one request batch, and those of ``ahead`` ahead of their turn
        (_splits_ahead); return the new right children of ``to_split``."""
        dropped = [leaf for leaf in to_split if leaf.hist is None]
        if dropped:  # their histograms went to stay within histogram_pool_size: build them again
            outs = [self._take_hist(to_split) for _ in dropped]
            builder.histograms([leaf.index for leaf in dropped], outs)
            for leaf, out in zip(dropped, outs):
                leaf.hist = out
        requests, outs, scans, rights = [], [], [], []
        for leaf in to_split:
            new_index = n_leaves + len(rights)
            right, request, out, scan = self._split_leaf(leaf, new_index, to_split)
            requests.append(request)
            outs.append(out)
            rights.append(right)
            scans.append(scan)
        for leaf in ahead:
            request, out, scan = self._split_ahead(leaf)
            requests.append(request)
            outs.append(out)
            scans.append(scan)
        builder.split(requests, outs, scans)  # it runs each split's scan of the children (ChildScan)
        return rights

    def _take_hist(self, pinned: list[_Leaf]) -> np.ndarray:
        """A histogram buffer.  With histogram_pool_size, once the pool holds its cap, the histogram of
        the leaf least likely to split next (the lowest gain; not one of ``pinned``, the leaves being
        split) is given up instead of allocating; that leaf's histogram is built again if it splits."""
        pool = self.pool
        if self._hist_cap is not None and not pool.has_free and pool.allocated >= self._hist_cap:
            held = [leaf for leaf in self._leaves if leaf.hist is not None and all(leaf is not p for p in pinned)]
            if held:
                victim = min(held, key=lambda leaf: leaf.gain)
                pool.put(victim.hist)
                victim.hist = None
        return pool.get()

    def _split_leaf(self, leaf: _Leaf, new_index: int, pinned: list[_Leaf]):
        """Record the split of ``leaf`` (it becomes the left child); return the right child, the
        builder request, the buffer for the smaller child's histogram and what to scan afterwards."""
        left_count, right_count, default_left = self._sides(leaf)
        mask = leaf.scan_mask
        right, request_fields, parent_hist, left_bins = self._record_split(leaf, new_index, default_left, left_count)
        last = new_index + 1 == self.config.num_leaves
        request, out, scan = self._child_request(leaf, right, request_fields, left_bins, parent_hist, mask,
                                                 left_count, right_count, last, pinned)
        return right, request, out, scan

    def _split_ahead(self, leaf: _Leaf):
        """The request, the smaller child's buffer and the children's scan of the split of ``leaf`` ahead of its
        turn (_splits_ahead): children of their own, which _commit records when the turn comes."""
        left_count, right_count, default_left = self._sides(leaf)
        left = _Leaf(leaf.index, leaf.depth + 1, leaf.left_total, left_count, -1, True)
        right = _Leaf(-1, leaf.depth + 1, leaf.total - leaf.left_total, right_count, -1, False)
        leaf.ahead = (left, right, default_left)
        parent_hist, leaf.hist = leaf.hist, None
        request_fields = (leaf.index, -1, leaf.feature, leaf.bin, default_left)
        return self._child_request(left, right, request_fields, leaf.left_bins, parent_hist, leaf.scan_mask,
                                   left_count, right_count, False, [leaf])

    def _sides(self, leaf: _Leaf) -> tuple[float, float, bool]:
        """(rows going left, rows going right, whether missing values go left) of the split of ``leaf``."""
        count_col = self.layout.count_col
        left_count = float(leaf.left_total[count_col])
        right_count = leaf.count - left_count  # as right.total[count_col]: the same float64 difference
        default_left = leaf.default_left
        if leaf.left_bins is None and not (leaf.has_missing if self._device is not None else
                                           leaf.hist[self._missing_bins[leaf.feature], count_col] > 0):
            # no missing value seen here: send future ones to the larger side
            default_left = left_count >= right_count
        return left_count, right_count, default_left

    def _child_request(self, left: _Leaf, right: _Leaf, request_fields: tuple, left_bins, parent_hist: np.ndarray,
                       mask: np.ndarray, left_count: float, right_count: float, last: bool, pinned: list[_Leaf]):
        """The builder request of a split into ``left`` and ``right``, the buffer for the smaller child's
        histogram and the children's scan (none where the tree is full after it, ``last``, or no child can
        split)."""
        left_small = left_count <= right_count
        small, large = (left, right) if left_small else (right, left)
        small_count, large_count = (left_count, right_count) if left_small else (right_count, left_count)
        can_small = self._can_split(small.depth, small_count)
        can_large = self._can_split(large.depth, large_count)
        if last or not (can_small or can_large):
            self.pool.put(parent_hist)
            return SplitRequest(*request_fields, BUILD_NONE, left_bins, int(left_count)), None, None
        out = self._take_hist(pinned)
        build = BUILD_LEFT if left_small else BUILD_RIGHT
        request = SplitRequest(*request_fields, build, left_bins, int(left_count))
        return request, out, ChildScan(self, small, large, out, parent_hist, can_small, can_large, mask)

    def _record_split(self, leaf: _Leaf, new_index: int, default_left: bool, left_count: float):
        """Record the split of ``leaf`` as a node, ``left_count`` of its rows going left; ``leaf`` becomes the left
        child (its histogram detached). Return the right child, the request's fields, the parent's histogram and
        the split's set of bins going left (None for a numeric split)."""
        f, left_total, count = leaf.feature, leaf.left_total, leaf.count
        right_total = leaf.total - left_total
        node = self._record_node(leaf, new_index, default_left, count)
        # the direction the tree records: the partition of rows outside the histograms (a sample's
        # left-out rows, another worker's) must agree with it
        request_fields = (leaf.index, new_index, f, leaf.bin, default_left)
        left_bins = leaf.left_bins
        right = _Leaf(new_index, leaf.depth + 1, right_total, count - left_count, node, False)
        parent_hist = leaf.hist
        leaf.hist, leaf.depth, leaf.total, leaf.parent, leaf.is_left = None, leaf.depth + 1, left_total, node, True
        leaf.count = left_count
        leaf.gain = -np.inf
        leaf.left_bins = None
        return right, request_fields, parent_hist, left_bins

    def _record_node(self, leaf: _Leaf, new_index: int, default_left: bool, count: float) -> int:
        """Record the split of ``leaf`` (``count`` rows) as the tree's next node, its children leaves ``leaf.index``
        and ``new_index``; return the node's number."""
        node = len(self._nodes)
        self._nodes.append((leaf.feature, leaf.bin, default_left, leaf.gain, count, leaf.left_bins))
        self._children.append([~leaf.index, ~new_index])
        if leaf.parent >= 0:
            self._children[leaf.parent][0 if leaf.is_left else 1] = node
        return node

    # ------------------------------------------------------------------ symmetric trees
    def _grow_symmetric(self, builder: HistogramBuilder, root: _Leaf) -> list[_Leaf]:
        """Split whole levels by one shared split until max_depth levels or num_leaves leaves are
        reached or no shared split gains more than min_gain_to_split."""
        config = self.config
        depth = config.max_depth
        leaves = [root]
        offsets = self.offsets
        is_threshold = np.zeros(int(offsets[-1]), np.bool_)  # value bins but the last, allowed features
        for f in np.flatnonzero(self._mask):
            is_threshold[offsets[f]: offsets[f + 1] - 2] = True
        gains = np.empty((2, is_threshold.shape[0]))
        for level in range(depth):
            if 2 * len(leaves) > config.num_leaves:
                break
            if self._device is not None:
                self._device.level_gains(self.params, [leaf.hist for leaf in leaves],
                                         np.array([leaf.total for leaf in leaves]), self._mask, gains)
                leaf_gains = [None] * len(leaves)
            else:
                gains[:] = 0.0
                leaf_gains = [self._add_level_gains(leaf, gains) for leaf in leaves]
            candidate = is_threshold & (gains > config.min_gain_to_split)
            if not candidate.any():
                break
            scores = np.where(candidate, gains, -np.inf)
            if self._noise_scale > 0:
                scores += self._rng.normal(0.0, self._noise_scale * len(leaves), scores.shape)
            direction, flat_bin = divmod(int(np.argmax(scores)), is_threshold.shape[0])
            feature = int(np.searchsorted(offsets, flat_bin, side="right") - 1)
            last = level + 1 == depth or 4 * len(leaves) > config.num_leaves
            chosen = None if self._scorer is None else [_finite_or_zero(g[direction, flat_bin]) for g in leaf_gains]
            leaves += self._split_symmetric(builder, leaves, feature, flat_bin - int(offsets[feature]),
                                            bool(direction), last, chosen)
        for leaf in leaves:
            self.pool.put(leaf.hist)
            leaf.hist = None
        return leaves

    def _add_level_gains(self, leaf: _Leaf, gains: np.ndarray) -> np.ndarray | None:
        """Add the leaf's gain of every candidate to ``gains``; with a scorer, return the leaf's gains."""
        if self._scorer is None:
            pick(add_split_gains, add_split_gains_serial, leaf.hist.size)(
                leaf.hist, leaf.total, self.offsets, self._mask, self.params, self._scan_scratch, gains)
            return None
        own = np.empty_like(gains)
        self._scorer.candidate_gains(leaf.index, leaf.hist, leaf.total, self._mask, self.params, own,
                                     np.empty(self._mask.shape[0], np.bool_))
        gains += np.where(np.isfinite(own), own, 0.0)  # as add_split_gains: an invalid threshold adds 0
        return own

    def _split_symmetric(self, builder: HistogramBuilder, level: list[_Leaf], feature: int, threshold_bin: int,
                         default_left: bool, last: bool, gains: list[float] | None = None) -> list[_Leaf]:
        """Split every leaf of a level by the same split; children get histograms unless ``last``.
        ``gains``: each leaf's gain of the split (default: from its histogram)."""
        count_col = self.layout.count_col
        requests, outs, pending, rights = [], [], [], []
        device_sums = None if self._device is None else self._device.split_sums(feature, threshold_bin, default_left)
        for i, leaf in enumerate(level):
            leaf.feature, leaf.bin, leaf.default_left = feature, threshold_bin, default_left
            if device_sums is not None:  # the level's nodes, in this order, as the last level_gains call scanned
                leaf.left_total = device_sums[i].copy()
            else:
                leaf.left_total = np.empty(self.layout.n_cols)
                left_sums(leaf.hist, self.offsets, feature, threshold_bin, default_left, leaf.left_total)
            leaf.gain = gains[i] if gains is not None else float(node_score(leaf.left_total, self.params) + node_score(
                leaf.total - leaf.left_total, self.params) - node_score(leaf.total, self.params))
            right, fields, parent_hist, _ = self._record_split(leaf, len(level) + len(rights), default_left,
                                                               float(leaf.left_total[count_col]))
            rights.append(right)
            if last:
                self.pool.put(parent_hist)
                requests.append(SplitRequest(*fields, BUILD_NONE, None, int(leaf.count)))
                outs.append(None)
                continue
            left_small = leaf.count <= right.count
            out = self.pool.get()
            requests.append(SplitRequest(*fields, BUILD_LEFT if left_small else BUILD_RIGHT, None,
                                         int(leaf.count)))  # the left child's rows (leaf's now)
            outs.append(out)
            pending.append((leaf, right, left_small, out, parent_hist))
        builder.split(requests, outs)
        if self._device is not None:  # the larger children: parent - smaller, in one launch
            self._device.subtract([(parent_hist, out) for _, _, _, out, parent_hist in pending])
        for leaf, right, left_small, out, parent_hist in pending:
            if self._device is None:
                np.subtract(parent_hist, out, out=parent_hist)  # the larger child: parent - smaller
            leaf.hist, right.hist = (out, parent_hist) if left_small else (parent_hist, out)
        return rights

    def _evaluate(self, first: _Leaf, second: _Leaf | None, mask: np.ndarray, subtract: bool,
                  scan_small: bool = True) -> None:
        """Find the best split of ``first`` (and of ``second``, whose buffer holds the parent's histogram
        to subtract ``first`` from when ``subtract``) in one kernel call, over the features in ``mask``.
        Each leaf keeps the features its children must scan: those with a threshold that leaves
        min_data_in_leaf rows on both sides here (no descendant can split the others)."""
        if self._device is not None:
            self._scan_on_device([(first, second, mask, subtract, scan_small)])
            return
        if self._scorer is not None:
            self._evaluate_scored(first, second, mask, subtract, scan_small)
            return
        n_nodes, noise = self._scan_inputs(first, second, scan_small)
        best_splits = self._scan_kernels.get(n_nodes)
        if best_splits is None:  # the grower's histograms, parameters and threads are fixed: one pick a count
            best_splits = self._scan_kernels[n_nodes] = best_splits_kernel(
                self.params, n_nodes * self.pool.shape[0] * self.layout.k, self.config.n_threads)
        self._entries.call(best_splits, first.hist, first.hist if second is None else second.hist, n_nodes, subtract,
                           self._totals, self.offsets, mask, self.params, self._categorical, self._scan_scratch,
                           self._active, noise, self._per_feature, self._best)
        self._read_scan(first, second)

    def _first_active(self, first: _Leaf, scan_small: bool) -> bool:
        """Whether a scan scans its first node (a split's smaller child): where asked and the node can split."""
        return scan_small and self._can_split(first.depth, first.count)

    def _scan_inputs(self, first: _Leaf, second: _Leaf | None, scan_small: bool) -> tuple[int, np.ndarray]:
        """Set the scan's node sums and active nodes (``first`` where _first_active, and ``second``) in the grower's
        ``_totals`` and ``_active``; return (the number of nodes, the random_strength noise on the features'
        scores)."""
        totals, active = self._totals, self._active
        totals[0] = first.total
        if second is not None:
            totals[1] = second.total
        active[0] = self._first_active(first, scan_small)
        active[1] = second is not None
        if self._noise_scale > 0:
            return (1 if second is None else 2), self._rng.normal(0.0, self._noise_scale, self._no_noise.shape)
        return (1 if second is None else 2), self._no_noise

    def _scan_batch(self, scans: list[ChildScan]) -> tuple[ScanBatch, FeatureSplits, NodeSplits] | None:
        """ChildScan.batch: the batch's scans in the first rows of the grower's batch buffers (_reserve_batch), each
        buffer filled from a list in one call (a call a scan and field took about 4 us a scan)."""
        batch, pool = self._batch, self.pool
        if batch is None or len(scans) > batch.plan.shape[0]:
            return None
        plan, active, totals, masks = [], [], [], []
        for scan in scans:
            out_slot = pool.slot(scan.small_hist)
            parent_slot = pool.slot(scan.parent_hist) if scan.can_large else out_slot
            if out_slot < 0 or parent_slot < 0:
                return None
            # SCAN_* columns: with the larger child, both children scanned, the larger by subtraction
            plan.append((out_slot, parent_slot, int(scan.can_large), 2 if scan.can_large else 1))
            second = scan.large if scan.can_large else scan.small  # without it, sums the kernel does not read
            totals += (scan.small.total, second.total)
            active.append((self._first_active(scan.small, scan.can_small), scan.can_large))
            masks.append(scan.mask)
        n_splits = len(scans)
        batch.plan[:n_splits] = plan
        batch.active[:n_splits] = active
        batch.totals[:2 * n_splits] = totals
        batch.masks[:n_splits] = masks
        return (batch, *self._batch_found)

    def _reserve_batch(self, ahead: int) -> None:
        """Buffers for batches of up to ``ahead`` splits (kernels.split_step.split_batch; the builder's calls of a
        depth-wise level too), and the pool's histograms in one block (HistogramPool.reserve) where that block
        takes at most BATCH_BLOCK_BYTES; else (and on a device, whose builder runs its own batches) no batch."""
        n_slots = self.config.num_leaves + ahead + 1  # a leaf's histogram each, and the children of a batch
        if ahead <= 1 or self._device is not None or n_slots * self._hist_bytes > BATCH_BLOCK_BYTES:
            self._batch = None
            return
        self.pool.reserve(n_slots)
        if self._batch is not None and self._batch.plan.shape[0] >= ahead:
            # the pool's block: another grower sharing the pool (HistogramPools) may have made a larger one
            self._batch = self._batch._replace(hists=self.pool.block)
            return
        n_features, n_cols = self.offsets.shape[0] - 1, self.layout.n_cols
        self._batch = ScanBatch(
            hists=self.pool.block, plan=np.zeros((ahead, 4), np.int64), active=np.zeros((ahead, 2), np.bool_),
            totals=np.zeros((2 * ahead, n_cols)), masks=np.zeros((ahead, n_features), np.bool_),
            scratch=np.empty((ahead, self._scan_scratch.shape[1])), noise=self._no_noise)
        self._batch_found = (FeatureSplits.allocate(2 * ahead, n_features), NodeSplits.allocate(2 * ahead, n_cols))

    def _scan_on_device(self, pairs: list[tuple]) -> None:
        """_evaluate for a batch of (first, second, mask, subtract, scan_small) on the device: every node in one
        scan (DeviceHistograms.scan), the random_strength noise drawn pair by pair as on the host."""
        leaves, hists, minus, active, totals, masks, noises = [], [], [], [], [], [], []
        for first, second, mask, subtract, scan_small in pairs:
            n_nodes, noise = self._scan_inputs(first, second, scan_small)
            for i, leaf in enumerate((first, second)[:n_nodes]):
                leaves.append(leaf)
                hists.append(leaf.hist)
                minus.append(first.hist if i == 1 and subtract else None)
                active.append(bool(self._active[i]))
                totals.append(leaf.total)
                masks.append(mask)
                noises.append(noise[i])
        found = self._device.scan(self.params, hists, minus, active, np.array(totals), np.array(masks),
                                  np.array(noises) if self._noise_scale > 0 else None, self._categorical)
        for i, leaf in enumerate(leaves):
            leaf.scan_mask = found.splittable[i].copy()
            leaf.gain = float(found.gain[i])
            if math.isfinite(leaf.gain):
                leaf.feature, leaf.bin = int(found.feature[i]), int(found.threshold_bin[i])
                leaf.default_left, leaf.has_missing = bool(found.default_left[i]), bool(found.has_missing[i])
                leaf.left_total = found.left_sums[i].copy()
                n_bins = int(self.offsets[leaf.feature + 1] - self.offsets[leaf.feature])
                leaf.left_bins = found.left_bins[i, :n_bins].copy() if leaf.bin < 0 else None

    def _read_scan(self, first: _Leaf, second: _Leaf | None) -> None:
        """Each scanned node's best split and the features its children must scan, from the grower's scan outputs
        (rows 0 and 1)."""
        categorical, per_feature, best = self._categorical, self._per_feature, self._best
        for i, leaf in enumerate((first, second)[:1 if second is None else 2]):
            leaf.scan_mask = per_feature.splittable[i].copy()
            leaf.gain = float(best.gain[i])
            if math.isfinite(leaf.gain):
                leaf.feature, leaf.bin = int(best.feature[i]), int(best.threshold_bin[i])
                leaf.default_left = bool(best.default_left[i])
                leaf.left_total = best.left_sums[i].copy()
                slot = -1 if categorical is None else int(categorical.slot[leaf.feature])
                leaf.left_bins = None if slot < 0 else \
                    categorical.left[i, slot, :self.offsets[leaf.feature + 1] - self.offsets[leaf.feature]].copy()

    def _read_scans(self, pairs: list[tuple[_Leaf, _Leaf | None]], per_feature: FeatureSplits,
                    best: NodeSplits) -> None:
        """_read_scan for the scans of a batch of splits: pair i's nodes from rows 2i and 2i + 1 of ``per_feature``
        and ``best``.  Each output is read in one call for the whole batch (as lists, one copy): after the kernels
        the interpreter's data is out of the cache, and each NumPy call then costs a microsecond or more (a batch's
        reads took 23-30 us against 40-47 read node by node, Otto at two threads with 8 splits ahead,
        benchmarks/split_python.py; a lone split's two nodes were read no faster so).  No categorical feature in a
        batch."""
        n_rows = 2 * len(pairs)
        gains = best.gain[:n_rows].tolist()
        masks = per_feature.splittable[:n_rows].copy()
        features = best.feature[:n_rows].tolist()
        bins = best.threshold_bin[:n_rows].tolist()
        lefts = best.default_left[:n_rows].tolist()
        sums = best.left_sums[:n_rows].copy()
        for row, leaf in enumerate(leaf for pair in pairs for leaf in pair):
            if leaf is not None:
                leaf.scan_mask = masks[row]
                leaf.gain = gains[row]
                if math.isfinite(leaf.gain):
                    leaf.feature, leaf.bin, leaf.default_left = features[row], bins[row], lefts[row]
                    leaf.left_total, leaf.left_bins = sums[row], None

    def _evaluate_scored(self, first: _Leaf, second: _Leaf | None, mask: np.ndarray, subtract: bool,
                         scan_small: bool) -> None:
        """_evaluate with the scorer's candidate gains (the histograms hold the Hessian and count only)."""
        if subtract:
            np.subtract(second.hist, first.hist, out=second.hist)
        first_active = self._first_active(first, scan_small)
        for leaf, active in ((first, first_active), (second, True)):
            if leaf is not None:
                self._choose_scored(leaf, mask, active)

    def _choose_scored(self, leaf: _Leaf, mask: np.ndarray, active: bool) -> None:
        """The leaf's best split by the scorer: the feature of largest gain (with the random_strength
        noise), then its first best (missing direction, threshold), missing right before left."""
        offsets = self.offsets
        n_features = offsets.shape[0] - 1
        leaf.gain = -np.inf
        if not active:
            leaf.scan_mask = np.zeros(n_features, np.bool_)
            return
        gains = np.empty((2, int(offsets[-1])))
        leaf.scan_mask = np.empty(n_features, np.bool_)
        self._scorer.candidate_gains(leaf.index, leaf.hist, leaf.total, mask, self.params, gains, leaf.scan_mask)
        feature_best = np.maximum.reduceat(gains.max(axis=0), offsets[:-1])
        passes = np.isfinite(feature_best) & (feature_best > self.config.min_gain_to_split)
        if not passes.any():
            return
        score = np.where(passes, feature_best, -np.inf)
        if self._noise_scale > 0:
            score = score + self._rng.normal(0.0, self._noise_scale, n_features)
        f = int(np.argmax(score))
        segment = gains[:, offsets[f]: offsets[f + 1]]
        direction, t = divmod(int(np.argmax(segment)), segment.shape[1])
        leaf.gain = float(segment[direction, t])
        leaf.feature, leaf.bin, leaf.default_left = f, t, bool(direction)
        leaf.left_total = np.empty(self.layout.n_cols)
        left_sums(leaf.hist, offsets, f, t, bool(direction), leaf.left_total)

    def _finish(self, leaves: list[_Leaf]) -> GrownTree:
        leaves = sorted(leaves, key=lambda lf: lf.index)
        n_internal = len(self._nodes)
        nodes = self._nodes
        return GrownTree(
            split_feature=np.array([x[0] for x in nodes], dtype=np.int32),
            threshold_bin=np.array([x[1] for x in nodes], dtype=np.int32),
            default_left=np.array([x[2] for x in nodes], dtype=np.bool_),
            left_child=np.array([c[0] for c in self._children], dtype=np.int32).reshape(n_internal),
            right_child=np.array([c[1] for c in self._children], dtype=np.int32).reshape(n_internal),
            split_gain=np.array([x[3] for x in nodes], dtype=np.float64),
            internal_count=np.array([x[4] for x in nodes], dtype=np.int64),
            leaf_sums=np.array([lf.total for lf in leaves]),
            left_bins=[x[5] for x in nodes],
        )
