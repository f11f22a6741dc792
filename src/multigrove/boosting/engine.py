"""train(): the boosting loop.  The only module that reads a Params object."""
from __future__ import annotations

import contextlib
import copy
import dataclasses
from typing import Any, Callable, Iterable, Mapping

import numba
import numpy as np

from .._dtypes import SCORE, STAT
from ..data.dataset import Dataset
from ..kernels.partition import add_leaf_values
from ..kernels.split import segment_sums
from ..params import Params, objective_default_metric
from .booster import Booster
from .callbacks import CallbackEnv, EarlyStopException
from .grower import GrowerConfig, GrownTree, TreeGrower
from .leaves import StatLayout, dense_leaf_values, sparse_leaf_values
from .losses import Loss, make_loss
from .metrics import check_metric_fits, evaluate
from .sketch import sketch_gradients
from .tree import Tree


@contextlib.contextmanager
def _numba_threads(n: int):
    """Use n Numba threads inside the block (the setting is per calling thread)."""
    old = numba.get_num_threads()
    numba.set_num_threads(max(1, min(n, numba.config.NUMBA_NUM_THREADS)))
    try:
        yield numba.get_num_threads()
    finally:
        numba.set_num_threads(old)


def train(params: Mapping[str, Any] | None, train_set: Dataset, num_boost_round: int = 100,
          valid_sets: Iterable[Dataset] | None = None, valid_names: Iterable[str] | None = None,
          feval: Callable | None = None, callbacks: Iterable[Callable] | None = None) -> Booster:
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
    """
    p = Params.from_dict(params)
    if not isinstance(train_set, Dataset):
        raise TypeError(f"train_set must be a multigrove.Dataset, got {type(train_set).__name__}")
    if isinstance(num_boost_round, bool) or not isinstance(num_boost_round, (int, np.integer)) or num_boost_round < 0:
        raise ValueError(f"num_boost_round must be an integer >= 0, got {num_boost_round!r}")
    if train_set.label is None:
        raise ValueError("train_set has no label: pass label= to Dataset")
    with _numba_threads(p.threads) as threads:
        return _train(p, train_set, int(num_boost_round), list(valid_sets or []),
                      list(valid_names or []), feval, list(callbacks or []), threads)


def _train(p: Params, ds: Dataset, rounds: int, valid_sets: list, valid_names: list, feval,
           callbacks: list, threads: int) -> Booster:
    ds.construct(p.max_bin, p.bin_construct_sample_cnt, p.seed)
    mapper = ds.bin_mapper
    loss, y = make_loss(p.objective, p.num_class, p.num_outputs, ds.label, ds)
    d = loss.n_outputs
    w = ds.weight
    objective = loss.name
    metrics = p.metric if p.metric is not None else objective_default_metric(p.objective)
    for m in metrics:
        check_metric_fits(m, objective, d)

    booster = Booster()
    booster.objective, booster.n_features, booster.n_outputs = objective, ds.n_features, d
    booster.num_class = getattr(loss, "num_class", 0)
    booster.multi_strategy = p.multi_strategy
    booster.trees_per_iteration = 1 if p.multi_strategy == "multi_output" else d
    booster.feature_names = list(ds.feature_names)
    booster.params = p.to_dict()
    init = loss.init_score(y, w) if (p.boost_from_average and objective != "custom") else np.zeros(d)
    booster.init_score = np.asarray(init, dtype=SCORE).reshape(d)

    # validation data: binned with the training bins, scores updated tree by tree
    valids = []
    for i, vs in enumerate(valid_sets):
        if not isinstance(vs, Dataset):
            raise TypeError(f"valid_sets[{i}] must be a multigrove.Dataset, got {type(vs).__name__}")
        name = valid_names[i] if i < len(valid_names) else ("training" if vs is ds else f"valid_{i}")
        if vs is ds:
            valids.append([name, vs, y, None])
            continue
        if vs.label is None:
            raise ValueError(f"validation set '{name}' has no label")
        if vs.reference is not ds and vs.bin_mapper is None:
            vs.reference = ds  # bin it with the training bins
        vs.construct(p.max_bin, p.bin_construct_sample_cnt, p.seed)
        if vs.bin_mapper is not mapper:
            raise ValueError(f"validation set '{name}' was binned with other bins: build it with reference=train_set")
        vloss = copy.copy(loss)
        vy = vloss.check_label(vs.label)
        if vloss.n_outputs != d:
            raise ValueError(f"validation set '{name}' has {vloss.n_outputs} outputs, the training set {d}")
        valids.append([name, vs, vy, np.tile(booster.init_score, (vs.n_rows, 1))])

    cfg = GrowerConfig(num_leaves=p.num_leaves, max_depth=p.max_depth, min_data_in_leaf=p.min_data_in_leaf,
                       min_sum_hessian_in_leaf=p.min_sum_hessian_in_leaf, lambda_l2=p.lambda_l2,
                       min_gain_to_split=p.min_gain_to_split, growth_policy=p.growth_policy,
                       n_threads=threads)
    hess_const = loss.hess_constant if w is None else None
    layout = StatLayout.make(d, hess_const)
    S = layout.allocate(ds.n_rows)
    if hess_const is None and loss.hess_constant is not None:  # weighted constant Hessian: c * w, set once
        S[:, layout.h_col: layout.h_col + d] = (loss.hess_constant * w)[:, None]
    topk = p.leaf_sparsity if 0 < p.leaf_sparsity < d else 0
    sketched = p.multi_strategy == "multi_output" and p.sketch != "none"
    trees_for = _MultiOutputRounds(ds, mapper, cfg, layout, S, p, topk, sketched) \
        if p.multi_strategy == "multi_output" else _OneVsAllRounds(ds, mapper, cfg, layout, S, p)

    scores = np.tile(booster.init_score, (ds.n_rows, 1))
    cbs = sorted(callbacks, key=lambda cb: getattr(cb, "order", 0))
    for it in range(rounds):
        out_h = S[:, layout.h_col: layout.h_col + d] if layout.h_stride else None
        loss.gradients(scores, y, S[:, :d], out_h if loss.hess_constant is None else None)
        if w is not None:
            S[:, :d] *= w[:, None].astype(STAT)
            if loss.hess_constant is None:
                S[:, layout.h_col: layout.h_col + d] *= w[:, None].astype(STAT)
        new_trees = []
        for grown, tree in trees_for():
            add_leaf_values(grown.rows, grown.leaf_start, grown.leaf_end, tree.leaf_value,
                            np.ascontiguousarray(tree.columns()), scores)
            new_trees.append(tree)
            booster._append(tree)
        results = []
        for entry in valids:
            name, vs, vy, vscores = entry
            if vscores is None:
                vscores = scores
            else:
                booster._predict_binned_into(vs.binned, mapper.missing_bin, new_trees, vscores)
            results += _evaluate(loss, metrics, p.eval_at, name, vs, vy, vscores, feval)
        env = CallbackEnv(model=booster, params=booster.params, iteration=it, begin_iteration=0,
                          end_iteration=rounds, evaluation_result_list=results)
        try:
            for cb in cbs:
                cb(env)
        except EarlyStopException as stop:
            booster.best_iteration = stop.best_iteration + 1
            booster.best_score = {}
            for dname, mname, value, _ in stop.best_score or []:
                booster.best_score.setdefault(dname, {})[mname] = value
            break
    return booster


class _MultiOutputRounds:
    """One tree for all outputs per round; splits scored on the full statistics or a sketch,
    leaf values always from the full statistics, dense or k-sparse."""

    def __init__(self, ds, mapper, cfg, layout, S, p: Params, topk: int, sketched: bool):
        self.ds, self.mapper, self.layout, self.S, self.p = ds, mapper, layout, S, p
        self.topk, self.sketched = topk, sketched
        # with a sketch, splits are scored densely on the sketch and only the leaves are sparse
        self.cfg = dataclasses.replace(cfg, topk=0 if sketched else topk,
                                       restricted=p.sparse_split == "restricted")
        self.rng = np.random.default_rng(p.seed)
        self.growers: dict[StatLayout, TreeGrower] = {}
        self.buffers: dict[StatLayout, np.ndarray] = {}

    def _grower(self, lay: StatLayout) -> TreeGrower:
        if lay not in self.growers:
            self.growers[lay] = TreeGrower(self.ds.binned, self.mapper.hist_offsets, self.mapper.missing_bin,
                                           lay, self.cfg)
        return self.growers[lay]

    def _split_stats(self) -> tuple[np.ndarray, StatLayout]:
        lay, S = self.layout, self.S
        if not self.sketched:
            return S, lay
        d = lay.k
        H = S[:, lay.h_col: lay.h_col + d] if lay.h_stride else None
        sk = sketch_gradients(self.p.sketch, self.p.sketch_k, S[:, :d], H, self.rng)
        k = sk.G.shape[1]
        if sk.G is S[:, :d] or (sk.columns is None and k == d and sk.H is H):
            return S, lay
        slay = StatLayout.make(k, lay.h_scale if lay.h_stride == 0 else None,
                               shared_hessian=sk.H is not None and sk.H.shape[1] == 1)
        if slay not in self.buffers:
            self.buffers[slay] = slay.allocate(S.shape[0])
        buf = self.buffers[slay]
        buf[:, :k] = sk.G
        if sk.H is not None:
            buf[:, slay.h_col: slay.h_col + sk.H.shape[1]] = sk.H
        return buf, slay

    def __call__(self):
        stats, slay = self._split_stats()
        grown = self._grower(slay).grow(stats)
        sums = grown.leaf_sums
        if stats is not self.S:
            sums = np.empty((grown.leaf_start.size, self.layout.n_cols))
            segment_sums(grown.rows, grown.leaf_start, grown.leaf_end, self.S, sums)
        p, d = self.p, self.layout.k
        if self.topk:
            cols, values = sparse_leaf_values(sums, self.layout, p.lambda_l2, p.learning_rate, self.topk)
            tree = _make_tree(grown, self.mapper, values, np.zeros(0, np.int32), cols)
        else:
            values = dense_leaf_values(sums, self.layout, p.lambda_l2, p.learning_rate)
            tree = _make_tree(grown, self.mapper, values, np.arange(d, dtype=np.int32), None)
        yield grown, tree


class _OneVsAllRounds:
    """One single-output tree per output per round (the LightGBM / XGBoost way)."""

    def __init__(self, ds, mapper, cfg, layout, S, p: Params):
        self.layout, self.S, self.p, self.mapper = layout, S, p, mapper
        self.lay1 = StatLayout.make(1, layout.h_scale if layout.h_stride == 0 else None)
        self.grower = TreeGrower(ds.binned, mapper.hist_offsets, mapper.missing_bin, self.lay1, cfg)
        self.S1 = self.lay1.allocate(ds.n_rows)

    def __call__(self):
        lay, p = self.layout, self.p
        for col in range(lay.k):
            self.S1[:, 0] = self.S[:, col]
            if self.lay1.h_stride:
                self.S1[:, 1] = self.S[:, lay.h_col + col]
            grown = self.grower.grow(self.S1)
            values = dense_leaf_values(grown.leaf_sums, self.lay1, p.lambda_l2, p.learning_rate)
            yield grown, _make_tree(grown, self.mapper, values, np.array([col], dtype=np.int32), None)


def _make_tree(grown: GrownTree, mapper, values: np.ndarray, cols: np.ndarray, leaf_cols) -> Tree:
    thr = mapper.bounds[mapper.bound_offsets[grown.split_feature] + grown.threshold_bin] \
        if grown.split_feature.size else np.zeros(0)
    return Tree(split_feature=grown.split_feature, threshold=np.asarray(thr, dtype=np.float64),
                threshold_bin=grown.threshold_bin, default_left=grown.default_left,
                left_child=grown.left_child, right_child=grown.right_child, split_gain=grown.split_gain,
                internal_count=grown.internal_count, leaf_value=values,
                leaf_count=(grown.leaf_end - grown.leaf_start).astype(np.int64), output_cols=cols,
                leaf_cols=leaf_cols)


def _evaluate(loss: Loss, metrics, eval_at, name, ds: Dataset, y, raw, feval) -> list:
    out = []
    prob = loss.transform(raw) if (metrics or feval) else None
    for m in metrics:
        for mname, value, higher in evaluate(m, y, raw, prob, ds.weight, eval_at):
            out.append((name, mname, value, higher))
    if feval is not None:
        preds = prob[:, 0] if prob.shape[1] == 1 else prob
        res = feval(preds, ds)
        for r in ([res] if isinstance(res, tuple) else list(res)):
            if not (isinstance(r, tuple) and len(r) == 3):
                raise TypeError("feval must return (name, value, is_higher_better) or a list of them")
            out.append((name, str(r[0]), float(r[1]), bool(r[2])))
    return out
