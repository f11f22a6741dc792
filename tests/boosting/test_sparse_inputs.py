"""Sparse inputs end to end, exclusive feature bundling, GOSS, bagging and column sampling."""
import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp

import multigrove as mg
from multigrove.boosting import builder as builder_module
from multigrove.boosting.sampling import bagging_rows, feature_mask, goss_rows
from multigrove.boosting.shard import TrainingShard


def _sparse_data(rng, n=3000):
    """Counts (mostly zero), one-hot blocks of two categoricals, a dense column, a little NaN."""
    counts = np.where(rng.random((n, 12)) < 0.15, rng.integers(1, 6, (n, 12)), 0).astype(float)
    cats = [rng.integers(0, k, n) for k in (6, 9)]
    onehot = np.column_stack([(c == j).astype(float) for c, k in zip(cats, (6, 9)) for j in range(k)])
    dense = rng.normal(size=(n, 1))
    X = np.column_stack([counts, onehot, dense])
    X[rng.random(X.shape) < 0.002] = np.nan
    y = counts[:, :3].sum(1) + 2 * (cats[0] == 2) - (cats[1] > 5) + dense[:, 0] + rng.normal(scale=0.3, size=n)
    return X, y, cats


def _fit(X, y, **params):
    all_params = dict(objective="regression", num_leaves=15, min_data_in_leaf=10, seed=3, **params)
    return mg.train(all_params, mg.Dataset(X, y), 15)


@pytest.mark.parametrize("policy", ["leafwise", "depthwise"])
def test_sparse_input_gives_the_dense_trees_with_and_without_bundling(rng, policy):
    X, y, _ = _sparse_data(rng)
    Xt = _sparse_data(rng, 400)[0]
    reference = _fit(X, y, growth_policy=policy, is_enable_sparse=False)
    ds = mg.Dataset(X, y)
    ds.construct(mg.Params(growth_policy=policy))
    assert ds.store.bundle.shape[1] >= 1 and ds.store.sparse_bins.size > 0   # bundles and CSR rows both used
    for data in (X, sp.csr_matrix(X), sp.csc_matrix(X)):
        for bundle in (True, False):
            bst = _fit(data, y, growth_policy=policy, enable_bundle=bundle)
            for a, b in zip(bst.trees, reference.trees):
                np.testing.assert_array_equal(a.split_feature, b.split_feature)
                np.testing.assert_array_equal(a.threshold_bin, b.threshold_bin)
            np.testing.assert_allclose(bst.predict(Xt), reference.predict(Xt), rtol=0, atol=1e-6)


def test_small_binning_sample_conflicts_go_to_the_sparse_store(rng):
    """Rows outside the binning sample may put two members of a bundle in one row: no value is lost."""
    X, y, _ = _sparse_data(rng)
    X[:, 12:18][rng.random((len(X), 6)) < 0.01] = 1.0  # rare double levels
    reference = _fit(X, y, is_enable_sparse=False, bin_construct_sample_cnt=300)
    bst = _fit(sp.csr_matrix(X), y, bin_construct_sample_cnt=300)
    np.testing.assert_allclose(bst.predict(X), reference.predict(X), rtol=0, atol=1e-6)


def test_a_sparse_model_predicts_dense_input_identically_and_vice_versa(rng):
    X, y, _ = _sparse_data(rng)
    for fitted in (_fit(sp.csr_matrix(X), y), _fit(X, y)):
        np.testing.assert_array_equal(fitted.predict(X), fitted.predict(sp.csr_matrix(X)))
        np.testing.assert_array_equal(fitted.predict(X, pred_leaf=True),
                                      fitted.predict(sp.csc_matrix(X), pred_leaf=True))


@pytest.mark.parametrize("policy", ["leafwise", "symmetric"])
def test_csr_rows_over_several_predict_tasks_equal_the_dense_rows(rng, policy):
    """CSR rows are predicted in tasks of at most SPARSE_TASK_ROWS, each row scattered into a dense row and
    cleared after: rows past a task's end, and rows after one with many entries, read no value of another row."""
    from multigrove.kernels.predict import SPARSE_TASK_ROWS
    X, y, cats = _sparse_data(rng, n=2 * SPARSE_TASK_ROWS + 123)
    params = dict(objective="multiclass", num_class=6, num_leaves=8, min_data_in_leaf=10, growth_policy=policy)
    model = mg.train(params, mg.Dataset(X, cats[0]), 6)
    M = sp.csr_matrix(X)
    np.testing.assert_array_equal(model.predict(M, raw_score=True), model.predict(X, raw_score=True))
    np.testing.assert_array_equal(model.predict(M, pred_leaf=True), model.predict(X, pred_leaf=True))
    for dense_part, sparse_part in zip(model.predict(X, top_k=3), model.predict(M, top_k=3)):
        np.testing.assert_array_equal(sparse_part, dense_part)


def test_implicit_zero_is_zero_and_explicit_nan_is_missing(rng):
    n = 400
    x = np.where(rng.random(n) < 0.5, 0.0, rng.uniform(1, 2, n))
    x[:40] = np.nan
    y = np.where(np.isnan(x), 5.0, np.where(x == 0, -5.0, 1.0))
    M = sp.csr_matrix(np.nan_to_num(x, nan=-1.0).reshape(-1, 1))
    M.data[M.data == -1.0] = np.nan        # stored NaN entries; zeros implicit
    params = {"num_leaves": 4, "min_data_in_leaf": 5, "lambda_l2": 0.0, "learning_rate": 1.0}
    bst = mg.train(params, mg.Dataset(M, y), 1)
    np.testing.assert_allclose(bst.predict(M), y, atol=1e-6)
    np.testing.assert_allclose(bst.predict(np.array([[0.0], [np.nan], [1.5]])), [-5, 5, 1], atol=1e-6)


def test_validation_sets_and_early_stopping_on_sparse_data(rng):
    X, y, _ = _sparse_data(rng)
    ds = mg.Dataset(sp.csr_matrix(X[:2500]), y[:2500])
    va = mg.Dataset(sp.csr_matrix(X[2500:]), y[2500:], reference=ds)
    rec = {}
    bst = mg.train({"learning_rate": 0.3}, ds, 300, valid_sets=[va],
                   callbacks=[mg.early_stopping(10, verbose=False), mg.record_evaluation(rec)])
    assert 0 < bst.best_iteration < 300
    assert rec["valid_0"]["l2"][bst.best_iteration - 1] == pytest.approx(
        np.mean((bst.predict(X[2500:]) - y[2500:]) ** 2), rel=1e-9)


def test_sparse_pandas_columns_are_read_without_densifying(rng):
    pd = pytest.importorskip("pandas")
    X, y, _ = _sparse_data(rng, 600)
    X = np.nan_to_num(X)
    df = pd.DataFrame({f"c{j}": pd.arrays.SparseArray(X[:, j], fill_value=0.0) for j in range(X.shape[1])})
    ds = mg.Dataset(df, y)
    assert sp.issparse(ds.data) and ds.feature_names[0] == "c0"
    np.testing.assert_array_equal(mg.train({}, ds, 5).predict(X), mg.train({}, mg.Dataset(X, y), 5).predict(X))


@pytest.mark.parametrize("objective", ["multiclass", "multilabel"])
def test_sparse_inputs_with_many_outputs_sketches_and_sparse_leaves(rng, objective):
    X, _, cats = _sparse_data(rng)
    y = cats[1] if objective == "multiclass" else np.eye(9)[cats[1]]
    for extra in ({}, {"sketch": "random_projection", "sketch_k": 2}, {"leaf_sparsity": 3}):
        dense = mg.train(dict(objective=objective, is_enable_sparse=False, **extra), mg.Dataset(X, y), 8)
        sparse = mg.train(dict(objective=objective, **extra), mg.Dataset(sp.csr_matrix(X), y), 8)
        np.testing.assert_allclose(sparse.predict(X), dense.predict(X), rtol=0, atol=1e-6)


# ------------------------------------------------------------------ GOSS, bagging, column sampling
def test_goss_keeps_the_top_rows_and_amplifies_a_uniform_draw_of_the_rest(rng):
    magnitude = rng.exponential(size=1000)
    s = goss_rows(magnitude, 0.2, 0.1, np.random.default_rng(0))
    top = np.argsort(-magnitude)[:200]
    assert np.isin(top, s.rows).all() and s.rows.size == 300 and np.all(np.diff(s.rows) > 0)
    assert not np.isin(top, s.amplified).any() and s.amplified.size == 100
    assert s.factor == pytest.approx(0.8 / 0.1)


def test_goss_amplified_sums_are_unbiased(rng):
    g = rng.normal(size=2000) * rng.exponential(size=2000)
    full = g.sum()
    estimates = []
    for seed in range(400):
        s = goss_rows(np.abs(g), 0.2, 0.1, np.random.default_rng(seed))
        w = np.ones(g.size)
        w[s.amplified] = s.factor
        estimates.append((g[s.rows] * w[s.rows]).sum())
    se = np.std(estimates) / np.sqrt(len(estimates))
    assert abs(np.mean(estimates) - full) < 4 * se


def test_goss_trains_on_the_sample_and_updates_every_score(rng):
    X, y, _ = _sparse_data(rng)
    lr = 0.25
    bst = mg.train({"data_sample_strategy": "goss", "learning_rate": lr, "seed": 1}, mg.Dataset(X, y), 12)
    counts = [int(t.internal_count[0]) for t in bst.trees]
    assert counts[:int(1 / lr)] == [len(X)] * int(1 / lr)        # warm-up rounds use every row
    assert set(counts[int(1 / lr):]) == {int(round(0.2 * len(X))) + int(round(0.1 * len(X)))}
    # rows left out of a tree still had their scores updated: training predictions equal the model's
    rec = {}
    ds = mg.Dataset(X, y)
    bst = mg.train({"data_sample_strategy": "goss", "learning_rate": lr, "seed": 1}, ds, 12, valid_sets=[ds],
                   callbacks=[mg.record_evaluation(rec)])
    assert rec["training"]["l2"][-1] == pytest.approx(np.mean((bst.predict(X) - y) ** 2), rel=1e-9)


@pytest.mark.parametrize("params", [{}, {"top_rate": 0.3, "other_rate": 0.15},  # factor 8, and 4.67 (inexact)
                                    {"growth_policy": "depthwise", "num_threads": 1}, {"growth_policy": "symmetric"},
                                    {"histogram_pool_size": 0.01}])  # leaves' histograms built again
def test_goss_histograms_packed_in_two_columns_grow_the_same_model(rng, params, monkeypatch):
    """Squared loss under GOSS: the sample's statistics go to the histogram kernels as two columns (gradient,
    kept + 2**26 drawn rows) and come back as three; the model file is the same byte for byte."""
    X, y, _ = _sparse_data(rng)
    X = np.nan_to_num(X[:, list(range(12, 18)) + [-1]])  # dense and bundled columns (a compact store's kinds)
    params = {"data_sample_strategy": "goss", "learning_rate": 0.5, "num_leaves": 15, **params}
    built = []
    real_unpack = builder_module.unpack_counts
    monkeypatch.setattr(builder_module, "unpack_counts", lambda *a: (built.append(a[0].shape), real_unpack(*a)))
    packed = mg.train(params, mg.Dataset(X, y), 8).model_to_string()
    assert len(built) > 8 * 3  # the sampled trees' histograms went through the two-column path
    monkeypatch.setattr(TrainingShard, "_packed_counts", lambda self: None)
    three_columns = mg.train(params, mg.Dataset(X, y), 8).model_to_string()
    assert packed == three_columns


@pytest.mark.parametrize("params", [{"data_sample_strategy": "goss", "learning_rate": 0.5},
                                    {"bagging_fraction": 0.5, "bagging_freq": 2}, {"feature_fraction": 0.5}])
def test_sampling_is_reproducible_under_a_seed(rng, params):
    X, y, _ = _sparse_data(rng)
    runs = [mg.train(dict(params, seed=s), mg.Dataset(X, y), 8).predict(X) for s in (5, 5, 6)]
    np.testing.assert_array_equal(runs[0], runs[1])
    assert not np.array_equal(runs[0], runs[2])


@pytest.mark.parametrize("params", [{"data_sample_strategy": "goss", "learning_rate": 0.5},
                                    {"bagging_fraction": 0.3, "bagging_freq": 1},
                                    {"bagging_fraction": 0.3, "bagging_freq": 1, "objective": "multiclass"}])
def test_a_sample_copied_into_a_compact_store_grows_the_same_trees(rng, params, monkeypatch):
    """A sample of at most half the rows is copied into a store of its own; the trees do not change."""
    X, y, cats = _sparse_data(rng)
    X = np.nan_to_num(X[:, list(range(12, 18)) + [-1]])   # one categorical one-hot, a dense column: no CSR part
    y = cats[0] if params.get("objective") == "multiclass" else y
    ds = mg.Dataset(X, y)
    compact = mg.train(dict(params, seed=2), ds, 6)
    assert ds.store.sparse_indptr.size == 0 and ds.store.bundle.shape[1] >= 1   # dense and bundled columns
    monkeypatch.setattr(builder_module, "COMPACT_MAX_FRACTION", 0.0)
    reference = mg.train(dict(params, seed=2), mg.Dataset(X, y), 6)
    for a, b in zip(compact.trees, reference.trees):
        np.testing.assert_array_equal(a.split_feature, b.split_feature)
        np.testing.assert_array_equal(a.internal_count, b.internal_count)
        np.testing.assert_allclose(a.leaf_value, b.leaf_value, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(compact.predict(X), reference.predict(X), rtol=1e-6, atol=1e-9)


def test_bagging_draws_a_new_sample_every_bagging_freq_rounds(rng):
    X, y, _ = _sparse_data(rng)
    bst = mg.train({"bagging_fraction": 0.5, "bagging_freq": 3}, mg.Dataset(X, y), 9)
    assert {int(t.internal_count[0]) for t in bst.trees} == {1500}
    s = [bagging_rows(100, 0.3, np.random.default_rng((0, 1, p))).rows for p in (0, 0, 1)]
    np.testing.assert_array_equal(s[0], s[1])
    assert not np.array_equal(s[0], s[2]) and s[0].size == 30


@pytest.mark.parametrize("fraction", [0.3, 0.7])  # the kept rows drawn, or the left-out ones
def test_bagging_draws_every_row_alike_and_splits_the_rows(fraction):
    n, n_draws = 10, 2000
    counts = np.zeros(n)
    pair_counts = np.zeros((n, n))
    for seed in range(n_draws):
        sample = bagging_rows(n, fraction, np.random.default_rng(seed))
        assert np.all(np.diff(sample.rows) > 0) and np.all(np.diff(sample.others) > 0)
        np.testing.assert_array_equal(np.sort(np.concatenate([sample.rows, sample.others])), np.arange(n))
        counts[sample.rows] += 1
        pair_counts[np.ix_(sample.rows, sample.rows)] += 1
    size = round(fraction * n)
    expected = n_draws * size / n
    assert np.all(np.abs(counts - expected) < 5 * np.sqrt(expected))
    # every pair of rows is drawn together as often: a uniform draw of size rows of n
    expected_pair = n_draws * size * (size - 1) / (n * (n - 1))
    off_diagonal = pair_counts[~np.eye(n, dtype=bool)]
    assert np.all(np.abs(off_diagonal - expected_pair) < 5 * np.sqrt(expected_pair))


def test_feature_fraction_restricts_every_tree_to_its_features(rng):
    mask = feature_mask(40, 0.25, np.random.default_rng(0))
    assert mask.sum() == 10
    X, y, _ = _sparse_data(rng)
    bst = mg.train({"feature_fraction": 0.2, "num_leaves": 31}, mg.Dataset(X, y), 10)
    for t in bst.trees:
        assert np.unique(t.split_feature).size <= round(0.2 * X.shape[1])


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize("params,match", [
    ({"top_rate": 0.7, "other_rate": 0.4}, r"top_rate \+ other_rate must be <= 1, got 0.7 \+ 0.4"),
    ({"data_sample_strategy": "goss", "bagging_fraction": 0.5}, "bagging_fraction cannot be used with"),
    ({"bagging_fraction": 0}, "bagging_fraction must be > 0.0, got 0.0"),
    ({"feature_fraction": 1.5}, "feature_fraction must be <= 1.0, got 1.5"),
    ({"other_rate": 0}, "other_rate must be > 0.0, got 0.0"),
    ({"max_conflict_rate": 1.0}, "max_conflict_rate must be < 1, got 1.0"),
    ({"data_sample_strategy": "random"}, "data_sample_strategy must be one of"),
    ({"enable_bundle": "yes"}, "enable_bundle must be a bool, got 'yes'"),
])
def test_bad_sampling_and_bundling_parameters(rng, params, match):
    X, y, _ = _sparse_data(rng, 100)
    with pytest.raises((ValueError, TypeError), match=match):
        mg.train(params, mg.Dataset(X, y), 1)


def test_bagging_fraction_without_frequency_is_reported(rng):
    X, y, _ = _sparse_data(rng, 200)
    with pytest.warns(mg.MultigroveWarning, match="bagging_fraction=0.5 has no effect with bagging_freq=0"):
        mg.train({"bagging_fraction": 0.5}, mg.Dataset(X, y), 1)


def _csr(indptr, indices, data, shape):
    M = sp.csr_matrix(shape)
    M.indptr, M.indices, M.data = (np.asarray(indptr, np.int32), np.asarray(indices, np.int32),
                                   np.asarray(data, float))
    return M


@pytest.mark.parametrize("make,match", [
    (lambda: _csr([0, 1, 3], [0, -1, 2], [1, 2, 3], (2, 3)), "column index -1 in row 1, outside \\[0, 3\\)"),
    (lambda: _csr([0, 1, 3], [0, 2, 5], [1, 2, 3], (2, 3)), "column index 5 in row 1, outside \\[0, 3\\)"),
    (lambda: _csr([0, 2, 3], [1, 1, 1], [1, 2, 3], (2, 3)), "duplicate column indices in row 0"),
    (lambda: _csr([0, 2, 1], [1, 2, 1], [1, 2, 3], (2, 3)), "malformed sparse matrix"),
    (lambda: sp.csr_matrix(np.array([[0, np.inf], [1, 0]])), "must not contain \\+-inf .* row 0, column 1"),
    (lambda: np.array([[0, -np.inf], [1, 0]]), "must not contain \\+-inf .* row 0, column 1"),
])
def test_bad_sparse_matrices_are_named(make, match):
    with pytest.raises(ValueError, match=match):
        mg.Dataset(make(), np.zeros(2))


def test_unsorted_indices_are_sorted_not_refused(rng):
    """scikit-learn's SparseRandomProjection gives rows with unsorted indices: a sorted copy is used."""
    X, y, _ = _sparse_data(rng, 200)
    M = sp.csr_matrix(X)
    shuffled = M.copy()
    for i in range(shuffled.shape[0]):  # reverse every row's entries
        lo, hi = shuffled.indptr[i], shuffled.indptr[i + 1]
        shuffled.indices[lo:hi] = shuffled.indices[lo:hi][::-1]
        shuffled.data[lo:hi] = shuffled.data[lo:hi][::-1]
    assert not shuffled.has_sorted_indices or shuffled.nnz == 0
    a = mg.train({"num_leaves": 8}, mg.Dataset(shuffled, y), 5)
    b = mg.train({"num_leaves": 8}, mg.Dataset(M, y), 5)
    assert a.model_to_string() == b.model_to_string()
    np.testing.assert_array_equal(a.predict(shuffled), b.predict(M))


def test_sparse_matrix_with_the_wrong_shape_is_named(rng):
    X, y, _ = _sparse_data(rng, 100)
    bst = mg.train({}, mg.Dataset(sp.csr_matrix(X), y), 2)
    with pytest.raises(ValueError, match=f"X has {X.shape[1] - 1} features, but the model is expecting"):
        bst.predict(sp.csr_matrix(X[:, 1:]))
    with pytest.raises(ValueError, match="label has 99 rows but the data has 100 rows"):
        mg.Dataset(sp.csr_matrix(X), y[:99])


# ------------------------------------------------------------------ memory
def test_a_wide_sparse_matrix_trains_without_an_n_by_features_allocation():
    """100,000 x 60,000 CSR at density 1e-3: an n x n_features array of one byte would be 6 GB; the
    traced peak of binning and training stays far below (the CSR input itself is 72 MB)."""
    rng = np.random.default_rng(0)
    n, F, nnz = 100_000, 60_000, 6_000_000
    X = sp.csr_matrix((rng.integers(1, 4, nnz).astype(np.float32), (rng.integers(0, n, nnz), rng.integers(0, F, nnz))),
                      shape=(n, F))
    X.sum_duplicates()
    y = np.asarray(X[:, :20].sum(axis=1)).ravel()
    tracemalloc.start()
    try:
        ds = mg.Dataset(X, y)
        bst = mg.train({"num_leaves": 8, "max_bin": 15}, ds, 2)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert bst.num_trees() == 2 and ds.store.sparse_bins.size == X.nnz
    assert peak < 1.5e9, f"traced peak {peak / 1e9:.2f} GB"
