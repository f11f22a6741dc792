"""Fused gradient / diagonal-Hessian kernels for the built-in classification losses.

They write straight into (possibly strided) column blocks of the statistics matrix, one pass
over the scores, rows in parallel.
"""
import math

from numba import njit, prange


@njit(parallel=True, cache=True)
def softmax_grad_hess(raw, y, out_g, out_h):
    """IN raw (n, K) float64 scores, y (n,) int64 class ids.
    OUT out_g (n, K) = softmax(raw) - onehot(y); OUT out_h (n, K) = p (1 - p)."""
    n, K = raw.shape
    for i in prange(n):
        m = raw[i, 0]
        for j in range(1, K):
            if raw[i, j] > m:
                m = raw[i, j]
        s = 0.0
        for j in range(K):
            e = math.exp(raw[i, j] - m)
            out_g[i, j] = e
            s += e
        inv = 1.0 / s
        for j in range(K):
            p = out_g[i, j] * inv
            out_h[i, j] = p * (1.0 - p)
            out_g[i, j] = p
        out_g[i, y[i]] -= 1.0


@njit(parallel=True, cache=True)
def sigmoid_grad_hess(raw, y, out_g, out_h):
    """IN raw (n, L) float64 scores, y (n, L) 0/1.  OUT out_g = sigmoid(raw) - y; OUT out_h = p (1 - p)."""
    n, L = raw.shape
    for i in prange(n):
        for j in range(L):
            x = raw[i, j]
            if x >= 0:
                p = 1.0 / (1.0 + math.exp(-x))
            else:
                e = math.exp(x)
                p = e / (1.0 + e)
            out_g[i, j] = p - y[i, j]
            out_h[i, j] = p * (1.0 - p)


@njit(parallel=True, cache=True)
def row_means(M, out):
    """OUT out (n, 1): the mean of each row of M (n, k)."""
    n, k = M.shape
    for i in prange(n):
        s = 0.0
        for j in range(k):
            s += M[i, j]
        out[i, 0] = s / k
