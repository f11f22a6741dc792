"""Sparse-output kernels (kernels/sparse_output.py) against their naive twins."""
import numpy as np
import pytest
import scipy.sparse as sp

from multigrove.boosting.sparse_output import add_leaves, sparse_gradients
from multigrove.boosting.losses import SparseSquaredError, SparseSquaredHinge
from multigrove.kernels.sparse_output import sparse_leaf_values

from . import naive


def _labels_and_scores(seed, n=40, L=30):
    rng = np.random.default_rng(seed)
    Y = sp.random(n, L, density=0.1, format="csr", random_state=seed, data_rvs=lambda m: np.ones(m))
    Y = sp.csr_matrix((Y.data.astype(np.float32), Y.indices.astype(np.int32), Y.indptr.astype(np.int64)), Y.shape)
    Z = sp.random(n, L, density=0.15, format="csr", random_state=seed + 1,
                  data_rvs=lambda m: rng.choice([-0.5, 0.0, 0.3, 1.0, 1.7], m))
    Z.sort_indices()
    Z = sp.csr_matrix((Z.data.astype(np.float64), Z.indices.astype(np.int32), Z.indptr.astype(np.int64)), Z.shape)
    return Y, Z


@pytest.mark.parametrize("loss", [SparseSquaredError(), SparseSquaredHinge()])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_sparse_gradients_equal_dense_and_store_no_zero(loss, seed):
    Y, Z = _labels_and_scores(seed)
    G = sparse_gradients(loss, Y, Z)
    expected = naive.sparse_gradients(loss.code, Y, Z)
    np.testing.assert_allclose(G.toarray(), expected, rtol=1e-6, atol=1e-7)
    assert np.all(G.data != 0)  # exactly zero elsewhere: only non-zero cells are stored
    assert G.has_sorted_indices
    # the cells stored are exactly the non-zero gradients of the dense loss
    assert G.nnz == np.count_nonzero(expected)


@pytest.mark.parametrize("k", [1, 3, 30])
def test_sparse_leaf_values_equal_brute_force(k):
    rng = np.random.default_rng(k)
    n, L = 60, 30
    G = sp.random(n, L, density=0.2, format="csr", random_state=k, data_rvs=lambda m: rng.normal(size=m))
    G = sp.csr_matrix((G.data.astype(np.float32), G.indices.astype(np.int32), G.indptr.astype(np.int64)), G.shape)
    G.sort_indices()
    Gd = G.toarray().astype(np.float64)
    row_hess = rng.uniform(0.5, 2.0, n).astype(np.float32)
    order = rng.permutation(n).astype(np.int32)
    start, end = np.array([0, 10, 10, 35]), np.array([10, 10, 35, 60])  # one empty leaf
    cols = np.empty((4, k), np.int32)
    vals = np.empty((4, k))
    sparse_leaf_values(order, start, end, G.indptr, G.indices, G.data, row_hess, k, 2.0, 0.1, cols, vals)
    for leaf in range(4):
        want_cols, want_vals = naive.sparse_leaf_values(order[start[leaf]:end[leaf]], Gd, row_hess.astype(np.float64),
                                                        k, 2.0, 0.1)
        np.testing.assert_array_equal(cols[leaf], want_cols)
        np.testing.assert_allclose(vals[leaf], want_vals, rtol=1e-6, atol=1e-9)
        assert np.all(np.diff(cols[leaf]) > 0)


def test_add_leaves_equals_dense_sum():
    _, Z = _labels_and_scores(5)
    n, L = Z.shape
    rng = np.random.default_rng(5)
    leaf_cols = np.sort(np.stack([rng.choice(L, 4, replace=False) for _ in range(3)]), axis=1).astype(np.int32)
    leaf_vals = rng.normal(size=(3, 4))
    leaf_vals[1, 2] = 0.0  # a padding value: not stored
    leaf_of = rng.integers(-1, 3, n).astype(np.int32)  # -1: a row outside the tree
    out = add_leaves(Z, leaf_of, leaf_cols, leaf_vals)
    np.testing.assert_allclose(out.toarray(), naive.add_leaves(Z.toarray(), leaf_of, leaf_cols, leaf_vals))
    assert out.has_sorted_indices
    untouched = np.flatnonzero(leaf_of < 0)
    assert all(out[i].nnz == Z[i].nnz for i in untouched)
