"""Feature projections: LEML's alternating fit, and scikit-learn's projections in a Pipeline."""
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.pipeline import make_pipeline

import multigrove as mg
from multigrove.xmc.embedding import LEMLProjection, SparseRandomProjection, TruncatedSVD


@pytest.fixture(scope="module")
def problem():
    rng = np.random.default_rng(0)
    X = sp.random(400, 300, density=0.05, format="csr", random_state=1)
    W = rng.normal(size=(300, 4))
    scores = X @ W @ rng.normal(size=(4, 30))
    Y = sp.csr_matrix((scores > np.quantile(scores, 0.85, axis=0)).astype(float))
    return X, Y


def test_leml_steps_solve_their_subproblems_and_the_objective_decreases(problem):
    X, Y = problem
    lam = 1e-4 * X.shape[0]
    model = LEMLProjection(n_components=4, alpha=1e-4, max_iter=8, cg_iter=200, tol=0.0).fit(X, Y)
    obj = np.array(model.objective_)
    assert np.all(np.diff(obj) <= 1e-9 * obj[0])
    W, H = model.components_, model.label_factors_
    Z = X @ W  # H is the exact ridge solution for the returned W
    np.testing.assert_allclose(H @ (Z.T @ Z) + lam * H, Y.T @ Z, rtol=1e-8, atol=1e-8)
    # one W-step with H fixed solves X^T X W (H^T H) + lam W = X^T Y H (the Sylvester condition)
    W2 = model._features_step(X, Y, W, H, lam)
    residual = X.T @ (X @ W2 @ (H.T @ H)) + lam * W2 - X.T @ (Y @ H)
    assert np.linalg.norm(residual) < 1e-5 * np.linalg.norm(X.T @ (Y @ H))
    # label-aware: the fitted rank-4 model explains Y better than a random W with its best H
    random_w = np.random.default_rng(3).normal(size=W.shape)
    h_random = LEMLProjection._labels_step(X, Y, random_w, lam)
    assert obj[-1] < LEMLProjection._objective(X, Y, random_w, h_random, lam, float(Y.multiply(Y).sum()))
    assert model.transform(X).shape == (400, 4)


def test_projections_in_a_pipeline_before_the_booster(problem):
    X, Y = problem
    for projection in (LEMLProjection(n_components=8, max_iter=3), TruncatedSVD(n_components=8, random_state=0),
                       SparseRandomProjection(n_components=8, random_state=0)):
        pipe = make_pipeline(projection, mg.GroveClassifier(n_estimators=5, num_leaves=8)).fit(X, Y.toarray())
        assert pipe.predict_proba(X).shape == (400, 30)
    with pytest.raises(ValueError, match="features"):
        LEMLProjection(n_components=2, max_iter=1).fit(X, Y).transform(X[:, :10])
    with pytest.raises(ValueError, match="0/1 indicator"):
        LEMLProjection(n_components=2).fit(X, Y * 2)
