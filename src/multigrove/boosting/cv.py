"""Cross-validation: k boosters, one per fold, trained round by round in lockstep (multigrove.cv).

The folds share the bins of the whole training set (binned once), each trains on its training rows
and is evaluated on its held-out rows after every round; the callbacks (early stopping, logging,
recording) see the metrics' means over the folds, so early stopping picks the round where the mean
validation loss is best.
"""
from __future__ import annotations

import copy
import os
from typing import Any, Callable, Iterable, Mapping

import numpy as np

from .._validation import check_int, counted_rows
from ..data.dataset import Dataset
from ..params import Params
from .booster import Booster
from .callbacks import CallbackEnv, EarlyStopException
from .engine import (
    _load_init_model,
    _numba_threads,
    _stop,
    _verbosity,
    check_training_args,
    fit_threads,
    start_training,
    statistic_targets,
)
from .grower import HistogramPools
from .losses import make_loss

#: objectives whose labels are class ids: their folds keep the class proportions (stratified=True)
_CLASS_OBJECTIVES = ("binary", "multiclass")


def cv(params: Mapping[str, Any] | None, train_set: Dataset, num_boost_round: int = 100, nfold: int = 5,
       folds: Any = None, stratified: bool = True, shuffle: bool = True, feval: Callable | None = None,
       callbacks: Iterable[Callable] | None = None,
       init_model: "Booster | str | os.PathLike | None" = None, return_boosters: bool = False) -> dict:
    """Cross-validate: train one booster per fold in lockstep and report the mean validation metrics.

    Parameters
    ----------
    params : dict of parameter names (see multigrove.Params) or their aliases.
        ``seed`` also shuffles the rows into folds.
    train_set : Dataset with labels, not yet constructed
        Its features are binned once, with every row; each fold's rows are then binned with those bins.
        Its weights and init_score go with each fold's rows.
    num_boost_round : int, default 100
        Rounds, at most (early stopping may end sooner).
    nfold : int, default 5
        Folds (at least 2), when ``folds`` is not given.  Where some rows weigh 0, the rows of positive
        weight are cut into the folds apart from those of weight 0 (dealt to the folds in turn), so that
        every fold trains and validates on rows that count: it needs ``nfold`` rows of positive weight.
    folds : iterable of (train_indices, valid_indices) pairs, or a splitter with ``split(X, y)``, optional
        The folds to use instead of ``nfold`` shuffled ones; each part must hold a row of positive weight.
    stratified : bool, default True
        For class labels (objectives binary and multiclass): folds with the class proportions of the
        whole set (when every class has ``nfold`` rows; otherwise plain folds).
    shuffle : bool, default True
        Shuffle the rows before cutting them into folds.
    feval : callable, optional
        As in :func:`multigrove.train`; evaluated on each fold and averaged.
    callbacks : list of callables, optional
        Called after every round with the folds' mean metrics under the data name ``"valid"``:
        ``early_stopping(n)`` stops when the mean has not improved for n rounds (on the metrics as a
        whole: per-output early stopping is not available here), ``log_evaluation``,
        ``record_evaluation``.
    init_model : Booster or path of a saved model, optional
        Every fold continues this model (as :func:`multigrove.train` does).
    return_boosters : bool, default False
        Also return the folds' boosters under ``"boosters"``.

    Returns
    -------
    dict
        ``"valid <metric>-mean"`` and ``"valid <metric>-stdv"``: a list with one value per round (the
        mean over folds and its standard deviation), cut at the best round when early stopping
        stopped the run (so their length is the number of rounds to train on all rows).
    """
    config = Params.from_dict(params)
    check_training_args(train_set, num_boost_round, least=1)
    if train_set.data is None:
        raise ValueError("cv needs the features of train_set, which a constructed Dataset has released: pass a "
                         "Dataset that is not yet constructed")
    cbs = sorted(callbacks or [], key=lambda cb: getattr(cb, "order", 0))
    for cb in cbs:
        if getattr(cb, "per_output", False) is True:
            raise ValueError("cv stops on the folds' mean metrics as a whole: early_stopping(per_output=True) "
                             "is not available here")
        if hasattr(cb, "watch_per_output"):
            cb.watch_per_output = False
    splits = fold_indices(config, train_set, nfold, folds, stratified, shuffle)
    base = _load_init_model(init_model)
    with _numba_threads(fit_threads(config, train_set.n_rows, train_set.n_features)) as threads, \
            _verbosity(config.verbosity):
        runs = _start_folds(config, train_set, splits, int(num_boost_round), feval, threads, base)
        try:
            results = _lockstep(config, runs, cbs, int(num_boost_round), base)
        finally:
            for _, rounds_run in runs:
                rounds_run.close()
    if return_boosters:
        results["boosters"] = [booster for booster, _ in runs]
    return results


def fold_indices(config: Params, train_set: Dataset, nfold: int, folds, stratified: bool, shuffle: bool) -> list:
    """[(training rows, validation rows), ...] of the cross-validation, each checked non-empty and, where the rows
    are weighted, of positive total weight (a part whose rows all weigh 0 has no loss to train on or to score)."""
    n = train_set.n_rows
    weight = train_set.weight
    if folds is None:
        nfold = check_int(nfold, "nfold", 2)
        if nfold > n:
            raise ValueError(f"nfold={nfold} is more than the {n} rows of train_set")
        folds = _drawn_folds(config, train_set.label, weight, nfold, stratified, shuffle)
    elif hasattr(folds, "split"):
        folds = folds.split(np.zeros(n), train_set.label)
    out = []
    for i, pair in enumerate(folds):
        if not (isinstance(pair, (tuple, list)) and len(pair) == 2):
            raise ValueError(f"folds[{i}] must be a pair (train_indices, valid_indices)")
        fit_rows, valid_rows = (np.asarray(part, dtype=np.int64).reshape(-1) for part in pair)
        for name, rows in (("training", fit_rows), ("validation", valid_rows)):
            if rows.size == 0 or rows.min() < 0 or rows.max() >= n:
                raise ValueError(f"folds[{i}] has {'no' if rows.size == 0 else 'out-of-range'} {name} rows "
                                 f"(train_set has {n} rows)")
            if weight is not None and not weight[rows].sum() > 0:
                raise ValueError(f"folds[{i}]'s {rows.size} {name} rows all have weight 0 in train_set: every fold "
                                 f"needs {name} rows of positive weight")
        out.append((fit_rows, valid_rows))
    if not out:
        raise ValueError("folds is empty")
    return out


def _drawn_folds(config: Params, label: np.ndarray, weight: np.ndarray | None, nfold: int, stratified: bool,
                 shuffle: bool) -> list:
    """cv's own folds (folds=None): scikit-learn's KFold, or StratifiedKFold for class labels where every class has
    nfold rows.  Where some rows weigh 0, the rows of positive weight are cut into the folds (stratified among
    themselves) apart from those of weight 0, which are dealt to the folds in turn (shuffled): every fold then
    trains and validates on rows that count.  Rows of positive weight only: the folds of the rows as they are."""
    from sklearn.model_selection import KFold, StratifiedKFold  # here: importing multigrove stays light
    n = label.shape[0]
    counted = counted_rows(weight, n)
    if counted.size < nfold:
        raise ValueError(f"nfold={nfold} is more than the {counted.size} rows of positive weight of train_set: "
                         "every fold needs one to validate on")
    seed = config.seed if shuffle else None
    counted_label = label[counted]
    classes = stratified and config.objective in _CLASS_OBJECTIVES and label.ndim == 1
    if classes and np.bincount(counted_label.astype(np.int64)).min(initial=n) >= nfold:
        drawn = StratifiedKFold(nfold, shuffle=shuffle, random_state=seed).split(np.zeros(counted.size), counted_label)
    else:
        drawn = KFold(nfold, shuffle=shuffle, random_state=seed).split(np.zeros(counted.size))
    if counted.size == n:
        return list(drawn)
    fold_of = np.empty(n, np.int64)
    for i, (_, valid) in enumerate(drawn):
        fold_of[counted[valid]] = i
    weightless = np.flatnonzero(weight <= 0)
    if shuffle:
        weightless = np.random.default_rng(config.seed).permutation(weightless)
    fold_of[weightless] = np.arange(weightless.size) % nfold
    return [(np.flatnonzero(fold_of != i), np.flatnonzero(fold_of == i)) for i in range(nfold)]


def _start_folds(config: Params, train_set: Dataset, splits: list, rounds: int, feval, threads: int,
                 base: Booster | None) -> list:
    """(booster, rounds generator) of each fold; the whole set is binned first and lends its bins."""
    X, label, weight, offsets = train_set.data, train_set.label, train_set.weight, train_set.init_score
    loss, y = make_loss(config.objective, config.num_class, config.num_outputs, label, train_set)
    train_set.construct(config, loss.n_outputs, statistic_targets(loss, y))

    def part(rows, reference):
        return Dataset(X[rows], label[rows], weight=None if weight is None else weight[rows], reference=reference,
                       feature_names=train_set.feature_names, init_score=None if offsets is None else offsets[rows])
    runs = []
    pools = HistogramPools()  # the folds take turns, a tree each: one fold's histogram buffers serve the next's
    for fit_rows, valid_rows in splits:
        fit_set = part(fit_rows, train_set)
        runs.append(start_training(config, fit_set, rounds, [part(valid_rows, fit_set)], ["valid"], feval, [], threads,
                                   copy.deepcopy(base), pools=pools))
    return runs


def _lockstep(config: Params, runs: list, cbs: list, rounds: int, base: Booster | None) -> dict:
    """Advance every fold one round at a time; the callbacks see the means over folds."""
    first = 0 if base is None else base.current_iteration()
    results: dict = {}
    handle = [booster for booster, _ in runs]  # what the callbacks see as the model
    for it in range(first, first + rounds):
        per_fold = [next(rounds_run) for _, rounds_run in runs]
        mean_list = []
        for j, (_, metric, _, higher) in enumerate(per_fold[0]):
            values = np.array([fold[j][2] for fold in per_fold])
            mean = float(values.mean())
            results.setdefault(f"valid {metric}-mean", []).append(mean)
            results.setdefault(f"valid {metric}-stdv", []).append(float(values.std()))
            mean_list.append(("valid", metric, mean, higher))
        env = CallbackEnv(model=handle, params=config.to_dict(model_only=True), iteration=it, begin_iteration=first,
                          end_iteration=first + rounds, evaluation_result_list=mean_list)
        try:
            for cb in cbs:
                cb(env)
        except EarlyStopException as stop:
            kept = stop.best_iteration - first + 1
            for booster, _ in runs:
                _stop(booster, stop)
            return {key: values[:kept] for key, values in results.items()}
    return results
