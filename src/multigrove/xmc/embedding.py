"""Feature projections for sparse, high-dimensional X before a booster (GBDT-Sparse, Sec. 4.2).

Three projections, all scikit-learn transformers usable in a ``Pipeline``:

* random projection and randomized PCA are scikit-learn's own, ``SparseRandomProjection`` and
  ``TruncatedSVD`` (randomized SVD of sparse X, no centring, so X is never densified): they are
  re-exported here, not written again;
* ``LEMLProjection`` is the label-aware low-rank projection of LEML (Yu et al., 2014), the paper's
  reference: X W with W (n_features x k) from the low-rank least-squares fit Y ~ X W H^T.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import LinearOperator, cg
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.decomposition import TruncatedSVD
from sklearn.random_projection import SparseRandomProjection
from sklearn.utils.validation import check_is_fitted

from .._validation import check_indicator, check_int, check_real

__all__ = ["LEMLProjection", "SparseRandomProjection", "TruncatedSVD"]


class LEMLProjection(TransformerMixin, BaseEstimator):
    """Label-aware low-rank projection (LEML): ``transform(X) = X @ components_``.

    Fits the rank-k model Y ~ X W H^T by alternating minimisation of
    ``||Y - X W H^T||_F^2 + alpha (||W||_F^2 + ||H||_F^2)``: with W fixed, H is a ridge regression of
    Y on Z = X W (a k x k system); with H fixed, W solves X^T X W (H^T H) + alpha W = X^T Y H, which
    the eigenvectors of H^T H split into k ridge systems in X^T X, each solved by conjugate gradients
    with products by X and X^T only (sparse X is never densified).

    Parameters
    ----------
    n_components : int, default 50
        k, the width of the projection.
    alpha : float, default 1e-3
        L2 regularisation of both factors, per row of data (scaled by n_rows).
    max_iter : int, default 10
        Alternations.
    cg_iter : int, default 30
        Conjugate-gradient steps per column and alternation (warm-started).
    tol : float, default 1e-4
        Stop when the objective improves by less than this fraction.
    random_state : int, default 0
        Seed of the starting W.

    Attributes
    ----------
    components_ : ndarray (n_features, n_components)
        W.
    label_factors_ : ndarray (n_labels, n_components)
        H.
    objective_ : list of float
        The objective after each alternation (non-increasing up to the CG tolerance).
    n_features_in_ : int
    """

    def __init__(self, n_components=50, alpha=1e-3, max_iter=10, cg_iter=30, tol=1e-4, random_state=0):
        self.n_components = n_components
        self.alpha = alpha
        self.max_iter = max_iter
        self.cg_iter = cg_iter
        self.tol = tol
        self.random_state = random_state

    def fit(self, X, Y):
        """Fit W and H to (X, Y).

        Parameters
        ----------
        X : sparse matrix or array-like, shape (n_rows, n_features)
        Y : 0/1 label indicator, sparse or dense, shape (n_rows, n_labels)

        Returns
        -------
        self
        """
        k = check_int(self.n_components, "n_components", 1)
        max_iter = check_int(self.max_iter, "max_iter", 1)
        check_int(self.cg_iter, "cg_iter", 1)
        alpha = check_real(self.alpha, "alpha", 0.0, low_open=True)
        check_real(self.tol, "tol", 0.0)
        X = sp.csr_matrix(X, dtype=np.float64)
        if not np.isfinite(X.data).all():
            raise ValueError("X must be finite")
        Y = check_indicator(sp.csr_matrix(Y) if not sp.issparse(Y) else Y, X.shape[0]).astype(np.float64)
        lam = alpha * X.shape[0]
        W = np.random.default_rng(self.random_state).normal(scale=1.0 / np.sqrt(X.shape[1]), size=(X.shape[1], k))
        self.objective_ = []
        y_norm2 = float(Y.multiply(Y).sum())
        H = self._labels_step(X, Y, W, lam)
        for _ in range(max_iter):
            W = self._features_step(X, Y, W, H, lam)
            H = self._labels_step(X, Y, W, lam)  # last: H is the exact optimum for the W returned
            self.objective_.append(self._objective(X, Y, W, H, lam, y_norm2))
            if len(self.objective_) > 1 and \
                    self.objective_[-2] - self.objective_[-1] <= self.tol * abs(self.objective_[-2]):
                break
        self.components_, self.label_factors_ = W, H
        self.n_features_in_ = X.shape[1]
        return self

    @staticmethod
    def _labels_step(X, Y, W, lam):
        Z = X @ W
        return np.linalg.solve(Z.T @ Z + lam * np.eye(W.shape[1]), (Y.T @ Z).T).T

    def _features_step(self, X, Y, W, H, lam):
        eigenvalues, Q = np.linalg.eigh(H.T @ H)
        rhs = (X.T @ (Y @ H)) @ Q
        start = W @ Q
        out = np.empty_like(start)
        n_features = X.shape[1]
        for j, e in enumerate(eigenvalues):
            op = LinearOperator((n_features, n_features), matvec=lambda v, e=e: e * (X.T @ (X @ v)) + lam * v,
                                dtype=np.float64)
            out[:, j], _ = cg(op, rhs[:, j], x0=start[:, j], maxiter=int(self.cg_iter))
        return out @ Q.T

    @staticmethod
    def _objective(X, Y, W, H, lam, y_norm2):
        Z = X @ W
        cross = float(np.sum((Y.T @ Z) * H))
        fit = y_norm2 - 2.0 * cross + float(np.sum((Z.T @ Z) * (H.T @ H)))
        return fit + lam * (float(np.sum(W * W)) + float(np.sum(H * H)))

    def transform(self, X):
        """Project X.

        Parameters
        ----------
        X : sparse matrix or array-like, shape (n_rows, n_features)

        Returns
        -------
        ndarray (n_rows, n_components)
        """
        check_is_fitted(self, "components_")
        X = sp.csr_matrix(X, dtype=np.float64)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features, the projection was fitted on {self.n_features_in_}")
        return np.asarray(X @ self.components_)
