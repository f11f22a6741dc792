"""Symmetric (oblivious) trees, random strength and the Bayesian bootstrap."""
import numpy as np
import pytest
import scipy.sparse as sp

import multigrove as mg
from multigrove.boosting.sampling import bayesian_weights
from multigrove.boosting.tree import stack_oblivious, stack_trees
from multigrove.kernels.predict import predict_oblivious, predict_raw

from ..kernels import naive


def _data(n=1500, targets=3, seed=0, missing=0.05):
    X, Y = mg.datasets.make_multioutput_regression(n_rows=n, n_features=8, n_targets=targets, seed=seed)
    rng = np.random.default_rng(seed)
    X[rng.random(X.shape) < missing] = np.nan
    return X, Y


def _train(params, X, Y, rounds=15):
    return mg.train(dict(objective="regression", verbosity=-1, **params), mg.Dataset(X, Y), rounds)


def _levels(tree):
    """(feature, threshold, default_left) of every node, level by level, walking the tree."""
    level, out = [0], []
    while level:
        out.append({(int(tree.split_feature[n]), float(tree.threshold[n]), bool(tree.default_left[n]))
                    for n in level})
        level = [int(c) for n in level for c in (tree.left_child[n], tree.right_child[n]) if c >= 0]
    return out


@pytest.mark.parametrize("max_depth, num_leaves, leaves", [(-1, None, 64), (3, None, 8), (6, 20, 16)])
def test_every_level_shares_one_split(max_depth, num_leaves, leaves):
    X, Y = _data()
    params = dict(growth_policy="symmetric", max_depth=max_depth, min_data_in_leaf=1)
    if num_leaves:
        params["num_leaves"] = num_leaves
    bst = _train(params, X, Y)
    for tree in bst.trees:
        assert all(len(level) == 1 for level in _levels(tree))  # one split per level
        assert tree.n_leaves == leaves
        assert tree.depth() == int(np.log2(leaves))
        assert tree.oblivious_levels() is not None


def test_symmetric_predict_kernel_equals_the_tree_walk():
    X, Y = _data(seed=1)
    bst = _train(dict(growth_policy="symmetric", max_depth=4), X, Y, rounds=10)
    X_test = _data(n=300, seed=2, missing=0.2)[0]
    stack = stack_trees(bst.trees)
    obl = stack_oblivious(bst.trees)
    assert obl is not None
    for rows in (X_test, sp.csr_matrix(np.nan_to_num(X_test))):
        if sp.issparse(rows):
            args = (np.zeros((0, rows.shape[1])), rows.indptr.astype(np.int64), rows.indices, rows.data)
            dense = rows.toarray()
        else:
            args = (rows, np.zeros(0, np.int64), np.zeros(0, np.int32), np.zeros(0))
            dense = rows
        walked = np.zeros((dense.shape[0], Y.shape[1]))
        predict_raw(*args, stack, walked)
        fast = np.zeros_like(walked)
        predict_oblivious(*args, obl, stack, fast)
        np.testing.assert_array_equal(fast, walked)
        # and the naive walk of one tree agrees with the leaf the level arrays give
        tree = bst.trees[3]
        feats, thr, dleft, leaf_of_index = tree.oblivious_levels()
        for x in dense[:50]:
            expected = naive.tree_leaf(x, tree.split_feature, tree.threshold, tree.default_left, tree.left_child,
                                       tree.right_child)
            index = sum(int(not dleft[lv] if np.isnan(x[feats[lv]]) else x[feats[lv]] > thr[lv]) << lv
                        for lv in range(len(feats)))
            assert leaf_of_index[index] == expected


def test_symmetric_model_round_trips_and_predicts_as_before(tmp_path):
    X, Y = _data(seed=3)
    bst = _train(dict(growth_policy="symmetric"), X, Y)
    path = tmp_path / "sym.json"
    bst.save_model(path)
    loaded = mg.Booster(model_file=path)
    np.testing.assert_array_equal(loaded.predict(X), bst.predict(X))
    # a forest that is not symmetric everywhere falls back to the tree walk
    assert stack_oblivious(_train({}, X, Y, rounds=3).trees) is None


@pytest.mark.parametrize("policy", ["leafwise", "depthwise", "symmetric"])
def test_random_strength_is_seeded(policy):
    X, Y = _data(seed=4)
    base = dict(growth_policy=policy, max_depth=4 if policy != "leafwise" else -1)
    a = _train(dict(base, random_strength=2.0, seed=7), X, Y).predict(X)
    b = _train(dict(base, random_strength=2.0, seed=7), X, Y).predict(X)
    c = _train(dict(base, random_strength=2.0, seed=8), X, Y).predict(X)
    plain = _train(dict(base, seed=7), X, Y).predict(X)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    assert not np.array_equal(a, plain)


def test_random_strength_zero_changes_nothing():
    X, Y = _data(seed=5)
    np.testing.assert_array_equal(_train(dict(random_strength=0.0), X, Y).predict(X), _train({}, X, Y).predict(X))


def test_bayesian_bootstrap_is_seeded_and_weights_rows():
    X, Y = _data(seed=6)
    a = _train(dict(bagging_temperature=1.0, seed=1), X, Y).predict(X)
    b = _train(dict(bagging_temperature=1.0, seed=1), X, Y).predict(X)
    c = _train(dict(bagging_temperature=1.0, seed=2), X, Y).predict(X)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    assert not np.array_equal(a, _train(dict(seed=1), X, Y).predict(X))
    # the first tree's root sums are the weighted sums: its leaf counts still count rows
    bst = _train(dict(bagging_temperature=1.0), X, Y, rounds=1)
    assert bst.trees[0].leaf_count.sum() == X.shape[0]


def test_bayesian_weights_follow_their_law():
    rng = np.random.default_rng(0)
    w1 = bayesian_weights(200_000, 1.0, rng)
    assert w1.dtype == np.float32 and np.all(w1 >= 0)
    assert abs(w1.mean() - 1.0) < 0.01 and abs(w1.var() - 1.0) < 0.03  # Exp(1)
    w2 = bayesian_weights(200_000, 2.0, rng)
    assert abs(w2.mean() - 2.0) < 0.03  # E[E^2] = 2 for E ~ Exp(1)
    np.testing.assert_allclose(bayesian_weights(10, 1e-12, rng), 1.0, rtol=1e-6)


@pytest.mark.parametrize("params, message", [
    (dict(growth_policy="symmetric", max_depth=17), "max_depth must be <= 16"),
    (dict(random_strength=-1.0), "random_strength"),
    (dict(bagging_temperature=-0.5), "bagging_temperature"),
    (dict(bagging_temperature=49), "bagging_temperature must be <= 10"),  # weights of 1e76 made NaN trees
    (dict(bagging_temperature=1.0, data_sample_strategy="goss"), "bagging_temperature cannot be used"),
])
def test_bad_settings_name_the_parameter(params, message):
    X, Y = _data(n=100)
    with pytest.raises(ValueError, match=message):
        _train(params, X, Y)


def test_symmetric_trees_train_multiclass_and_sparse_leaves():
    X, _ = _data(n=800, seed=7)
    y = (np.nan_to_num(X[:, 0]) > 0).astype(int) + (np.nan_to_num(X[:, 1]) > 0.5).astype(int)
    clf = mg.GroveClassifier(n_estimators=20, growth_policy="symmetric", max_depth=3, verbosity=-1).fit(X, y)
    assert (clf.predict(X) == y).mean() > 0.8
    Y = np.eye(6)[np.random.default_rng(0).integers(0, 6, 800)]
    bst = mg.train(dict(objective="multilabel", growth_policy="symmetric", max_depth=3, leaf_sparsity=2,
                        verbosity=-1), mg.Dataset(X, Y), 5)
    assert all(t.leaf_cols.shape == (8, 2) for t in bst.trees)
