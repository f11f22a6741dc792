"""Sparse-output kernels (kernels/sparse_output.py) against their naive twins."""
import numpy as np
import pytest
import scipy.sparse as sp

from multigrove.boosting.losses import SparseSquaredError, SparseSquaredHinge
from multigrove.boosting.sparse_output import SparseScores, add_leaves, sparse_gradients
from multigrove.kernels.sparse import csr_arrays
from multigrove.kernels.sparse_output import LeafParams, sparse_leaf_values

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


@pytest.mark.parametrize("block_rows", [7, 40, 1000])  # scores in several blocks of rows, one, one larger than n
@pytest.mark.parametrize("loss", [SparseSquaredError(), SparseSquaredHinge()])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_sparse_gradients_equal_dense_and_store_no_zero(loss, seed, block_rows):
    Y, Z = _labels_and_scores(seed)
    G = sparse_gradients(loss, Y, SparseScores.from_csr(Z, block_rows))
    expected = naive.sparse_gradients(loss.code, Y, Z)
    np.testing.assert_allclose(G.toarray(), expected, rtol=1e-6, atol=1e-7)
    assert np.all(G.data != 0)  # exactly zero elsewhere: only non-zero cells are stored
    assert G.has_sorted_indices
    # the cells stored are exactly the non-zero gradients of the dense loss
    assert G.nnz == np.count_nonzero(expected)


@pytest.mark.parametrize("n_blocks", [1, 3])
@pytest.mark.parametrize("k", [1, 3, 30])
def test_sparse_leaf_values_equal_brute_force(k, n_blocks):
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
    sparse_leaf_values(order, start, end, csr_arrays(G), row_hess, LeafParams(k, 2.0, 0.1), L, n_blocks, cols, vals)
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
    blocked = SparseScores.from_csr(Z, block_rows=7)  # the same, block of rows by block (40 rows: 6 blocks)
    blocked.add_leaves(leaf_of, leaf_cols, leaf_vals)
    assert len(blocked.blocks) == 6 and blocked.nnz == out.nnz
    np.testing.assert_array_equal(blocked.tocsr().toarray(), out.toarray())


def _node_problem(seed, n=80, n_features=8, L=25):
    """A binned store with dense, bundled and sparse features (missing values and a default bin that is
    not bin 0 included), sparse gradients and row Hessians."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, n_features))
    X[:, 2:] *= rng.random((n, n_features - 2)) < 0.2  # mostly zero: sparse or bundled
    X[:, 1] = np.where(rng.random(n) < 0.7, 3.0, X[:, 1])  # a default bin inside the value range
    X[rng.random(X.shape) < 0.1] = np.nan
    X[:, 4] = np.where(rng.random(n) < 0.6, np.nan, X[:, 4])  # the missing bin most frequent
    one_hot = rng.integers(0, 4, n)  # three exclusive features (one row in four has none): a bundle
    X[:, 5:] = (one_hot[:, None] == np.arange(3)) * rng.uniform(1, 2, (n, 3))
    G = sp.random(n, L, density=0.2, format="csr", random_state=seed, data_rvs=lambda m: rng.normal(size=m))
    G = sp.csr_matrix((G.data.astype(np.float32), G.indices.astype(np.int32), G.indptr.astype(np.int64)), G.shape)
    row_hess = rng.uniform(0.5, 2.0, n).astype(np.float32)
    return sp.csr_matrix(X), G, row_hess  # NaN stays an explicit (missing) entry


@pytest.mark.parametrize("k", [1, 4, 25])
@pytest.mark.parametrize("seed", [0, 3])  # stores with dense, bundled and sparse features
def test_sparse_split_gains_equal_brute_force(k, seed):
    """Every candidate's eq. 20 gain from the bins equals the dense brute force over all L labels, on
    a node that is a subset of the rows."""
    import multigrove as mg
    from multigrove.boosting.sparse_output import node_rows
    from multigrove.kernels.partition import feature_bin
    from multigrove.kernels.sparse_output import sparse_split_gains
    from multigrove.kernels.split import ScanParams
    X, G, row_hess = _node_problem(seed)
    ds = mg.Dataset(X, np.zeros(X.shape[0]), params={"max_bin": 8}).construct()
    store = ds.store
    n_features = store.n_features
    assert set(store.feature_kind) == {0, 1, 2} and store.default_bin.any()
    rows = np.sort(np.random.default_rng(seed).choice(X.shape[0], 60, replace=False)).astype(np.int32)
    bin_feature = np.repeat(np.arange(n_features, dtype=np.int32), np.diff(store.offsets))
    binned = np.array([[feature_bin(store, r, f) for f in range(n_features)] for r in rows])
    bin_hess, bin_count = np.zeros(store.total_bins), np.zeros(store.total_bins)
    flat = (store.offsets[:-1] + binned).ravel()  # the node's Hessian and count histogram, as the builder's
    np.add.at(bin_hess, flat, np.repeat(row_hess[rows].astype(np.float64), n_features))
    np.add.at(bin_count, flat, 1.0)
    node = node_rows(store, rows, rows, bin_feature, G, bin_hess, bin_count, bin_hess[: store.offsets[1]].sum(),
                     len(rows))
    params = ScanParams(k=0, h_col=0, h_stride=0, h_scale=1.0, count_col=1, lambda_l2=1.5, min_data_in_leaf=3,
                        min_sum_hessian=1e-3, min_gain_to_split=0.0, topk=k, restricted=False)
    gains = np.empty((2, store.total_bins))
    splittable = np.empty(n_features, np.bool_)
    sparse_split_gains(node, csr_arrays(G), store, np.ones(n_features, np.bool_), params, 2, gains, splittable)
    want = naive.sparse_split_gains(binned, store.missing_bin, G.toarray()[rows].astype(np.float64),
                                    row_hess[rows].astype(np.float64), k, 1.5, 3, 1e-3)
    assert want
    for f in range(n_features):
        has_missing = (binned[:, f] == store.missing_bin[f]).any()
        for t in range(store.missing_bin[f] + 1):
            for missing_left in (False, True):
                got = gains[int(missing_left), store.offsets[f] + t]
                key = (f, t, missing_left if has_missing else False)
                if key in want:
                    assert got == pytest.approx(want[key], rel=1e-9, abs=1e-9), (f, t, missing_left)
                else:
                    assert got == -np.inf, (f, t, missing_left)
        assert splittable[f] == any(key[0] == f for key in want)
