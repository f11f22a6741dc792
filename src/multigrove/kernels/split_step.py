"""One kernel call a split: the partition of a node's rows, the histogram of its smaller child and the scan of
both children (``split_step``), where the builder would otherwise make two calls with the grower's Python
between them (``partition.split_and_build``, then ``split.best_splits``).

The smaller child's histogram is built by feature groups (``histogram.build_histogram_features``' schedule),
and each group's task goes on to scan its own features at once: it derives the default bins of its features
that have them (a store with a CSR part), subtracts them from the parent's histogram (the larger child's, by
LightGBM's subtraction) and finds each feature's best threshold in both children while the bins it has just
written are in its cache.  One parallel region a split instead of two, and no return to
Python between the histogram and the scan: on rf1's nodes (64 features x 198 bins, children of about 60 rows,
two threads) the build and the scan took 54 us against 59 one after the other (CHANGELOG.md, stop 60).  The
sums and the scan are those of the two kernels, bit for bit: a bin is summed in row order by one task, and each
feature is scanned by the same code.

Many small splits in one kernel call (``split_batch``): the same three steps for each split of a batch, one split a
task on one thread, through the serial kernels (``partition.split_and_build_serial``, ``split.best_splits_serial``).
Leaf-wise growth sends such batches from several threads on (``boosting.builder.BATCH_MIN_THREADS``), where a small
node's split shares out worse over threads than a batch shares out its splits.  A batch whose splits differ in size
would keep the threads waiting on its largest (Otto's at 16 threads: its largest splits held two thirds of its rows);
``split_batch_groups`` shares such a batch out by feature groups instead: the partitions a task a split, then a task
a group over every split's child, with the same sums and scans.
"""
from typing import NamedTuple

import numpy as np
from numba import njit, prange

from ._variants import variant
from .histogram import (
    FEATURE_GROUP_MIN_WORK,
    FIRST,
    U,
    _add_row_totals,
    build_histogram_serial,
    build_owned_bins,
    first_dense_feature,
    fix_group_default_bins,
    row_updates,
    serial_variant_key,
    serial_variant_name,
    totals_from_dense,
)
from .partition import (
    SERIAL_SPLITS,
    SplitRule,
    _child_rows,
    partition_rows,
    partition_rows_parallel,
    split_and_build_serial,
)
from .split import (
    SCAN_KERNELS,
    FeatureSplits,
    NodeSplits,
    ScanParams,
    _scan_tasks,
    best_split_per_feature,
    best_splits_serial,
    choose_node_splits,
    scan_kind,
)


class ScanJob(NamedTuple):
    """The scan that follows a split (split.best_splits' arguments but the smaller child's histogram, which
    the split builds): node 0 is the smaller child, node 1 (where ``active`` has two entries) the larger."""
    parent: np.ndarray        # (total_bins, C): the parent's histogram, the larger child's on exit
    subtract: bool            # turn ``parent`` into the larger child's histogram (parent - smaller)
    totals: np.ndarray        # (>= n_nodes, C): the children's sums
    offsets: np.ndarray       # (F + 1,) int64: each feature's bins
    feature_mask: np.ndarray  # (F,) bool: the features to scan
    params: ScanParams
    scratch: np.ndarray       # split.scan_scratch rows (one per feature group at least)
    active: np.ndarray        # (n_nodes,) bool: the nodes to scan
    noise: np.ndarray         # (>= n_nodes, F): random_strength's noise on each feature's score
    per_feature: FeatureSplits  # each (node, feature)'s best threshold
    best: NodeSplits          # each node's best split


@njit(cache=True, nogil=True, error_model="numpy")
def child_totals(store, rows, stats, out, total):
    """OUT total (C,): the sums of ``rows``' statistics as build_histogram_serial finds them, bit for bit: the
    sums of the first dense column's bins (histogram.totals_from_dense; the bins, each summed in row order, are
    written into ``out``'s rows of that feature, which the feature's group writes again), or without a dense
    column the rows summed in order.  The totals a store's derived default bins are computed from
    (histogram.fix_default_bins): a pass over one column of the rows, on the calling thread before the feature
    groups, which all need them."""
    if store.dense.shape[1] == 0:
        total[:] = 0.0
        _add_row_totals(rows, FIRST, rows.shape[0], stats, total)
        return
    f = first_dense_feature(store)
    for b in range(store.offsets[f], store.offsets[f + 1]):
        for c in range(out.shape[1]):
            out[U(b), U(c)] = 0.0
    base = U(store.dense_base[0])
    for i in range(rows.shape[0]):
        r = U(rows[i])
        b = base + U(store.dense[r, U(0)])
        for c in range(stats.shape[1]):
            out[b, U(c)] += stats[r, U(c)]
    totals_from_dense(store, out, total)


@njit(parallel=True, cache=True, nogil=True, error_model="numpy")
def build_and_scan(store, rows, stats, groups, out, total, parent, subtract, active, totals, offsets, feature_mask,
                   p, categorical, scratch, per_feature):
    """The histogram of ``rows`` into ``out`` by the feature groups ``groups`` (histogram.FeatureGroups, as
    build_histogram_features), each group's task then deriving the default bins of its derived features from
    ``total`` (the rows' sums: child_totals; unread on a store without derived bins) and scanning its features in
    both nodes: the arguments from ``parent`` on are split.best_split_per_feature's (h1 to per_feature;
    ``scratch`` has a row per group).  A ScanJob's fields travel one by one here: Numba's parallel loop could not
    take them from the tuple."""
    n_nodes = active.shape[0]
    bounds = groups.bounds
    n_groups = bounds.shape[0] - 1
    derived = store.derived.shape[0] > 0
    for g in prange(n_groups):
        build_owned_bins(store, rows, stats, groups, g, out)
        if derived:  # as build_histogram_features' second region, for this group's features only
            fix_group_default_bins(store, groups, g, total, out)
        _scan_tasks(n_nodes * bounds[g], n_nodes * bounds[g + 1], out, parent, subtract, active, totals, offsets,
                    feature_mask, p, categorical, scratch[g], per_feature.gain, per_feature.threshold_bin,
                    per_feature.default_left, per_feature.splittable)


# parallel=True without a loop of its own: it calls parallel kernels (kernels._variants.PARALLEL_CALLER)
@njit(parallel=True, cache=True, nogil=True, error_model="numpy")
def split_step(store, rows, start, end, rule, build, stats, groups, tmp, marks, counts, out, job, categorical):
    """Partition ``rows[start:end]`` by ``rule`` (in parallel when counts has more than one chunk), build the
    histogram of the child ``build`` names (1 left, 2 right) into ``out`` and scan it and, with a second
    active node, the larger child (``job``: ScanJob; OUT job.parent, job.per_feature, job.best).  Returns the
    number of left rows.

    The child is built by the feature groups ``groups`` and scanned in the same tasks (build_and_scan) from
    FEATURE_GROUP_MIN_WORK on; a smaller child is built on this thread and scanned by
    split.best_split_per_feature.  A store with derived default bins (whose build needs the child's sums
    first) is not for this kernel: the builder splits and scans it in two calls."""
    if counts.shape[0] > 1:
        n_left = partition_rows_parallel(store, rows, start, end, rule, tmp, marks, counts)
    else:
        n_left = partition_rows(store, rows, start, end, rule, tmp, marks)
    child = _child_rows(rows, start, end, n_left, build)
    n_nodes = job.active.shape[0]
    derived = store.derived.shape[0] > 0
    total = np.empty(stats.shape[1] if derived else 0)  # the child's sums, where its default bins need them
    if child.shape[0] * row_updates(store) * stats.shape[1] >= FEATURE_GROUP_MIN_WORK:
        if derived:
            child_totals(store, child, stats, out, total)
        build_and_scan(store, child, stats, groups, out, total, job.parent, job.subtract, job.active, job.totals,
                       job.offsets, job.feature_mask, job.params, categorical, job.scratch, job.per_feature)
    else:
        build_histogram_serial(store, child, stats, out, total)  # without a derived bin, no sums: the job has them
        best_split_per_feature(out, job.parent, job.subtract, job.active, job.totals, job.offsets, job.feature_mask,
                               job.params, categorical, job.scratch, job.per_feature)
    choose_node_splits(out, job.parent, n_nodes, job.totals, job.offsets, job.params, categorical, job.noise,
                       job.per_feature, job.best)
    return n_left


def _split_step_variant(kind: str):
    """split_step compiled with the scan of ``kind`` (kernels.split.SCAN_KERNELS)."""
    if kind == "any":
        return split_step
    scan = SCAN_KERNELS[kind]
    groups = variant(build_and_scan, kind, parallel=True, _scan_tasks=scan.tasks)
    return variant(split_step, kind, parallel=True, build_and_scan=groups, best_split_per_feature=scan.per_feature,
                   choose_node_splits=scan.choose)


#: split_step by kind of scan (split.scan_kind)
SPLIT_STEPS = {kind: _split_step_variant(kind) for kind in SCAN_KERNELS}


def split_step_kernel(p: ScanParams):
    """The split_step variant for the scan parameters ``p``."""
    return SPLIT_STEPS[scan_kind(p)]


#: columns of SplitBatch.plan: each split's rows are rows[start:end] of the tree's rows; its numeric rule
#: (kernels.partition.SplitRule: feature, threshold bin, missing values left when 1); the child whose histogram it
#: builds (1 left, 2 right)
SPLIT_START, SPLIT_END, SPLIT_FEATURE, SPLIT_THRESHOLD, SPLIT_DEFAULT_LEFT, SPLIT_BUILD = range(6)
#: columns of ScanBatch.plan: the slot split i builds its smaller child in; the slot of its parent, the larger
#: child's on exit; 1 to turn the parent's histogram into the larger child's; the nodes it scans (2: both
#: children, 1: the smaller only)
SCAN_OUT_SLOT, SCAN_PARENT_SLOT, SCAN_SUBTRACT, SCAN_N_NODES = range(4)


class SplitBatch(NamedTuple):
    """Splits of small nodes, one a task of split_batch.  A split's numbers travel as one row of ``plan``, which the
    builder fills from a list in one call (six arrays took a call each: about 7 us a batch)."""
    plan: np.ndarray          # (m, 6) int64: SPLIT_* columns
    totals: np.ndarray        # (m, C) or (m, 0): the built child's sums, where the store derives default bins
    n_left: np.ndarray        # (m,) int64, OUT: each split's left rows


class ScanBatch(NamedTuple):
    """The children's scans of a SplitBatch: split i's smaller child is node 2i, its larger one 2i + 1 (their
    results in a FeatureSplits and a NodeSplits of 2m nodes beside it: a parallel loop takes a tuple of arrays,
    not a tuple of tuples).  Its arrays may hold more rows than the batch has splits."""
    hists: np.ndarray         # (S, total_bins, C): the histograms the splits read and write, by slot
    plan: np.ndarray          # (>= m, 4) int64: SCAN_* columns
    active: np.ndarray        # (>= m, 2) bool: the nodes to scan
    totals: np.ndarray        # (>= 2m, C): the children's sums
    masks: np.ndarray         # (>= m, F) bool: the features each split's children scan
    scratch: np.ndarray       # (>= m, W): a split.scan_scratch row per split
    noise: np.ndarray         # (2, F): zeros (a batch draws no random_strength noise)


@njit(cache=True, inline="always", error_model="numpy")
def _batch_rule(i, splits, no_categories):
    """(start, end, rule) of split i of ``splits`` (SplitBatch): its rows rows[start:end] and its numeric rule."""
    plan = splits.plan
    rule = SplitRule(plan[i, SPLIT_FEATURE], plan[i, SPLIT_THRESHOLD], plan[i, SPLIT_DEFAULT_LEFT] != 0, no_categories)
    return plan[i, SPLIT_START], plan[i, SPLIT_END], rule


@njit(cache=True, inline="always", error_model="numpy")
def _pair_features(i, found):
    """The rows of split i's two children (2i, 2i + 1) in a batch's FeatureSplits."""
    n0, n1 = 2 * i, 2 * i + 2
    return FeatureSplits(found.gain[n0:n1], found.threshold_bin[n0:n1], found.default_left[n0:n1],
                         found.splittable[n0:n1])


@njit(cache=True, inline="always", error_model="numpy")
def _pair_nodes(i, best):
    """The rows of split i's two children (2i, 2i + 1) in a batch's NodeSplits."""
    n0, n1 = 2 * i, 2 * i + 2
    return NodeSplits(best.gain[n0:n1], best.feature[n0:n1], best.threshold_bin[n0:n1], best.default_left[n0:n1],
                      best.left_sums[n0:n1])


@njit(cache=True, nogil=True, error_model="numpy")
def _split_task(i, store, rows, stats, tmp, no_marks, no_categories, splits, offsets, p, scans, found, best):
    """split_batch's task i: split i of ``splits`` and the scan of its children, on the calling thread, by the serial
    kernels a split of one thread calls (partition.split_and_build_serial, split.best_splits_serial: the same
    compiled code, and no second compilation of it)."""
    scan = scans.plan
    s0, s1, rule = _batch_rule(i, splits, no_categories)
    out = scans.hists[scan[i, SCAN_OUT_SLOT]]
    splits.n_left[i] = split_and_build_serial(store, rows, s0, s1, rule, splits.plan[i, SPLIT_BUILD], stats,
                                              tmp[s0:s1], no_marks, out, splits.totals[i])
    best_splits_serial(out, scans.hists[scan[i, SCAN_PARENT_SLOT]], scan[i, SCAN_N_NODES], scan[i, SCAN_SUBTRACT] != 0,
                       scans.totals[2 * i:2 * i + 2], offsets, scans.masks[i], p, None, scans.scratch[i:i + 1],
                       scans.active[i], scans.noise, _pair_features(i, found), _pair_nodes(i, best))


@njit(parallel=True, cache=True, nogil=True, error_model="numpy")
def split_batch(store, rows, stats, tmp, no_marks, no_categories, splits, offsets, p, scans, per_feature, best):
    """Split the small nodes of ``splits`` (SplitBatch) in parallel, one task a split: each partitions its rows and
    builds its smaller child's histogram (partition.split_and_build_serial, without marks: ``no_marks`` is empty,
    since the tasks' features would share them) and scans both children (split.best_splits_serial), all on one
    thread.  Leaf-wise growth splits the next leaves in turn together (grower.TreeGrower._splits_ahead): one
    parallel region for a batch of splits whose work is each too small to share out (two threads made one of
    Otto's small splits 1.0-1.25x faster than one, a batch of two 1.2-1.8x: benchmarks/split_batch.py).  A task's
    sums and scan are those of the serial kernels, bit for bit.  OUT rows (their segments), tmp scratch, splits.n_left,
    splits.totals, scans.hists' slots; per_feature (FeatureSplits) and best (NodeSplits) of 2m nodes, split i's
    children in rows 2i and 2i + 1."""
    for i in prange(splits.plan.shape[0]):
        _split_task(i, store, rows, stats, tmp, no_marks, no_categories, splits, offsets, p, scans, per_feature, best)


@njit(cache=True, nogil=True, error_model="numpy")
def _batch_child(i, rows, splits):
    """The rows of the child split i of ``splits`` (SplitBatch) builds, after its partition."""
    plan = splits.plan
    return _child_rows(rows, plan[i, SPLIT_START], plan[i, SPLIT_END], splits.n_left[i], plan[i, SPLIT_BUILD])


@njit(cache=True, nogil=True, error_model="numpy")
def _partition_task(i, store, rows, stats, tmp, no_marks, no_categories, splits, scans):
    """split_batch_groups' first task for split i: its partition (partition.split_and_build_serial, building
    nothing) and, where the store derives default bins, the sums of the child it builds (child_totals)."""
    s0, s1, rule = _batch_rule(i, splits, no_categories)
    out = scans.hists[scans.plan[i, SCAN_OUT_SLOT]]
    splits.n_left[i] = split_and_build_serial(store, rows, s0, s1, rule, 0, stats, tmp[s0:s1], no_marks, out,
                                              splits.totals[i])
    if store.derived.shape[0] > 0:
        child_totals(store, _batch_child(i, rows, splits), stats, out, splits.totals[i])


@njit(cache=True, nogil=True, error_model="numpy")
def _choose_task(i, offsets, p, scans, per_feature, best):
    """split_batch_groups' choice of each child's split of split i among its features' (split.choose_node_splits)."""
    scan = scans.plan
    choose_node_splits(scans.hists[scan[i, SCAN_OUT_SLOT]], scans.hists[scan[i, SCAN_PARENT_SLOT]],
                       scan[i, SCAN_N_NODES], scans.totals[2 * i:2 * i + 2], offsets, p, None, scans.noise,
                       _pair_features(i, per_feature), _pair_nodes(i, best))


@njit(cache=True, nogil=True, error_model="numpy")
def _group_task(g, i, store, rows, stats, groups, splits, offsets, p, scans, found):
    """split_batch_groups' work of feature group g in split i: the group's bins of the built child (its default
    bins derived from the child's sums), then the scan of the group's features in the split's children."""
    scan = scans.plan
    out, parent = scans.hists[scan[i, SCAN_OUT_SLOT]], scans.hists[scan[i, SCAN_PARENT_SLOT]]
    build_owned_bins(store, _batch_child(i, rows, splits), stats, groups, g, out)
    if store.derived.shape[0] > 0:
        fix_group_default_bins(store, groups, g, splits.totals[i], out)
    bounds = groups.bounds
    n_nodes = scan[i, SCAN_N_NODES]
    mine = _pair_features(i, found)
    _scan_tasks(n_nodes * bounds[g], n_nodes * bounds[g + 1], out, parent, scan[i, SCAN_SUBTRACT] != 0,
                scans.active[i, :n_nodes], scans.totals[2 * i:2 * i + 2], offsets, scans.masks[i], p, None,
                scans.scratch[g], mine.gain, mine.threshold_bin, mine.default_left, mine.splittable)


@njit(parallel=True, cache=True, nogil=True, error_model="numpy")
def split_batch_groups(store, rows, stats, tmp, no_marks, no_categories, splits, offsets, p, scans, groups,
                       per_feature, best):
    """split_batch shared out by feature groups (histogram.FeatureGroups), for a batch whose splits differ in size:
    a task a split would leave the threads waiting on the largest one.  A first region partitions each split's rows
    (a task a split, partition.split_and_build_serial building nothing) and, where the store derives default bins,
    sums its built child (child_totals); a second gives each feature group a task that builds the group's bins of
    every split's child and scans the group's features in both children (as build_and_scan does for one split);
    each split's choice among its features follows on the calling thread.  The sums and the scan are
    split_batch's, bit for bit (a bin summed in row order by one task).  IN/OUT as split_batch; ``scans.scratch``
    has a row per group."""
    n_splits = splits.plan.shape[0]
    for task in prange(n_splits):
        _partition_task(task, store, rows, stats, tmp, no_marks, no_categories, splits, scans)
    n_groups = groups.bounds.shape[0] - 1
    for g in prange(n_groups):
        for i in range(n_splits):
            _group_task(g, i, store, rows, stats, groups, splits, offsets, p, scans, per_feature)
    for j in range(n_splits):
        _choose_task(j, offsets, p, scans, per_feature, best)


#: split_batch's variants by (dense store, width, kind of scan), made on first use (split_batch_kernel)
SPLIT_BATCHES: dict = {}


def split_batch_kernel(dense: bool, width: int, kind: str, by_groups: bool = False):
    """split_batch (split_batch_groups ``by_groups``) for a store of dense columns only or any, statistics of
    ``width`` columns (histogram.serial_variant_key) and the scan of ``kind`` (split.scan_kind), its serial kernels
    compiled in."""
    key = (*serial_variant_key(dense, width), kind, by_groups)
    kernel = SPLIT_BATCHES.get(key)
    if kernel is None:
        kernel = SPLIT_BATCHES[key] = _split_batch_variant(*key)
    return kernel


def _split_batch_variant(dense: bool, width: int, kind: str, by_groups: bool):
    """split_batch_kernel's variant, made."""
    name = f"{serial_variant_name(dense, width)}_{kind}"
    scan = SCAN_KERNELS[kind]
    if by_groups:
        partition = variant(_partition_task, name, split_and_build_serial=SERIAL_SPLITS[dense, width])
        return variant(split_batch_groups, f"{name}_groups", parallel=True, _partition_task=partition,
                       _group_task=variant(_group_task, name, _scan_tasks=scan.tasks),
                       _choose_task=variant(_choose_task, name, choose_node_splits=scan.choose))
    task = variant(_split_task, name, split_and_build_serial=SERIAL_SPLITS[dense, width],
                   best_splits_serial=scan.best_splits_serial)
    return variant(split_batch, name, parallel=True, _split_task=task)
