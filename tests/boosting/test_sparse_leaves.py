"""GBDT-MO top-k sparse leaves: hand-computed Alg. 3 / Alg. 4 gains, equivalences, storage."""
import json

import numpy as np
import pytest

import multigrove as mg
from multigrove.datasets import make_multiclass, make_multioutput_regression
from multigrove.kernels.split import node_score

from ..kernels.helpers import scan, scan_params


def _scan(hist, topk, restricted):
    g, b, _ = scan(hist, [0, hist.shape[0]], hist.sum(axis=0), scan_params(3, 3, 0, 1.0, 3, topk=topk,
                                                                           restricted=restricted))
    return g[0], b[0]


# three outputs, constant Hessian (H = count), lambda = 0; columns G1 G2 G3 count; last row = missing bin
HIST = np.array([[4.0, 0.0, 1.0, 2],     # bin 0
                 [0.0, 3.0, 0.0, 1],     # bin 1
                 [-2.0, -3.0, 2.0, 2],   # bin 2
                 [0, 0, 0, 0]], dtype=float)


def test_unrestricted_top1_gain_by_hand():
    # t=0: left G=(4,0,1) n=2 -> contributions (8, 0, 0.5); right G=(-2,0,2) n=3 -> (4/3, 0, 4/3)
    #      Alg. 3, k=1: 8 + 4/3 = 9.3333
    # t=1: left G=(4,3,1) n=3 -> (16/3, 3, 1/3); right G=(-2,-3,2) n=2 -> (2, 4.5, 2)
    #      Alg. 3, k=1: 16/3 + 4.5 = 9.8333  <- best
    gain, t = _scan(HIST, 1, False)
    assert t == 1 and gain == pytest.approx(16 / 3 + 4.5)


def test_restricted_top1_gain_by_hand():
    # Alg. 4, k=1: shared output with the largest left_j + right_j
    # t=0: sums (8 + 4/3, 0, 0.5 + 4/3) -> 9.3333 ; t=1: (16/3 + 2, 3 + 4.5, 1/3 + 2) -> 7.5 -> best t=0
    gain, t = _scan(HIST, 1, True)
    assert t == 0 and gain == pytest.approx(8 + 4 / 3)
    # k = 2 restricted at t=1: 7.5 + 7.3333 = 14.8333 ; at t=0: 9.3333 + 1.8333 = 11.1667
    total = HIST.sum(axis=0)
    g, b, d = scan(HIST, [0, 4], total, scan_params(3, 3, 0, 1.0, 3, topk=2, restricted=True))
    assert b[0] == 1 and g[0] == pytest.approx(7.5 + 16 / 3 + 2)
    # the parent of a 1-sparse leaf keeps its best output: G=(2,0,3), n=5 -> (0.8, 0, 1.8)
    assert node_score(total, scan_params(3, 3, 0, 1.0, 3, topk=1)) == pytest.approx(1.8)


@pytest.fixture(scope="module")
def mc():
    X, y = make_multiclass(3000, 10, 8, seed=4)
    return X, y


@pytest.mark.parametrize("sparse_split", ["unrestricted", "restricted"])
def test_leaf_sparsity_d_equals_the_dense_model(mc, sparse_split):
    X, y = mc
    dense = mg.train({"objective": "multiclass"}, mg.Dataset(X, y), 5)
    full = mg.train({"objective": "multiclass", "leaf_sparsity": 8, "sparse_split": sparse_split},
                    mg.Dataset(X, y), 5)
    np.testing.assert_array_equal(full.predict(X), dense.predict(X))


@pytest.mark.parametrize("sparse_split", ["unrestricted", "restricted"])
@pytest.mark.parametrize("policy", ["leafwise", "depthwise"])
def test_each_leaf_stores_its_top_k_outputs(sparse_split, policy):
    X, Y = make_multioutput_regression(2000, 8, 10, seed=6)
    lam, lr = 1.0, 0.5
    bst = mg.train({"leaf_sparsity": 3, "sparse_split": sparse_split, "growth_policy": policy, "max_depth": 4,
                    "lambda_l2": lam, "learning_rate": lr, "boost_from_average": False, "target_scaling": "none"},
                   mg.Dataset(X, Y), 1)
    tree = bst.trees[0]
    assert tree.leaf_cols.shape == tree.leaf_value.shape == (tree.n_leaves, 3) and tree.output_cols.size == 0
    leaf = bst.predict(X, pred_leaf=True)[:, 0]
    for leaf_id in range(tree.n_leaves):
        G = -Y[leaf == leaf_id].sum(0)                # squared error from a zero start: g = -y, h = 1
        H = float((leaf == leaf_id).sum())
        expect_cols = np.sort(np.argsort(-(G ** 2) / (H + lam))[:3])
        np.testing.assert_array_equal(tree.leaf_cols[leaf_id], expect_cols)
        np.testing.assert_allclose(tree.leaf_value[leaf_id], -lr * G[expect_cols] / (H + lam), rtol=1e-5)
    # prediction adds only the stored entries
    P = bst.predict(X)
    manual = np.zeros_like(P)
    for i, leaf_id in enumerate(leaf):
        manual[i, tree.leaf_cols[leaf_id]] = tree.leaf_value[leaf_id]
    np.testing.assert_allclose(P, manual, atol=1e-12)


def test_sparse_model_saves_and_reloads_identically(mc, tmp_path):
    X, y = mc
    ds = mg.Dataset(X[:2000], y[:2000])
    va = mg.Dataset(X[2000:], y[2000:], reference=ds)
    bst = mg.train({"objective": "multiclass", "leaf_sparsity": 2, "sparse_split": "restricted"}, ds, 200,
                   valid_sets=[va], callbacks=[mg.early_stopping(5, verbose=False)])
    dense = mg.train({"objective": "multiclass"}, ds, 200, valid_sets=[va],
                     callbacks=[mg.early_stopping(5, verbose=False)])
    acc = (bst.predict(X[2000:]).argmax(1) == y[2000:]).mean()
    assert acc >= (dense.predict(X[2000:]).argmax(1) == y[2000:]).mean() - 0.03   # dense: 0.784 here
    path = tmp_path / "sparse.json"
    bst.save_model(path)
    doc = json.loads(path.read_text())
    assert np.asarray(doc["model"]["trees"][0]["leaf_cols"]).shape[1] == 2
    np.testing.assert_array_equal(mg.Booster(model_file=path).predict(X), bst.predict(X))


def test_sparse_leaves_with_a_sketch_and_in_sklearn(mc):
    X, y = mc
    clf = mg.GroveClassifier(n_estimators=60, sketch="random_projection", sketch_k=3, leaf_sparsity=2)
    clf.fit(X[:2000], y[:2000])
    assert clf.booster_.trees[0].leaf_cols.shape[1] == 2
    assert clf.score(X[2000:], y[2000:]) > 0.74   # the dense model reaches 0.78 on this split
    with pytest.raises(ValueError, match="sketch and leaf_sparsity apply to multi_output trees"):
        mg.GroveClassifier(multi_strategy="one_vs_all", sketch="svd").fit(X, y)
    with pytest.raises(ValueError, match="sketch must be one of"):
        mg.GroveClassifier(sketch="pca").fit(X, y)
