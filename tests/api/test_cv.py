"""multigrove.cv (folds trained in lockstep) and the estimators' cross-validated early stopping."""
import numpy as np
import pytest

import multigrove as mg
from multigrove.sklearn import (
    CV_FEWER_FOLDS_MIN_ROWS,
    CV_LEAF_SIZES,
    CV_LEAF_SIZES_MAX_ROWS,
    CV_MARGIN,
    CV_MAX_ROWS,
    CV_RATE_FACTOR,
    PATIENCE_CV,
    PATIENCE_CV_FRACTION,
    PATIENCE_CV_MAX,
)

CANDIDATE_KEYS = {"rounds", "cv_rounds", "learning_rate", "score", "trained"}


def _regression(n=300, seed=0):
    return mg.datasets.make_multioutput_regression(n_rows=n, n_features=6, n_targets=2, seed=seed)


def _folds(n, k, seed):
    from sklearn.model_selection import KFold
    return list(KFold(k, shuffle=True, random_state=seed).split(np.zeros(n)))


def test_cv_mean_is_the_mean_of_the_folds_trained_alone():
    X, Y = _regression()
    params = dict(num_leaves=7, learning_rate=0.3, seed=3, verbosity=-1)
    result = mg.cv(params, mg.Dataset(X, Y), 15, nfold=3)
    full = mg.Dataset(X, Y).construct(mg.Params.from_dict(params), 2)  # the bins cv shares with its folds
    curves = []
    for fit_rows, valid_rows in _folds(len(X), 3, seed=3):
        fit_set = mg.Dataset(X[fit_rows], Y[fit_rows], reference=full)
        record = {}
        mg.train(params, fit_set, 15, valid_sets=[mg.Dataset(X[valid_rows], Y[valid_rows], reference=fit_set)],
                 callbacks=[mg.record_evaluation(record)])
        curves.append(record["valid_0"]["l2"])
    np.testing.assert_allclose(result["valid l2-mean"], np.mean(curves, axis=0), rtol=1e-12)
    np.testing.assert_allclose(result["valid l2-stdv"], np.std(curves, axis=0), rtol=1e-9, atol=1e-15)


def test_cv_early_stopping_cuts_the_curve_at_the_best_mean_round():
    X, Y = _regression()
    params = dict(num_leaves=31, min_data_in_leaf=2, learning_rate=0.8, verbosity=-1)
    full = mg.cv(params, mg.Dataset(X, Y), 120)["valid l2-mean"]
    result = mg.cv(params, mg.Dataset(X, Y), 120, callbacks=[mg.early_stopping(10, verbose=False)],
                   return_boosters=True)
    mean = result["valid l2-mean"]
    best = len(mean)
    assert best < 120 and mean[-1] == min(full[:best + 10])  # the best of the rounds it saw
    np.testing.assert_array_equal(mean, full[:best])
    assert all(b.best_iteration == best for b in result["boosters"])
    assert len(result["boosters"]) == 5


def test_cv_stratifies_class_folds_and_takes_given_folds():
    X, y = mg.datasets.make_multiclass(n_rows=400, n_features=5, n_classes=3, seed=1)
    params = dict(objective="multiclass", num_class=3, verbosity=-1)
    result = mg.cv(params, mg.Dataset(X, y), 3, nfold=4, return_boosters=True)
    assert "valid multi_logloss-mean" in result
    from multigrove.boosting.cv import fold_indices
    ds = mg.Dataset(X, y)
    for fit_rows, valid_rows in fold_indices(mg.Params.from_dict(params), ds, 4, None, True, True):
        np.testing.assert_allclose(np.bincount(y[valid_rows], minlength=3) / valid_rows.size,
                                   np.bincount(y, minlength=3) / y.size, atol=0.02)
        assert np.intersect1d(fit_rows, valid_rows).size == 0 and fit_rows.size + valid_rows.size == 400
    folds = _folds(400, 2, seed=9)
    given = mg.cv(params, mg.Dataset(X, y), 3, folds=folds)
    from sklearn.model_selection import KFold
    splitter = mg.cv(params, mg.Dataset(X, y), 3, folds=KFold(2, shuffle=True, random_state=9))
    assert given == splitter


def test_cv_folds_of_weighted_rows_each_hold_rows_of_positive_weight():
    """Rows of weight 0 are dealt to the folds apart from the others: with 10 weighted rows of 300, each of 5 folds
    validates on 2 of them and trains on the other 8 (drawn alone, a fold's validation part often held none)."""
    from multigrove.boosting.cv import fold_indices
    X, Y = _regression()
    weight = np.zeros(300)
    weight[np.random.default_rng(4).choice(300, 10, replace=False)] = 1.0
    config = mg.Params.from_dict({"seed": 7, "verbosity": -1})
    folds = fold_indices(config, mg.Dataset(X, Y, weight=weight), 5, None, True, True)
    assert len(folds) == 5
    for fit_rows, valid_rows in folds:
        assert np.count_nonzero(weight[valid_rows]) == 2 and np.count_nonzero(weight[fit_rows]) == 8
        assert np.intersect1d(fit_rows, valid_rows).size == 0 and fit_rows.size + valid_rows.size == 300
    np.testing.assert_array_equal(np.sort(np.concatenate([valid for _, valid in folds])), np.arange(300))
    assert {valid.size for _, valid in folds} == {60}  # the 290 rows of weight 0 dealt evenly
    # no row of weight 0: the folds are KFold's of the rows, as without weights
    unweighted = fold_indices(config, mg.Dataset(X, Y), 5, None, True, True)
    positive = fold_indices(config, mg.Dataset(X, Y, weight=np.full(300, 2.0)), 5, None, True, True)
    for (_, valid_a), (fit_b, valid_b), (fit_c, valid_c) in zip(unweighted, positive, _folds(300, 5, seed=7)):
        np.testing.assert_array_equal(valid_a, valid_c)
        np.testing.assert_array_equal(valid_b, valid_c)
        np.testing.assert_array_equal(fit_b, fit_c)
    result = mg.cv({"verbosity": -1, "min_data_in_leaf": 1}, mg.Dataset(X, Y, weight=weight), 3, nfold=5)
    assert np.all(np.isfinite(result["valid l2-mean"]))


def test_cv_refuses_folds_without_a_row_of_positive_weight():
    X, Y = _regression()
    weight = np.zeros(300)
    weight[:3] = 1.0
    with pytest.raises(ValueError, match="nfold=5 is more than the 3 rows of positive weight"):
        mg.cv({"verbosity": -1}, mg.Dataset(X, Y, weight=weight), 3, nfold=5)
    given = [(np.arange(1, 300), np.array([0])), (np.arange(297), np.arange(297, 300))]
    with pytest.raises(ValueError, match=r"folds\[1\]'s 3 validation rows all have weight 0"):
        mg.cv({"verbosity": -1}, mg.Dataset(X, Y, weight=weight), 3, folds=given)


@pytest.mark.parametrize("kwargs, message", [
    (dict(nfold=1), "nfold must be >= 2"),
    (dict(nfold=301), "nfold=301 is more than the 300 rows"),
    (dict(folds=[(np.arange(10), np.array([], dtype=int))]), r"folds\[0\] has no validation rows"),
    (dict(folds=[(np.arange(10), np.array([300]))]), r"folds\[0\] has out-of-range validation rows"),
    (dict(folds=[]), "folds is empty"),
    (dict(num_boost_round=0), "num_boost_round must be an integer >= 1"),
    (dict(callbacks=[mg.early_stopping(3, per_output=True)]), "per_output=True"),
])
def test_cv_bad_settings(kwargs, message):
    X, Y = _regression()
    args = {"num_boost_round": 3, **kwargs}
    with pytest.raises(ValueError, match=message):
        mg.cv({"verbosity": -1}, mg.Dataset(X, Y), **args)


def test_cv_needs_the_features_of_an_unconstructed_dataset():
    X, Y = _regression()
    ds = mg.Dataset(X, Y)
    mg.train({"verbosity": -1}, ds, 2)
    with pytest.raises(ValueError, match="not yet constructed"):
        mg.cv({"verbosity": -1}, ds, 3)


# ---------------------------------------------------------------------- the estimators
def test_auto_cross_validates_small_data_then_trains_every_row():
    X, Y = _regression(n=400)
    reg = mg.GroveRegressor(verbosity=-1, seed=2).fit(X, Y)
    assert reg.validation_indices_ is None
    rounds = reg.n_estimators_
    # folds of 320 rows train at twice the default rate; the model trains twice their best round
    assert len(reg.cv_results_["valid l2-mean"]) * CV_RATE_FACTOR == rounds < 1000
    assert reg.cv_candidates_[0]["learning_rate"] == CV_RATE_FACTOR * 0.1
    chosen = {k: v for k, v in reg.cv_candidates_[0].items() if k == "min_data_in_leaf"}
    for cand in reg.cv_candidates_:  # the chosen setting's score is the best mean of its cross-validation
        if cand["cv_rounds"] == len(reg.cv_results_["valid l2-mean"]) and \
                cand["score"] == reg.cv_results_["valid l2-mean"][-1]:
            chosen = {k: v for k, v in cand.items() if k == "min_data_in_leaf"}
    # the same model as training the chosen rounds (and leaf size) on every row
    same = mg.GroveRegressor(n_estimators=rounds, early_stopping=False, verbosity=-1, seed=2, **chosen).fit(X, Y)
    np.testing.assert_array_equal(reg.predict(X), same.predict(X))
    assert sum(t.leaf_count.sum() for t in reg.booster_.trees[:1]) == 400


def test_cv_leaf_sizes_replace_the_scaled_minimum_only_by_the_margin():
    X, Y = _regression(n=110)
    fast = dict(learning_rate=0.3, verbosity=-1)  # the choice does not depend on the rate: fewer rounds
    reg = mg.GroveRegressor(**fast).fit(X, Y)
    cands = reg.cv_candidates_
    assert "min_data_in_leaf" not in cands[0]  # the scaled minimum first
    assert [c["min_data_in_leaf"] for c in cands[1:]] == list(CV_LEAF_SIZES)  # 88 rows a fold: the minimum is 1
    best = cands[0]
    for c in cands[1:]:
        if c["score"] <= best["score"] - CV_MARGIN * cands[0]["score"]:
            best = c
    assert reg.booster_.params.get("min_data_in_leaf") == best.get("min_data_in_leaf")
    assert reg.n_estimators_ == best["rounds"]
    # a min_data_in_leaf given by the user is kept: only the rounds are cross-validated
    given = mg.GroveRegressor(min_data_in_leaf=7, **fast).fit(X, Y)
    assert [set(c) for c in given.cv_candidates_] == [CANDIDATE_KEYS]
    # folds of CV_LEAF_SIZES_MAX_ROWS rows or more try the scaled minimum only
    X, Y = _regression(n=CV_LEAF_SIZES_MAX_ROWS * 5 // 4)
    larger = mg.GroveRegressor(**fast).fit(X, Y)
    assert [set(c) for c in larger.cv_candidates_] == [CANDIDATE_KEYS]


def test_cv_patience_grows_with_the_best_round():
    X, Y = _regression(n=300)
    reg = mg.GroveRegressor(verbosity=-1, learning_rate=0.05).fit(X, Y)
    cand = reg.cv_candidates_[0]
    best, trained = cand["cv_rounds"], cand["trained"]  # rounds at the folds' rate: 2 x 0.05
    assert cand["learning_rate"] == 0.1 and reg.n_estimators_ == min(1000, 2 * best)
    patience = min(PATIENCE_CV_MAX // 2, max(PATIENCE_CV // 2, int(PATIENCE_CV_FRACTION * best)))
    assert best > PATIENCE_CV  # the rule's middle part: a share of the best round
    assert trained == min(best + patience, 500)
    fixed = mg.GroveRegressor(verbosity=-1, learning_rate=0.05, n_iter_no_change=7).fit(X, Y)
    assert fixed.cv_candidates_[0]["trained"] == min(fixed.cv_candidates_[0]["cv_rounds"] + 4, 500)


@pytest.mark.parametrize("learning_rate, n_rows, folds_rate, n_folds", [
    (0.1, 300, 0.2, 5), (0.15, 300, 0.2, 5), (0.2, 300, 0.2, 5), (0.3, 300, 0.3, 5), (0.1, 110, 0.1, 5),
    (0.1, CV_FEWER_FOLDS_MIN_ROWS - 1, 0.2, 5), (0.1, CV_FEWER_FOLDS_MIN_ROWS, 0.2, 3)])
def test_cv_trains_its_folds_at_twice_the_rate_up_to_a_limit(learning_rate, n_rows, folds_rate, n_folds):
    """Folds of 100 rows or more cross-validate at twice the learning rate, at most 0.2 (never below the
    model's own), and the model trains their best round times that factor; smaller folds keep the rate.
    cv_folds=None: 5 folds, 3 from CV_FEWER_FOLDS_MIN_ROWS rows."""
    X, Y = _regression(n=n_rows)
    reg = mg.GroveRegressor(verbosity=-1, learning_rate=learning_rate, min_data_in_leaf=5).fit(X, Y)
    cand = reg.cv_candidates_[0]
    assert cand["learning_rate"] == pytest.approx(folds_rate)
    assert reg.n_estimators_ == min(1000, round(folds_rate / learning_rate * cand["cv_rounds"]))
    folds = mg.cv({"learning_rate": folds_rate, "min_data_in_leaf": 5, "verbosity": -1}, mg.Dataset(X, Y),
                  num_boost_round=cand["trained"], nfold=n_folds)
    curve = folds["valid l2-mean"]
    assert cand["cv_rounds"] == int(np.argmin(curve)) + 1 and cand["score"] == pytest.approx(min(curve))


def test_auto_cross_validates_only_up_to_cv_max_rows():
    X, Y = _regression(n=CV_MAX_ROWS + 1)
    reg = mg.GroveRegressor(n_estimators=20, verbosity=-1).fit(X, Y)
    # above CV_MAX_ROWS: a held-out tenth stops the training
    assert reg.cv_results_ is None and reg.validation_indices_.size == (CV_MAX_ROWS + 1) // 10 + 1
    assert reg.n_estimators_ <= 20 and "validation" in reg.evals_result_
    forced = mg.GroveRegressor(n_estimators=20, early_stopping="cv", cv_folds=2, min_data_in_leaf=20,
                               verbosity=-1).fit(X, Y)
    assert CV_RATE_FACTOR * len(forced.cv_results_["valid l2-mean"]) == forced.n_estimators_ <= 20


def test_early_stopping_cv_setting_and_its_errors():
    X, y = mg.datasets.make_multiclass(n_rows=300, n_features=5, n_classes=3, seed=0)
    clf = mg.GroveClassifier(early_stopping="cv", cv_folds=3, min_data_in_leaf=5, verbosity=-1).fit(X, y)
    assert CV_RATE_FACTOR * len(clf.cv_results_["valid multi_logloss-mean"]) == clf.n_estimators_
    # an eval_set turns "auto" away from cross-validation (as before: it is recorded, no early stopping)
    rec = mg.GroveClassifier(n_estimators=20, verbosity=-1).fit(X, y, eval_set=[(X[:50], y[:50])])
    assert rec.cv_results_ is None and rec.n_estimators_ == 20
    with pytest.raises(ValueError, match="needs at least 10 training rows"):
        mg.GroveClassifier(early_stopping="cv", verbosity=-1).fit(X[:8], y[:8])
    with pytest.raises(ValueError, match="cv_folds must be >= 2"):
        mg.GroveClassifier(cv_folds=1).fit(X, y)
    tiny = mg.GroveClassifier(verbosity=-1).fit(X[:9], np.r_[0, 1, 2].repeat(3))  # too few rows: 100 rounds
    assert tiny.cv_results_ is None and tiny.n_estimators_ == 100


@pytest.mark.parametrize("rate, error, message", [(0, ValueError, "learning_rate must be > 0"),
                                                  ("x", TypeError, "learning_rate must be a number")])
def test_cross_validation_refuses_an_invalid_learning_rate_by_name(rate, error, message):
    X, Y = _regression(n=300)
    with pytest.raises(error, match=message):
        mg.GroveRegressor(learning_rate=rate, verbosity=-1).fit(X, Y)


def test_estimators_stop_early_on_rows_of_positive_weight():
    """Most rows of weight 0: the folds and the held-out rows each hold rows of positive weight (before, a fold
    of only rows of weight 0 failed the fit with "weight must have a positive sum"), and too few such rows turn
    "auto" away from the folds."""
    X, Y = _regression(n=300)
    weight = np.zeros(300)
    weight[:12] = 1.0
    small = mg.GroveRegressor(n_estimators=40, min_data_in_leaf=1, verbosity=-1).fit(X, Y, sample_weight=weight)
    assert small.cv_results_ is not None and small.n_estimators_ >= 1
    few = weight.copy()
    few[9:] = 0.0  # 9 rows of positive weight: under 2 x 5 folds
    fixed = mg.GroveRegressor(n_estimators=15, verbosity=-1).fit(X, Y, sample_weight=few)
    assert fixed.cv_results_ is None and fixed.n_estimators_ == 15
    with pytest.raises(ValueError, match="needs at least 10 training rows of positive sample_weight, got 9"):
        mg.GroveRegressor(early_stopping="cv", verbosity=-1).fit(X, Y, sample_weight=few)
    X, Y = _regression(n=CV_MAX_ROWS + 400, seed=1)
    weight = np.zeros(X.shape[0])
    weight[::100] = 1.0  # 24 rows of positive weight
    held = mg.GroveRegressor(n_estimators=30, min_data_in_leaf=1, seed=5, verbosity=-1).fit(X, Y, sample_weight=weight)
    assert 0 < np.count_nonzero(weight[held.validation_indices_]) < 24
    assert held.validation_indices_.size == np.ceil(0.1 * 24) + np.ceil(0.1 * (X.shape[0] - 24))  # a tenth of each
    # without a row of weight 0 the held-out rows are those of the unweighted fit
    plain = mg.GroveRegressor(n_estimators=5, seed=5, verbosity=-1).fit(X, Y)
    even = mg.GroveRegressor(n_estimators=5, seed=5, verbosity=-1).fit(X, Y, sample_weight=np.full(X.shape[0], 3.0))
    np.testing.assert_array_equal(plain.validation_indices_, even.validation_indices_)
