"""Statistic layout and leaf values.

The per-row statistics handed to the grower are one float32 matrix ``stats`` (n_rows, C):
columns ``0..k-1`` hold gradients, then (unless the Hessian is a constant) ``k`` Hessian
columns, and last a column of ones that counts rows.  ``StatLayout`` says where each lives,
so histograms, split scans and leaf values read the same matrix whatever k is.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._dtypes import STAT
from ..kernels.sparse import topk_dense_rows


class StatLayout(NamedTuple):
    k: int            # gradient columns
    h_col: int        # first Hessian column (the count column when the Hessian is constant)
    h_stride: int     # 1, or 0 for a constant Hessian
    h_scale: float    # 1.0, or the constant Hessian value
    count_col: int

    @property
    def n_cols(self) -> int:
        return self.count_col + 1

    @classmethod
    def make(cls, k: int, hess_constant: float | None, shared_hessian: bool = False) -> "StatLayout":
        """k gradient columns with: a constant Hessian (no column), one Hessian column shared by
        all k (sketches that mix outputs), or one Hessian column per gradient column."""
        if hess_constant is not None:
            return cls(k, k, 0, float(hess_constant), k)
        if shared_hessian:
            return cls(k, k, 0, 1.0, k + 1)
        return cls(k, k, 1, 1.0, 2 * k)

    def allocate(self, n_rows: int) -> np.ndarray:
        stats = np.empty((n_rows, self.n_cols), dtype=STAT)
        stats[:, self.count_col] = 1.0
        return stats

    def grad(self, sums: np.ndarray) -> np.ndarray:
        return sums[..., : self.k]

    def hess(self, sums: np.ndarray) -> np.ndarray:
        if self.h_stride == 0:
            return self.h_scale * np.repeat(sums[..., self.count_col: self.count_col + 1], self.k, axis=-1)
        return sums[..., self.h_col: self.h_col + self.k]



def _safe_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    out = np.zeros(np.broadcast(a, b).shape)
    np.divide(a, b, out=out, where=b > 0)
    return out


def dense_leaf_values(sums: np.ndarray, layout: StatLayout, lambda_l2: float, learning_rate: float
                      ) -> np.ndarray:
    """-G/(H + lambda) * learning_rate per leaf and output (GBDT-MO eq. 13, diagonal Hessian).

    sums: (n_leaves, C) statistic sums of each leaf.  Returns (n_leaves, k) float64.
    """
    g, h = layout.grad(sums), layout.hess(sums)
    return -learning_rate * _safe_div(g, h + lambda_l2)


def largest(scores: np.ndarray, k: int) -> np.ndarray:
    """(n, k) int64: the columns of the k largest scores of each row, best first, ties to the smaller
    column (the library's one top-k selection, kernels.sparse.topk_dense_rows)."""
    scores = np.ascontiguousarray(scores, dtype=np.float64)
    idx = np.empty((scores.shape[0], k), np.int64)
    topk_dense_rows(scores, k, idx, np.empty((scores.shape[0], k), np.float64))
    return idx


def sparse_leaf_values(sums: np.ndarray, layout: StatLayout, lambda_l2: float, learning_rate: float,
                       topk: int) -> tuple[np.ndarray, np.ndarray]:
    """k-sparse leaves (GBDT-MO eq. 19): each leaf keeps the topk outputs with the largest
    G_j^2/(H_j + lambda) and their values -G_j/(H_j + lambda) * learning_rate.

    Returns (cols, values), each (n_leaves, topk); cols ascending within a leaf.
    """
    g, h = layout.grad(sums), layout.hess(sums) + lambda_l2
    gain = _safe_div(g * g, h)
    cols = np.sort(largest(gain, topk), axis=1)
    values = -learning_rate * _safe_div(np.take_along_axis(g, cols, 1), np.take_along_axis(h, cols, 1))
    return cols.astype(np.int32), values
