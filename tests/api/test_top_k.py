"""Top-k prediction: the sparse merge of each row's leaf values equals ranking the dense prediction."""
import numpy as np
import pytest
import scipy.sparse as sp

import multigrove as mg
from multigrove.xmc.metrics import precision_at_k


@pytest.fixture(scope="module")
def multilabel():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 6))
    Y = (rng.random((600, 20)) < 0.1).astype(float)
    Y[:, 0] = X[:, 0] > 0
    Y[:, 1] = X[:, 1] > 0.5
    return X, Y


def _dense_top(P, k):
    order = np.argsort(-P, axis=1, kind="stable")[:, :k]
    return order, np.take_along_axis(P, order, axis=1)


@pytest.mark.parametrize("params", [{"leaf_sparsity": 3}, {}, {"multi_strategy": "one_vs_all"},
                                    {"leaf_sparsity": 2, "sketch": "top_outputs", "sketch_k": 4}])
def test_top_k_equals_ranking_the_dense_prediction(multilabel, params):
    X, Y = multilabel
    model = mg.train({"objective": "multilabel", "num_leaves": 8, **params}, mg.Dataset(X, Y), 15)
    for k in (1, 5, 20):
        idx, scores = model.predict(X, top_k=k)
        want_idx, want = _dense_top(model.predict(X), k)
        np.testing.assert_array_equal(idx, want_idx)
        np.testing.assert_allclose(scores, want, rtol=1e-12, atol=1e-15)
    raw_idx, raw = model.predict(sp.csr_matrix(X), top_k=5, raw_score=True)
    np.testing.assert_allclose(raw, _dense_top(model.predict(X, raw_score=True), 5)[1], rtol=1e-12)
    staged_idx, staged = model.predict(X, top_k=3, start_iteration=5, raw_score=True)
    np.testing.assert_array_equal(staged_idx, _dense_top(model.predict(X, start_iteration=5, raw_score=True), 3)[0])
    # the XMC metrics take the pair
    np.testing.assert_allclose(precision_at_k(Y, model.predict(X, top_k=5), 5), precision_at_k(Y, model.predict(X), 5))


def test_multiclass_probabilities_are_normalised_over_every_class():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(500, 4))
    y = (X[:, 0] > 0).astype(int) + 2 * (X[:, 1] > 0) + 4 * (X[:, 2] > 1)
    model = mg.train({"objective": "multiclass", "num_class": 8, "leaf_sparsity": 2, "num_leaves": 6},
                     mg.Dataset(X, y), 20)
    idx, proba = model.predict(X, top_k=3)
    want_idx, want = _dense_top(model.predict(X), 3)
    np.testing.assert_array_equal(idx, want_idx)
    np.testing.assert_allclose(proba, want, rtol=1e-9, atol=1e-12)


def test_estimator_predict_top_k(multilabel):
    X, Y = multilabel
    clf = mg.GroveClassifier(n_estimators=10, num_leaves=8, leaf_sparsity=3).fit(X, Y)
    labels, proba = clf.predict_top_k(X, 4)
    want_idx, want = _dense_top(clf.predict_proba(X), 4)
    np.testing.assert_array_equal(labels, want_idx)
    np.testing.assert_allclose(proba, want, rtol=1e-12)
    names = np.array(["cat", "dog", "eel"])[np.argmax(Y[:, :3], axis=1)]
    multi = mg.GroveClassifier(n_estimators=10, num_leaves=8).fit(X, names)
    labels, proba = multi.predict_top_k(X, 2)
    order = np.argsort(-multi.predict_proba(X), axis=1, kind="stable")[:, :2]
    np.testing.assert_array_equal(labels, multi.classes_[order])
    binary = mg.GroveClassifier(n_estimators=5, num_leaves=4).fit(X, names == "cat")
    labels, proba = binary.predict_top_k(X, 2)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    with pytest.raises(ValueError, match=r"k must be <= 3 \(the model's classes or labels\), got 4"):
        multi.predict_top_k(X, 4)
    with pytest.raises(ValueError, match="at most one of"):
        clf.booster_.predict(X, top_k=2, pred_leaf=True)
    n_outputs = clf.booster_.n_outputs
    message = rf"top_k must be <= {n_outputs} \(the number of outputs\), got {n_outputs + 1}"
    with pytest.raises(ValueError, match=message):
        clf.booster_.predict(X, top_k=n_outputs + 1)
