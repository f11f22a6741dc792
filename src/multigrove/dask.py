"""Data-parallel training on Dask's ``distributed`` scheduler.

Each worker keeps the partitions it already holds, wrapped in a ``TrainingShard`` (and an
``EvalShard`` per validation set) inside a Dask actor.  The client runs the library's one boosting
loop (``engine.boost``) and one tree grower over ``DistributedRows``, a proxy with the
``TrainingShard`` interface whose every request goes to all actors and whose answers are summed:
histograms of the root and of the smaller child of each split, leaf sums, gradient column norms
and Gram products for the sketches, metric parts.  No row leaves its worker; what travels is one
histogram per split and worker, (bins x statistic columns) float64, which a sketch keeps at
(bins x (k + 2)) whatever the number of outputs.  ``ShardActors`` sends each request to every worker at
once, straight to the workers where the client can reach them.

A dask DataFrame's ``category`` columns are categorical features: their categories must be known
(``X.categorize()``), and every partition is encoded with the training data's category lists, by
value, before it reaches a worker (validation sets and predictions too).  They are split on sets
(ordered target statistics, ``cat_encoding='statistics'``, need the rows in one process).

What is global is computed globally: bin boundaries and the feature layout from a sample of every
worker's rows (all of them up to ``bin_construct_sample_cnt``), the start score and target scaling
from summed label moments, sketches from summed column norms and Gram products, metrics from summed
metric parts.  Row sampling (bagging, GOSS) draws on each worker with the round's seed and the
worker's shard number.

    import multigrove.dask as mgd
    booster = mgd.train(client, params, X, y, num_boost_round=100, valid_sets=[(Xv, yv)])
    model = mgd.DaskGroveRegressor(n_estimators=100).fit(X, y)    # X, y: dask arrays or dataframes
"""
from __future__ import annotations

import asyncio
import inspect
import textwrap
import time
from typing import Any, Iterable, Mapping, NamedTuple, Sequence

import numpy as np

from ._validation import check_no_inf, check_weight, check_weight_sum, default_feature_names
from .boosting.booster import Booster
from .boosting.builder import run_scans
from .boosting.engine import (
    Validation,
    _numba_threads,
    boost,
    check_categorical,
    fit_threads,
    new_booster,
    stat_layout,
)
from .boosting.leaves import StatLayout
from .boosting.losses import make_loss
from .boosting.metrics import add_parts
from .data.binning import BinMapper
from .data.bundling import plan_layout
from .params import SPARSE_OUTPUT_OBJECTIVES, Params

__all__ = ["train", "DaskGroveRegressor", "DaskGroveClassifier", "DistributedRows", "ShardActors"]  # noqa: F822 - lazy


def _dask():
    try:
        import dask
        import dask.array as da
        import distributed
    except ImportError:
        raise ImportError("multigrove.dask needs dask[distributed]: pip install 'multigrove[dask]'") from None
    return dask, da, distributed


def _to_serialize(value):
    from distributed.protocol import to_serialize
    return to_serialize(value)


# ---------------------------------------------------------------------- the worker side
#: a shard of at most this many rows answers the split loop's requests on the worker's event loop
#: (a split's histogram then takes at most tens of milliseconds on one thread)
INLINE_SPLIT_ROWS = 2_000_000
#: DistributedRows.splits_ahead: splits a round trip of leaf-wise growth
DASK_SPLITS_AHEAD = 4


class ShardActor:
    """One worker's rows: its training partitions (a ``TrainingShard`` once the bins are known) and
    its partitions of each validation set (``EvalShard``).  Runs inside a Dask actor."""

    def __init__(self, parts: list, valid_parts: list, n_threads: int, shard_id: int):
        # None: no rows here (no partition, or only empty ones); a worker may hold validation rows only
        self.X, self.y, self.w = _stack(parts) or (None, None, None)
        self.valid = [_stack(vp) for vp in valid_parts]
        self.n_threads, self.shard_id = n_threads, shard_id
        self.rows = None
        self.evals: list = []

    def _threads(self):
        return _numba_threads(self.n_threads)

    # -------------------------------------------------------------- set-up
    def summary(self) -> dict:
        """Training and validation rows, the sums of their weights (None: unweighted) and each validation set's
        features, with the values of X and the weights checked here (what holds over the workers, the weights'
        sums and the features, is the client's to check); with training rows, also the features, label shape and
        largest label (class count) and whether any label is NaN."""
        if self.y is not None:
            self._checked("training", check_no_inf, self.X, "X")
            self.w = self._checked("training", self._part_weight, self.w, "sample_weight")
        for i, v in enumerate(self.valid):
            if v is not None:
                self._checked("validation", check_no_inf, v[0], f"valid_sets[{i}] X")
                self.valid[i] = (*v[:2], self._checked("validation", self._part_weight, v[2],
                                                       f"valid_sets[{i}] sample_weight"))
        checked = {"weight_sum": None if self.w is None else float(self.w.sum()),
                   "valid_weight_sums": [None if v is None or v[2] is None else float(v[2].sum()) for v in self.valid],
                   "valid_n_features": [None if v is None else int(v[0].shape[1]) for v in self.valid]}
        validation_rows = sum(v[0].shape[0] for v in self.valid if v is not None)
        y = self.y
        if y is None:
            return {"n_rows": 0, "validation_rows": validation_rows, **checked}
        return {"n_rows": int(self.X.shape[0]), "validation_rows": validation_rows, "n_features": int(self.X.shape[1]),
                "label_cols": 1 if y.ndim == 1 else int(y.shape[1]),
                "label_max": float(np.nanmax(y)) if y.size and not np.all(np.isnan(y)) else -np.inf,
                "missing": bool(np.isnan(y).any()), **checked}

    @staticmethod
    def _part_weight(w: np.ndarray | None, name: str) -> np.ndarray | None:
        """check_weight of this worker's part of the weights (not their sum: another worker's may be positive)."""
        return check_weight(w, 0 if w is None else w.shape[0], name=name, whole=False)

    def _checked(self, held: str, check, *args):
        """check(*args), its error's row numbers said to count this worker's ``held`` rows."""
        try:
            return check(*args)
        except ValueError as exc:
            raise ValueError(f"{exc} [a row number here counts the {held} rows of the worker holding shard "
                             f"{self.shard_id}, its partitions in order]") from None

    def sample(self, share: float, seed: int):
        """This worker's rows for learning the bins: all of them (share >= 1) or a uniform sample."""
        n = self.X.shape[0]
        if share >= 1.0:
            return self.X
        take = int(np.ceil(share * n))
        rows = np.sort(np.random.default_rng((seed, self.shard_id)).choice(n, take, replace=False))
        return self.X[rows]

    def setup(self, params: dict, num_class: int, mapper, layout, integer_coded: list) -> np.ndarray:
        """Bin the rows, check the labels with the run's loss; return the labels' moments.  ``integer_coded``:
        the categorical features given as integer codes (checked; a negative code is missing)."""
        from .data.categories import check_codes
        from .data.storage import build_store
        config = Params.from_dict(params)
        some_label = self.y if self.y is not None else next(v[1] for v in self.valid if v is not None)
        # a row number in its error counts this worker's rows only: _checked says so
        self.loss, label = self._checked("training" if self.y is not None else "validation", make_loss,
                                         config.objective, num_class, config.num_outputs, some_label, None)
        self.label = label if self.y is not None else None
        names = default_feature_names(mapper.n_features)
        with self._threads():
            self.store = None if self.X is None else \
                build_store(check_codes(self.X, integer_coded, names, "X"), mapper, layout)
            self.valid_stores = []
            for v in self.valid:
                self.valid_stores.append(None if v is None else
                                         build_store(check_codes(v[0], integer_coded, names, "X"), mapper, layout))
        self.X = None  # the binned store is all training needs
        return None if self.label is None else self.loss.moments(self.label, self.w)

    def start(self, scaling, init_score, layout: StatLayout) -> None:
        """Create the training shard (and validation shards) at the start score."""
        import copy

        from .boosting.shard import EvalShard, TrainingShard
        if scaling is not None:
            self.loss.shift, self.loss.scale = scaling
        if self.store is not None:
            self.rows = TrainingShard(self.store, self.label, self.w, self.loss, init_score, layout, self.n_threads,
                                      shard_id=self.shard_id)
        self.evals = []
        for v, store in zip(self.valid, self.valid_stores):
            if v is None:
                self.evals.append(None)
                continue
            vloss = copy.copy(self.loss)
            shard = EvalShard(store, vloss.check_label(v[1]), v[2], vloss, init_score)
            if self.store is not None:  # its rows' leaves found by the training rows' partitions
                self.rows.follow(shard)
            self.evals.append(shard)

    # -------------------------------------------------------------- the TrainingShard requests
    def call(self, method: str, *args):
        with self._threads():
            return getattr(self.rows, method)(*args)

    def root(self, n_bins: int, n_cols: int):
        out = np.empty((n_bins, n_cols))
        with self._threads():
            total = self.rows.root(out)
        return out, total

    async def split(self, requests, shapes, commits=()):
        return await self._per_split(self._split, requests, shapes, commits)

    def commit(self, commits) -> None:
        """The splits made ahead of their turn that now have it: (leaf, new_leaf) pairs, in order."""
        for leaf, new_leaf in commits:
            self.rows.commit(leaf, new_leaf)

    async def histograms(self, leaves, shape):
        return await self._per_split(self._histograms, leaves, shape)

    async def _per_split(self, work, *args):
        """Run a request of the split loop on the worker's event loop while the shard is small enough
        for it to take milliseconds (the hop to the actor's thread and back cost 0.15 ms of a 1.8 ms
        round trip in a test of two 512 KB answers), on a thread otherwise, so that the worker stays
        responsive."""
        if self.rows.n_rows <= INLINE_SPLIT_ROWS:
            return work(*args)
        return await asyncio.get_running_loop().run_in_executor(None, work, *args)

    def _split(self, requests, shapes, commits):
        self.commit(commits)  # before the requests: one may split a child of a committed split
        outs = [None if shape is None else np.empty(shape) for shape in shapes]
        with self._threads():
            self.rows.split(requests, outs)
        return [o for o in outs if o is not None]

    def _histograms(self, leaves, shape):
        outs = [np.empty(shape) for _ in leaves]
        with self._threads():
            self.rows.histograms(leaves, outs)
        return outs

    def set_split_statistics(self, spec):
        with self._threads():
            self.rows.set_split_statistics(spec)

    def eval_call(self, index: int, method: str, *args):
        shard = self.evals[index]
        if shard is None:
            return None
        with self._threads():
            return getattr(shard, method)(*args)


def _stack(parts: list) -> tuple | None:
    """(X, y, w) of a worker's partitions, concatenated; None when they hold no rows."""
    if not sum(len(part[1]) for part in parts):
        return None
    X = np.concatenate([np.asarray(part[0], dtype=np.float64) for part in parts])
    y = np.concatenate([np.asarray(part[1], dtype=np.float64) for part in parts])
    ws = [part[2] for part in parts]
    w = None if all(v is None for v in ws) else np.concatenate(
        [np.ones(len(part[1])) if v is None else np.asarray(v, dtype=np.float64) for part, v in zip(parts, ws)])
    return X, y, w


# ---------------------------------------------------------------------- the client side
#: how long the client waits for every worker to answer a direct connection before it sends its
#: requests through the scheduler instead
DIRECT_PROBE_SECONDS = 10.0


class ShardActors:
    """A run's shard actors and how the client reaches them: every request goes to all of them at
    once, from one coroutine on the client's event loop, through the workers' actor handler.

    Requests go straight to the workers unless the client was made with ``direct_to_workers=False``
    or a worker does not answer a direct connection; then they go through the scheduler, one hop
    more each way (two 512 KB answers take 1.5 ms directly, 1.9 ms through it, and 2.1 ms through
    Dask's actor handles, which wait on each worker's future in turn: CHANGELOG.md, issue 20).  The
    calls name the actors by key and go through this client, not through the actor handles, which
    bind to the default client whichever client created them.

    Parameters
    ----------
    client : distributed.Client
    futures : list of distributed.Future
        The actors' futures (they keep the actors alive).
    addresses : list of str
        Each actor's worker.
    direct : bool, optional
        Whether to send requests straight to the workers; by default, yes unless the client was made
        with ``direct_to_workers=False`` or a worker does not answer within ``DIRECT_PROBE_SECONDS``.
    """

    def __init__(self, client, futures: list, addresses: list, direct: bool | None = None):
        self.client, self.futures, self.addresses = client, futures, addresses
        self.keys = [f.key for f in futures]
        if direct is None:
            direct = client.direct_to_workers is not False and self._reaches_workers()
        self.direct = direct

    def subset(self, keep: Sequence[bool]) -> ShardActors:
        """The actors whose ``keep`` is true, reached the same way."""
        return ShardActors(self.client, [f for f, kept in zip(self.futures, keep) if kept],
                           [a for a, kept in zip(self.addresses, keep) if kept], self.direct)

    def _reaches_workers(self) -> bool:
        async def probe():
            identities = [self.client.rpc(address).identity() for address in self.addresses]
            await asyncio.wait_for(asyncio.gather(*identities), DIRECT_PROBE_SECONDS)
        try:
            self.client.sync(probe)
        except (OSError, asyncio.TimeoutError):
            return False
        return True

    async def _ask_all(self, method: str, args: tuple) -> list:
        request = {"function": method, "args": [_to_serialize(a) for a in args], "kwargs": {}}
        if self.direct:
            calls = [self.client.rpc(address).actor_execute(actor=key, **request)
                     for key, address in zip(self.keys, self.addresses)]
        else:
            calls = [self.client.scheduler.proxy(worker=address, msg={"op": "actor_execute", "actor": key, **request})
                     for key, address in zip(self.keys, self.addresses)]
        answers = await asyncio.gather(*calls)
        for answer in answers:
            if answer["status"] != "OK":
                raise answer["exception"]
        return [answer["result"] for answer in answers]

    def ask(self, method: str, *args) -> list:
        """Every actor's ``method(*args)``, in actor order; a worker's exception is raised here."""
        return self.client.sync(self._ask_all, method, args)


class DistributedRows:
    """The ``TrainingShard`` interface over every worker's shard: requests go to all actors and
    their answers are summed (histograms, leaf sums, norms, metric parts).  Counts round trips and
    the bytes of the arrays that come back (``traffic``)."""

    #: splits are always scored on summed histograms (sparse-output objectives, the only ones with a
    #: candidate scorer, are refused by multigrove.dask)
    candidate_scorer = None
    #: leaf-wise growth sends this many splits a round trip, those after the first ahead of their turn
    #: (grower.TreeGrower._splits_ahead; the trees are the same): 300,000 x 50 with 16 targets on two workers took
    #: 133 round trips a tree one split at a time, 43 with four (benchmarks/dask_scaling.py, CHANGELOG.md stop 65)
    splits_ahead = DASK_SPLITS_AHEAD

    def __init__(self, actors: ShardActors, layout: StatLayout, n_rows: int, n_bins: int):
        self.actors, self.layout, self.n_rows, self.n_bins = actors, layout, n_rows, n_bins
        self._split_layout = layout
        self.traffic = {"round_trips": 0, "bytes_in": 0}
        self._commits: list[tuple[int, int]] = []  # (leaf, new_leaf) of splits whose turn came (commit)

    def commit(self, leaf: int, new_leaf: int) -> None:
        """A split made ahead of its turn has it (HistogramBuilder): the workers hear of it with the next split
        request, or before any other request."""
        self._commits.append((leaf, new_leaf))

    def _all(self, method: str, *args) -> list:
        if self._commits and method != "split":  # the leaves' rows as the tree has them before anything reads them
            commits, self._commits = self._commits, []
            self._ask("commit", commits)
        return self._ask(method, *args)

    def _ask(self, method: str, *args) -> list:
        try:
            results = self.actors.ask(method, *args)
        except Exception as exc:  # a worker died or raised: say so on the client, never hang
            raise RuntimeError(f"multigrove.dask: a worker failed during '{method}': {type(exc).__name__}: {exc}") \
                from exc
        self.traffic["round_trips"] += 1
        self.traffic["bytes_in"] += sum(_nbytes(r) for r in results)
        return results

    # the requests the engine makes of its training rows
    def compute_gradients(self, sketch=None) -> None:
        self._all("call", "compute_gradients", sketch)

    def freeze_outputs(self, outputs: Sequence[int]) -> None:
        self._all("call", "freeze_outputs", list(outputs))

    def column_sq_norms(self) -> np.ndarray:
        return np.sum(self._all("call", "column_sq_norms"), axis=0)

    def gram_product(self, V: np.ndarray) -> np.ndarray:
        return np.sum(self._all("call", "gram_product", V), axis=0)

    def set_split_statistics(self, spec) -> StatLayout:
        from .boosting.shard import layout_for_splits
        self._all("set_split_statistics", spec)
        self._split_layout = layout_for_splits(self.layout, spec)
        return self._split_layout

    def draw_rows(self, spec) -> None:
        self._all("call", "draw_rows", spec)

    def begin_tree(self, max_leaves: int) -> None:
        self._all("call", "begin_tree", max_leaves)

    def root(self, out: np.ndarray) -> np.ndarray:
        results = self._all("root", out.shape[0], out.shape[1])
        _sum_into([out], [[h] for h, _ in results])
        return np.sum([t for _, t in results], axis=0)

    def split(self, requests, outs, scans=None) -> None:
        shapes = [None if o is None else o.shape for o in outs]
        # a request's n_left counts every worker's rows: each worker schedules from its own half-node instead
        commits, self._commits = self._commits, []
        results = self._all("split", [req._replace(n_left=-1) for req in requests], shapes, commits)
        _sum_into([o for o in outs if o is not None], results)
        run_scans(scans)

    def histograms(self, leaves, outs) -> None:
        if len(leaves):
            _sum_into(outs, self._all("histograms", list(leaves), outs[0].shape))

    def leaf_sums(self, n_leaves: int) -> np.ndarray:
        return np.sum(self._all("call", "leaf_sums", n_leaves), axis=0)

    def apply_tree(self, tree) -> None:
        self._all("call", "apply_tree", tree)

    def metric_parts(self, metrics, eval_at, per_output: bool = False, inv_propensity=None):
        return _sum_parts(self._all("call", "metric_parts", metrics, eval_at, per_output, inv_propensity))

    def label_counts(self) -> tuple[np.ndarray, int]:
        """Every worker's label counts and rows, summed (PSP@k's propensities are global)."""
        results = self._all("call", "label_counts")
        return np.sum([c for c, _ in results], axis=0), int(sum(n for _, n in results))


class DistributedEval:
    """A validation set spread over the workers (the ``EvalShard`` interface, summed)."""

    def __init__(self, rows: DistributedRows, index: int):
        self.rows, self.index = rows, index

    def add_trees(self, trees) -> None:
        self.rows._all("eval_call", self.index, "add_trees", trees)

    def metric_parts(self, metrics, eval_at, per_output: bool = False, inv_propensity=None):
        parts = [part for part in self.rows._all("eval_call", self.index, "metric_parts", metrics, eval_at, per_output,
                                           inv_propensity) if part is not None]
        return _sum_parts(parts)


def _sum_into(outs: list, per_worker: list) -> None:
    """outs[i] = the sum over workers of their i-th histogram, added in worker order."""
    for i, out in enumerate(outs):
        out[...] = per_worker[0][i]
        for histograms in per_worker[1:]:
            out += histograms[i]


def _sum_parts(per_worker: list) -> list:
    total = per_worker[0]
    for parts in per_worker[1:]:
        total = add_parts(total, parts)
    return total


def _nbytes(obj) -> int:
    if isinstance(obj, np.ndarray):
        return obj.nbytes
    if isinstance(obj, (list, tuple)):
        return sum(_nbytes(o) for o in obj)
    return 0


# ---------------------------------------------------------------------- data placement
def _blocks(collection, name: str):
    """The row blocks of a dask array or dataframe (2-D for X), as delayed objects."""
    dask, da, _ = _dask()
    if hasattr(collection, "to_dask_array"):  # a dask dataframe or series
        collection = collection.to_dask_array(lengths=True)
    if not isinstance(collection, da.Array):
        raise TypeError(f"{name} must be a dask array or dataframe, got {type(collection).__name__}")
    if collection.ndim == 2 and collection.numblocks[1] != 1:
        collection = collection.rechunk({1: collection.shape[1]})
    return collection


#: what dask puts in place of the categories of a category column whose categories it has not computed
UNKNOWN_CATEGORIES = "__UNKNOWN_CATEGORIES__"


def _frame_codes(frame, categories: dict):
    """A pandas partition with its categorical columns (``categories``' keys) as float64 codes."""
    from .data.categories import encode_column
    frame = frame.copy()
    for j, values in categories.items():
        column = frame.columns[j]
        frame[column] = encode_column(frame[column], values)
    return frame


def _encode_categories(X, config: Params, categories: dict | None = None, what: str = "X"):
    """(X with its categorical columns as float codes, {feature: category list or None}, feature names or None).

    A dask DataFrame's category columns take their known categories (``categories`` given: the training
    data's lists, for a validation set or a prediction); ``categorical_feature`` adds integer-coded columns.
    A dask array passes through (its categorical columns, if any, hold codes)."""
    from .data.categories import is_category_column, resolve_features
    names = [str(c) for c in X.columns] if hasattr(X, "columns") and hasattr(X, "dtypes") else None
    if names is None:
        n_features = int(X.shape[1]) if getattr(X, "ndim", 2) == 2 else 1
        found = dict(categories) if categories is not None else \
            resolve_features(config.categorical_feature, default_feature_names(n_features), {})
        return X, found, None
    if categories is None:
        found = {}
        for j, dtype in enumerate(X.dtypes):
            if is_category_column(dtype):
                values = [v.item() if isinstance(v, np.generic) else v for v in dtype.categories]
                if values == [UNKNOWN_CATEGORIES]:
                    raise ValueError(f"{what} column {names[j]!r} is categorical with unknown categories: call "
                                     f"{what}.categorize() (or astype a CategoricalDtype) first")
                found[j] = values
        categories = resolve_features(config.categorical_feature, names, found)
    listed = {j: v for j, v in categories.items() if v is not None}
    if not listed:
        return X, categories, names
    meta = X._meta.copy()
    for j in listed:
        meta[meta.columns[j]] = np.zeros(len(meta), np.float64)
    return X.map_partitions(_frame_codes, listed, meta=meta), categories, names


def _aligned_parts(client, X, y, w, what: str):
    """Futures of (X, y, w) blocks, one per row partition, with the worker that holds each."""
    X = _blocks(X, f"{what} X")
    y = _blocks(y, f"{what} y")
    if X.ndim != 2:
        raise ValueError(f"{what} X must be 2-D, got {X.ndim} dimensions")
    if X.chunks[0] != y.chunks[0]:
        if any(np.isnan(c) for c in X.chunks[0] + y.chunks[0]):
            raise ValueError(f"{what}: X and y have unknown partition lengths; compute them (lengths=True)")
        if sum(X.chunks[0]) != sum(y.chunks[0]):
            raise ValueError(f"{what}: X has {sum(X.chunks[0])} rows but y has {sum(y.chunks[0])}")
        y = y.rechunk({0: X.chunks[0]})  # same rows, other partition boundaries: align y to X
    if w is not None:
        w = _blocks(w, f"{what} sample_weight")
        if sum(w.chunks[0]) != sum(X.chunks[0]):
            raise ValueError(f"{what}: sample_weight has {sum(w.chunks[0])} rows but X has {sum(X.chunks[0])}")
        w = w.rechunk({0: X.chunks[0]})
    xb = X.to_delayed().ravel()
    yb = y.to_delayed().ravel()
    wb = [None] * len(xb) if w is None else list(w.to_delayed().ravel())
    dask, _, distributed = _dask()
    parts = [dask.delayed(tuple)([xd, yd, wd]) for xd, yd, wd in zip(xb, yb, wb)]
    futures = client.compute(parts)
    distributed.wait(futures)
    for future in futures:  # a partition that failed to compute raises its own error here
        if future.status == "error":
            future.result()
    holders = client.who_has(futures)
    return [(f, sorted(holders[f.key])[0]) for f in futures]


def _by_worker(placed: list) -> dict:
    out: dict = {}
    for future, worker in placed:
        out.setdefault(worker, []).append(future)
    return out


# ---------------------------------------------------------------------- train
def train(client, params: Mapping[str, Any] | None, X, y, num_boost_round: int = 100, sample_weight=None,
          valid_sets: Iterable[tuple] | None = None, valid_names: Iterable[str] | None = None,
          callbacks: Iterable = None) -> Booster:
    """Train on data spread over a Dask cluster; returns an ordinary :class:`multigrove.Booster`.

    Parameters
    ----------
    client : distributed.Client
        A synchronous client (an asynchronous one is refused: training waits on the workers).
    params : dict
        As :func:`multigrove.train` takes them (a callable objective is not supported here: the
        objective must be a named one).  ``num_threads`` is each worker's thread count.
    X : dask array or dataframe, shape (n_rows, n_features)
        Each worker trains on the partitions it holds; X is never gathered to the client.
    y : dask array, series or dataframe
        Labels, partitioned like X (other partition boundaries are realigned; a different number
        of rows is an error).
    num_boost_round : int, default 100
    sample_weight : dask array or series, optional
    valid_sets : list of (X, y) or (X, y, sample_weight) tuples of dask collections, optional
        Evaluated after every round with the metrics summed over all rows.
    valid_names : list of str, optional
    callbacks : list, optional
        As for :func:`multigrove.train` (early stopping, record_evaluation, log_evaluation, ...).

    Returns
    -------
    Booster
        Its ``dask_traffic`` dict holds the round trips to the workers, the bytes they sent back and
        whether the client asked the workers directly (``direct``): it does unless the client was made
        with ``direct_to_workers=False``, or a worker cannot be reached from the client, when the
        requests go through the scheduler (one more hop each way).
    """
    if getattr(client, "asynchronous", False):
        raise ValueError("multigrove.dask.train needs a synchronous distributed.Client (made with asynchronous=False): "
                         "it waits on the workers, which would block an asynchronous client's event loop")
    config = Params.from_dict(params)
    if config.device_type != "cpu":
        raise ValueError(f"multigrove.dask.train trains on the workers' CPUs: device_type='{config.device_type}' is "
                         "not supported there (use multigrove.train on a machine with the GPU)")
    if callable(config.objective):
        raise ValueError("multigrove.dask.train takes a named objective; a callable objective needs the labels "
                         "in one process (use multigrove.train)")
    if config.objective in SPARSE_OUTPUT_OBJECTIVES:
        raise ValueError(f"multigrove.dask.train does not train objective '{config.objective}' (sparse outputs): use "
                         "multigrove.train")
    if config.cat_encoding == "statistics":
        raise ValueError("cat_encoding='statistics' is not available in multigrove.dask.train: ordered target "
                         "statistics walk every training row in one permutation; its categorical features are split "
                         "on sets (cat_encoding 'auto' or 'sets')")
    if isinstance(num_boost_round, bool) or not isinstance(num_boost_round, (int, np.integer)) or num_boost_round < 0:
        raise ValueError(f"num_boost_round must be an integer >= 0, got {num_boost_round!r}")
    valid_sets = list(valid_sets or [])
    valid_names = list(valid_names or [])
    X, categories, names = _encode_categories(X, config)
    placed = _by_worker(_aligned_parts(client, X, y, sample_weight, "training data"))
    valid_placed = []
    for i, vs in enumerate(valid_sets):
        if not isinstance(vs, (tuple, list)) or len(vs) not in (2, 3):
            raise ValueError(f"valid_sets[{i}] must be (X, y) or (X, y, sample_weight)")
        Xv, _, _ = _encode_categories(vs[0], config, categories, f"valid_sets[{i}] X")
        valid_placed.append(_by_worker(_aligned_parts(client, Xv, vs[1], vs[2] if len(vs) == 3 else None,
                                                      f"valid_sets[{i}]")))
    actors = _start_actors(client, config, placed, valid_placed)
    return _train_on(config, actors, valid_names, len(valid_placed), int(num_boost_round),
                     list(callbacks or []), categories, names)


def _start_actors(client, config: Params, placed: dict, valid_placed: list) -> ShardActors:
    """One ShardActor on every worker that holds partitions (training or validation)."""
    workers = sorted(set(placed) | {w for vp in valid_placed for w in vp})
    threads = config.threads if "num_threads" in config.given else 1
    futures = [client.submit(ShardActor, placed.get(worker, []), [vp.get(worker, []) for vp in valid_placed],
                             threads, shard_id, actor=True, workers=[worker], allow_other_workers=False)
               for shard_id, worker in enumerate(workers)]
    client.gather(futures)  # the actors exist (a failure to create one is raised here)
    return ShardActors(client, futures, workers)


class _Run(NamedTuple):
    """A distributed training run once the workers are set up."""
    booster: Booster     # empty, with the start score
    loss: Any            # the client's copy (target scaling included)
    mapper: BinMapper
    rows: DistributedRows      # the workers that hold training rows
    everyone: DistributedRows  # every worker (validation rows included)
    threads: int         # the client's threads (boosting.engine.fit_threads: one for small data)


def _global_bins(config: Params, training: ShardActors, n_rows: int, n_outputs: int, categories: dict):
    """Bins and the feature layout learnt from a sample of every worker's rows."""
    from .data.categories import check_codes
    mapper = BinMapper(config.max_bin, config.bin_construct_sample_cnt, config.seed, config.min_data_in_bin)
    share = min(1.0, config.bin_construct_sample_cnt / n_rows)
    sample = np.concatenate(training.ask("sample", share, config.seed))
    integer_coded = [f for f, values in categories.items() if values is None]
    sample = check_codes(sample, integer_coded, default_feature_names(sample.shape[1]), "X")
    categorical = np.zeros(sample.shape[1], np.bool_)
    categorical[list(categories)] = True
    mapper.fit(sample, categorical)
    layout = plan_layout(mapper, sample, config.is_enable_sparse, config.enable_bundle, config.max_conflict_rate,
                         config.sparse_threshold_for(n_outputs))
    return mapper, layout


def _prepare(config: Params, actors: ShardActors, categories: dict | None = None, names: list | None = None) -> _Run:
    """Learn the bins, bin every worker's rows, compute the start score and target scaling from the
    summed label moments, and start every worker's shards.  Workers whose partitions turn out to be
    empty take no further part."""
    every = actors.ask("summary")
    training = actors.subset([s["n_rows"] > 0 for s in every])
    actors = actors.subset([s["n_rows"] > 0 or s["validation_rows"] > 0 for s in every])
    summaries = [s for s in every if s["n_rows"] > 0]
    if not summaries:
        raise ValueError("the training data has no rows")
    n_rows = sum(s["n_rows"] for s in summaries)
    n_features = summaries[0]["n_features"]
    if any(s["n_features"] != n_features for s in summaries):
        raise ValueError("the partitions of X do not all have the same number of features")
    _check_over_workers(every, n_features)
    num_class = config.num_class
    if config.objective == "multiclass" and num_class == 0:
        num_class = int(max(s["label_max"] for s in summaries)) + 1
    label_stub = _label_stub(summaries, num_class, config)
    loss, _ = make_loss(config.objective, num_class, config.num_outputs, label_stub, None)
    categories = categories or {}
    if any(f >= n_features for f in categories):
        raise ValueError(f"categorical_feature names feature {max(categories)}, but X has {n_features} features")
    threads = fit_threads(config, n_rows, n_features)  # a small fit compiles no parallel kernel here either
    with _numba_threads(threads):
        mapper, layout = _global_bins(config, training, n_rows, loss.n_outputs, categories)
    shard_moments = actors.ask("setup", config.to_dict(), num_class, mapper, layout,
                               [f for f, values in categories.items() if values is None])
    moments = np.sum([m for m in shard_moments if m is not None], axis=0)
    if loss.name == "regression" and config.scales_targets(loss.n_outputs):
        loss.standardize(moments)
    scaling = (loss.shift, loss.scale) if loss.name == "regression" and loss.scale is not None else None
    booster = new_booster(config, loss, n_features, names or default_feature_names(n_features), moments)
    booster.categories = dict(categories)
    check_categorical(config, categories, booster.feature_names, loss)
    weighted = any(s["weight_sum"] is not None for s in summaries)
    missing = any(s["missing"] for s in summaries)
    layout_stats = stat_layout(loss, np.ones(1) if weighted else None, config, missing)
    actors.ask("start", scaling, booster.init_score, layout_stats)
    booster.init_score = loss.unscale(booster.init_score.reshape(1, -1)).reshape(-1)
    n_bins = int(mapper.hist_offsets[-1])
    return _Run(booster, loss, mapper, DistributedRows(training, layout_stats, n_rows, n_bins),
                DistributedRows(actors, layout_stats, n_rows, n_bins), threads)


def _check_over_workers(summaries: list, n_features: int) -> None:
    """What holds over the workers (each checked its own values: ShardActor.summary): the training weights, and
    each validation set's, have a positive sum, and every validation set has the training X's features."""
    sums = [s["weight_sum"] for s in summaries if s["weight_sum"] is not None]
    if sums:
        check_weight_sum(sum(sums), "sample_weight")
    for i in range(len(summaries[0]["valid_weight_sums"])):
        sums = [s["valid_weight_sums"][i] for s in summaries if s["valid_weight_sums"][i] is not None]
        if sums:
            check_weight_sum(sum(sums), f"valid_sets[{i}] sample_weight")
        widths = {s["valid_n_features"][i] for s in summaries} - {None}
        if widths - {n_features}:
            raise ValueError(f"valid_sets[{i}] X has {max(widths - {n_features})} features, but the training X has "
                             f"{n_features}")


def _train_on(config: Params, actors: ShardActors, valid_names: list, n_valid: int, rounds: int,
              callbacks: list, categories: dict | None = None, names: list | None = None) -> Booster:
    run = _prepare(config, actors, categories, names)
    valids = [Validation(valid_names[i] if i < len(valid_names) else f"valid_{i}", DistributedEval(run.everyone, i),
                         None) for i in range(n_valid)]
    started = time.perf_counter()
    with _numba_threads(run.threads) as threads:
        booster = boost(config, run.booster, run.loss, run.rows, valids, run.mapper, None, callbacks, rounds, threads)
    booster.dask_traffic = dict(run.rows.traffic, seconds=time.perf_counter() - started,
                                validation_round_trips=run.everyone.traffic["round_trips"],
                                direct=run.rows.actors.direct)
    return booster


def _label_stub(summaries: list, num_class: int, config: Params) -> np.ndarray:
    """A two-row label of the run's shape, for the client's copy of the loss (its n_outputs)."""
    cols = summaries[0]["label_cols"]
    if config.objective == "multiclass":
        return np.array([0.0, num_class - 1.0])
    if config.objective in ("binary",):
        return np.array([0.0, 1.0])
    return np.tile([[0.0], [1.0]], (1, cols)) if cols > 1 or config.objective == "multilabel" else np.array([0.0, 1.0])


# ---------------------------------------------------------------------- estimators
def _client(client):
    if client is not None:
        return client
    _, _, distributed = _dask()
    try:
        return distributed.default_client()
    except ValueError:
        raise ValueError("no Dask client: pass client= to fit, or create a distributed.Client first") from None


def _map_predict(X, predict, n_out: int, categories: dict):
    """predict(block) over the row blocks of a dask collection (a dask array comes back), or on X directly; a
    dask DataFrame's categorical columns are first encoded with the model's category lists."""
    _, da, _ = _dask()
    if hasattr(X, "to_dask_array"):
        if hasattr(X, "dtypes"):
            X, _, _ = _encode_categories(X, Params(), categories)
        X = X.to_dask_array(lengths=True)
    if not isinstance(X, da.Array):
        return predict(X)
    X = X.rechunk({1: X.shape[1]}) if X.ndim == 2 and X.numblocks[1] != 1 else X
    if n_out == 1:
        return X.map_blocks(lambda b: predict(b), drop_axis=1, dtype=np.float64)
    return X.map_blocks(lambda b: predict(b), chunks=(X.chunks[0], (n_out,)), dtype=np.float64)


class _DaskFit:
    """What the Dask estimators share: training through multigrove.dask.train and mapped prediction."""

    def _dask_fit(self, client, X, y, objective, extra, sample_weight, eval_set, eval_names, callbacks):
        if self.objective is not None:
            raise ValueError(f"objective={self.objective!r}: the Dask estimators choose the objective from y (sparse "
                             "outputs train with multigrove.train or the local estimators)")
        from .boosting.callbacks import early_stopping, record_evaluation
        from .sklearn import PATIENCE_HELD_OUT, has_early_stopping
        self._check_estimator_params()
        self.evals_result_ = {}
        # what the local estimators' held-out rows, cross-validation and tree-size comparison set: none here
        self.validation_indices_ = self.cv_results_ = self.cv_candidates_ = self.validation_candidates_ = None
        cbs = list(callbacks or [])
        # early stopping watches the eval_set: holding out rows of a Dask collection would move data, so
        # early_stopping="auto" stops early only when an eval_set is given, and True needs one
        if self.early_stopping == "cv":
            raise ValueError("early_stopping='cv' is not available with the Dask estimators (folds would move the "
                             "training collection's rows between workers); pass an eval_set with early_stopping="
                             "'auto' or True")
        if self.early_stopping is True and not eval_set:
            raise ValueError("early_stopping=True needs an eval_set with the Dask estimators (they hold out no "
                             "rows of the training collection); pass eval_set or early_stopping='auto'/False")
        if eval_set and self.early_stopping is not False and not has_early_stopping(cbs):
            cbs.append(early_stopping(self._patience(PATIENCE_HELD_OUT), verbose=False))
        rounds = self._rounds(has_early_stopping(cbs))
        if eval_set:
            cbs.append(record_evaluation(self.evals_result_))
        self.booster_ = train(_client(client), self._train_params(objective, extra), X, y, rounds,
                              sample_weight=sample_weight, valid_sets=eval_set, valid_names=eval_names, callbacks=cbs)
        self.n_features_in_ = self.booster_.n_features
        self.best_iteration_ = self.booster_.best_iteration
        return self

    def _local(self, cls):
        from sklearn.utils.validation import check_is_fitted
        check_is_fitted(self, "booster_")
        model = cls(**self.get_params())
        for name, value in vars(self).items():
            if name.endswith("_") and not name.startswith("_"):
                setattr(model, name, value)
        return model


def _make_estimators():
    from .sklearn import GroveClassifier, GroveRegressor, class_codes

    class DaskGroveRegressor(_DaskFit, GroveRegressor):
        """:class:`multigrove.GroveRegressor` trained on a Dask cluster (see :func:`multigrove.dask.train`).

        Takes the parameters of GroveRegressor.  ``fit`` takes dask arrays or dataframes and the
        ``client`` (default: the current one); ``predict`` maps the model over the partitions of a
        Dask collection (a dask array comes back) or predicts a NumPy array directly.
        """

        def fit(self, X, y, sample_weight=None, eval_set=None, eval_names=None, callbacks=None, client=None):
            """Fit on Dask collections.

            Parameters
            ----------
            X : dask array or dataframe, shape (n_samples, n_features)
            y : dask array or series / dataframe, shape (n_samples,) or (n_samples, n_targets)
            sample_weight : dask array or series, optional
            eval_set : list of (X, y) pairs of dask collections, optional
            eval_names : list of str, optional
            callbacks : list, optional
            client : distributed.Client, optional

            Returns
            -------
            self
            """
            self.n_outputs_ = 1 if y.ndim == 1 else int(y.shape[1])
            return self._dask_fit(client, X, y, "regression", {}, sample_weight, eval_set, eval_names, callbacks)

        def predict(self, X, raw_score=False, num_iteration=None):
            """Predictions; a dask array for a Dask collection X.

            Parameters
            ----------
            X : dask array or dataframe, or array-like
            raw_score : bool, default False
            num_iteration : int, optional

            Returns
            -------
            dask array or ndarray
            """
            booster = self.booster_
            return _map_predict(X, lambda b: booster.predict(b, raw_score=raw_score, num_iteration=num_iteration),
                                self.n_outputs_, booster.categories)

        def to_local(self):
            """The fitted model as a :class:`multigrove.GroveRegressor` (same parameters and fit)."""
            return self._local(GroveRegressor)

    class DaskGroveClassifier(_DaskFit, GroveClassifier):
        """:class:`multigrove.GroveClassifier` trained on a Dask cluster (see :func:`multigrove.dask.train`).

        y: class labels (1-D; two classes: binary, more: softmax) or a 0/1 indicator (2-D: multi-label).
        ``predict`` / ``predict_proba`` map the model over the partitions of a Dask collection.
        """

        def fit(self, X, y, sample_weight=None, eval_set=None, eval_names=None, callbacks=None, client=None):
            """Fit on Dask collections.

            Parameters
            ----------
            X : dask array or dataframe, shape (n_samples, n_features)
            y : dask array or series, class labels (n_samples,), or a 0/1 indicator (n_samples, n_labels)
            sample_weight : dask array or series, optional
            eval_set : list of (X, y) pairs of dask collections, optional
            eval_names : list of str, optional
            callbacks : list, optional
            client : distributed.Client, optional

            Returns
            -------
            self
            """
            y = _blocks(y, "y")
            if y.ndim == 2 and y.shape[1] > 1:
                self.multilabel_ = True
                self.n_classes_ = self.n_outputs_ = int(y.shape[1])
                self.classes_ = np.arange(self.n_classes_)
                return self._dask_fit(client, X, y, "multilabel", {}, sample_weight, eval_set, eval_names, callbacks)
            y = y.reshape(-1) if y.ndim == 2 else y
            _, da, _ = _dask()
            classes = np.asarray(da.unique(y).compute())
            objective, extra = self._set_classes(classes)

            def codes(labels, name):
                return _blocks(labels, name).map_blocks(lambda b: class_codes(classes, b, name).astype(np.float64),
                                                        dtype=np.float64)
            evals = [(Xv, codes(yv, "eval_set y")) for Xv, yv in eval_set] if eval_set else None
            return self._dask_fit(client, X, codes(y, "y"), objective, extra, sample_weight, evals, eval_names,
                                  callbacks)

        def predict_proba(self, X, num_iteration=None):
            """Class probabilities, (n, n_classes); a dask array for a Dask collection X.

            Parameters
            ----------
            X : dask array or dataframe, or array-like
            num_iteration : int, optional

            Returns
            -------
            dask array or ndarray
            """
            booster, binary = self.booster_, not self.multilabel_ and self.n_classes_ == 2

            def proba(b):
                prob = booster.predict(b, num_iteration=num_iteration)
                return np.column_stack([1.0 - prob, prob]) if binary else prob
            return _map_predict(X, proba, self.n_classes_, booster.categories)

        def predict(self, X, num_iteration=None):
            """Predicted classes, or a 0/1 matrix for multi-label y; a dask array for a Dask collection X.

            Parameters
            ----------
            X : dask array or dataframe, or array-like
            num_iteration : int, optional

            Returns
            -------
            dask array or ndarray
            """
            proba = self.predict_proba(X, num_iteration=num_iteration)
            if self.multilabel_:
                return (proba > 0.5).astype(np.int64)
            classes = self.classes_
            if hasattr(proba, "map_blocks"):
                return proba.map_blocks(lambda b: classes[np.argmax(b, axis=1)], drop_axis=1, dtype=classes.dtype)
            return classes[np.argmax(proba, axis=1)]

        def to_local(self):
            """The fitted model as a :class:`multigrove.GroveClassifier` (same parameters and fit)."""
            return self._local(GroveClassifier)

    from .sklearn import _ATTRIBUTES, _PARAMETERS
    for cls in (DaskGroveRegressor, DaskGroveClassifier):  # picklable: found as multigrove.dask.<name>
        cls.__qualname__ = cls.__name__
        cls.__module__ = __name__
        cls.__doc__ = inspect.cleandoc(cls.__doc__) + "\n" + textwrap.dedent(_PARAMETERS + _ATTRIBUTES)
    return DaskGroveRegressor, DaskGroveClassifier


def __getattr__(name):  # the estimators (and scikit-learn) load on first use
    if name in ("DaskGroveRegressor", "DaskGroveClassifier"):
        regressor, classifier = _make_estimators()
        globals().update(DaskGroveRegressor=regressor, DaskGroveClassifier=classifier)
        return globals()[name]
    raise AttributeError(f"module 'multigrove.dask' has no attribute {name!r}")
