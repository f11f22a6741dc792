"""NaN in a label matrix is a missing label: masked out of the loss, the gradients and the metrics."""
import numpy as np
import pytest

import multigrove as mg
from multigrove.boosting.losses import observed


def _regression(seed=0, n=800):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    Y = np.column_stack([X[:, 0] + X[:, 1] ** 2, np.sin(2 * X[:, 2]) - X[:, 0]]) + 0.1 * rng.normal(size=(n, 2))
    missing = rng.random(size=Y.shape) < 0.3
    return X, Y, missing


def test_one_vs_all_equals_training_on_the_labelled_rows():
    X, Y, missing = _regression()
    Yn = np.where(missing, np.nan, Y)
    params = {"objective": "regression", "multi_strategy": "one_vs_all", "num_leaves": 8,
              "min_data_in_leaf": 1, "min_sum_hessian_in_leaf": 0.0}
    full = mg.Dataset(X, Yn)
    masked = mg.train(params, full, 15)
    for j in range(2):
        rows = ~missing[:, j]
        alone = mg.train(params, mg.Dataset(X[rows], Y[rows, j], reference=full), 15)
        # trees for output j: the masked model's j-th tree of each round
        for r in range(15):
            tm, ta = masked.trees[2 * r + j], alone.trees[r]
            np.testing.assert_array_equal(tm.split_feature, ta.split_feature)
            np.testing.assert_array_equal(tm.threshold, ta.threshold)
            np.testing.assert_allclose(tm.leaf_value, ta.leaf_value, rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(masked.predict(X)[:, j], alone.predict(X), rtol=1e-5, atol=1e-6)


def test_multilabel_masked_cells_have_no_gradient_and_no_metric():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(600, 4))
    Y = (X[:, :3] + 0.3 * rng.normal(size=(600, 3)) > 0).astype(float)
    Yn = Y.copy()
    Yn[rng.random(Y.shape) < 0.25] = np.nan
    result = {}
    ds = mg.Dataset(X, Yn)
    model = mg.train({"objective": "multilabel", "num_leaves": 6, "metric": ["multilabel_logloss"],
                      "metric_per_output": True}, ds, 10, valid_sets=[ds], callbacks=[mg.record_evaluation(result)])
    prob = model.predict(X)
    given = ~np.isnan(Yn)
    cells = -(Y * np.log(prob) + (1 - Y) * np.log(1 - prob))
    assert result["training"]["multilabel_logloss"][-1] == pytest.approx(cells[given].mean(), rel=1e-6)
    for j in range(3):
        assert result["training"][f"multilabel_logloss[{j}]"][-1] == pytest.approx(cells[given[:, j], j].mean(),
                                                                                 rel=1e-6)
    # the start score is the log-odds of the labelled cells only
    p0 = np.nanmean(Yn, axis=0)
    np.testing.assert_allclose(model.init_score, np.log(p0 / (1 - p0)), rtol=1e-9)


def test_observed_zeroes_and_masks():
    y = np.array([[1.0, np.nan], [np.nan, 0.0]])
    filled, mask = observed(y)
    np.testing.assert_array_equal(filled, [[1, 0], [0, 0]])
    np.testing.assert_array_equal(mask, [[1, 0], [0, 1]])
    assert observed(np.ones((2, 2)))[1] is None


def test_estimators_take_missing_labels():
    X, Y, missing = _regression()
    Yn = np.where(missing, np.nan, Y)
    reg = mg.GroveRegressor(n_estimators=20, num_leaves=8).fit(X, Yn)
    assert np.isfinite(reg.predict(X)).all()
    Yb = np.where(missing, np.nan, (Y > 0).astype(float))
    clf = mg.GroveClassifier(n_estimators=20, num_leaves=8).fit(X, Yb)
    assert clf.predict_proba(X).shape == (X.shape[0], 2)


@pytest.mark.parametrize("objective,label", [
    ("multiclass", np.array([0, 1, np.nan, 2] * 10)),
    ("regression", np.column_stack([np.arange(40.0), np.full(40, np.nan)])),
])
def test_refused_missing_labels_name_the_cell(objective, label):
    X = np.arange(80.0).reshape(40, 2)
    with pytest.raises(ValueError, match="NaN"):
        mg.train({"objective": objective, "num_class": 3} if objective == "multiclass" else {}, mg.Dataset(X, label), 2)


def test_inf_label_is_refused():
    with pytest.raises(ValueError, match="inf"):
        mg.Dataset(np.ones((3, 1)), [1.0, np.inf, 0.0])
