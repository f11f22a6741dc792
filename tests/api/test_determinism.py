"""Determinism: the same data, parameters and seed give bit-identical model files, across runs and,
with deterministic=True, across num_threads 1 and 2."""
import numpy as np
import pytest
import scipy.sparse as sp

import multigrove as mg


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20000, 12))
    X[rng.random(X.shape) < 0.3] = 0.0
    Y = np.column_stack([X[:, 0] + X[:, 1] ** 2, np.sin(X[:, 2]), X[:, 3] * X[:, 4], X[:, 5] > 0]).astype(float)
    return X, Y


CASES = {
    "one output": ({}, lambda X, Y: (X, Y[:, 0])),
    "vector leaves": ({}, lambda X, Y: (X, Y)),
    "sketch, GOSS, feature fraction": ({"sketch": "random_projection", "sketch_k": 2, "data_sample_strategy": "goss",
                                        "feature_fraction": 0.7}, lambda X, Y: (X, Y)),
    "bagging, k-sparse leaves": ({"bagging_fraction": 0.6, "bagging_freq": 1, "leaf_sparsity": 2},
                                 lambda X, Y: (X, Y)),
    "sparse X": ({}, lambda X, Y: (sp.csr_matrix(X), Y)),
    "multiclass one_vs_all": ({"objective": "multiclass", "num_class": 3, "multi_strategy": "one_vs_all"},
                              lambda X, Y: (X, (X[:, 0] > 0).astype(int) + (X[:, 1] > 0.5))),
}


@pytest.mark.parametrize("name", CASES)
def test_bit_identical_model_files(data, name):
    params, make = CASES[name]
    X, y = make(*data)
    files = [mg.train({**params, "num_leaves": 31, "num_threads": threads, "deterministic": True},
                      mg.Dataset(X, y), 8).model_to_string() for threads in (2, 2, 1)]
    assert files[0] == files[1], "two runs with the same seed differ"
    assert files[0] == files[2], "num_threads 1 and 2 give different models with deterministic=True"


def test_runs_repeat_without_deterministic_and_the_seed_matters(data):
    X, Y = data
    params = {"num_leaves": 31, "bagging_fraction": 0.5, "bagging_freq": 1}
    first, second = (mg.train(params, mg.Dataset(X, Y), 10).model_to_string() for _ in range(2))
    assert first == second
    assert mg.train({**params, "seed": 1}, mg.Dataset(X, Y), 10).model_to_string() != first


def test_run_settings_stay_out_of_the_model_file(data):
    X, Y = data
    booster = mg.train({"num_leaves": 7, "num_threads": 1, "verbosity": -1}, mg.Dataset(X[:500], Y[:500]), 2)
    assert "num_threads" not in booster.params and "verbosity" not in booster.params
    assert booster.params["deterministic"] is False
