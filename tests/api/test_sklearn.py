"""The scikit-learn layer: targets of every kind, eval sets, attributes, shared defaults."""
import inspect

import numpy as np
import pytest
import scipy.sparse as sp

import multigrove as mg
from multigrove.params import Params


def test_classifier_string_labels_and_binary(rng):
    X = rng.normal(size=(400, 5))
    y = np.where(X[:, 0] > 0, "yes", "no")
    clf = mg.GroveClassifier(n_estimators=20).fit(X, y)
    assert list(clf.classes_) == ["no", "yes"]
    proba = clf.predict_proba(X)
    assert proba.shape == (400, 2) and np.allclose(proba.sum(1), 1)
    assert (clf.predict(X) == y).mean() > 0.95
    assert clf.booster_.objective == "binary" and clf.n_features_in_ == 5


def test_classifier_multiclass_with_eval_set(rng):
    from multigrove.datasets import make_multiclass
    X, y = make_multiclass(1500, 8, 3, seed=3)
    y = y + 10  # labels need not start at 0
    clf = mg.GroveClassifier(n_estimators=200, learning_rate=0.3)
    clf.fit(X[:1000], y[:1000], eval_set=[(X[1000:], y[1000:])], callbacks=[mg.early_stopping(10, verbose=False)])
    assert list(clf.classes_) == [10, 11, 12]
    assert 0 < clf.best_iteration_ < 200
    assert len(clf.evals_result_["valid_0"]["multi_logloss"]) == clf.n_estimators_
    assert clf.score(X[1000:], y[1000:]) > 0.8
    assert clf.feature_importances_.shape == (8,)
    with pytest.raises(ValueError, match="eval_set y holds label 99, not among the training classes"):
        clf.fit(X[:1000], y[:1000], eval_set=[(X[1000:], np.r_[99, y[1001:]])])


@pytest.mark.parametrize("sparse", [False, True])
def test_classifier_multilabel(rng, sparse):
    X = rng.normal(size=(600, 6))
    Y = np.column_stack([X[:, 0] > 0, X[:, 1] > 0.5, (X[:, 0] + X[:, 2]) > 0]).astype(int)
    clf = mg.GroveClassifier(n_estimators=30).fit(X, sp.csr_matrix(Y) if sparse else Y)
    assert clf.booster_.objective == "multilabel" and clf.n_outputs_ == 3
    P = clf.predict_proba(X)
    assert P.shape == (600, 3) and np.all((P >= 0) & (P <= 1))
    assert set(np.unique(clf.predict(X))) <= {0, 1}
    assert (clf.predict(X) == Y).mean() > 0.95
    with pytest.raises(ValueError, match="y must be a 0/1 indicator, got 2 at row 0, column 1"):
        mg.GroveClassifier(n_estimators=2).fit(X, np.where(np.arange(600)[:, None] == 0, [[0, 2, 1]], Y))


def test_regressor_one_and_many_targets(rng):
    X = rng.normal(size=(500, 4))
    Y = np.column_stack([X[:, 0] * 2, np.sin(X[:, 1]), X[:, 0] - X[:, 2]])
    r = mg.GroveRegressor(n_estimators=100, early_stopping=False).fit(X, Y)
    assert r.predict(X).shape == (500, 3) and r.score(X, Y) > 0.9 and r.booster_.num_trees() == 100
    r1 = mg.GroveRegressor(n_estimators=100).fit(X, Y[:, 0])
    assert r1.predict(X).shape == (500,)
    w = np.ones(500)
    w[:250] = 0.0
    rw = mg.GroveRegressor(n_estimators=20, min_data_in_leaf=5).fit(X, Y[:, 0], sample_weight=w)
    assert rw.booster_.num_trees() == 20


def test_constructor_defaults_are_the_train_defaults():
    """Every training parameter but those the estimator sets from y is a constructor argument, with
    the one default of Params; ``objective`` is None (chosen from y) unless a sparse-output one is named."""
    defaults = {f: getattr(Params(), f) for f in Params.__dataclass_fields__}
    set_by_estimator = {"objective", "num_class", "num_outputs", "metric", "eval_at", "given"}
    for est in (mg.GroveRegressor, mg.GroveClassifier):
        sig = inspect.signature(est.__init__).parameters
        assert set(defaults) - set_by_estimator <= set(sig)
        assert sig["objective"].default is None
        for name in set(sig) & set(defaults) - {"objective"}:
            assert sig[name].default == defaults[name], name


def test_sklearn_bad_input(rng):
    X = rng.normal(size=(50, 3))
    with pytest.raises(ValueError, match="n_estimators must be an integer >= 1 or None, got 0"):
        mg.GroveRegressor(n_estimators=0).fit(X, X[:, 0])
    with pytest.raises(ValueError, match="max_depth must be >= 1 or -1"):
        mg.GroveRegressor(max_depth=0).fit(X, X[:, 0])
    r = mg.GroveRegressor(n_estimators=3).fit(X, X[:, 0])
    with pytest.raises(ValueError, match="X has 2 features, but GroveRegressor is expecting 3 features"):
        r.predict(X[:, :2])
    with pytest.raises(ValueError, match="only one class"):
        mg.GroveClassifier().fit(X, np.zeros(50))
