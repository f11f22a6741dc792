"""The rows of one process: everything the boosting loop does row by row.

``TrainingShard`` holds one process's training rows (binned features, labels, weights, scores,
gradient statistics) and answers the engine's row-side requests: compute gradients, give the
global quantities a sketch needs (column norms, Gram products), set the statistics splits are
scored on, build histograms for the grower (it is a ``HistogramBuilder``), sum leaf statistics,
add a finished tree to the scores, and report metric parts.  ``EvalShard`` does the same for a
validation set.  A local run has one of each per data set; a distributed run (the planned
``multigrove.dask``) would keep one per worker and sum what they return, so that the engine and the
grower stay the same in both.
"""
from __future__ import annotations

from typing import NamedTuple, Sequence

import numpy as np

from .._dtypes import HIST, INDEX, SCORE, STAT
from ..kernels._variants import pick
from ..kernels.partition import add_leaf_values, add_leaf_values_serial
from ..kernels.predict import predict_store, predict_store_serial, predict_store_serial_dense
from ..kernels.sampling import scale_rows, scale_rows_by
from ..kernels.split import segment_labels, segment_sums, segment_sums_serial
from ..kernels.store import BinnedStore, dense_only
from .builder import LocalBuilder, PackedCounts, SplitRequest
from .leaves import StatLayout
from .losses import Loss, observed
from .metrics import MetricPart, metric_parts, needs_probabilities
from .sampling import ALL_ROWS, bagging_rows, bayesian_weights, goss_rows, row_magnitudes
from .sketch import SketchPlan, apply_sketch, column_sq_norms, gram_product
from .tree import Tree, prediction_work, stack_trees

#: compute_gradients' empty arguments of a round pass: no tree to add, no projection
NO_ROWS = np.zeros(0, np.int32)
NO_LEAVES = np.zeros((0, 0), SCORE)
NO_PROJECTION = np.zeros((0, 0), STAT)
NO_SKETCH = np.zeros((0, 1), STAT)


def leaf_map(n_rows: int, segments: list, n_leaves: int) -> np.ndarray:
    """(n_rows,) int32: the leaf each row is in, from (rows, start, end) segments (leaf l holds
    rows[start[l]:end[l]]); -1 for a row in none."""
    leaf_of = np.full(n_rows, -1, np.int32)
    for rows, start, end in segments:
        if rows.shape[0]:
            segment_labels(rows, start[:n_leaves], end[:n_leaves], leaf_of)
    return leaf_of


class OutputColumn(NamedTuple):
    """Split statistics of one output: the one-vs-all strategy's tree for output ``column``."""
    column: int


class SampleSpec(NamedTuple):
    """How to draw the rows of the next trees (see boosting/sampling.py)."""
    strategy: str          # "all", "bagging" or "goss"
    bagging_fraction: float
    top_rate: float
    other_rate: float
    seed: tuple            # a shard draws with default_rng((*seed, shard id))
    temperature: float = 0.0  # > 0: Bayesian bootstrap weights (-log U)^temperature on every row, drawn
    weight_seed: tuple = ()   # every round with default_rng((*weight_seed, shard id))


def layout_for_splits(layout: StatLayout, spec: SketchPlan | OutputColumn) -> StatLayout:
    """The layout of the statistics a tree's splits are scored on."""
    const = layout.h_scale if layout.h_stride == 0 else None
    if isinstance(spec, OutputColumn):
        return StatLayout.make(1, const)
    if spec.is_full:
        return layout
    return StatLayout.make(spec.width, const, shared_hessian=spec.projection is not None and const is None)


def predict_trees_into(store: BinnedStore, rows: np.ndarray, trees: list[Tree], out: np.ndarray) -> None:
    """out[rows] += the trees' outputs for those rows of a binned store."""
    forest = stack_trees(trees)
    serial = predict_store_serial_dense if dense_only(store) else predict_store_serial
    pick(predict_store, serial, prediction_work(forest, rows.shape[0]))(store, rows, forest, out)


def training_shard(store: BinnedStore, label: np.ndarray, weight: np.ndarray | None, loss: Loss,
                   init_score: np.ndarray, layout: StatLayout, n_threads: int, deterministic: bool = False,
                   device_type: str = "cpu") -> "TrainingShard":
    """The training rows of a local run: on the host's cores, or on the GPU for ``device_type="cuda"``
    (boosting/cuda_shard.py, imported only then: importing multigrove never touches CUDA)."""
    if device_type == "cpu":
        return TrainingShard(store, label, weight, loss, init_score, layout, n_threads, deterministic=deterministic)
    if deterministic:
        raise ValueError("deterministic=True needs device_type='cpu': the GPU adds its histograms and leaf sums with "
                         "atomic adds in any order, so two fits may differ in the last bits of a sum")
    from .cuda_shard import CudaTrainingShard
    return CudaTrainingShard(store, label, weight, loss, init_score, layout, n_threads)


class TrainingShard:
    """One process's training rows; a ``HistogramBuilder`` for the grower."""

    #: scores split candidates itself (grower.CandidateScorer) when its statistics have no histogram
    candidate_scorer = None
    #: the grower's histograms and scans on a device (cuda_histograms.DeviceHistograms); None: host arrays
    device_histograms = None
    #: the last tree, when its values reach the scores in the next round's gradient pass (the loss's
    #: round_pass): (its leaves' rows as (rows, start, end) segments, the leaf values (n_leaves, outputs))
    _pending: tuple[list, np.ndarray] | None = None
    #: the projection the last gradient pass also wrote
    _sketched: SketchPlan | None = None

    def __init__(self, store: BinnedStore, label: np.ndarray, weight: np.ndarray | None, loss: Loss,
                 init_score: np.ndarray, layout: StatLayout, n_threads: int, shard_id: int = 0,
                 deterministic: bool = False, builder=None):
        n = store.n_rows
        self.store, self.w, self.loss, self.layout = store, weight, loss, layout
        self.y, self.mask = observed(label)  # missing labels: no gradient, no Hessian, no metric term
        if self.mask is not None and not layout.h_stride:
            raise ValueError("missing labels need a layout that stores the Hessian (see engine.stat_layout)")
        self.shard_id = shard_id
        self.init_score = np.asarray(init_score, dtype=SCORE).copy()  # in training units
        self.scores = np.tile(self.init_score, (n, 1))
        self.stats = layout.allocate(n)
        # a constant Hessian stored as columns (weighted, scaled by GOSS, or masked): c * w, rewritten every round
        self._const_h = None
        if layout.h_stride and loss.hess_constant is not None:
            w = np.ones(n) if weight is None else weight
            self._const_h = (loss.hess_constant * w).astype(STAT)[:, None]
            if self.mask is not None:
                self._const_h = self._const_h * self.mask
        self._w32 = None if weight is None else weight.astype(STAT)[:, None]
        self.sample = ALL_ROWS
        self._bootstrapped = False  # this round's rows carry Bayesian bootstrap weights
        self._frozen = np.zeros(0, np.int64)
        self.builder = LocalBuilder(store, n_threads, deterministic) if builder is None else builder
        self._buffers: dict[StatLayout, np.ndarray] = {}
        self.split_stats = self.stats
        self._split_layout = layout
        self._no_cols = np.zeros((1, 1), np.int32)
        self._followers: list[tuple["EvalShard", int]] = []

    @property
    def n_rows(self) -> int:
        return self.store.n_rows

    @property
    def scores(self) -> np.ndarray:
        """(n, outputs) float64 raw scores of the training rows, every tree so far included."""
        self._add_pending()
        return self._scores

    @scores.setter
    def scores(self, value) -> None:
        self._scores = value

    def _add_pending(self) -> None:
        """Add the tree that waits for the next gradient pass to the scores now (they are read first)."""
        if self._pending is not None:
            segments, leaf_value = self._pending
            self._pending = None
            for rows, start, end in segments:
                pick(add_leaf_values, add_leaf_values_serial, rows.shape[0] * leaf_value.shape[1])(
                    rows, start, end, leaf_value, 0, self._no_cols, self._scores)

    def follow(self, shard: "EvalShard") -> None:
        """Update ``shard``'s scores with every tree from now on from its rows' leaves, which the builder finds
        while it partitions the tree's rows (LocalBuilder.follow); a builder that cannot leaves the shard to walk
        the finished trees (EvalShard.add_trees)."""
        if hasattr(self.builder, "follow"):
            self._followers.append((shard, self.builder.follow(shard.store)))
            shard.followed = True

    # ------------------------------------------------------------------ gradients and sketches
    def _grad(self) -> np.ndarray:
        return self.stats[:, : self.layout.k]

    def _hess(self) -> np.ndarray | None:
        layout = self.layout
        return self.stats[:, layout.h_col: layout.h_col + layout.k] if layout.h_stride else None

    def compute_gradients(self, sketch: SketchPlan | None = None) -> None:
        """Gradients and Hessians of the loss at the current scores, times the row weights.

        ``sketch``: the random projection the next ``set_split_statistics`` will ask for (drawn before the
        gradients, which it does not depend on).  Where the loss has a round pass (``Loss.round_pass``) and
        the rows no weights, missing labels or frozen outputs, one pass over the rows adds the last tree to
        the scores, computes the gradients and projects them; elsewhere the projection waits for
        ``set_split_statistics``."""
        self._sketched = None
        round_pass = self._round_pass()
        if round_pass is None or self._frozen.size:
            self._gradients_into(self.scores, self.stats)
            return
        leaf_of_row, leaf_value = NO_ROWS, NO_LEAVES
        if self._pending is not None:
            segments, leaf_value = self._pending
            leaf_of_row = leaf_map(self.n_rows, segments, leaf_value.shape[0])
            self._pending = None
        projection_t, out = NO_PROJECTION, NO_SKETCH
        if sketch is not None and sketch.projection is not None:
            projection_t = np.ascontiguousarray(sketch.projection.T)
            out = self._buffer(layout_for_splits(self.layout, sketch))  # columns k + 1 on: the counts
            self._sketched = sketch
        pick(*round_pass, self._scores.size)(self._scores, self.y, leaf_of_row, leaf_value, self.stats,
                                             self.layout.h_col, projection_t, out)

    def _round_pass(self) -> tuple | None:
        """The loss's round pass (Loss.round_pass) where it serves these rows: rows without weights or missing
        labels, a Hessian per output; else None (frozen outputs, which change by round, are compute_gradients'
        to check)."""
        if self._w32 is not None or self.mask is not None or not self.layout.h_stride \
                or self.layout.k != self._scores.shape[1]:
            return None
        return self.loss.round_pass

    def _gradients_into(self, scores: np.ndarray, stats: np.ndarray) -> None:
        """stats' gradient and Hessian columns (self.layout) at ``scores``, weighted and masked."""
        layout = self.layout
        G = stats[:, : layout.k]
        H = stats[:, layout.h_col: layout.h_col + layout.k] if layout.h_stride else None
        own_hess = self.loss.hess_constant is None
        self.loss.gradients(scores, self.y, G, H if own_hess else None)
        if self._w32 is not None:
            G *= self._w32
            if own_hess:
                H *= self._w32
        if self._const_h is not None:
            H[...] = self._const_h
        elif self.mask is not None:
            H *= self.mask
        if self.mask is not None:
            G *= self.mask
        if self._frozen.size:  # outputs that stopped learning: no pull on splits, leaf values 0
            G[:, self._frozen] = 0.0

    def freeze_outputs(self, outputs: Sequence[int]) -> None:
        """These outputs stop learning (per-output early stopping): their gradients are zeroed."""
        self._frozen = np.asarray(outputs, np.int64)

    def column_sq_norms(self) -> np.ndarray:
        return column_sq_norms(self._grad())

    def gram_product(self, V: np.ndarray) -> np.ndarray:
        return gram_product(self._grad(), V)

    def set_split_statistics(self, spec: SketchPlan | OutputColumn) -> StatLayout:
        """Choose the statistics the next tree's splits are scored on; return their layout."""
        split_layout, buf = self._split_buffer(spec)
        if buf is None:
            return split_layout
        if self._sketched is not None and isinstance(spec, SketchPlan) and spec.projection is not None \
                and np.array_equal(spec.projection, self._sketched.projection):  # the gradient pass wrote it
            self.split_stats = buf
            return split_layout
        H = self._hess()
        has_hess = split_layout.h_stride or split_layout.count_col > split_layout.h_col
        out_h = buf[:, split_layout.h_col: split_layout.count_col] if has_hess else None
        if isinstance(spec, OutputColumn):
            buf[:, 0] = self.stats[:, spec.column]
            if out_h is not None:
                out_h[:, 0] = H[:, spec.column]
        else:
            apply_sketch(spec, self.stats, self.layout, buf[:, : split_layout.k], out_h)
        self.split_stats = buf
        return split_layout

    def _split_buffer(self, spec: SketchPlan | OutputColumn):
        """(the layout of the statistics the next tree's splits are scored on, their buffer, kept per layout);
        the buffer is None when the full statistics serve (split_stats set to them)."""
        split_layout = self._split_layout = layout_for_splits(self.layout, spec)
        if split_layout is self.layout:
            self.split_stats = self.stats
            return split_layout, None
        return split_layout, self._buffer(split_layout)

    def _buffer(self, layout: StatLayout) -> np.ndarray:
        """The statistics buffer of ``layout`` (split statistics), allocated once."""
        if layout not in self._buffers:
            self._buffers[layout] = self._allocate(layout)
        return self._buffers[layout]

    def _allocate(self, layout: StatLayout) -> np.ndarray:
        """Statistics of ``layout`` for every row, the count column 1."""
        return layout.allocate(self.n_rows)

    def draw_rows(self, spec: SampleSpec) -> None:
        """Draw the rows of this round's trees; GOSS multiplies the drawn small-gradient rows' gradients
        and Hessians (full and split statistics) by (1 - a) / b, the Bayesian bootstrap every row's by
        its weight."""
        rng = np.random.default_rng((*spec.seed, self.shard_id))
        if spec.strategy == "bagging":
            self.sample = bagging_rows(self.n_rows, spec.bagging_fraction, rng)
        elif spec.strategy == "goss":
            split_layout = self._split_layout
            magnitudes = row_magnitudes(self.split_stats[:, : split_layout.k])
            sample = goss_rows(magnitudes, spec.top_rate, spec.other_rate, rng)
            if sample.amplified is not None:  # gradients and Hessians, not the count column
                self._amplify(sample.amplified, np.float32(sample.factor))
            self.sample = sample
        else:
            self.sample = ALL_ROWS
        self._bootstrapped = spec.temperature > 0
        if spec.temperature > 0:
            self._weigh(bayesian_weights(self.n_rows, spec.temperature,
                                         np.random.default_rng((*spec.weight_seed, self.shard_id))))

    def _amplify(self, rows: np.ndarray, factor: np.float32) -> None:
        """Multiply the statistics (full and split) of ``rows`` by factor, all but the count column."""
        scale_rows(self.stats, rows, self.layout.count_col, factor)
        if self.split_stats is not self.stats:
            scale_rows(self.split_stats, rows, self._split_layout.count_col, factor)

    def _weigh(self, weights: np.ndarray) -> None:
        """Multiply every row's statistics (full and split) by its weight, all but the count column."""
        scale_rows_by(self.stats, weights, self.layout.count_col)
        if self.split_stats is not self.stats:
            scale_rows_by(self.split_stats, weights, self._split_layout.count_col)

    # ------------------------------------------------------------------ the builder
    def begin_tree(self, max_leaves: int) -> None:
        self.builder.begin(self.split_stats, self.sample.rows, max_leaves, self.sample.others, self._packed_counts())

    def _packed_counts(self) -> PackedCounts | None:
        """What lets the builder pack a GOSS sample's statistics (see builder.PackedCounts): one output
        whose Hessian is one constant on every row before GOSS (no weights, missing labels or Bayesian
        bootstrap), split on its own statistics."""
        layout, sample = self.layout, self.sample
        if sample.amplified is None or self.split_stats is not self.stats or layout.k != 1 or layout.n_cols != 3 \
                or self.loss.hess_constant is None or self.w is not None or self.mask is not None \
                or self._bootstrapped:
            return None
        plain = np.float32(self.loss.hess_constant)
        return PackedCounts(float(plain), float(plain * np.float32(sample.factor)))

    def root(self, out: np.ndarray) -> np.ndarray:
        return self.builder.root(out)

    def split(self, requests: Sequence[SplitRequest], outs: Sequence[np.ndarray | None], scans=None) -> None:
        self.builder.split(requests, outs, scans)

    def histograms(self, leaves: Sequence[int], outs: Sequence[np.ndarray]) -> None:
        self.builder.histograms(leaves, outs)

    @property
    def splits_ahead(self) -> int:
        return self.builder.splits_ahead

    @property
    def ahead_max_rows(self) -> int:
        return self.builder.ahead_max_rows

    def commit(self, leaf: int, new_leaf: int) -> None:
        self.builder.commit(leaf, new_leaf)

    # ------------------------------------------------------------------ finishing a tree
    def leaf_sums(self, n_leaves: int) -> np.ndarray:
        """(n_leaves, C) sums of the full statistics over each leaf's rows (for leaf values when
        splits were scored on a sketch)."""
        rows, start, end = self.builder.leaf_segments(n_leaves)
        out = np.empty((n_leaves, self.layout.n_cols), dtype=HIST)
        pick(segment_sums, segment_sums_serial, rows.shape[0] * out.shape[1])(rows, start, end, self.stats, out)
        return out

    def row_leaves(self, n_leaves: int) -> np.ndarray:
        """(n,) int32: the leaf of the last tree each row ended in (rows left out of its sample included)."""
        return leaf_map(self.n_rows, self._tree_segments(n_leaves), n_leaves)

    def _tree_segments(self, n_leaves: int) -> list:
        """The last tree's leaves as (rows, start, end) segments: its sample's rows, then the rows left out."""
        return [self.builder.leaf_segments(n_leaves), self.builder.other_segments(n_leaves)]

    def apply_tree(self, tree: Tree) -> None:
        """Add the tree's leaf values to the scores of every row (rows left out of the tree's sample
        go down the tree) and of every followed validation shard's rows.  A tree of every output, where the
        loss has a round pass, reaches the training scores in the next round's gradient pass (until then
        ``scores`` adds it when read)."""
        out = tree.output_cols
        dense = tree.leaf_cols is None and np.array_equal(out, np.arange(out[0], out[0] + out.size))
        first_col, cols = (int(out[0]), self._no_cols) if dense else (-1, np.ascontiguousarray(tree.columns()))
        segments = self._tree_segments(tree.n_leaves)
        targets = []
        if dense and first_col == 0 and out.size == self._scores.shape[1] and self._round_pass() is not None:
            self._add_pending()
            # copies: the builder's arrays are its to reuse for the next tree
            self._pending = ([tuple(part.copy() for part in segment) for segment in segments], tree.leaf_value)
        else:
            targets = [(segment, self.scores) for segment in segments]
        targets += [(self.builder.follower_segments(index, tree.n_leaves), shard.scores)
                    for shard, index in self._followers]
        for (rows, start, end), scores in targets:
            pick(add_leaf_values, add_leaf_values_serial, rows.shape[0] * tree.leaf_value.shape[1])(
                rows, start, end, tree.leaf_value, first_col, cols, scores)

    def metric_parts(self, metrics: Sequence[str], eval_at: tuple, per_output: bool = False,
                     inv_propensity: np.ndarray | None = None) -> list[MetricPart]:
        return _parts(self.loss, metrics, eval_at, self.y, self.scores, self.w, per_output, self.mask, inv_propensity)

    def label_counts(self) -> tuple[np.ndarray, int]:
        """(the rows carrying each output's label (n_outputs,), the rows): the ranking objectives' label counts,
        from which PSP@k's propensities come."""
        n_outputs = self.scores.shape[1]
        if self.y.ndim == 1:  # class ids
            return np.bincount(self.y.astype(np.int64), minlength=n_outputs).astype(np.float64), self.n_rows
        return (self.y != 0).sum(axis=0).astype(np.float64), self.n_rows


#: a validation set walks each round's trees (EvalShard.add_trees) instead of following the training rows'
#: partitions (TrainingShard.follow) where its store is of dense columns only and holds at most this many rows a
#: split of the round.  Following costs a kernel call a split, about 4 us with its Python; a walk about 100 us a
#: round (stack_trees, the call) and 60 ns a row.  rf1's 685 held-out rows under 126 splits a round: 300-round
#: fits 0.90-1.09x (median 0.92x) the time in four in-process pairs (CHANGELOG.md, stop 60).  Otto's held-out
#: store has a CSR part, where a walk finds each node's bin by a search of the row's entries (1.5 ms a tree
#: against about 1.3 following): it follows
WALK_MAX_ROWS_PER_SPLIT = 50


def walks_trees(store: BinnedStore, splits_per_round: int, threads: int) -> bool:
    """Whether a validation set of ``store`` walks each round's trees rather than follow the partitions
    (WALK_MAX_ROWS_PER_SPLIT): never in a fit on one thread (engine.fit_threads), whose first run compiles only
    the kernels it needs, and the walk would be one more (1.3 s on this host)."""
    return threads > 1 and dense_only(store) and store.n_rows <= WALK_MAX_ROWS_PER_SPLIT * splits_per_round


class EvalShard:
    """A validation set's rows: binned with the training bins, scores updated tree by tree (by the training
    shard it follows, TrainingShard.follow, else by walking each tree)."""

    def __init__(self, store: BinnedStore, label: np.ndarray, weight: np.ndarray | None, loss: Loss,
                 init_score: np.ndarray):
        self.store, self.w, self.loss = store, weight, loss
        self.y, self.mask = observed(label)
        self.scores = np.tile(np.asarray(init_score, dtype=SCORE), (store.n_rows, 1))
        self._rows = np.arange(store.n_rows, dtype=INDEX)
        self.followed = False

    def add_trees(self, trees: list[Tree]) -> None:
        """Add the trees of a round to the scores (a followed shard has them already)."""
        if not self.followed:
            predict_trees_into(self.store, self._rows, trees, self.scores)

    def metric_parts(self, metrics: Sequence[str], eval_at: tuple, per_output: bool = False,
                     inv_propensity: np.ndarray | None = None) -> list[MetricPart]:
        return _parts(self.loss, metrics, eval_at, self.y, self.scores, self.w, per_output, self.mask, inv_propensity)


def _parts(loss: Loss, metrics, eval_at, y, raw, w, per_output, mask, inv_propensity) -> list[MetricPart]:
    if not metrics:
        return []
    prob = loss.transform(raw) if needs_probabilities(metrics, loss.name) else None
    return [part for m in metrics
            for part in metric_parts(m, y, raw, prob, w, eval_at, per_output, mask, inv_propensity)]
