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
  singular vectors) mix outputs, so no column has a Hessian of its own; they use one shared
  Hessian column, the row's mean Hessian over outputs (exactly |R| for squared error, as in the
  supplement).  E[||Pi^T g||^2] = ||g||^2, and with k >= rank(G) the SVD sketch preserves
  ||G^T v||^2 exactly.

``auto`` picks k from the stable rank sr(G) = ||G||_F^2 / ||G||_2^2: the supplement's bounds for
random sampling and random projection give an error of order ||G||^2 sqrt(sr(G) / k), so we take
k = ceil(sr(G) / eps^2) with eps = 0.5 (error at most about half the largest score),
clipped to [1, d], and sketch by random projection.

Planning and applying are separate: ``plan_sketch`` needs only two global quantities of G, its
column norms and products G^T G V (for the SVD and the stable rank), which a distributed run sums
over workers; ``apply_sketch`` then works on each worker's own rows.
"""
from __future__ import annotations

from typing import Callable, NamedTuple

import numpy as np

from ..kernels._variants import pick
from ..kernels.objective import project_rows, project_rows_serial
from ..params import SKETCHES
from .leaves import StatLayout, largest

AUTO_EPS = 0.5
#: extra columns and subspace iterations of the randomized SVD (Halko et al.'s usual choices)
SVD_OVERSAMPLE = 10
SVD_ITERATIONS = 4


class SketchPlan(NamedTuple):
    """How to turn (G, H) into split statistics this round."""
    columns: np.ndarray | None      # keep these output columns (top_outputs, random_sampling) ...
    scale: np.ndarray | None        # ... each multiplied by this factor (random_sampling)
    projection: np.ndarray | None   # or G @ projection (d, k) with one shared Hessian column

    @property
    def is_full(self) -> bool:
        return self.columns is None and self.projection is None

    @property
    def width(self) -> int | None:
        if self.columns is not None:
            return int(self.columns.size)
        return None if self.projection is None else int(self.projection.shape[1])


FULL = SketchPlan(None, None, None)


def _orthonormal(M: np.ndarray) -> np.ndarray:
    return np.linalg.qr(M)[0]


def top_right_singular_vectors(gram_product: Callable[[np.ndarray], np.ndarray], d: int, k: int,
                               rng: np.random.Generator) -> np.ndarray:
    """(d, k): the top-k right singular vectors of G, by subspace iteration on G^T G."""
    width = min(d, k + SVD_OVERSAMPLE)
    V = _orthonormal(rng.normal(size=(d, width)))
    for _ in range(SVD_ITERATIONS):
        V = _orthonormal(gram_product(V))
    small = V.T @ gram_product(V)                     # Rayleigh-Ritz on the subspace
    eigval, eigvec = np.linalg.eigh((small + small.T) / 2)
    order = np.argsort(eigval)[::-1][:k]
    return V @ eigvec[:, order]


def stable_rank(fro2: float, gram_product: Callable[[np.ndarray], np.ndarray], d: int,
                rng: np.random.Generator, n_iter: int = 8) -> float:
    """||G||_F^2 / ||G||_2^2, the spectral norm by power iteration on G^T G."""
    if fro2 == 0.0:
        return 1.0
    v = rng.normal(size=(d, 1))
    v /= np.linalg.norm(v)
    s2 = 0.0
    for _ in range(n_iter):
        w = gram_product(v)
        s2 = float(np.linalg.norm(w))
        if s2 == 0.0:
            return 1.0
        v = w / s2
    return max(1.0, fro2 / s2)


def auto_k(fro2: float, gram_product: Callable[[np.ndarray], np.ndarray], d: int, rng: np.random.Generator) -> int:
    ratio = round(stable_rank(fro2, gram_product, d, rng) / AUTO_EPS ** 2, 6)  # no ceil() jump from rounding noise
    return int(min(d, max(1, np.ceil(ratio))))


def plan_sketch(method: str, k: int, d: int, rng: np.random.Generator,
                column_sq_norms: Callable[[], np.ndarray],
                gram_product: Callable[[np.ndarray], np.ndarray]) -> SketchPlan:
    """Decide this round's sketch from global quantities of G (n, d): ``column_sq_norms()`` gives
    sum_i G_ij^2 (d,), ``gram_product(V)`` gives G^T G V (d, l)."""
    if method not in SKETCHES:
        raise ValueError(f"sketch must be one of {SKETCHES}, got {method!r}")
    if method == "none" or (k >= d and method in ("top_outputs", "random_projection", "svd")):
        return FULL
    if method == "auto":
        k = auto_k(float(column_sq_norms().sum()), gram_product, d, rng)
        if k >= d:
            return FULL
        method = "random_projection"
    if method == "top_outputs":
        norms2 = column_sq_norms()
        return SketchPlan(np.sort(largest(norms2.reshape(1, -1), k)[0]), None, None)
    if method == "random_sampling":
        norms2 = column_sq_norms()
        total = norms2.sum()
        probability = norms2 / total if total > 0 else np.full(d, 1.0 / d)
        cols = rng.choice(d, size=k, replace=True, p=probability)
        return SketchPlan(cols, (1.0 / np.sqrt(k * probability[cols])).astype(np.float32), None)
    if method == "random_projection":
        return SketchPlan(None, None, rng.normal(scale=1.0 / np.sqrt(k), size=(d, k)).astype(np.float32))
    return SketchPlan(None, None, top_right_singular_vectors(gram_product, d, k, rng).astype(np.float32))


def apply_sketch(plan: SketchPlan, stats: np.ndarray, layout: StatLayout, out_g: np.ndarray,
                 out_h: np.ndarray | None) -> None:
    """Write the sketch of G = stats[:, :d] (n, d) into out_g (n, k), and of its Hessians H (layout.h_col
    on; None where the layout's Hessian is constant) into out_h: (n, k) per-column Hessians for kept
    columns, (n, 1) the row's mean Hessian for projections."""
    G = stats[:, : layout.k]
    H = stats[:, layout.h_col: layout.h_col + layout.k] if layout.h_stride else None
    if plan.columns is not None:
        out_g[...] = G[:, plan.columns]
        if plan.scale is not None:
            out_g *= plan.scale
        if out_h is not None:
            out_h[...] = H[:, plan.columns]
        return
    no_h = np.empty((G.shape[0], 0), dtype=G.dtype)
    projection_t = np.ascontiguousarray(plan.projection.T)  # (k, d): tiny
    pick(project_rows, project_rows_serial, G.size)(stats, layout.h_col, projection_t, out_g,
                                                    no_h if out_h is None else out_h)


def gram_product(G: np.ndarray, V: np.ndarray) -> np.ndarray:
    """G^T (G V) (d, l), returned in float64 (the products themselves in float32 BLAS)."""
    return (G.T @ (G @ V.astype(np.float32))).astype(np.float64)


def column_sq_norms(G: np.ndarray) -> np.ndarray:
    return np.einsum("ij,ij->j", G, G, dtype=np.float64)
