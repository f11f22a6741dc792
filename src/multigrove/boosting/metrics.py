"""Evaluation metrics computed during training.

Every metric is a ratio of weighted sums over rows, ``sum_i w_i num_i / sum_i w_i den_i`` (then a
square root for rmse), so the parts of a data set split over workers add up: ``metric_parts``
returns the sums of one shard, ``finish`` turns summed parts into (name, value, higher_is_better).
Ranking metrics come from ``multigrove.xmc.metrics``, the library's one implementation; PSP@k's
inverse propensities are the training labels' (Jain et al. 2016, A = 0.55, B = 1.5), computed once
per training by the training rows (``label_counts``) and handed to every data set's parts.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from ..kernels._variants import pick
from ..kernels.objective import logloss_rows, logloss_rows_serial, softmax_logloss_rows, softmax_logloss_rows_serial
from ..params import SPARSE_OUTPUT_OBJECTIVES
from ..xmc.metrics import ndcg_at_k_rows, precision_at_k_rows, psprecision_at_k_parts


class MetricPart(NamedTuple):
    name: str
    num: float          # sum_i w_i num_i
    den: float          # sum_i w_i den_i
    higher_better: bool
    root: bool          # report the square root of num / den


def _weighted_sum(weights: np.ndarray | None, per_row: np.ndarray) -> float:
    """sum_i w_i v_i (every w_i 1 for None), without BLAS: NumPy's BLAS runs a dot product of more than 10,000 rows
    on its own threads, which then spin for a while beside the next round's kernels and take their cores (Otto's
    rounds at two threads with 12,376 validation rows took 2.6x as long with a dot product;
    benchmarks/blas_threads.py)."""
    return float(per_row.sum() if weights is None else np.multiply(weights, per_row).sum())


def _part(name, per_row, w, higher=False, root=False, den_per_row=None) -> MetricPart:
    if den_per_row is not None:
        den = _weighted_sum(w, den_per_row)
    else:
        den = float(per_row.shape[0] if w is None else w.sum())
    return MetricPart(name, _weighted_sum(w, per_row), den, higher, root)


def _class_indicator(y: np.ndarray, n_classes: int) -> sp.csr_matrix:
    n = y.shape[0]
    return sp.csr_matrix((np.ones(n), y.astype(np.int64), np.arange(n + 1)), shape=(n, n_classes))


#: metrics that are a mean over outputs of a per-output value: reported per output on request,
#: as ``l2[3]`` for output 3
PER_OUTPUT = ("l2", "rmse", "binary_logloss", "multilabel_logloss", "binary_error")


#: the PER_OUTPUT metrics of the binary log loss (logloss_rows' cells)
LOGLOSS = ("binary_logloss", "multilabel_logloss")
#: the metrics read from the raw scores alone, by objective: a sigmoid-linked objective's log loss (logloss_rows
#: takes the sigmoid in its own pass), the multi-class log loss (log-sum-exp, softmax_logloss_rows) and error (the
#: largest raw score is the most probable class)
RAW_SCORE_METRICS = {"binary": LOGLOSS, "multilabel": LOGLOSS, "multiclass": ("multi_logloss", "multi_error")}
#: the work of a log loss cell (an exponential and a logarithm), in kernels._variants.pick's units
_LOGLOSS_CELL_WORK = 20
_NO_CELLS = np.empty((0, 0))
_NO_MASK = np.empty((0, 0), dtype=np.float32)


def needs_probabilities(metrics, objective: str) -> bool:
    """Whether metric_parts needs the predictions ``prob`` for these metrics (RAW_SCORE_METRICS: where it does
    not, its prob may be None)."""
    from_raw = RAW_SCORE_METRICS.get(objective, ())
    return any(m not in from_raw for m in metrics)


def _row_sums(metric: str, y: np.ndarray, raw: np.ndarray, prob: np.ndarray | None, mask: np.ndarray | None,
              keep_cells: bool) -> tuple[np.ndarray, np.ndarray | None]:
    """(each row's sum of a PER_OUTPUT metric's (masked) per-output values, those (n, d) values when
    ``keep_cells``, else None).  The log loss takes prob, or the sigmoid of raw when prob is None."""
    if metric in LOGLOSS:
        values = raw if prob is None else prob
        rows = np.empty(values.shape[0])
        cells = np.empty(values.shape) if keep_cells else _NO_CELLS
        kernel = pick(logloss_rows, logloss_rows_serial, _LOGLOSS_CELL_WORK * values.size)
        kernel(np.ascontiguousarray(values, dtype=np.float64), prob is None,
               np.ascontiguousarray(y, dtype=np.float64),
               _NO_MASK if mask is None else np.ascontiguousarray(mask, dtype=np.float32), rows, cells)
        return rows, (cells if keep_cells else None)
    if metric in ("l2", "rmse"):
        cells = (prob - y) ** 2
    else:
        cells = ((prob > 0.5) != (y > 0.5)).astype(np.float64)
    if mask is not None:
        cells = cells * mask
    return cells.sum(axis=1), cells


#: ranking metrics: the name they report under (``precision@3``) and their per-row values at 1..k
RANKING = {"precision_at_k": ("precision", precision_at_k_rows), "ndcg_at_k": ("ndcg", ndcg_at_k_rows)}
#: every ranking metric: RANKING's and PSP@k (a ratio of two per-row sums, needing the training propensities)
RANKING_METRICS = (*RANKING, "psprecision_at_k")


def metric_parts(metric: str, y: np.ndarray, raw: np.ndarray, prob: np.ndarray, w: np.ndarray | None,
                 eval_at: tuple, per_output: bool = False, mask: np.ndarray | None = None,
                 inv_propensity: np.ndarray | None = None) -> list[MetricPart]:
    """y is the loss's internal label form (2-D for regression/binary/multilabel, ids for multiclass); prob
    the predictions, or None where needs_probabilities says they are not needed.
    With ``per_output`` a PER_OUTPUT metric of several outputs also gets one part per output.  ``mask``
    (n, d), 0 where a label is missing, leaves those cells out of the PER_OUTPUT metrics (a ranking
    metric counts a missing label as 0).  ``inv_propensity`` (d,): the training labels' inverse
    propensities, needed by psprecision_at_k."""
    if metric in PER_OUTPUT:
        n_outputs = y.shape[1]
        row_sums, cells = _row_sums(metric, y, raw, prob, mask, per_output and n_outputs > 1)
        root = metric == "rmse"
        if mask is None:
            parts = [_part(metric, row_sums / n_outputs, w, root=root)]
        else:
            parts = [_part(metric, row_sums, w, root=root, den_per_row=mask.sum(axis=1))]
        if per_output and n_outputs > 1:
            parts += [_part(f"{metric}[{j}]", cells[:, j], w, root=root,
                            den_per_row=None if mask is None else mask[:, j]) for j in range(cells.shape[1])]
        return parts
    if metric == "multi_logloss":
        per_row = np.empty(raw.shape[0])
        pick(softmax_logloss_rows, softmax_logloss_rows_serial, _LOGLOSS_CELL_WORK * raw.size)(
            np.ascontiguousarray(raw, dtype=np.float64), np.ascontiguousarray(y, dtype=np.int64), per_row)
        return [_part(metric, per_row, w)]
    if metric == "multi_error":
        return [_part(metric, (raw.argmax(axis=1) != y).astype(np.float64), w)]
    if metric in RANKING:
        label, rows_at_k = RANKING[metric]
        truth = _class_indicator(y, prob.shape[1]) if y.ndim == 1 else y
        per_row = rows_at_k(truth, prob, max(eval_at))
        return [_part(f"{label}@{k}", per_row[:, k - 1], w, higher=True) for k in eval_at]
    if metric == "psprecision_at_k":
        if inv_propensity is None:
            raise ValueError("metric 'psprecision_at_k' needs the training labels' inverse propensities: it is "
                             "computed during training (train's valid_sets, an estimator's eval_set)")
        truth = _class_indicator(y, prob.shape[1]) if y.ndim == 1 else y
        gained, best = psprecision_at_k_parts(truth, prob, inv_propensity, max(eval_at))
        return [_part(f"psp@{k}", gained[:, k - 1], w, higher=True, den_per_row=best[:, k - 1]) for k in eval_at]
    raise ValueError(f"unknown metric {metric!r}")  # pragma: no cover - checked in Params


def finish(parts: list[MetricPart]) -> list[tuple[str, float, bool]]:
    out = []
    for part in parts:
        value = part.num / part.den if part.den > 0 else float("nan")
        out.append((part.name, float(np.sqrt(value)) if part.root else float(value), part.higher_better))
    return out


def add_parts(a: list[MetricPart], b: list[MetricPart]) -> list[MetricPart]:
    """The parts of two shards of one data set, summed."""
    return [x._replace(num=x.num + y.num, den=x.den + y.den) for x, y in zip(a, b)]


def evaluate(metric: str, y: np.ndarray, raw: np.ndarray, prob: np.ndarray, w: np.ndarray | None,
             eval_at: tuple) -> list[tuple[str, float, bool]]:
    return finish(metric_parts(metric, y, raw, prob, w, eval_at))


def check_metric_fits(metric: str, objective: str, n_outputs: int) -> None:
    needs = {"binary_logloss": ("binary",), "binary_error": ("binary",),
             "multi_logloss": ("multiclass",), "multi_error": ("multiclass",),
             "multilabel_logloss": ("multilabel", "binary")}
    ranking = ("multiclass", "multilabel") + SPARSE_OUTPUT_OBJECTIVES
    needs.update(precision_at_k=ranking, ndcg_at_k=ranking, psprecision_at_k=ranking)
    if objective in SPARSE_OUTPUT_OBJECTIVES and metric not in RANKING_METRICS:
        raise ValueError(f"objective '{objective}' (sparse scores) is evaluated by ranking metrics, precision_at_k, "
                         f"ndcg_at_k or psprecision_at_k, got metric '{metric}'")
    if metric in needs and objective not in needs[metric]:
        raise ValueError(f"metric '{metric}' needs objective {' or '.join(needs[metric])}, "
                         f"got objective '{objective}'")
