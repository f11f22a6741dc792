"""Naive twins of the Numba kernels: plain Python/NumPy, obviously correct, slow."""
import numpy as np


def bin_matrix(X, bounds, bound_offsets):
    n, F = X.shape
    out = np.zeros((n, F), dtype=np.uint8)
    for f in range(F):
        b = bounds[bound_offsets[f]:bound_offsets[f + 1]]
        for i in range(n):
            x = X[i, f]
            if np.isnan(x):
                out[i, f] = b.size
            else:
                out[i, f] = next(j for j in range(b.size) if x <= b[j])
    return out


def filled_cuts(counts, candidates, min_count):
    """The cuts kept of one feature's candidate cuts (indices after which a bin may close), so that every bin
    holds at least min_count rows: the bins grow value by value, and a bin left short at the end joins the
    one before it."""
    kept, filled = [], 0
    for i, count in enumerate(counts):
        filled += count
        if i in candidates and filled >= min_count:
            kept.append(i)
            filled = 0
    if filled < min_count and kept:
        kept.pop()
    return kept


def bundle_column(n_rows, feats, rows, codes):
    """A bundle's column of codes and which entries it took, member by member (each member's rows are
    distinct; a member's coded entry takes a row no earlier member took)."""
    column = np.zeros(n_rows, np.uint8)
    fits = np.zeros(rows.size, np.bool_)
    for f in dict.fromkeys(feats.tolist()):  # the members in their order
        own = np.flatnonzero(feats == f)
        take = own[(codes[own] > 0) & (column[rows[own]] == 0)]
        column[rows[take]] = codes[take]
        fits[take] = True
    return column, fits


def row_index(csc_indptr, csc_rows, csc_index, n_words):
    """(words, ranks) of kernels.store.fill_row_index: a Python int per 64-row word, and the entries before."""
    words = np.zeros((int((csc_index >= 0).sum()), n_words), np.uint64)
    ranks = np.zeros(words.shape, np.int32)
    for f, slot in enumerate(csc_index):
        if slot < 0:
            continue
        rows = list(csc_rows[csc_indptr[f]:csc_indptr[f + 1]])
        for w in range(n_words):
            ranks[slot, w] = sum(1 for r in rows if r < 64 * w)
            words[slot, w] = np.uint64(sum(1 << (int(r) - 64 * w) for r in rows if 64 * w <= r < 64 * (w + 1)))
    return words, ranks


def histogram(binned, rows, stats, offsets):
    out = np.zeros((offsets[-1], stats.shape[1]))
    for r in rows:
        for f in range(binned.shape[1]):
            out[offsets[f] + binned[r, f]] += stats[r].astype(np.float64)
    return out


def best_split_per_feature(hist, offsets, total, k, h_col, h_stride, h_scale, count_col, mask, lam,
                           min_data, min_hess, topk=0, restricted=False):
    F = offsets.size - 1
    gains = np.full(F, -np.inf)
    bins = np.full(F, -1)
    dleft = np.zeros(F, dtype=bool)

    def contrib(s):
        g = s[:k]
        h = np.array([h_scale * s[h_col + j * h_stride] for j in range(k)])
        return g * g / (h + lam), float(h.mean())

    def pair_score(left, right):
        cl, hl = contrib(left)
        cr, hr = contrib(right)
        if topk <= 0 or topk >= k:
            return cl.sum() + cr.sum(), hl, hr
        if restricted:                       # GBDT-MO Alg. 4: shared top-k outputs
            return float(np.sort(cl + cr)[::-1][:topk].sum()), hl, hr
        return float(np.sort(cl)[::-1][:topk].sum() + np.sort(cr)[::-1][:topk].sum()), hl, hr  # Alg. 3
    for f in range(F):
        if not mask[f]:
            continue
        lo, miss = offsets[f], offsets[f + 1] - 1
        nvb = miss - lo
        has_missing = hist[miss, count_col] > 0
        for missing_left in ([False, True] if has_missing else [False]):
            for t in range(nvb - 1):
                left = hist[lo:lo + t + 1].sum(axis=0) + (hist[miss] if missing_left else 0)
                right = total - left
                if left[count_col] < min_data or right[count_col] < min_data:
                    continue
                # thresholds whose bin is empty give the same partition as the previous one
                if hist[lo + t, count_col] == 0 and not (t == 0 and missing_left):
                    continue
                gain, hl, hr = pair_score(left, right)
                if hl < min_hess or hr < min_hess:
                    continue
                if gain > gains[f]:
                    gains[f], bins[f], dleft[f] = gain, t, missing_left
    return gains, bins, dleft


def level_split_gains(hists, totals, offsets, k, h_col, h_stride, h_scale, count_col, mask, lam, min_data, min_hess):
    """(2, total_bins): for every candidate (missing left?, threshold bin) the sum over the nodes of
    score(left) + score(right) - score(node), over the nodes where both sides keep min_data rows and
    min_hess mean Hessian; NaN for bins that are no threshold (last value bin, missing bin, masked)."""
    out = np.full((2, offsets[-1]), np.nan)

    def score(s):
        h = np.array([h_scale * s[h_col + j * h_stride] for j in range(k)])
        den = h + lam
        return float(np.sum(np.where(den > 0, s[:k] ** 2 / np.where(den > 0, den, 1), 0.0))), float(h.mean())
    for f in range(offsets.size - 1):
        if not mask[f]:
            continue
        lo, miss = offsets[f], offsets[f + 1] - 1
        for direction in (0, 1):
            for t in range(miss - lo - 1):
                total_gain = 0.0
                for hist, total in zip(hists, totals):
                    left = hist[lo:lo + t + 1].sum(axis=0) + (hist[miss] if direction else 0)
                    right = total - left
                    if left[count_col] < min_data or right[count_col] < min_data:
                        continue
                    (sl, hl), (sr, hr), (sp, _) = score(left), score(right), score(total)
                    if hl < min_hess or hr < min_hess:
                        continue
                    total_gain += sl + sr - sp
                out[direction, lo + t] = total_gain
    return out


def partition(rows, start, end, binned, feature, thr, miss, default_left):
    seg = rows[start:end]
    b = binned[seg, feature]
    left = np.where(b == miss, default_left, b <= thr)
    out = rows.copy()
    out[start:end] = np.concatenate([seg[left], seg[~left]])
    return out, int(left.sum())


def tree_leaf(x_row, feature, threshold, default_left, left, right, binned=False, missing_bin=None, bins=None):
    if feature.size == 0:
        return 0
    node = 0
    while True:
        f = feature[node]
        v = x_row[f]
        if binned:
            go_left = default_left[node] if v == missing_bin[f] else v <= bins[node]
        else:
            go_left = default_left[node] if np.isnan(v) else v <= threshold[node]
        nxt = left[node] if go_left else right[node]
        if nxt < 0:
            return ~nxt
        node = nxt


def conditional_expectation(tree, x, subset, n_outputs):
    """E[tree(X) | X_S = x_S] as path-dependent TreeSHAP defines it: features in S follow x, the others
    split the weight between both children by the training rows that went each way."""
    frac = tree.left_fraction()
    cols = tree.columns()

    def walk(child, weight):
        out = np.zeros(n_outputs)
        if child < 0:
            out[cols[~child]] += weight * tree.leaf_value[~child]
            return out
        f = tree.split_feature[child]
        if f in subset:
            left = tree.default_left[child] if np.isnan(x[f]) else x[f] <= tree.threshold[child]
            return walk(tree.left_child[child] if left else tree.right_child[child], weight)
        return walk(tree.left_child[child], weight * frac[child]) + \
            walk(tree.right_child[child], weight * (1 - frac[child]))
    return walk(0 if tree.n_internal else -1, 1.0)


def shapley_values(tree, x, n_outputs):
    """(F + 1, d) exact Shapley values of one tree by enumerating every subset of features (small F only);
    the last row is the expected value."""
    from itertools import combinations
    from math import factorial
    F = x.shape[0]
    out = np.zeros((F + 1, n_outputs))
    for i in range(F):
        others = [f for f in range(F) if f != i]
        for size in range(F):
            weight = factorial(size) * factorial(F - size - 1) / factorial(F)
            for subset in combinations(others, size):
                out[i] += weight * (conditional_expectation(tree, x, set(subset) | {i}, n_outputs)
                                    - conditional_expectation(tree, x, set(subset), n_outputs))
    out[F] = conditional_expectation(tree, x, set(), n_outputs)
    return out


def sparse_gradients(loss, Y, Z):
    """Dense gradients of the sparse-output losses (0 squared, 1 shifted squared hinge), cell by cell."""
    Yd, Zd = np.asarray(Y.todense(), dtype=np.float64), np.asarray(Z.todense(), dtype=np.float64)
    G = np.zeros_like(Yd)
    for i in range(Yd.shape[0]):
        for q in range(Yd.shape[1]):
            y, z = Yd[i, q], Zd[i, q]
            if loss == 0:
                G[i, q] = z - y
            elif y > 0.5:
                G[i, q] = min(z - 1.0, 0.0)
            else:
                G[i, q] = max(z, 0.0)
    return G


def sparse_leaf_values(leaf_rows, G_dense, row_hess, k, lam, lr):
    """GBDT-Sparse eq. 19 by brute force over all L columns: (cols ascending, values) of one leaf; padding
    columns (fewer than k non-zero sums) are the smallest unused ones with value 0."""
    p = G_dense[leaf_rows].sum(axis=0)
    hess = row_hess[leaf_rows].sum()
    nonzero = [q for q in range(p.shape[0]) if p[q] != 0.0]
    ranked = sorted(nonzero, key=lambda q: (-abs(p[q]), q))[:k]
    pads = [q for q in range(p.shape[0]) if q not in ranked][: k - len(ranked)]
    cols = sorted(ranked + pads)
    vals = [(-lr * p[q] / (hess + lam)) if q in ranked else 0.0 for q in cols]
    return np.array(cols), np.array(vals)


def add_leaves(Z_dense, leaf_of, leaf_cols, leaf_vals):
    out = Z_dense.copy()
    for i, leaf in enumerate(leaf_of):
        if leaf >= 0:
            out[i, leaf_cols[leaf]] += leaf_vals[leaf]
    return out


def sparse_split_gains(binned, missing_bin, G_dense, row_hess, k, lam, min_data, min_hess):
    """GBDT-Sparse eq. 20 by brute force over all L columns: for every feature f, threshold t and
    missing direction, the dense left and right gradient sums and each side's k largest p_q^2 / (H + lam);
    returns {(f, t, missing_left): gain over the node} for the valid thresholds (both sides with
    min_data rows and min_hess Hessian)."""
    def score(p, h):
        return np.sort(p * p)[::-1][:k].sum() / (h + lam) if h + lam > 0 else 0.0
    n, n_features = binned.shape
    parent = score(G_dense.sum(axis=0), row_hess.sum())
    gains = {}
    for f in range(n_features):
        miss = binned[:, f] == missing_bin[f]
        for t in range(missing_bin[f] - 1):
            for missing_left in (False, True):
                left = (binned[:, f] <= t) & ~miss | (miss & missing_left)
                right = ~left
                if left.sum() < min_data or right.sum() < min_data:
                    continue
                hl, hr = row_hess[left].sum(), row_hess[right].sum()
                if hl < min_hess or hr < min_hess:
                    continue
                gains[f, t, missing_left] = score(G_dense[left].sum(axis=0), hl) + score(G_dense[right].sum(axis=0),
                                                                                         hr) - parent
    return gains


def logloss_cells(prob, y):
    """The binary log loss of each cell of probabilities already clipped away from 0 and 1."""
    return -(y * np.log(prob) + (1 - y) * np.log(1 - prob))
