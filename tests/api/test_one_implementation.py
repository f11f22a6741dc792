"""One implementation of each thing: the layers that check labels, rank outputs or score P@k agree."""
import numpy as np
import pytest
import scipy.sparse as sp

import multigrove as mg
from multigrove.boosting.leaves import largest
from multigrove.boosting.metrics import evaluate
from multigrove.xmc import LabelTreeClassifier
from multigrove.xmc.metrics import precision_at_k


def test_every_layer_checks_an_indicator_the_same_way():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 3))
    Y = (rng.random((50, 3)) < 0.5).astype(float)
    Y[0, 1] = 2
    calls = {
        "Dataset + train": lambda: mg.train({"objective": "multilabel"}, mg.Dataset(X, Y), 1),
        "GroveClassifier": lambda: mg.GroveClassifier(n_estimators=1).fit(X, Y),
        "LabelTreeClassifier dense": lambda: LabelTreeClassifier().fit(X, Y),
        "LabelTreeClassifier sparse": lambda: LabelTreeClassifier().fit(sp.csr_matrix(X), sp.csr_matrix(Y)),
    }
    for name, call in calls.items():
        with pytest.raises(ValueError, match=r"must be a 0/1 indicator, got 2 at row 0, column 1") as err:
            call()
        assert err.value is not None, name


def test_top_k_selection_breaks_ties_to_the_smaller_column():
    scores = np.array([[3.0, 1.0, 1.0, 1.0], [0.0, 2.0, 2.0, 5.0]])
    np.testing.assert_array_equal(largest(scores, 2), [[0, 1], [3, 1]])


def test_training_metric_and_xmc_metric_agree_on_ties():
    truth = np.array([[0, 1, 0, 1], [1, 0, 0, 0]], dtype=float)
    scores = np.array([[0.5, 0.5, 0.5, 0.1], [0.2, 0.2, 0.9, 0.2]])  # ties everywhere
    got = dict((name, value) for name, value, _ in evaluate("precision_at_k", truth, np.log(scores), scores, None,
                                                            (1, 2, 3)))
    np.testing.assert_allclose([got["precision@1"], got["precision@2"], got["precision@3"]],
                               precision_at_k(truth, scores, 3))


def test_both_model_files_check_their_header_and_checksum_the_same_way(tmp_path):
    import json
    rng = np.random.default_rng(1)
    X = rng.normal(size=(60, 3))
    booster = mg.train({"num_leaves": 4}, mg.Dataset(X, X[:, 0]), 2)
    text = booster.model_to_string().replace('"version":1', '"version":99', 1)
    with pytest.raises(ValueError, match="has format version 99, newer than this multigrove reads"):
        mg.Booster(model_str=text)
    trees = LabelTreeClassifier(branching=2, n_trees=1).fit(X, (X[:, :3] > 0).astype(float))
    path = tmp_path / "trees.npz"
    trees.save(path)
    with np.load(path) as z:
        arrays = {name: z[name] for name in z.files}
    meta = json.loads(str(arrays.pop("meta")))
    meta["version"] = 99
    np.savez(path, meta=np.array(json.dumps(meta)), **arrays)
    with pytest.raises(ValueError, match="has format version 99, newer than this multigrove reads"):
        LabelTreeClassifier.load(path)
