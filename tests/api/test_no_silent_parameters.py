"""A parameter the user sets either acts or is reported (issue: no silently ignored parameter)."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import multigrove as mg
from multigrove import MultigroveWarning
from multigrove.data.binning import BinnedEntries


@pytest.fixture(scope="module")
def multi():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4))
    return X, np.column_stack([X[:, 0], X[:, 1] ** 2, X[:, 2] - X[:, 3]])


@pytest.mark.parametrize("params,match", [
    ({"leaf_sparsity": 3}, "leaf_sparsity=3 has no effect"),
    ({"leaf_sparsity": 7}, "leaf_sparsity=7 has no effect"),
    ({"sparse_split": "restricted"}, "sparse_split='restricted' has no effect: leaves are dense"),
    ({"sparse_split": "restricted", "leaf_sparsity": 2, "sketch": "top_outputs", "sketch_k": 1},
     "sparse_split='restricted' has no effect: splits are scored on a sketch"),
    ({"sketch_k": 5}, "sketch_k=5 has no effect"),
])
def test_unused_parameters_warn(multi, params, match):
    X, Y = multi
    with pytest.warns(MultigroveWarning, match=match):
        mg.train({"num_leaves": 4, **params}, mg.Dataset(X, Y), 2)


def test_used_parameters_do_not_warn(multi):
    X, Y = multi
    with warnings.catch_warnings():
        warnings.simplefilter("error", MultigroveWarning)
        mg.train({"num_leaves": 4, "leaf_sparsity": 2, "sparse_split": "restricted"}, mg.Dataset(X, Y), 2)


def test_show_stdv_warns():
    with pytest.warns(MultigroveWarning, match=r"show_stdv=True\) has no effect"):
        mg.log_evaluation(1, show_stdv=True)


def test_verbosity_acts(multi, capsys):
    X, Y = multi
    mg.train({"num_leaves": 4, "verbosity": 1}, mg.Dataset(X, Y), 2)
    assert "[multigrove] binned" in capsys.readouterr().out
    with warnings.catch_warnings():
        warnings.simplefilter("error", MultigroveWarning)
        mg.train({"num_leaves": 4, "sketch_k": 5, "verbosity": -1}, mg.Dataset(X, Y), 2)  # silenced
    mg.GroveRegressor(n_estimators=2, num_leaves=4, verbosity=1).fit(X, Y)
    assert "[multigrove]" in capsys.readouterr().out


def test_dataset_params_resolve_aliases_and_refuse_unknown(multi):
    X, Y = multi
    with pytest.raises(ValueError, match="unknown parameter 'bogus'"):
        mg.Dataset(X, Y, params={"max_bins": 7, "bogus": 1})
    ds = mg.Dataset(X, Y, params={"max_bins": 7})
    mg.train({"num_leaves": 4}, ds, 1)
    assert ds.binning["max_bin"] == 7 and ds.bin_mapper.bounds.size <= 7 * X.shape[1]


def test_binning_given_to_train_after_construction_warns(multi):
    X, Y = multi
    ds = mg.Dataset(X, Y)
    mg.train({"num_leaves": 4}, ds, 1)
    for name, value in (("max_bin", 15), ("min_data_in_bin", 5), ("bin_construct_sample_cnt", 100), ("seed", 3)):
        with pytest.warns(MultigroveWarning, match=f"{name}={value} given to train\\(\\) is ignored"):
            mg.train({"num_leaves": 4, name: value}, ds, 1)


def _fewest_rows_in_a_value_bin(ds, X):
    """The fewest rows of X (dense or sparse) in any value bin of any feature of the Dataset's bins."""
    mapper, entries = ds.bin_mapper, BinnedEntries(ds.bin_mapper, X)
    return min(np.bincount(entries.column(f, mapper.zero_bin[f]), minlength=mapper.n_value_bins[f])
               [:mapper.n_value_bins[f]].min() for f in range(X.shape[1]))


def test_min_data_in_bin_acts(multi):
    """Set, every value bin holds that many rows (from Dataset params, train's params and the estimators);
    None keeps a bin per distinct value up to 2^20 value bins in all and 64 a row, and 3 rows a bin
    (LightGBM's default) beyond."""
    X, Y = multi
    for ds in (mg.Dataset(X, Y, params={"min_data_in_bin": 25}).construct(), mg.Dataset(X, Y)):
        mg.train({"num_leaves": 4, "min_data_in_bin": 25, "verbosity": -1}, ds, 1)
        assert _fewest_rows_in_a_value_bin(ds, X) >= 25 and ds.bin_mapper.n_value_bins.max() <= 300 // 25
    thresholds = {}
    for min_data_in_bin in (1, 100):  # 300 rows: at most three value bins a feature, two thresholds
        reg = mg.GroveRegressor(n_estimators=10, num_leaves=8, min_data_in_leaf=1, early_stopping=False,
                                min_data_in_bin=min_data_in_bin).fit(X, Y)
        thresholds[min_data_in_bin] = [{float(t) for tree in reg.booster_.trees
                                        for t in tree.threshold[tree.split_feature == f]} for f in range(4)]
    assert max(len(t) for t in thresholds[100]) <= 2 < max(len(t) for t in thresholds[1])
    X_rare = np.round(np.random.default_rng(1).normal(size=(2_000, 2)), 2)  # values seen once or twice
    ds = mg.Dataset(X_rare, X_rare[:, 0]).construct()
    assert _fewest_rows_in_a_value_bin(ds, X_rare) == 1 and ds.bin_mapper.bin_min_rows == 1
    # 20,000 sparse features of ~60 distinct values: 1.2 M value bins at one row a bin, 0.6 M for half of them
    rng = np.random.default_rng(2)
    at = (rng.integers(0, 20_000, 1_200_000), rng.integers(0, 20_000, 1_200_000))
    X_wide = sp.csr_matrix((rng.random(1_200_000), at), shape=(20_000, 20_000))  # (sp.random takes 20 s)
    y = np.asarray(X_wide[:, :10].sum(axis=1)).ravel()
    ds = mg.Dataset(X_wide, y).construct()
    assert ds.bin_mapper.bin_min_rows == 3 and ds.bin_mapper.total_bins < 500_000
    assert _fewest_rows_in_a_value_bin(ds, X_wide) >= 3  # every row is in the sample
    assert mg.Dataset(X_wide[:, :10_000], y).construct().bin_mapper.bin_min_rows == 1
    # 200 rows of continuous features: 100 of them, 20,000 value bins, over 64 a row; 50, at 50 a row
    X_few = np.random.default_rng(3).normal(size=(200, 100))
    ds = mg.Dataset(X_few, X_few[:, 0]).construct()
    assert ds.bin_mapper.bin_min_rows == 3 and _fewest_rows_in_a_value_bin(ds, X_few) >= 3
    assert mg.Dataset(X_few[:, :50], X_few[:, 0]).construct().bin_mapper.bin_min_rows == 1
