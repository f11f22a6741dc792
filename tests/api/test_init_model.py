"""Continued training: train(init_model=...) and fit(init_model=...)."""
import numpy as np
import pytest

import multigrove as mg


def _data(seed=0, n=600, d=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 6))
    Y = np.column_stack([X[:, 0] + np.sin(X[:, j + 1]) + 0.1 * rng.normal(size=n) for j in range(d)])
    return X, Y


def _same_trees(a, b):
    assert a.num_trees() == b.num_trees()
    for ta, tb in zip(a.trees, b.trees):
        np.testing.assert_array_equal(ta.split_feature, tb.split_feature)
        np.testing.assert_array_equal(ta.threshold, tb.threshold)
        np.testing.assert_allclose(ta.leaf_value, tb.leaf_value, rtol=1e-9, atol=1e-12)


PARAMS = [
    {"objective": "regression", "num_leaves": 7},
    {"objective": "regression", "num_leaves": 7, "sketch": "random_projection", "sketch_k": 1,
     "feature_fraction": 0.7, "bagging_fraction": 0.7, "bagging_freq": 2},
    {"objective": "regression", "num_leaves": 7, "multi_strategy": "one_vs_all"},
    {"objective": "regression", "num_leaves": 7, "data_sample_strategy": "goss", "learning_rate": 0.25},
]


@pytest.mark.parametrize("params", PARAMS)
def test_two_halves_equal_one_run(params):
    X, Y = _data()
    whole = mg.train(params, mg.Dataset(X, Y), 20)
    first = mg.train(params, mg.Dataset(X, Y), 10)
    second = mg.train(params, mg.Dataset(X, Y), 10, init_model=first)
    assert first.num_trees() == whole.num_trees() // 2  # the init model is not changed
    _same_trees(second, whole)
    np.testing.assert_allclose(second.predict(X), whole.predict(X), rtol=1e-9, atol=1e-9)


def test_multiclass_from_a_saved_file_and_a_binned_dataset(tmp_path):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(500, 5))
    y = (X[:, 0] > 0).astype(int) + (X[:, 1] > 0.5).astype(int)
    params = {"objective": "multiclass", "num_class": 3, "num_leaves": 5}
    whole = mg.train(params, mg.Dataset(X, y), 12)
    ds = mg.Dataset(X, y)
    first = mg.train(params, ds, 6)
    first.save_model(tmp_path / "m.json")
    # ds is binned: the start is predicted on its bins (the thresholds are its bin bounds)
    second = mg.train(params, ds, 6, init_model=tmp_path / "m.json")
    _same_trees(second, whole)


def test_validation_starts_from_the_init_model():
    X, Y = _data()
    params = {"objective": "regression", "num_leaves": 7, "metric": "l2"}
    res_whole, res_cont = {}, {}
    train = mg.Dataset(X[:400], Y[:400])
    whole = mg.train(params, train, 8, valid_sets=[mg.Dataset(X[400:], Y[400:], reference=train)],
                     callbacks=[mg.record_evaluation(res_whole)])
    train = mg.Dataset(X[:400], Y[:400])
    first = mg.train(params, train, 4)
    train = mg.Dataset(X[:400], Y[:400])
    mg.train(params, train, 4, valid_sets=[mg.Dataset(X[400:], Y[400:], reference=train)],
             init_model=first, callbacks=[mg.record_evaluation(res_cont)])
    np.testing.assert_allclose(res_cont["valid_0"]["l2"], res_whole["valid_0"]["l2"][4:], rtol=1e-9)
    assert whole.current_iteration() == 8


def test_one_hundred_plus_one_hundred_rounds_equal_two_hundred():
    X, Y = _data(n=400)
    params = {"num_leaves": 5, "bagging_fraction": 0.8, "bagging_freq": 3, "feature_fraction": 0.8}
    whole = mg.train(params, mg.Dataset(X, Y), 200)
    half = mg.train(params, mg.Dataset(X, Y), 100)
    _same_trees(mg.train(params, mg.Dataset(X, Y), 100, init_model=half), whole)


def test_estimator_continues():
    X, Y = _data()
    whole = mg.GroveRegressor(n_estimators=10, num_leaves=7).fit(X, Y)
    first = mg.GroveRegressor(n_estimators=5, num_leaves=7).fit(X, Y)
    second = mg.GroveRegressor(n_estimators=5, num_leaves=7).fit(X, Y, init_model=first)
    assert second.n_estimators_ == 10
    np.testing.assert_allclose(second.predict(X), whole.predict(X), rtol=1e-9, atol=1e-9)
    third = mg.GroveRegressor(n_estimators=5, num_leaves=7).fit(X, Y, init_model=first.booster_)
    np.testing.assert_allclose(third.predict(X), whole.predict(X), rtol=1e-9, atol=1e-9)


def test_mismatched_init_model_is_refused(tmp_path):
    X, Y = _data()
    model = mg.train({"num_leaves": 7}, mg.Dataset(X, Y), 3)
    with pytest.raises(ValueError, match="n_outputs"):
        mg.train({"num_leaves": 7}, mg.Dataset(X, Y[:, 0]), 3, init_model=model)
    with pytest.raises(ValueError, match="objective"):
        mg.train({"objective": "multilabel"}, mg.Dataset(X, (Y > 0).astype(float)), 3, init_model=model)
    with pytest.raises(TypeError, match="init_model"):
        mg.train({}, mg.Dataset(X, Y), 3, init_model=42)
    other = mg.Dataset(X * 1.37 + 0.1, Y).construct()
    with pytest.raises(ValueError, match="not a bin bound"):
        mg.train({"num_leaves": 7}, other, 3, init_model=model)


@pytest.mark.parametrize("params,make_label", [
    ({"objective": "regression", "num_leaves": 7}, lambda X: X[:, 0] + np.sin(X[:, 1])),
    ({"objective": "multiclass", "num_class": 3, "num_leaves": 5},
     lambda X: (X[:, 0] > 0).astype(int) + (X[:, 1] > 0.5).astype(int)),
    ({"objective": "multilabel", "num_leaves": 5, "leaf_sparsity": 2}, lambda X: (X[:, :3] > 0).astype(float)),
])
def test_refit_on_the_training_data_reproduces_the_leaves(params, make_label):
    rng = np.random.default_rng(2)
    X = rng.normal(size=(500, 4))
    y = make_label(X)
    model = mg.train(params, mg.Dataset(X, y), 8)
    again = model.refit(X, y, decay_rate=0.0)
    for ta, tb in zip(model.trees, again.trees):
        np.testing.assert_allclose(tb.leaf_value, ta.leaf_value, rtol=2e-4, atol=1e-7)
        np.testing.assert_array_equal(tb.leaf_count, ta.leaf_count)
    # new data moves the leaves towards it, in proportion 1 - decay_rate
    y2 = make_label(X[:, ::-1])
    refitted = model.refit(X, y2, decay_rate=0.5)
    assert refitted is not model and model.trees[0].leaf_value is not refitted.trees[0].leaf_value
    full = model.refit(X, y2, decay_rate=0.0)
    np.testing.assert_allclose(refitted.trees[0].leaf_value,
                               0.5 * model.trees[0].leaf_value + 0.5 * full.trees[0].leaf_value, rtol=1e-9)
    with pytest.raises(ValueError, match="decay_rate"):
        model.refit(X, y, decay_rate=1.5)
