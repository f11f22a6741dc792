"""The training loop, callbacks, Booster and model files."""
import json
import os

import numpy as np
import pytest

import multigrove as mg
from multigrove.datasets import make_multiclass, make_multioutput_regression


@pytest.fixture(scope="module")
def mc():
    X, y = make_multiclass(3000, 10, 4, seed=1)
    return X[:2000], y[:2000], X[2000:], y[2000:]


@pytest.fixture(scope="module")
def reg():
    X, Y = make_multioutput_regression(3000, 10, 5, seed=2)
    return X[:2000], Y[:2000], X[2000:], Y[2000:]


def test_multiclass_learns_and_metrics_match_sklearn(mc):
    from sklearn.metrics import accuracy_score, log_loss
    Xtr, ytr, Xte, yte = mc
    ds = mg.Dataset(Xtr, ytr)
    va = mg.Dataset(Xte, yte, reference=ds)
    hist = {}
    bst = mg.train({"objective": "multiclass", "metric": ["multi_logloss", "multi_error", "precision_at_k"],
                    "eval_at": [1, 2]}, ds, 30, valid_sets=[va], callbacks=[mg.record_evaluation(hist)])
    P = bst.predict(Xte)
    assert P.shape == (1000, 4) and np.allclose(P.sum(axis=1), 1.0)
    assert accuracy_score(yte, P.argmax(1)) > 0.8
    assert hist["valid_0"]["multi_logloss"][-1] == pytest.approx(log_loss(yte, P), rel=1e-9)
    assert hist["valid_0"]["multi_error"][-1] == pytest.approx(1 - accuracy_score(yte, P.argmax(1)))
    assert hist["valid_0"]["precision@1"][-1] == pytest.approx(accuracy_score(yte, P.argmax(1)))
    assert hist["valid_0"]["precision@2"][-1] == pytest.approx(
        np.mean([yte[i] in np.argsort(-P[i])[:2] for i in range(len(yte))]) / 2)
    assert len(hist["valid_0"]["multi_logloss"]) == 30
    assert bst.num_trees() == 30 and bst.current_iteration() == 30


def test_log_losses_and_multi_error_read_the_raw_scores():
    """The validation sets' probabilities are made only for a metric that needs them (metrics.RAW_SCORE_METRICS):
    the multi-class log loss and error, and a sigmoid-linked objective's log loss, read the raw scores."""
    from multigrove.boosting.metrics import needs_probabilities
    assert not needs_probabilities(["multi_logloss", "multi_error"], "multiclass")
    assert not needs_probabilities(["binary_logloss"], "binary")
    assert not needs_probabilities(["multilabel_logloss"], "multilabel")
    assert needs_probabilities(["multi_logloss", "precision_at_k"], "multiclass")
    assert needs_probabilities(["binary_error"], "binary")


def test_weighted_metrics_of_a_large_validation_set_match_sklearn():
    """The metrics' weighted sums over 12,000 validation rows (more than NumPy's BLAS runs on its own threads:
    they are a multiply and a sum, metrics._weighted_sum) equal scikit-learn's weighted metrics."""
    from sklearn.metrics import log_loss, mean_squared_error
    rng = np.random.default_rng(3)
    X, y = make_multiclass(14000, 6, 3, seed=3)
    w = rng.uniform(0.5, 2.0, 12000)
    ds = mg.Dataset(X[:2000], y[:2000])
    hist = {}
    bst = mg.train({"objective": "multiclass", "metric": ["multi_logloss", "multi_error"], "verbosity": -1}, ds, 5,
                   valid_sets=[mg.Dataset(X[2000:], y[2000:], weight=w, reference=ds)],
                   callbacks=[mg.record_evaluation(hist)])
    P = bst.predict(X[2000:])
    assert hist["valid_0"]["multi_logloss"][-1] == pytest.approx(log_loss(y[2000:], P, sample_weight=w), rel=1e-12)
    assert hist["valid_0"]["multi_error"][-1] == pytest.approx(
        np.average(P.argmax(1) != y[2000:], weights=w), rel=1e-12)
    X, Y = make_multioutput_regression(14000, 6, 3, seed=4)
    ds = mg.Dataset(X[:2000], Y[:2000])
    hist = {}
    bst = mg.train({"objective": "regression", "metric": ["l2"], "verbosity": -1}, ds, 5,
                   valid_sets=[mg.Dataset(X[2000:], Y[2000:], weight=w, reference=ds)],
                   callbacks=[mg.record_evaluation(hist)])
    assert hist["valid_0"]["l2"][-1] == pytest.approx(
        mean_squared_error(Y[2000:], bst.predict(X[2000:]), sample_weight=w), rel=1e-12)


def test_one_tree_per_round_predicts_all_outputs(reg):
    Xtr, Ytr, Xte, Yte = reg
    bst = mg.train({"objective": "regression", "num_leaves": 15}, mg.Dataset(Xtr, Ytr), 50)
    assert bst.num_trees() == 50
    assert all(t.leaf_value.shape[1] == 5 for t in bst.trees)
    P = bst.predict(Xte)
    r2 = 1 - ((P - Yte) ** 2).sum(0) / ((Yte - Yte.mean(0)) ** 2).sum(0)
    assert r2.min() > 0.7


def test_one_vs_all_grows_one_tree_per_output(reg):
    Xtr, Ytr, Xte, Yte = reg
    bst = mg.train({"objective": "regression", "multi_strategy": "one_vs_all"}, mg.Dataset(Xtr, Ytr), 10)
    assert bst.num_trees() == 50 and bst.current_iteration() == 10
    assert [int(t.output_cols[0]) for t in bst.trees[:5]] == [0, 1, 2, 3, 4]
    # for one output, one_vs_all and multi_output grow the same trees
    a = mg.train({"objective": "regression", "multi_strategy": "one_vs_all"}, mg.Dataset(Xtr, Ytr[:, 0]), 5)
    b = mg.train({"objective": "regression"}, mg.Dataset(Xtr, Ytr[:, 0]), 5)
    np.testing.assert_allclose(a.predict(Xte), b.predict(Xte), rtol=1e-12)


def test_depthwise_policy_and_max_depth(reg):
    Xtr, Ytr, _, _ = reg
    bst = mg.train({"growth_policy": "depthwise", "max_depth": 3, "num_leaves": 100}, mg.Dataset(Xtr, Ytr), 3)
    assert all(t.depth() <= 3 and t.n_leaves <= 8 for t in bst.trees)
    bst = mg.train({"num_leaves": 5}, mg.Dataset(Xtr, Ytr), 3)
    assert all(t.n_leaves == 5 for t in bst.trees)


def test_weights_equal_duplicated_rows(rng):
    X = rng.integers(0, 30, size=(300, 4)).astype(float)   # few levels: both sets get the same bins
    y = X[:, 0] + rng.normal(scale=0.1, size=300)
    w = rng.integers(1, 3, size=300).astype(float)
    params = {"min_data_in_leaf": 1, "min_sum_hessian_in_leaf": 0.0, "num_leaves": 8, "max_bin": 255}
    a = mg.train(params, mg.Dataset(X, y, weight=w), 5)
    idx = np.repeat(np.arange(300), w.astype(int))
    ds_dup = mg.Dataset(X[idx], y[idx])
    b = mg.train(params, ds_dup, 5)
    np.testing.assert_allclose(a.predict(X), b.predict(X), rtol=1e-5, atol=1e-6)


def test_custom_objective_equals_builtin(reg):
    Xtr, Ytr, Xte, _ = reg

    def l2(preds, data):
        return preds - data.get_label(), np.ones_like(preds)
    a = mg.train({"objective": l2, "boost_from_average": False}, mg.Dataset(Xtr, Ytr), 10)
    b = mg.train({"objective": "regression", "boost_from_average": False, "target_scaling": "none"},
                 mg.Dataset(Xtr, Ytr), 10)
    np.testing.assert_allclose(a.predict(Xte), b.predict(Xte), rtol=1e-5, atol=1e-6)
    assert a.objective == "custom"


def test_early_stopping_sets_best_iteration_and_predict_uses_it(mc, capsys):
    Xtr, ytr, Xte, yte = mc
    ds = mg.Dataset(Xtr, ytr)
    va = mg.Dataset(Xte, yte, reference=ds)
    bst = mg.train({"objective": "multiclass", "learning_rate": 0.5, "num_leaves": 63, "min_data_in_leaf": 2},
                   ds, 500, valid_sets=[ds, va], callbacks=[mg.early_stopping(5), mg.log_evaluation(1)])
    assert 0 < bst.best_iteration < bst.current_iteration() <= 500
    assert bst.current_iteration() - bst.best_iteration == 5
    out = capsys.readouterr().out
    assert "[1]\ttraining's multi_logloss" in out and "valid_1's multi_logloss" in out
    assert f"best iteration is: [{bst.best_iteration}]" in out
    np.testing.assert_allclose(bst.predict(Xte), bst.predict(Xte, num_iteration=bst.best_iteration))
    assert not np.allclose(bst.predict(Xte), bst.predict(Xte, num_iteration=bst.current_iteration()))
    assert set(bst.best_score["valid_1"]) == {"multi_logloss"}


def test_feval_and_progress_bar(mc, capsys):
    Xtr, ytr, Xte, yte = mc
    ds = mg.Dataset(Xtr, ytr)
    va = mg.Dataset(Xte, yte, reference=ds)
    hist = {}
    mg.train({"objective": "multiclass", "metric": "None"}, ds, 3, valid_sets=[va],
             feval=lambda p, d: ("top1", float((p.argmax(1) == d.get_label()).mean()), True),
             callbacks=[mg.record_evaluation(hist), mg.progress_bar()])
    assert list(hist["valid_0"]) == ["top1"] and len(hist["valid_0"]["top1"]) == 3
    assert "3/3" in capsys.readouterr().err


def test_feature_importance(reg):
    Xtr, Ytr, _, _ = reg
    bst = mg.train({}, mg.Dataset(Xtr, Ytr), 10)
    split, gain = bst.feature_importance("split"), bst.feature_importance("gain")
    assert split.sum() == sum(t.n_internal for t in bst.trees)
    assert gain.sum() == pytest.approx(sum(t.split_gain.sum() for t in bst.trees))
    assert split.argmax() in range(7)  # informative features come first in the generator


def test_dataframe_input_keeps_feature_names(rng):
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame(rng.normal(size=(200, 3)), columns=["a", "b", "c"])
    df["b"] = df["b"].astype("float32")
    bst = mg.train({"min_data_in_leaf": 5}, mg.Dataset(df, df["a"] * 2), 5)
    assert bst.feature_name() == ["a", "b", "c"]
    np.testing.assert_allclose(bst.predict(df), bst.predict(df.to_numpy()))


def test_dataframe_nullable_and_arrow_columns_are_their_numbers(rng):
    """pandas' nullable Int64 / Float64 / boolean and Arrow-backed columns train and predict as the float
    matrix they hold, pd.NA as NaN (a missing value)."""
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    n = 300
    ints = rng.integers(0, 6, n).astype(float)
    ints[::9] = np.nan
    flags = (rng.random(n) < 0.4).astype(float)
    flags[::11] = np.nan
    reals = rng.normal(size=n)
    plain = np.column_stack([ints, flags, reals, reals])
    df = pd.DataFrame({"ints": pd.array([None if np.isnan(v) else int(v) for v in ints], dtype="Int64"),
                       "flags": pd.array([None if np.isnan(v) else bool(v) for v in flags], dtype="boolean"),
                       "reals": pd.array(reals, dtype="Float64"),
                       "arrow": pd.array(reals, dtype="float64[pyarrow]")})
    y = np.nan_to_num(ints) + 2 * np.nan_to_num(flags) + reals
    params = {"min_data_in_leaf": 5, "num_leaves": 8}
    from_frame = mg.train(params, mg.Dataset(df, y), 10)
    from_array = mg.train(params, mg.Dataset(plain, y), 10)
    assert from_frame.feature_name() == ["ints", "flags", "reals", "arrow"]
    np.testing.assert_array_equal(from_frame.predict(df), from_array.predict(plain))
    assert from_frame.predict(df).std() > 0.5  # the trees split on the nullable columns


def test_dataframe_columns_without_numbers_are_refused_by_name(rng):
    """Text and date columns are refused by name (a category column is a categorical feature: test_categorical)."""
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"x": rng.normal(size=30), "colour": pd.Categorical(list("rgb") * 10),
                       "when": pd.date_range("2026-01-01", periods=30)})
    with pytest.raises(TypeError, match=r"1 column\(s\) that hold neither numbers nor categories: 'when' "
                                        r"\(datetime64.*; every column must be numeric, boolean or categorical$"):
        mg.Dataset(df, np.zeros(30))
    with pytest.raises(TypeError, match=r"'name' \(.*\); every column must be numeric, boolean or categorical; a "
                                        r"column of categories is split on as such when it is a pandas 'category' "
                                        r"column \(df\[column\].astype\('category'\)\)$"):
        mg.GroveRegressor(n_estimators=2).fit(pd.DataFrame({"name": list("ab") * 15}), np.zeros(30))


# ---------------------------------------------------------------------- model files
@pytest.fixture(scope="module")
def model(mc):
    Xtr, ytr, _, _ = mc
    X = Xtr.copy()
    X[::7, 2] = np.nan
    return mg.train({"objective": "multiclass", "num_leaves": 7}, mg.Dataset(X, ytr), 5)


def test_save_load_roundtrip_is_exact(model, mc, tmp_path):
    _, _, Xte, _ = mc
    Xte = Xte.copy()
    Xte[::3, 2] = np.nan
    path = tmp_path / "m.json"
    model.save_model(path)
    loaded = mg.Booster(model_file=path)
    np.testing.assert_array_equal(loaded.predict(Xte), model.predict(Xte))
    assert loaded.num_trees() == model.num_trees() and loaded.objective == "multiclass"
    assert json.loads(path.read_text())["version"] == 1
    assert [p.name for p in tmp_path.iterdir()] == ["m.json"]  # no temporary file left behind


def test_truncated_model_file_is_refused(model, tmp_path):
    path = tmp_path / "m.json"
    model.save_model(path)
    text = path.read_text()
    path.write_text(text[: len(text) // 2])
    with pytest.raises(ValueError, match="is not valid JSON \\(truncated"):
        mg.Booster(model_file=path)


def test_model_paths_that_are_folders_or_lack_one_are_named(model, tmp_path):
    with pytest.raises(FileNotFoundError, match=r"cannot write .*m.json: the folder .*missing does not exist"):
        model.save_model(tmp_path / "missing" / "m.json")
    with pytest.raises(IsADirectoryError, match="it is a folder, not a file name"):
        model.save_model(tmp_path)
    with pytest.raises(IsADirectoryError, match="is a folder, not a model file"):
        mg.Booster(model_file=tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_edited_model_file_is_refused(model, tmp_path):
    path = tmp_path / "m.json"
    model.save_model(path)
    doc = json.loads(path.read_text())
    doc["model"]["trees"][0]["leaf_value"][0][0] += 1.0
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="fails its sha256 checksum"):
        mg.Booster(model_file=path)


def test_structurally_broken_model_is_refused_even_with_a_valid_checksum(model):
    import hashlib
    doc = json.loads(model.model_to_string())
    doc["model"]["trees"][0]["left_child"][0] = 0  # a cycle
    canon = json.dumps(doc["model"], sort_keys=True, separators=(",", ":"))
    doc["sha256"] = hashlib.sha256(canon.encode()).hexdigest()
    with pytest.raises(ValueError, match="tree 0: node 0 has child 0"):
        mg.Booster(model_str=json.dumps(doc))
    doc["version"] = 99
    with pytest.raises(ValueError, match="format version 99, newer"):
        mg.Booster(model_str=json.dumps(doc))
    with pytest.raises(ValueError, match="not a multigrove.booster model"):
        mg.Booster(model_str=json.dumps({"format": "other"}))


def test_failed_save_keeps_the_previous_file(model, tmp_path, monkeypatch):
    path = tmp_path / "m.json"
    model.save_model(path)
    before = path.read_bytes()

    def boom(*a, **k):
        raise OSError("disk full")
    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError, match="disk full"):
        model.save_model(path)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["m.json"]


def test_missing_model_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        mg.Booster(model_file=tmp_path / "nope.json")
