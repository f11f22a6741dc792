"""The mistakes of a first hour with the library: each gets an error or a warning that names both sides."""
import json
import warnings

import numpy as np
import pytest

import multigrove as mg
from multigrove import MultigroveWarning


@pytest.fixture
def data(rng):
    X = rng.normal(size=(300, 5))
    return X, X[:, 0] + 0.1 * rng.normal(size=300)


@pytest.mark.parametrize("columns", [4, 10])
def test_a_validation_set_of_another_width_is_refused_by_name(data, columns, rng):
    """(It went to a kernel before: an IndexError for fewer columns, a crash of the interpreter for more.)"""
    X, y = data
    Xv = rng.normal(size=(50, columns))
    with pytest.raises(ValueError, match=f"validation set 'valid_0' has {columns} features but train_set has 5: "
                                         "a validation set must have the training set's columns"):
        mg.train({}, mg.Dataset(X, y), 2, valid_sets=[mg.Dataset(Xv, y[:50])])


def test_a_validation_set_with_other_named_columns_is_refused(data):
    pd = pytest.importorskip("pandas")
    X, y = data
    train = pd.DataFrame(X, columns=list("abcde"))
    valid = pd.DataFrame(X, columns=list("abcdz"))
    with pytest.raises(ValueError, match=r"validation set 'valid_0''s columns are not the features train_set was "
                                         r"trained on: \['e'\] missing, \['z'\] not known"):
        mg.train({}, mg.Dataset(train, y), 2, valid_sets=[mg.Dataset(valid, y)])


def test_a_validation_set_with_more_outputs_or_unknown_classes_is_refused(data):
    X, y = data
    with pytest.raises(ValueError, match="validation set 'valid_0' has 2 outputs, the training set 1"):
        mg.train({}, mg.Dataset(X, y), 2, valid_sets=[mg.Dataset(X, np.column_stack([y, y]))])
    classes = (X[:, 0] > 0).astype(int) + (X[:, 1] > 0)
    with pytest.raises(ValueError, match=r"label for objective 'multiclass' must be in \[0, num_class\) = \[0, 3\)"):
        mg.train({"objective": "multiclass"}, mg.Dataset(X, classes), 2, valid_sets=[mg.Dataset(X, classes + 1)])


@pytest.mark.parametrize("params,match", [
    ({"num_class": 3}, "num_class=3 applies to objective 'multiclass' .* got objective 'regression'"),
    ({"num_class": 3, "objective": "binary"},
     "num_class=3 applies to objective 'multiclass' .* got objective 'binary'"),
    ({"num_outputs": 2}, "num_outputs=2 applies to a custom objective, got objective 'regression'"),
])
def test_a_parameter_of_another_objective_is_refused(data, params, match):
    X, y = data
    with pytest.raises(ValueError, match=match):
        mg.train(params, mg.Dataset(X, (y > 0) * 1.0), 2)


@pytest.mark.parametrize("params,match", [
    ({"sketch": "top_outputs"}, r"sketch='top_outputs' has no effect: splits of one-output trees are scored on their "
                                r"own gradient"),
    ({"top_rate": 0.3}, r"top_rate=0.3 has no effect: it sets GOSS's sample, and data_sample_strategy is 'bagging'"),
    ({"other_rate": 0.2}, r"other_rate=0.2 has no effect"),
    ({"bagging_freq": 2}, r"bagging_freq=2 has no effect with bagging_fraction=1.0"),
    ({"eval_at": [3]}, r"eval_at=\[3\] has no effect: it sets the k of the ranking metrics .* the metrics are "
                       r"\['l2'\]"),
    ({"metric_per_output": True}, "metric_per_output=True has no effect: the model has one output"),
])
def test_a_parameter_without_effect_warns_with_the_reason(data, params, match):
    X, y = data
    with pytest.warns(MultigroveWarning, match=match):
        mg.train(params, mg.Dataset(X, y), 2)


def test_parameters_that_act_do_not_warn(data):
    X, y = data
    Y = np.column_stack([y, -y, y ** 2, X[:, 1]])
    with warnings.catch_warnings():
        warnings.simplefilter("error", MultigroveWarning)
        mg.train({"sketch": "top_outputs", "sketch_k": 2}, mg.Dataset(X, Y), 2)
        mg.train({"data_sample_strategy": "goss", "top_rate": 0.3, "other_rate": 0.2}, mg.Dataset(X, y), 2)
        mg.train({"bagging_fraction": 0.5, "bagging_freq": 2, "metric_per_output": True}, mg.Dataset(X, Y), 2)
        mg.train({"objective": "multilabel", "metric": "precision_at_k", "eval_at": [2]},
                 mg.Dataset(X, (Y > 0) * 1.0), 2)


def test_probabilities_of_a_regressor_say_where_they_come_from(data):
    X, y = data
    reg = mg.GroveRegressor(n_estimators=2).fit(X, y)
    assert not hasattr(reg, "predict_proba")
    with pytest.raises(AttributeError, match="GroveRegressor has no predict_proba: a regressor predicts values"):
        reg.predict_proba(X)


def test_wrong_label_shapes_are_named(data):
    X, y = data
    with pytest.raises(ValueError, match=r"y must be 1-D or 2-D, got shape \(300, 2, 2\)"):
        mg.GroveRegressor(n_estimators=2).fit(X, np.zeros((300, 2, 2)))
    with pytest.raises(ValueError, match="y has 299 rows but X has 300 rows"):
        mg.GroveRegressor(n_estimators=2).fit(X, y[:-1])
    with pytest.raises(ValueError, match="Unknown label type: continuous"):
        mg.GroveClassifier(n_estimators=2).fit(X, y)


def test_a_model_file_of_a_newer_version_or_another_format_is_refused(data, tmp_path):
    X, y = data
    path = tmp_path / "m.json"
    mg.train({}, mg.Dataset(X, y), 2).save_model(path)
    doc = json.loads(path.read_text())
    doc["version"] = 99
    newer = tmp_path / "newer.json"
    newer.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="has format version 99, newer than this multigrove reads .* upgrade"):
        mg.Booster(model_file=newer)
    doc["format"] = "lightgbm"
    other = tmp_path / "other.json"
    other.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="is not a multigrove.booster model"):
        mg.Booster(model_file=other)


def test_predict_on_the_command_line_takes_the_model_columns_of_a_file_with_targets(data, tmp_path, capsys):
    pytest.importorskip("pyarrow")
    from multigrove.cli import main
    X, y = data
    header = "a,b,c,d,e,target"
    train = tmp_path / "train.csv"
    np.savetxt(train, np.column_stack([X, y]), delimiter=",", header=header, comments="")
    model, out = tmp_path / "m.json", tmp_path / "p.csv"
    assert main(["train", "--data", str(train), "--rounds", "5", "--model", str(model)]) == 0
    capsys.readouterr()
    assert main(["predict", "--model", str(model), "--data", str(train), "--out", str(out)]) == 0
    assert "using the model's 5 feature columns; left out ['target']" in capsys.readouterr().err
    np.testing.assert_allclose(np.loadtxt(out), mg.Booster(model_file=model).predict(X), rtol=1e-8)


def test_synthetic_data_with_too_few_features_is_refused_by_name():
    from multigrove.datasets import make_multioutput_regression
    with pytest.raises(ValueError, match="n_features must be >= 6"):
        make_multioutput_regression(100, 4, 2)
    with pytest.raises(ValueError, match="n_features must be >= 8"):
        make_multioutput_regression(100, 7, 2, rank=5)
