"""Rung 5: one tree on pre-binned single-output data equals LightGBM's tree."""
import numpy as np
import pytest

import multigrove as mg

lgb = pytest.importorskip("lightgbm")


def _lgb_splits(bst):
    """(feature, threshold, default_left, split_gain) per split, in LightGBM's split order."""
    out = {}

    def walk(node):
        if "split_index" in node:
            out[node["split_index"]] = (node["split_feature"], node["threshold"], node["default_left"],
                                        node["split_gain"])
            walk(node["left_child"])
            walk(node["right_child"])
    walk(bst.dump_model()["tree_info"][0]["tree_structure"])
    return [out[i] for i in range(len(out))]


def _prebinned(rng, n, m, levels, with_nan):
    X = rng.integers(0, levels, size=(n, m)).astype(np.float64)
    y = (np.sin(X[:, 0] / 3.0) + 0.3 * X[:, 1] - 0.2 * (X[:, 2] > 5) * X[:, 3]
         + rng.normal(scale=0.5, size=n))
    if with_nan:
        X[rng.random((n, m)) < 0.1] = np.nan
        y = y + np.where(np.isnan(X[:, 1]), 2.0, 0.0)
    return X, y


@pytest.mark.parametrize("with_nan", [False, True])
@pytest.mark.parametrize("lambda_l2", [0.0, 1.0])
def test_one_tree_equals_lightgbm(rng, with_nan, lambda_l2):
    X, y = _prebinned(rng, 3000, 6, 12, with_nan)
    common = dict(num_leaves=12, min_data_in_leaf=20, min_sum_hessian_in_leaf=1e-3, lambda_l2=lambda_l2,
                  learning_rate=0.3, max_bin=255, seed=0)
    ref = lgb.train(dict(common, objective="regression", verbose=-1, num_threads=1, min_data_in_bin=1,
                         deterministic=True, force_row_wise=True), lgb.Dataset(X, y), num_boost_round=1)
    bst = mg.train(dict(common, objective="regression", num_threads=1), mg.Dataset(X, y), num_boost_round=1)

    theirs = _lgb_splits(ref)
    tree = bst.trees[0]
    assert tree.n_internal == len(theirs) == 11
    distinct = np.unique(X[~np.isnan(X)])
    for i, (f, thr, _, gain) in enumerate(theirs):
        assert tree.split_feature[i] == f, f"split {i}: feature {tree.split_feature[i]} vs LightGBM {f}"
        # same cut between the same two neighbouring values (LightGBM may place it elsewhere in the gap)
        assert np.searchsorted(distinct, tree.threshold[i]) == np.searchsorted(distinct, thr), f"split {i}"
        assert tree.split_gain[i] == pytest.approx(gain, rel=1e-5, abs=1e-6)
    # identical predictions (so identical leaf partitions and leaf values up to float error)
    np.testing.assert_allclose(bst.predict(X), ref.predict(X), rtol=0, atol=1e-6)
    ours = bst.predict(X, pred_leaf=True)[:, 0]
    theirs_leaf = ref.predict(X, pred_leaf=True)[:, 0]
    pairs = set(zip(ours.tolist(), theirs_leaf.tolist()))
    assert len(pairs) == len(set(ours.tolist())) == len(set(theirs_leaf.tolist())) == 12
