"""Beam search over a forest of label trees (Bonsai Section 2.4), in parallel over rows.

For prediction the per-edge weight rows are regrouped feature-major per node, so scoring a node
costs the row's non-zeros (times a binary search) plus the weights those features touch, instead of
every weight of every edge."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp

from ..kernels.labeltree import (
    BeamParams,
    BiasedRows,
    LabelForest,
    beam_search,
    count_node_features,
    pack_node_weights,
)

if TYPE_CHECKING:  # label_tree imports pack_forest to route rows while a tree grows
    from .label_tree import LabelTree


def pack_forest(trees: list[LabelTree]) -> LabelForest:
    """One set of arrays for all trees (node ids offset per tree), weights feature-major per node.

    Feature ids are int32 and weights float32, as the trees store them; besides the result, only one
    node's sort order is held at a time per thread."""
    roots, starts, targets = [], [], []
    node_off = edge_off = 0
    n_ids = 1 + max((int(t.w_indices.max()) for t in trees if t.w_indices.size), default=0)
    counts = []
    for t in trees:
        roots.append(node_off)
        starts.append(t.edge_start[:-1] + edge_off)
        internal_edges = np.repeat(~t.is_leaf, np.diff(t.edge_start))
        targets.append(np.where(internal_edges, t.edge_target + node_off, t.edge_target))
        c = np.empty(t.n_nodes, np.int64)
        count_node_features(t.edge_start, t.w_indptr, t.w_indices, n_ids, c)
        counts.append(c)
        node_off += t.n_nodes
        edge_off += t.edge_target.shape[0]
    starts.append(np.array([edge_off]))
    node_f_start = np.zeros(node_off + 1, np.int64)
    np.cumsum(np.concatenate(counts), out=node_f_start[1:])
    n_entries = sum(int(t.w_indptr[-1]) for t in trees)
    f_ids = np.empty(node_f_start[-1], np.int32)
    f_ptr = np.empty(node_f_start[-1] + 1, np.int64)
    f_ptr[-1] = n_entries
    e_local = np.empty(n_entries, np.int32)
    e_val = np.empty(n_entries, np.float32)
    node0 = entry0 = 0
    for t in trees:
        n1, p1 = node0 + t.n_nodes, entry0 + int(t.w_indptr[-1])
        s0, s1 = node_f_start[node0], node_f_start[n1]
        pack_node_weights(t.edge_start, t.w_indptr, t.w_indices, t.w_data, node_f_start[node0:n1 + 1] - s0, entry0,
                          f_ids[s0:s1], f_ptr[s0:s1], e_local[entry0:p1], e_val[entry0:p1])
        node0, entry0 = n1, p1
    max_edges = max(int(np.diff(t.edge_start).max()) for t in trees)
    return LabelForest(np.array(roots, np.int64), np.concatenate(starts).astype(np.int64),
                       np.concatenate(targets).astype(np.int64),
                       np.concatenate([t.is_leaf for t in trees]).astype(np.bool_),
                       node_f_start, f_ids, f_ptr, e_local, e_val, max_edges)


def search(trees: list[LabelTree], X: sp.csr_matrix, n_labels: int, bias: float, beam_size: int, k: int,
           packed: LabelForest | None = None, logistic: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(indices, scores), each (n_rows, k): the k best labels by score averaged over the trees.
    X must have sorted column indices per row; ``logistic``: the classifiers use the logistic loss
    (edge scores are sigmoids) rather than the squared hinge."""
    if packed is None:
        packed = pack_forest(trees)
    n = X.shape[0]
    out_idx = np.empty((n, k), np.int64)
    out_score = np.empty((n, k), np.float64)
    if n:
        rows = BiasedRows(X.indptr.astype(np.int64), X.indices.astype(np.int64), X.data.astype(np.float64),
                          float(bias), X.shape[1])
        beam_search(rows, packed, BeamParams(n_labels, beam_size, k, bool(logistic)), out_idx, out_score)
    return out_idx, out_score
