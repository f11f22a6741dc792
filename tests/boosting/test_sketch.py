"""SketchBoost sketches: the properties the supplement proves or uses, and sketched training."""
import numpy as np
import pytest

import multigrove as mg
from multigrove.boosting.leaves import StatLayout
from multigrove.boosting.sketch import apply_sketch, auto_k, column_sq_norms, gram_product, plan_sketch, stable_rank
from multigrove.datasets import make_multioutput_regression


class Sketch:
    """The split statistics a sketch gives for (G, H): G (n, k), H (n, k) / (n, 1) / None, columns."""

    def __init__(self, method, k, G, H, rng):
        plan = plan_sketch(method, k, G.shape[1], rng, lambda: column_sq_norms(G), lambda V: gram_product(G, V))
        self.columns = plan.columns
        width = plan.width or G.shape[1]
        self.G = np.empty((G.shape[0], width), np.float32)
        self.H = None
        if H is not None:
            self.H = np.empty((G.shape[0], 1 if plan.projection is not None else width), np.float32)
        if plan.is_full:
            self.G[:] = G
            if H is not None:
                self.H[:] = H
        else:
            d = G.shape[1]
            layout = StatLayout.make(d, None if H is not None else 1.0)
            stats = layout.allocate(G.shape[0])
            stats[:, :d] = G
            if H is not None:
                stats[:, d: 2 * d] = H
            apply_sketch(plan, stats, layout, self.G, self.H)


sketch_gradients = Sketch


def _sr(G, rng=None):
    G = np.asarray(G)
    return stable_rank(float(column_sq_norms(G).sum()), lambda V: gram_product(G, V), G.shape[1],
                       rng or np.random.default_rng(0))


def _auto_k(G, rng):
    G = np.asarray(G, np.float32)
    return auto_k(float(column_sq_norms(G).sum()), lambda V: gram_product(G, V), G.shape[1], rng)


def _g(rng, n=300, d=12):
    G = (rng.normal(size=(n, d)) * np.linspace(3, 0.1, d)).astype(np.float32)
    H = rng.uniform(0.2, 1.0, size=(n, d)).astype(np.float32)
    return G, H


def test_top_outputs_keeps_the_largest_norm_columns_exactly(rng):
    G, H = _g(rng)
    G[:, 7] *= 50  # make column 7 the largest
    sk = sketch_gradients("top_outputs", 3, G, H, rng)
    norms = (G.astype(np.float64) ** 2).sum(0)
    assert set(sk.columns) == set(np.argsort(-norms)[:3]) and 7 in sk.columns
    np.testing.assert_array_equal(sk.G, G[:, sk.columns])
    np.testing.assert_array_equal(sk.H, H[:, sk.columns])


def test_random_projection_preserves_the_score_in_expectation(rng):
    G, H = _g(rng)
    v = (rng.random(len(G)) < 0.4).astype(np.float64)
    exact = float(np.sum((G.T.astype(np.float64) @ v) ** 2))
    est = [float(np.sum((sketch_gradients("random_projection", 4, G, H, np.random.default_rng(s)).G.T
                         .astype(np.float64) @ v) ** 2)) for s in range(400)]
    assert np.mean(est) == pytest.approx(exact, rel=0.06)
    sk = sketch_gradients("random_projection", 4, G, H, rng)
    assert sk.G.shape == (300, 4) and sk.H.shape == (300, 1)
    np.testing.assert_allclose(sk.H[:, 0], H.mean(axis=1), rtol=1e-6)


def test_random_sampling_is_an_unbiased_estimate_of_the_hessian_score(rng):
    G, H = _g(rng)
    v = rng.random(len(G)) < 0.5
    lam = 1.0
    exact = float(np.sum(G[v].sum(0, dtype=np.float64) ** 2 / (H[v].sum(0, dtype=np.float64) + lam)))
    est = []
    for s in range(600):
        sk = sketch_gradients("random_sampling", 3, G, H, np.random.default_rng(s))
        est.append(float(np.sum(sk.G[v].sum(0, dtype=np.float64) ** 2 / (sk.H[v].sum(0, dtype=np.float64) + lam))))
    assert np.mean(est) == pytest.approx(exact, rel=0.05)


def test_svd_with_k_equal_to_rank_gives_the_exact_score(rng):
    r = 3
    G = (rng.normal(size=(300, r)) @ rng.normal(size=(r, 15))).astype(np.float32)
    sk = sketch_gradients("svd", r, G, None, rng)
    for _ in range(5):
        v = (rng.random(300) < 0.5).astype(np.float64)
        assert float(np.sum((sk.G.T.astype(np.float64) @ v) ** 2)) == pytest.approx(
            float(np.sum((G.T.astype(np.float64) @ v) ** 2)), rel=1e-4)


def test_stable_rank_and_auto_k(rng):
    u = rng.normal(size=(200, 1))
    rank1 = (u @ rng.normal(size=(1, 30))).astype(np.float32)
    assert _sr(rank1) == pytest.approx(1.0, rel=1e-5)
    assert _auto_k(rank1, rng) == 4                                # ceil(1 / 0.5^2)
    Q, _ = np.linalg.qr(rng.normal(size=(200, 6)))
    assert _sr(Q.astype(np.float32)) == pytest.approx(6.0, rel=1e-3)   # orthonormal columns: sr = rank
    assert _auto_k(Q, rng) == 6                                    # clipped to d


@pytest.fixture(scope="module")
def mt():
    X, Y = make_multioutput_regression(3000, 10, 12, seed=5)
    return X, Y


@pytest.mark.parametrize("sketch", ["top_outputs", "random_sampling", "random_projection", "svd", "auto"])
def test_leaf_values_come_from_the_full_gradients(mt, sketch):
    X, Y = mt
    k = {} if sketch == "auto" else {"sketch_k": 2}  # auto picks its own k
    bst = mg.train({"sketch": sketch, **k, "learning_rate": 1.0, "lambda_l2": 1.0, "num_leaves": 6,
                    "boost_from_average": False, "target_scaling": "none"}, mg.Dataset(X, Y), 1)
    tree = bst.trees[0]
    assert tree.leaf_value.shape == (6, 12)
    leaf = bst.predict(X, pred_leaf=True)[:, 0]
    for leaf_id in range(tree.n_leaves):
        idx = leaf == leaf_id
        # squared error: G = -sum(y), H = count -> value = sum(y) / (count + lambda)
        np.testing.assert_allclose(tree.leaf_value[leaf_id], Y[idx].sum(0) / (idx.sum() + 1.0), rtol=1e-5, atol=1e-6)


def test_sketch_keeping_every_column_equals_no_sketch(mt):
    X, Y = mt
    a = mg.train({"objective": "regression", "sketch": "top_outputs", "sketch_k": 12}, mg.Dataset(X, Y), 5)
    b = mg.train({"objective": "regression", "sketch": "none"}, mg.Dataset(X, Y), 5)
    np.testing.assert_array_equal(a.predict(X), b.predict(X))


def test_random_sketches_are_reproducible_under_a_seed(mt):
    X, Y = mt
    runs = [mg.train({"sketch": "random_projection", "sketch_k": 2, "seed": s}, mg.Dataset(X, Y), 5).predict(X)
            for s in (3, 3, 4)]
    np.testing.assert_array_equal(runs[0], runs[1])
    assert not np.array_equal(runs[0], runs[2])


@pytest.mark.parametrize("objective", ["multiclass", "multilabel"])
def test_sketches_learn_classification(rng, objective):
    from multigrove.datasets import make_multiclass
    X, y = make_multiclass(3000, 10, 8, seed=2)
    Y = y if objective == "multiclass" else np.eye(8)[y]
    ds = mg.Dataset(X[:2000], Y[:2000])
    va = mg.Dataset(X[2000:], Y[2000:], reference=ds)
    for sketch in ("top_outputs", "random_sampling", "random_projection", "svd"):
        bst = mg.train({"objective": objective, "sketch": sketch, "sketch_k": 2, "growth_policy": "depthwise",
                        "max_depth": 4}, ds, 300, valid_sets=[va], callbacks=[mg.early_stopping(10, verbose=False)])
        acc = (bst.predict(X[2000:]).argmax(1) == y[2000:]).mean()
        assert acc > 0.75, (sketch, acc)


def test_default_sketch_and_leaves_follow_the_number_of_outputs():
    config = mg.Params()
    assert (config.sketch_for(1), config.leaves_for(1)) == ("none", 31)
    assert (config.sketch_for(3), config.leaves_for(3)) == ("none", 127)  # no more outputs than sketch_k columns
    assert (config.sketch_for(9), config.leaves_for(9)) == ("random_projection", 127)
    assert mg.Params(leaf_sparsity=2).sketch_for(9) == "none"  # sparse leaves score splits their own way
    assert mg.Params(multi_strategy="one_vs_all").sketch_for(9) == "none"
    assert mg.Params(multi_strategy="one_vs_all").leaves_for(9) == 31
    assert (mg.Params(num_leaves=15, sketch="svd").leaves_for(9), mg.Params(sketch="svd").sketch_for(9)) == (15, "svd")


def test_the_default_multi_output_tree_is_a_127_leaf_sketched_tree(mt):
    X, Y = mt
    default = mg.train({"seed": 1}, mg.Dataset(X, Y), 3)
    spelled = mg.train({"seed": 1, "sketch": "random_projection", "sketch_k": 3, "num_leaves": 127},
                       mg.Dataset(X, Y), 3)
    np.testing.assert_array_equal(default.predict(X), spelled.predict(X))
    assert max(t.n_leaves for t in default.trees) > 31


def test_sketch_k_without_a_sketch_is_warned_about(mt):
    X, Y = mt
    with pytest.warns(mg.MultigroveWarning, match="sketch_k=4 has no effect"):
        mg.train({"sketch": "none", "sketch_k": 4}, mg.Dataset(X, Y), 1)
