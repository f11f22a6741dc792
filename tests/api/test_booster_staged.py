"""Staged prediction: start_iteration ranges add up to the whole model's raw score."""
import numpy as np
import pytest

import multigrove as mg
from multigrove.datasets import make_multioutput_regression


@pytest.fixture(scope="module")
def booster():
    X, Y = make_multioutput_regression(600, 8, 3, seed=2)
    return X, mg.train({"num_leaves": 7, "verbosity": -1}, mg.Dataset(X, Y), 6)


def test_consecutive_ranges_add_up_to_the_whole_model(booster):
    X, bst = booster
    staged = bst.predict(X, raw_score=True, num_iteration=1)
    for start in range(1, 6):
        staged = staged + bst.predict(X, raw_score=True, start_iteration=start, num_iteration=1)
        np.testing.assert_allclose(staged, bst.predict(X, raw_score=True, num_iteration=start + 1),
                                   rtol=1e-6, atol=1e-6)
    tail = bst.predict(X, raw_score=True, start_iteration=2)
    np.testing.assert_allclose(bst.predict(X, raw_score=True, num_iteration=2) + tail, bst.predict(X, raw_score=True),
                               rtol=1e-6, atol=1e-6)
    assert bst.predict(X, pred_leaf=True, start_iteration=4).shape == (X.shape[0], 2)


@pytest.mark.parametrize("start", [-1, 7, 1.5])
def test_a_start_iteration_outside_the_model_is_refused(booster, start):
    X, bst = booster
    with pytest.raises((ValueError, TypeError), match="start_iteration"):
        bst.predict(X, start_iteration=start)
