"""Beam search over a forest of label trees (Bonsai Section 2.4), in parallel over rows.

For prediction the per-edge weight rows are regrouped feature-major per node, so scoring a node
costs the row's non-zeros (times a binary search) plus the weights those features touch, instead of
every weight of every edge."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..kernels.labeltree import beam_search
from .label_tree import LabelTree


def pack_forest(trees: list[LabelTree]):
    """One set of arrays for all trees (node ids offset per tree), weights feature-major per node."""
    roots, starts, targets, leaves = [], [], [], []
    nodes_all, feats_all, local_all, vals_all = [], [], [], []
    node_off = edge_off = 0
    for t in trees:
        roots.append(node_off)
        starts.append(t.edge_start[:-1] + edge_off)
        internal_edges = np.repeat(~t.is_leaf, np.diff(t.edge_start))
        targets.append(np.where(internal_edges, t.edge_target + node_off, t.edge_target))
        leaves.append(t.is_leaf)
        edge_node = np.repeat(np.arange(t.n_nodes), np.diff(t.edge_start))
        entry_edge = np.repeat(np.arange(t.edge_target.shape[0]), np.diff(t.w_indptr))
        nodes_all.append(edge_node[entry_edge] + node_off)
        local_all.append(entry_edge - t.edge_start[edge_node[entry_edge]])
        feats_all.append(t.w_indices)
        vals_all.append(t.w_data)
        node_off += t.n_nodes
        edge_off += t.edge_target.shape[0]
    starts.append(np.array([edge_off]))
    node = np.concatenate(nodes_all).astype(np.int64)
    feat = np.concatenate(feats_all).astype(np.int64)
    order = np.lexsort((feat, node))
    node, feat = node[order], feat[order]
    e_local = np.concatenate(local_all)[order].astype(np.int32)
    e_val = np.concatenate(vals_all)[order].astype(np.float64)
    # one feature slot per distinct (node, feature)
    new_slot = np.ones(node.shape[0], bool)
    new_slot[1:] = (node[1:] != node[:-1]) | (feat[1:] != feat[:-1])
    slot_pos = np.flatnonzero(new_slot)
    f_ids = feat[slot_pos].astype(np.int64)
    f_ptr = np.append(slot_pos, node.shape[0]).astype(np.int64)
    node_f_start = np.searchsorted(node[slot_pos], np.arange(node_off + 1)).astype(np.int64)
    max_edges = max(int(np.diff(t.edge_start).max()) for t in trees)
    return (np.array(roots, np.int64), np.concatenate(starts).astype(np.int64),
            np.concatenate(targets).astype(np.int64), np.concatenate(leaves).astype(np.bool_),
            node_f_start, f_ids, f_ptr, e_local, e_val, max_edges)


def search(trees: list[LabelTree], X: sp.csr_matrix, n_labels: int, bias: float, beam_size: int, k: int,
           packed=None, logistic: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(indices, scores), each (n_rows, k): the k best labels by score averaged over the trees.
    X must have sorted column indices per row; ``logistic``: the classifiers use the logistic loss
    (edge scores are sigmoids) rather than the squared hinge."""
    if packed is None:
        packed = pack_forest(trees)
    *arrays, max_edges = packed
    roots, edge_start, edge_target, is_leaf, node_f_start, f_ids, f_ptr, e_local, e_val = arrays
    n = X.shape[0]
    out_idx = np.empty((n, k), np.int64)
    out_score = np.empty((n, k), np.float64)
    if n:
        beam_search(X.indptr.astype(np.int64), X.indices.astype(np.int64), X.data.astype(np.float64), bias,
                    roots, edge_start, edge_target, is_leaf, node_f_start, f_ids, f_ptr, e_local, e_val,
                    X.shape[1], n_labels, beam_size, max_edges, k, bool(logistic), out_idx, out_score)
    return out_idx, out_score
