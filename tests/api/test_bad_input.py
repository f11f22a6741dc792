"""Rung 8: each documented error names what is wrong and what was expected."""
import numpy as np
import pytest

import multigrove as mg


@pytest.fixture
def data(rng):
    return rng.normal(size=(100, 3)), rng.normal(size=100)


@pytest.mark.parametrize("params,exc,match", [
    ({"max_depth": 0}, ValueError, r"max_depth must be >= 1 or -1 \(no limit\), got 0"),
    ({"num_leaves": 1}, ValueError, "num_leaves must be >= 2, got 1"),
    ({"learning_rate": 0}, ValueError, "learning_rate must be > 0.0, got 0.0"),
    ({"learning_rate": "fast"}, TypeError, "learning_rate must be a number, got 'fast'"),
    ({"lambda_l2": -1}, ValueError, "lambda_l2 must be >= 0.0, got -1.0"),
    ({"learning_rate": float("nan")}, ValueError, "learning_rate must be finite, got nan"),
    ({"lambda_l2": float("inf")}, ValueError, "lambda_l2 must be finite, got inf"),
    ({"max_bin": 256}, ValueError, "max_bin must be <= 255, got 256"),
    ({"max_bin": 1}, ValueError, "max_bin must be >= 2, got 1"),
    ({"min_data_in_leaf": 0}, ValueError, "min_data_in_leaf must be >= 1, got 0"),
    ({"min_data_in_bin": 0}, ValueError, "min_data_in_bin must be >= 1, got 0"),
    ({"num_leaves": 2.5}, TypeError, "num_leaves must be an integer, got 2.5"),
    ({"objective": "poisson"}, ValueError, "objective must be one of"),
    ({"multi_strategy": "chain"}, ValueError, r"multi_strategy must be one of \('multi_output', 'one_vs_all'\)"),
    ({"growth_policy": "lossguide"}, ValueError, "growth_policy must be one of"),
    ({"num_leavs": 8}, ValueError, "unknown parameter 'num_leavs'; did you mean 'num_leaves'"),
    ({"eta": 0.1, "learning_rate": 0.2}, ValueError, "parameter 'learning_rate' given twice"),
    ({"metric": "auc"}, ValueError, "metric must be one of"),
    ({"num_class": 1}, ValueError, "num_class must be >= 2"),
    ({"metric": "multi_logloss"}, ValueError, "metric 'multi_logloss' needs objective multiclass"),
])
def test_bad_parameters(data, params, exc, match):
    X, y = data
    with pytest.raises(exc, match=match):
        mg.train(params, mg.Dataset(X, y), 2)


def test_bad_data(rng, data):
    X, y = data
    with pytest.raises(ValueError, match="label has 99 rows but the data has 100 rows"):
        mg.Dataset(X, y[:99])
    y2 = y.copy()
    y2[7] = np.inf
    with pytest.raises(ValueError, match="got inf at row 7"):
        mg.Dataset(X, y2)
    with pytest.raises(ValueError, match=r"data has 0 sample\(s\)"):
        mg.Dataset(np.empty((0, 3)), np.empty(0))
    with pytest.raises(ValueError, match=r"data has 0 feature\(s\)"):
        mg.Dataset(np.empty((5, 0)), np.zeros(5))
    with pytest.raises(ValueError, match="data must be 2-D"):
        mg.Dataset(np.zeros(5), np.zeros(5))
    with pytest.raises(TypeError, match="data must hold numbers"):
        mg.Dataset(np.array([["a", "b"]]), [1])
    with pytest.raises(ValueError, match="weight must be >= 0, got -1.0 at row 3"):
        mg.Dataset(X, y, weight=np.r_[np.ones(3), -1, np.ones(96)])
    with pytest.raises(ValueError, match="weight must be 1-D with one value per row \\(100\\)"):
        mg.Dataset(X, y, weight=np.ones(5))
    with pytest.raises(ValueError, match="weight must have a positive sum"):
        mg.Dataset(X, y, weight=np.zeros(100))
    # an eval_set's weights are named by pair, and one weight array a pair
    with pytest.raises(ValueError, match=r"eval_sample_weight\[1\] must have a positive sum"):
        mg.GroveRegressor(n_estimators=2).fit(X, y, eval_set=[(X, y), (X[:10], y[:10])],
                                               eval_sample_weight=[None, np.zeros(10)])
    with pytest.raises(ValueError, match=r"eval_sample_weight\[0\] must be 1-D with one value per row \(10\)"):
        mg.GroveRegressor(n_estimators=2).fit(X, y, eval_set=[(X[:10], y[:10])], eval_sample_weight=[np.ones(9)])
    with pytest.raises(ValueError, match="eval_sample_weight has 2 entries for 1 eval_set pairs"):
        mg.GroveRegressor(n_estimators=2).fit(X, y, eval_set=[(X, y)], eval_sample_weight=[None, None])
    with pytest.raises(ValueError, match="a validation set must have the training set's features"):
        mg.Dataset(X[:, :2], y, reference=mg.Dataset(X, y))
    with pytest.raises(ValueError, match="train_set has no label"):
        mg.train({}, mg.Dataset(X), 2)
    with pytest.raises(ValueError, match="num_boost_round must be an integer >= 0"):
        mg.train({}, mg.Dataset(X, y), -1)


def test_bad_labels_for_objective(data):
    X, y = data
    with pytest.raises(ValueError, match="label for objective 'binary' must be 0 or 1, got 2 at row 4"):
        mg.train({"objective": "binary"}, mg.Dataset(X, np.r_[0, 1, 0, 1, 2, np.zeros(95)]), 2)
    with pytest.raises(ValueError, match=r"must be in \[0, num_class\) = \[0, 3\), got 3 at row 1"):
        mg.train({"objective": "multiclass", "num_class": 3}, mg.Dataset(X, np.r_[0, 3, np.zeros(98)]), 2)
    with pytest.raises(ValueError, match="must be integer class ids, got 0.5 at row 0"):
        mg.train({"objective": "multiclass"}, mg.Dataset(X, np.r_[0.5, np.zeros(99)]), 2)
    with pytest.raises(ValueError, match="must be a 0/1 indicator, got 3 at row 2, column 1"):
        Y = np.zeros((100, 2))
        Y[2, 1] = 3
        mg.train({"objective": "multilabel"}, mg.Dataset(X, Y), 2)
    with pytest.raises(ValueError, match="label for objective 'multilabel' must be a 2-D 0/1 indicator"):
        mg.train({"objective": "multilabel"}, mg.Dataset(X, (y > 0).astype(float)), 2)
    tr = mg.Dataset(X, np.r_[0, 1, 2, np.zeros(97)])
    va = mg.Dataset(X, np.r_[5, np.zeros(99)], reference=tr)
    with pytest.raises(ValueError, match=r"\[0, 3\), got 5 at row 0"):
        mg.train({"objective": "multiclass"}, tr, 2, valid_sets=[va])


def test_bad_predict_input(data):
    X, y = data
    bst = mg.train({}, mg.Dataset(X, y), 2)
    with pytest.raises(ValueError, match="X has 2 features, but the model is expecting 3 features"):
        bst.predict(X[:, :2])
    with pytest.raises(ValueError, match="importance_type must be 'split' or 'gain'"):
        bst.feature_importance("weight")


def test_frame_columns_must_be_the_trained_features(data):
    """A DataFrame is read by its column names: columns in another order or under other names are refused
    (they would be read as the wrong features); arrays, and models trained on arrays, go by position."""
    pd = pytest.importorskip("pandas")
    X, y = data
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    bst = mg.train({"min_data_in_leaf": 5}, mg.Dataset(frame, y), 5)
    swapped = frame[["c", "b", "a"]]
    with pytest.raises(ValueError, match=r"X's columns are the model's features in another order \(column 0 is 'c', "
                                         r"trained as 'a'\)"):
        bst.predict(swapped)
    with pytest.raises(ValueError, match=r"not the features the model was trained on: \['a'\] missing, "
                                         r"\['z'\] not known"):
        bst.predict(frame.rename(columns={"a": "z"}))
    with pytest.raises(ValueError, match="data's columns are the model's features in another order"):
        bst.refit(swapped, y)
    with pytest.raises(ValueError, match="data's columns are the reference Dataset's features in another order"):
        mg.Dataset(swapped, y, reference=mg.Dataset(frame, y))
    with pytest.raises(ValueError, match="eval_set\\[0\\] X's columns are the training X's features in another order"):
        mg.GroveRegressor(n_estimators=2).fit(frame, y, eval_set=[(swapped, y)])
    np.testing.assert_array_equal(bst.predict(swapped[["a", "b", "c"]]), bst.predict(X))
    by_position = mg.train({"min_data_in_leaf": 5}, mg.Dataset(X, y), 5)
    np.testing.assert_array_equal(by_position.predict(swapped), by_position.predict(X[:, ::-1]))


def test_bad_custom_objective(data):
    X, y = data
    with pytest.raises(ValueError, match=r"custom objective returned grad of shape \(5,\), expected \(100,\)"):
        mg.train({"objective": lambda p, d: (np.zeros(5), np.ones(5))}, mg.Dataset(X, y), 2)
    with pytest.raises(TypeError, match="must return a tuple \\(grad, hess\\)"):
        mg.train({"objective": lambda p, d: p}, mg.Dataset(X, y), 2)


def test_bad_callbacks(data):
    X, y = data
    with pytest.raises(ValueError, match="early_stopping needs at least one validation set"):
        mg.train({}, mg.Dataset(X, y), 5, callbacks=[mg.early_stopping(2)])
    with pytest.raises(ValueError, match="stopping_rounds must be >= 1, got 0"):
        mg.early_stopping(0)


def test_values_beyond_the_float32_statistics_are_refused():
    """Found by the fuzzing budget of `make fuzz`: these used to give NaN predictions or an OverflowError."""
    X = np.random.default_rng(0).random((20, 2))
    with pytest.raises(ValueError, match="weight must be at most 1e.30 .* got 1e.308 at row 0"):
        mg.Dataset(X, X[:, 0], weight=np.r_[1e308, np.ones(19)])
    with pytest.raises(ValueError, match="must be at most 1e.30 in magnitude .* at row 0, column 0"):
        mg.train({}, mg.Dataset(X, np.r_[1e31, np.zeros(19)]), 2)
    with pytest.raises(ValueError, match="min_data_in_leaf must be <="):
        mg.train({"min_child_samples": 1e300}, mg.Dataset(X, X[:, 0]), 2)


def test_a_diverging_run_stops_with_an_error_naming_the_learning_rate():
    """Found by `make fuzz` (learning_rate=1e300 gave NaN predictions): a learning rate far above 1 makes
    every round overshoot until the scores outgrow the float32 statistics; training then stops at that
    round instead of returning NaN trees.  A learning rate that converges is untouched."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 3))
    y = np.column_stack([X[:, 0], X[:, 1] > 0]).astype(float)
    with pytest.raises(ValueError, match=r"diverged in round 1: .* learning_rate=1e\+300 is too large"):
        mg.train({"learning_rate": 1e300}, mg.Dataset(X, y), 3)
    with pytest.raises(ValueError, match=r"diverged in round \d+: .* learning_rate=10.0"):
        mg.train({"learning_rate": 10.0}, mg.Dataset(X, y), 100)
    assert np.isfinite(mg.train({"learning_rate": 1.9}, mg.Dataset(X, y), 100).predict(X)).all()
