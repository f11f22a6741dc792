"""The training rows on the GPU: ``TrainingShard``'s row-wise requests answered by CUDA kernels.

``device_type="cuda"`` keeps a run's scores, labels, weights and statistics on the GPU from the first
round on (``kernels/cuda_rows.py``): the gradients and Hessians of the built-in losses, weights and
missing-label masks, the sketch's column norms and Gram products and the sketch itself, GOSS's row norms
and scaling, the Bayesian bootstrap's weights, each leaf's statistic sums and the score update.  The CUDA
builder (``cuda_builder.py``) reads the statistics where they are.  Per tree the host receives the
histograms the grower scans, each split's left count and the leaves' sums, and sends the split rules and
the leaf values; the scores come back only when a metric of the training set is asked for.

What still runs on the host: a custom objective (a Python function of the scores: its gradients are
uploaded each round), the draws of GOSS, bagging and the Bayesian bootstrap (the rows' norms or the
weights cross once), and the split scans of the grower.
"""
from __future__ import annotations

import numpy as np

from .._dtypes import HIST, INDEX, SCORE, STAT
from .builder import PackedCounts
from .leaves import StatLayout
from .losses import BinaryLogloss, Loss, SoftmaxCrossEntropy, SquaredError
from .sampling import bagging_rows, bayesian_weights, goss_rows
from .shard import ALL_ROWS, OutputColumn, SampleSpec, TrainingShard
from .sketch import SketchPlan

__all__ = ["CudaTrainingShard"]


class CudaTrainingShard(TrainingShard):
    """One process's training rows on a CUDA GPU (see the module docstring); the same requests as
    ``TrainingShard``, whose host arrays it replaces by device arrays."""

    def __init__(self, store, label: np.ndarray, weight: np.ndarray | None, loss: Loss, init_score: np.ndarray,
                 layout: StatLayout, n_threads: int):
        from .cuda_builder import CudaBuilder
        self._device_scores = None  # created from the host scores at the first round (see scores)
        self._host_current = True
        builder = CudaBuilder(store)
        super().__init__(store, label, weight, loss, init_score, layout, n_threads, builder=builder)
        self.device_histograms = builder.device_histograms
        from ..kernels import cuda_rows
        self.cuda, self.kernels = builder.cuda, cuda_rows
        cuda = self.cuda
        self._blocks = 1 if builder._simulator else 1024
        self._threads = 16 if builder._simulator else cuda_rows.ROW_THREADS
        self._host_gradients = not isinstance(loss, (SquaredError, BinaryLogloss, SoftmaxCrossEntropy))
        self._host_stats = self.stats if self._host_gradients else None  # a custom objective's, uploaded
        self.stats = cuda.to_device(self.stats)
        self.split_stats = self.stats
        self._y = cuda.to_device(np.ascontiguousarray(self.y))
        self._mask_d = None if self.mask is None else cuda.to_device(np.ascontiguousarray(self.mask))
        self._w_d = None if self._w32 is None else cuda.to_device(np.ascontiguousarray(self._w32[:, 0]))
        self._const_h_d = None if self._const_h is None else cuda.to_device(np.ascontiguousarray(self._const_h))
        if isinstance(loss, SquaredError):
            d = layout.k
            shift = np.zeros(d) if loss.shift is None else loss.shift
            scale = np.ones(d) if loss.scale is None else loss.scale
            self._shift, self._scale = cuda.to_device(np.asarray(shift, np.float64)), cuda.to_device(
                np.asarray(scale, np.float64))

    # ------------------------------------------------------------------ scores
    @property
    def scores(self) -> np.ndarray:
        """The raw scores (n, d) float64 on the host, copied back from the GPU when they changed there."""
        if not self._host_current:
            self._device_scores.copy_to_host(self._host_scores)
            self._host_current = True
        return self._host_scores

    @scores.setter
    def scores(self, value: np.ndarray) -> None:
        if self._device_scores is not None:
            raise RuntimeError("the scores of a device training shard are set before its first round only")
        self._host_scores = value

    def _raw(self):
        """The scores on the GPU (the host's, with any start scores written into them, at the first call)."""
        if self._device_scores is None:
            self._device_scores = self.cuda.to_device(np.ascontiguousarray(self._host_scores, SCORE))
        return self._device_scores

    def _launch(self, kernel, *args) -> None:
        """A grid-stride kernel over the rows."""
        kernel[self._blocks, self._threads](*args)

    def _launch_work(self, kernel, key: str, work: np.ndarray, *args) -> None:
        """A kernel over work items (a block an item; ``work`` uploaded under ``key``), ``args`` around them
        as ``kernel`` takes them, the uploaded work items in the place of None."""
        if work.shape[0] == 0:
            return
        work_d = self.builder.upload(key, work)
        args = tuple(work_d if arg is None else arg for arg in args)
        kernel[min(work.shape[0], self.builder.kernels.MAX_WORK_BLOCKS), self._threads](*args)

    # ------------------------------------------------------------------ gradients and sketches
    def compute_gradients(self, sketch=None) -> None:
        """Gradients and Hessians at the current scores, times the row weights, on the GPU (a custom
        objective's from its function on the host, uploaded); a sketch is made from them in
        set_split_statistics."""
        raw = self._raw()
        if self._host_gradients:
            self._gradients_into(self.scores, self._host_stats)
            self.stats.copy_to_device(self._host_stats)
            return
        kernels, loss, layout, stats = self.kernels, self.loss, self.layout, self.stats
        k, h_col = layout.k, layout.h_col
        own_hess = loss.hess_constant is None
        if isinstance(loss, SquaredError):
            self._launch(kernels.residual, raw, self._y, self._shift, self._scale, stats)
        elif isinstance(loss, SoftmaxCrossEntropy):
            self._launch(kernels.softmax_grad_hess, raw, self._y, stats, h_col)
        else:
            self._launch(kernels.sigmoid_grad_hess, raw, self._y, stats, h_col)
        if self._w_d is not None:
            self._launch(kernels.scale_rows_by, stats, self._w_d, 0, k)
            if own_hess:
                self._launch(kernels.scale_rows_by, stats, self._w_d, h_col, h_col + k)
        if self._const_h_d is not None:
            self._launch(kernels.fill_cells, stats, h_col, h_col + k, self._const_h_d)
        elif self._mask_d is not None:
            self._launch(kernels.mask_cells, stats, h_col, self._mask_d)
        if self._mask_d is not None:
            self._launch(kernels.mask_cells, stats, 0, self._mask_d)
        if self._frozen.size:
            self._launch(kernels.zero_columns, stats, self.builder.upload("frozen", self._frozen))

    def column_sq_norms(self) -> np.ndarray:
        out = self.cuda.to_device(np.zeros(self.layout.k, np.float64))
        self._launch_work(self.kernels.transposed_diagonal, "norm_work", self.builder.work([0], [self.n_rows]),
                          self.stats, None, out)
        return out.copy_to_host()

    def gram_product(self, V: np.ndarray) -> np.ndarray:
        """G^T (G V) (d, l) in float64 (sketch.gram_product; here the products are summed in float64 too)."""
        GV = self.cuda.device_array((self.n_rows, V.shape[1]), STAT)
        self._launch(self.kernels.times_matrix, self.stats, self.cuda.to_device(np.ascontiguousarray(V, STAT)), GV)
        out = self.cuda.to_device(np.zeros((self.layout.k, V.shape[1]), np.float64))
        self._launch_work(self.kernels.transposed_products, "norm_work", self.builder.work([0], [self.n_rows]),
                          self.stats, GV, None, out)
        return out.copy_to_host()

    def set_split_statistics(self, spec: SketchPlan | OutputColumn) -> StatLayout:
        """Choose the statistics the next tree's splits are scored on (on the GPU); return their layout."""
        layout = self.layout
        split_layout, buf = self._split_buffer(spec)
        if buf is None:
            return split_layout
        # the Hessian columns of the split statistics, where they have their own (-1: the count column serves)
        has_hess = split_layout.h_stride or split_layout.count_col > split_layout.h_col
        out_h_col = split_layout.h_col if has_hess else -1
        if isinstance(spec, OutputColumn) or spec.columns is not None:
            columns = np.array([spec.column]) if isinstance(spec, OutputColumn) else spec.columns
            scale = None if isinstance(spec, OutputColumn) else spec.scale
            scale = np.ones(columns.shape[0], STAT) if scale is None else scale
            self._launch(self.kernels.gather_columns, self.stats, layout.h_col,
                         self.builder.upload("columns", columns.astype(np.int64)),
                         self.builder.upload("scale", scale.astype(STAT)), buf, out_h_col)
        else:
            projection_t = self.builder.upload("projection", np.ascontiguousarray(spec.projection.T, STAT))
            self._launch(self.kernels.project_rows, self.stats, layout.h_col, projection_t, buf, out_h_col)
        self.split_stats = buf
        return split_layout

    def _allocate(self, layout: StatLayout):
        """As TrainingShard._allocate, on the GPU."""
        return self.cuda.to_device(layout.allocate(self.n_rows))

    def draw_rows(self, spec: SampleSpec) -> None:
        """As TrainingShard.draw_rows: the draws on the host, the scaling of the statistics on the GPU."""
        rng = np.random.default_rng((*spec.seed, self.shard_id))
        if spec.strategy == "bagging":
            self.sample = bagging_rows(self.n_rows, spec.bagging_fraction, rng)
        elif spec.strategy == "goss":
            magnitudes = self.cuda.device_array(self.n_rows, STAT)
            self._launch(self.kernels.row_sq_norms, self.split_stats, self._split_layout.k, magnitudes)
            sample = goss_rows(magnitudes.copy_to_host(), spec.top_rate, spec.other_rate, rng)
            if sample.amplified is not None:
                rows = self.builder.upload("amplified", np.ascontiguousarray(sample.amplified, INDEX))
                for stats, layout in self._stats_and_layouts():
                    self._launch(self.kernels.scale_rows, stats, rows, layout.count_col, np.float32(sample.factor))
            self.sample = sample
        else:
            self.sample = ALL_ROWS
        self._bootstrapped = spec.temperature > 0
        if spec.temperature > 0:
            weights = bayesian_weights(self.n_rows, spec.temperature,
                                       np.random.default_rng((*spec.weight_seed, self.shard_id)))
            weights_d = self.builder.upload("bootstrap", weights)
            for stats, layout in self._stats_and_layouts():
                self._launch(self.kernels.scale_rows_by, stats, weights_d, 0, layout.count_col)

    def _stats_and_layouts(self):
        """(statistics, layout) of the full statistics and, when they differ, the split statistics."""
        pairs = [(self.stats, self.layout)]
        if self.split_stats is not self.stats:
            pairs.append((self.split_stats, self._split_layout))
        return pairs

    def _packed_counts(self) -> PackedCounts | None:
        return None  # the CUDA builder sums the statistics as given

    # ------------------------------------------------------------------ finishing a tree
    def leaf_sums(self, n_leaves: int) -> np.ndarray:
        """(n_leaves, C) float64 sums of the full statistics over each leaf's rows, summed on the GPU."""
        rows, start, end = self.builder.device_segments(n_leaves)
        out = self.builder.scratch("leaf_sums", (n_leaves, self.layout.n_cols), HIST)
        self._launch(self.builder.kernels.zero_histogram, out, n_leaves)
        self._launch_work(self.kernels.segment_sums, "leaf_work", self.builder.work(start, end - start),
                          rows, self.stats, None, out)
        return out.copy_to_host()

    def apply_tree(self, tree) -> None:
        """Add the tree's leaf values to the scores on the GPU (rows left out of the sample go down the tree
        by the same partitions)."""
        out = tree.output_cols
        dense = tree.leaf_cols is None and np.array_equal(out, np.arange(out[0], out[0] + out.size))
        first_col = int(out[0]) if dense else -1
        columns = np.zeros((1, 1), np.int32) if dense else np.ascontiguousarray(tree.columns(), np.int32)
        values = self.builder.upload("leaf_values", np.ascontiguousarray(tree.leaf_value, SCORE))
        columns_d = self.builder.upload("leaf_columns", columns)
        raw = self._raw()
        for other in (False, True):
            rows, start, end = self.builder.device_segments(tree.n_leaves, other)
            if rows is not None:
                self._launch_work(self.kernels.add_leaf_values, "leaf_work", self.builder.work(start, end - start),
                                  rows, None, values, first_col, columns_d, raw)
        self._host_current = False
