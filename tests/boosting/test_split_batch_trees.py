"""Leaf-wise growth splits the next leaves in turn ahead of their turn, and the local builder runs a batch of small
nodes' splits in one kernel call, a task a split (kernels.split_step.split_batch; depth-wise levels too): the trees
are those of one split at a time, bit for bit, for every kind of scan, both growth policies, a store with a CSR
part, samples (the rows left out partitioned along), validation sets followed, and splits ahead of their turn
that never have it."""
import heapq

import numpy as np
import pytest

import multigrove as mg
from multigrove.boosting import builder as builders
from multigrove.boosting import grower as growers
from multigrove.data.binning import BinMapper
from multigrove.data.storage import dense_store


def _data(rng, n, n_outputs, csr=False):
    X = rng.normal(size=(n, 10))
    X[rng.random(X.shape) < 0.03] = np.nan
    if csr:  # most features zero but in a few rows: a CSR part of the store, whose zero bins are derived
        X[:, 5:] = np.where(rng.random((n, 5)) < 0.1, rng.integers(1, 9, size=(n, 5)), 0.0)
    signal = np.nan_to_num(X[:, 1]) + np.nan_to_num(X[:, 2] * X[:, 3])
    return X, np.column_stack([signal + j * np.nan_to_num(X[:, 4 + j % 5]) + rng.normal(scale=0.3, size=n)
                               for j in range(n_outputs)])


CASES = {
    "one output": ({"objective": "regression"}, 1, False),
    "sketch's shared Hessian": ({"objective": "regression"}, 6, False),
    "top-k leaves": ({"objective": "regression", "sketch": "none", "leaf_sparsity": 2}, 4, False),
    "a Hessian per output": ({"objective": "multiclass", "num_class": 3, "sketch": "none"}, 1, False),
    "depth-wise levels": ({"objective": "regression", "growth_policy": "depthwise", "max_depth": 6}, 3, False),
    "CSR part": ({"objective": "regression"}, 3, True),
    "bagging": ({"objective": "regression", "bagging_fraction": 0.7, "bagging_freq": 1}, 3, False),
    "GOSS, one output": ({"objective": "regression", "data_sample_strategy": "goss"}, 1, False),
    "validation set followed": ({"objective": "regression"}, 3, True),  # a CSR part: followed, not walked
    "deterministic": ({"objective": "regression", "deterministic": True}, 3, True),
    "a tree per output": ({"objective": "regression", "multi_strategy": "one_vs_all"}, 3, False),
}


def _fit(params, X, y, valid=None):
    sets = [] if valid is None else [mg.Dataset(*valid)]
    booster = mg.train({"verbosity": -1, "num_threads": 2, "num_leaves": 48, "min_data_in_leaf": 5, **params},
                       mg.Dataset(X, y), 10, valid_sets=sets)
    return booster.model_to_string(), booster.predict(X)


@pytest.mark.parametrize("name", CASES)
def test_trees_are_those_of_one_split_at_a_time(rng, monkeypatch, name):
    params, n_outputs, csr = CASES[name]
    X, Y = _data(rng, 9000, n_outputs, csr)  # two threads: 90,000 cells
    y = Y[:, 0] if n_outputs == 1 else Y
    if params.get("objective") == "multiclass":
        y = np.digitize(Y[:, 0], np.quantile(Y[:, 0], [1 / 3, 2 / 3]))
    valid = (X[:1000], y[:1000]) if name == "validation set followed" else None
    batches, ahead, commits = [], [], []
    split_batch, split, commit = builders.LocalBuilder._split_batch, builders.LocalBuilder.split, \
        builders.LocalBuilder.commit

    def spy_batch(self, requests, scans):
        ran = split_batch(self, requests, scans)
        batches.append(len(ran))
        return ran

    def spy_split(self, requests, outs, scans=None):
        ahead.extend(req.new_leaf < 0 for req in requests)
        return split(self, requests, outs, scans)

    def spy_commit(self, leaf, new_leaf):
        commits.append(leaf)
        return commit(self, leaf, new_leaf)
    monkeypatch.setattr(builders.LocalBuilder, "_split_batch", spy_batch)
    monkeypatch.setattr(builders.LocalBuilder, "split", spy_split)
    monkeypatch.setattr(builders.LocalBuilder, "commit", spy_commit)
    monkeypatch.setattr(builders.LocalBuilder, "splits_ahead", 6)  # more than the threads: some turns never come
    followed, follow = [], builders.LocalBuilder.follow
    monkeypatch.setattr(builders.LocalBuilder, "follow", lambda self, store: followed.append(1) or follow(self, store))
    model, predicted = _fit(params, X, y, valid)
    assert bool(followed) == (valid is not None)  # the validation rows partitioned along
    assert sum(batches) > 10  # small nodes' splits ran in batches (12 to 441 splits in these cases)
    if params.get("growth_policy") != "depthwise":
        assert 0 < len(commits) < sum(ahead)  # splits ahead of their turn: most had it, some never
    monkeypatch.setattr(builders.LocalBuilder, "splits_ahead", 1)
    monkeypatch.setattr(growers.ChildScan, "batchable", property(lambda self: False))  # depth-wise: no batch
    batches.clear()
    ahead.clear()
    one_at_a_time, predicted_one = _fit(params, X, y, valid)
    assert sum(batches) == 0 and not any(ahead)
    assert model == one_at_a_time
    np.testing.assert_array_equal(predicted, predicted_one)


@pytest.mark.parametrize("params", [{"random_strength": 1.0, "seed": 3}, {"histogram_pool_size": 1}])
def test_no_split_ahead_where_it_would_change_the_tree(rng, monkeypatch, params):
    """random_strength's draws follow the order of the scans, and histogram_pool_size may give up the histogram of
    a leaf split ahead: one split at a time there, whatever the builder offers."""
    X, Y = _data(rng, 9000, 2)
    ahead, split = [], builders.LocalBuilder.split

    def spy_split(self, requests, outs, scans=None):
        ahead.extend(req.new_leaf < 0 for req in requests)
        return split(self, requests, outs, scans)
    monkeypatch.setattr(builders.LocalBuilder, "split", spy_split)
    monkeypatch.setattr(builders.LocalBuilder, "splits_ahead", 6)
    _fit({"objective": "regression", **params}, X, Y)
    assert ahead and not any(ahead)
    ahead.clear()
    _fit({"objective": "regression"}, X, Y)
    assert any(ahead)  # the same data without them: splits ahead


def test_categorical_features_split_ahead_one_split_a_call(rng, monkeypatch):
    """A tree with categorical features splits ahead of the turn, but its scans run one split at a time (their sets
    go to the grower's own buffers): the same trees as one split at a time, and no batch."""
    X, Y = _data(rng, 9000, 2)
    X[:, 0] = rng.integers(0, 12, size=X.shape[0])
    params = {"objective": "regression", "categorical_feature": [0]}
    ahead, batches = [], []
    split, split_batch = builders.LocalBuilder.split, builders.LocalBuilder._split_batch

    def spy_split(self, requests, outs, scans=None):
        ahead.extend(req.new_leaf < 0 for req in requests)
        return split(self, requests, outs, scans)

    def spy_batch(self, requests, scans):
        ran = split_batch(self, requests, scans)
        batches.append(len(ran))
        return ran
    monkeypatch.setattr(builders.LocalBuilder, "split", spy_split)
    monkeypatch.setattr(builders.LocalBuilder, "_split_batch", spy_batch)
    monkeypatch.setattr(builders.LocalBuilder, "splits_ahead", 6)
    model, predicted = _fit(params, X, Y)
    assert any(ahead) and sum(batches) == 0
    monkeypatch.setattr(builders.LocalBuilder, "splits_ahead", 1)
    one_at_a_time, predicted_one = _fit(params, X, Y)
    assert model == one_at_a_time
    np.testing.assert_array_equal(predicted, predicted_one)


@pytest.mark.parametrize("name", ["CSR part", "sketch's shared Hessian", "depth-wise levels", "bagging",
                                  "deterministic"])
def test_batches_shared_out_by_feature_groups_give_the_same_trees(rng, monkeypatch, name):
    """Every batch run by feature groups (kernels.split_step.split_batch_groups: the partitions, then a task a group
    over every split's child) gives the trees of one split at a time, bit for bit, and so do the batches as its rule
    shares them out (builder.LocalBuilder._batch_by_groups)."""
    params, n_outputs, csr = CASES[name]
    X, Y = _data(rng, 9000, n_outputs, csr)
    y = Y[:, 0] if n_outputs == 1 else Y
    kinds, batch_by_groups = [], builders.LocalBuilder._batch_by_groups

    def spy(self, node_rows, scratch_rows):
        by_groups = batch_by_groups(self, node_rows, scratch_rows)
        kinds.append(by_groups)
        return by_groups
    monkeypatch.setattr(builders.LocalBuilder, "_batch_by_groups", spy)
    monkeypatch.setattr(builders.LocalBuilder, "splits_ahead", 6)
    monkeypatch.setattr(builders, "GROUP_INDEX_MAX_SHARE", 1e9)  # the small CSR part's groups read it by its index
    by_rule, _ = _fit(params, X, y)
    assert kinds
    monkeypatch.setattr(builders, "BATCH_GROUP_EXTRA_WORK", -1.0)  # no work too small: every batch by groups
    kinds.clear()
    every_batch, predicted = _fit(params, X, y)
    assert kinds and all(kinds)
    monkeypatch.setattr(builders.LocalBuilder, "splits_ahead", 1)
    monkeypatch.setattr(growers.ChildScan, "batchable", property(lambda self: False))
    one_at_a_time, predicted_one = _fit(params, X, y)
    assert every_batch == one_at_a_time == by_rule
    np.testing.assert_array_equal(predicted, predicted_one)


@pytest.mark.parametrize("threads, node_rows, by_groups", [
    (16, [12446, 2264, 256, 173], True),   # one of Otto's batches at 16 threads: the largest split holds 82 %
    (16, [500] * 16, False),               # a split a thread, all alike
    (16, [900, 800, 700, 600], True),      # four splits: 12 of 16 threads idle a split a task
    (2, [900, 800], False),                # two alike on two threads
    (2, [4000, 300], True),
])
def test_a_batch_goes_to_feature_groups_where_its_largest_split_would_keep_the_threads_waiting(rng, threads, node_rows,
                                                                                              by_groups):
    """LocalBuilder._batch_by_groups: by feature groups where the largest split's rows times the threads exceed the
    groups' work (1 + BATCH_GROUP_EXTRA_WORK a group beyond the first) times the batch's rows."""
    X = rng.normal(size=(4000, 40))
    mapper = BinMapper(max_bin=31).fit(X)
    builder = builders.LocalBuilder(dense_store(mapper.transform(X), mapper.hist_offsets, mapper.missing_bin), threads)
    builder.begin(np.zeros((4000, 5), np.float32), None, 2)
    assert builder._feature_groups().n_groups == threads
    assert builder._batch_by_groups(node_rows, scratch_rows=threads + 1) == by_groups
    assert not builder._batch_by_groups(node_rows, scratch_rows=threads - 1)  # a scan scratch row a group needed


def test_a_batch_has_buffers_for_the_leaf_in_turn_and_the_others(rng, monkeypatch):
    """A leaf in turn of ahead_max_rows rows or more goes with ``splits_ahead`` others (grower._next_in_turn), and its
    split may still be one a batch takes (that bound is a power of two): every batch's scans find buffers
    (TreeGrower._scan_batch), none falls back to one split a call for want of them."""
    X, Y = _data(rng, 9000, 3)
    scanned, scan_batch = [], growers.TreeGrower._scan_batch

    def spy_scan_batch(self, scans):
        found = scan_batch(self, scans)
        scanned.append((len(scans), found is not None))
        return found
    monkeypatch.setattr(growers.TreeGrower, "_scan_batch", spy_scan_batch)
    monkeypatch.setattr(builders.LocalBuilder, "splits_ahead", 6)
    # 255 leaves: six others ranked within grower.AHEAD_RANK_SHARE of the splits left, with the leaf in turn
    _fit({"objective": "regression", "num_leaves": 255}, X, Y)
    assert max(size for size, _ in scanned) == 7  # the leaf in turn and six others, in one batch
    assert all(found for _, found in scanned)


def _heap_of(gains, counts, ahead=()):
    """A heap of leaves as TreeGrower keeps it: (-gain, number, leaf), leaf ``i`` of gains[i] and counts[i] rows,
    those of ``ahead`` already split ahead of their turn."""
    heap = []
    for i, (gain, count) in enumerate(zip(gains, counts)):
        leaf = growers._Leaf(i, 1, np.zeros(2), float(count), -1, False)
        leaf.gain = gain
        if i in ahead:
            leaf.ahead = (None, None, False)
        heapq.heappush(heap, (-gain, i, leaf))
    return heap


@pytest.mark.parametrize("splits_left", [1, 5, 10, 40])
def test_leaves_go_ahead_from_the_first_ranks_of_the_splits_left(splits_left):
    """grower._next_in_turn takes the leaves next in turn, by gain then number, from ranks within AHEAD_RANK_SHARE of
    the splits left (at least the first), skipping those split ahead already and those of max_rows rows or more."""
    gains = [float(g) for g in range(40, 0, -1)]  # leaf i ranks i-th
    counts = [100] * 40
    counts[2] = 5000  # too large to go ahead
    heap = _heap_of(gains, counts, ahead={1})
    grower = object.__new__(growers.TreeGrower)
    chosen = grower._next_in_turn(heap, 8, splits_left, 1000.0)
    ranks = max(1, int(growers.AHEAD_RANK_SHARE * splits_left))
    expected = [i for i in range(min(ranks, 40)) if i not in (1, 2)][:8]
    assert [leaf.index for leaf in chosen] == expected
    assert grower._next_in_turn(heap, 0, splits_left, 1000.0) == []
    assert grower._next_in_turn(heap, 8, 0, 1000.0) == []
