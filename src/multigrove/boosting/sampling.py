"""Row and column sampling: pure functions of the data and a random generator.

* Bagging (``bagging_fraction`` f, every ``bagging_freq`` rounds): a uniform sample of round(f n)
  rows without replacement, kept for ``bagging_freq`` rounds.
* GOSS (gradient-based one-side sampling, Ke et al. 2017, Alg. 2): the round(a n) rows with the
  largest gradient magnitude are kept, round(b n) of the others are drawn uniformly and their
  gradients and Hessians (not their row counts) are multiplied by (1 - a) / b, so that every sum
  over rows is an unbiased estimate of the full sum.  A row's magnitude is the L2 norm of its
  gradient row, taken over the statistics splits are scored on: the sketch when one is on, since
  those are the gradients whose sums decide the splits (and k columns are cheaper than d).  As in
  LightGBM, the first floor(1 / learning_rate) rounds use every row: early gradients are all large.
* Bayesian bootstrap (``bagging_temperature`` T > 0, CatBoost's): every round each row's gradients
  and Hessians are multiplied by a weight (-log U)^T, U uniform on (0, 1]: T = 1 gives Exp(1)
  weights (the Bayesian bootstrap of Rubin 1981), T -> 0 weights of 1, larger T heavier tails.
  Unlike bagging no row is dropped, so every tree still sees rare feature values.
* Column sampling (``feature_fraction``): each tree may split on round(fraction F) features (at
  least one), drawn uniformly.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._dtypes import INDEX
from ..kernels.sampling import goss_select, row_sq_norms, split_marked


class RowSample(NamedTuple):
    """The rows of one tree (None: every row), the rows left out, and the GOSS factor of the drawn rows."""
    rows: np.ndarray | None
    others: np.ndarray | None = None      # the rows left out, ascending
    amplified: np.ndarray | None = None   # rows whose statistics are multiplied by factor
    factor: float = 1.0


ALL_ROWS = RowSample(None)


def bagging_rows(n_rows: int, fraction: float, rng: np.random.Generator) -> RowSample:
    if fraction >= 1.0:
        return ALL_ROWS
    size = max(1, int(round(fraction * n_rows)))
    # NumPy draws the smaller side (its cost grows with the number drawn); every subset of size rows is
    # equally likely either way
    draw_kept = size <= n_rows - size
    marked = np.zeros(n_rows, np.bool_) if draw_kept else np.ones(n_rows, np.bool_)
    marked[rng.choice(n_rows, size if draw_kept else n_rows - size, replace=False, shuffle=False)] = draw_kept
    rows, left_out = np.empty(size + 1, INDEX), np.empty(n_rows - size + 1, INDEX)  # a slot of slack each
    split_marked(marked, rows, left_out)
    return RowSample(rows[:-1], left_out[:-1])


def goss_rows(magnitude: np.ndarray, top_rate: float, other_rate: float, rng: np.random.Generator) -> RowSample:
    """GOSS on per-row gradient magnitudes (n,), or any increasing function of them (squared
    norms): the top rows plus a uniform draw of the rest."""
    n = magnitude.shape[0]
    n_top = int(round(top_rate * n))
    n_other = min(int(round(other_rate * n)), n - n_top)
    if n_top + n_other >= n or n_other == 0:
        return ALL_ROWS
    threshold = np.partition(magnitude, n - n_top)[n - n_top] if n_top else np.inf
    drawn = np.zeros(n - n_top, np.bool_)  # n_other of the rest, uniformly without replacement
    drawn[rng.choice(n - n_top, n_other, replace=False)] = True
    rows = np.empty(n_top + n_other + 1, INDEX)  # one slot of slack each (see goss_select)
    left_out = np.empty(n - n_top - n_other + 1, INDEX)
    other = np.empty(n_other + 1, INDEX)
    goss_select(magnitude, threshold, n_top, drawn, rows, left_out, other)
    return RowSample(rows[:-1], left_out[:-1], other[:-1], (1.0 - top_rate) / other_rate)


def row_magnitudes(G: np.ndarray) -> np.ndarray:
    """Squared L2 norm of every gradient row (n, k) float32 (GOSS ranks rows by it)."""
    out = np.empty(G.shape[0], np.float32)
    row_sq_norms(G, out)
    return out


def bayesian_weights(n_rows: int, temperature: float, rng: np.random.Generator) -> np.ndarray:
    """(n_rows,) float32 Bayesian bootstrap weights (-log U)^temperature."""
    u = 1.0 - rng.random(n_rows)  # in (0, 1]
    return np.power(-np.log(u), temperature).astype(np.float32)


def feature_mask(n_features: int, fraction: float, rng: np.random.Generator | None) -> np.ndarray | None:
    """Features one tree may split on (None: all); ``rng`` is read only for a fraction below 1."""
    if fraction >= 1.0:
        return None
    mask = np.zeros(n_features, np.bool_)
    mask[rng.choice(n_features, max(1, int(round(fraction * n_features))), replace=False)] = True
    return mask
