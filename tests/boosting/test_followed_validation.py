"""A validation set's scores from its rows' leaves found by the builder's partitions (TrainingShard.follow) equal
the walk down each finished tree, whatever the tree shape, the sample and the kinds of features."""
import numpy as np
import pytest
import scipy.sparse as sp

import multigrove as mg
from multigrove.boosting import engine
from multigrove.boosting import shard as shards


def _data(rng, n, sparse=False):
    X = rng.normal(size=(n, 8))
    X[rng.random(X.shape) < 0.05] = np.nan
    if sparse:  # mostly zeros: sparse features and bundles in the store
        X[rng.random(X.shape) < 0.9] = 0.0
        X[:, :4] = rng.normal(size=(n, 4))
    Y = np.column_stack([np.nan_to_num(X[:, 0]) + rng.normal(scale=0.3, size=n),
                         np.nan_to_num(X[:, 1] * X[:, 2]) + rng.normal(scale=0.3, size=n)])
    return (sp.csr_matrix(np.nan_to_num(X)) if sparse else X), Y


def _curves(params, X, Y, Xv, Yv, rounds=15):
    result: dict = {}
    train = mg.Dataset(X, Y)
    mg.train(params, train, rounds, valid_sets=[mg.Dataset(Xv, Yv, reference=train)], valid_names=["v"],
             callbacks=[mg.record_evaluation(result)])
    return result["v"]


@pytest.mark.parametrize("params, sparse, n_valid", [
    ({}, False, 300),
    ({"growth_policy": "depthwise", "max_depth": 4}, False, 300),
    ({"growth_policy": "symmetric", "max_depth": 3}, False, 300),
    ({"multi_strategy": "one_vs_all"}, False, 300),
    ({"leaf_sparsity": 1}, False, 300),
    ({"data_sample_strategy": "goss", "learning_rate": 0.5}, False, 300),
    ({"bagging_fraction": 0.5, "bagging_freq": 1}, False, 300),
    ({}, True, 300),
    ({}, False, 40_000),  # partitioned in parallel (PARALLEL_PARTITION_MIN_ROWS)
])
def test_followed_validation_scores_equal_walking_the_trees(rng, monkeypatch, params, sparse, n_valid):
    X, Y = _data(rng, 1500 + n_valid, sparse)
    params = {"objective": "regression", "num_leaves": 15, "min_data_in_leaf": 5, "metric_per_output": True,
              "num_threads": 2, **params}
    args = (params, X[:1500], Y[:1500], X[1500:], Y[1500:])
    walks = []
    monkeypatch.setattr(shards, "predict_trees_into", lambda *a: walks.append(1))
    monkeypatch.setattr(engine, "walks_trees", lambda *a: False)  # every split partitions the validation rows
    followed = _curves(*args)
    assert not walks  # no tree was walked
    monkeypatch.undo()
    monkeypatch.setattr(shards.TrainingShard, "follow", lambda self, shard: None)  # every round walks the trees
    walked = _curves(*args)
    assert followed.keys() == walked.keys() and len(followed["l2"]) == 15
    for metric in followed:
        np.testing.assert_array_equal(followed[metric], walked[metric])


@pytest.mark.parametrize("n_rows, sparse, n_valid, walks", [
    (9000, False, 300, True),    # two threads, a dense store, 300 rows against 126 splits a round: walked
    (9000, False, 7000, False),  # more rows than WALK_MAX_ROWS_PER_SPLIT a split: followed
    (9000, True, 300, False),    # a store with a CSR part: followed
    (4000, False, 300, False),   # 4,000 x 8 cells: a fit on one thread (engine.fit_threads) follows
])
def test_a_small_dense_validation_set_walks_the_trees(rng, monkeypatch, n_rows, sparse, n_valid, walks):
    """engine.start_training lets a validation set walk each round's trees where shard.walks_trees says a walk
    costs less than a partition a split; the metrics are the same either way."""
    X, Y = _data(rng, n_rows + n_valid, sparse)
    params = {"objective": "regression", "num_threads": 2, "metric_per_output": True}
    args = (params, X[:n_rows], Y[:n_rows], X[n_rows:], Y[n_rows:], 5)
    walked_trees = []
    walk = shards.predict_trees_into
    monkeypatch.setattr(shards, "predict_trees_into", lambda *a: (walked_trees.append(1), walk(*a)))
    chosen = _curves(*args)
    assert bool(walked_trees) == walks
    monkeypatch.setattr(engine, "walks_trees", lambda *a: not walks)
    other = _curves(*args)
    assert chosen.keys() == other.keys() and len(chosen["l2"]) == 5
    for metric in chosen:
        np.testing.assert_array_equal(chosen[metric], other[metric])


def test_followed_validation_with_categories_and_classes(rng, monkeypatch):
    X = rng.integers(0, 12, size=(2500, 3)).astype(np.float64)
    X = np.column_stack([X, rng.normal(size=2500)])
    y = (X[:, 0] % 3 + (X[:, 3] > 0)).astype(int) % 3
    params = {"objective": "multiclass", "num_class": 3, "categorical_feature": [0, 1, 2], "num_leaves": 15}
    args = (params, X[:2000], y[:2000], X[2000:], y[2000:])
    followed = _curves(*args)
    monkeypatch.setattr(shards.TrainingShard, "follow", lambda self, shard: None)
    np.testing.assert_array_equal(followed["multi_logloss"], _curves(*args)["multi_logloss"])


def test_the_followed_metric_is_the_metric_of_the_predictions(rng):
    X, Y = _data(rng, 600)
    train = mg.Dataset(X[:500], Y[:500])
    valid = mg.Dataset(X[500:], Y[500:], reference=train)
    booster = mg.train({"objective": "regression", "num_leaves": 7}, train, 3, valid_sets=[valid])
    predicted = booster.predict(X[500:])
    result: dict = {}
    mg.train({"objective": "regression", "num_leaves": 7, "metric": "l2"}, mg.Dataset(X[:500], Y[:500]), 3,
             valid_sets=[mg.Dataset(X[500:], Y[500:])], callbacks=[mg.record_evaluation(result)])
    np.testing.assert_allclose(result["valid_0"]["l2"][-1], np.mean((predicted - Y[500:]) ** 2), rtol=1e-9)
