"""Rung 4: split gains on small tables computed by hand; a hand-made tree is recovered exactly."""
import numpy as np
import pytest

import multigrove as mg
from multigrove.kernels.split import node_score

from ..kernels.helpers import scan, scan_params


def test_two_output_gain_by_hand():
    # one feature, 3 value bins (+ missing bin), two outputs, Hessians given, lambda = 1
    # bin:       0            1            2
    # G:   ( 2, -1)     (-1,  1)     (-3,  2)
    # H:   ( 1,  1)     ( 2,  1)     ( 1,  2)
    # count:   3            4            3
    hist = np.array([[2, -1, 1, 1, 3], [-1, 1, 2, 1, 4], [-3, 2, 1, 2, 3], [0, 0, 0, 0, 0]], dtype=float)
    total = hist.sum(axis=0)  # G = (-2, 2), H = (4, 4), n = 10
    offsets = np.array([0, 4])
    g, b, d = scan(hist, offsets, total, scan_params(2, 2, 1, 1.0, 4, lam=1.0))
    # t=0: left G=(2,-1),H=(1,1): 4/2 + 1/2 = 2.5 ; right G=(-4,3),H=(3,3): 16/4 + 9/4 = 6.25 -> 8.75
    # t=1: left G=(1,0),H=(3,2): 1/4 + 0 = 0.25 ; right G=(-3,2),H=(1,2): 9/2 + 4/3 = 5.8333 -> 6.0833
    assert b[0] == 0 and not d[0]
    assert g[0] == pytest.approx(8.75)
    parent = node_score(total, scan_params(2, 2, 1, 1.0, 4, lam=1.0))   # 4/5 + 4/5 = 1.6
    assert parent == pytest.approx(1.6)


def test_missing_values_direction_by_hand():
    # bins 0,1 and a missing bin holding a large positive gradient that belongs with bin 1
    hist = np.array([[-4, 2, 2], [3, 2, 2], [5, 2, 2]], dtype=float)  # columns: G, H, count
    total = hist.sum(axis=0)
    g, b, d = scan(hist, [0, 3], total, scan_params(1, 1, 1, 1.0, 2))
    # missing right: 16/2 + 64/4 = 24 ; missing left: 1/4 + 9/2 = 4.75
    assert (b[0], bool(d[0])) == (0, False) and g[0] == pytest.approx(24.0)


def test_hand_made_multi_output_tree_is_recovered_exactly():
    # tree: x0 <= 0.5 ? (x1 <= 0.5 ? A : B) : C with vector leaves of 2 outputs
    leaves = {"A": (1.0, -2.0), "B": (3.0, 0.5), "C": (-1.0, 4.0)}
    X = np.array([[a, b] for a in (0, 1) for b in (0, 1)] * 50, dtype=float)
    Y = np.array([leaves["A"] if r[0] == 0 and r[1] == 0 else leaves["B"] if r[0] == 0 else leaves["C"]
                  for r in X])
    bst = mg.train({"objective": "regression", "learning_rate": 1.0, "lambda_l2": 0.0, "min_data_in_leaf": 1,
                    "num_leaves": 8, "boost_from_average": False}, mg.Dataset(X, Y), num_boost_round=1)
    t = bst.trees[0]
    assert t.n_leaves == 3 and t.n_internal == 2
    assert list(t.split_feature) == [0, 1]
    np.testing.assert_allclose(t.threshold, [0.5, 0.5])
    np.testing.assert_allclose(sorted(map(tuple, t.leaf_value)), sorted(leaves.values()), atol=1e-12)
    np.testing.assert_allclose(bst.predict(X), Y, atol=1e-12)
