"""Fused gradient / diagonal-Hessian kernels for the built-in classification losses, and the
row-wise reductions a sketch needs.

They write straight into (possibly strided) column blocks of the statistics matrix, one pass
over the scores, rows in parallel.  Probabilities are computed in float64: a float32 exp is a
quarter faster, but rounding its argument x to float32 changes exp(x) by x * 6e-8, enough to
break scikit-learn's check that a weight of 2 equals a duplicated row.
"""
import math

import numpy as np
from numba import njit, prange

U = np.uint64  # unsigned indices: no negative-index wraparound code in the loops


@njit(parallel=True, cache=True)
def scaled_residual(raw, y, shift, scale, out_g):
    """IN raw (n, d) float64 scores in standardized units, y (n, d) float64 targets, shift and scale (d,).
    OUT out_g (n, d) = raw - (y - shift) / scale: the squared loss's gradient on standardized targets,
    without a standardized copy of y."""
    n, d = raw.shape
    for ii in prange(n):
        i = U(ii)
        for jj in range(d):
            j = U(jj)
            out_g[i, j] = raw[i, j] - (y[i, j] - shift[j]) / scale[j]


@njit(parallel=True, cache=True)
def softmax_grad_hess(raw, y, out_g, out_h):
    """IN raw (n, K) float64 scores, y (n,) int64 class ids.
    OUT out_g (n, K) = softmax(raw) - onehot(y); OUT out_h (n, K) = p (1 - p)."""
    n, K = raw.shape
    for ii in prange(n):
        i = U(ii)
        m = raw[i, U(0)]
        for jj in range(1, K):
            v = raw[i, U(jj)]
            if v > m:
                m = v
        s = 0.0
        for jj in range(K):
            j = U(jj)
            e = math.exp(raw[i, j] - m)
            out_g[i, j] = e
            s += e
        inv = 1.0 / s
        for jj in range(K):
            j = U(jj)
            p = out_g[i, j] * inv
            out_h[i, j] = p * (1.0 - p)
            out_g[i, j] = p
        out_g[i, U(y[i])] -= 1.0


@njit(parallel=True, cache=True)
def sigmoid_grad_hess(raw, y, out_g, out_h):
    """IN raw (n, L) float64 scores, y (n, L) 0/1.  OUT out_g = sigmoid(raw) - y; OUT out_h = p (1 - p)."""
    n, L = raw.shape
    for ii in prange(n):
        i = U(ii)
        for jj in range(L):
            j = U(jj)
            x = raw[i, j]
            if x >= 0:
                p = 1.0 / (1.0 + math.exp(-x))
            else:
                e = math.exp(x)
                p = e / (1.0 + e)
            out_g[i, j] = p - y[i, j]
            out_h[i, j] = p * (1.0 - p)


#: rows per task of project_rows (its accumulators are allocated once per task)
PROJECT_BLOCK = 1024


@njit(parallel=True, cache=True)
def project_rows(G, P, H, out_g, out_h):
    """One pass over the rows: out_g = G P and, when out_h has a column, out_h = the row means of H.

    IN  G (n, d) float32 gradients; P (d, k) float32 projection; H (n, d) Hessians (unused when
        out_h has no column).
    OUT out_g (n, k); OUT out_h (n, 1) or (n, 0)."""
    n, d = G.shape
    k = P.shape[1]
    with_h = out_h.shape[1] > 0
    n_blocks = (n + PROJECT_BLOCK - 1) // PROJECT_BLOCK
    for blk in prange(n_blocks):
        acc = np.empty(k, np.float32)
        for ii in range(blk * PROJECT_BLOCK, min(n, (blk + 1) * PROJECT_BLOCK)):
            i = U(ii)
            acc[:] = 0.0
            for jj in range(d):
                j = U(jj)
                g = G[i, j]
                for c in range(k):
                    cu = U(c)
                    acc[cu] += g * P[j, cu]
            for c in range(k):
                out_g[i, U(c)] = acc[U(c)]
            if with_h:
                s = 0.0
                for jj in range(d):
                    s += H[i, U(jj)]
                out_h[i, U(0)] = s / d
