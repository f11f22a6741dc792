"""The builder runs a split's scan of its children in the split's own kernel call (kernels.split_step) where it
builds the child by feature groups; the trees are those of the split and the scan in two calls, bit for bit,
for every kind of scan, both growth policies, categorical features, random_strength's noise and a store with a
CSR part (its default bins derived in each group's task)."""
import numpy as np
import pytest

import multigrove as mg
from multigrove.boosting import builder as builders
from multigrove.boosting import grower as growers


def _data(rng, n, n_outputs, categorical=False, csr=False):
    X = rng.normal(size=(n, 10))
    X[rng.random(X.shape) < 0.03] = np.nan
    if csr:  # most features zero but in a few rows: a CSR part of the store, whose zero bins are derived
        X[:, 5:] = np.where(rng.random((n, 5)) < 0.1, rng.integers(1, 9, size=(n, 5)), 0.0)
    if categorical:
        X[:, 0] = rng.integers(0, 12, size=n)
    signal = np.nan_to_num(X[:, 1]) + np.nan_to_num(X[:, 2] * X[:, 3])
    Y = np.column_stack([signal + j * np.nan_to_num(X[:, 4 + j % 5]) + rng.normal(scale=0.3, size=n)
                         for j in range(n_outputs)])
    return X, Y


def _fit(params, X, y, rounds=8):
    booster = mg.train({"verbosity": -1, "num_threads": 2, **params}, mg.Dataset(X, y), rounds)
    return booster.model_to_string(), booster.predict(X)


@pytest.mark.parametrize("params, n_outputs, target", [
    ({"objective": "regression"}, 1, "regression"),                         # one output
    ({"objective": "regression"}, 6, "regression"),                         # the sketch's shared Hessian
    ({"objective": "regression", "sketch": "none", "leaf_sparsity": 2}, 4, "regression"),  # top-k leaves
    ({"objective": "multiclass", "num_class": 3, "sketch": "none"}, 1, "classes"),        # a Hessian per output
    ({"objective": "regression", "random_strength": 1.0, "seed": 3}, 3, "regression"),
    ({"objective": "regression", "growth_policy": "depthwise", "max_depth": 5}, 3, "regression"),
    ({"objective": "regression", "categorical_feature": [0]}, 2, "regression"),
    ({"objective": "regression"}, 3, "csr"),
])
def test_trees_are_those_of_two_calls(rng, monkeypatch, params, n_outputs, target):
    X, Y = _data(rng, 9000, n_outputs, categorical="categorical_feature" in params,  # two threads: 90,000 cells
                 csr=target == "csr")
    y = Y[:, 0] if n_outputs == 1 else Y
    if target == "classes":
        y = np.digitize(Y[:, 0], np.quantile(Y[:, 0], [1 / 3, 2 / 3]))
    steps = []
    kernel = builders.split_step_kernel
    monkeypatch.setattr(builders.LocalBuilder, "splits_ahead", 1)  # no batch of splits (test_split_batch_trees.py)
    monkeypatch.setattr(builders, "split_step_kernel", lambda p: (steps.append(1), kernel(p))[1])
    derived, split = [], builders.LocalBuilder.split

    def spy(self, *args):
        derived.append(self.tree_store.derived.shape[0] > 0)
        return split(self, *args)
    monkeypatch.setattr(builders.LocalBuilder, "split", spy)
    model, predicted = _fit(params, X, y)
    assert len(steps) > 20  # the splits of feature groups ran their scans in their own call
    assert any(derived) == (target == "csr")  # a store with derived default bins in the csr case only
    monkeypatch.setattr(growers.ChildScan, "fusable", lambda self, n_groups: False)
    steps.clear()
    two_calls, predicted_two = _fit(params, X, y)
    assert not steps
    assert model == two_calls
    np.testing.assert_array_equal(predicted, predicted_two)
