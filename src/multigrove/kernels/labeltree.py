"""Label-tree kernels (Bonsai): spherical k-means, squared-hinge and logistic linear classifiers, beam search.

Pure functions over arrays; the caller allocates every output.  Randomness comes from an explicit
seed through a per-task xorshift generator, so results do not depend on thread scheduling.
"""
import math
from typing import NamedTuple

import numpy as np
from numba import njit, prange

from .sparse import _insert, _lower_bound


class BiasedRows(NamedTuple):
    """CSR rows as the linear classifiers read them: a row's features, ascending, plus a constant
    feature of value ``bias`` whose id is ``bias_feature`` (after every real feature id)."""
    indptr: np.ndarray   # (n + 1,) int
    indices: np.ndarray  # (nnz,) int: feature ids, ascending within a row, < bias_feature
    data: np.ndarray     # (nnz,) float
    bias: float
    bias_feature: int


class SolverParams(NamedTuple):
    """The settings of the one-vs-rest solvers (train_squared_hinge, train_logistic)."""
    C: float          # the loss term's weight against 0.5 ||w||^2
    eps: float        # stopping tolerance
    max_iter: int     # most passes over the rows
    seed: int         # the rows' visiting order
    n_groups: int     # blocks of classifiers solved in parallel (the result does not depend on it)


class LabelForest(NamedTuple):
    """Label trees packed into one set of arrays (node ids offset per tree).  Node n's edges are
    edge_start[n]..edge_start[n+1], each a linear classifier leading to the child node edge_target[e],
    or, for a leaf node, to the label edge_target[e].  The classifiers' weights are feature-major per
    node (pack_node_weights): node n's feature slots are node_f_start[n]..node_f_start[n+1]; slot s
    holds feature f_ids[s] and the entries f_ptr[s]..f_ptr[s+1], each an edge relative to the node's
    first (e_local) and a weight (e_val)."""
    roots: np.ndarray         # (T,) int64: each tree's root node
    edge_start: np.ndarray    # (n_nodes + 1,) int64
    edge_target: np.ndarray   # (n_edges,) int64
    is_leaf: np.ndarray       # (n_nodes,) bool
    node_f_start: np.ndarray  # (n_nodes + 1,) int64
    f_ids: np.ndarray         # (n_slots,) int32
    f_ptr: np.ndarray         # (n_slots + 1,) int64
    e_local: np.ndarray       # (n_entries,) int32
    e_val: np.ndarray         # (n_entries,) float32
    max_edges: int            # the most edges of any node


class BeamParams(NamedTuple):
    """The scalars of a beam search."""
    n_labels: int
    beam_size: int   # nodes kept per tree and level
    k: int           # labels returned per row
    logistic: bool   # edge scores are sigmoids of w.x (else exp(-max(0, 1 - w.x)^2))


@njit(cache=True, inline="always", error_model="numpy")
def _xorshift(state):
    state ^= (state << np.uint64(13)) & np.uint64(0xFFFFFFFFFFFFFFFF)
    state ^= state >> np.uint64(7)
    state ^= (state << np.uint64(17)) & np.uint64(0xFFFFFFFFFFFFFFFF)
    return state


@njit(cache=True, nogil=True, error_model="numpy")
def _seed_state(seed, stream):
    s = np.uint64(seed) * np.uint64(0x9E3779B97F4A7C15) + np.uint64(stream) * np.uint64(0xBF58476D1CE4E5B9) \
        + np.uint64(0x94D049BB133111EB)
    if s == np.uint64(0):
        s = np.uint64(0x2545F4914F6CDD1D)
    for _ in range(4):
        s = _xorshift(s)
    return s


# ----------------------------------------------------------------------------- spherical k-means
@njit(parallel=True, cache=True, nogil=True, error_model="numpy")
def assign_clusters(indptr, indices, data, centers_t, out_assign, out_sim):
    """IN unit rows (CSR, m x dim); centers_t (dim, K) unit centres, transposed.
    OUT out_assign (m,) index of the most similar centre (ties: smaller index); out_sim (m,) its cosine."""
    m = indptr.shape[0] - 1
    K = centers_t.shape[1]
    for i in prange(m):
        acc = np.zeros(K, np.float64)
        for p in range(indptr[i], indptr[i + 1]):
            v = data[p]
            row = centers_t[indices[p]]
            for k in range(K):
                acc[k] += v * row[k]
        best = 0
        for k in range(1, K):
            if acc[k] > acc[best]:
                best = k
        out_assign[i] = best
        out_sim[i] = acc[best]


@njit(cache=True, nogil=True, error_model="numpy")
def update_centers(indptr, indices, data, assign, out_centers_t, out_sizes):
    """IN unit rows (CSR), assign (m,).  OUT out_centers_t (dim, K): normalised sum of each cluster's rows
    (a zero column for an empty cluster); out_sizes (K,) cluster sizes."""
    m = indptr.shape[0] - 1
    out_centers_t[:, :] = 0.0
    out_sizes[:] = 0
    for i in range(m):
        c = assign[i]
        out_sizes[c] += 1
        for p in range(indptr[i], indptr[i + 1]):
            out_centers_t[indices[p], c] += data[p]
    K = out_centers_t.shape[1]
    norms = np.zeros(K, np.float64)
    for j in range(out_centers_t.shape[0]):
        for k in range(K):
            norms[k] += out_centers_t[j, k] * out_centers_t[j, k]
    for k in range(K):
        norms[k] = 1.0 / math.sqrt(norms[k]) if norms[k] > 0 else 0.0
    for j in range(out_centers_t.shape[0]):
        for k in range(K):
            out_centers_t[j, k] *= norms[k]


@njit(cache=True, nogil=True, error_model="numpy")
def fill_empty_clusters(assign, sim, sizes):
    """IN/OUT assign, sizes: every empty cluster takes the point least similar to its own centre among
    clusters with more than one point (needs m >= K).  IN/OUT sim: the moved point's similarity
    becomes 1 (it is its new cluster's centre).  Returns the number of clusters filled."""
    K = sizes.shape[0]
    m = assign.shape[0]
    order = np.argsort(sim, kind="mergesort")
    pos = 0
    filled = 0
    for k in range(K):
        if sizes[k] > 0:
            continue
        while pos < m and sizes[assign[order[pos]]] <= 1:
            pos += 1
        if pos == m:
            break
        i = order[pos]
        pos += 1
        sizes[assign[i]] -= 1
        assign[i] = k
        sizes[k] = 1
        sim[i] = 1.0
        filled += 1
    return filled


# ----------------------------------------------------------------------------- linear classifiers
@njit(cache=True, nogil=True, error_model="numpy")
def _row_sq_norms(x, diag):
    """||x_i||^2 + bias^2 + diag for every row of x (BiasedRows)."""
    n = x.indptr.shape[0] - 1
    out = np.empty(n, np.float64)
    for i in range(n):
        s = x.bias * x.bias + diag
        for p in range(x.indptr[i], x.indptr[i + 1]):
            v = np.float64(x.data[p])  # the same sum for float32 or float64 data
            s += v * v
        out[i] = s
    return out


@njit(cache=True, nogil=True, error_model="numpy")
def _row_orders(n, n_passes, seed):
    """(n_passes, n): an independent random permutation of the rows for every pass (Fisher-Yates)."""
    orders = np.empty((n_passes, n), np.int64)
    state = _seed_state(seed, 0)
    for it in range(n_passes):
        for i in range(n):
            orders[it, i] = i
        for s in range(n - 1):
            state = _xorshift(state)
            j = s + np.int64(state % np.uint64(n - s))
            orders[it, s], orders[it, j] = orders[it, j], orders[it, s]
    return orders


@njit(cache=True, nogil=True, error_model="numpy")
def _block_labels(n, k0, kg, pos_indptr, pos_rows):
    """(n, kg) int8 labels (+1 / -1) of classifiers k0..k0+kg-1."""
    y = np.full((n, kg), np.int8(-1))
    for k in range(kg):
        for p in range(pos_indptr[k0 + k], pos_indptr[k0 + k + 1]):
            y[pos_rows[p], k] = 1
    return y


@njit(cache=True, inline="always", error_model="numpy")
def _block(g, K, n_groups):
    """(first classifier, number of classifiers) of block g when K classifiers are split into n_groups."""
    k0 = g * K // n_groups
    return k0, (g + 1) * K // n_groups - k0


@njit(cache=True, nogil=True, error_model="numpy")
def _store_block(W, k0, out_w):
    """out_w[k0 + k, :] = W[:, k] for every column k of the (d + 1, kg) weight block W."""
    for k in range(W.shape[1]):
        for j in range(W.shape[0]):
            out_w[k0 + k, j] = W[j, k]


@njit(cache=True, inline="always", error_model="numpy")
def _row_margins(W, x, i, out):
    """out[k] = w_k . x_i for the (d + 1, kg) float32 weight block W (bias weight in row d)."""
    d = W.shape[0] - 1
    for k in range(W.shape[1]):
        out[k] = W[d, k] * np.float32(x.bias)
    for p in range(x.indptr[i], x.indptr[i + 1]):
        v = np.float32(x.data[p])
        row = W[x.indices[p]]
        for k in range(W.shape[1]):
            out[k] += v * row[k]


@njit(cache=True, inline="always", error_model="numpy")
def _row_update(W, x, i, step):
    """w_k += step[k] * x_i for every column k of the weight block W."""
    d = W.shape[0] - 1
    for p in range(x.indptr[i], x.indptr[i + 1]):
        v = np.float32(x.data[p])
        row = W[x.indices[p]]
        for k in range(W.shape[1]):
            row[k] += v * step[k]
    for k in range(W.shape[1]):
        W[d, k] += np.float32(x.bias) * step[k]


@njit(parallel=True, cache=True, nogil=True, error_model="numpy")
def train_squared_hinge(x, pos_indptr, pos_rows, solver, out_w):
    """One-vs-rest linear classifiers with L2 regularisation and squared hinge loss,
    min_w 0.5 ||w||^2 + C sum_i max(0, 1 - y_i w.x_i)^2, by dual coordinate descent with shrinking
    (Hsieh et al. 2008).

    The K problems share their rows, so they are solved in lockstep: each visit of a row computes
    the K margins with one pass over the row's features (contiguous over K) and applies the K
    coordinate steps together.  Each classifier keeps its own shrinking state and stopping test,
    so the result is that of K separate solvers visiting rows in the same order; the classifiers
    are split into n_groups blocks solved in parallel, which does not change the result.

    IN x (BiasedRows, n x d, local column ids; the constant feature is column d = x.bias_feature);
    pos_indptr/pos_rows: classifier k's positive rows are pos_rows[pos_indptr[k]:pos_indptr[k+1]]
    (every other row is negative); solver (SolverParams): C, eps (stopping tolerance on the
    projected-gradient spread), max_iter (passes over the rows), seed (row order), n_groups.
    OUT out_w (K, d + 1) weights, the bias weight last."""
    n = x.indptr.shape[0] - 1
    K = out_w.shape[0]
    d = out_w.shape[1] - 1
    max_iter = solver.max_iter
    diag = 0.5 / solver.C
    qd = _row_sq_norms(x, diag)
    orders = _row_orders(n, max_iter, solver.seed)  # the row order of every pass, shared by all classifiers
    n_groups = max(1, min(solver.n_groups, K))
    for g in prange(n_groups):
        k0, kg = _block(g, K, n_groups)
        W = np.zeros((d + 1, kg), np.float32)
        y = _block_labels(n, k0, kg, pos_indptr, pos_rows)
        alpha = np.zeros((n, kg), np.float32)
        shrunk = np.zeros((n, kg), np.bool_)
        n_live = np.full(n, kg, np.int64)          # classifiers still visiting each row
        done = np.zeros(kg, np.bool_)
        pg_max_old = np.full(kg, np.inf)
        pg_min_old = np.full(kg, -np.inf)
        pg_max = np.empty(kg)
        pg_min = np.empty(kg)
        n_active = np.full(kg, n, np.int64)         # rows not shrunk, per classifier
        acc = np.empty(kg, np.float32)
        step = np.empty(kg, np.float32)
        n_done = 0
        for it in range(max_iter):
            if n_done == kg:
                break
            pg_max[:] = -np.inf
            pg_min[:] = np.inf
            for r in range(n):
                i = orders[it, r]
                if n_live[i] == 0:
                    continue
                _row_margins(W, x, i, acc)
                any_step = False
                for k in range(kg):
                    step[k] = 0.0
                    if done[k] or shrunk[i, k]:
                        continue
                    yi = np.float64(y[i, k])
                    a = np.float64(alpha[i, k])
                    gr = yi * acc[k] - 1.0 + a * diag
                    pg = 0.0
                    if a == 0.0:
                        if gr > pg_max_old[k]:
                            shrunk[i, k] = True
                            n_live[i] -= 1
                            n_active[k] -= 1
                            continue
                        if gr < 0.0:
                            pg = gr
                    else:
                        pg = gr
                    if pg > pg_max[k]:
                        pg_max[k] = pg
                    if pg < pg_min[k]:
                        pg_min[k] = pg
                    if abs(pg) > 1e-12:
                        new = np.float32(a - gr / qd[i])
                        if new < 0.0:
                            new = np.float32(0.0)
                        alpha[i, k] = new
                        step[k] = (np.float64(new) - a) * yi
                        any_step = True
                if any_step:
                    _row_update(W, x, i, step)
            for k in range(kg):
                if done[k]:
                    continue
                if pg_max[k] - pg_min[k] <= solver.eps:
                    if n_active[k] == n:
                        done[k] = True
                        n_done += 1
                        for i in range(n):
                            n_live[i] -= 1
                        continue
                    for i in range(n):  # converged on the shrunk set: check every row once more
                        if shrunk[i, k]:
                            shrunk[i, k] = False
                            n_live[i] += 1
                    n_active[k] = n
                    pg_max_old[k] = np.inf
                    pg_min_old[k] = -np.inf
                    continue
                pg_max_old[k] = pg_max[k] if pg_max[k] > 0.0 else np.inf
                pg_min_old[k] = pg_min[k] if pg_min[k] < 0.0 else -np.inf
        _store_block(W, k0, out_w)


@njit(parallel=True, cache=True, nogil=True, error_model="numpy")
def train_logistic(x, pos_indptr, pos_rows, solver, out_w):
    """One-vs-rest L2-regularised logistic regression, min_w 0.5 ||w||^2 + C sum_i log(1 + exp(-y_i w.x_i)),
    by dual coordinate descent (Yu, Huang and Lin 2011, Algorithm 5): each dual variable
    alpha_i in (0, C) is moved to the minimum of its one-dimensional subproblem by a guarded Newton
    method, written in whichever of alpha_i and C - alpha_i is below C / 2 so that neither loses
    precision near a bound; log(alpha_i / (C - alpha_i)) is kept from the last visit, so a row whose
    subproblem is already solved costs no logarithm.  No shrinking (no dual variable sits on a
    bound); a classifier stops when the largest subproblem gradient of a pass is below eps, or after
    max_iter passes.  The subproblem tolerance starts at 1e-2 and tightens tenfold after a pass with
    few Newton steps, down to min(eps, 1e-3) (Yu et al. go to 1e-8, which on delicious's root node
    cost a quarter more time for the same objective to three digits).

    Same lockstep layout, arguments and outputs as ``train_squared_hinge``."""
    n = x.indptr.shape[0] - 1
    K = out_w.shape[0]
    C, eps, max_iter = solver.C, solver.eps, solver.max_iter
    qd = _row_sq_norms(x, 0.0)
    orders = _row_orders(n, max_iter, solver.seed)
    a_start = min(0.001 * C, 1e-8)
    inner_floor = min(eps, 1e-3)
    n_groups = max(1, min(solver.n_groups, K))
    for g in prange(n_groups):
        k0, kg = _block(g, K, n_groups)
        W = np.zeros((out_w.shape[1], kg), np.float32)
        y = _block_labels(n, k0, kg, pos_indptr, pos_rows)
        lo = np.full((n, kg), np.float32(a_start))       # alpha_i
        hi = np.full((n, kg), np.float32(C - a_start))   # C - alpha_i
        lr = np.full((n, kg), np.float32(math.log(a_start / (C - a_start))))  # log(alpha_i / (C - alpha_i))
        step = np.empty(kg, np.float32)
        for i in range(n):  # w = sum_i alpha_i y_i x_i at the starting point
            for k in range(kg):
                step[k] = a_start * y[i, k]
            _row_update(W, x, i, step)
        done = np.zeros(kg, np.bool_)
        inner_eps = np.full(kg, 1e-2)
        g_max = np.empty(kg)
        n_newton = np.empty(kg, np.int64)
        acc = np.empty(kg, np.float32)
        n_done = 0
        for it in range(max_iter):
            if n_done == kg:
                break
            g_max[:] = 0.0
            n_newton[:] = 0
            for r in range(n):
                i = orders[it, r]
                _row_margins(W, x, i, acc)
                a = qd[i]
                any_step = False
                for k in range(kg):
                    step[k] = 0.0
                    if done[k]:
                        continue
                    yi = np.float64(y[i, k])
                    b = yi * acc[k]
                    al = np.float64(lo[i, k])
                    ah = np.float64(hi[i, k])
                    # the subproblem's minimum lies above C / 2 iff its gradient there is negative
                    if 0.5 * a * (ah - al) + b < 0.0:
                        z0, sgn = ah, -1.0
                    else:
                        z0, sgn = al, 1.0
                    if z0 > 0.5 * C:  # start on the right half
                        z = 0.1 * z0
                        lz = math.log(z / (C - z))
                    else:
                        z = z0
                        lz = sgn * np.float64(lr[i, k])  # log(z / (C - z)) from the last visit
                    gp = a * (z - z0) + sgn * b + lz
                    g_max[k] = max(g_max[k], abs(gp))
                    inner = 0
                    while inner <= 100 and abs(gp) >= inner_eps[k]:
                        t = z - gp / (a + C / ((C - z) * z))
                        z = 0.1 * z if t <= 0.0 else t
                        lz = math.log(z / (C - z))
                        gp = a * (z - z0) + sgn * b + lz
                        inner += 1
                    n_newton[k] += inner
                    if inner > 0:
                        if sgn > 0.0:
                            lo[i, k] = np.float32(z)
                            hi[i, k] = np.float32(C - z)
                        else:
                            hi[i, k] = np.float32(z)
                            lo[i, k] = np.float32(C - z)
                        lr[i, k] = np.float32(sgn * lz)
                        step[k] = np.float32(sgn * (z - z0) * yi)
                        any_step = True
                if any_step:
                    _row_update(W, x, i, step)
            for k in range(kg):
                if done[k]:
                    continue
                if g_max[k] < eps:
                    done[k] = True
                    n_done += 1
                elif n_newton[k] <= n // 10:  # few Newton steps this pass: solve the subproblems tighter
                    inner_eps[k] = max(inner_floor, 0.1 * inner_eps[k])
        _store_block(W, k0, out_w)


# ----------------------------------------------------------------------------- beam search
@njit(cache=True, nogil=True, error_model="numpy")
def count_node_features(edge_start, w_indptr, w_indices, n_ids, out_counts):
    """OUT out_counts[n] = number of distinct feature ids (all < n_ids) among the weights of node n's
    edges; node n's edges are edge_start[n]..edge_start[n+1], edge e's weights are
    w_indices[w_indptr[e]:w_indptr[e+1]]."""
    stamp = np.full(n_ids, -1, np.int64)
    for node in range(edge_start.shape[0] - 1):
        c = 0
        for p in range(w_indptr[edge_start[node]], w_indptr[edge_start[node + 1]]):
            f = w_indices[p]
            if stamp[f] != node:
                stamp[f] = node
                c += 1
        out_counts[node] = c


@njit(parallel=True, cache=True, nogil=True, error_model="numpy")
def pack_node_weights(edge_start, w_indptr, w_indices, w_data, node_f_start, entry_offset,
                      out_f_ids, out_f_ptr, out_e_local, out_e_val):
    """Regroup one tree's edge-major weights feature-major per node (the layout ``beam_search`` reads).

    IN the tree (as in ``count_node_features``) with w_data its weight values; node_f_start (n_nodes+1,):
    node n's feature slots are node_f_start[n]..node_f_start[n+1] (from the counts above); entry_offset:
    added to every out_f_ptr value (the tree's first entry in a forest's arrays).
    Node n's weights keep their positions w_indptr[edge_start[n]]..w_indptr[edge_start[n+1]], ordered
    by feature, ties by edge.  OUT out_f_ids[s] feature of slot s; out_f_ptr[s] its first entry;
    out_e_local[p] edge of entry p relative to its node's first edge; out_e_val[p] its weight."""
    for node in prange(edge_start.shape[0] - 1):
        e0 = edge_start[node]
        a = w_indptr[e0]
        b = w_indptr[edge_start[node + 1]]
        local = np.empty(b - a, np.int32)
        for e in range(e0, edge_start[node + 1]):
            for p in range(w_indptr[e], w_indptr[e + 1]):
                local[p - a] = e - e0
        order = np.argsort(w_indices[a:b], kind="mergesort")
        s = node_f_start[node]
        prev = -1
        for j in range(b - a):
            p = a + order[j]
            f = w_indices[p]
            if f != prev:
                out_f_ids[s] = f
                out_f_ptr[s] = entry_offset + a + j
                s += 1
                prev = f
            out_e_local[a + j] = local[order[j]]
            out_e_val[a + j] = w_data[p]


@njit(cache=True, inline="always", error_model="numpy")
def _score_node(node, x, i, forest, out):
    """out[0:n_edges(node)] += w_e . x_i for the node's edges (x: BiasedRows, forest: LabelForest), by
    walking the row's features against the node's feature-major weights (binary search from the last
    match: the row's features are sorted)."""
    # the arrays as locals (see beam_search)
    node_f_start, f_ids, f_ptr = forest.node_f_start, forest.f_ids, forest.f_ptr
    e_local, e_val = forest.e_local, forest.e_val
    indices, data = x.indices, x.data
    lo = node_f_start[node]
    hi = node_f_start[node + 1]
    for p in range(x.indptr[i], x.indptr[i + 1]):
        j = indices[p]
        a = _lower_bound(f_ids, lo, hi, j)
        lo = a
        if a < hi and f_ids[a] == j:
            v = data[p]
            for q in range(f_ptr[a], f_ptr[a + 1]):
                out[e_local[q]] += e_val[q] * v
            lo = a + 1
        if lo >= hi:
            break
    if node_f_start[node + 1] > node_f_start[node] and f_ids[node_f_start[node + 1] - 1] == x.bias_feature:
        a = node_f_start[node + 1] - 1
        for q in range(f_ptr[a], f_ptr[a + 1]):
            out[e_local[q]] += e_val[q] * x.bias


@njit(parallel=True, cache=True, nogil=True, error_model="numpy")
def route_rows(x, rows, forest, threshold, out):
    """Which classifiers of a node give each of the node's rows a margin above ``threshold``.

    IN x (BiasedRows); rows (m,) ids of the rows to score; forest (LabelForest): the node's K
    classifiers, packed as a one-node forest.  OUT out (m, K) bool:
    out[i, k] = (w_k . x_rows[i] > threshold), the margin computed by the beam's ``_score_node``."""
    m, K = out.shape
    n_chunks = min(m, 256)
    for c in prange(n_chunks):
        wx = np.empty(K, np.float64)
        for i in range(c * m // n_chunks, (c + 1) * m // n_chunks):
            wx[:] = 0.0
            _score_node(0, x, rows[i], forest, wx)
            for k in range(K):
                out[i, k] = wx[k] > threshold


@njit(cache=True, inline="always", error_model="numpy")
def _edge_log_score(parent, margin, logistic):
    """A path's log score after an edge of margin w.x: + log sigmoid(w.x) (stable for either sign), or
    + log exp(-max(0, 1 - w.x)^2)."""
    if logistic:
        if margin >= 0.0:
            return parent - math.log1p(math.exp(-margin))
        return parent + margin - math.log1p(math.exp(margin))
    m = 1.0 - margin
    return parent - (m * m if m > 0.0 else 0.0)


@njit(parallel=True, cache=True, nogil=True, error_model="numpy")
def beam_search(x, forest, search, out_idx, out_score):
    """Top-k labels of every row over a forest of label trees, averaged over the trees.

    IN x (BiasedRows: the feature ids of the trees' weights); forest (LabelForest); search (BeamParams).
    A path's score is the product over its edges of exp(-max(0, 1 - w.x)^2) (squared-hinge classifiers)
    or, if ``search.logistic``, of the sigmoid 1 / (1 + exp(-w.x)).  Per tree and level the
    beam keeps the ``search.beam_size`` best nodes; every label reached gets its path score, labels a
    tree does not reach count 0 in the average.
    OUT out_idx (n, k) labels by descending score (ties: smaller label), -1 past the labels reached;
    OUT out_score (n, k)."""
    n = x.indptr.shape[0] - 1
    # the arrays as locals, in one loop nest: read through the tuples, or with the loop split into
    # functions per tree and per row, the search took 20 % longer on Delicious
    roots, edge_start, edge_target, is_leaf = forest.roots, forest.edge_start, forest.edge_target, forest.is_leaf
    max_edges = forest.max_edges
    n_labels, beam_size, k, logistic = search.n_labels, search.beam_size, search.k, search.logistic
    T = roots.shape[0]
    n_chunks = min(n, 256)
    for c in prange(n_chunks):
        acc = np.zeros(n_labels, np.float64)
        touched = np.empty(n_labels, np.int64)
        seen = np.zeros(n_labels, np.bool_)
        wx = np.zeros(max_edges, np.float64)
        beam_node = np.empty(beam_size, np.int64)
        beam_val = np.empty(beam_size, np.float64)
        cand_node = np.empty(beam_size * max_edges, np.int64)
        cand_val = np.empty(beam_size * max_edges, np.float64)
        top_i = np.empty(k, np.int64)
        top_v = np.empty(k, np.float64)
        start = c * n // n_chunks
        stop = (c + 1) * n // n_chunks
        for i in range(start, stop):
            n_touched = 0
            for t in range(T):
                beam_node[0] = roots[t]
                beam_val[0] = 0.0
                n_beam = 1
                while n_beam > 0:  # one level of the tree
                    n_cand = 0
                    for b in range(n_beam):
                        node = beam_node[b]
                        e0 = edge_start[node]
                        ne = edge_start[node + 1] - e0
                        wx[:ne] = 0.0
                        _score_node(node, x, i, forest, wx)
                        for q in range(ne):
                            v = _edge_log_score(beam_val[b], wx[q], logistic)
                            if is_leaf[node]:
                                lab = edge_target[e0 + q]
                                acc[lab] += math.exp(v)
                                if not seen[lab]:
                                    seen[lab] = True
                                    touched[n_touched] = lab
                                    n_touched += 1
                            else:
                                cand_node[n_cand] = edge_target[e0 + q]
                                cand_val[n_cand] = v
                                n_cand += 1
                    if n_cand <= beam_size:
                        for b in range(n_cand):
                            beam_node[b] = cand_node[b]
                            beam_val[b] = cand_val[b]
                        n_beam = n_cand
                    else:
                        order = np.argsort(-cand_val[:n_cand], kind="mergesort")
                        for b in range(beam_size):
                            beam_node[b] = cand_node[order[b]]
                            beam_val[b] = cand_val[order[b]]
                        n_beam = beam_size
            # top-k of the reached labels (descending; ties: smaller label)
            filled = 0
            for q in range(n_touched):
                lab = touched[q]
                filled = _insert(top_i, top_v, filled, k, lab, acc[lab] / T)
            for j in range(k):
                if j < filled:
                    out_idx[i, j] = top_i[j]
                    out_score[i, j] = top_v[j]
                else:
                    out_idx[i, j] = -1
                    out_score[i, j] = 0.0
            for q in range(n_touched):
                acc[touched[q]] = 0.0
                seen[touched[q]] = False
