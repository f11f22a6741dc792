"""Rung 3: gradients and Hessians against finite differences; the optimal start; a Newton step helps."""
import numpy as np
import pytest

from multigrove.boosting.losses import BinaryLogloss, MultilabelLogloss, SoftmaxCrossEntropy, SquaredError


def _problem(name, rng, n=40):
    if name == "regression":
        loss = SquaredError()
        y = loss.check_label(rng.normal(size=(n, 3)))
    elif name == "binary":
        loss = BinaryLogloss()
        y = loss.check_label(rng.integers(0, 2, size=n).astype(float))
    elif name == "multilabel":
        loss = MultilabelLogloss()
        y = loss.check_label(rng.integers(0, 2, size=(n, 4)).astype(float))
    else:
        loss = SoftmaxCrossEntropy()
        y = loss.check_label(np.r_[np.arange(4), rng.integers(0, 4, size=n - 4)].astype(float))
    return loss, y


def _grad_hess(loss, raw, y):
    g = np.empty(raw.shape, np.float32)
    h = np.empty(raw.shape, np.float32)
    loss.gradients(raw, y, g, h)
    return g.astype(np.float64), h.astype(np.float64)


@pytest.mark.parametrize("name", ["regression", "binary", "multilabel", "multiclass"])
def test_gradient_and_diagonal_hessian_match_finite_differences(rng, name):
    loss, y = _problem(name, rng)
    n, d = len(y), loss.n_outputs
    raw = rng.normal(size=(n, d))
    g, h = _grad_hess(loss, raw, y)
    eps = 1e-5
    for j in range(d):
        e = np.zeros(d)
        e[j] = eps
        # per-row loss: value() is a mean over rows, so scale by n and perturb one row at a time via broadcasting
        f_plus = np.array([loss.value(raw[i:i + 1] + e, y[i:i + 1]) for i in range(n)])
        f_minus = np.array([loss.value(raw[i:i + 1] - e, y[i:i + 1]) for i in range(n)])
        f0 = np.array([loss.value(raw[i:i + 1], y[i:i + 1]) for i in range(n)])
        np.testing.assert_allclose(g[:, j], (f_plus - f_minus) / (2 * eps), rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(h[:, j], (f_plus - 2 * f0 + f_minus) / eps ** 2, rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("name", ["regression", "binary", "multilabel", "multiclass"])
def test_start_score_is_the_optimal_constant(rng, name):
    loss, y = _problem(name, rng)
    w = rng.uniform(0.5, 2.0, size=len(y))
    init = loss.init_score(y, w)
    raw = np.tile(init, (len(y), 1))
    g, _ = _grad_hess(loss, raw, y)
    np.testing.assert_allclose((g * w[:, None]).sum(axis=0), 0.0, atol=1e-4)


@pytest.mark.parametrize("name,step", [("regression", 1.0), ("binary", 1.0), ("multilabel", 1.0),
                                       ("multiclass", 0.5)])
def test_one_newton_step_lowers_the_loss(rng, name, step):
    # softmax with the diagonal Hessian is not an upper bound of the curvature (GBDT-MO App. A),
    # so its step is damped; the others are separable and take the full Newton step.
    loss, y = _problem(name, rng)
    raw = rng.normal(size=(len(y), loss.n_outputs))
    g, h = _grad_hess(loss, raw, y)
    new = raw - step * g.sum(axis=0) / (h.sum(axis=0) + 1e-12)   # one constant leaf for all rows
    assert loss.value(new, y) < loss.value(raw, y)
