"""Rung 1 for the TreeSHAP path kernels: the unwound sums of every path element at once (the leaf's
step) against unwinding each element alone and summing what is left."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from multigrove.kernels.shap import _extend, _unwind, _unwound_sums


@settings(max_examples=40, deadline=None)
@given(length=st.integers(2, 14), seed=st.integers(0, 2**16))
def test_unwound_sums_equal_unwinding_each_element(length, seed):
    rng = np.random.default_rng(seed)
    size = length + 2
    reciprocal = np.concatenate([[0.0], 1.0 / np.arange(1, size + 1)])
    feature, zero, one, weight = np.zeros(size, np.int64), np.zeros(size), np.zeros(size), np.zeros(size)
    # the walk's path: the root's element (1, 1), then an element per split with the row's side (one 0 or 1)
    _extend(feature, zero, one, weight, 0, 0, 1.0, 1.0, -1, reciprocal)
    for k in range(1, length):
        _extend(feature, zero, one, weight, 0, k, rng.uniform(0.05, 1.0), float(rng.integers(2)), k, reciprocal)
    sums = np.full(size, np.nan)
    _unwound_sums(zero, one, weight, 0, length, reciprocal, np.empty((3, size)), np.empty(size, bool), sums)
    for i in range(1, length):  # the twin: unwind element i from a copy, sum the weights left
        f, z, o, w = feature.copy(), zero.copy(), one.copy(), weight.copy()
        _unwind(f, z, o, w, 0, length, i, reciprocal)
        np.testing.assert_allclose(sums[i], w[: length - 1].sum(), rtol=1e-12, atol=1e-15)
