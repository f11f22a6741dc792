"""Target scaling, per-output metrics, per-output early stopping, reusable callbacks."""
import numpy as np
import pytest

import multigrove as mg
from multigrove.datasets import make_multioutput_regression


@pytest.fixture(scope="module")
def wide_scales():
    """Four targets whose spreads differ by a factor 400, one of them noisy and quick to overfit."""
    X, Y = make_multioutput_regression(3000, 10, 4, seed=3)
    Y = Y * np.array([200.0, 1.0, 30.0, 0.5])
    Y[:, 1] += np.random.default_rng(0).normal(scale=2.0, size=len(Y))
    return X[:2000], Y[:2000], X[2000:2500], Y[2000:2500], X[2500:], Y[2500:]


def test_standardized_targets_equal_training_on_standardized_labels(wide_scales):
    Xtr, Ytr, _, _, Xte, _ = wide_scales
    mu, sd = Ytr.mean(0), Ytr.std(0)
    scaled = mg.train({"target_scaling": "standard"}, mg.Dataset(Xtr, Ytr), 20)
    manual = mg.train({"target_scaling": "none"}, mg.Dataset(Xtr, (Ytr - mu) / sd), 20)
    np.testing.assert_allclose(scaled.predict(Xte), manual.predict(Xte) * sd + mu, rtol=1e-9, atol=1e-9)
    # the model is in the user's units: a saved and reloaded model predicts the same
    assert np.array_equal(mg.Booster(model_str=scaled.model_to_string()).predict(Xte), scaled.predict(Xte))


def test_auto_scaling_applies_to_multi_output_regression_only(wide_scales):
    Xtr, Ytr, _, _, Xte, _ = wide_scales
    for params, scaled in (({}, True), ({"multi_strategy": "one_vs_all"}, False)):
        a = mg.train(params, mg.Dataset(Xtr, Ytr), 5).predict(Xte)
        b = mg.train(dict(params, target_scaling="standard" if scaled else "none"), mg.Dataset(Xtr, Ytr), 5)
        np.testing.assert_allclose(a, b.predict(Xte), rtol=1e-12)
    with pytest.raises(ValueError, match="target_scaling='standard' applies to objective 'regression'"):
        mg.train({"objective": "multilabel", "target_scaling": "standard"}, mg.Dataset(Xtr, Ytr > 0), 1)


def test_boost_from_average_false_starts_at_zero_in_the_users_units(wide_scales):
    Xtr, Ytr, *_ = wide_scales
    bst = mg.train({"boost_from_average": False, "target_scaling": "standard"}, mg.Dataset(Xtr, Ytr), 0)
    np.testing.assert_allclose(bst.init_score, 0.0, atol=1e-9)


def test_metrics_per_output(wide_scales):
    Xtr, Ytr, Xva, Yva, _, _ = wide_scales
    rec = {}
    ds = mg.Dataset(Xtr, Ytr)
    bst = mg.train({"metric": ["l2", "rmse"], "metric_per_output": True}, ds, 5,
                   valid_sets=[mg.Dataset(Xva, Yva, reference=ds)], callbacks=[mg.record_evaluation(rec)])
    err = (bst.predict(Xva) - Yva) ** 2
    for j in range(4):
        assert rec["valid_0"][f"l2[{j}]"][-1] == pytest.approx(err[:, j].mean(), rel=1e-9)
        assert rec["valid_0"][f"rmse[{j}]"][-1] == pytest.approx(np.sqrt(err[:, j].mean()), rel=1e-9)
    assert rec["valid_0"]["l2"][-1] == pytest.approx(err.mean(), rel=1e-9)


@pytest.mark.parametrize("strategy", ["multi_output", "one_vs_all"])
def test_per_output_early_stopping_keeps_every_output_at_its_best_round(wide_scales, strategy):
    Xtr, Ytr, Xva, Yva, Xte, _ = wide_scales
    rec = {}
    ds = mg.Dataset(Xtr, Ytr)
    bst = mg.train({"learning_rate": 0.3, "multi_strategy": strategy}, ds, 400,
                   valid_sets=[mg.Dataset(Xva, Yva, reference=ds)],
                   callbacks=[mg.early_stopping(15, verbose=False), mg.record_evaluation(rec)])  # "auto"
    best = bst.output_best_iteration
    assert best is not None and len(set(best)) > 1 and bst.best_iteration == max(best)
    assert bst.current_iteration() < 400
    for j, b in enumerate(best):
        curve = np.array(rec["valid_0"][f"l2[{j}]"])
        assert b == int(np.argmin(curve[:b + 15])) + 1                  # its own best round
        # later trees add nothing to output j: the model predicts it as at its best round
        np.testing.assert_array_equal(bst.predict(Xte, num_iteration=b)[:, j], bst.predict(Xte)[:, j])
        assert np.mean((bst.predict(Xva)[:, j] - Yva[:, j]) ** 2) == pytest.approx(curve[b - 1], rel=1e-9)


def test_joint_early_stopping_still_available_and_per_output_refused_for_softmax(wide_scales):
    Xtr, Ytr, Xva, Yva, _, _ = wide_scales
    ds = mg.Dataset(Xtr, Ytr)
    va = mg.Dataset(Xva, Yva, reference=ds)
    bst = mg.train({"learning_rate": 0.3}, ds, 400, valid_sets=[va],
                   callbacks=[mg.early_stopping(15, verbose=False, per_output=False)])
    assert bst.output_best_iteration is None and 0 < bst.best_iteration < 400
    y = np.digitize(Ytr[:, 0], np.quantile(Ytr[:, 0], [0.33, 0.66]))
    yv = np.digitize(Yva[:, 0], np.quantile(Ytr[:, 0], [0.33, 0.66]))
    ds = mg.Dataset(Xtr, y)
    with pytest.raises(ValueError, match="per_output=True\\) needs outputs trained independently"):
        mg.train({"objective": "multiclass"}, ds, 10, valid_sets=[mg.Dataset(Xva, yv, reference=ds)],
                 callbacks=[mg.early_stopping(5, per_output=True)])
    with pytest.raises(ValueError, match="per_output must be True, False or 'auto'"):
        mg.early_stopping(5, per_output="yes")


def test_an_early_stopping_callback_can_be_reused(wide_scales):
    Xtr, Ytr, Xva, Yva, _, _ = wide_scales
    stop = mg.early_stopping(5, verbose=False, per_output=False)
    results = []
    for _ in range(2):
        ds = mg.Dataset(Xtr, Ytr[:, 0])
        bst = mg.train({"learning_rate": 0.5}, ds, 300, valid_sets=[mg.Dataset(Xva, Yva[:, 0], reference=ds)],
                       callbacks=[stop])
        results.append((bst.best_iteration, bst.current_iteration()))
    assert results[0] == results[1]                       # the second run starts from a clean state


def test_progress_bar_is_closed_when_early_stopping_ends_training(wide_scales, monkeypatch):
    import tqdm.auto
    closed = []

    class Bar:
        def __init__(self, total=None, desc=None):
            self.n = 0

        def update(self, k):
            self.n += k

        def set_postfix(self, d):
            pass

        def close(self):
            closed.append(self.n)
    monkeypatch.setattr(tqdm.auto, "tqdm", Bar)
    Xtr, Ytr, Xva, Yva, _, _ = wide_scales
    ds = mg.Dataset(Xtr, Ytr[:, 0])
    bst = mg.train({"learning_rate": 0.5}, ds, 300, valid_sets=[mg.Dataset(Xva, Yva[:, 0], reference=ds)],
                   callbacks=[mg.progress_bar(), mg.early_stopping(5, verbose=False)])
    assert closed == [bst.current_iteration()] and bst.current_iteration() < 300


def test_early_stopping_on_one_chosen_output():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(900, 4))
    # output 0 is learnable, output 1 is noise: the chosen output decides when training stops
    Y = np.column_stack([X[:, 0] * 2 + 0.1 * rng.normal(size=900), rng.normal(size=900)])
    train = mg.Dataset(X[:600], Y[:600])
    valid = mg.Dataset(X[600:], Y[600:], reference=train)
    result = {}
    model = mg.train({"metric": "l2", "num_leaves": 8, "learning_rate": 0.3}, train, 300, valid_sets=[valid],
                     callbacks=[mg.early_stopping(10, metric_name="l2[1]", verbose=False),
                                mg.record_evaluation(result)])
    curve = result["valid_0"]["l2[1]"]
    assert model.best_iteration == int(np.argmin(curve)) + 1
    assert len(curve) == model.best_iteration + 10
    with pytest.raises(ValueError, match=r"metric_name='l1'.*\['l2'\]"):
        mg.train({"metric": "l2"}, train, 5, valid_sets=[valid], callbacks=[mg.early_stopping(3, metric_name="l1")])


# ---------------------------------------------------------------------- estimators: early_stopping="auto"
def _classes(n, seed=0):
    X, y = mg.datasets.make_multiclass(n_rows=n, n_features=6, n_classes=3, seed=seed)
    return X, y


def test_auto_early_stopping_holds_out_the_fraction_it_says_on_large_data():
    X, y = _classes(12_000)
    clf = mg.GroveClassifier(n_estimators=400, learning_rate=0.5, validation_fraction=0.2, n_iter_no_change=5,
                             verbosity=-1).fit(X, y)
    held = clf.validation_indices_
    assert held.size == int(np.ceil(0.2 * 12_000))
    assert np.unique(held).size == held.size
    # stratified: every class keeps its share in the held-out rows
    np.testing.assert_allclose(np.bincount(y[held]) / held.size, np.bincount(y) / y.size, atol=0.002)
    assert "validation" in clf.evals_result_
    curve = clf.evals_result_["validation"]["multi_logloss"]
    best = clf.best_iteration_
    assert 0 < best < 400 and len(curve) == best + 5  # stopped n_iter_no_change rounds after the best
    assert curve[best - 1] == min(curve)
    # prediction uses the best round
    np.testing.assert_array_equal(clf.predict_proba(X), clf.booster_.predict(X, num_iteration=best))
    # training saw the other rows only
    kept = np.setdiff1d(np.arange(12_000), held)
    assert sum(t.leaf_count.sum() for t in clf.booster_.trees[:1]) == kept.size


def test_auto_early_stopping_holds_out_a_tenth_above_cv_max_rows_and_false_turns_it_off():
    X, y = _classes(600)
    held = mg.GroveClassifier(n_estimators=30, verbosity=-1).fit(*_classes(2500))
    assert held.validation_indices_.size == 250 and held.cv_results_ is None
    on = mg.GroveClassifier(n_estimators=500, learning_rate=0.5, early_stopping=True, n_iter_no_change=3,
                            verbosity=-1).fit(X, y)
    assert on.validation_indices_.size == 60 and 0 < on.best_iteration_ < 500
    never = mg.GroveClassifier(n_estimators=30, early_stopping=False, verbosity=-1).fit(*_classes(12_000))
    assert never.validation_indices_ is None and never.cv_results_ is None and never.n_estimators_ == 30 \
        and never.best_iteration_ == 0


def test_early_stopping_uses_a_given_eval_set_or_callback_instead_of_holding_out():
    X, Y = mg.datasets.make_multioutput_regression(n_rows=1000, n_targets=2, seed=1)
    reg = mg.GroveRegressor(n_estimators=2000, learning_rate=0.5, early_stopping=True, n_iter_no_change=3,
                            verbosity=-1).fit(X[:800], Y[:800], eval_set=[(X[800:], Y[800:])])
    assert reg.validation_indices_ is None and 0 < reg.best_iteration_ < 2000
    # a user's own early stopping callback is the only one
    reg2 = mg.GroveRegressor(n_estimators=2000, learning_rate=0.5, early_stopping=True, verbosity=-1).fit(
        X[:800], Y[:800], eval_set=[(X[800:], Y[800:])], callbacks=[mg.early_stopping(50, verbose=False)])
    assert reg2.n_estimators_ > reg.n_estimators_


@pytest.mark.parametrize("kwargs, message", [
    (dict(early_stopping="yes"), "early_stopping must be"),
    (dict(validation_fraction=1.0), "validation_fraction"),
    (dict(validation_fraction=0.0), "validation_fraction"),
    (dict(n_iter_no_change=0), "n_iter_no_change"),
])
def test_bad_early_stopping_settings(kwargs, message):
    X, y = _classes(100)
    with pytest.raises(ValueError, match=message):
        mg.GroveClassifier(n_estimators=5, **kwargs).fit(X, y)


def test_n_estimators_none_is_100_rounds_or_at_most_1000_when_stopping_early():
    assert mg.GroveClassifier(early_stopping=False, verbosity=-1).fit(*_classes(2500)).n_estimators_ == 100
    X, y = _classes(600)
    slow = mg.GroveClassifier(early_stopping=True, n_iter_no_change=3, learning_rate=0.01, verbosity=-1).fit(X, y)
    assert slow.n_estimators_ > 100  # the validation loss still falls after 100 rounds: not capped there
    fast = mg.GroveClassifier(early_stopping=True, n_iter_no_change=3, learning_rate=0.5, verbosity=-1).fit(X, y)
    assert fast.n_estimators_ < 1000 and fast.best_iteration_ + 3 == fast.n_estimators_


def test_default_patience_is_20_rounds_on_held_out_rows():
    X, y = _classes(600)
    clf = mg.GroveClassifier(n_estimators=1000, learning_rate=0.8, early_stopping=True, verbosity=-1).fit(X, y)
    curve = clf.evals_result_["validation"]["multi_logloss"]
    assert clf.n_iter_no_change is None and len(curve) == clf.best_iteration_ + 20 < 1000


@pytest.mark.parametrize("best, fraction, most, trained", [
    (10, 0.5, None, 10 + 20),     # half of 10 is under the floor of 20 rounds
    (100, 0.5, None, 100 + 50),   # half the best round
    (300, 0.5, 100, 300 + 100),   # at most max_stopping_rounds
    (100, 0.0, None, 100 + 20),   # a fixed patience
])
def test_patience_fraction_grows_the_patience_with_the_best_round(best, fraction, most, trained):
    X, Y = make_multioutput_regression(200, 6, 1, seed=1)
    ds = mg.Dataset(X, Y[:, 0])
    # a scripted validation curve: falling until round `best` (counted from 1), flat after it
    curve = iter(np.concatenate([np.linspace(2.0, 1.0, best), np.full(1000, 1.5)]))

    def scripted(preds, data):
        return "scripted", float(next(curve)), False

    bst = mg.train({"metric": "None", "verbosity": -1}, ds, 1000, valid_sets=[mg.Dataset(X, Y[:, 0], reference=ds)],
                   feval=scripted, callbacks=[mg.early_stopping(20, verbose=False, patience_fraction=fraction,
                                                                max_stopping_rounds=most)])
    assert bst.best_iteration == best
    assert bst.num_trees() == trained


def test_patience_fraction_arguments_are_checked():
    with pytest.raises(ValueError, match="patience_fraction"):
        mg.early_stopping(5, patience_fraction=-0.5)
    with pytest.raises(ValueError, match="max_stopping_rounds"):
        mg.early_stopping(20, max_stopping_rounds=10)


def _noisy_classes(n, seed=2):
    """Three classes, half of the labels redrawn at random: small trees overfit them less."""
    X, y = _classes(n, seed)
    rng = np.random.default_rng(seed)
    return X, np.where(rng.random(n) < 0.5, rng.integers(0, 3, n), y)


def test_held_out_fits_of_small_sets_compare_multi_output_trees_with_31_leaves(monkeypatch):
    from multigrove import sklearn as estimators
    X, y = _noisy_classes(3000)
    clf = mg.GroveClassifier(verbosity=-1).fit(X, y)
    first, second = clf.validation_candidates_
    assert (first["num_leaves"], second["num_leaves"]) == (127, 31)
    assert second["score"] <= first["score"] * (1 - estimators.LEAF_SIZES_MARGIN)  # here the small trees win ...
    assert max(t.leaf_count.size for t in clf.booster_.trees) <= 31  # ... and are the model
    assert clf.best_iteration_ == second["rounds"]
    assert min(clf.evals_result_["validation"]["multi_logloss"]) == second["score"]
    # the first candidate is the fit of num_leaves=127 given, which compares nothing
    given = mg.GroveClassifier(num_leaves=127, verbosity=-1).fit(X, y)
    assert given.validation_candidates_ is None and given.best_iteration_ == first["rounds"]
    assert max(t.leaf_count.size for t in given.booster_.trees) > 31
    # nothing is compared above the work or the rows limit, or for one-output trees
    work = 2700 * 6 * 3  # the training rows (the held-out tenth apart) x features x outputs
    monkeypatch.setattr(estimators, "LEAF_SIZES_MAX_WORK", work)
    assert mg.GroveClassifier(verbosity=-1).fit(X, y).validation_candidates_ == clf.validation_candidates_
    monkeypatch.setattr(estimators, "LEAF_SIZES_MAX_WORK", work - 1)
    large = mg.GroveClassifier(verbosity=-1).fit(X, y)
    assert large.validation_candidates_ is None
    np.testing.assert_array_equal(large.predict_proba(X), given.predict_proba(X))
    monkeypatch.setattr(estimators, "LEAF_SIZES_MAX_WORK", work)
    monkeypatch.setattr(estimators, "LEAF_SIZES_MAX_ROWS", 2999)
    assert mg.GroveClassifier(verbosity=-1).fit(X, y).validation_candidates_ is None
    monkeypatch.undo()
    # a user's callback sees both fits, and does not change the model
    rounds = []
    logged = mg.GroveClassifier(verbosity=-1).fit(X, y, callbacks=[lambda env: rounds.append(env.iteration)])
    assert logged.validation_candidates_ == clf.validation_candidates_
    assert rounds.count(0) == 2 and len(rounds) == len(clf.evals_result_["validation"]["multi_logloss"]) + len(
        given.evals_result_["validation"]["multi_logloss"])
    binary = mg.GroveClassifier(verbosity=-1).fit(X, (y > 0).astype(int))
    assert binary.validation_candidates_ is None
    # nor when the first fit ran to its last round: its validation loss gave no sign of overfitting
    limit = first["rounds"] + 20  # the default patience of 20 ends it at this round
    assert mg.GroveClassifier(n_estimators=limit + 1, verbosity=-1).fit(X, y).validation_candidates_ is not None
    capped = mg.GroveClassifier(n_estimators=limit, verbosity=-1).fit(X, y)
    assert capped.validation_candidates_ is None and capped.booster_.current_iteration() == limit
    assert mg.GroveClassifier(verbosity=-1).fit(X[:1000], y[:1000]).validation_candidates_ is None  # cv
