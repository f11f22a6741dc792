"""Objectives: label checks, optimal constant start, gradients and diagonal Hessians, link.

Every loss works on raw scores of shape (n_rows, n_outputs) and writes unweighted gradients
and Hessians into caller-owned float32 arrays of the same shape (the engine applies weights).
A loss whose Hessian is the same constant for every cell sets ``hess_constant``; the engine
then skips the Hessian columns entirely.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import scipy.sparse as sp
from scipy.special import expit, log_softmax, logit, softmax

from .._dtypes import STAT_INPUT_LIMIT
from .._validation import check_indicator, check_sparse_features
from ..kernels._variants import pick
from ..kernels.objective import (
    residual,
    scaled_residual,
    scaled_residual_serial,
    sigmoid_grad_hess,
    sigmoid_grad_hess_serial,
    sigmoid_round,
    sigmoid_round_serial,
    softmax_grad_hess,
    softmax_grad_hess_serial,
    softmax_round,
    softmax_round_serial,
)
from ..kernels.sparse_output import LOSS_HINGE, LOSS_SQUARED

_EPS = 1e-15


def _wmean(a: np.ndarray, w: np.ndarray | None) -> np.ndarray:
    return np.average(a, axis=0, weights=w)


def link(objective: str, raw: np.ndarray) -> np.ndarray:
    """Predictions from raw scores (n, d): the inverse link of an objective (sigmoid for binary and
    multilabel, softmax over each row for multiclass, the identity otherwise).  The one implementation,
    used by the losses during training and by the Booster."""
    if objective in ("binary", "multilabel"):
        return expit(raw)
    if objective == "multiclass":
        return softmax(raw, axis=1)
    return raw


def observed(y: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """(y with missing labels set to 0, float32 mask: 1 where a label is given, 0 where it is NaN), or
    (y, None) when every label is given.  Masked cells have no gradient, Hessian or metric term."""
    if y.dtype.kind != "f":
        return y, None
    missing = np.isnan(y)
    if not missing.any():
        return y, None
    return np.where(missing, 0.0, y), (~missing).astype(np.float32)


def _refuse_missing(y: np.ndarray, objective: str) -> None:
    if np.isnan(y).any():
        idx = np.argwhere(np.isnan(y))[0]
        where = f"row {idx[0]}" + (f", column {idx[1]}" if y.ndim == 2 else "")
        raise ValueError(f"label for objective '{objective}' must not be NaN (missing labels are masked for "
                         f"objectives regression, binary and multilabel), got NaN at {where}")


def _check_observed(y: np.ndarray, objective: str) -> None:
    """Every output needs at least one label."""
    y2 = y.reshape(len(y), -1)
    empty = np.flatnonzero(np.isnan(y2).all(axis=0)) if y2.shape[0] else np.zeros(0, int)
    if empty.size:
        raise ValueError(f"label for objective '{objective}': output {int(empty[0])} has no label on any row "
                         "(every value is NaN)")


def _first_bad(mask: np.ndarray) -> tuple:
    return tuple(int(i) for i in np.argwhere(mask)[0])


class Loss:
    name = "loss"
    hess_constant: float | None = None
    n_outputs = 1
    #: (parallel, serial) kernels of one pass over the rows that adds the last tree to the scores, computes
    #: the gradients and projects them (kernels.objective.round_rows), or None: separate passes
    round_pass: tuple | None = None
    sparse_output = False  # labels, scores and gradients kept sparse (SparseOutputLoss)

    def check_label(self, y: np.ndarray) -> np.ndarray:  # pragma: no cover - interface
        raise NotImplementedError

    def moments(self, y: np.ndarray, w: np.ndarray | None) -> np.ndarray:
        """(3, d) per output, over the rows where its label is given: the sum of the weights, of
        weight x label and of weight x label^2.  Moments of shards add up: the start score and target
        scaling of a data set split over workers come from the summed moments."""
        y2 = np.asarray(y, dtype=np.float64).reshape(len(y), -1)
        row_w = np.ones(len(y2)) if w is None else np.asarray(w, dtype=np.float64).reshape(-1)
        given = ~np.isnan(y2)
        if given.all():  # products with the weights (BLAS), no (n, d) temporaries but one: Delicious' 12,920 x 983
            counts = np.full(y2.shape[1], row_w.sum())  # labels took 0.37 s the masked way
            return np.stack([counts, row_w @ y2, row_w @ np.square(y2)])
        values = np.where(given, y2, 0.0)
        return np.stack([row_w @ given, row_w @ values, row_w @ np.square(values)])

    def init_from_moments(self, moments: np.ndarray) -> np.ndarray:
        """The optimal constant start score from the (summed) moments."""
        return np.zeros(self.n_outputs)

    def init_score(self, y: np.ndarray, w: np.ndarray | None) -> np.ndarray:
        return self.init_from_moments(self.moments(y, w))

    def gradients(self, raw: np.ndarray, y: np.ndarray, out_g: np.ndarray, out_h: np.ndarray | None) -> None:
        raise NotImplementedError  # pragma: no cover - interface

    def transform(self, raw: np.ndarray) -> np.ndarray:
        return raw

    def unscale(self, raw: np.ndarray) -> np.ndarray:
        """Raw scores of training (possibly on rescaled targets) in the model's own units."""
        return raw

    def rescale(self, raw: np.ndarray) -> np.ndarray:
        """The inverse of unscale: the model's raw scores in training units."""
        return raw

    def unscale_leaves(self, values: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """Leaf values (n_leaves, width) for outputs ``cols`` in the model's own units."""
        return values

    def value(self, raw: np.ndarray, y: np.ndarray, w: np.ndarray | None = None) -> float:
        """Mean loss over rows (used by tests and by the Newton-step check)."""
        raise NotImplementedError  # pragma: no cover - interface


class SquaredError(Loss):
    """0.5 * sum_j (raw_j - y_j)^2 per row; one or many targets.

    With target scaling (``standardize``), training runs on z_j = (y_j - shift_j) / scale_j: the
    raw scores are in those units, ``transform`` maps them back (metrics compare original units)
    and ``unscale`` / ``unscale_leaves`` turn the finished model into original units.  Every target
    then weighs the same in the summed split gain, whatever its spread.
    """
    name = "regression"
    hess_constant = 1.0

    def __init__(self):
        self.shift = self.scale = None

    def check_label(self, y):
        y2 = y.reshape(len(y), -1)
        _check_observed(y2, self.name)
        big = np.abs(np.nan_to_num(y2)) > STAT_INPUT_LIMIT
        if big.any():
            i, j = _first_bad(big)
            raise ValueError(f"label for objective 'regression' must be at most {STAT_INPUT_LIMIT:g} in magnitude "
                             f"(gradients are float32: rescale the targets), got {y2[i, j]:g} at row {i}, column {j}")
        self.n_outputs = y2.shape[1]
        return y2

    def standardize(self, moments: np.ndarray) -> None:
        """Train on standardized targets: the (weighted) mean and standard deviation of each target,
        from its moments (``moments``; summed over shards in a distributed run)."""
        self.shift = moments[1] / moments[0]
        sd = np.sqrt(np.maximum(moments[2] / moments[0] - self.shift ** 2, 0.0))
        # a spread below the one-pass variance's rounding (about 1e-8 of the mean) is a constant target
        self.scale = np.where(sd > 1e-6 * np.abs(self.shift), sd, 1.0)

    def _training_target(self, y):
        return y if self.scale is None else (y - self.shift) / self.scale

    def init_from_moments(self, moments):
        mean = moments[1] / moments[0]
        return mean if self.scale is None else (mean - self.shift) / self.scale

    def gradients(self, raw, y, out_g, out_h):
        if self.scale is None:
            if pick(residual, None, raw.size) is residual:
                residual(raw, y, out_g)
            else:  # small data: NumPy's one-thread loop, and no kernel to compile for a first fit
                np.subtract(raw, y, out=out_g, casting="unsafe")
        else:  # no standardized copy of y (n x d float64) is kept
            pick(scaled_residual, scaled_residual_serial, raw.size)(raw, y, self.shift, self.scale, out_g)
        if out_h is not None:
            out_h[...] = 1.0

    def transform(self, raw):
        return self.unscale(raw)

    def unscale(self, raw):
        return raw if self.scale is None else self.shift + self.scale * raw

    def rescale(self, raw):
        return raw if self.scale is None else (raw - self.shift) / self.scale

    def unscale_leaves(self, values, cols):
        return values if self.scale is None else values * self.scale[cols]

    def value(self, raw, y, w=None):
        return float(_wmean(0.5 * ((raw - self._training_target(y)) ** 2).sum(axis=1), w))


class BinaryLogloss(Loss):
    name = "binary"
    round_pass = (sigmoid_round, sigmoid_round_serial)

    def check_label(self, y):
        if y.ndim != 1:
            raise ValueError(f"label for objective 'binary' must be 1-D, got shape {y.shape} "
                             "(use objective 'multilabel' for a 0/1 indicator matrix)")
        bad = (y != 0) & (y != 1) & ~np.isnan(y)
        if bad.any():
            i = _first_bad(bad)[0]
            raise ValueError(f"label for objective 'binary' must be 0 or 1, got {y[i]:g} at row {i} "
                             "(NaN marks a missing label)")
        _check_observed(y, self.name)
        self.n_outputs = 1
        return y.reshape(-1, 1)

    def init_from_moments(self, moments):
        return logit(np.clip(moments[1] / moments[0], _EPS, 1 - _EPS))

    def gradients(self, raw, y, out_g, out_h):
        pick(sigmoid_grad_hess, sigmoid_grad_hess_serial, raw.size)(raw, y, out_g, out_h)

    def transform(self, raw):
        return link(self.name, raw)

    def value(self, raw, y, w=None):
        # log(1 + exp(raw)) - y * raw, stable
        per = (np.logaddexp(0.0, raw) - y * raw).sum(axis=1)
        return float(_wmean(per, w))


class MultilabelLogloss(BinaryLogloss):
    """Independent sigmoid per label; y is an (n, L) 0/1 indicator matrix."""
    name = "multilabel"

    def check_label(self, y):
        if y.ndim != 2:
            raise ValueError(f"label for objective 'multilabel' must be a 2-D 0/1 indicator matrix "
                             f"(n_rows, n_labels), got shape {y.shape}")
        y = check_indicator(y, name="label for objective 'multilabel'", missing_ok=True)
        _check_observed(y, self.name)
        self.n_outputs = y.shape[1]
        return y


class SoftmaxCrossEntropy(Loss):
    """Softmax cross-entropy; diagonal Hessian p(1-p) (GBDT-MO Sec. III-A)."""
    name = "multiclass"
    round_pass = (softmax_round, softmax_round_serial)

    def __init__(self, num_class: int = 0):
        self.num_class = num_class

    def check_label(self, y):
        if y.ndim != 1:
            raise ValueError(f"label for objective 'multiclass' must be 1-D class ids, got shape {y.shape}")
        _refuse_missing(y, self.name)
        bad = y != np.floor(y)
        if bad.any():
            i = _first_bad(bad)[0]
            raise ValueError(f"label for objective 'multiclass' must be integer class ids, got {y[i]:g} at row {i}")
        k = self.num_class or int(y.max()) + 1
        if k < 2:
            raise ValueError("objective 'multiclass' needs at least 2 classes; the labels hold only class 0")
        bad = (y < 0) | (y >= k)
        if bad.any():
            i = _first_bad(bad)[0]
            raise ValueError(f"label for objective 'multiclass' must be in [0, num_class) = [0, {k}), "
                             f"got {y[i]:g} at row {i}")
        self.num_class = k
        self.n_outputs = k
        return y.astype(np.int64)

    def moments(self, y, w):
        """As Loss.moments for the one-hot indicator of the classes."""
        per_class = np.bincount(y, weights=w, minlength=self.num_class).astype(np.float64)
        return np.stack([np.full(self.num_class, per_class.sum()), per_class, per_class])

    def init_from_moments(self, moments):
        prior = np.clip(moments[1] / max(moments[0][0], _EPS), _EPS, None)
        return np.log(prior) - np.log(prior).mean()

    def gradients(self, raw, y, out_g, out_h):
        pick(softmax_grad_hess, softmax_grad_hess_serial, raw.size)(raw, y, out_g, out_h)

    def transform(self, raw):
        return link(self.name, raw)

    def value(self, raw, y, w=None):
        lp = log_softmax(raw, axis=1)
        return float(_wmean(-lp[np.arange(len(y)), y], w))


class CustomObjective(Loss):
    """A user callable ``fobj(raw_scores, dataset) -> (grad, hess)``.

    ``raw_scores`` is (n_rows,) for one output and (n_rows, n_outputs) otherwise, like the
    returned arrays.  The start score is 0.
    """
    name = "custom"

    def __init__(self, fobj: Callable, n_outputs: int, dataset: Any):
        self.fobj = fobj
        self.n_outputs = n_outputs
        self.dataset = dataset

    def check_label(self, y):
        _refuse_missing(y, self.name)
        return y

    def gradients(self, raw, y, out_g, out_h):
        arg = raw[:, 0] if self.n_outputs == 1 else raw
        res = self.fobj(arg, self.dataset)
        if not (isinstance(res, tuple) and len(res) == 2):
            raise TypeError("a custom objective must return a tuple (grad, hess)")
        for name, a, out in (("grad", res[0], out_g), ("hess", res[1], out_h)):
            a = np.asarray(a, dtype=np.float64)
            shape = a.shape
            if a.ndim == 1 and self.n_outputs == 1:
                a = a.reshape(-1, 1)
            if a.shape != out.shape:
                raise ValueError(f"custom objective returned {name} of shape {shape}, expected "
                                 f"{out.shape if self.n_outputs > 1 else (out.shape[0],)}")
            if not np.all(np.isfinite(a)) or np.any(np.abs(a) > np.finfo(np.float32).max):
                raise ValueError(f"custom objective returned non-finite values in {name} (or beyond float32's range)")
            out[...] = a


class SparseOutputLoss(Loss):
    """A loss over sparse labels with sparse scores and gradients (GBDT-Sparse, Si et al. 2017, eq. 7-9).

    Labels are a CSR matrix (n, L); scores and gradients stay CSR (``kernels.sparse_output``), so
    nothing of size n x L exists in training.  The start score is 0 for every output: the optimal
    constant (each label's frequency) would give every row all L scores and end the sparsity, while 0
    is where the loss is flat on the absent labels (a zero gradient on every cell that is neither a
    label nor a score).  The second derivative is at most 1 on every cell, so leaves use the constant
    Hessian 1 per row (the paper's |V| + lambda denominator of eq. 19, a majorisation step for the
    hinge).
    """
    sparse_output = True
    hess_constant = 1.0
    code = LOSS_SQUARED

    def __init__(self):
        self.n_outputs = 0

    def check_label(self, y):
        Y = sparse_label(y, f"label for objective '{self.name}'")
        self.n_outputs = Y.shape[1]
        return Y

    def moments(self, y, w):
        return np.zeros((3, self.n_outputs))

    def gradients(self, raw, y, out_g, out_h):
        raise TypeError(f"objective '{self.name}' computes sparse gradients (SparseOutputShard), not dense ones")

    def value(self, raw, y, w=None):
        """Mean loss over rows; raw and y CSR."""
        Z, Y = sp.csr_matrix(raw), sp.csr_matrix(y)
        diff = (Z - Y).tocsr()
        if self.code == LOSS_SQUARED:
            per_cell = diff.multiply(diff)
        else:  # y = 1: max(1 - z, 0)^2; y = 0: max(z, 0)^2 (diff = z - y on the union of both patterns)
            on_label = diff.multiply(Y).minimum(0)
            off_label = diff.maximum(0) - diff.maximum(0).multiply(Y)
            per_cell = on_label.multiply(on_label) + off_label.multiply(off_label)
        return float(_wmean(0.5 * np.asarray(per_cell.sum(axis=1)).ravel(), w))


class SparseSquaredError(SparseOutputLoss):
    """0.5 * sum_q (z_q - y_q)^2 on sparse targets (any real values)."""
    name = "sparse_squared"
    code = LOSS_SQUARED


class SparseSquaredHinge(SparseOutputLoss):
    """The shifted squared hinge of GBDT-Sparse eq. 9, halved: 0.5 max(1 - z, 0)^2 on a label (y = 1),
    0.5 max(z, 0)^2 elsewhere; labels a 0/1 indicator."""
    name = "sparse_hinge"
    code = LOSS_HINGE

    def check_label(self, y):
        Y = check_indicator(sparse_label(y, f"label for objective '{self.name}'"),
                            name=f"label for objective '{self.name}'")
        self.n_outputs = Y.shape[1]
        return Y


def sparse_label(y, name: str) -> sp.csr_matrix:
    """Labels as a canonical float32 CSR matrix (structure checked, dense labels converted)."""
    if not sp.issparse(y):
        y = np.asarray(y, dtype=np.float64)
        if y.ndim != 2:
            raise ValueError(f"{name} must be a 2-D (n_rows, n_labels) matrix, got shape {y.shape}")
        y = sp.csr_matrix(y)  # a NaN is stored: the check below names its row and column
    Y = sp.csr_matrix(check_sparse_features(y, name=name))
    if np.isnan(Y.data).any():
        pos = int(np.flatnonzero(np.isnan(Y.data))[0])
        row = int(np.searchsorted(Y.indptr, pos, side="right")) - 1
        raise ValueError(f"{name} must not be NaN (sparse-output objectives have no missing labels), got NaN at row "
                         f"{row}, column {int(Y.indices[pos])}")
    big = np.abs(Y.data) > STAT_INPUT_LIMIT
    if big.any():
        pos = int(np.flatnonzero(big)[0])
        raise ValueError(f"{name} must be at most {STAT_INPUT_LIMIT:g} in magnitude, got {Y.data[pos]:g}")
    Y = sp.csr_matrix((Y.data.astype(np.float32), Y.indices.astype(np.int32), Y.indptr.astype(np.int64)),
                      shape=Y.shape)
    Y.eliminate_zeros()
    return Y


def label_for(loss: Loss, label):
    """The label as ``loss.check_label`` takes it: sparse labels kept for a sparse-output loss,
    densified for the others."""
    if sp.issparse(label) and not loss.sparse_output:
        return label.toarray()
    return label


def make_loss(objective: Any, num_class: int, num_outputs: int, label: np.ndarray, dataset: Any
              ) -> tuple[Loss, np.ndarray]:
    """Return (loss, label in the loss's internal form)."""
    if callable(objective):
        n_out = num_outputs or num_class or (label.shape[1] if label.ndim == 2 else 1)
        loss: Loss = CustomObjective(objective, n_out, dataset)
        return loss, loss.check_label(label_for(loss, label))
    loss = {"regression": SquaredError, "binary": BinaryLogloss, "multilabel": MultilabelLogloss,
            "sparse_squared": SparseSquaredError, "sparse_hinge": SparseSquaredHinge}.get(objective, None)
    loss = SoftmaxCrossEntropy(num_class) if objective == "multiclass" else loss()
    return loss, loss.check_label(label_for(loss, label))
