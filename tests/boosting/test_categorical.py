"""Categorical features: set splits against brute force, category maps, every path a model takes."""
import itertools
import types

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import multigrove as mg
from multigrove.kernels.split import (
    EXHAUSTIVE_MAX_CATEGORIES,
    PLAIN_ONE_VS_REST_MAX_CATEGORIES,
    CategoricalScan,
    FeatureSplits,
    best_split_per_feature,
    scan_scratch,
    set_left_sums,
)

from ..kernels.helpers import scan_params

pd = pytest.importorskip("pandas")

SETTINGS = settings(max_examples=40, deadline=None)


def _score(G, H, lam):
    """sum_j G_j^2 / (H_j + lambda) (per-output Hessians), 0 where H + lambda <= 0."""
    den = H + lam
    return float(np.sum(np.where(den > 0, G * G / np.where(den > 0, den, 1.0), 0.0)))


def _category_problem(rng, n_categories, k, with_missing):
    """One categorical feature's histogram (n_categories value bins + the missing bin), k outputs with their own
    Hessians: columns [G_1..G_k | H_1..H_k | count]."""
    n_bins = n_categories + 1
    hist = np.zeros((n_bins, 2 * k + 1))
    counts = rng.integers(0, 40, n_bins).astype(float)
    counts[-1] = counts[-1] if with_missing else 0.0
    hist[:, :k] = rng.normal(size=(n_bins, k)) * counts[:, None] + rng.normal(size=(n_bins, k)) * 3
    hist[:, k:2 * k] = counts[:, None] * rng.uniform(0.2, 1.0, size=(n_bins, k))
    hist[:, -1] = counts
    hist[counts == 0] = 0.0
    return hist


def _scan_one(hist, k, cat_params, lam=1.0, min_data=1, n_categories=None):
    """The kernel's best set of the one feature: (score, set of bins going left)."""
    C = hist.shape[1]
    offsets = np.array([0, hist.shape[0]], np.int64)
    params = scan_params(k, k, 1, 1.0, C - 1, lam, min_data, 0.0)
    cat = CategoricalScan.make(np.ones(1, np.bool_), np.array([hist.shape[0] - 1]), cat_params, n_nodes=1)
    out = FeatureSplits.allocate(1, 1)
    total = hist.sum(0).reshape(1, -1)
    best_split_per_feature(hist, hist, False, np.ones(1, np.bool_), total, offsets, np.ones(1, np.bool_), params, cat,
                           scan_scratch(C, params), out)
    return out.gain[0, 0], set(np.flatnonzero(cat.left[0, 0, :hist.shape[0]]))


def _brute_force(hist, k, subsets, lam, least):
    """The best score(left) + score(right) over the candidate sets (each side at least ``least`` rows)."""
    total = hist.sum(0)
    best, best_set = -np.inf, None
    for subset in subsets:
        left = hist[list(subset)].sum(0)
        right = total - left
        if left[-1] < least or right[-1] < least:
            continue
        score = _score(left[:k], left[k:2 * k], lam) + _score(right[:k], right[k:2 * k], lam)
        if score > best:
            best, best_set = score, set(subset)
    return best, best_set


def _params(**changes):
    values = dict(max_cat_to_onehot=4, max_cat_threshold=32, cat_smooth=10.0, cat_l2=10.0, min_data_per_group=100)
    values.update(changes)
    return types.SimpleNamespace(**values)


@SETTINGS
@given(st.integers(0, 2**32 - 1), st.integers(5, EXHAUSTIVE_MAX_CATEGORIES), st.integers(1, 4), st.booleans(),
       st.sampled_from([1, 20]), st.sampled_from([0.0, 10.0]))
def test_set_splits_of_few_categories_equal_a_search_of_every_subset(seed, n_categories, k, with_missing,
                                                                      min_group, smooth):
    """Up to EXHAUSTIVE_MAX_CATEGORIES categories (above max_cat_to_onehot): the best of every subset of the
    categories of at least cat_smooth rows, whatever the number of outputs."""
    rng = np.random.default_rng(seed)
    hist = _category_problem(rng, n_categories, k, with_missing)
    cat_params = _params(cat_smooth=smooth, cat_l2=1.0, min_data_per_group=min_group)
    gain, chosen = _scan_one(hist, k, cat_params, lam=1.0, min_data=5)
    used = [b for b in range(n_categories) if hist[b, -1] > 0 and hist[b, -1] >= smooth]
    subsets = [s for size in range(1, len(used)) for s in itertools.combinations(used, size)]
    expect, expect_set = _brute_force(hist, k, subsets, 2.0, max(5, min_group))
    if expect == -np.inf:
        assert gain == -np.inf and not chosen
        return
    assert gain == pytest.approx(expect, rel=1e-10)
    left = hist[list(chosen)].sum(0)
    assert _score(left[:k], left[k:2 * k], 2.0) + _score((hist.sum(0) - left)[:k], (hist.sum(0) - left)[k:2 * k],
                                                           2.0) == pytest.approx(expect, rel=1e-10)


@SETTINGS
@given(st.integers(0, 2**32 - 1), st.integers(2, 4), st.integers(1, 3), st.booleans())
def test_few_categories_split_one_against_the_rest(seed, n_categories, k, with_missing):
    """At most max_cat_to_onehot categories: the best single category against the rest (lambda_l2 alone)."""
    rng = np.random.default_rng(seed)
    hist = _category_problem(rng, n_categories, k, with_missing)
    gain, chosen = _scan_one(hist, k, _params(), lam=1.0, min_data=3)
    singletons = [(b,) for b in range(n_categories) if hist[b, -1] > 0]
    expect, expect_set = _brute_force(hist, k, singletons, 1.0, 3)
    assert gain == pytest.approx(expect, rel=1e-10) if expect > -np.inf else gain == -np.inf
    if expect > -np.inf:
        assert len(chosen) == 1


@SETTINGS
@given(st.integers(0, 2**32 - 1), st.integers(2, 12), st.integers(1, 3), st.booleans())
def test_one_against_the_rest_of_many_categories_adds_cat_l2(seed, n_categories, k, with_missing):
    """max_cat_to_onehot=None splits one category against the rest whatever the number of categories: with
    lambda_l2 alone up to PLAIN_ONE_VS_REST_MAX_CATEGORIES categories, with lambda_l2 + cat_l2 beyond."""
    rng = np.random.default_rng(seed)
    hist = _category_problem(rng, n_categories, k, with_missing)
    gain, chosen = _scan_one(hist, k, _params(max_cat_to_onehot=10**9, cat_l2=7.0), lam=1.0, min_data=3)
    singletons = [(b,) for b in range(n_categories) if hist[b, -1] > 0]
    lam = 1.0 if n_categories <= PLAIN_ONE_VS_REST_MAX_CATEGORIES else 8.0
    expect, expect_set = _brute_force(hist, k, singletons, lam, 3)
    if expect == -np.inf:
        assert gain == -np.inf and not chosen
        return
    assert gain == pytest.approx(expect, rel=1e-10)
    left = hist[list(chosen)].sum(0)
    right = hist.sum(0) - left
    assert len(chosen) == 1
    assert _score(left[:k], left[k:2 * k], lam) + _score(right[:k], right[k:2 * k], lam) == \
        pytest.approx(expect, rel=1e-10)


@SETTINGS
@given(st.integers(0, 2**32 - 1), st.integers(EXHAUSTIVE_MAX_CATEGORIES + 1, 12))
def test_one_output_set_split_is_the_best_of_every_subset(seed, n_categories):
    """One output without smoothing: ordering the categories by G / H and cutting the order once finds the best
    of all 2^n subsets (the classic result for grouping weighted means), beyond the exhaustive search."""
    rng = np.random.default_rng(seed)
    hist = _category_problem(rng, n_categories, 1, with_missing=False)
    hist[:, 1] = np.maximum(hist[:, 1], 1e-3) * (hist[:, 2] > 0)
    cat_params = _params(cat_smooth=0.0, cat_l2=0.0, min_data_per_group=1, max_cat_threshold=64)
    gain, chosen = _scan_one(hist, 1, cat_params, lam=0.0, min_data=1)
    used = [b for b in range(n_categories) if hist[b, -1] > 0]
    subsets = [s for size in range(1, len(used)) for s in itertools.combinations(used, size)]
    expect, _ = _brute_force(hist, 1, subsets, 0.0, 1)
    assert gain == pytest.approx(expect, rel=1e-9)


def test_set_left_sums_adds_the_bins_of_the_set(rng):
    hist = rng.normal(size=(12, 3))
    offsets = np.array([0, 5, 12], np.int64)
    left = np.zeros(7, np.bool_)
    left[[1, 4, 5]] = True
    out = np.empty(3)
    set_left_sums(hist, offsets, 1, left, out)
    np.testing.assert_allclose(out, hist[[6, 9, 10]].sum(0), rtol=1e-12)


# ---------------------------------------------------------------------- the model's paths
@pytest.fixture(scope="module")
def table():
    """4,000 rows: a number, a 30-category column whose effect is a function of the category, a 3-category
    column, an integer-coded column of 12 codes; a regression target and three labels."""
    rng = np.random.default_rng(0)
    n = 4000
    names = [f"k{i:02d}" for i in range(30)]
    effect = rng.normal(size=30) * 2
    df = pd.DataFrame({"x": rng.normal(size=n),
                       "city": pd.Categorical(rng.choice(names, n), categories=names),
                       "size": pd.Categorical(rng.choice(["s", "m", "l"], n), categories=["s", "m", "l"]),
                       "code": rng.integers(0, 12, n).astype(float)})
    df.loc[rng.random(n) < 0.05, "city"] = np.nan
    city = df["city"].cat.codes.to_numpy()
    y = df["x"].to_numpy() + np.where(city >= 0, effect[np.maximum(city, 0)], 0.5) \
        + (df["size"] == "m").to_numpy() + (df["code"] % 4 == 1).to_numpy() + 0.1 * rng.normal(size=n)
    Y = np.column_stack([y > 0, df["size"] == "l", df["code"] < 3]).astype(float)
    assert isinstance(y, np.ndarray)
    return df, y, Y


def _set_splits(booster) -> int:
    return sum(int(np.sum(t.cat_index >= 0)) for t in booster.trees if t.cat_index is not None)


def test_by_default_a_split_sends_one_category_against_the_rest(table):
    df, y, _ = table
    booster = mg.train({"categorical_feature": ["code"], "verbosity": -1}, mg.Dataset(df, y), 60)
    sizes = [int(t.cat_offsets[j + 1] - t.cat_offsets[j]) for t in booster.trees for j in t.cat_index if j >= 0]
    assert sizes and set(sizes) == {1}
    r2 = 1 - np.mean((booster.predict(df) - y) ** 2) / np.var(y)
    assert r2 > 0.95
    lightgbm_rule = mg.train({"categorical_feature": ["code"], "max_cat_to_onehot": 4, "verbosity": -1},
                             mg.Dataset(df, y), 60)
    assert max(int(t.cat_offsets[j + 1] - t.cat_offsets[j]) for t in lightgbm_rule.trees for j in t.cat_index
               if j >= 0) > 1


def test_category_columns_split_on_sets_and_fit(table):
    df, y, _ = table
    booster = mg.train({"categorical_feature": ["code"], "max_cat_to_onehot": 4, "verbosity": -1},
                       mg.Dataset(df, y), 60)
    assert booster.categories[1] == list(df["city"].cat.categories) and booster.categories[3] is None
    assert _set_splits(booster) > 0
    r2 = 1 - np.mean((booster.predict(df) - y) ** 2) / np.var(y)
    assert r2 > 0.97
    used = {int(f) for t in booster.trees for f, j in zip(t.split_feature, t.cat_index) if j >= 0}
    assert used <= {1, 2, 3} and {1, 3} <= used


def test_predictions_do_not_depend_on_the_order_or_superset_of_categories(table):
    df, y, _ = table
    booster = mg.train({"verbosity": -1}, mg.Dataset(df, y), 20)
    expect = booster.predict(df)
    reordered = df.assign(city=df["city"].cat.reorder_categories(list(df["city"].cat.categories)[::-1]))
    superset = df.assign(city=df["city"].cat.add_categories(["new1", "new2"]),
                         size=df["size"].cat.set_categories(["xl", "l", "m", "s"]))
    as_text = df.assign(city=df["city"].astype(object), size=df["size"].astype(str))
    for frame in (reordered, superset, as_text):
        np.testing.assert_array_equal(booster.predict(frame), expect)


def test_missing_unseen_and_negative_categories_go_right(table):
    """A missing value, a category the training data did not have and a negative integer code are one and the
    same to every set split: they take the right branch."""
    df, y, _ = table
    booster = mg.train({"categorical_feature": ["code"], "verbosity": -1}, mg.Dataset(df, y), 20)
    rows = df.iloc[:50].copy()
    missing = rows.assign(city=np.nan, code=np.nan)
    unseen = rows.assign(city=pd.Categorical(["elsewhere"] * 50), code=-3.0)
    np.testing.assert_array_equal(booster.predict(missing), booster.predict(unseen))
    for tree in booster.trees:  # and right is where they go: no set holds the missing bin
        if tree.cat_bins is not None:
            assert np.all(tree.cat_bins < 255)


def test_save_load_keeps_the_categories_and_the_predictions(table, tmp_path):
    df, y, Y = table
    booster = mg.train({"objective": "multilabel", "verbosity": -1}, mg.Dataset(df, Y), 15)
    path = tmp_path / "m.json"
    booster.save_model(path)
    again = mg.Booster(model_file=path)
    assert again.categories == booster.categories
    np.testing.assert_array_equal(again.predict(df), booster.predict(df))


def test_shap_values_add_up_with_set_splits(table):
    df, y, _ = table
    booster = mg.train({"verbosity": -1, "num_leaves": 15}, mg.Dataset(df, y), 10)
    assert _set_splits(booster) > 0
    phi = booster.predict(df.iloc[:40], pred_contrib=True)
    np.testing.assert_allclose(phi.sum(1), booster.predict(df.iloc[:40]), atol=1e-9)


@pytest.mark.parametrize("params", [
    {"sketch": "random_projection", "sketch_k": 2},
    {"leaf_sparsity": 2, "sketch": "none"},
    {"data_sample_strategy": "goss", "learning_rate": 0.5},
    {"growth_policy": "depthwise", "max_depth": 4},
    {"multi_strategy": "one_vs_all"},
])
def test_set_splits_with_sketches_sparse_leaves_goss_and_growth_policies(table, params):
    """The binned rows take the same side of every split as the raw rows: the training scores (binned) equal
    the predictions (raw), for each kind of tree."""
    df, y, Y = table
    targets = np.column_stack([y, Y[:, 0] * 2, df["x"].to_numpy() ** 2]) if "goss" not in params.values() else y
    rec = {}
    booster = mg.train({"verbosity": -1, "metric": "l2", **params}, ds := mg.Dataset(df, targets), 12,
                       valid_sets=[ds], callbacks=[mg.record_evaluation(rec)])
    assert _set_splits(booster) > 0
    P = booster.predict(df).reshape(len(df), -1)
    T = targets.reshape(len(df), -1)
    assert rec["training"]["l2"][-1] == pytest.approx(np.mean((P - T) ** 2), rel=1e-9)


def test_sklearn_estimators_take_category_frames(table):
    df, y, Y = table
    reg = mg.GroveRegressor(n_estimators=30, early_stopping=False, max_cat_to_onehot=4).fit(df, y)
    assert reg.score(df, y) > 0.95 and reg.booster_.categories
    clf = mg.GroveClassifier(n_estimators=20, early_stopping=False).fit(df, Y)
    np.testing.assert_array_equal(clf.predict(df.assign(city=df["city"].astype(object))), clf.predict(df))
    cv = mg.GroveRegressor(n_estimators=20, early_stopping="cv", cv_folds=3).fit(df.iloc[:900], y[:900])
    assert cv.cv_results_ and _set_splits(cv.booster_) > 0


def test_plot_tree_names_the_categories_of_a_set_split(table):
    pytest.importorskip("matplotlib")
    import matplotlib
    matplotlib.use("Agg")
    from multigrove.plotting import plot_tree
    df, y, _ = table
    booster = mg.train({"verbosity": -1, "num_leaves": 4}, mg.Dataset(df[["x", "size"]], y), 3)
    tree = next(i for i, t in enumerate(booster.trees) if t.has_set_splits)
    texts = [t.get_text() for t in plot_tree(booster, tree).texts]
    assert any(text.startswith("size in {") and any(c in text for c in "sml") for text in texts)


def test_bad_categorical_input_is_named(table):
    df, y, _ = table
    with pytest.raises(ValueError, match="categorical_feature names column 'nope', which the data does not have"):
        mg.train({"categorical_feature": ["nope"]}, mg.Dataset(df, y), 1)
    with pytest.raises(ValueError, match=r"column 'x' is categorical \(categorical_feature\) but holds "):
        mg.train({"categorical_feature": "x"}, mg.Dataset(df, y), 1)
    with pytest.raises(ValueError, match="growth_policy='symmetric' splits a whole level by one threshold"):
        mg.train({"growth_policy": "symmetric"}, mg.Dataset(df, y), 1)
    with pytest.raises(ValueError, match="categorical features need dense data"):
        mg.train({"categorical_feature": [0]}, mg.Dataset(sp.csr_matrix(np.eye(30)), np.zeros(30)), 1)
    booster = mg.train({"verbosity": -1}, mg.Dataset(df[["x", "code"]], y), 2)
    with pytest.raises(TypeError, match=r"column\(s\) \['code'\] hold categories, but the model was trained on them"):
        booster.predict(df[["x", "code"]].astype({"code": "category"}))
    with pytest.raises(TypeError, match="must be 'auto' or a list of column names or indices"):
        mg.Params(categorical_feature=3.5)


def test_a_parquet_file_with_dictionary_columns_trains_on_the_command_line(table, tmp_path):
    pytest.importorskip("pyarrow")
    from multigrove.cli import main
    df, y, _ = table
    train = df.assign(target=y)
    path, model, out = tmp_path / "train.parquet", tmp_path / "m.json", tmp_path / "p.csv"
    train.to_parquet(path)
    assert main(["train", "--data", str(path), "--rounds", "10", "--model", str(model)]) == 0
    booster = mg.Booster(model_file=model)
    assert set(booster.categories) == {1, 2}
    assert main(["predict", "--model", str(model), "--data", str(path), "--out", str(out)]) == 0
    np.testing.assert_allclose(np.loadtxt(out), booster.predict(df), rtol=1e-8)


# ---------------------------------------------------------------------- ordered target statistics
def test_ordered_statistics_count_only_the_rows_before_in_the_permutation(rng):
    """Each training row's statistic: its category's targets over the rows before it in a seeded permutation (its
    own excluded), smoothed by the prior; every other data set gets the sums of all rows."""
    from multigrove.data.target_statistics import PRIOR_WEIGHT, fit_statistics
    n = 300
    codes = rng.integers(0, 9, n).astype(float)
    codes[rng.random(n) < 0.1] = np.nan
    T = rng.normal(size=(n, 2))
    T[rng.random((n, 2)) < 0.1] = np.nan
    X = np.column_stack([rng.normal(size=n), codes])
    stats, encoded = fit_statistics(X, [1], T, ["a", "b"], seed=4)
    given = ~np.isnan(T)
    prior = np.where(given, T, 0).sum(0) / given.sum(0)
    sums, counts, expect = {}, {}, np.tile(prior, (n, 1))
    for i in np.random.default_rng((4, 5)).permutation(n):
        c = codes[i]
        if np.isnan(c):
            continue
        s, m = sums.get(c, np.zeros(2)), counts.get(c, np.zeros(2))
        expect[i] = (s + PRIOR_WEIGHT * prior) / (m + PRIOR_WEIGHT)
        sums[c], counts[c] = s + np.where(given[i], T[i], 0), m + given[i]
    np.testing.assert_allclose(encoded[:, 2:], expect, rtol=1e-12, atol=1e-12)
    full = np.array([(sums[c] + prior) / (counts[c] + 1) if c in sums else prior for c in np.append(codes, 99.0)])
    np.testing.assert_allclose(stats.encode(np.column_stack([np.append(X[:, 0], 0), np.append(codes, 99.0)]))[:, 2:],
                               full, rtol=1e-12)


@pytest.fixture(scope="module")
def planes():
    """20,000 rows with a 1,500-category column (more than max_bin) whose effect is the category's."""
    rng = np.random.default_rng(1)
    n = 20_000
    names = [f"p{i}" for i in range(1500)]
    effect = rng.normal(size=1500)
    df = pd.DataFrame({"x": rng.normal(size=n), "plane": pd.Categorical(rng.choice(names, n), categories=names),
                       "size": pd.Categorical(rng.choice(list("sml"), n))})
    y = df["x"].to_numpy() + effect[df["plane"].cat.codes.to_numpy()] + (df["size"] == "m").to_numpy()
    return df, y


def test_statistics_encode_the_categorical_features_in_their_place(planes, tmp_path):
    df, y = planes
    train, test = slice(0, 16_000), slice(16_000, None)
    losses, boosters = {}, {}
    for encoding in ("sets", "auto", "statistics"):
        params = {"cat_encoding": encoding, "max_cat_to_onehot": 4, "verbosity": -1}
        booster = boosters[encoding] = mg.train(params, mg.Dataset(df.iloc[train], y[train]), 100)
        losses[encoding] = float(np.mean((booster.predict(df.iloc[test]) - y[test]) ** 2))
    assert boosters["auto"].target_statistics is None and losses["auto"] == losses["sets"]  # "auto" is sets
    booster = boosters["statistics"]
    assert booster.target_statistics.features == (1, 2)  # plane (1,500 categories) and size (3)
    # on this table, where a plane's effect is its mean, the statistics win: sets see 255 of the 1,500 planes
    assert losses["statistics"] < 0.5 * losses["sets"]
    assert not any(1 in set(t.split_feature) for t in booster.trees)  # the statistic stands in for the feature
    path = tmp_path / "m.json"
    booster.save_model(path)
    again = mg.Booster(model_file=path)
    np.testing.assert_array_equal(again.predict(df.iloc[test]), booster.predict(df.iloc[test]))
    phi = booster.predict(df.iloc[:30], pred_contrib=True)
    assert phi.shape == (30, 4)  # the statistics' shares are the plane's and the size's
    np.testing.assert_allclose(phi.sum(1), booster.predict(df.iloc[:30]), atol=1e-9)
    assert booster.feature_importance().shape == (3,) and booster.feature_importance()[1] > 0
    assert booster.model_feature_names()[3:] == ["plane:ts:target", "size:ts:target"]


def test_statistics_in_cross_validation_come_from_each_fold_s_training_rows(planes):
    df, y = planes
    result = mg.cv({"cat_encoding": "statistics", "verbosity": -1}, mg.Dataset(df.iloc[:3000], y[:3000]), 30,
                   nfold=3, return_boosters=True)
    stats = [b.target_statistics for b in result["boosters"]]
    assert all(s is not None and s.features == (1, 2) for s in stats)
    assert len({float(s.counts[0].sum()) for s in stats}) == 1 and stats[0].counts[0].sum() == 2000


def test_statistics_are_refused_where_they_cannot_apply(planes):
    df, y = planes
    booster = mg.train({"cat_encoding": "statistics", "verbosity": -1}, mg.Dataset(df.iloc[:500], y[:500]), 2)
    with pytest.raises(ValueError, match="init_model cannot continue a model with target statistics"):
        mg.train({"verbosity": -1}, mg.Dataset(df.iloc[:500], y[:500]), 2, init_model=booster)
    Y = (np.random.default_rng(0).random((500, 20)) < 0.5).astype(float)
    with pytest.raises(ValueError, match="cat_encoding='statistics' makes a feature per target column, at most 16"):
        mg.train({"objective": "multilabel", "cat_encoding": "statistics"}, mg.Dataset(df.iloc[:500], Y), 2)
