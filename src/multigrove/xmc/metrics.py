"""Ranking metrics of extreme multi-label classification, computed the way the field reports them.

Every ``*_at_k`` function returns a float64 array of length ``k`` whose entry ``j`` is the metric at
``j + 1`` (so ``precision_at_k(Y, P, 5)[[0, 2, 4]]`` is P@1, P@3, P@5).

Inputs
------
``Y_true``: the relevant labels, a CSR matrix or a dense indicator array ``(n, L)`` (non-zero =
relevant).
``Y_pred``: one of
* a dense score array ``(n, L)`` (the k largest scores per row are ranked),
* a CSR score matrix (only stored entries are ranked; a row with fewer than k entries ranks fewer),
* a top-k pair ``(indices, scores)`` of ``(n, k')`` arrays (``-1`` marks an empty slot), as returned
  by ``LabelTreeClassifier.predict``; the pair is re-ranked by score.
Equal scores rank the smaller label index first.

Definitions (n rows, ranks ``r_1..r_k`` of row i, relevant set ``T_i``, inverse propensities ``q``)
* P@k = mean_i |{j <= k : r_j in T_i}| / k
* recall@k = mean_i |{j <= k : r_j in T_i}| / |T_i| (0 for a row without labels)
* nDCG@k = mean_i DCG@k / IDCG@k with DCG = sum_j [r_j in T_i] / log2(j + 1), IDCG over min(k, |T_i|)
  ideal ranks (0 for a row without labels)
* PSP@k = sum_i sum_{j<=k} q_{r_j}[r_j in T_i] / sum_i (best value: the k largest q of T_i),
  normalised by the best achievable value as the XMC repository's tools report it
* PSnDCG@k likewise with the DCG discounts, each row divided by its IDCG@k
* coverage@k = |unique labels found in some row's top k and relevant there| / |unique relevant labels|
  (Bonsai, Section 4.3)
* propensity (Jain et al. 2016): p_l = 1 / (1 + C (N_l + B)^-A), C = (ln N - 1)(B + 1)^A.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .._validation import check_int, check_real
from ..kernels.sparse import row_membership, topk_csr_rows, topk_dense_rows

__all__ = ["propensity", "inverse_propensity", "inverse_propensity_from_counts", "precision_at_k",
           "precision_at_k_rows", "recall_at_k", "ndcg_at_k", "ndcg_at_k_rows", "psprecision_at_k",
           "psprecision_at_k_parts", "psndcg_at_k", "coverage_at_k", "evaluate", "top_k"]

_CHUNK = 4096  # rows of a dense score matrix ranked at a time


def _check_k(k) -> int:
    return check_int(k, "k", 1)


def _true_csr(Y_true, n_rows: int | None = None) -> sp.csr_matrix:
    """Canonical CSR pattern (sorted, no duplicates, no explicit zeros) of the relevant labels."""
    if sp.issparse(Y_true):
        Y = sp.csr_matrix(Y_true, copy=True)
    else:
        arr = np.asarray(Y_true)
        if arr.ndim != 2:
            raise ValueError(f"Y_true must be a 2-D indicator array or a CSR matrix, got shape {arr.shape}")
        if arr.dtype == object:
            raise ValueError("Y_true must hold numbers (non-zero = relevant)")
        Y = sp.csr_matrix(arr)
    if n_rows is not None and Y.shape[0] != n_rows:
        raise ValueError(f"Y_true has {Y.shape[0]} rows but Y_pred has {n_rows}")
    Y.sum_duplicates()
    Y.eliminate_zeros()
    Y.sort_indices()
    return Y


def top_k(Y_pred, k: int, n_labels: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The k best labels of every row, ranked (ties: the smaller label first).

    Parameters
    ----------
    Y_pred : array-like (n, L), sparse matrix, or a top-k pair (indices, scores)
    k : int
    n_labels : int, optional
        Checks that top-k indices are below it.

    Returns
    -------
    indices : ndarray of int64, shape (n, k)
        -1 past the end of a row's ranking.
    scores : ndarray of float64, shape (n, k)
        0 past the end of a row's ranking.
    """
    k = _check_k(k)
    if isinstance(Y_pred, tuple):
        if len(Y_pred) != 2:
            raise ValueError("a top-k Y_pred must be a pair (indices, scores)")
        idx = np.asarray(Y_pred[0])
        val = np.asarray(Y_pred[1], dtype=np.float64)
        if idx.ndim != 2 or idx.shape != val.shape:
            raise ValueError(f"top-k indices and scores must be 2-D arrays of one shape, got {idx.shape} "
                             f"and {val.shape}")
        if not np.issubdtype(idx.dtype, np.integer):
            raise ValueError(f"top-k indices must be integers, got dtype {idx.dtype}")
        if idx.size and idx.min() < -1:
            raise ValueError("top-k indices must be label ids >= 0, or -1 for an empty slot")
        if n_labels is not None and idx.size and idx.max() >= n_labels:
            raise ValueError(f"top-k index {int(idx.max())} is outside [0, {n_labels}) (Y_true has {n_labels} labels)")
        if np.isnan(val[idx >= 0]).any():
            raise ValueError("Y_pred scores contain NaN")
        n = idx.shape[0]
        width = idx.shape[1]
        valid = idx >= 0
        # one CSR of the valid entries, ranked by the same kernel as the other inputs
        indptr = np.zeros(n + 1, np.int64)
        np.cumsum(valid.sum(axis=1), out=indptr[1:])
        out_i = np.empty((n, k), np.int64)
        out_v = np.empty((n, k), np.float64)
        if width:
            topk_csr_rows(indptr, idx[valid].astype(np.int64), val[valid], k, out_i, out_v)
        else:
            out_i.fill(-1)
            out_v.fill(0.0)
        return out_i, out_v
    if sp.issparse(Y_pred):
        P = sp.csr_matrix(Y_pred)
        if n_labels is not None and P.shape[1] != n_labels:
            raise ValueError(f"Y_pred has {P.shape[1]} columns but Y_true has {n_labels} labels")
        P.sum_duplicates()
        if np.isnan(P.data).any():
            raise ValueError("Y_pred scores contain NaN")
        n = P.shape[0]
        out_i = np.empty((n, k), np.int64)
        out_v = np.empty((n, k), np.float64)
        topk_csr_rows(P.indptr.astype(np.int64), P.indices.astype(np.int64), P.data.astype(np.float64),
                      k, out_i, out_v)
        return out_i, out_v
    scores = np.asarray(Y_pred)
    if scores.ndim != 2 or not np.issubdtype(scores.dtype, np.number):
        raise ValueError(f"Y_pred must be a 2-D score array, a CSR matrix or an (indices, scores) pair, "
                         f"got {type(Y_pred).__name__} of shape {getattr(scores, 'shape', None)}")
    if n_labels is not None and scores.shape[1] != n_labels:
        raise ValueError(f"Y_pred has {scores.shape[1]} columns but Y_true has {n_labels} labels")
    n = scores.shape[0]
    out_i = np.empty((n, k), np.int64)
    out_v = np.empty((n, k), np.float64)
    for s in range(0, n, _CHUNK):
        chunk = np.ascontiguousarray(scores[s:s + _CHUNK], dtype=np.float64)
        if np.isnan(chunk).any():
            raise ValueError("Y_pred scores contain NaN")
        topk_dense_rows(chunk, k, out_i[s:s + _CHUNK], out_v[s:s + _CHUNK])
    return out_i, out_v


class _Ranked:
    """The shared work of every metric: ranked predictions, hits, true-label counts."""

    def __init__(self, Y_true, Y_pred, k):
        self.k = _check_k(k)
        n_pred = Y_pred[0].shape[0] if isinstance(Y_pred, tuple) else Y_pred.shape[0]
        self.Y = _true_csr(Y_true, n_pred)
        self.idx, _ = top_k(Y_pred, self.k, self.Y.shape[1])
        self.hits = np.empty(self.idx.shape, np.bool_)
        row_membership(self.Y.indptr.astype(np.int64), self.Y.indices.astype(np.int64), self.idx, self.hits)
        self.n_true = np.diff(self.Y.indptr)
        self.ranks = np.arange(1, self.k + 1, dtype=np.float64)
        self.disc = 1.0 / np.log2(self.ranks + 1.0)

    def idcg(self):
        """(n, k) ideal DCG at each depth (0 for rows without labels)."""
        cum = np.concatenate([[0.0], np.cumsum(self.disc)])
        depth = np.minimum(self.n_true[:, None], self.ranks[None, :].astype(np.int64))
        return cum[depth]

    def best_q(self, q):
        """(n, k) the k largest inverse propensities of each row's relevant labels (0-padded)."""
        Y = self.Y
        out_i = np.empty((Y.shape[0], self.k), np.int64)
        out_v = np.empty((Y.shape[0], self.k), np.float64)
        topk_csr_rows(Y.indptr.astype(np.int64), Y.indices.astype(np.int64), q[Y.indices], self.k, out_i, out_v)
        return out_v

    def gained_q(self, q):
        return np.where(self.hits, q[np.maximum(self.idx, 0)], 0.0)


def _inv_ps(inv_propensity, n_labels):
    q = np.asarray(inv_propensity, dtype=np.float64)
    if q.ndim != 1 or q.shape[0] != n_labels:
        raise ValueError(f"inv_propensity must be a 1-D array of length {n_labels} (one per label), got shape "
                         f"{q.shape}")
    if not np.isfinite(q).all():
        raise ValueError("inv_propensity must be finite")
    return q


def _precision(r):
    return np.cumsum(r.hits, axis=1).mean(axis=0) / r.ranks


def _recall(r):
    with np.errstate(divide="ignore", invalid="ignore"):
        rec = np.where(r.n_true[:, None] > 0, np.cumsum(r.hits, axis=1) / r.n_true[:, None], 0.0)
    return rec.mean(axis=0)


def _ndcg_rows(r):
    idcg = r.idcg()
    dcg = np.cumsum(r.hits * r.disc, axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(idcg > 0, dcg / idcg, 0.0)


def _ndcg(r):
    return _ndcg_rows(r).mean(axis=0)


def _psp_parts(r, q):
    """(n, k) each row's propensity-scored gain at depth 1..k and the best it could have."""
    return np.cumsum(r.gained_q(q), axis=1), np.cumsum(r.best_q(q), axis=1)


def _psp(r, q):
    num, best = (part.sum(axis=0) for part in _psp_parts(r, q))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(best > 0, num / best, 0.0)


def _psndcg(r, q):
    idcg = r.idcg()
    with np.errstate(divide="ignore", invalid="ignore"):
        inv_idcg = np.where(idcg > 0, 1.0 / idcg, 0.0)
    num = (np.cumsum(r.gained_q(q) * r.disc, axis=1) * inv_idcg).sum(axis=0)
    best = (np.cumsum(r.best_q(q) * r.disc, axis=1) * inv_idcg).sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(best > 0, num / best, 0.0)


def _coverage(r):
    n_unique = np.unique(r.Y.indices).shape[0]
    if n_unique == 0:
        return np.zeros(r.k)
    rows, cols = np.nonzero(r.hits)
    first = np.full(r.Y.shape[1], r.k, np.int64)  # first rank (0-based) at which each label is found
    np.minimum.at(first, r.idx[rows, cols], cols)
    counts = np.bincount(first, minlength=r.k + 1)[: r.k]
    return np.cumsum(counts) / n_unique


def precision_at_k(Y_true, Y_pred, k: int = 5) -> np.ndarray:
    """P@1..P@k: the share of the top j predictions that are relevant, averaged over rows.

    Parameters
    ----------
    Y_true : sparse matrix or array-like, shape (n, L)
        The relevant labels (non-zero = relevant).
    Y_pred : array-like (n, L), sparse matrix, or a top-k pair (indices, scores)
        Scores, ranked as the module docstring says (ties: the smaller label first).
    k : int, default 5

    Returns
    -------
    ndarray, shape (k,)
        Entry j is the metric at j + 1.
    """
    return _precision(_Ranked(Y_true, Y_pred, k))


def precision_at_k_rows(Y_true, Y_pred, k: int = 5) -> np.ndarray:
    """Each row's P@1..P@k (``precision_at_k`` is their mean over rows).

    Parameters
    ----------
    Y_true : sparse matrix or array-like, shape (n, L)
        The relevant labels (non-zero = relevant).
    Y_pred : array-like (n, L), sparse matrix, or a top-k pair (indices, scores)
        Scores, ranked as the module docstring says (ties: the smaller label first).
    k : int, default 5

    Returns
    -------
    ndarray, shape (n, k)
    """
    r = _Ranked(Y_true, Y_pred, k)
    return np.cumsum(r.hits, axis=1) / r.ranks


def recall_at_k(Y_true, Y_pred, k: int = 5) -> np.ndarray:
    """recall@1..recall@k: the share of a row's relevant labels found in its top j (0 for a row without labels).

    Parameters
    ----------
    Y_true : sparse matrix or array-like, shape (n, L)
        The relevant labels (non-zero = relevant).
    Y_pred : array-like (n, L), sparse matrix, or a top-k pair (indices, scores)
        Scores, ranked as the module docstring says (ties: the smaller label first).
    k : int, default 5

    Returns
    -------
    ndarray, shape (k,)
        Entry j is the metric at j + 1.
    """
    return _recall(_Ranked(Y_true, Y_pred, k))


def ndcg_at_k(Y_true, Y_pred, k: int = 5) -> np.ndarray:
    """nDCG@1..nDCG@k: discounted cumulative gain over the ideal one, averaged over rows.

    Parameters
    ----------
    Y_true : sparse matrix or array-like, shape (n, L)
        The relevant labels (non-zero = relevant).
    Y_pred : array-like (n, L), sparse matrix, or a top-k pair (indices, scores)
        Scores, ranked as the module docstring says (ties: the smaller label first).
    k : int, default 5

    Returns
    -------
    ndarray, shape (k,)
        Entry j is the metric at j + 1.
    """
    return _ndcg(_Ranked(Y_true, Y_pred, k))


def ndcg_at_k_rows(Y_true, Y_pred, k: int = 5) -> np.ndarray:
    """Each row's nDCG@1..nDCG@k (``ndcg_at_k`` is their mean over rows).

    Parameters
    ----------
    Y_true : sparse matrix or array-like, shape (n, L)
        The relevant labels (non-zero = relevant).
    Y_pred : array-like (n, L), sparse matrix, or a top-k pair (indices, scores)
        Scores, ranked as the module docstring says (ties: the smaller label first).
    k : int, default 5

    Returns
    -------
    ndarray, shape (n, k)
    """
    return _ndcg_rows(_Ranked(Y_true, Y_pred, k))


def psprecision_at_k(Y_true, Y_pred, inv_propensity, k: int = 5) -> np.ndarray:
    """PSP@1..PSP@k: propensity-scored precision, normalised by the best achievable value.

    Parameters
    ----------
    Y_true : sparse matrix or array-like, shape (n, L)
        The relevant labels (non-zero = relevant).
    Y_pred : array-like (n, L), sparse matrix, or a top-k pair (indices, scores)
        Scores, ranked as the module docstring says (ties: the smaller label first).
    inv_propensity : array-like, shape (L,)
        Inverse propensities (``inverse_propensity`` of the training labels).
    k : int, default 5

    Returns
    -------
    ndarray, shape (k,)
        Entry j is the metric at j + 1.
    """
    r = _Ranked(Y_true, Y_pred, k)
    return _psp(r, _inv_ps(inv_propensity, r.Y.shape[1]))


def psprecision_at_k_parts(Y_true, Y_pred, inv_propensity, k: int = 5) -> tuple[np.ndarray, np.ndarray]:
    """Each row's two sums of PSP@1..PSP@k: ``PSP@j = gained[:, j-1].sum() / best[:, j-1].sum()``
    (``psprecision_at_k`` is that ratio; weighted sums of the parts give a weighted PSP@k).

    Parameters
    ----------
    Y_true, Y_pred, inv_propensity, k
        As ``psprecision_at_k``.

    Returns
    -------
    gained, best : ndarray, shape (n, k)
        The inverse propensities of the row's relevant labels among its top j predictions, summed, and
        the sum of the j largest inverse propensities of its relevant labels.
    """
    r = _Ranked(Y_true, Y_pred, k)
    return _psp_parts(r, _inv_ps(inv_propensity, r.Y.shape[1]))


def psndcg_at_k(Y_true, Y_pred, inv_propensity, k: int = 5) -> np.ndarray:
    """PSnDCG@1..PSnDCG@k: propensity-scored nDCG.

    Parameters
    ----------
    Y_true : sparse matrix or array-like, shape (n, L)
        The relevant labels (non-zero = relevant).
    Y_pred : array-like (n, L), sparse matrix, or a top-k pair (indices, scores)
        Scores, ranked as the module docstring says (ties: the smaller label first).
    inv_propensity : array-like, shape (L,)
        Inverse propensities (``inverse_propensity`` of the training labels).
    k : int, default 5

    Returns
    -------
    ndarray, shape (k,)
        Entry j is the metric at j + 1.
    """
    r = _Ranked(Y_true, Y_pred, k)
    return _psndcg(r, _inv_ps(inv_propensity, r.Y.shape[1]))


def coverage_at_k(Y_true, Y_pred, k: int = 5) -> np.ndarray:
    """coverage@1..coverage@k: the share of the relevant labels found in some row's top j (Bonsai, Sec. 4.3).

    Parameters
    ----------
    Y_true : sparse matrix or array-like, shape (n, L)
        The relevant labels (non-zero = relevant).
    Y_pred : array-like (n, L), sparse matrix, or a top-k pair (indices, scores)
        Scores, ranked as the module docstring says (ties: the smaller label first).
    k : int, default 5

    Returns
    -------
    ndarray, shape (k,)
        Entry j is the metric at j + 1.
    """
    return _coverage(_Ranked(Y_true, Y_pred, k))


def _label_counts(Y) -> tuple[np.ndarray, int]:
    if sp.issparse(Y):
        Yc = sp.csr_matrix(Y, copy=True)
        Yc.sum_duplicates()
        Yc.eliminate_zeros()
        return np.diff(Yc.tocsc().indptr).astype(np.float64), Yc.shape[0]
    arr = np.asarray(Y)
    if arr.ndim != 2:
        raise ValueError(f"Y must be a 2-D indicator array or a CSR matrix, got shape {arr.shape}")
    return (arr != 0).sum(axis=0).astype(np.float64), arr.shape[0]


def inverse_propensity(Y, A: float = 0.55, B: float = 1.5) -> np.ndarray:
    """1 / propensity of every label: 1 + C (N_l + B)^-A (Jain et al. 2016), from the training labels.

    Parameters
    ----------
    Y : sparse matrix or array-like, shape (n, L)
        The training label indicator (N_l: the rows carrying label l; C = (ln n - 1)(B + 1)^A).
    A, B : float, default 0.55 and 1.5
        The data set's constants (the XMC repository's: 0.55 / 1.5; Wikipedia-LSHTC 0.5 / 0.4; Amazon 0.6 / 2.6).

    Returns
    -------
    ndarray, shape (L,)
    """
    counts, n = _label_counts(Y)
    return inverse_propensity_from_counts(counts, n, A, B)


def inverse_propensity_from_counts(counts, n_rows: int, A: float = 0.55, B: float = 1.5) -> np.ndarray:
    """``inverse_propensity`` from the label counts N_l and the number of rows (summed over the shards of a
    data set, for instance).

    Parameters
    ----------
    counts : array-like, shape (L,)
        N_l, the training rows carrying each label.
    n_rows : int
        The training rows.
    A, B : float, default 0.55 and 1.5
        As ``inverse_propensity``.

    Returns
    -------
    ndarray, shape (L,)
    """
    A = check_real(A, "A", 0, low_open=True)
    B = check_real(B, "B", 0)
    if n_rows < 1:
        raise ValueError("Y has no rows; propensities need the training labels")
    C = (np.log(n_rows) - 1.0) * (B + 1.0) ** A
    return 1.0 + C * (np.asarray(counts, dtype=np.float64) + B) ** (-A)


def propensity(Y, A: float = 0.55, B: float = 1.5) -> np.ndarray:
    """The propensity of every label: 1 / (1 + C (N_l + B)^-A) (Jain et al. 2016), from the training labels.

    Parameters
    ----------
    Y : sparse matrix or array-like, shape (n, L)
        The training label indicator (N_l: the rows carrying label l; C = (ln n - 1)(B + 1)^A).
    A, B : float, default 0.55 and 1.5
        The data set's constants (the XMC repository's: 0.55 / 1.5; Wikipedia-LSHTC 0.5 / 0.4; Amazon 0.6 / 2.6).

    Returns
    -------
    ndarray, shape (L,)
    """
    return 1.0 / inverse_propensity(Y, A, B)


def evaluate(Y_true, Y_pred, k: int = 5, inv_propensity=None) -> dict[str, float]:
    """Every ranking metric at j = 1..k from one ranking of Y_pred.

    Parameters
    ----------
    Y_true : sparse matrix or array-like, shape (n, L)
        The relevant labels (non-zero = relevant).
    Y_pred : array-like (n, L), sparse matrix, or a top-k pair (indices, scores)
        Scores, ranked as the module docstring says (ties: the smaller label first).
    k : int, default 5
    inv_propensity : array-like, shape (L,), optional
        Adds PSP@j and PSnDCG@j.

    Returns
    -------
    dict
        ``{"P@1": ..., "nDCG@1": ..., "recall@1": ..., "coverage@1": ..., ...}``.
    """
    r = _Ranked(Y_true, Y_pred, k)
    parts = {"P": _precision(r), "nDCG": _ndcg(r), "recall": _recall(r), "coverage": _coverage(r)}
    if inv_propensity is not None:
        q = _inv_ps(inv_propensity, r.Y.shape[1])
        parts.update({"PSP": _psp(r, q), "PSnDCG": _psndcg(r, q)})
    return {f"{name}@{j + 1}": float(v) for name, vals in parts.items() for j, v in enumerate(vals)}
