"""Gradient sketches for split scoring (SketchBoost, Iosipoi & Vakhrushev 2022, supplement Sec. 1).

Each round the (n, d) gradient matrix G is reduced to k << d columns that are used only to
build histograms and choose splits; leaf values are always computed from the full G and H.

Scoring with the Hessian.  Our engine scores a child by ``sum_j G_j^2 / (H_j + lambda)`` (Newton
gain), the supplement by ``||G^T v_R||^2 / (|R| + lambda)``.  The two agree when H = 1, and we keep
the Hessian so that the same trees come out with sketch="none" and with a sketch that keeps all
columns:

* ``top_outputs`` keeps k columns of G (largest Euclidean norm) with their own Hessian columns:
  the sketched score is the exact score restricted to those outputs.
* ``random_sampling`` draws k columns with replacement, with probability p_j proportional to
  ||G_j||^2, and rescales them by 1/sqrt(k p_j) while keeping their Hessian columns unscaled;
  then E[sum_s G_{j_s}^2 / (k p_{j_s} (H_{j_s} + lambda))] = sum_j G_j^2 / (H_j + lambda): the
  sketched score is an unbiased estimate of the full score.
* ``random_projection`` (G Pi, Pi with N(0, 1/k) entries) and ``svd`` (G V_k, the top-k right
  singular vectors, randomized) mix outputs, so no column has a Hessian of its own; they use
  one shared Hessian column, the row's mean Hessian over outputs (exactly |R| for squared
  error, as in the supplement).  E[||Pi^T g||^2] = ||g||^2, and with k >= rank(G) the SVD
  sketch preserves ||G^T v||^2 exactly.

``auto`` picks k from the stable rank sr(G) = ||G||_F^2 / ||G||_2^2: the supplement's bounds for
random sampling and random projection give an error of order ||G||^2 sqrt(sr(G) / k), so we take
k = ceil(sr(G) / eps^2) with eps = 0.5 (error at most about half the largest score),
clipped to [1, d], and sketch by random projection.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..kernels.objective import row_means
from ..params import SKETCHES

AUTO_EPS = 0.5


class Sketch(NamedTuple):
    G: np.ndarray                 # (n, k) float32: gradient columns to score splits with
    H: np.ndarray | None          # (n, k) per-column Hessians, (n, 1) shared Hessian, or None (constant)
    columns: np.ndarray | None    # the output columns kept (top_outputs / random_sampling), else None


def stable_rank(G: np.ndarray, n_iter: int = 8, rng: np.random.Generator | None = None) -> float:
    """||G||_F^2 / ||G||_2^2, the spectral norm by power iteration on G^T G."""
    G64 = np.asarray(G, dtype=np.float64)
    fro2 = float(np.einsum("ij,ij->", G64, G64))
    if fro2 == 0.0:
        return 1.0
    rng = rng or np.random.default_rng(0)
    v = rng.normal(size=G64.shape[1])
    v /= np.linalg.norm(v)
    s2 = 0.0
    for _ in range(n_iter):
        w = G64.T @ (G64 @ v)
        s2 = float(np.linalg.norm(w))
        if s2 == 0.0:
            return 1.0
        v = w / s2
    return max(1.0, fro2 / s2)


def auto_k(G: np.ndarray, rng: np.random.Generator) -> int:
    ratio = round(stable_rank(G, rng=rng) / AUTO_EPS ** 2, 6)  # no ceil() jump from rounding noise
    return int(min(G.shape[1], max(1, np.ceil(ratio))))


def sketch_gradients(method: str, k: int, G: np.ndarray, H: np.ndarray | None, rng: np.random.Generator
                     ) -> Sketch:
    """Reduce G (n, d) [and H (n, d), None when constant] to k columns for split scoring."""
    n, d = G.shape
    if method == "none" or (k >= d and method in ("top_outputs", "random_projection", "svd")):
        return Sketch(G, H, None)
    if method == "auto":
        k = auto_k(G, rng)
        if k >= d:
            return Sketch(G, H, None)
        method = "random_projection"
    if method in ("top_outputs", "random_sampling"):
        norms2 = np.einsum("ij,ij->j", G, G, dtype=np.float64)
    if method == "top_outputs":
        cols = np.sort(np.argpartition(-norms2, k - 1)[:k])
        return Sketch(np.ascontiguousarray(G[:, cols]), None if H is None else np.ascontiguousarray(H[:, cols]),
                      cols)
    if method == "random_sampling":
        total = norms2.sum()
        p = norms2 / total if total > 0 else np.full(d, 1.0 / d)
        cols = rng.choice(d, size=k, replace=True, p=p)
        scale = (1.0 / np.sqrt(k * p[cols])).astype(np.float32)
        return Sketch(G[:, cols] * scale, None if H is None else np.ascontiguousarray(H[:, cols]), cols)
    shared_h = None
    if H is not None:
        shared_h = np.empty((n, 1), dtype=np.float32)
        row_means(H, shared_h)
    if method == "random_projection":
        P = rng.normal(scale=1.0 / np.sqrt(k), size=(d, k)).astype(np.float32)
        return Sketch(G @ P, shared_h, None)
    if method == "svd":
        from sklearn.utils.extmath import randomized_svd
        _, _, Vt = randomized_svd(G.astype(np.float64), n_components=k, n_iter=4,
                                  random_state=int(rng.integers(2**31 - 1)))
        return Sketch((G @ Vt.T.astype(np.float32)).astype(np.float32), shared_h, None)
    raise ValueError(f"sketch must be one of {SKETCHES}, got {method!r}")
