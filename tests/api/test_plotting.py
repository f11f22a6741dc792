"""Plots render to PNG with the Agg backend and draw what they say."""
import numpy as np
import pytest

import multigrove as mg

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from multigrove import plotting  # noqa: E402


@pytest.fixture(scope="module")
def multilabel():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 6))
    Y = (X[:, :4] + 0.5 * rng.normal(size=(600, 4)) > 0.3).astype(float)
    train = mg.Dataset(X[:400], Y[:400], feature_names=[f"word_{i}" for i in range(6)])
    valid = mg.Dataset(X[400:], Y[400:], reference=train)
    booster = mg.train({"objective": "multilabel", "num_leaves": 6, "metric": ["multilabel_logloss"]}, train, 15,
                       valid_sets=[train, valid], valid_names=["train", "valid"])
    return booster, X[400:], Y[400:]


def _png(ax, tmp_path):
    path = tmp_path / "plot.png"
    ax.figure.savefig(path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    plt.close(ax.figure)


def test_plot_metric_from_booster_and_dict(multilabel, tmp_path):
    booster, _, _ = multilabel
    ax = plotting.plot_metric(booster)
    assert ax.get_xlabel() == "Iterations" and ax.get_ylabel() == "multilabel_logloss"
    assert [line.get_label() for line in ax.get_lines()] == ["train", "valid"]
    assert len(ax.get_lines()[1].get_ydata()) == 15
    np.testing.assert_allclose(ax.get_lines()[1].get_ydata(), booster.evals_result["valid"]["multilabel_logloss"])
    _png(ax, tmp_path)
    fig, given = plt.subplots()
    ax = plotting.plot_metric(booster.evals_result, dataset_names=["valid"], ax=given)
    assert ax is given and len(ax.get_lines()) == 1
    plt.close(fig)
    with pytest.raises(ValueError, match="'l2' was not recorded"):
        plotting.plot_metric(booster, metric="l2")


def test_plot_importance(multilabel, tmp_path):
    booster, _, _ = multilabel
    ax = plotting.plot_importance(booster, max_num_features=3)
    assert len(ax.patches) == 3
    assert ax.get_xlabel() == "Feature importance (split)"
    split = booster.feature_importance("split")
    top = [t.get_text() for t in ax.get_yticklabels()][::-1]
    assert top == [f"word_{i}" for i in np.argsort(-split, kind="stable")[:3]]
    widths = sorted(p.get_width() for p in ax.patches)[::-1]
    assert widths == sorted(split, reverse=True)[:3]
    _png(ax, tmp_path)
    ax = plotting.plot_importance(booster, importance_type="gain", max_num_features=None)
    assert len(ax.patches) == int((booster.feature_importance("gain") > 0).sum())
    plt.close(ax.figure)


@pytest.mark.parametrize("params", [{"num_leaves": 6}, {"num_leaves": 6, "leaf_sparsity": 2}])
def test_plot_tree_draws_every_node_and_leaf(multilabel, params, tmp_path):
    _, X, Y = multilabel
    booster = mg.train({"objective": "multilabel", **params}, mg.Dataset(X, Y), 3)
    tree = booster.trees[1]
    ax = plotting.plot_tree(booster, tree_index=1, show_outputs=2, output_names=["a", "b", "c", "d"])
    boxes = [t for t in ax.texts if t.get_bbox_patch() is not None]
    assert len(boxes) == tree.n_internal + tree.n_leaves
    leaf_texts = [t.get_text() for t in boxes if t.get_text().startswith("leaf")]
    assert len(leaf_texts) == tree.n_leaves
    # each leaf lists its two largest values by magnitude
    first = tree.leaf_value[0]
    cols = tree.columns()[0]
    best = cols[np.argsort(-np.abs(first), kind="stable")[0]]
    text0 = next(t for t in leaf_texts if t.startswith("leaf 0 "))
    assert text0.splitlines()[1].startswith("abcd"[best] + ":")
    assert len([p for p in ax.texts if p.get_text() in ("yes", "no")]) == 2 * tree.n_internal
    _png(ax, tmp_path)
    with pytest.raises(ValueError, match="tree_index"):
        plotting.plot_tree(booster, tree_index=3)


def test_plot_precision_at_k(multilabel, tmp_path):
    booster, X, Y = multilabel
    clf = mg.GroveClassifier(n_estimators=10, num_leaves=6).fit(X, Y)
    ax = plotting.plot_precision_at_k([booster, clf], X, Y, k=3, labels=["booster", "estimator"])
    assert ax.get_xlabel() == "k" and ax.get_ylabel() == "precision@3"[:-2] + "@k"
    lines = ax.get_lines()
    assert [line.get_label() for line in lines] == ["booster", "estimator"]
    np.testing.assert_allclose(lines[0].get_ydata(), mg.xmc.metrics.precision_at_k(Y, booster.predict(X), 3))
    _png(ax, tmp_path)


def test_estimator_and_bad_input():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 3))
    reg = mg.GroveRegressor(n_estimators=5, num_leaves=4).fit(X, X[:, 0], eval_set=[(X, X[:, 0])])
    ax = plotting.plot_metric(reg)
    assert ax.get_lines()
    plt.close(ax.figure)
    with pytest.raises(TypeError, match="Booster"):
        plotting.plot_importance(object())
    with pytest.raises(ValueError, match="no evaluation"):
        plotting.plot_metric(mg.train({}, mg.Dataset(X, X[:, 0]), 2))
