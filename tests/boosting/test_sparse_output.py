"""Sparse-output boosting (GBDT-Sparse): CSR labels end to end, k-sparse leaves, sparse scores."""
import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp

import multigrove as mg
from multigrove.boosting.losses import SparseSquaredHinge
from multigrove.xmc.metrics import (
    inverse_propensity,
    inverse_propensity_from_counts,
    ndcg_at_k,
    precision_at_k,
    psprecision_at_k,
    psprecision_at_k_parts,
)


def _problem(n=600, n_features=8, n_labels=40, seed=0):
    """0/1 labels that depend on X: each row's 3 labels of largest x W."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, n_features))
    logits = X @ rng.normal(size=(n_features, n_labels))
    Y = (logits >= np.sort(logits, axis=1)[:, [-3]]).astype(np.float32)
    return X, sp.csr_matrix(Y)


PARAMS = {"objective": "sparse_hinge", "num_leaves": 8, "min_data_in_leaf": 5, "verbosity": -1, "num_threads": 2}


def test_training_lowers_the_hinge_and_ranks_labels():
    X, Y = _problem()
    booster = mg.train(PARAMS, mg.Dataset(X[:500], Y[:500]), 30)
    Z = booster.predict(X[:500])
    assert sp.issparse(Z) and Z.shape == Y[:500].shape
    loss = SparseSquaredHinge()
    before = loss.value(sp.csr_matrix(Y[:500].shape), Y[:500])
    assert loss.value(Z, Y[:500]) < 0.6 * before
    p1 = precision_at_k(Y[500:], booster.predict(X[500:], top_k=3), 3)[0]
    assert p1 > 0.5  # chance: 3 / 40


def test_scores_stay_within_the_paper_bound():
    """After T trees a row holds at most ||y_i||_0 + T k scores (here: at most T k, the start score is 0)."""
    X, Y = _problem()
    k, T = 4, 6
    booster = mg.train({**PARAMS, "leaf_sparsity": k}, mg.Dataset(X, Y), T)
    Z = booster.predict(X)
    assert np.diff(Z.indptr).max() <= T * k
    assert all(t.leaf_cols.shape[1] == k for t in booster.trees)


def test_sparse_path_with_k_equal_to_L_equals_the_dense_multi_output_tree():
    """sparse_squared with leaf_sparsity = L grows the trees of squared error with dense leaves (same
    projection sketch, start score 0, no target scaling)."""
    X, Y = _problem(n=400, n_labels=12)
    common = {"num_leaves": 8, "min_data_in_leaf": 5, "sketch": "random_projection", "sketch_k": 3,
              "verbosity": -1, "num_threads": 1, "deterministic": True}
    sparse = mg.train({**common, "objective": "sparse_squared", "leaf_sparsity": 12}, mg.Dataset(X, Y), 8)
    dense = mg.train({**common, "objective": "regression", "boost_from_average": False, "target_scaling": "none"},
                     mg.Dataset(X, Y.toarray()), 8)
    for a, b in zip(sparse.trees, dense.trees):
        np.testing.assert_array_equal(a.split_feature, b.split_feature)
        np.testing.assert_array_equal(a.threshold_bin, b.threshold_bin)
    np.testing.assert_allclose(sparse.predict(X).toarray(), dense.predict(X), atol=1e-6)


def _missing_values(X, seed=0, fraction=0.1):
    X = X.copy()
    X[np.random.default_rng(seed).random(X.shape) < fraction] = np.nan
    return X


@pytest.mark.parametrize("policy", ["leafwise", "depthwise", "symmetric"])
def test_exact_eq20_splits_equal_the_dense_top_k_tree(policy):
    """sketch="none" scores splits by GBDT-Sparse eq. 20 from the sparse gradients: the same trees, gains
    and predictions as squared error with dense statistics and top-k leaves (GBDT-MO Alg. 3, whose
    child score is eq. 20's when the outputs share one Hessian), missing values included."""
    X, Y = _problem(n=400, n_labels=30)
    X = _missing_values(X)
    common = {"num_leaves": 8, "min_data_in_leaf": 5, "sketch": "none", "leaf_sparsity": 4, "growth_policy": policy,
              "max_depth": 3 if policy == "symmetric" else -1, "verbosity": -1, "num_threads": 1,
              "deterministic": True}
    sparse = mg.train({**common, "objective": "sparse_squared"}, mg.Dataset(X, Y), 8)
    dense = mg.train({**common, "objective": "regression", "boost_from_average": False, "target_scaling": "none"},
                     mg.Dataset(X, Y.toarray()), 8)
    for a, b in zip(sparse.trees, dense.trees):
        np.testing.assert_array_equal(a.split_feature, b.split_feature)
        np.testing.assert_array_equal(a.threshold_bin, b.threshold_bin)
        np.testing.assert_array_equal(a.default_left, b.default_left)
        np.testing.assert_allclose(a.split_gain, b.split_gain, rtol=1e-6)
    np.testing.assert_allclose(sparse.predict(X).toarray(), dense.predict(X), atol=1e-6)


@pytest.mark.parametrize("extra", [{}, {"bagging_fraction": 0.4, "bagging_freq": 1}, {"feature_fraction": 0.5}])
def test_exact_eq20_splits_on_sparse_x_with_weights_and_samples(extra):
    """The same equality on CSR X (sparse features, whose default bins are never visited; bundles: the
    kernel test),
    with row weights, a bagging sample (copied into a compact store) or column sampling."""
    rng = np.random.default_rng(1)
    n, n_features, L = 600, 40, 50
    Xd = rng.random((n, n_features)) * (rng.random((n, n_features)) < 0.15)
    Xd[:, :3] = rng.normal(size=(n, 3))
    Xd = _missing_values(Xd, fraction=0.02)
    logits = np.nan_to_num(Xd) @ rng.normal(size=(n_features, L))
    Y = sp.csr_matrix((logits >= np.sort(logits, axis=1)[:, [-4]]).astype(np.float32))
    X, w = sp.csr_matrix(Xd), rng.uniform(0.5, 2, n)
    common = {"num_leaves": 12, "min_data_in_leaf": 5, "sketch": "none", "leaf_sparsity": 5, "verbosity": -1,
              "num_threads": 2, "deterministic": True, **extra}
    sparse = mg.train({**common, "objective": "sparse_squared"}, mg.Dataset(X, Y, weight=w), 6)
    assert 2 in mg.Dataset(X, Y).construct().store.feature_kind  # a CSR part
    dense = mg.train({**common, "objective": "regression", "boost_from_average": False, "target_scaling": "none"},
                     mg.Dataset(X, Y.toarray(), weight=w), 6)
    for a, b in zip(sparse.trees, dense.trees):
        np.testing.assert_array_equal(a.split_feature, b.split_feature)
        np.testing.assert_array_equal(a.threshold_bin, b.threshold_bin)
        np.testing.assert_array_equal(a.default_left, b.default_left)
    np.testing.assert_allclose(sparse.predict(X).toarray(), dense.predict(X), atol=1e-6)


def test_top_k_equals_argsort_of_the_sparse_prediction():
    X, Y = _problem()
    booster = mg.train(PARAMS, mg.Dataset(X, Y), 10)
    dense = booster.predict(X[:50]).toarray()
    idx, val = booster.predict(X[:50], top_k=5)
    order = np.argsort(-dense, axis=1, kind="stable")[:, :5]
    np.testing.assert_array_equal(idx, order)
    np.testing.assert_allclose(val, np.take_along_axis(dense, order, 1))


def test_eval_metrics_equal_the_xmc_metrics_and_early_stopping_restores_the_best_round():
    X, Y = _problem(n=900)
    train, valid = mg.Dataset(X[:600], Y[:600]), None
    valid = mg.Dataset(X[600:], Y[600:], reference=train)
    result = {}
    booster = mg.train({**PARAMS, "metric": ["precision_at_k", "ndcg_at_k", "psp@k"]}, train, 200, valid_sets=[valid],
                       callbacks=[mg.record_evaluation(result), mg.early_stopping(5, verbose=False)])
    assert 0 < booster.best_iteration < 200
    it = booster.best_iteration
    Z = booster.predict(X[600:], num_iteration=it)  # training metrics rank the labels the CSR scores hold
    np.testing.assert_allclose(result["valid_0"]["precision@3"][it - 1], precision_at_k(Y[600:], Z, 3)[2])
    np.testing.assert_allclose(result["valid_0"]["ndcg@5"][it - 1], ndcg_at_k(Y[600:], Z, 5)[4])
    q = inverse_propensity(Y[:600])  # the training labels' propensities
    np.testing.assert_allclose(result["valid_0"]["psp@5"][it - 1], psprecision_at_k(Y[600:], Z, q, 5)[4])
    assert result["valid_0"]["psp@1"][it - 1] != result["valid_0"]["precision@1"][it - 1]


def test_scores_held_in_row_blocks_give_the_same_model_and_metrics(monkeypatch):
    """Sparse scores are kept in blocks of rows (one block is copied at a time when a tree is added): many
    small blocks train the same trees and report the same weighted metrics as one block."""
    from multigrove.boosting import sparse_output
    X, Y = _problem(n=900)
    w = np.random.default_rng(1).uniform(0.5, 2.0, 900)

    def fit():
        train = mg.Dataset(X[:600], Y[:600], weight=w[:600])
        valid = mg.Dataset(X[600:], Y[600:], weight=w[600:], reference=train)
        result = {}
        booster = mg.train({**PARAMS, "metric": ["precision_at_k", "psp@k"]}, train, 15, valid_sets=[train, valid],
                           callbacks=[mg.record_evaluation(result)])
        return booster, result
    one_block, one_result = fit()
    monkeypatch.setattr(sparse_output, "SCORE_BLOCK_ROWS", 64)  # 10 blocks of training rows, 5 of validation
    assert len(sparse_output.SparseScores(600, 3).blocks) == 10
    blocks, block_result = fit()
    np.testing.assert_array_equal(one_block.predict(X).toarray(), blocks.predict(X).toarray())
    for name in one_result:
        for metric, values in one_result[name].items():
            np.testing.assert_allclose(block_result[name][metric], values, rtol=1e-12)


@pytest.mark.parametrize("objective", ["multilabel", "multiclass"])
def test_psp_metric_of_dense_objectives_with_weights(objective):
    """PSP@k of a dense ranking objective, weighted: sum_i w_i gained_i / sum_i w_i best_i."""
    X, Y = _problem(n=700)
    Yd = Y.toarray()
    y = Yd if objective == "multilabel" else np.argmax(Yd * np.arange(1, 41), axis=1)
    w = np.random.default_rng(3).uniform(0.5, 2.0, 700)
    train = mg.Dataset(X[:500], y[:500])
    valid = mg.Dataset(X[500:], y[500:], weight=w[500:], reference=train)
    result = {}
    params = {"objective": objective, "metric": "psprecision_at_k", "eval_at": [2, 4], "num_leaves": 8,
              "verbosity": -1, **({"num_class": 40} if objective == "multiclass" else {})}
    booster = mg.train(params, train, 6, valid_sets=[valid], callbacks=[mg.record_evaluation(result)])
    truth = Yd[500:] if objective == "multilabel" else np.eye(40)[y[500:]]
    counts = (Yd[:500] != 0).sum(axis=0) if objective == "multilabel" else np.bincount(y[:500], minlength=40)
    q = inverse_propensity_from_counts(counts, 500)
    gained, best = psprecision_at_k_parts(truth, booster.predict(X[500:]), q, 4)
    want = (w[500:] @ gained[:, 3]) / (w[500:] @ best[:, 3])
    np.testing.assert_allclose(result["valid_0"]["psp@4"][-1], want, rtol=1e-9)
    assert set(result["valid_0"]) == {"psp@2", "psp@4"}


def test_save_load_round_trip(tmp_path):
    X, Y = _problem()
    booster = mg.train(PARAMS, mg.Dataset(X, Y), 5)
    path = tmp_path / "m.json"
    booster.save_model(path)
    loaded = mg.Booster(model_file=path)
    assert loaded.objective == "sparse_hinge"
    assert (loaded.predict(X) != booster.predict(X)).nnz == 0
    for a, b in zip(loaded.predict(X, top_k=4), booster.predict(X, top_k=4)):
        np.testing.assert_array_equal(a, b)


def test_dense_and_csr_labels_give_the_same_model():
    X, Y = _problem()
    a = mg.train(PARAMS, mg.Dataset(X, Y), 5).predict(X)
    b = mg.train(PARAMS, mg.Dataset(X, Y.toarray()), 5).predict(X)
    assert (a != b).nnz == 0


@pytest.mark.parametrize("extra", [{"data_sample_strategy": "goss"}, {"bagging_fraction": 0.5, "bagging_freq": 1},
                                   {"bagging_temperature": 1.0}, {"feature_fraction": 0.5},
                                   {"sketch": "top_outputs", "sketch_k": 5}, {"growth_policy": "symmetric"},
                                   {"growth_policy": "depthwise"}, {"sketch": "none", "random_strength": 1.0},
                                   {"sketch": "none", "data_sample_strategy": "goss"}])
def test_sampling_and_growth_policies_are_seeded(extra):
    X, Y = _problem()
    params = {**PARAMS, "learning_rate": 0.5, **extra}
    a = mg.train(params, mg.Dataset(X, Y), 12).predict(X)
    b = mg.train(params, mg.Dataset(X, Y), 12).predict(X)
    assert (a != b).nnz == 0
    assert precision_at_k(Y, a, 1)[0] > 0.4


def test_row_weights_scale_gradients():
    """Weight 2 on every row equals weight 1 with lambda halved (gradients and Hessians both double)."""
    X, Y = _problem()
    w = np.full(X.shape[0], 2.0)
    a = mg.train({**PARAMS, "lambda_l2": 2.0}, mg.Dataset(X, Y, weight=w), 4).predict(X)
    b = mg.train({**PARAMS, "lambda_l2": 1.0}, mg.Dataset(X, Y), 4).predict(X)
    np.testing.assert_allclose(a.toarray(), b.toarray(), atol=1e-6)


@pytest.mark.parametrize("sketch", ["random_projection", "none"])
def test_training_with_fifty_thousand_labels_allocates_nothing_of_n_by_L(sketch):
    n, L = 2000, 50_000
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 10))
    cols = (np.abs(X[:, :3]) * 1000).astype(np.int64) % L  # 3 labels per row, tied to the features
    Y = sp.csr_matrix((np.ones(3 * n, np.float32), (np.repeat(np.arange(n), 3), cols.ravel())), shape=(n, L))
    Y.sum_duplicates()
    Y.data[:] = 1.0
    ds = mg.Dataset(X, Y)
    params = {**PARAMS, "leaf_sparsity": 10, "sketch": sketch}
    mg.train(params, ds, 2)  # compile first
    tracemalloc.start()
    booster = mg.train(params, mg.Dataset(X, Y), 5)
    top = booster.predict(X, top_k=5)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert top[0].shape == (n, 5)
    assert peak < n * L * 4 / 20, f"peak {peak / 2**20:.1f} MiB: something of n x L was allocated"


def test_bad_labels_and_settings_are_refused():
    X, Y = _problem()
    bad = sp.csr_matrix((np.ones(2, np.float32), np.array([0, -3]), np.array([0, 1, 2] + [2] * 598)), shape=(600, 40))
    with pytest.raises(ValueError, match="column index -3 in row 1"):
        mg.train(PARAMS, mg.Dataset(X, bad), 2)
    twos = Y.copy()
    twos.data[5] = 2.0
    with pytest.raises(ValueError, match="0/1 indicator"):
        mg.train(PARAMS, mg.Dataset(X, twos), 2)
    with pytest.raises(ValueError, match="rows"):
        mg.Dataset(X, Y[:10])
    with pytest.raises(ValueError, match="sparse_split must be 'unrestricted'"):
        mg.train({**PARAMS, "sparse_split": "restricted"}, mg.Dataset(X, Y), 2)
    with pytest.raises(ValueError, match="multi_strategy"):
        mg.train({**PARAMS, "multi_strategy": "one_vs_all"}, mg.Dataset(X, Y), 2)
    with pytest.raises(ValueError, match="ranking metrics"):
        mg.train({**PARAMS, "metric": "l2"}, mg.Dataset(X, Y), 2)
    base = mg.train(PARAMS, mg.Dataset(X, Y), 2)
    with pytest.raises(ValueError, match="init_model"):
        mg.train(PARAMS, mg.Dataset(X, Y), 2, init_model=base)
    with pytest.raises(ValueError, match="pred_contrib"):
        base.predict(X, pred_contrib=True)
    with pytest.raises(ValueError, match="NaN"):
        mg.train({**PARAMS, "objective": "sparse_squared"}, mg.Dataset(X, np.full((600, 3), np.nan)), 2)


def test_estimators_take_csr_and_dense_labels():
    X, Y = _problem()
    clf = mg.GroveClassifier(objective="sparse_hinge", n_estimators=10, num_leaves=8).fit(X, Y)
    same = mg.GroveClassifier(objective="sparse_hinge", n_estimators=10, num_leaves=8).fit(X, Y.toarray())
    assert (clf.decision_function(X) != same.decision_function(X)).nnz == 0
    assert clf.n_classes_ == 40 and clf.multilabel_
    labels = clf.predict(X)
    assert sp.issparse(labels) and set(np.unique(labels.data)) <= {1}
    idx, scores = clf.predict_top_k(X, 3)
    assert idx.shape == (600, 3) and np.all(np.diff(scores, axis=1) <= 0)
    with pytest.raises(ValueError, match="not probabilities"):
        clf.predict_proba(X)
    with pytest.raises(ValueError, match="objective must be None or 'sparse_hinge'"):
        mg.GroveClassifier(objective="sparse_squared").fit(X, Y)
    reg = mg.GroveRegressor(objective="sparse_squared", n_estimators=5, num_leaves=8).fit(X, Y * 3.0)
    assert sp.issparse(reg.predict(X))
