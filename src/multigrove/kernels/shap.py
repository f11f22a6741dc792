"""Exact TreeSHAP (path-dependent) for trees with vector or k-sparse leaves.

The recursion follows Lundberg et al. (2018, Algorithm 2): walking from the root, a path of the
features met so far is kept with, for each, the fraction of the background ("zero") and of the
explained row ("one") that flows through, and the permutation weights of every subset size.  At a
leaf, each feature on the path receives ``w * (one - zero) * leaf value``.  The path weights do not
depend on the leaf value, so one walk serves every output of a vector leaf: the leaf's whole value
vector (its CSR entries) is scaled by the same weight.

Forests arrive as the ``Forest`` of ``kernels/predict.py`` plus ``child_fraction`` (per node, the
share of the node's training rows that went left; the right child has the rest).
"""
import numpy as np
from numba import njit, prange

from .predict import goes_left


@njit(cache=True, nogil=True, error_model="numpy")
def _extend(path_feature, path_zero, path_one, path_weight, start, length, zero, one, feature, reciprocal):
    """Append (feature, zero, one) to the path at [start, start + length); the new length is length + 1.
    ``reciprocal[k]`` is 1 / k: the walk multiplies where the algorithm divides (a division costs several
    multiplications' time, and these loops run O(depth^2) times a leaf)."""
    at = start + length
    path_feature[at] = feature
    path_zero[at] = zero
    path_one[at] = one
    path_weight[at] = 1.0 if length == 0 else 0.0
    per_length = reciprocal[length + 1]
    for i in range(length - 1, -1, -1):
        path_weight[start + i + 1] += one * path_weight[start + i] * (i + 1) * per_length
        path_weight[start + i] = zero * path_weight[start + i] * (length - i) * per_length


@njit(cache=True, nogil=True, error_model="numpy")
def _unwind(path_feature, path_zero, path_one, path_weight, start, length, index, reciprocal):
    """Remove element ``index`` from the path of ``length`` elements (undo its extension)."""
    one = path_one[start + index]
    zero = path_zero[start + index]
    carry = path_weight[start + length - 1]
    if one != 0.0:
        length_per_one = length / one
        zero_per_length = zero * reciprocal[length]
        for j in range(length - 2, -1, -1):
            kept = path_weight[start + j]
            path_weight[start + j] = carry * length_per_one * reciprocal[j + 1]
            carry = kept - path_weight[start + j] * zero_per_length * (length - 1 - j)
    else:
        length_per_zero = length / zero
        for j in range(length - 2, -1, -1):
            path_weight[start + j] = path_weight[start + j] * length_per_zero * reciprocal[length - 1 - j]
    for j in range(index, length - 1):
        path_feature[start + j] = path_feature[start + j + 1]
        path_zero[start + j] = path_zero[start + j + 1]
        path_one[start + j] = path_one[start + j + 1]


@njit(cache=True, nogil=True, error_model="numpy")
def _unwound_sums(path_zero, path_one, path_weight, start, length, reciprocal, scratch, follows, sums):
    """OUT sums[i], i in [1, length): the sum of the path's weights once element i is unwound (the path
    is not changed).  OUT scratch (3, >= length) float64, follows (>= length,) bool.

    Unwinding one element is a chain of dependent multiply-adds, one step per weight; the elements'
    chains are independent, so all of them take their step j together (the inner loop runs across the
    elements, and the CPU overlaps their chains where one element's would wait on each step).  An
    element the row did not follow (one == 0) has no chain: each weight adds alone; both forms are
    computed for every element and its own is selected (the other may be inf or NaN, never added)."""
    carry, ratio, shrink = scratch[0], scratch[1], scratch[2]
    last = path_weight[start + length - 1]
    for i in range(1, length):
        one = path_one[start + i]
        zero = path_zero[start + i]
        follows[i] = one != 0.0
        ratio[i] = length / one if one != 0.0 else length / zero
        shrink[i] = zero * reciprocal[length] if one != 0.0 else 0.0
        carry[i] = last
        sums[i] = 0.0
    for j in range(length - 2, -1, -1):
        weight_j = path_weight[start + j]
        per_step = reciprocal[j + 1]
        per_rest = reciprocal[length - 1 - j]
        rest = length - 1 - j
        for i in range(1, length):
            chained = carry[i] * ratio[i] * per_step
            alone = weight_j * ratio[i] * per_rest
            sums[i] += chained if follows[i] else alone
            carry[i] = weight_j - chained * shrink[i] * rest


@njit(cache=True, nogil=True, error_model="numpy")
def _explain_tree(x, t, forest, child_fraction, path_feature, path_zero, path_one, path_weight, frames,
                  frame_fractions, reciprocal, scratch, follows, sums, phi):
    """Add tree t's SHAP values for row x to phi (F + 1, d).  The recursion of the algorithm runs on an
    explicit stack (Numba's cache cannot hold a recursive function): a frame is (child, its parent's path
    start and length, feature) in ``frames`` and (zero, one) fractions in ``frame_fractions``; frames are
    popped last in, first out, so a subtree is finished before its sibling reuses the same path segment."""
    base, leaf_base = forest.tree_node_offset[t], forest.tree_leaf_offset[t]
    frames[0, 0], frames[0, 1], frames[0, 2], frames[0, 3] = 0, 0, 0, -1
    frame_fractions[0, 0], frame_fractions[0, 1] = 1.0, 1.0
    top = 1
    while top > 0:
        top -= 1
        child, parent_start, parent_length, feature = frames[top, 0], frames[top, 1], frames[top, 2], frames[top, 3]
        zero, one = frame_fractions[top, 0], frame_fractions[top, 1]
        start = parent_start + parent_length
        for i in range(parent_length):
            path_feature[start + i] = path_feature[parent_start + i]
            path_zero[start + i] = path_zero[parent_start + i]
            path_one[start + i] = path_one[parent_start + i]
            path_weight[start + i] = path_weight[parent_start + i]
        _extend(path_feature, path_zero, path_one, path_weight, start, parent_length, zero, one, feature, reciprocal)
        length = parent_length + 1
        if child < 0:
            row = leaf_base + ~child
            _unwound_sums(path_zero, path_one, path_weight, start, length, reciprocal, scratch, follows, sums)
            for i in range(1, length):
                scale = sums[i] * (path_one[start + i] - path_zero[start + i])
                f = path_feature[start + i]
                for p in range(forest.leaf_ptr[row], forest.leaf_ptr[row + 1]):
                    phi[f, forest.leaf_cols[p]] += scale * forest.leaf_vals[p]
            continue
        g = base + child
        split = forest.node_feature[g]
        value = x[split]
        go_left = goes_left(value, g, forest)
        left, right = forest.node_left[g], forest.node_right[g]
        hot, cold = (left, right) if go_left else (right, left)
        hot_fraction = child_fraction[g] if go_left else 1.0 - child_fraction[g]
        incoming_zero = 1.0
        incoming_one = 1.0
        for k in range(1, length):  # a feature met again: its earlier entry is replaced
            if path_feature[start + k] == split:
                incoming_zero = path_zero[start + k]
                incoming_one = path_one[start + k]
                _unwind(path_feature, path_zero, path_one, path_weight, start, length, k, reciprocal)
                length -= 1
                break
        for target, zero_share, one_share in ((cold, incoming_zero * (1.0 - hot_fraction), 0.0),
                                              (hot, incoming_zero * hot_fraction, incoming_one)):
            frames[top, 0], frames[top, 1], frames[top, 2], frames[top, 3] = target, start, length, split
            frame_fractions[top, 0], frame_fractions[top, 1] = zero_share, one_share
            top += 1


@njit(parallel=True, cache=True, nogil=True, error_model="numpy")
def tree_shap(X, forest, child_fraction, max_depth, out):
    """OUT out (n, F + 1, d) float64: adds each tree's SHAP value of every feature for every output
    (column F, the expected value, is left to the caller).  X (n, F) dense float64; forest a Forest
    with child_fraction (its nodes,); max_depth is the deepest leaf's depth over the trees (it sizes
    the path buffers)."""
    n_trees = forest.tree_node_offset.shape[0] - 1
    size = (max_depth + 2) * (max_depth + 3) // 2
    for i in prange(X.shape[0]):
        path_feature = np.empty(size, np.int64)
        path_zero = np.empty(size, np.float64)
        path_one = np.empty(size, np.float64)
        path_weight = np.empty(size, np.float64)
        frames = np.empty((2 * max_depth + 2, 4), np.int64)
        frame_fractions = np.empty((2 * max_depth + 2, 2), np.float64)
        reciprocal = np.empty(max_depth + 3, np.float64)  # 1 / k for the path lengths k
        scratch = np.empty((3, max_depth + 2), np.float64)  # the leaves' unwound sums (_unwound_sums)
        follows = np.empty(max_depth + 2, np.bool_)
        sums = np.empty(max_depth + 2, np.float64)
        reciprocal[0] = 0.0
        for k in range(1, max_depth + 3):
            reciprocal[k] = 1.0 / k
        phi = out[i]
        for t in range(n_trees):
            if forest.tree_node_offset[t + 1] == forest.tree_node_offset[t]:
                continue  # a single leaf explains nothing beyond the expected value
            _explain_tree(X[i], t, forest, child_fraction, path_feature, path_zero, path_one, path_weight, frames,
                          frame_fractions, reciprocal, scratch, follows, sums, phi)
