"""SHAP values: predict(pred_contrib=True) equals a brute-force Shapley computation and adds up."""
import numpy as np
import pytest
import scipy.sparse as sp

import multigrove as mg
from tests.kernels.naive import shapley_values


def _data(n=400, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    X[rng.random(X.shape) < 0.05] = np.nan
    Y = np.column_stack([np.nan_to_num(X[:, 0]) * np.nan_to_num(X[:, 1]), np.nan_to_num(X[:, 2]) > 0,
                         np.sin(np.nan_to_num(X[:, 3]))]).astype(float)
    return X, Y


MODELS = {
    "vector leaves": {"num_leaves": 12},
    "k-sparse leaves": {"num_leaves": 12, "leaf_sparsity": 2},
    "one_vs_all": {"num_leaves": 6, "multi_strategy": "one_vs_all"},
    "depthwise": {"num_leaves": 16, "growth_policy": "depthwise", "max_depth": 4},
}


@pytest.mark.parametrize("name", MODELS)
def test_equal_to_brute_force_shapley(name):
    X, Y = _data()
    model = mg.train(MODELS[name], mg.Dataset(X, Y), 3)
    rows = X[:12]
    got = model.predict(rows, pred_contrib=True)
    assert got.shape == (12, 5, 3)
    for i, x in enumerate(rows):
        want = sum(shapley_values(t, x, 3) for t in model.trees)
        want[-1] += model.init_score
        np.testing.assert_allclose(got[i], want, rtol=1e-9, atol=1e-12)


def test_additive_and_sparse_equals_dense():
    X, Y = _data(n=1500, seed=1)
    X = np.where(np.abs(np.nan_to_num(X)) < 0.7, 0.0, X)
    model = mg.train({"num_leaves": 31, "objective": "regression"}, mg.Dataset(X, Y), 30)
    contrib = model.predict(X, pred_contrib=True)
    np.testing.assert_allclose(contrib.sum(axis=1), model.predict(X, raw_score=True), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(model.predict(sp.csr_matrix(np.nan_to_num(X)), pred_contrib=True),
                               model.predict(np.nan_to_num(X), pred_contrib=True), rtol=1e-12, atol=1e-12)
    # staged: rounds 10.. explain the raw score of those rounds (no start score)
    later = model.predict(X[:50], pred_contrib=True, start_iteration=10)
    np.testing.assert_allclose(later.sum(axis=1), model.predict(X[:50], raw_score=True, start_iteration=10),
                               rtol=1e-9, atol=1e-9)


def test_one_output_layout_and_multiclass():
    X, Y = _data()
    reg = mg.train({"num_leaves": 8}, mg.Dataset(X, Y[:, 0]), 5)
    contrib = reg.predict(X, pred_contrib=True)
    assert contrib.shape == (X.shape[0], 5)
    np.testing.assert_allclose(contrib.sum(axis=1), reg.predict(X), rtol=1e-9, atol=1e-9)
    y = np.nan_to_num(X[:, 0]).round().clip(-1, 1).astype(int) + 1
    clf = mg.GroveClassifier(n_estimators=5, num_leaves=8).fit(X, y)
    contrib = clf.booster_.predict(X, pred_contrib=True)
    assert contrib.shape == (X.shape[0], 5, 3)
    np.testing.assert_allclose(contrib.sum(axis=1), clf.decision_function(X), rtol=1e-9, atol=1e-9)
    with pytest.raises(ValueError, match="at most one of pred_leaf, pred_contrib and top_k"):
        reg.predict(X, pred_leaf=True, pred_contrib=True)


def test_estimators_return_contributions():
    X, Y = _data()
    reg = mg.GroveRegressor(n_estimators=5, num_leaves=8).fit(X, Y)
    np.testing.assert_allclose(reg.predict(X, pred_contrib=True).sum(axis=1), reg.predict(X), rtol=1e-9, atol=1e-9)
    clf = mg.GroveClassifier(n_estimators=5, num_leaves=8).fit(X, Y[:, 1])
    contrib = clf.predict(X, pred_contrib=True)
    assert contrib.shape == (X.shape[0], 5)
    np.testing.assert_allclose(contrib.sum(axis=1), clf.decision_function(X), rtol=1e-9, atol=1e-9)
