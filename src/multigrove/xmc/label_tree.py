"""Bonsai label trees: label representations, K-way spherical k-means, recursive growth.

A tree is stored as flat arrays (``LabelTree``): node ``n``'s outgoing edges are
``edge_start[n]:edge_start[n+1]``; an edge of an internal node leads to a child node, an edge of a
leaf leads to a label, and every edge carries one sparse linear classifier (row ``e`` of the
``w_*`` CSR arrays).  Nodes are numbered breadth-first, so children always have larger ids.

A node's classifiers train on the rows that carry one of its labels (Bonsai) and, with hard
negatives, also on the rows its parent's classifier for it scores positive without carrying any
of its labels: the rows a beam search would send there by mistake, which the node's classifiers
then learn to score low.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from sklearn.preprocessing import normalize

from ..kernels.labeltree import BiasedRows, assign_clusters, fill_empty_clusters, route_rows, update_centers
from .beam_search import pack_forest
from .linear import LinearConfig, SparseWeights, train_node

REPRESENTATIONS = ("input", "output", "joint")


def label_representation(X: sp.csr_matrix, Y: sp.csr_matrix, kind: str) -> sp.csr_matrix:
    """(L, dim) CSR, rows L2-normalised: ``input`` Yᵀ X, ``output`` Yᵀ Y, ``joint`` both side by side
    (each half normalised first, so they weigh the same)."""
    if kind not in REPRESENTATIONS:
        raise ValueError(f"representation must be one of {REPRESENTATIONS}, got {kind!r}")
    Yt = Y.T.tocsr()
    parts = []
    if kind in ("input", "joint"):
        parts.append(normalize(Yt @ X))
    if kind in ("output", "joint"):
        parts.append(normalize(Yt @ Y))
    V = parts[0] if len(parts) == 1 else sp.hstack(parts, format="csr")
    V = normalize(V.astype(np.float64))
    V.sort_indices()
    return V


def spherical_kmeans(V: sp.csr_matrix, K: int, max_iter: int = 20, tol: float = 1e-4, seed=0) -> np.ndarray:
    """Cluster the unit rows of V into K non-empty clusters maximising the summed cosine to their
    centres (Lloyd iterations, centres initialised on K distinct random rows).  Needs V.shape[0] >= K.
    Returns the cluster of every row."""
    m = V.shape[0]
    if not 2 <= K <= m:
        raise ValueError(f"K must be in [2, {m}] for {m} rows, got {K}")
    cols, local = np.unique(V.indices, return_inverse=True)
    indptr = V.indptr.astype(np.int64)
    indices = local.astype(np.int64)
    data = V.data.astype(np.float64)
    rng = np.random.default_rng(seed)
    init = rng.choice(m, size=K, replace=False)
    centers_t = np.zeros((max(cols.shape[0], 1), K), np.float64)
    for k, i in enumerate(init):
        s, e = indptr[i], indptr[i + 1]
        centers_t[indices[s:e], k] = data[s:e]
    assign = np.empty(m, np.int64)
    sim = np.empty(m, np.float64)
    sizes = np.empty(K, np.int64)
    prev = -np.inf
    for _ in range(max_iter):
        assign_clusters(indptr, indices, data, centers_t, assign, sim)
        sizes[:] = np.bincount(assign, minlength=K)
        fill_empty_clusters(assign, sim, sizes)
        obj = float(sim.sum())
        update_centers(indptr, indices, data, assign, centers_t, sizes)
        if obj - prev <= tol * abs(obj):
            break
        prev = obj
    return assign


@dataclass
class LabelTree:
    edge_start: np.ndarray   # (n_nodes + 1,) int64
    edge_target: np.ndarray  # (n_edges,) int64: child node (internal node) or label (leaf)
    is_leaf: np.ndarray      # (n_nodes,) bool
    w_indptr: np.ndarray     # (n_edges + 1,) int64
    w_indices: np.ndarray    # int32 feature ids, n_features = bias
    w_data: np.ndarray       # float32

    @property
    def n_nodes(self) -> int:
        return self.is_leaf.shape[0]

    @property
    def depth(self) -> int:
        depth = np.zeros(self.n_nodes, np.int64)
        for n in range(self.n_nodes):
            if not self.is_leaf[n]:
                depth[self.edge_target[self.edge_start[n]:self.edge_start[n + 1]]] = depth[n] + 1
        return int(depth.max()) + 1


def _positives(Yc: sp.csc_matrix, labels: np.ndarray, group: np.ndarray, n_groups: int, all_rows: bool,
               extra_rows: np.ndarray | None = None):
    """Rows of the node (all rows for the root; else the rows carrying one of its labels, plus
    ``extra_rows``) and, per group (child or label), its positive local rows."""
    sub = Yc[:, labels]
    rows = sub.indices.astype(np.int64)
    grp = np.repeat(group, np.diff(sub.indptr))
    if all_rows:
        node_rows = np.arange(Yc.shape[0], dtype=np.int64)
    else:
        node_rows = np.unique(rows if extra_rows is None else np.concatenate([rows, extra_rows]))
    local = np.searchsorted(node_rows, rows)
    pairs = np.unique(grp * node_rows.shape[0] + local)
    g, r = np.divmod(pairs, node_rows.shape[0])
    indptr = np.zeros(n_groups + 1, np.int64)
    np.cumsum(np.bincount(g, minlength=n_groups), out=indptr[1:])
    return node_rows, (indptr, r)


# rows scored per call of ``route_rows``: its (rows x K) output stays at most 16 MB
_ROUTE_CELLS = 2 ** 24


def routed_rows(X: sp.csr_matrix, rows: np.ndarray, w: SparseWeights, bias: float) -> list[np.ndarray]:
    """Per classifier k of a node (weights ``w``), the ids among ``rows`` to which it gives a positive
    margin (the pruned weights, as prediction sees them)."""
    K = w.indptr.shape[0] - 1
    # the node as a one-node tree whose edges are its classifiers, packed as the beam search reads it
    node = LabelTree(np.array([0, K], np.int64), np.arange(K, dtype=np.int64), np.ones(1, np.bool_),
                     w.indptr, w.indices, w.data)
    packed = pack_forest([node])
    x = BiasedRows(X.indptr, X.indices, X.data, float(bias), X.shape[1])
    step = max(1, _ROUTE_CELLS // K)
    hit_k, hit_i = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)]  # a node may have no rows
    for a in range(0, rows.shape[0], step):
        sub = rows[a:a + step]
        mask = np.empty((sub.shape[0], K), np.bool_)
        route_rows(x, sub, packed, 0.0, mask)
        i, k = np.nonzero(mask)
        hit_k.append(k)
        hit_i.append(sub[i])
    k = np.concatenate(hit_k)
    order = np.argsort(k, kind="stable")
    bounds = np.searchsorted(k[order], np.arange(K + 1))
    ids = np.concatenate(hit_i)[order]
    return [ids[bounds[j]:bounds[j + 1]] for j in range(K)]


def grow_tree(X: sp.csr_matrix, Y: sp.csr_matrix, V: sp.csr_matrix, branching: int, max_depth: int,
              linear: LinearConfig, seed: int, kmeans_max_iter: int = 20, kmeans_tol: float = 1e-4,
              hard_negatives: bool = False, progress=None) -> LabelTree:
    """Grow one Bonsai tree (Algorithm 1) and train every node's classifiers.

    X: (n, D) CSR features (rows already normalised as the model wants); Y: (n, L) CSR labels;
    V: (L, dim) label representations.  A node with at most ``branching`` labels, or at depth
    ``max_depth``, is a leaf; any other node splits its labels into ``branching`` clusters.
    ``hard_negatives``: a child's classifiers also train on the parent's rows that the parent's
    classifier for the child scores positive (they are negatives for every label they lack)."""
    L = Y.shape[1]
    Yc = Y.tocsc()
    extra: dict[int, np.ndarray] = {}  # node -> hard-negative candidates handed down by its parent
    node_labels = [np.arange(L, dtype=np.int64)]
    node_depth = [0]
    is_leaf: list[bool] = []
    targets: list[np.ndarray] = []
    weights = []
    queue = deque([0])
    while queue:
        n = queue.popleft()
        labels = node_labels[n]
        leaf = labels.shape[0] <= branching or node_depth[n] >= max_depth
        if leaf:
            group = np.arange(labels.shape[0], dtype=np.int64)
            tgt = labels
        else:
            assign = spherical_kmeans(V[labels], branching, kmeans_max_iter, kmeans_tol, seed=[seed, n])
            group = assign
            tgt = np.empty(branching, np.int64)
            for k in range(branching):
                tgt[k] = len(node_labels)
                node_labels.append(labels[assign == k])
                node_depth.append(node_depth[n] + 1)
                queue.append(tgt[k])
        rows, pos = _positives(Yc, labels, group, tgt.shape[0], all_rows=(n == 0), extra_rows=extra.pop(n, None))
        w = train_node(X, rows, pos, linear, seed * 1_000_003 + n)
        weights.append(w)
        if hard_negatives and not leaf:
            for child, routed in zip(tgt, routed_rows(X, rows, w, linear.bias)):
                if routed.size:
                    extra[int(child)] = routed
        is_leaf.append(leaf)
        targets.append(tgt)
        if progress is not None:
            progress(1)
    counts = np.array([t.shape[0] for t in targets], np.int64)
    edge_start = np.zeros(len(targets) + 1, np.int64)
    np.cumsum(counts, out=edge_start[1:])
    w_counts = np.concatenate([np.diff(w.indptr) for w in weights])
    w_indptr = np.zeros(w_counts.shape[0] + 1, np.int64)
    np.cumsum(w_counts, out=w_indptr[1:])
    return LabelTree(edge_start, np.concatenate(targets), np.array(is_leaf, bool), w_indptr,
                     np.concatenate([w.indices for w in weights]).astype(np.int32),
                     np.concatenate([w.data for w in weights]).astype(np.float32))
