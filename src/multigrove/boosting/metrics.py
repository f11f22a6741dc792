"""Evaluation metrics computed during training: (name, value, higher_is_better)."""
from __future__ import annotations

import numpy as np

_EPS = 1e-15


def _avg(a, w):
    return float(np.average(a, weights=w))


def precision_at_k(y_true: np.ndarray, scores: np.ndarray, k: int) -> float:
    """Mean over rows of |top-k(scores) ∩ relevant| / k.

    y_true: (n, L) 0/1 indicator matrix, or (n,) class ids (one relevant output per row).
    """
    n, d = scores.shape
    k_eff = min(k, d)
    if k_eff < d:
        top = np.argpartition(-scores, k_eff - 1, axis=1)[:, :k_eff]
    else:
        top = np.broadcast_to(np.arange(d), (n, d))
    if y_true.ndim == 1:
        hits = (top == y_true.reshape(-1, 1)).sum(axis=1)
    else:
        hits = np.take_along_axis(y_true, top, axis=1).sum(axis=1)
    return float(hits.mean() / k)


def evaluate(metric: str, y: np.ndarray, raw: np.ndarray, prob: np.ndarray, w: np.ndarray | None,
             eval_at: tuple) -> list[tuple[str, float, bool]]:
    """y is the loss's internal label form (2-D for regression/binary/multilabel, ids for multiclass)."""
    if metric in ("l2", "rmse"):
        se = ((prob - y) ** 2).mean(axis=1)
        v = _avg(se, w)
        return [(metric, v if metric == "l2" else float(np.sqrt(v)), False)]
    if metric in ("binary_logloss", "multilabel_logloss"):
        p = np.clip(prob, _EPS, 1 - _EPS)
        ll = -(y * np.log(p) + (1 - y) * np.log(1 - p)).mean(axis=1)
        return [(metric, _avg(ll, w), False)]
    if metric == "binary_error":
        return [(metric, _avg(((prob > 0.5) != (y > 0.5)).mean(axis=1), w), False)]
    if metric == "multi_logloss":
        p = np.clip(prob[np.arange(len(y)), y], _EPS, None)
        return [(metric, _avg(-np.log(p), w), False)]
    if metric == "multi_error":
        return [(metric, _avg(prob.argmax(axis=1) != y, w), False)]
    if metric == "precision_at_k":
        return [(f"precision@{k}", precision_at_k(y, prob, k), True) for k in eval_at]
    raise ValueError(f"unknown metric {metric!r}")  # pragma: no cover - checked in Params


def check_metric_fits(metric: str, objective: str, n_outputs: int) -> None:
    needs = {"binary_logloss": ("binary",), "binary_error": ("binary",),
             "multi_logloss": ("multiclass",), "multi_error": ("multiclass",),
             "multilabel_logloss": ("multilabel", "binary"), "precision_at_k": ("multiclass", "multilabel")}
    if metric in needs and objective not in needs[metric]:
        raise ValueError(f"metric '{metric}' needs objective {' or '.join(needs[metric])}, "
                         f"got objective '{objective}'")
