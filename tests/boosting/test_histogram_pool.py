"""histogram_pool_size: past its cap the grower drops the histogram of the leaf least likely to split
next and has the builder build it again from the leaf's rows if it splits.  Only how a histogram is
made changes (built, not subtracted), so the trees are the ones grown with no limit."""
import numpy as np
import pytest
import scipy.sparse as sp

import multigrove as mg
from multigrove.boosting import grower as grower_module
from multigrove.boosting.shard import TrainingShard


def _data(seed=0, n=3000, n_features=12):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, n_features))
    X[rng.random(X.shape) < 0.05] = np.nan
    Y = np.column_stack([np.sin(np.nan_to_num(X[:, 0])) + X[:, 1] ** 2 * 0.1, np.nan_to_num(X[:, 2]) * X[:, 3]])
    return X, np.nan_to_num(Y) + 0.1 * rng.normal(size=Y.shape)


def _trained(params, X, Y, rounds=6, monkeypatch=None):
    calls = []
    if monkeypatch is not None:
        original = TrainingShard.histograms

        def counting(self, leaves, outs):
            calls.append(len(leaves))
            original(self, leaves, outs)
        monkeypatch.setattr(TrainingShard, "histograms", counting)
    booster = mg.train({"verbosity": -1, "num_threads": 2, **params}, mg.Dataset(X, Y), rounds)
    monkeypatch is not None and monkeypatch.undo()
    return booster, calls


def _same(a, b, X):
    for ta, tb in zip(a.trees, b.trees):
        np.testing.assert_array_equal(ta.split_feature, tb.split_feature)
        np.testing.assert_array_equal(ta.threshold_bin, tb.threshold_bin)
        np.testing.assert_array_equal(ta.default_left, tb.default_left)
    pa, pb = a.predict(X), b.predict(X)
    pa, pb = (pa.toarray(), pb.toarray()) if sp.issparse(pa) else (pa, pb)
    np.testing.assert_allclose(pa, pb, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("extra", [
    {"num_leaves": 31},
    {"num_leaves": 31, "sketch": "none"},
    {"growth_policy": "depthwise", "max_depth": 5, "num_leaves": 24},
    {"num_leaves": 20, "bagging_fraction": 0.4, "bagging_freq": 1},   # a compact store of the sample
    {"num_leaves": 20, "data_sample_strategy": "goss", "learning_rate": 0.5},
    {"num_leaves": 20, "multi_strategy": "one_vs_all"},
])
def test_a_capped_pool_grows_the_trees_of_an_unlimited_one(extra, monkeypatch):
    X, Y = _data()
    unlimited, _ = _trained(extra, X, Y)
    capped, calls = _trained({**extra, "histogram_pool_size": 0}, X, Y, monkeypatch=monkeypatch)
    if extra.get("growth_policy") == "depthwise":
        assert sum(calls) == 0  # a level's leaves all keep theirs (they split together): nothing to drop
    else:
        assert sum(calls) > 0  # leaves were split whose histograms had been dropped
    _same(unlimited, capped, X)


def test_sparse_features_and_sparse_outputs_under_a_capped_pool(monkeypatch):
    rng = np.random.default_rng(3)
    X = sp.random(2000, 60, density=0.08, format="csr", random_state=3)
    logits = X @ rng.normal(size=(60, 30)) + rng.normal(size=(2000, 30))
    Y = sp.csr_matrix((logits >= np.sort(logits, axis=1)[:, [-3]]).astype(np.float32))
    for extra in ({"objective": "sparse_hinge", "num_leaves": 31},
                  {"objective": "sparse_hinge", "num_leaves": 31, "sketch": "none"},  # the eq. 20 scorer
                  {"objective": "multilabel", "num_leaves": 31}):
        label = Y if extra["objective"] == "sparse_hinge" else Y.toarray()
        unlimited, _ = _trained(extra, X, label, rounds=4)
        capped, calls = _trained({**extra, "histogram_pool_size": 0}, X, label, rounds=4, monkeypatch=monkeypatch)
        assert sum(calls) > 0
        _same(unlimited, capped, X)


def test_the_pool_holds_at_most_its_cap(monkeypatch):
    """Leaf-wise growth keeps at most cap histograms (the cap in MB over one histogram's bytes)."""
    X, Y = _data(n=4000)
    grown = []
    original = grower_module.TreeGrower._finish

    def finish(self, leaves):
        grown.append((self.pool.allocated, self._hist_cap, self.pool.shape))
        return original(self, leaves)
    monkeypatch.setattr(grower_module.TreeGrower, "_finish", finish)
    ds = mg.Dataset(X, Y)
    booster = mg.train({"num_leaves": 63, "sketch": "none", "verbosity": -1}, ds, 2)
    n_bins, n_cols = grown[0][2]
    assert grown[0][1] is None and grown[0][0] > 10  # no limit: one histogram per splittable leaf, about
    one_mb = 1 << 20
    size = 5 * n_bins * n_cols * 8 / one_mb  # room for five histograms
    grown.clear()
    capped = mg.train({"num_leaves": 63, "sketch": "none", "verbosity": -1, "histogram_pool_size": size}, ds, 2)
    assert all(cap == 5 and allocated <= 5 for allocated, cap, _ in grown)
    _same(booster, capped, X)


def test_bad_histogram_pool_size_is_refused():
    X, Y = _data(n=200)
    for bad in ("big", float("nan"), float("inf")):
        with pytest.raises((ValueError, TypeError), match="histogram_pool_size"):
            mg.train({"histogram_pool_size": bad}, mg.Dataset(X, Y), 1)
