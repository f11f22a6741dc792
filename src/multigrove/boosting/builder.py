"""The histogram-builder seam between the tree grower and the rows.

The grower (``grower.py``) decides every split from histograms and never touches a row.  It asks
a builder for the histogram of the root and, at every split, to partition a leaf's rows and
return the histogram of one child (the smaller one; the grower gets the other by subtraction).
Anything that can answer those two questions can grow trees with the one grower:

* ``LocalBuilder`` (here): the Numba kernels over this process's binned rows;
* ``multigrove.dask.DistributedRows``: every worker answers for its own rows (with a LocalBuilder)
  and the histograms are summed;
* ``cuda_builder.CudaBuilder``: the rows on a GPU.  A builder whose histograms should stay where it builds
  them offers ``device_histograms`` (``cuda_histograms.DeviceHistograms``): the grower then takes its
  histogram buffers from it (device slots, which it passes back as ``outs``) and runs its histogram
  operations through it (the scans, the subtraction), and the builder runs a batch's scans there in one go.
  The grower's logic is the same; only where a histogram lives and who scans it change.

Leaves are numbered as the grower numbers them: a split leaf keeps its number for its left
child and the right child gets ``new_leaf``.

A ``LocalBuilder`` also partitions, split by split, rows it builds no histogram of: the rows a sample left
out of the tree, and the rows of validation sets it was asked to ``follow`` (their stores have the training
set's bins and layout), so that the leaf of every such row is known when the tree is grown.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple, Protocol, Sequence

import numpy as np

from .._dtypes import HIST, INDEX
from ..kernels._variants import EntryPoints, pick
from ..kernels.histogram import (
    FEATURE_GROUP_MIN_WORK,
    FeatureGroups,
    build_histogram_chunks,
    build_histogram_columns,
    build_histogram_features,
    build_histogram_wide,
    group_entry_starts,
    serial_histogram_kernel,
    unpack_counts,
)
from ..kernels.partition import (
    SplitRule,
    rows_in_order,
    rows_in_order_serial,
    serial_split_kernel,
    split_and_build,
)
from ..kernels.sampling import PACKED_AMPLIFIED_UNIT, gather_column_rows, gather_packed_counts, gather_rows
from ..kernels.split import scan_kind
from ..kernels.split_step import SplitBatch, split_batch_kernel, split_step_kernel
from ..kernels.store import FEATURE_BUNDLED, FEATURE_DENSE, FEATURE_SPARSE, BinnedStore, dense_only

if TYPE_CHECKING:
    from .grower import ChildScan

#: row chunks with private histograms need this many updates per histogram row to pay for zeroing
#: and summing the private copies; smaller nodes are built on one thread (measured on Otto's store
#: at 7 and 19 statistic columns and on 100k x 50 dense: chunks win from 7-8 updates per bin)
CHUNK_MIN_UPDATES_PER_BIN = 4
#: private histograms of all threads above this many bytes: split the statistic columns between
#: threads instead (every thread then reads every row: slower, but no private copies)
PRIVATE_HISTOGRAM_BUDGET = 256 * 2**20
#: the root over every row is built column by column up to this many statistic columns (one output);
#: wider statistics are faster by row chunks (measured: 1.7 vs 2.2 ms at C = 2, 10 vs 7 ms at C = 5)
COLUMN_ROOT_MAX_COLS = 3
#: statistics this wide are split in column blocks between threads (build_histogram_wide) rather than
#: built in row chunks with private histograms, whose zeroing and summing cost bins x width per chunk;
#: from WIDE_SMALL_NODE_COLS on, nodes under WIDE_SMALL_NODE_UPDATES_PER_BIN updates a bin too
#: (measured, 100k x 50 dense, 2 threads, wide / chunks: width 129: 0.33 at 500 rows, 0.62 at 50,000;
#: width 65: 0.42 at 500 rows (2 updates a bin), 0.86 at 5,000 (20), 1.23 at 50,000 (195); width 33:
#: 1.01-1.58; on Delicious's CSR store, width 1,967, a round took 0.37 s against 0.70)
WIDE_MIN_COLS = 128
WIDE_SMALL_NODE_COLS = 64
WIDE_SMALL_NODE_UPDATES_PER_BIN = 50
#: feature groups over a store with a CSR part only where its entries are at most this share of a row's cell
#: updates, or for nodes too small for two row chunks (CHUNK_MIN_UPDATES_PER_BIN): each group walked every row's
#: entries to its own (measured before their index of the entries, histogram.FeatureGroups, which cut 16 groups'
#: work on Otto's store 1.6-1.8x: stop 71; this share was not measured again).
#: Such a small node's work is mostly its bins' (the default bins derived, the scan: on
#: Otto's store 4,053 bins x 5 columns), which the groups share out in kernels.split_step: at two threads a
#: split of 300 to 4,000 rows took 0.92-0.99 of the serial split and the scan after it, and Otto's splits of
#: nodes under 16,384 rows 0.83-0.93 of their time before (benchmarks/split_step.py, split_sizes.py; CHANGELOG.md
#: stop 63).  For every node of Otto's store (17 entries beside 4 code columns, the build and the scan in two
#: regions), groups made the 16-core round slower (stop 49: its splits 33 against 21 ms), and at 2 threads
#: they left it as it was within the noise (stop 51), although one thread running 16 groups one after
#: the other did 0.23-0.48 of the serial work per group: that proxy reads each row from cache 16 times,
#: where 16 threads read it from memory at once.  atp7d's store (43 sparse features with 9 entries in
#: all, beside 362 code columns) was kept off groups by its CSR part until stop 51
SPARSE_GROUP_FREE_SHARE = 0.25
#: feature groups index a store's CSR entries by group (histogram.FeatureGroups) where the index, a uint16 (GROUP_INDEX)
#: a row and group, takes at most this share of the bytes of the CSR part's bins (int32 an entry): Otto's store at
#: 16 threads, 17 entries a row, takes 34 bytes a row against 68
GROUP_INDEX_MAX_SHARE = 1.0
GROUP_INDEX = np.uint16
#: nodes with fewer rows are partitioned on one thread
PARALLEL_PARTITION_MIN_ROWS = 16384
#: below this many cell updates a histogram is built on one thread (a parallel region costs more),
#: or by feature groups from FEATURE_GROUP_MIN_WORK on
PARALLEL_MIN_WORK = 200_000
#: a store whose binned rows and statistics take at most this many bytes stays in cache: its nodes
#: are built by feature groups instead of row chunks (on a 500k x 50 store, where every row read is
#: a cache miss for both threads, row chunks win from 2,000 rows: 56 against 60 us)
CACHE_RESIDENT_BYTES = 2**20
#: a sample of at most this fraction of the rows (GOSS, bagging) is copied into a compact store of
#: its own for the tree: histograms then read contiguous rows, and the root goes column by column
#: (measured at 500k x 50, GOSS 0.2 / 0.1: the copy costs ~1 ms, the tree's kernels save ~6 ms)
COMPACT_MAX_FRACTION = 0.5

#: leaf-wise growth splits leaves ahead of their turn, and the builder runs small nodes' splits in batches (a task a
#: split, kernels.split_step.split_batch), from this many threads on.  At two threads the batches' kernels saved
#: about what their Python cost (Otto's quiet rounds 22.5-23.8 ms a split at a time, 24.4-24.7 in batches; rf1's
#: level; CHANGELOG.md stop 65), though a batch of two of Otto's small splits took 0.63-0.86 of the time of the
#: two shared out by feature groups one after the other (benchmarks/split_batch.py).  With more threads a small
#: node's split shares out worse and a batch holds more of them: on 16 cores Otto ran 114 small splits a round on
#: one thread, 17.1 of a 31.9 ms round (stop 61).  The 16-core machine is to measure it (round_profile.py's and
#: scaling.py's --splits-ahead 1).  Stop 66, with the batches' Python trimmed: at two threads level (Otto, the
#: settings alternated in one process: 1.010-1.025x the round one split at a time with 2, 4 or 8 splits ahead,
#: benchmarks/alternate.py).
BATCH_MIN_THREADS = 3
#: a batch's splits are shared out by feature groups (kernels.split_step.split_batch_groups) where its largest split
#: holds more than (1 + this x (G - 1)) / threads of its rows, G the groups: each group beyond the first adds about
#: this share of the serial build's work (Otto's store, 5 statistic columns, through the groups' index, one thread
#: running them: 2 groups 0.6-1.0x the serial kernel, 4 1.2-1.4x, 8 1.6-2.3x, 16 1.8-4.1x; CHANGELOG.md stop 71).
#: At 16 threads Otto's batches, a split a task, kept 9 % of the threads busy (their largest splits held 161,455
#: of their 245,187 rows a tree)
BATCH_GROUP_EXTRA_WORK = 0.2

#: deterministic=True: row chunks per histogram whatever the number of threads (the chunks' private
#: histograms are summed in chunk order, so the sums do not depend on which thread built which chunk)
DETERMINISTIC_CHUNKS = 4

BUILD_NONE, BUILD_LEFT, BUILD_RIGHT = 0, 1, 2


class PackedCounts(NamedTuple):
    """A GOSS sample under a constant Hessian: the Hessian of a kept row and of a drawn (amplified) one.

    Its statistics (gradient, Hessian, count) then follow from the gradient and the numbers of kept and
    drawn rows, which one column holds exactly (kernels.sampling.gather_packed_counts): the sample's
    histograms are built on two columns and unpacked to three, the grower sees the same sums.  Two
    columns instead of three make the histogram kernels about a third cheaper (issue 18: 2.03 against
    3.10 ms for 150k rows x 50 features), as they are bound by the histogram cells each row touches."""
    plain_hessian: float
    amplified_hessian: float


#: the categories of a numeric split (kernels.partition.SplitRule)
NO_CATEGORIES = np.zeros(0, np.bool_)


class SplitRequest(NamedTuple):
    """Split ``leaf`` (it keeps its number for the left child; the right child is ``new_leaf``)
    and return the histogram of the child named by ``build`` (BUILD_NONE, BUILD_LEFT, BUILD_RIGHT).
    A set split of a categorical feature has ``left_bins`` (the feature's bins, True for those going
    left); ``threshold_bin`` and ``default_left`` apply to numeric splits.  ``n_left``: the rows going left as
    the grower's sums count them (-1: not known), from which a builder knows the size of the child to build
    before the partition: the local builder chooses its schedule for it (without it, for half the node; a
    split's smaller child is often far smaller)."""
    leaf: int
    new_leaf: int
    feature: int
    threshold_bin: int
    default_left: bool
    build: int
    left_bins: np.ndarray | None = None
    n_left: int = -1

    def rule(self) -> SplitRule:
        """Which side each row takes, as the partition kernels read it."""
        categories = NO_CATEGORIES if self.left_bins is None else np.ascontiguousarray(self.left_bins, np.bool_)
        return SplitRule(int(self.feature), int(self.threshold_bin), bool(self.default_left), categories)


class HistogramBuilder(Protocol):
    """What the grower needs from the rows of one tree."""

    def root(self, out: np.ndarray) -> np.ndarray:
        """Write the root histogram (total_bins, C) into ``out``; return the root totals (C,)."""

    def split(self, requests: Sequence[SplitRequest], outs: Sequence[np.ndarray | None],
              scans: Sequence[ChildScan | None] | None = None) -> None:
        """Apply the splits in order; write each requested child histogram into its ``outs`` entry; then run
        each split's scan of its children (``scans``, in order; None where there is none): in the split's own
        kernel call where the builder can (``ChildScan.job``, then ``ChildScan.finish``), else ``ChildScan.run``
        once the histogram is there."""

    def histograms(self, leaves: Sequence[int], outs: Sequence[np.ndarray]) -> None:
        """Write the histogram of each leaf's rows into its ``outs`` entry (a leaf whose histogram the
        grower dropped to stay within ``histogram_pool_size``, about to be split)."""

    # A builder may also offer ``splits_ahead`` (int) and ``commit``: leaf-wise growth then sends it up to that
    # many splits at once, those after the first ahead of their turn (``new_leaf`` -1; leaves of fewer rows than
    # its ``ahead_max_rows``, where it has one).  Such a split partitions its leaf's rows and builds and scans its
    # child as any, but the leaf keeps all its rows until ``commit(leaf, new_leaf)`` gives the right ones their
    # number; a split whose turn never comes is never committed.  (grower.TreeGrower._splits_ahead)


def run_scans(scans: Sequence[ChildScan | None] | None) -> None:
    """Run the children's scans of a batch of splits in order, after its histograms (HistogramBuilder.split), for
    a builder that runs none of them in its own kernels."""
    for scan in scans or ():
        if scan is not None:
            scan.run()


#: rows a unit of PARALLEL_MIN_WORK in put_in_order: a row's write is a few tenths of a nanosecond (65,536 rows took
#: 6.5 us on one thread here, warm), so a parallel region pays from some 65,000 rows on
ORDER_ROWS_PER_UNIT = 16


def put_in_order(rows: np.ndarray) -> None:
    """rows[i] = i for every i (kernels.partition.rows_in_order; its serial twin below ORDER_ROWS_PER_UNIT x
    PARALLEL_MIN_WORK rows)."""
    pick(rows_in_order, rows_in_order_serial, rows.shape[0] / ORDER_ROWS_PER_UNIT)(rows)


class _Follower:
    """The rows of another store of the same layout (a validation set's) that every split partitions too, so
    that each row's leaf is known when the tree is grown: the walk down the finished tree, a kernel of its own
    to compile and about 25 ns a row, is a partition pass of about 2 ns a row."""

    def __init__(self, store: BinnedStore):
        self.store = store
        n = store.n_rows
        self.rows = np.arange(n, dtype=INDEX)
        self.tmp = np.empty(n, dtype=INDEX)
        self.marks = np.zeros(n if store.sparse_indptr.shape[0] else 0, dtype=np.uint8)
        self.start = np.zeros(1, np.int64)
        self.end = np.zeros(1, np.int64)

    def begin(self, max_leaves: int) -> None:
        put_in_order(self.rows)  # partitions reorder it
        self.start = np.zeros(max_leaves, np.int64)
        self.end = np.zeros(max_leaves, np.int64)
        self.end[0] = self.rows.shape[0]


class LocalBuilder:
    """Histograms from the Numba kernels over one process's binned rows.

    ``begin`` starts a tree on given statistics (n_rows, C) and rows (all, or a bagging / GOSS
    sample); afterwards ``leaf_segments`` says which rows ended in which leaf.
    """

    def __init__(self, store: BinnedStore, n_threads: int, deterministic: bool = False):
        self.store = store
        self.n_threads = max(1, int(n_threads))
        # deterministic: a fixed number of row chunks, so that partial sums do not depend on the thread count
        self.deterministic = deterministic
        self.n_chunks = DETERMINISTIC_CHUNKS if deterministic else self.n_threads
        n = store.n_rows
        self._all_rows = np.arange(n, dtype=INDEX)
        self._tmp = np.empty(n, dtype=INDEX)
        # a byte per row for partitions on a sparse feature (kernels.partition: MARK_MIN_ROWS_PER_ENTRY)
        self._marks = np.zeros(n if store.sparse_indptr.shape[0] else 0, dtype=np.uint8)
        # every feature a dense column: the serial kernels compiled for such stores (kernels.store.STORE_DENSE)
        self._dense_only = dense_only(store)
        self._counts = {1: np.zeros(1, np.int64), self.n_threads: np.zeros(self.n_threads, np.int64)}
        self._scratch: dict[int, np.ndarray] = {}
        self._groups: FeatureGroups | None = None  # build_histogram_features' groups (_feature_groups)
        self._total = np.empty(0, dtype=HIST)
        self._no_total = np.empty(0, dtype=HIST)  # children's totals are needed only to derive default bins
        self._no_hist = np.empty((1, 1), dtype=HIST)
        self._no_scratch = np.empty((1, 1, 1), dtype=HIST)
        self._no_marks = np.zeros(0, dtype=np.uint8)  # split_batch's partitions: each task merges (no shared marks)
        self.stats: np.ndarray | None = None
        self.rows = self._all_rows
        self.all_rows = True
        self.tree_store = store       # the store this tree's kernels read: the full one or a compact sample
        self.sample_rows: np.ndarray | None = None  # with a compact store: its rows in the full store
        self._compact: BinnedStore | None = None     # the last compact store, its arrays reused by the next
        self._sample_stats: np.ndarray | None = None  # the statistics of its rows, reused likewise
        self._bin_counts: np.ndarray | None = None   # the full store's rows per bin (see root)
        self.leaf_start = np.zeros(1, np.int64)
        self.leaf_end = np.zeros(1, np.int64)
        self.packed: PackedCounts | None = None  # this tree's histograms are built packed (see PackedCounts)
        self._packed_hist = np.empty((0, 2), dtype=HIST)
        self._packed_total = np.empty(2, dtype=HIST)
        self._row_updates: tuple[int, float] | None = None  # (code columns, sparse entries a row): _schedule
        self._schedules: dict[int, int] = {}  # _schedule by rows, for the store and width they were found for
        self._chunk_counts: dict[int, int] = {}  # row chunks of a row-chunk schedule, by the same rows
        self._schedules_for: tuple | None = None
        self._followers: list[_Follower] = []
        self._entries = EntryPoints()  # the split kernels', this tree's argument types
        self._pending = PendingBoundaries()  # the splits made ahead of their turn
        self._batch_kernels: dict[bool, object] = {}  # split_batch variants, by groups or not (_split_batch)
        self._batch_totals: np.ndarray | None = None  # SplitBatch's outputs (_batch_outputs)
        self._batch_n_left = np.empty(0, np.int64)
        self._ahead_max_rows: int | None = None  # found once a tree (ahead_max_rows)

    @property
    def splits_ahead(self) -> int:
        """How many splits a batch (``split``) takes at once to good use (HistogramBuilder): one a thread from
        BATCH_MIN_THREADS on, else one."""
        return self.n_threads if self.n_threads >= BATCH_MIN_THREADS else 1

    @property
    def ahead_max_rows(self) -> int:
        """The leaves split ahead of their turn have fewer rows: those whose split may go to a batch (_batchable:
        a node partitioned on one thread whose half is a child _batches_child takes, counted by powers of two).  A
        larger one's split runs in parallel regions of its own (_split_one), as soon ahead of its turn as in it,
        and for nothing should its turn never come."""
        if self._ahead_max_rows is None:
            rows = 2
            while rows < PARALLEL_PARTITION_MIN_ROWS and self._batches_child(rows // 2):
                rows *= 2
            self._ahead_max_rows = rows if rows > 2 else 0
        return self._ahead_max_rows

    # ------------------------------------------------------------------ per tree
    def begin(self, stats: np.ndarray, rows: np.ndarray | None = None, max_leaves: int = 2,
              other_rows: np.ndarray | None = None, packed: PackedCounts | None = None) -> None:
        """Grow the next tree on ``stats`` (n_rows, C) float32, over ``rows`` (ascending) or every row.

        ``other_rows`` (ascending; the rows left out of a sample) are partitioned along with the tree
        but never enter a histogram, so that every row's leaf is known at the end: a partition pass
        costs about 2 ns a row, a walk down the finished tree about 25 (measured at 500k x 50).
        ``packed``: the sample is a GOSS sample of (gradient, Hessian, count) statistics under a
        constant Hessian; where it gets a compact store its histograms are built on two columns."""
        self.stats = stats
        self._entries.clear()
        self._pending.clear()
        self._batch_kernels = {}
        self._ahead_max_rows = None
        self.tree_store, self.sample_rows = self.store, None
        self.all_rows = rows is None
        self.packed = None
        if rows is None:
            self.rows = self._all_rows
            put_in_order(self._all_rows)  # partitions reorder it
        elif self._can_compact(rows.shape[0]):
            self.sample_rows = np.ascontiguousarray(rows, dtype=INDEX)
            self.tree_store = self._compact = compact_store(self.store, self.sample_rows, self._compact)
            if packed is not None and stats.shape[1] == 3 and rows.shape[0] < PACKED_AMPLIFIED_UNIT:
                self.packed = packed
            self.stats = self._sample_statistics(stats)
            self.rows = np.arange(rows.shape[0], dtype=INDEX)
            self.all_rows = True
        else:
            self.rows = np.ascontiguousarray(rows, dtype=INDEX)
        self.other_rows = np.zeros(0, INDEX) if other_rows is None else np.array(other_rows, dtype=INDEX)
        self.other_start = np.zeros(max_leaves, np.int64)
        self.other_end = np.zeros(max_leaves, np.int64)
        self.other_end[0] = self.other_rows.shape[0]
        self.leaf_start = np.zeros(max_leaves, np.int64)
        self.leaf_end = np.zeros(max_leaves, np.int64)
        self.leaf_end[0] = self.rows.shape[0]
        if self._total.shape[0] != stats.shape[1]:
            self._total = np.empty(stats.shape[1], dtype=HIST)
        for follower in self._followers:
            follower.begin(max_leaves)
        # a sample's compact store (packed GOSS counts have one too) is new at each tree: schedules anew
        schedules_for = (self.tree_store is self.store, self.stats.shape[1])
        if schedules_for != self._schedules_for or not schedules_for[0]:
            self._schedules_for, self._row_updates = schedules_for, None
            self._schedules.clear()
            self._chunk_counts.clear()

    def follow(self, store: BinnedStore) -> int:
        """Partition the rows of ``store`` (a validation set binned with the training set's bins and layout)
        along with every tree from now on; returns its index for follower_segments."""
        self._followers.append(_Follower(store))
        return len(self._followers) - 1

    def _sample_statistics(self, stats: np.ndarray) -> np.ndarray:
        """The statistics of the sample's rows, in the order of its compact store (packed: two columns)."""
        shape = (self.sample_rows.shape[0], 2 if self.packed is not None else stats.shape[1])
        sample_stats = self._sample_stats
        if sample_stats is None or sample_stats.shape != shape or sample_stats.dtype != stats.dtype:
            sample_stats = self._sample_stats = np.empty(shape, stats.dtype)
        if self.packed is not None:
            gather_packed_counts(stats, self.sample_rows, np.float32(self.packed.plain_hessian), sample_stats)
        else:
            gather_rows(stats, self.sample_rows, sample_stats)
        return sample_stats

    def _can_compact(self, n_sample: int) -> bool:
        """Whether a sample is copied into a store of its own (only stores without a sparse part:
        those are two uint8 matrices; a CSR part would need its by-feature index rebuilt)."""
        return self.store.sparse_indptr.shape[0] == 0 and n_sample <= COMPACT_MAX_FRACTION * self.store.n_rows

    def _schedule(self, n_rows: int) -> int:
        """0 serial, 1 row chunks, >= 2 statistic-column blocks, -1 feature groups (see
        kernels.partition.split_and_build; the groups are _feature_groups()); kept by ``n_rows`` while the
        tree's store and width of statistics stay (begin)."""
        schedule = self._schedules.get(n_rows)
        if schedule is None:
            schedule = self._schedules[n_rows] = self._find_schedule(n_rows)
        return schedule

    def _find_schedule(self, n_rows: int) -> int:
        store, width = self.tree_store, self.stats.shape[1]
        if self._row_updates is None:  # once for the tree's store (a sample's is new at each tree)
            self._row_updates = (store.dense.shape[1] + store.bundle.shape[1],
                                 store.sparse_bins.shape[0] / max(store.n_rows, 1))
        n_columns, sparse_per_row = self._row_updates
        updates = n_rows * (n_columns + sparse_per_row)
        wide = width >= WIDE_MIN_COLS or (width >= WIDE_SMALL_NODE_COLS
                                           and updates < WIDE_SMALL_NODE_UPDATES_PER_BIN * store.total_bins)
        # one thread builds a large node as one row chunk, in a parallel region all the same: Numba compiles
        # a parallel region's body with its arrays marked as not aliasing each other, and the same loop ran
        # 1.4x faster there at two statistic columns (150k x 50, 60k rows: 1.36 against 1.90 ms; 1.1x at
        # three); below PARALLEL_MIN_WORK starting the region costs more (200 rows: 25 against 12 us)
        one_thread = self.n_threads == 1 and not self.deterministic
        too_little = (one_thread and wide) or updates * width < PARALLEL_MIN_WORK
        chunks = self._row_chunks(updates, store.total_bins)
        serial = too_little or (not wide and chunks < self.n_chunks)  # a chunk a thread would not pay
        # feature groups sum each bin in row order, as one thread does: where row chunks would run,
        # deterministic=True keeps them (its sums must not depend on the number of threads).  On a store
        # with a CSR part every group walks each row's entries to its own (SPARSE_GROUP_FREE_SHARE): there
        # they build only nodes too small for two row chunks, whose work is mostly the bins'
        sparse_ok = sparse_per_row <= SPARSE_GROUP_FREE_SHARE * (n_columns + sparse_per_row) \
            or (not wide and chunks < 2)
        if self.n_threads > 1 and n_columns >= 2 and sparse_ok \
                and updates * width >= FEATURE_GROUP_MIN_WORK \
                and (serial or (not self.deterministic and self._cache_resident(n_columns))):
            return -1
        if too_little or (not wide and chunks < min(2, self.n_chunks)):
            return 0
        if not wide and self.n_chunks * store.total_bins * width * 8 <= PRIVATE_HISTOGRAM_BUDGET:
            self._chunk_counts[n_rows] = chunks
            return 1
        return max(2, min(self.n_threads, width))  # column blocks: every block sums its rows in order

    def _row_chunks(self, updates: float, total_bins: int) -> int:
        """Row chunks for a histogram of ``updates`` cell updates: as many as each carry
        CHUNK_MIN_UPDATES_PER_BIN updates a bin, at most one a thread, so that the private histograms a
        chunk zeroes and sums stay paid for at any number of threads (at 16 threads a node of a few
        thousand rows gets a few chunks instead of one thread).  At one or two threads this is the rule it
        replaced, a node either serial or in n_chunks chunks; deterministic=True keeps its fixed chunks (or
        none: 0, a serial build)."""
        paid = int(updates // (CHUNK_MIN_UPDATES_PER_BIN * total_bins))
        if self.deterministic:
            return self.n_chunks if paid >= self.n_chunks else 0
        return min(self.n_chunks, paid)

    def _feature_groups(self) -> FeatureGroups:
        """The feature groups of build_histogram_features for this many threads (feature_groups)."""
        if self._groups is None:
            self._groups = feature_groups(self.store, self.n_threads)
        return self._groups

    def _serial_histogram(self):
        """build_histogram_serial for this tree's width of statistics (packed GOSS counts: 2 columns) and the
        store's kinds of features."""
        return serial_histogram_kernel(self._dense_only, self.stats.shape[1])

    def _serial_split(self):
        """split_and_build_serial for this tree's width of statistics and the store's kinds of features."""
        return serial_split_kernel(self._dense_only, self.stats.shape[1])

    def _cache_resident(self, n_columns: int) -> bool:
        """Whether the tree's store (n_columns code columns) and its statistics fit CACHE_RESIDENT_BYTES."""
        row_bytes = n_columns + self.stats.shape[1] * self.stats.itemsize
        return self.tree_store.n_rows * row_bytes <= CACHE_RESIDENT_BYTES

    def _scratch_for(self, schedule: int, n_rows: int | None = None) -> np.ndarray:
        """The private histograms of a row-chunk schedule: one a chunk (the kernels take the number of chunks
        from it), that is _row_chunks' count for a histogram of ``n_rows`` (the key of _schedule), or one a
        thread's chunk without it."""
        width = self.stats.shape[1]
        if schedule != 1:
            return self._no_scratch
        buf = self._scratch.get(width)
        if buf is None:
            buf = self._scratch[width] = np.empty((self.n_chunks, self.tree_store.total_bins, width), dtype=HIST)
        return buf if n_rows is None else buf[:self._chunk_counts.get(n_rows, self.n_chunks)]

    def root(self, out: np.ndarray) -> np.ndarray:
        total = np.empty(out.shape[1], dtype=HIST)
        schedule = self._schedule(self.rows.shape[0])
        if self.all_rows and self.tree_store is self.store and out.shape[1] <= COLUMN_ROOT_MAX_COLS \
                and schedule == 1:
            # the bins' row counts are the same for every root over the full store: counted once.  A
            # compact sample's root goes row-wise: counting its bins each tree made the column-wise
            # root slower than row chunks (3.2 against 2.6 ms for 150k x 50 rows)
            counts_known = self._bin_counts is not None
            if not counts_known:
                self._bin_counts = np.empty(self.store.total_bins, dtype=HIST)
            build_histogram_columns(self.store, self.stats, self._bin_counts, counts_known,
                                    self._scratch_for(1), out, total)
        else:
            self._build(self.rows, schedule, out, total)
        return total

    def histograms(self, leaves: Sequence[int], outs: Sequence[np.ndarray]) -> None:
        total = np.empty(outs[0].shape[1], dtype=HIST) if len(outs) else None
        for leaf, out in zip(leaves, outs):
            rows = self.rows[int(self.leaf_start[leaf]): int(self.leaf_end[leaf])]
            self._build(rows, self._schedule(rows.shape[0]), out, total)

    def _packed_buffers(self, out: np.ndarray, total: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Two-column stand-ins for a histogram and its totals (see PackedCounts)."""
        if self._packed_hist.shape[0] != out.shape[0]:
            self._packed_hist = np.empty((out.shape[0], 2), dtype=HIST)
        return self._packed_hist, self._packed_total if total.shape[0] else total

    def _unpack(self, packed_out: np.ndarray, packed_total: np.ndarray, out: np.ndarray, total: np.ndarray) -> None:
        plain, amplified = self.packed
        unpack_counts(packed_out, PACKED_AMPLIFIED_UNIT, plain, amplified, out)
        if total.shape[0]:
            unpack_counts(packed_total.reshape(1, 2), PACKED_AMPLIFIED_UNIT, plain, amplified, total.reshape(1, 3))

    def _build(self, rows: np.ndarray, schedule: int, out: np.ndarray, total: np.ndarray) -> None:
        """The histogram of ``rows`` (of the tree's store) into out, their sums into total, by the
        kernel ``schedule`` names (see _schedule)."""
        if self.packed is not None:
            packed_out, packed_total = self._packed_buffers(out, total)
            self._build_kernel(rows, schedule, packed_out, packed_total)
            self._unpack(packed_out, packed_total, out, total)
        else:
            self._build_kernel(rows, schedule, out, total)

    def _build_kernel(self, rows: np.ndarray, schedule: int, out: np.ndarray, total: np.ndarray) -> None:
        """The histogram of ``rows`` by the kernel ``schedule`` names; its row chunks are those of _schedule's
        key ``rows.shape[0]``."""
        if schedule == 0:
            self._serial_histogram()(self.tree_store, rows, self.stats, out, total)
        elif schedule < 0:
            build_histogram_features(self.tree_store, rows, self.stats, self._feature_groups(), out, total)
        elif schedule == 1:
            build_histogram_chunks(self.tree_store, rows, self.stats, self._scratch_for(1, rows.shape[0]), out, total)
        else:
            build_histogram_wide(self.tree_store, rows, self.stats, schedule, out, total)

    def split(self, requests: Sequence[SplitRequest], outs: Sequence[np.ndarray | None],
              scans: Sequence[ChildScan | None] | None = None) -> None:
        """HistogramBuilder.split.  Two or more splits of small nodes run in one kernel call, a thread each
        (kernels.split_step.split_batch: _split_batch); a split whose child is built by feature groups runs its
        scan in the same kernel call (kernels.split_step.split_step), without packed GOSS counts."""
        scans = [None] * len(requests) if scans is None else scans
        batched = self._split_batch(requests, scans)
        for i, (req, out) in enumerate(zip(requests, outs)):
            if i not in batched:
                self._split_one(req, out, scans[i])

    def _child_row_count(self, req: SplitRequest, start: int, end: int) -> int:
        """The number of rows of the child a split builds: from the grower's count of left rows where it gave it,
        else half the node's."""
        if 0 <= req.n_left <= end - start:
            return req.n_left if req.build == BUILD_LEFT else end - start - req.n_left
        return (end - start) // 2

    def _split_one(self, req: SplitRequest, out: np.ndarray | None, scan: ChildScan | None) -> None:
        """One split in its own kernel call (split): the partition, the child's histogram and, where the kernel
        can, the scan."""
        derived = self.tree_store.derived.shape[0] > 0
        total = self._total if derived else self._no_total
        start, end = int(self.leaf_start[req.leaf]), int(self.leaf_end[req.leaf])
        parallel = end - start >= PARALLEL_PARTITION_MIN_ROWS and self.n_threads > 1
        counts = self._counts[self.n_threads if parallel else 1]
        rule = req.rule()  # once: the tree's rows, the rows a sample left out and every follower's take it
        child_rows = self._child_row_count(req, start, end)
        if req.build == BUILD_NONE:
            schedule, hist, hist_total = 0, self._no_hist, total
        elif self.packed is not None:
            schedule, (hist, hist_total) = self._schedule(child_rows), self._packed_buffers(out, total)
        else:
            schedule, hist, hist_total = self._schedule(child_rows), out, total
        job = None
        # a split that a batch would take (_batchable) runs alone in the two kernels that larger nodes' splits run
        # as well: a fit that splits in batches then never compiles split_step (10 s on Otto's store, where
        # split_batch took as long), for the few splits of a small node that come alone
        if scan is not None and schedule < 0 and self.packed is None and not self._batchable(req, scan, start, end) \
                and scan.fusable(self._feature_groups().n_groups):
            job = scan.job()
            n_left = self._entries.call(split_step_kernel(job.params), self.tree_store, self.rows, start, end,
                                        rule, req.build, self.stats, self._feature_groups(), self._tmp,
                                        self._marks, counts, hist, job, scan.categorical)
        elif schedule == 0 and not parallel:  # a small node: the kernel without a parallel region
            n_left = self._entries.call(self._serial_split(), self.tree_store, self.rows, start, end, rule,
                                        req.build, self.stats, self._tmp, self._marks, hist, hist_total)
        else:
            n_left = self._entries.call(split_and_build, self.tree_store, self.rows, start, end, rule, req.build,
                                        self.stats, schedule, self._feature_groups(), self._tmp, self._marks,
                                        counts, self._scratch_for(schedule, child_rows), hist, hist_total)
        if req.build != BUILD_NONE and self.packed is not None:
            self._unpack(hist, hist_total, out, total)
        self._split_others(req, rule, start + n_left)
        if job is not None:
            scan.finish()
        elif scan is not None:
            scan.run()

    def _split_others(self, req: SplitRequest, rule: SplitRule | None, boundary: int) -> None:
        """After the partition of the tree's rows of a leaf at ``boundary``: the leaf's bounds, and the partition of
        the rows a sample left out and of every follower's (by ``rule``, req.rule() where None)."""
        self._pending.divide(self.leaf_start, self.leaf_end, req, boundary)
        if rule is None and (self.other_rows.shape[0] or self._followers):
            rule = req.rule()
        if self.other_rows.shape[0]:
            self._partition(self.store, self.other_rows, self.other_start, self.other_end, self._tmp, self._marks,
                            req, rule)
        for follower in self._followers:
            self._partition(follower.store, follower.rows, follower.start, follower.end, follower.tmp,
                            follower.marks, req, rule)

    def _batchable(self, req: SplitRequest, scan: ChildScan | None, start: int, end: int) -> bool:
        """Whether split_batch takes a split of the rows start:end: a numeric split, with a scan it can run, of a
        node partitioned on one thread whose child is built on one thread (_batches_child) too."""
        if scan is None or req.build == BUILD_NONE or req.left_bins is not None or not scan.batchable:
            return False
        return end - start < PARALLEL_PARTITION_MIN_ROWS \
            and self._batches_child(self._child_row_count(req, start, end))

    def _batches_child(self, child_rows: int) -> bool:
        """Whether a split whose child has ``child_rows`` goes to a batch: where that child is built on one thread,
        and on a store with a CSR part where it is built by feature groups.  Such groups leave the partition to the
        calling thread and, before their index of the CSR entries (histogram.FeatureGroups), each walked every row's
        entries: two threads made a small split of Otto's 1.0-1.25x
        faster than one, a batch of two splits 1.2-1.8x (benchmarks/split_batch.py, CHANGELOG.md stop 65).  Over
        dense columns the groups share a small split's scan about evenly, and batches made rf1's round slower at
        two threads (12.9-13.4 against 11.0-11.7 ms: the Python of the batches, no faster kernels)."""
        schedule = self._schedule(child_rows)
        return schedule == 0 or (schedule < 0 and self.tree_store.sparse_indptr.shape[0] > 0)

    def _split_batch(self, requests: Sequence[SplitRequest], scans: Sequence[ChildScan | None]) -> set[int]:
        """Run the splits of small nodes among ``requests`` in one call of kernels.split_step.split_batch, a task a
        split, or of split_batch_groups where the splits differ in size (_batch_by_groups), where there are two or
        more; return the indices of those it ran."""
        if self.n_threads < 2 or self.packed is not None or len(requests) < 2:
            return set()
        chosen, bounds = [], []
        for i, (req, scan) in enumerate(zip(requests, scans)):
            start, end = int(self.leaf_start[req.leaf]), int(self.leaf_end[req.leaf])
            if self._batchable(req, scan, start, end):
                chosen.append(i)
                bounds.append((start, end, req.feature, req.threshold_bin, req.default_left, req.build))  # SPLIT_*
        if len(chosen) < 2:
            return set()
        batch_scans = [scans[i] for i in chosen]
        scan_batch = batch_scans[0].batch(batch_scans)
        if scan_batch is None:
            return set()
        splits = SplitBatch(np.array(bounds, np.int64), *self._batch_outputs(len(chosen)))
        params = batch_scans[0].params
        by_groups = self._batch_by_groups([end - start for start, end, *_ in bounds], scan_batch[0].scratch.shape[0])
        kernel = self._batch_kernels.get(by_groups)
        if kernel is None:  # once a tree: its statistics' width and its scan's kind stay
            kernel = self._batch_kernels[by_groups] = split_batch_kernel(self._dense_only, self.stats.shape[1],
                                                                         scan_kind(params), by_groups)
        groups = (self._feature_groups(),) if by_groups else ()
        self._entries.call(kernel, self.tree_store, self.rows, self.stats, self._tmp, self._no_marks, NO_CATEGORIES,
                           splits, batch_scans[0].offsets, params, scan_batch[0], *groups, *scan_batch[1:])
        for i, (start, *_), n_left in zip(chosen, bounds, splits.n_left.tolist()):
            self._split_others(requests[i], None, start + n_left)
        batch_scans[0].finish_batch(batch_scans)
        return set(chosen)

    def _batch_by_groups(self, node_rows: list[int], scratch_rows: int) -> bool:
        """Whether a batch of splits of nodes of ``node_rows`` runs shared out by feature groups
        (kernels.split_step.split_batch_groups) rather than a split a task: where its largest split holds more of
        its rows than the groups' work over the threads (1 + BATCH_GROUP_EXTRA_WORK a group beyond the first, of the
        serial build's), on a store whose groups read their own entries only (no CSR part, or its index), with a
        scan scratch row for every group."""
        groups = self._feature_groups()
        if self.n_threads < 2 or groups.n_groups < 2 or scratch_rows < groups.n_groups \
                or (self.tree_store.sparse_indptr.shape[0] > 0 and groups.entry_start.shape[0] == 0):
            return False
        return max(node_rows) * self.n_threads > batch_group_work(groups.n_groups) * sum(node_rows)

    def _batch_outputs(self, n_splits: int) -> tuple[np.ndarray, np.ndarray]:
        """SplitBatch's outputs for a batch of ``n_splits``: the built children's sums (a row each; no columns where
        the store derives no default bin) and the left rows, views of buffers made anew where a batch is larger or
        the width of the sums differs."""
        n_cols = self.stats.shape[1] if self.tree_store.derived.shape[0] > 0 else 0
        totals = self._batch_totals
        if totals is None or totals.shape[0] < n_splits or totals.shape[1] != n_cols:
            totals = self._batch_totals = np.empty((max(n_splits, 2 * self.n_threads), n_cols), dtype=HIST)
            self._batch_n_left = np.empty(totals.shape[0], np.int64)
        return totals[:n_splits], self._batch_n_left[:n_splits]

    def _partition(self, store: BinnedStore, rows: np.ndarray, leaf_start: np.ndarray, leaf_end: np.ndarray,
                   tmp: np.ndarray, marks: np.ndarray, req: SplitRequest, rule: SplitRule) -> None:
        """Partition rows outside the histograms (rows of ``store``, a leaf's at leaf_start:leaf_end) by the
        request's split (``rule``: req.rule()), as the tree's rows were: the rows a sample left out, or a
        follower's."""
        start, end = int(leaf_start[req.leaf]), int(leaf_end[req.leaf])
        parallel = end - start >= PARALLEL_PARTITION_MIN_ROWS and self.n_threads > 1
        if parallel:
            n_left = self._entries.call(split_and_build, store, rows, start, end, rule, BUILD_NONE, self.stats, 0,
                                        self._feature_groups(), tmp, marks, self._counts[self.n_threads],
                                        self._no_scratch, self._no_hist, self._no_total, role="other rows")
        else:
            n_left = self._entries.call(self._serial_split(), store, rows, start, end, rule, BUILD_NONE, self.stats,
                                        tmp, marks, self._no_hist, self._no_total, role="other rows")
        self._pending.divide(leaf_start, leaf_end, req, start + n_left)

    def commit(self, leaf: int, new_leaf: int) -> None:
        """The split of ``leaf`` made ahead of its turn has it: its right rows become ``new_leaf``'s
        (HistogramBuilder)."""
        self._pending.commit(leaf, new_leaf)

    def leaf_segments(self, n_leaves: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(rows, leaf_start, leaf_end): leaf l of the last tree holds rows[leaf_start[l]:leaf_end[l]]."""
        if self.sample_rows is not None:
            return self.sample_rows[self.rows], self.leaf_start[:n_leaves], self.leaf_end[:n_leaves]
        return self.rows, self.leaf_start[:n_leaves], self.leaf_end[:n_leaves]

    def other_segments(self, n_leaves: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """As leaf_segments, for the rows left out of the tree's sample."""
        return self.other_rows, self.other_start[:n_leaves], self.other_end[:n_leaves]

    def follower_segments(self, index: int, n_leaves: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """As leaf_segments, for the rows of the store ``follow`` returned ``index`` for."""
        follower = self._followers[index]
        return follower.rows, follower.start[:n_leaves], follower.end[:n_leaves]


def _set_boundary(leaf_start: np.ndarray, leaf_end: np.ndarray, leaf: int, new_leaf: int, boundary: int) -> None:
    """Split the rows of ``leaf`` at ``boundary``: those after it become ``new_leaf``'s."""
    leaf_start[new_leaf] = boundary
    leaf_end[new_leaf] = leaf_end[leaf]
    leaf_end[leaf] = boundary


class PendingBoundaries:
    """A builder's leaf bounds as the splits set them, where a split made ahead of its turn (``new_leaf`` -1,
    HistogramBuilder) keeps its boundary until ``commit``: until then its leaf keeps all its rows (their order
    already the split's, left rows first).  A builder keeps one, cleared at each tree."""

    def __init__(self):
        # by leaf: (leaf_start, leaf_end, boundary) for each set of rows partitioned (the tree's, the left-out ones)
        self._by_leaf: dict[int, list[tuple[np.ndarray, np.ndarray, int]]] = {}

    def clear(self) -> None:
        self._by_leaf.clear()

    def divide(self, leaf_start: np.ndarray, leaf_end: np.ndarray, req: SplitRequest, boundary: int) -> None:
        """A leaf's rows (leaf_start, leaf_end of a set of rows) up to ``boundary`` stay its own, the others go to
        the right child; a split ahead of its turn keeps the boundary until ``commit``."""
        if req.new_leaf < 0:
            self._by_leaf.setdefault(req.leaf, []).append((leaf_start, leaf_end, boundary))
        else:
            _set_boundary(leaf_start, leaf_end, req.leaf, req.new_leaf, boundary)

    def commit(self, leaf: int, new_leaf: int) -> None:
        """The split of ``leaf`` made ahead of its turn has it: its right rows become ``new_leaf``'s."""
        for leaf_start, leaf_end, boundary in self._by_leaf.pop(leaf):
            _set_boundary(leaf_start, leaf_end, leaf, new_leaf, boundary)


def batch_group_work(n_groups: int) -> float:
    """The work of ``n_groups`` feature groups over a batch's children, in units of the serial build's
    (BATCH_GROUP_EXTRA_WORK a group beyond the first)."""
    return 1.0 + BATCH_GROUP_EXTRA_WORK * (n_groups - 1)


def feature_groups(store: BinnedStore, n_groups: int) -> FeatureGroups:
    """Split the features in at most ``n_groups`` contiguous groups of about equal histogram work, for
    build_histogram_features and kernels.split_step: their (G + 1,) int64 feature boundaries, 0 first and F
    last, and the index of each row's CSR entries by group (FeatureGroups.entry_start) where the store has a
    CSR part, two groups or more, rows of at most 65,535 entries, and the index takes no more bytes than the
    CSR part's bins (GROUP_INDEX_MAX_SHARE; past it each group walks the row's entries to its own).

    A feature's work is the cells its rows update (a dense feature: every row; a sparse one: its stored
    entries; a bundled one: its bundle's rows shared among the bundle's members) plus its histogram rows
    (zeroed and, for a derived default bin, summed again) times the statistics' reads that cost."""
    n_features = store.n_features
    kind = store.feature_kind
    work = np.diff(store.offsets).astype(np.float64)
    dense = kind == FEATURE_DENSE
    work[dense] += store.n_rows
    sparse = kind == FEATURE_SPARSE
    work[sparse] += np.diff(store.csc_indptr)[sparse]
    bundled = kind == FEATURE_BUNDLED
    if bundled.any():
        members = np.bincount(store.feature_slot[bundled], minlength=store.bundle.shape[1])
        work[bundled] += store.n_rows / members[store.feature_slot[bundled]]
    cumulative = np.concatenate([[0.0], np.cumsum(work)])
    targets = cumulative[-1] * np.arange(1, n_groups) / n_groups
    inner = np.searchsorted(cumulative, targets)
    bounds = np.unique(np.concatenate([[0], np.clip(inner, 1, n_features - 1), [n_features]])).astype(np.int64)
    index = np.zeros((0, bounds.shape[0]), GROUP_INDEX)
    indptr = store.sparse_indptr
    if bounds.shape[0] > 2 and indptr.shape[0] > 1:
        index_bytes = store.n_rows * bounds.shape[0] * index.itemsize
        if index_bytes <= GROUP_INDEX_MAX_SHARE * store.sparse_bins.nbytes \
                and int(np.diff(indptr).max()) <= np.iinfo(GROUP_INDEX).max:
            index = np.empty((store.n_rows, bounds.shape[0]), GROUP_INDEX)
            group_entry_starts(indptr, store.sparse_bins, store.offsets[bounds], index)
    return FeatureGroups(bounds, index)


def compact_store(store: BinnedStore, rows: np.ndarray, reuse: BinnedStore | None = None) -> BinnedStore:
    """The store of the given rows (ascending) only, for a store without a sparse part; written into
    the arrays of ``reuse`` (a previous compact store of as many rows), else into new ones (their pages
    are touched for the first time: at 150k x 50 that costs more than the copy itself)."""
    if reuse is not None and reuse.dense.shape[0] == rows.shape[0]:
        dense, dense_cols, bundle, bundle_cols = reuse.dense, reuse.dense_cols, reuse.bundle, reuse.bundle_cols
    else:
        width_d, width_b = store.dense.shape[1], store.bundle.shape[1]
        dense = np.empty((rows.shape[0], width_d), np.uint8)
        dense_cols = np.empty((width_d, rows.shape[0]), np.uint8)
        bundle = np.empty((rows.shape[0], width_b), np.uint8)
        bundle_cols = np.empty((width_b, rows.shape[0]), np.uint8)
    for matrix, matrix_cols, out, out_cols in ((store.dense, store.dense_cols, dense, dense_cols),
                                               (store.bundle, store.bundle_cols, bundle, bundle_cols)):
        gather_rows(matrix, rows, out)
        gather_column_rows(matrix_cols, rows, out_cols)
    return store._replace(dense=dense, dense_cols=dense_cols, bundle=bundle, bundle_cols=bundle_cols)
