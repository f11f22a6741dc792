"""train(): the boosting loop.  The only module that reads a Params object."""
from __future__ import annotations

import contextlib
import copy
import dataclasses
import os
import time
import warnings
from typing import Any, Callable, Iterable, Mapping, NamedTuple

import numba
import numpy as np
import scipy.sparse as sp

from .._dtypes import INDEX, SCORE
from .._validation import check_feature_names
from ..data.dataset import Dataset
from ..params import MultigroveWarning, Params, objective_default_metric
from ..xmc.metrics import inverse_propensity_from_counts
from .booster import Booster
from .callbacks import CallbackEnv, EarlyStopException
from .grower import GrowerConfig, GrownTree, HistogramPools, TreeGrower
from .leaves import StatLayout, dense_leaf_values, sparse_leaf_values
from .losses import Loss, label_for, make_loss, observed
from .metrics import RANKING_METRICS, check_metric_fits, finish
from .sampling import feature_mask
from .shard import EvalShard, OutputColumn, SampleSpec, predict_trees_into, training_shard, walks_trees
from .sketch import FULL, SketchPlan, plan_sketch
from .sparse_output import SparseEvalShard, SparseOutputShard
from .tree import Tree, set_split_fields

#: a training set of at most this many cells (rows x features) is trained on one thread: its largest histogram
#: (the root) is about 50 us of work, a whole round a few hundred microseconds of kernels, so that parallel
#: regions would save microseconds a round where compiling them costs the first fit seconds
#: (benchmarks/first_fit.py); its kernels are the serial twins (kernels._variants)
SERIAL_FIT_MAX_CELLS = 1 << 16


def fit_threads(config: Params, n_rows: int, n_features: int) -> int:
    """The threads a fit on n_rows x n_features runs (a local fit, and a distributed fit's client): num_threads
    (every core for 0), or one for a set of at most SERIAL_FIT_MAX_CELLS cells."""
    if n_rows * n_features <= SERIAL_FIT_MAX_CELLS:
        return 1
    return config.threads


@contextlib.contextmanager
def _numba_threads(n: int):
    """Use n Numba threads inside the block (the setting is per calling thread)."""
    old = numba.get_num_threads()
    numba.set_num_threads(max(1, min(n, numba.config.NUMBA_NUM_THREADS)))
    try:
        yield numba.get_num_threads()
    finally:
        numba.set_num_threads(old)


@contextlib.contextmanager
def _verbosity(level: int):
    """verbosity < 0 silences multigrove's warnings inside the block."""
    with warnings.catch_warnings():
        if level < 0:
            warnings.simplefilter("ignore", MultigroveWarning)
        yield


def info(config: Params, message: str) -> None:
    """An info line, printed when verbosity >= 1."""
    if config.verbosity >= 1:
        print(f"[multigrove] {message}", flush=True)


def describe_store(ds: Dataset) -> str:
    st = ds.store
    n_sparse = int((st.feature_kind == 2).sum())
    return (f"{ds.n_rows:,} rows x {ds.n_features:,} features: {st.dense.shape[1]:,} dense columns, "
            f"{st.bundle.shape[1]:,} bundles of {int((st.feature_kind == 1).sum()):,} features, {n_sparse:,} sparse "
            f"features ({st.sparse_bins.shape[0] / max(ds.n_rows, 1):.1f} stored bins per row); "
            f"{ds.bin_mapper.total_bins:,} bins of at least {ds.bin_mapper.bin_min_rows} sampled rows")


def train(params: Mapping[str, Any] | None, train_set: Dataset, num_boost_round: int = 100,
          valid_sets: Iterable[Dataset] | None = None, valid_names: Iterable[str] | None = None,
          feval: Callable | None = None, callbacks: Iterable[Callable] | None = None,
          init_model: "Booster | str | os.PathLike | None" = None) -> Booster:
    """Train a boosted forest.

    Parameters
    ----------
    params : dict of parameter names (see multigrove.Params) or their aliases.
    train_set : Dataset with labels.
    num_boost_round : number of boosting rounds (each adds one multi-output tree, or one tree
        per output with multi_strategy="one_vs_all").
    valid_sets, valid_names : data evaluated after every round; passing train_set itself
        evaluates the training data under the name "training".
    feval : callable(preds, dataset) -> (name, value, is_higher_better) or a list of them.
    callbacks : e.g. [early_stopping(50), log_evaluation(10), record_evaluation(d)].
    init_model : Booster or path of a saved model, optional
        Continue training this model: its trees are kept (copied, the given Booster is not changed),
        the new rounds fit the residuals of its predictions, and the result holds both.  The
        objective, the outputs and the features must match.  Training 100 rounds, then 100 more from
        that model, grows the same trees as 200 rounds in one go when nothing else changes (the
        random draws of a round depend on the seed and the round's number only).  Predicting the
        start needs the raw features (a Dataset not yet binned) or thresholds that are bin bounds of
        the Dataset (the model was trained on bins built the same way).

    Returns
    -------
    Booster
        The trained model; with early stopping, ``best_iteration`` is set.
    """
    config = Params.from_dict(params)
    check_training_args(train_set, num_boost_round, least=0)
    base = _load_init_model(init_model)
    with _numba_threads(fit_threads(config, train_set.n_rows, train_set.n_features)) as threads, \
            _verbosity(config.verbosity):
        return _train(config, train_set, int(num_boost_round), list(valid_sets or []),
                      list(valid_names or []), feval, list(callbacks or []), threads, base)


def check_training_args(train_set, num_boost_round, least: int) -> None:
    """Raise unless train_set is a Dataset with labels and num_boost_round an integer >= least."""
    if not isinstance(train_set, Dataset):
        raise TypeError(f"train_set must be a multigrove.Dataset, got {type(train_set).__name__}")
    if isinstance(num_boost_round, bool) or not isinstance(num_boost_round, (int, np.integer)) \
            or num_boost_round < least:
        raise ValueError(f"num_boost_round must be an integer >= {least}, got {num_boost_round!r}")
    if train_set.label is None:
        raise ValueError("train_set has no label: pass label= to Dataset")


def _load_init_model(init_model) -> Booster | None:
    if init_model is None:
        return None
    if isinstance(init_model, Booster):
        return copy.deepcopy(init_model)
    if isinstance(init_model, (str, os.PathLike)):
        return Booster(model_file=init_model)
    raise TypeError(f"init_model must be a Booster or the path of a saved model, got {type(init_model).__name__}")


def _check_continues(base: Booster, booster: Booster) -> None:
    """Raise unless ``booster`` (new, empty) can continue ``base``."""
    for name in ("objective", "n_outputs", "n_features", "num_class", "multi_strategy"):
        if getattr(base, name) != getattr(booster, name):
            raise ValueError(f"init_model has {name}={getattr(base, name)!r} but this training has "
                             f"{name}={getattr(booster, name)!r}: it cannot be continued")


def _start_scores(base: Booster, ds: Dataset, raw_features) -> np.ndarray:
    """The init model's raw scores for the training rows (model units): from the raw features when
    they are still there, else on the binned store when every threshold is a bin bound."""
    if raw_features is not None:
        return base.predict(raw_features, raw_score=True).reshape(ds.n_rows, -1)
    trees = [binned_tree(t, ds.bin_mapper) for t in base.trees]
    out = np.tile(base.init_score, (ds.n_rows, 1))
    predict_trees_into(ds.store, np.arange(ds.n_rows, dtype=INDEX), trees, out)
    return out


def _row_offsets(ds: Dataset, loss: Loss, name: str) -> np.ndarray | None:
    """The Dataset's init_score (model units, (n_rows, n_outputs)), checked against the objective, or None."""
    offsets = ds.init_score
    if offsets is None:
        return None
    if loss.sparse_output:
        raise ValueError(f"init_score is not available with objective '{loss.name}': its scores are sparse")
    if offsets.shape[1] != loss.n_outputs:
        raise ValueError(f"{name}'s init_score has {offsets.shape[1]} column(s) but objective '{loss.name}' has "
                         f"{loss.n_outputs} output(s): give shape ({ds.n_rows}, {loss.n_outputs})"
                         + (f" or ({ds.n_rows},)" if loss.n_outputs == 1 else ""))
    return offsets


def _start_raw(booster: Booster, base: Booster | None, ds: Dataset, raw_features, offsets) -> np.ndarray:
    """The raw scores (model units) a Dataset's rows start from: the init model's predictions or the
    booster's start score, plus the rows' init_score."""
    start = _start_scores(base, ds, raw_features) if base is not None else np.tile(booster.init_score, (ds.n_rows, 1))
    return start if offsets is None else start + offsets


def binned_tree(tree: Tree, mapper) -> Tree:
    """The tree with threshold_bin taken from this mapper's bins (a ValueError when a threshold is not one
    of its bin bounds: the tree was trained on other bins)."""
    bins = np.empty(tree.n_internal, dtype=tree.threshold_bin.dtype)
    cat_bins = None if tree.cat_bins is None else np.empty_like(tree.cat_bins)
    for node, (f, t) in enumerate(zip(tree.split_feature, tree.threshold)):
        if tree.cat_index is not None and tree.cat_index[node] >= 0:  # a set split: its categories' bins here
            j = tree.cat_index[node]
            codes = tree.cat_codes[tree.cat_offsets[j]: tree.cat_offsets[j + 1]]
            here = mapper.category_bins(int(f), codes.astype(np.float64))
            if not mapper.categorical[f] or np.any(here == mapper.missing_bin[f]):
                raise ValueError(f"init_model splits feature {int(f)} on categories that have no bin of their own in "
                                 "this Dataset (the model was trained on other bins): pass a Dataset that is not "
                                 "yet constructed, so that the start is predicted from the raw features")
            cat_bins[tree.cat_offsets[j]: tree.cat_offsets[j + 1]] = here
            bins[node] = -1
            continue
        bounds = mapper.bounds[mapper.bound_offsets[f]: mapper.bound_offsets[f + 1]]
        hit = np.flatnonzero(bounds == t)
        if hit.size == 0:
            raise ValueError(f"init_model splits feature {int(f)} at {t!r}, which is not a bin bound of this "
                             "Dataset (the model was trained on other bins): pass a Dataset that is not yet "
                             "constructed, so that the start is predicted from the raw features")
        bins[node] = hit[0]
    return dataclasses.replace(tree, threshold_bin=bins, cat_bins=cat_bins)


def _train(config: Params, ds: Dataset, rounds: int, valid_sets: list, valid_names: list, feval,
           callbacks: list, threads: int, base: Booster | None = None) -> Booster:
    booster, rounds_run = start_training(config, ds, rounds, valid_sets, valid_names, feval, callbacks, threads, base)
    for _ in rounds_run:
        pass
    return booster


def start_training(config: Params, ds: Dataset, rounds: int, valid_sets: list, valid_names: list, feval,
                   callbacks: list, threads: int, base: Booster | None = None, pools: HistogramPools | None = None):
    """(the Booster, the generator of its rounds: see :func:`boost_rounds`): everything before the first
    round is done (binning, start scores, validation sets); the rounds run as the generator is advanced.
    ``pools``: histogram buffers shared with other trainings that take turns with this one."""
    loss, y = make_loss(config.objective, config.num_class, config.num_outputs, ds.label, ds)
    if loss.sparse_output:
        return _start_sparse_output(config, loss, y, ds, rounds, valid_sets, valid_names, feval, callbacks, threads,
                                    base)
    if config.target_scaling == "standard" and loss.name != "regression":
        raise ValueError(f"target_scaling='standard' applies to objective 'regression', got '{loss.name}'")
    if loss.name == "regression" and config.scales_targets(loss.n_outputs):
        loss.standardize(loss.moments(y, ds.weight))
    started = time.perf_counter()
    raw_features = ds.data if base is not None else None
    ds.construct(config, loss.n_outputs, statistic_targets(loss, y))
    if base is not None and (ds.target_statistics is not None or base.target_statistics is not None):
        raise ValueError("init_model cannot continue a model with target statistics of its categorical features (its "
                         "statistics come from its own training rows): train with cat_encoding='sets', or train anew")
    info(config, f"binned {describe_store(ds)} in {time.perf_counter() - started:.2f} s; {loss.n_outputs} outputs")
    offsets = _row_offsets(ds, loss, "train_set")
    booster = new_booster(config, loss, ds.n_features, ds.feature_names, loss.moments(y, ds.weight),
                          from_average=offsets is None)
    booster.categories = dict(ds.categories)
    booster.target_statistics = ds.target_statistics
    check_categorical(config, ds.categories, ds.feature_names, loss)
    layout = stat_layout(loss, ds.weight, config, bool(np.isnan(y).any()) if y.dtype.kind == "f" else False)
    rows = training_shard(ds.store, y, ds.weight, loss, booster.init_score, layout, threads,
                          deterministic=config.deterministic, device_type=config.device_type)
    booster.init_score = loss.unscale(booster.init_score.reshape(1, -1)).reshape(-1)  # the model's own units
    first = 0
    if base is not None:
        _check_continues(base, booster)
        rows.init_score[...] = loss.rescale(base.init_score.reshape(1, -1)).reshape(-1)
        base.params, base.best_iteration, base.best_score = booster.params, 0, {}
        first, booster = base.current_iteration(), base
    if base is not None or offsets is not None:
        rows.scores[...] = loss.rescale(_start_raw(booster, base, ds, raw_features, offsets))
    valids = []
    for name, vs, vy, valid_raw in _validation_sets(config, ds, loss, valid_sets, valid_names, base is not None):
        if vs is ds:
            valids.append(Validation(name, rows, ds))
            continue
        valid_rows = EvalShard(vs.store, vy, vs.weight, copy.copy(loss), rows.init_score)
        valid_offsets = _row_offsets(vs, loss, f"validation set '{name}'")
        if offsets is not None and valid_offsets is None:
            warnings.warn(f"train_set has an init_score and validation set '{name}' has none: its metrics score the "
                          "trees from the model's start alone", MultigroveWarning, stacklevel=4)
        if base is not None or valid_offsets is not None:
            valid_rows.scores[...] = loss.rescale(_start_raw(booster, base, vs, valid_raw, valid_offsets))
        splits_per_round = booster.trees_per_iteration * (config.leaves_for(loss.n_outputs) - 1)
        if not walks_trees(vs.store, splits_per_round, threads):
            rows.follow(valid_rows)
        valids.append(Validation(name, valid_rows, vs))
    return booster, boost_rounds(config, booster, loss, rows, valids, ds.bin_mapper, feval, callbacks, rounds, threads,
                                 first, pools=pools)


def _validation_sets(config: Params, ds: Dataset, loss: Loss, valid_sets: list, valid_names: list, keep_raw: bool):
    """(name, Dataset binned with the training bins, its label as the loss takes it, its raw features when
    ``keep_raw``) for each validation set; the training set itself comes back as it is."""
    for i, vs in enumerate(valid_sets):
        if not isinstance(vs, Dataset):
            raise TypeError(f"valid_sets[{i}] must be a multigrove.Dataset, got {type(vs).__name__}")
        name = valid_names[i] if i < len(valid_names) else ("training" if vs is ds else f"valid_{i}")
        if vs is ds:
            yield name, ds, None, None
            continue
        if vs.label is None:
            raise ValueError(f"validation set '{name}' has no label")
        if vs.n_features != ds.n_features:
            raise ValueError(f"validation set '{name}' has {vs.n_features} features but train_set has "
                             f"{ds.n_features}: a validation set must have the training set's columns")
        check_feature_names(vs.feature_names, ds.feature_names, f"validation set '{name}'", "train_set")
        if vs.reference is not ds and vs.bin_mapper is None:
            vs.reference = ds  # bin it with the training bins
        valid_raw = vs.data if keep_raw else None
        vs.construct(config, loss.n_outputs)
        if vs.bin_mapper is not ds.bin_mapper:
            raise ValueError(f"validation set '{name}' was binned with other bins: build it with reference=train_set")
        vloss = copy.copy(loss)
        vy = vloss.check_label(label_for(vloss, vs.label))
        if vloss.n_outputs != loss.n_outputs:
            raise ValueError(f"validation set '{name}' has {vloss.n_outputs} outputs, the training set "
                             f"{loss.n_outputs}")
        yield name, vs, vy, valid_raw


def _start_sparse_output(config: Params, loss: Loss, y, ds: Dataset, rounds: int, valid_sets: list, valid_names: list,
                         feval, callbacks: list, threads: int, base: Booster | None):
    """Training with a sparse-output objective: labels, scores and gradients stay CSR
    (boosting/sparse_output.py); the boosting loop and the grower are the ones of every objective."""
    if base is not None:
        raise ValueError(f"init_model cannot be continued with objective '{loss.name}' (sparse scores): train "
                         "the rounds in one go")
    if feval is not None:
        raise ValueError(f"feval is not available with objective '{loss.name}': its scores are sparse; use "
                         "metric='precision_at_k' or 'ndcg_at_k'")
    for i, dataset in enumerate([ds, *valid_sets]):
        if isinstance(dataset, Dataset):
            _row_offsets(dataset, loss, "train_set" if i == 0 else f"valid_sets[{i - 1}]")  # refused: scores are sparse
    if config.device_type != "cpu":
        raise ValueError(f"objective '{loss.name}' trains on the CPU only (its splits are scored from the rows of "
                         f"each label): device_type='{config.device_type}' is not supported, use 'cpu'")
    started = time.perf_counter()
    ds.construct(config, loss.n_outputs)
    info(config, f"binned {describe_store(ds)} in {time.perf_counter() - started:.2f} s; {loss.n_outputs} sparse "
                 f"outputs ({y.nnz / max(ds.n_rows, 1):.1f} labels per row)")
    booster = new_booster(config, loss, ds.n_features, ds.feature_names, loss.moments(y, ds.weight))
    check_categorical(config, ds.categories, ds.feature_names, loss)
    rows = SparseOutputShard(ds.store, y, ds.weight, loss, threads, deterministic=config.deterministic)
    valids = []
    for name, vs, vy, _ in _validation_sets(config, ds, loss, valid_sets, valid_names, False):
        valids.append(Validation(name, rows if vs is ds else SparseEvalShard(vs.store, vy, vs.weight), vs))
    return booster, boost_rounds(config, booster, loss, rows, valids, ds.bin_mapper, feval, callbacks, rounds, threads)


def statistic_targets(loss: Loss, y: np.ndarray) -> tuple[np.ndarray, list[str]] | None:
    """(target columns (n, k), their names) of the ordered target statistics (data.target_statistics): a regression's
    standardized targets, the labels of binary and multi-label objectives, the class indicators of a multi-class
    one (NaN where a target is missing); None for other objectives."""
    if loss.name == "regression":
        Y = y.reshape(y.shape[0], -1).astype(np.float64)
        with np.errstate(invalid="ignore"):
            Y = (Y - np.nanmean(Y, axis=0)) / np.maximum(np.nanstd(Y, axis=0), 1e-300)
        return Y, ["target"] if Y.shape[1] == 1 else [f"target{j}" for j in range(Y.shape[1])]
    if loss.name in ("binary", "multilabel"):  # read only: no copy of a float64 label matrix
        Y = np.asarray(y, dtype=np.float64).reshape(y.shape[0], -1)
        return Y, ["label"] if Y.shape[1] == 1 else [f"label{j}" for j in range(Y.shape[1])]
    if loss.name == "multiclass":
        return np.eye(loss.n_outputs)[y.astype(np.int64)], [f"class{j}" for j in range(loss.n_outputs)]
    return None


def check_categorical(config: Params, categories: dict, feature_names: list, loss: Loss) -> None:
    """Refuse the settings that cannot split a categorical feature on a set of categories."""
    if not categories:
        return
    names = [feature_names[f] for f in categories][:5]
    if config.growth_policy == "symmetric":
        raise ValueError(f"growth_policy='symmetric' splits a whole level by one threshold and has no set splits, "
                         f"but features {names} are categorical: use 'leafwise' or 'depthwise', or give the "
                         "features as numbers")
    if loss.sparse_output:
        raise ValueError(f"objective '{loss.name}' scores splits from the rows of each label and has no set splits, "
                         f"but features {names} are categorical: give them as numbers (one-hot or codes)")


def new_booster(config: Params, loss: Loss, n_features: int, feature_names: list, moments: np.ndarray,
                from_average: bool = True) -> Booster:
    """An empty Booster for this objective, with the start score (the optimal constant, from the
    labels' moments: see Loss.moments; 0 without ``from_average``, as when the rows bring their own)."""
    n_outputs = loss.n_outputs
    booster = Booster()
    booster.objective, booster.n_features, booster.n_outputs = loss.name, n_features, n_outputs
    booster.num_class = getattr(loss, "num_class", 0)
    booster.multi_strategy = config.multi_strategy
    booster.trees_per_iteration = 1 if config.multi_strategy == "multi_output" else n_outputs
    booster.feature_names = list(feature_names)
    booster.params = config.to_dict(model_only=True)
    boost = from_average and config.boost_from_average and loss.name != "custom"
    # without boost_from_average: 0 in the model's units
    init = loss.init_from_moments(moments) if boost else loss.rescale(np.zeros((1, n_outputs))).reshape(n_outputs)
    booster.init_score = np.asarray(init, dtype=SCORE).reshape(n_outputs)  # training units: _train converts it
    return booster


def stat_layout(loss: Loss, weight: np.ndarray | None, config: Params, missing_labels: bool = False) -> StatLayout:
    """Where gradients, Hessians and the count live in the statistics matrix (a constant Hessian is
    stored when row weights, GOSS or missing labels change it per cell, else it is not)."""
    scaled = weight is not None or config.data_sample_strategy == "goss" or missing_labels \
        or config.bagging_temperature > 0
    return StatLayout.make(loss.n_outputs, None if scaled else loss.hess_constant)


#: objectives whose outputs are trained independently (per-output early stopping is exact for them)
SEPARABLE = ("regression", "multilabel", "binary")


class Validation(NamedTuple):
    name: str
    rows: Any          # an object with add_trees() (not for the training rows) and metric_parts()
    dataset: Any       # what feval receives


def boost(config: Params, booster: Booster, loss: Loss, rows, valids: list[Validation], mapper, feval,
          callbacks: list, rounds: int, threads: int, first: int = 0) -> Booster:
    """The boosting loop over training rows that answer the TrainingShard requests (this process's
    rows; a distributed trainer would pass a proxy over every worker's shard).  Rounds are numbered
    from ``first`` (the rounds of an init model)."""
    for _ in boost_rounds(config, booster, loss, rows, valids, mapper, feval, callbacks, rounds, threads, first):
        pass
    return booster


def boost_rounds(config: Params, booster: Booster, loss: Loss, rows, valids: list[Validation], mapper, feval,
                 callbacks: list, rounds: int, threads: int, first: int = 0, *, pools: HistogramPools | None = None):
    """:func:`boost` one round at a time: a generator that yields each round's evaluation results
    (after the callbacks ran) and ends when training does; cross-validation advances one per fold in
    lockstep.  ``booster`` holds the trees so far."""
    metrics = config.metric if config.metric is not None else objective_default_metric(config.objective)
    for metric in metrics:
        check_metric_fits(metric, loss.name, loss.n_outputs)
    if config.bagging_fraction < 1.0 and config.bagging_freq == 0:
        warnings.warn(f"bagging_fraction={config.bagging_fraction} has no effect with bagging_freq=0 (rows are drawn "
                      "every bagging_freq rounds): set bagging_freq >= 1", MultigroveWarning, stacklevel=3)
    statistics = booster.target_statistics
    make_trees = _TreeMaker(config, rows, mapper.hist_offsets, loss.n_outputs, threads,
                            tuple(int(f) for f in np.flatnonzero(mapper.categorical)),
                            () if statistics is None else statistics.features, pools)
    _warn_without_effect(config, make_trees, loss.n_outputs, metrics)
    started = time.perf_counter()
    cbs = sorted(callbacks, key=lambda cb: getattr(cb, "order", 0))
    stops_per_output = [cb for cb in cbs if _stops_per_output(cb, loss)]
    for cb in cbs:  # per_output="auto" resolved for this run
        if hasattr(cb, "watch_per_output"):
            cb.watch_per_output = cb in stops_per_output
    per_output = config.metric_per_output or bool(stops_per_output) or \
        any(getattr(cb, "needs_per_output_metrics", False) for cb in cbs)
    if stops_per_output and loss.name not in SEPARABLE:
        raise ValueError(f"early_stopping(per_output=True) needs outputs trained independently (objective "
                         f"{' or '.join(SEPARABLE)}), got objective '{loss.name}'")
    frozen: set = set()
    booster.evals_result = {}
    inv_propensity = None
    if "psprecision_at_k" in metrics:  # the training labels' propensities, for every data set
        inv_propensity = inverse_propensity_from_counts(*rows.label_counts())
    try:
        for it in range(first, first + rounds):
            make_trees.compute_gradients(rows, it)
            new_trees = make_trees(rows, mapper, it)
            _check_finite(new_trees, config, it)
            for tree in new_trees:
                booster._append(dataclasses.replace(tree, leaf_value=loss.unscale_leaves(tree.leaf_value,
                                                                                       tree.columns())))
            results = []
            for v in valids:
                if v.rows is not rows:
                    v.rows.add_trees(new_trees)
                results += _evaluate(loss, metrics, config.eval_at, v, feval, per_output, inv_propensity)
            for data, metric, value, _ in results:
                booster.evals_result.setdefault(data, {}).setdefault(metric, []).append(value)
            env = CallbackEnv(model=booster, params=booster.params, iteration=it, begin_iteration=first,
                              end_iteration=first + rounds, evaluation_result_list=results, frozen_outputs=frozen)
            try:
                for cb in cbs:
                    cb(env)
            except EarlyStopException as stop:
                _stop(booster, stop)
                break
            if frozen:
                rows.freeze_outputs(sorted(frozen))
            yield results
    finally:
        for cb in cbs:
            getattr(cb, "close", lambda: None)()
    seconds = time.perf_counter() - started
    info(config, f"{booster.current_iteration()} rounds, {booster.num_trees()} trees in {seconds:.2f} s")


def _check_finite(trees: list, config: Params, iteration: int) -> None:
    """Stop a diverging run: leaf values turn infinite or NaN once scores outgrow the float32 statistics
    (a learning rate far above 1 makes every round overshoot), and predictions would be NaN."""
    if not all(np.isfinite(tree.leaf_value).all() for tree in trees):
        raise ValueError(f"training diverged in round {iteration}: a tree's leaf values are not finite; "
                         f"learning_rate={config.learning_rate} is too large for these targets (or targets and "
                         "weights are too large for float32 gradient statistics)")


def _warn_without_effect(config: Params, make_trees: "_TreeMaker", n_outputs: int, metrics) -> None:
    """A warning for each parameter the user set that this training cannot use."""
    def warn(message):
        warnings.warn(message, MultigroveWarning, stacklevel=4)
    setting = f"({n_outputs} outputs, multi_strategy={config.multi_strategy!r})"
    if "sketch_k" in config.given and make_trees.sketch in ("none", "auto"):
        warn(f"sketch_k={config.sketch_k} has no effect: splits are scored with sketch={make_trees.sketch!r} {setting}")
    if "leaf_sparsity" in config.given and config.leaf_sparsity >= n_outputs:
        warn(f"leaf_sparsity={config.leaf_sparsity} has no effect: it is not below the number of outputs, so every "
             f"leaf is dense {setting}")
    if "sparse_split" in config.given and (make_trees.topk == 0 or make_trees.sketch != "none"):
        why = "splits are scored on a sketch" if make_trees.topk else "leaves are dense (leaf_sparsity)"
        warn(f"sparse_split={config.sparse_split!r} has no effect: {why} {setting}")
    if "sketch" in config.given and config.sketch != "none" and make_trees.sketch != "none" \
            and not make_trees.sketched:
        warn(f"sketch={config.sketch!r} has no effect: splits of one-output trees are scored on their own gradient "
             f"{setting}")
    goss = config.data_sample_strategy == "goss"
    for name in ("top_rate", "other_rate"):
        if name in config.given and not goss:
            warn(f"{name}={getattr(config, name)} has no effect: it sets GOSS's sample, and "
                 f"data_sample_strategy is {config.data_sample_strategy!r}")
    if "bagging_freq" in config.given and config.bagging_freq > 0 and config.bagging_fraction >= 1.0 and not goss:
        warn(f"bagging_freq={config.bagging_freq} has no effect with bagging_fraction=1.0 (every row is drawn): set "
             "bagging_fraction below 1")
    if "eval_at" in config.given and not any(m in RANKING_METRICS for m in metrics):
        warn(f"eval_at={list(config.eval_at)} has no effect: it sets the k of the ranking metrics "
             f"{RANKING_METRICS}, and the metrics are {list(metrics)}")
    if "metric_per_output" in config.given and config.metric_per_output and n_outputs == 1:
        warn("metric_per_output=True has no effect: the model has one output")


class _TreeMaker:
    """The trees of one round: one multi-output tree (splits scored on the full statistics or a
    sketch, leaf values always from the full statistics, dense or k-sparse), or one single-output
    tree per output (one_vs_all)."""

    def __init__(self, config: Params, rows, offsets: np.ndarray, n_outputs: int, threads: int,
                 categorical_features: tuple = (), unsplittable: tuple = (), pools: HistogramPools | None = None):
        self.config, self.offsets, self.n_outputs = config, offsets, n_outputs
        self.pools = pools
        self.layout = rows.layout
        self.topk = config.leaf_k_for(n_outputs)
        self.sparse_output = isinstance(rows, SparseOutputShard)
        self.sketch = config.sketch_for(n_outputs)
        self.num_leaves = config.leaves_for(n_outputs)
        sketched = self.sketched = config.multi_strategy == "multi_output" and self.sketch != "none" and n_outputs > 1
        # with a sketch, splits are scored densely on the sketch and only the leaves are sparse
        self.grower_config = GrowerConfig(
            num_leaves=self.num_leaves, max_depth=config.depth_limit(),
            min_data_in_leaf=config.min_data_for(rows.n_rows),
            min_sum_hessian_in_leaf=config.min_sum_hessian_in_leaf, lambda_l2=config.lambda_l2,
            min_gain_to_split=config.min_gain_to_split, growth_policy=config.growth_policy, n_threads=threads,
            topk=0 if sketched else self.topk, restricted=config.sparse_split == "restricted",
            random_strength=config.random_strength,
            histogram_pool_bytes=-1 if config.histogram_pool_size < 0 else int(config.histogram_pool_size * 2 ** 20),
            categorical_features=categorical_features, max_cat_to_onehot=config.one_vs_rest_limit(),
            max_cat_threshold=config.max_cat_threshold, cat_smooth=config.cat_smooth, cat_l2=config.cat_l2,
            min_data_per_group=config.min_data_per_group)
        self.growers: dict[StatLayout, TreeGrower] = {}
        self._projection: SketchPlan | None = None  # this round's random projection, drawn before its gradients
        self.n_features = offsets.shape[0] - 1
        self.splittable = np.ones(self.n_features, np.bool_)  # features target statistics replace: never split
        self.splittable[list(unsplittable)] = False

    def _grower(self, layout: StatLayout) -> TreeGrower:
        if layout not in self.growers:
            self.growers[layout] = TreeGrower(self.offsets, layout, self.grower_config, self.pools)
        return self.growers[layout]

    def _sample_spec(self, iteration: int) -> SampleSpec:
        config = self.config
        bayesian = dict(temperature=config.bagging_temperature, weight_seed=(config.seed, 4, iteration))
        if config.data_sample_strategy == "goss":
            warm_up = int(1.0 / config.learning_rate)  # early gradients are all large: every row (as LightGBM)
            strategy = "goss" if iteration >= warm_up else "all"
            return SampleSpec(strategy, 1.0, config.top_rate, config.other_rate, (config.seed, 1, iteration))
        if config.bagging_freq > 0 and config.bagging_fraction < 1.0:  # one draw per period of bagging_freq rounds
            period = iteration // config.bagging_freq
            return SampleSpec("bagging", config.bagging_fraction, 0.0, 0.0, (config.seed, 1, period), **bayesian)
        return SampleSpec("all", 1.0, 0.0, 0.0, (config.seed,), **bayesian)

    def _grow(self, rows, split_layout: StatLayout, column_rng: np.random.Generator | None,
              noise_rng: np.random.Generator | None, column: int | None = None) -> GrownTree:
        rows.begin_tree(self.num_leaves)
        mask = feature_mask(self.n_features, self.config.feature_fraction, column_rng)
        if not self.splittable.all():
            mask = self.splittable if mask is None else mask & self.splittable
        grad_sq_sum = 0.0
        if self.config.random_strength > 0:  # the noise scale: sum of ||g_i||^2 of the tree's outputs (a sketch
            norms = rows.column_sq_norms()  # of them is unbiased for it)
            grad_sq_sum = float(norms.sum() if column is None else norms[column])
        return self._grower(split_layout).grow(rows, mask, noise_rng, grad_sq_sum, rows.candidate_scorer)

    def compute_gradients(self, rows, iteration: int) -> None:
        """The round's gradients.  A random projection needs none to be drawn: it is drawn first and handed
        to the rows, which may project the gradients in the pass that computes them."""
        self._projection = None
        if self.config.multi_strategy == "multi_output" and self.sketch == "random_projection":
            self._projection = self._plan(rows, iteration)
        if self._projection is not None and not self._projection.is_full:
            rows.compute_gradients(self._projection)
        else:
            rows.compute_gradients()

    def _plan(self, rows, iteration: int) -> SketchPlan:
        """This round's sketch (a round's draws depend on the seed and its number only: continued training
        repeats them)."""
        sketch_rng = np.random.default_rng((self.config.seed, 0, iteration))
        return plan_sketch(self.sketch, self.config.sketch_k, self.n_outputs, sketch_rng, rows.column_sq_norms,
                           rows.gram_product)

    def __call__(self, rows, mapper, iteration: int) -> list[Tree]:
        config, n_outputs = self.config, self.n_outputs
        trees = []
        # a round's draws depend on the seed and the round's number only (continued training repeats them)
        # each made only where the round draws from it (a generator takes 10-40 us to seed: Python no thread shortens)
        column_rng = np.random.default_rng((config.seed, 2, iteration)) if config.feature_fraction < 1.0 else None
        noise_rng = np.random.default_rng((config.seed, 3, iteration)) if config.random_strength > 0 else None
        if config.multi_strategy == "multi_output":
            plan = self._projection if self._projection is not None else self._plan(rows, iteration)
            split_layout = rows.set_split_statistics(plan)
            rows.draw_rows(self._sample_spec(iteration))
            grown = self._grow(rows, split_layout, column_rng, noise_rng)
            if self.sparse_output:  # k-sparse leaves from the sparse gradients (GBDT-Sparse eq. 19)
                cols, values = rows.sparse_leaf_values(grown.n_leaves, self.topk, config.lambda_l2,
                                                       config.learning_rate)
                trees.append(_make_tree(grown, mapper, values, np.zeros(0, np.int32), cols))
                rows.apply_tree(trees[-1])
                return trees
            sums = grown.leaf_sums if split_layout is self.layout else rows.leaf_sums(grown.n_leaves)
            if self.topk:
                cols, values = sparse_leaf_values(sums, self.layout, config.lambda_l2, config.learning_rate, self.topk)
                trees.append(_make_tree(grown, mapper, values, np.zeros(0, np.int32), cols))
            else:
                values = dense_leaf_values(sums, self.layout, config.lambda_l2, config.learning_rate)
                trees.append(_make_tree(grown, mapper, values, np.arange(n_outputs, dtype=np.int32), None))
            rows.apply_tree(trees[-1])
            return trees
        rows.set_split_statistics(FULL)
        rows.draw_rows(self._sample_spec(iteration))  # one sample for the round's n_outputs trees
        for col in range(n_outputs):
            split_layout = rows.set_split_statistics(OutputColumn(col))
            grown = self._grow(rows, split_layout, column_rng, noise_rng, col)
            values = dense_leaf_values(grown.leaf_sums, split_layout, config.lambda_l2, config.learning_rate)
            trees.append(_make_tree(grown, mapper, values, np.array([col], dtype=np.int32), None))
            rows.apply_tree(trees[-1])
        return trees


def _make_tree(grown: GrownTree, mapper, values: np.ndarray, cols: np.ndarray, leaf_cols) -> Tree:
    thr = mapper.bounds[mapper.bound_offsets[grown.split_feature] + grown.threshold_bin] \
        if grown.split_feature.size else np.zeros(0)
    sets = set_split_fields(grown.left_bins, grown.split_feature, mapper)
    if sets:  # a set split has no threshold
        thr = np.where(sets["cat_index"] >= 0, 0.0, thr)
    n_leaves = grown.n_leaves
    return Tree(split_feature=grown.split_feature, threshold=np.asarray(thr, dtype=np.float64),
                threshold_bin=grown.threshold_bin, default_left=grown.default_left,
                left_child=grown.left_child, right_child=grown.right_child, split_gain=grown.split_gain,
                internal_count=grown.internal_count, leaf_value=values,
                leaf_count=np.round(grown.leaf_sums[:, -1]).astype(np.int64).reshape(n_leaves), output_cols=cols,
                leaf_cols=leaf_cols, **sets)


def _stops_per_output(cb, loss: Loss) -> bool:
    """Whether an early-stopping callback watches every output on its own ("auto": the targets of a
    regression with several, like one model per target)."""
    setting = getattr(cb, "per_output", False)
    if setting == "auto":
        return loss.name == "regression" and loss.n_outputs > 1
    return bool(setting)


def _stop(booster: Booster, stop: EarlyStopException) -> None:
    """Record the best iteration (and each output's, for per-output early stopping) on the booster."""
    booster.best_iteration = stop.best_iteration + 1
    booster.best_score = {}
    for dname, mname, value, _ in stop.best_score or []:
        booster.best_score.setdefault(dname, {})[mname] = value
    if stop.output_best_iterations is not None:
        booster.stop_outputs([b + 1 for b in stop.output_best_iterations])


def _evaluate(loss: Loss, metrics, eval_at, v: Validation, feval, per_output: bool, inv_propensity) -> list:
    out = [(v.name, *res) for res in finish(v.rows.metric_parts(metrics, eval_at, per_output, inv_propensity))]
    if feval is not None:
        prob = loss.transform(v.rows.scores)
        preds = prob[:, 0] if prob.shape[1] == 1 else prob
        res = feval(preds, v.dataset)
        for r in ([res] if isinstance(res, tuple) else list(res)):
            if not (isinstance(r, tuple) and len(r) == 3):
                raise TypeError("feval must return (name, value, is_higher_better) or a list of them")
            out.append((v.name, str(r[0]), float(r[1]), bool(r[2])))
    return out


def refit_booster(booster: Booster, data, label, weight=None, decay_rate: float = 0.9) -> Booster:
    """A copy of ``booster`` whose leaf values are fitted again on (data, label), tree structures
    kept (see Booster.refit)."""
    from .._validation import check_features, check_label, check_real, check_weight
    if booster.objective == "custom":
        raise ValueError("refit needs the model's objective; a model trained with a custom objective has none")
    decay_rate = check_real(decay_rate, "decay_rate", 0.0)
    if decay_rate > 1.0:
        raise ValueError(f"decay_rate must be in [0, 1], got {decay_rate}")
    X, _ = check_features(data, n_features=booster.n_features, name="data", expected_names=booster.feature_names,
                          categories=booster.categories)
    n = X.shape[0]
    w = check_weight(weight, n)
    loss, y = make_loss(booster.objective, booster.num_class, booster.n_outputs, check_label(label, n), None)
    if loss.n_outputs != booster.n_outputs:
        raise ValueError(f"label has {loss.n_outputs} outputs, the model {booster.n_outputs}")
    y, mask = observed(y)
    config = Params.from_dict(booster.params)
    new = copy.deepcopy(booster)
    leaves = booster.predict(X, pred_leaf=True, num_iteration=booster.current_iteration())
    scores = np.tile(new.init_score, (n, 1))
    G = np.empty((n, loss.n_outputs), np.float64)
    H = np.empty_like(G)
    per = new.trees_per_iteration
    for t, tree in enumerate(new.trees):
        if t % per == 0:  # one gradient per round, as in training
            loss.gradients(scores, y, G, H if loss.hess_constant is None else None)
            if loss.hess_constant is not None:
                H[...] = loss.hess_constant
            for factor in (w[:, None] if w is not None else None, mask):
                if factor is not None:
                    G *= factor
                    H *= factor
        member = sp.csr_matrix((np.ones(n), leaves[:, t], np.arange(n + 1)), shape=(n, tree.n_leaves))
        counts = np.asarray(member.sum(axis=0)).ravel()
        cols = tree.columns()
        g_sum = np.take_along_axis(np.asarray(member.T @ G), cols, 1)
        h_sum = np.take_along_axis(np.asarray(member.T @ H), cols, 1)
        fitted = -config.learning_rate * g_sum / np.maximum(h_sum + config.lambda_l2, 1e-300)
        reached = counts[:, None] > 0
        tree.leaf_value = np.where(reached, decay_rate * tree.leaf_value + (1 - decay_rate) * fitted, tree.leaf_value)
        tree.leaf_count = counts.astype(np.int64)
        np.add.at(scores, (np.arange(n)[:, None], cols[leaves[:, t]]), tree.leaf_value[leaves[:, t]])
    new._stack = None
    return new
