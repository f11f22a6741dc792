"""Per-row start scores (Dataset(init_score=...), fit(init_score=...)): boosting from another model's raw
predictions continues it exactly, validation sets score with their own, and bad shapes are named."""
import numpy as np
import pytest

import multigrove as mg
from multigrove.params import MultigroveWarning

N_ROWS = 1500
FIRST, SECOND = 20, 15


@pytest.fixture(scope="module")
def features():
    rng = np.random.default_rng(3)
    return rng.normal(size=(N_ROWS, 6))


def _labels(objective, X):
    signal = X[:, 0] + 0.5 * X[:, 1] ** 2 - X[:, 2] * X[:, 3]
    if objective == "regression":
        return signal, {}
    if objective == "multi_regression":  # three targets of unequal scales (standardized by default)
        return np.column_stack([signal, 10 * X[:, 4], X[:, 5] - 3]), {"sketch": "none"}
    if objective == "binary":
        return (signal > 0.3).astype(float), {"objective": "binary"}
    if objective == "multiclass":
        return np.digitize(signal, [-0.5, 0.5, 1.5]).astype(float), {"objective": "multiclass", "num_class": 4,
                                                                     "sketch": "none"}
    return (np.column_stack([signal, X[:, 4], -X[:, 5]]) > 0).astype(float), {"objective": "multilabel",
                                                                             "sketch": "none"}


@pytest.mark.parametrize("objective", ["regression", "multi_regression", "binary", "multiclass", "multilabel"])
def test_starting_from_a_models_raw_scores_continues_it(features, objective):
    """FIRST rounds, then SECOND rounds from their raw predictions as init_score, predict (added up) what
    FIRST + SECOND rounds in one go predict: the same trees (no random draws in these settings)."""
    X = features
    y, params = _labels(objective, X)
    params = {**params, "num_leaves": 7, "learning_rate": 0.2}
    whole = mg.train(params, mg.Dataset(X, y), FIRST + SECOND)
    first = mg.train(params, mg.Dataset(X, y), FIRST)
    offsets = first.predict(X, raw_score=True)
    second = mg.train(params, mg.Dataset(X, y, init_score=offsets), SECOND)
    np.testing.assert_array_equal(second.init_score, 0.0)  # the rows bring the start: none in the model
    np.testing.assert_allclose(offsets + second.predict(X, raw_score=True), whole.predict(X, raw_score=True),
                               rtol=0, atol=1e-9)


def test_validation_sets_score_with_their_own_init_score(features):
    X = features
    y, _ = _labels("binary", X)
    fit_rows, valid_rows = slice(0, 1000), slice(1000, None)
    params = {"objective": "binary", "num_leaves": 7, "learning_rate": 0.2, "metric": "binary_logloss"}

    def run(rounds, train_offsets=None, valid_offsets=None, init_model=None):
        train_set = mg.Dataset(X[fit_rows], y[fit_rows], init_score=train_offsets)
        valid = mg.Dataset(X[valid_rows], y[valid_rows], reference=train_set, init_score=valid_offsets)
        return mg.train(params, train_set, rounds, valid_sets=[valid], init_model=init_model)
    whole = run(FIRST + SECOND)
    first = run(FIRST)
    second = run(SECOND, first.predict(X[fit_rows], raw_score=True), first.predict(X[valid_rows], raw_score=True))
    np.testing.assert_allclose(second.evals_result["valid_0"]["binary_logloss"],
                               whole.evals_result["valid_0"]["binary_logloss"][FIRST:], rtol=1e-12)
    # with an init model too, both starts add up: the model's predictions plus the rows' own scores
    shift = np.full(1000, 0.4)
    continued = run(SECOND, shift, np.full(X.shape[0] - 1000, 0.4), init_model=first)
    from_scores = run(SECOND, first.predict(X[fit_rows], raw_score=True) + 0.4,
                      first.predict(X[valid_rows], raw_score=True) + 0.4)
    np.testing.assert_allclose(continued.predict(X, raw_score=True),
                               first.predict(X, raw_score=True) + from_scores.predict(X, raw_score=True), atol=1e-9)
    with pytest.warns(MultigroveWarning, match="validation set 'valid_0' has none"):
        run(2, np.zeros(1000))


def test_cross_validation_folds_take_their_rows_init_score(features):
    X = features
    y, _ = _labels("regression", X)
    offsets = 0.8 * y + 0.3  # a start much closer to the labels than their mean
    folds = [(np.arange(500, N_ROWS), np.arange(500)), (np.arange(1000), np.arange(1000, N_ROWS))]
    params = {"num_leaves": 7, "metric": "l2"}
    result = mg.cv(params, mg.Dataset(X, y, init_score=offsets), 5, folds=folds)
    whole = mg.Dataset(X, y)
    mg.train(params, whole, 1)  # binned with every row, as cv bins it
    by_hand = []
    for fit_rows, valid_rows in folds:
        train_set = mg.Dataset(X[fit_rows], y[fit_rows], init_score=offsets[fit_rows], reference=whole)
        valid = mg.Dataset(X[valid_rows], y[valid_rows], reference=train_set, init_score=offsets[valid_rows])
        by_hand.append(mg.train(params, train_set, 5, valid_sets=[valid]).evals_result["valid_0"]["l2"])
    np.testing.assert_allclose(result["valid l2-mean"], np.mean(by_hand, axis=0), rtol=1e-12)
    plain = mg.cv(params, mg.Dataset(X, y), 5, folds=folds)
    assert result["valid l2-mean"][-1] < 0.5 * plain["valid l2-mean"][-1]


def test_estimators_take_init_score_for_fit_and_eval_sets(features):
    X = features
    y, _ = _labels("multiclass", X)
    first = mg.GroveClassifier(n_estimators=FIRST, sketch="none", num_leaves=7, early_stopping=False).fit(X, y)
    offsets = first.decision_function(X)
    kwargs = dict(n_estimators=SECOND, sketch="none", num_leaves=7, early_stopping=False)
    second = mg.GroveClassifier(**kwargs).fit(X, y, init_score=offsets, eval_set=[(X[:300], y[:300])],
                                              eval_init_score=[offsets[:300]])
    whole = mg.GroveClassifier(**{**kwargs, "n_estimators": FIRST + SECOND}).fit(
        X, y, eval_set=[(X[:300], y[:300])])
    np.testing.assert_allclose(offsets + second.decision_function(X), whole.decision_function(X), atol=1e-9)
    np.testing.assert_allclose(second.evals_result_["valid_0"]["multi_logloss"],
                               whole.evals_result_["valid_0"]["multi_logloss"][FIRST:], rtol=1e-12)
    # held-out rows for early stopping take their rows' init_score too: the same as passing them by hand
    yr, _ = _labels("regression", X)
    stopped = mg.GroveRegressor(n_estimators=30, num_leaves=7, early_stopping=True, n_iter_no_change=5).fit(
        X, yr, init_score=0.9 * yr)
    held = stopped.validation_indices_
    fit_rows = np.setdiff1d(np.arange(N_ROWS), held)
    train_set = mg.Dataset(X[fit_rows], yr[fit_rows], init_score=0.9 * yr[fit_rows])
    valid = mg.Dataset(X[held], yr[held], reference=train_set, init_score=0.9 * yr[held])
    by_hand = mg.train({**stopped.booster_.params, "verbosity": -1}, train_set, 30, valid_sets=[valid],
                       valid_names=["validation"], callbacks=[mg.early_stopping(5, verbose=False)])
    np.testing.assert_allclose(stopped.evals_result_["validation"]["l2"], by_hand.evals_result["validation"]["l2"],
                               rtol=1e-12)


def test_bad_init_score_is_named(features):
    X = features[:100]
    y = X[:, 0]
    with pytest.raises(ValueError, match=r"init_score must have one row per data row: shape \(100,\) or "
                                         r"\(100, n_outputs\), got \(99,\)"):
        mg.Dataset(X, y, init_score=np.zeros(99))
    bad = np.zeros(100)
    bad[7] = np.nan
    with pytest.raises(ValueError, match="init_score must be finite, got nan at row 7, output 0"):
        mg.Dataset(X, y, init_score=bad)
    with pytest.raises(ValueError, match=r"train_set's init_score has 2 column\(s\) but objective 'regression' has "
                                         r"1 output\(s\): give shape \(100, 1\) or \(100,\)"):
        mg.train({}, mg.Dataset(X, y, init_score=np.zeros((100, 2))), 2)
    labels = (X[:, :3] > 0).astype(float)
    import scipy.sparse as sp
    with pytest.raises(ValueError, match="init_score is not available with objective 'sparse_hinge'"):
        mg.train({"objective": "sparse_hinge"}, mg.Dataset(X, sp.csr_matrix(labels), init_score=np.zeros((100, 3))),
                 2)
    with pytest.raises(TypeError, match="init_score must be a dense array of raw scores"):
        mg.Dataset(X, y, init_score=sp.csr_matrix(np.zeros((100, 1))))
    with pytest.raises(ValueError, match="eval_init_score has 2 entries for 1 eval_set pairs"):
        mg.GroveRegressor(n_estimators=2).fit(X, y, eval_set=[(X, y)], eval_init_score=[None, None])
