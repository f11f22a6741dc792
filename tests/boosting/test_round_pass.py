"""The round pass of the log loss and the softmax (Loss.round_pass, kernels.objective.round_rows): the last
tree's score update, the gradients and the random projection in one pass over the rows give the model of three
separate passes.

Weights of 1 keep a fit on the separate passes (TrainingShard.compute_gradients fuses only rows without
weights) and change no gradient, so both fits must grow the same trees."""
import numpy as np
import pytest

import multigrove as mg
from multigrove.boosting import shard as shards
from multigrove.boosting.losses import BinaryLogloss


def _labels(rng, n=600, L=12):
    X = rng.normal(size=(n, 6))
    logits = X[:, :3] @ rng.normal(size=(3, L)) + rng.normal(scale=0.5, size=(n, L))
    return X, (logits > 0.5).astype(float)


def _fit(params, X, Y, weight=None, rounds=12):
    result: dict = {}
    train = mg.Dataset(X, Y, weight=weight)
    booster = mg.train(params, train, rounds, valid_sets=[train], valid_names=["training"],
                       callbacks=[mg.record_evaluation(result)])
    return booster, result["training"][params["metric"]]


@pytest.mark.parametrize("params", [
    {"sketch": "random_projection", "sketch_k": 2},   # update, gradients and projection in one pass
    {"sketch": "none"},                                # update and gradients
    {"sketch": "random_projection", "sketch_k": 3, "data_sample_strategy": "goss", "learning_rate": 0.5},
    {"sketch": "random_projection", "sketch_k": 2, "bagging_fraction": 0.6, "bagging_freq": 1},
])
def test_round_pass_grows_the_trees_of_separate_passes(rng, params, monkeypatch):
    X, Y = _labels(rng)
    params = {"objective": "multilabel", "num_leaves": 8, "min_data_in_leaf": 5, "metric": "multilabel_logloss",
              **params}
    calls = []
    original = shards.TrainingShard.compute_gradients

    def counting(self, sketch=None):
        calls.append((self.loss.round_pass is not None and self._w32 is None, sketch is not None))
        return original(self, sketch)

    monkeypatch.setattr(shards.TrainingShard, "compute_gradients", counting)
    fused, fused_curve = _fit(params, X, Y)
    separate, separate_curve = _fit(params, X, Y, weight=np.ones(len(X)))
    assert any(fuses for fuses, _ in calls) and not all(fuses for fuses, _ in calls)
    if params["sketch"] == "random_projection":
        assert all(projected for _, projected in calls)  # the projection was handed to the gradient pass
    np.testing.assert_array_equal(fused.predict(X, raw_score=True), separate.predict(X, raw_score=True))
    # the training metric reads the scores with the tree that waits for the next round's pass added
    np.testing.assert_allclose(fused_curve, separate_curve, rtol=1e-12)
    prob = np.clip(fused.predict(X), 1e-15, 1 - 1e-15)
    final = -np.mean(Y * np.log(prob) + (1 - Y) * np.log(1 - prob))
    assert fused_curve[-1] == pytest.approx(final, rel=1e-9)


def test_multiclass_round_pass_grows_the_trees_of_separate_passes(rng):
    X, Y = _labels(rng, L=7)
    y = np.argmax(Y + rng.random(Y.shape) * 0.5, axis=1).astype(float)
    params = {"objective": "multiclass", "num_class": 7, "num_leaves": 8, "metric": "multi_logloss",
              "sketch": "random_projection", "sketch_k": 2}
    fused, fused_curve = _fit(params, X, y)
    separate, separate_curve = _fit(params, X, y, weight=np.ones(len(X)))
    np.testing.assert_array_equal(fused.predict(X, raw_score=True), separate.predict(X, raw_score=True))
    np.testing.assert_allclose(fused_curve, separate_curve, rtol=1e-12)


def test_binary_one_output_uses_the_round_pass_too(rng):
    X, Y = _labels(rng, L=1)
    params = {"objective": "binary", "num_leaves": 8, "metric": "binary_logloss"}
    fused, fused_curve = _fit(params, X, Y[:, 0])
    separate, separate_curve = _fit(params, X, Y[:, 0], weight=np.ones(len(X)))
    assert BinaryLogloss.round_pass is not None
    np.testing.assert_array_equal(fused.predict(X, raw_score=True), separate.predict(X, raw_score=True))
    np.testing.assert_allclose(fused_curve, separate_curve, rtol=1e-12)


def test_continued_training_starts_from_the_pending_tree(rng):
    """A model trained on in two calls equals one trained in one: the scores the second call starts from
    include the first call's last tree, added in no later gradient pass."""
    X, Y = _labels(rng)
    params = {"objective": "multilabel", "num_leaves": 8, "sketch": "random_projection", "sketch_k": 2}
    whole = mg.train(params, mg.Dataset(X, Y), 10)
    first = mg.train(params, mg.Dataset(X, Y), 6)
    both = mg.train(params, mg.Dataset(X, Y), 4, init_model=first)
    np.testing.assert_allclose(both.predict(X, raw_score=True), whole.predict(X, raw_score=True), rtol=1e-9,
                               atol=1e-12)
