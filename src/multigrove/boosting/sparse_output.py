"""Rows of a sparse-output objective (GBDT-Sparse, Si et al. 2017): labels, scores and gradients CSR.

``SparseOutputShard`` answers the same requests as ``TrainingShard`` (the engine and the grower do not
know the difference), but nothing it holds has n_rows x n_labels entries:

* labels Y (CSR), scores Z (CSR: a row holds at most ||y_i||_0 + T k entries after T trees of k-sparse
  leaves, the paper's bound), gradients G (CSR, non-zero only on the union of the row's labels and
  scores, since the losses have a zero gradient where z = y);
* the splits are scored on a sketch of G, built by sparse products: a random projection G Pi
  (O(nnz(G) k)), or kept columns (top_outputs, random_sampling) taken from G's columns.  Its dense
  (n, k + 2) statistics (k sketch columns, the row's Hessian bound, the count) go to the one grower.
  SketchBoost's score of a split on G Pi estimates sum_q p_q^2 / (|V| + lambda) over every label,
  the dense-leaf gain; GBDT-Sparse eq. 20 keeps only the top k labels of each child.  Both favour
  children whose gradients concentrate on a few labels;
* or (sketch="none") exactly by eq. 20: the shard is then the grower's ``CandidateScorer``, whose
  histograms hold only the Hessian bound and the count, and ``candidate_gains`` scans each feature's
  bins over the leaf's sparse gradients (kernels.sparse_output.sparse_split_gains: Alg. 1 on bins);
* leaf values come from the full sparse gradient: the k labels of largest |p_q| (p the leaf's
  gradient sum) get -p_q / (H + lambda) (eq. 19 with the row Hessian bound 1, or the row weight);
* a finished tree's k-sparse leaves are merged into the scores of every row.

Memory is O(nnz(Y) + n T k + n k_sketch), whatever L is.
"""
from __future__ import annotations

import mmap
from typing import Sequence

import numpy as np
import scipy.sparse as sp

from .._dtypes import INDEX, STAT
from ..kernels._variants import pick
from ..kernels.predict import leaf_index_store, leaf_index_store_serial
from ..kernels.sparse import CSR, csr_arrays
from ..kernels.sparse_output import (
    LeafParams,
    NodeRows,
    add_leaves_fill,
    add_leaves_sizes,
    node_bin_counts,
    node_bin_rows,
    node_label_sums,
    sparse_gradient_fill,
    sparse_gradient_sizes,
    sparse_leaf_values,
    sparse_split_gains,
)
from ..kernels.split import ScanParams
from ..kernels.store import BinnedStore
from .builder import LocalBuilder
from .leaves import StatLayout
from .losses import SparseOutputLoss
from .metrics import MetricPart, add_parts, metric_parts
from .sampling import ALL_ROWS
from .shard import OutputColumn, TrainingShard
from .sketch import SketchPlan
from .tree import Tree, stack_trees

SCORE_BLOCK_ROWS = 8_192
"""Rows per block of sparse scores (``SparseScores``): adding a tree copies one block at a time."""

MAPPED_MIN_BYTES = 1 << 20
"""Arrays of sparse scores and gradients from this size on get an anonymous memory map of their own."""


def mapped_empty(n: int, dtype) -> np.ndarray:
    """``np.empty(n, dtype)``, on an anonymous memory map of its own when it is large.

    The scores and the gradients are freed and made anew, a little larger, every round.  From the heap,
    such arrays leave holes that the next ones do not fit, and the process keeps growing (measured on
    the 100,000-row synthetic set: 200 MB more by round 225); an array on its own map returns its pages
    to the system when it is freed."""
    dtype = np.dtype(dtype)
    nbytes = int(n) * dtype.itemsize
    if nbytes < MAPPED_MIN_BYTES:
        return np.empty(n, dtype)
    return np.frombuffer(mmap.mmap(-1, nbytes), dtype=dtype)


def empty_scores(n_rows: int, n_outputs: int) -> sp.csr_matrix:
    """Start scores: 0 everywhere, no entry stored."""
    return sp.csr_matrix((np.zeros(0), np.zeros(0, np.int32), np.zeros(n_rows + 1, np.int64)),
                         shape=(n_rows, n_outputs))


def add_leaves(Z: sp.csr_matrix, leaf_of: np.ndarray, leaf_cols: np.ndarray, leaf_vals: np.ndarray) -> sp.csr_matrix:
    """Z + each row's leaf values (leaf_of[i] = -1: the row gets nothing), as a new CSR."""
    sizes = np.empty(Z.shape[0], np.int64)
    cols = np.ascontiguousarray(leaf_cols, dtype=np.int32)
    vals = np.ascontiguousarray(leaf_vals, dtype=np.float64)
    add_leaves_sizes(csr_arrays(Z), leaf_of, cols, vals, sizes)
    indptr = np.zeros(Z.shape[0] + 1, np.int64)
    np.cumsum(sizes, out=indptr[1:])
    indices = mapped_empty(indptr[-1], np.int32)
    data = mapped_empty(indptr[-1], np.float64)
    add_leaves_fill(csr_arrays(Z), leaf_of, cols, vals, indptr, indices, data)
    return sp.csr_matrix((data, indices, indptr), shape=Z.shape)


class SparseScores:
    """Sparse raw scores (n_rows, n_outputs), held as CSR blocks of ``block_rows`` rows.

    The scores grow toward ||y_i||_0 + T k entries per row; adding a tree builds each block anew beside the
    old one, so what is alive at once is the scores plus one block, not two copies of the scores (at 100,000
    rows x 1,000 trees that second copy was a third of the peak memory)."""

    def __init__(self, n_rows: int, n_outputs: int, block_rows: int | None = None):
        block_rows = SCORE_BLOCK_ROWS if block_rows is None else block_rows
        if block_rows < 1:
            raise ValueError(f"block_rows must be >= 1, got {block_rows}")
        self.shape = (int(n_rows), int(n_outputs))
        self.starts = np.arange(0, max(n_rows, 1), block_rows, dtype=np.int64)
        self.ends = np.minimum(self.starts + block_rows, n_rows)
        self.blocks = [empty_scores(int(hi - lo), n_outputs) for lo, hi in zip(self.starts, self.ends)]

    @classmethod
    def from_csr(cls, Z: sp.csr_matrix, block_rows: int | None = None) -> "SparseScores":
        out = cls(Z.shape[0], Z.shape[1], block_rows)
        out.blocks = [sp.csr_matrix(Z[lo:hi], dtype=np.float64) for lo, hi in zip(out.starts, out.ends)]
        return out

    @property
    def nnz(self) -> int:
        return sum(block.nnz for block in self.blocks)

    def row_blocks(self):
        """(first row, end row, CSR block) of every block, in row order."""
        return zip(self.starts, self.ends, self.blocks)

    def add_leaves(self, leaf_of: np.ndarray, leaf_cols: np.ndarray, leaf_vals: np.ndarray) -> None:
        """In place: every row's leaf values added (leaf_of[i] = -1: row i gets nothing)."""
        for b, (lo, hi) in enumerate(zip(self.starts, self.ends)):
            self.blocks[b] = add_leaves(self.blocks[b], leaf_of[lo:hi], leaf_cols, leaf_vals)

    def add_trees(self, leaves: np.ndarray, trees: Sequence[Tree]) -> None:
        """In place: the trees' k-sparse leaves added; leaves (n, T) the leaf of each row in each tree."""
        for t, tree in enumerate(trees):
            self.add_leaves(np.ascontiguousarray(leaves[:, t], dtype=np.int32), tree.columns(), tree.leaf_value)

    def tocsr(self) -> sp.csr_matrix:
        return sp.vstack(self.blocks, format="csr")


def sparse_gradients(loss: SparseOutputLoss, Y: sp.csr_matrix, Z: SparseScores) -> sp.csr_matrix:
    """The loss's gradient at scores Z for labels Y: CSR float32, only the non-zero cells stored."""
    sizes = np.empty(Y.shape[0], np.int64)
    for lo, hi, block in Z.row_blocks():
        labels = CSR(Y.indptr[lo:hi + 1], Y.indices, Y.data)  # the block's rows of Y
        sparse_gradient_sizes(loss.code, labels, csr_arrays(block), sizes[lo:hi])
    indptr = np.zeros(Y.shape[0] + 1, np.int64)
    np.cumsum(sizes, out=indptr[1:])
    indices = mapped_empty(indptr[-1], np.int32)
    data = mapped_empty(indptr[-1], STAT)
    for lo, hi, block in Z.row_blocks():
        labels = CSR(Y.indptr[lo:hi + 1], Y.indices, Y.data)
        sparse_gradient_fill(loss.code, labels, csr_arrays(block), indptr[lo:hi + 1], indices, data)
    return sp.csr_matrix((data, indices, indptr), shape=Y.shape)


def node_rows(store: BinnedStore, store_rows: np.ndarray, grad_rows: np.ndarray, bin_feature: np.ndarray,
              G: sp.csr_matrix, bin_hess: np.ndarray, bin_count: np.ndarray, hess: float, count: float) -> NodeRows:
    """What sparse_split_gains needs of one node: its rows by non-default bin and the node's gradient sums
    p with its labels ordered by |p_q| descending, beside the node's Hessian and row count of every bin
    (bin_hess, bin_count: its histogram, default bins included) and in all (hess, count)."""
    total_bins = store.total_bins
    counts = np.zeros(total_bins, np.int64)
    node_bin_counts(store, store_rows, bin_feature, counts)
    bin_ptr = np.zeros(total_bins + 1, np.int64)
    np.cumsum(counts, out=bin_ptr[1:])
    bin_pos = np.empty(int(bin_ptr[-1]), np.int32)
    node_bin_rows(store, store_rows, bin_feature, bin_ptr, bin_pos)
    sums = np.zeros(G.shape[1])
    node_label_sums(grad_rows, csr_arrays(G), sums)
    labels = np.flatnonzero(sums)
    order = labels[np.argsort(-np.abs(sums[labels]), kind="stable")].astype(np.int32)
    return NodeRows(bin_ptr, bin_pos, np.ascontiguousarray(grad_rows, dtype=np.int32),
                    np.ascontiguousarray(bin_hess, dtype=np.float64), np.ascontiguousarray(bin_count, dtype=np.float64),
                    sums, order, float(hess), float(count))


def _scale_csr_rows(M: sp.csr_matrix, factor: np.ndarray) -> None:
    """In place: row i of M times factor[i]."""
    M.data *= np.repeat(factor.astype(M.data.dtype), np.diff(M.indptr))


class SparseOutputShard(TrainingShard):
    """One process's training rows for a sparse-output objective; a ``HistogramBuilder``."""

    def __init__(self, store: BinnedStore, label: sp.csr_matrix, weight: np.ndarray | None,
                 loss: SparseOutputLoss, n_threads: int, shard_id: int = 0, deterministic: bool = False):
        n, n_outputs = label.shape
        self.store, self.w, self.loss, self.y, self.mask = store, weight, loss, label, None
        self.layout = StatLayout.make(n_outputs, loss.hess_constant)  # describes G; never allocated densely
        self.shard_id = shard_id
        self.init_score = np.zeros(n_outputs)
        self.scores = SparseScores(n, n_outputs)
        self._row_weight = np.ones(n, STAT) if weight is None else weight.astype(STAT)
        self.row_hess = self._row_weight.copy()
        self.G = sp.csr_matrix((n, n_outputs), dtype=STAT)
        self._frozen = np.zeros(0, np.int64)
        self.sample = ALL_ROWS
        self.builder = LocalBuilder(store, n_threads, deterministic)
        self._buffers: dict[StatLayout, np.ndarray] = {}
        self.split_stats = None
        self._split_layout = None
        self.candidate_scorer: SparseOutputShard | None = None  # self, when splits are scored by eq. 20
        self._bin_feature = np.repeat(np.arange(store.n_features, dtype=np.int32), np.diff(store.offsets))
        self._n_blocks = min(store.n_features, 4 * max(1, int(n_threads)))

    def _packed_counts(self) -> None:
        """GOSS samples keep their statistic columns here (builder.PackedCounts packs one dense output's)."""
        return None

    # ------------------------------------------------------------------ gradients and sketches
    def compute_gradients(self, sketch: SketchPlan | None = None) -> None:
        """The sparse gradients at the current scores (a sketch is made from them in set_split_statistics)."""
        self.G = None  # the last round's gradients go before the new ones are made
        self.G = sparse_gradients(self.loss, self.y, self.scores)
        if self.w is not None:
            _scale_csr_rows(self.G, self._row_weight)
        if self._frozen.size:
            self.G.data[np.isin(self.G.indices, self._frozen)] = 0.0
        self.row_hess = self._row_weight.copy()

    def column_sq_norms(self) -> np.ndarray:
        data = self.G.data.astype(np.float64)
        return np.bincount(self.G.indices, weights=data * data, minlength=self.G.shape[1])

    def gram_product(self, V: np.ndarray) -> np.ndarray:
        return np.asarray(self.G.T @ (self.G @ V.astype(STAT)), dtype=np.float64)

    def set_split_statistics(self, spec: SketchPlan | OutputColumn) -> StatLayout:
        """The sketch of G the next tree's splits are scored on, with one column of each row's Hessian
        bound (its weight, times GOSS or Bayesian factors) and the count; with no sketch (FULL) only
        those two columns, and the shard scores the candidates itself (eq. 20, ``candidate_gains``)."""
        if isinstance(spec, OutputColumn):
            raise ValueError(f"objective '{self.loss.name}' grows one tree for all outputs")
        width = 0 if spec.is_full else spec.width
        self.candidate_scorer = self if spec.is_full else None
        split_layout = self._split_layout = StatLayout.make(width, None, shared_hessian=True)
        if split_layout not in self._buffers:
            self._buffers[split_layout] = split_layout.allocate(self.n_rows)
        buf = self._buffers[split_layout]
        if spec.columns is not None:
            kept = self.G[:, spec.columns].toarray()
            if spec.scale is not None:
                kept *= spec.scale
            buf[:, : split_layout.k] = kept
        elif not spec.is_full:
            buf[:, : split_layout.k] = self.G @ spec.projection
        buf[:, split_layout.h_col] = self.row_hess
        self.split_stats = buf
        return split_layout

    def candidate_gains(self, leaf: int, hist: np.ndarray, total: np.ndarray, feature_mask: np.ndarray,
                        params: ScanParams, out_gain: np.ndarray, out_splittable: np.ndarray) -> None:
        """The exact eq. 20 gain of every split candidate of a leaf of the tree being grown (see
        kernels.sparse_output.sparse_split_gains; params.topk is the leaves' k); hist, total: the leaf's
        Hessian-bound and count histogram and sums (the split layout's two columns)."""
        b, split_layout = self.builder, self._split_layout
        store_rows = b.rows[int(b.leaf_start[leaf]): int(b.leaf_end[leaf])]
        grad_rows = store_rows if b.sample_rows is None else b.sample_rows[store_rows]
        store = b.tree_store
        node = node_rows(store, store_rows, grad_rows, self._bin_feature, self.G, hist[:, split_layout.h_col],
                         hist[:, split_layout.count_col], total[split_layout.h_col], total[split_layout.count_col])
        sparse_split_gains(node, csr_arrays(self.G), store, feature_mask, params, self._n_blocks, out_gain,
                           out_splittable)

    def _amplify(self, rows: np.ndarray, factor: np.float32) -> None:
        per_row = np.ones(self.n_rows, STAT)
        per_row[rows] = factor
        self._weigh(per_row)

    def _weigh(self, weights: np.ndarray) -> None:
        weights = weights.astype(STAT)
        _scale_csr_rows(self.G, weights)
        self.row_hess *= weights
        self.split_stats[:, : self._split_layout.count_col] *= weights[:, None]

    # ------------------------------------------------------------------ finishing a tree
    def leaf_sums(self, n_leaves: int) -> np.ndarray:
        raise TypeError("a sparse-output shard has no dense leaf sums: use sparse_leaf_values")

    def sparse_leaf_values(self, n_leaves: int, k: int, lambda_l2: float, learning_rate: float
                           ) -> tuple[np.ndarray, np.ndarray]:
        """(cols, values), each (n_leaves, k): every leaf's k labels of largest |gradient sum| and their
        values (GBDT-Sparse eq. 19), from the rows of the last tree's sample."""
        rows, start, end = self.builder.leaf_segments(n_leaves)
        cols = np.empty((n_leaves, k), np.int32)
        values = np.empty((n_leaves, k), np.float64)
        G = self.G
        leaf = LeafParams(int(k), float(lambda_l2), float(learning_rate))
        sparse_leaf_values(rows, start, end, csr_arrays(G), self.row_hess, leaf, G.shape[1],
                           min(n_leaves, self._n_blocks), cols, values)
        return cols, values

    def apply_tree(self, tree: Tree) -> None:
        """Merge the tree's k-sparse leaves into the scores of every row (sampled or not)."""
        self.scores.add_leaves(self.row_leaves(tree.n_leaves), tree.columns(), tree.leaf_value)

    def metric_parts(self, metrics: Sequence[str], eval_at: tuple, per_output: bool = False,
                     inv_propensity: np.ndarray | None = None) -> list[MetricPart]:
        return sparse_metric_parts(metrics, eval_at, self.y, self.scores, self.w, inv_propensity)

    def label_counts(self) -> tuple[np.ndarray, int]:
        """(the rows carrying each label (L,), the rows), for PSP@k's propensities."""
        Y = self.y
        return np.bincount(Y.indices[Y.data != 0], minlength=Y.shape[1]).astype(np.float64), self.n_rows


class SparseEvalShard:
    """A validation set of a sparse-output objective: sparse labels, sparse scores updated tree by tree."""

    def __init__(self, store: BinnedStore, label: sp.csr_matrix, weight: np.ndarray | None):
        self.store, self.y, self.w = store, label, weight
        self.scores = SparseScores(*label.shape)
        self._rows = np.arange(store.n_rows, dtype=INDEX)

    def add_trees(self, trees: list[Tree]) -> None:
        leaves = np.empty((self._rows.shape[0], len(trees)), np.int32)
        pick(leaf_index_store, leaf_index_store_serial, leaves.size)(self.store, self._rows, stack_trees(trees), leaves)
        self.scores.add_trees(leaves, trees)

    def metric_parts(self, metrics: Sequence[str], eval_at: tuple, per_output: bool = False,
                     inv_propensity: np.ndarray | None = None) -> list[MetricPart]:
        return sparse_metric_parts(metrics, eval_at, self.y, self.scores, self.w, inv_propensity)


def sparse_metric_parts(metrics, eval_at, y: sp.csr_matrix, scores: SparseScores, w,
                        inv_propensity: np.ndarray | None = None) -> list[MetricPart]:
    """Ranking metrics of sparse scores (the identity link: raw scores rank the labels), summed block by
    block of rows (every metric part is a weighted sum over rows)."""
    total: list[MetricPart] | None = None
    for lo, hi, block in scores.row_blocks():
        wb = None if w is None else w[lo:hi]
        parts = [part for m in metrics
                 for part in metric_parts(m, y[lo:hi], block, block, wb, eval_at, inv_propensity=inv_propensity)]
        total = parts if total is None else add_parts(total, parts)
    return total
