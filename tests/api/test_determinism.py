"""Determinism: the same data, parameters and seed give bit-identical model files, across runs and,
with deterministic=True, across num_threads 1 and 2."""
import numpy as np
import pytest
import scipy.sparse as sp

import multigrove as mg


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20000, 12))
    X[rng.random(X.shape) < 0.3] = 0.0
    Y = np.column_stack([X[:, 0] + X[:, 1] ** 2, np.sin(X[:, 2]), X[:, 3] * X[:, 4], X[:, 5] > 0]).astype(float)
    return X, Y


CASES = {
    "one output": ({}, lambda X, Y: (X, Y[:, 0])),
    "vector leaves": ({}, lambda X, Y: (X, Y)),
    "sketch, GOSS, feature fraction": ({"sketch": "random_projection", "sketch_k": 2, "data_sample_strategy": "goss",
                                        "feature_fraction": 0.7}, lambda X, Y: (X, Y)),
    "bagging, k-sparse leaves": ({"bagging_fraction": 0.6, "bagging_freq": 1, "leaf_sparsity": 2},
                                 lambda X, Y: (X, Y)),
    "sparse X": ({}, lambda X, Y: (sp.csr_matrix(X), Y)),
    "multiclass one_vs_all": ({"objective": "multiclass", "num_class": 3, "multi_strategy": "one_vs_all"},
                              lambda X, Y: (X, (X[:, 0] > 0).astype(int) + (X[:, 1] > 0.5))),
}


@pytest.mark.parametrize("name", CASES)
def test_bit_identical_model_files(data, name):
    params, make = CASES[name]
    X, y = make(*data)
    files = [mg.train({**params, "num_leaves": 31, "num_threads": threads, "deterministic": True},
                      mg.Dataset(X, y), 8).model_to_string() for threads in (2, 2, 1)]
    assert files[0] == files[1], "two runs with the same seed differ"
    assert files[0] == files[2], "num_threads 1 and 2 give different models with deterministic=True"


def test_runs_repeat_without_deterministic_and_the_seed_matters(data):
    X, Y = data
    params = {"num_leaves": 31, "bagging_fraction": 0.5, "bagging_freq": 1}
    first, second = (mg.train(params, mg.Dataset(X, Y), 10).model_to_string() for _ in range(2))
    assert first == second
    assert mg.train({**params, "seed": 1}, mg.Dataset(X, Y), 10).model_to_string() != first


def test_run_settings_stay_out_of_the_model_file(data):
    X, Y = data
    booster = mg.train({"num_leaves": 7, "num_threads": 1, "verbosity": -1}, mg.Dataset(X[:500], Y[:500]), 2)
    assert "num_threads" not in booster.params and "verbosity" not in booster.params
    assert booster.params["deterministic"] is False


SIXTEEN_THREADS = """
import json, sys
import numpy as np, scipy.sparse as sp
import multigrove as mg
from multigrove.boosting.builder import LocalBuilder
chunk_counts = set()
find_schedule = LocalBuilder._find_schedule
def spy(builder, n_rows):
    schedule = find_schedule(builder, n_rows)
    chunk_counts.update(builder._chunk_counts.values())
    return schedule
LocalBuilder._find_schedule = spy
rng = np.random.default_rng(0)
X = rng.normal(size=(60000, 12))
X[rng.random(X.shape) < 0.6] = 0.0
Y = np.column_stack([X[:, 0] + X[:, 1] ** 2, np.sin(X[:, 2]), X[:, 3] * X[:, 4], X[:, 5] > 0]).astype(float)
out = {}
for name, data in (("vector leaves", X), ("sparse X", sp.csr_matrix(X))):
    models = {}
    for deterministic in (True, False):
        for threads in (1, 16):
            params = {"num_leaves": 63, "num_threads": threads, "deterministic": deterministic}
            models[deterministic, threads] = mg.train(params, mg.Dataset(data, Y), 6)
    out[name] = dict(
        identical=models[True, 1].model_to_string() == models[True, 16].model_to_string(),
        gap=float(np.abs(models[False, 1].predict(X) - models[False, 16].predict(X)).max()))
out["chunk counts"] = sorted(chunk_counts)
print(json.dumps(out))
"""


def test_sixteen_threads():
    """In a process of 16 Numba threads (more than this host's cores: the schedules follow the thread count,
    not the cores): deterministic=True gives the model of one thread bit for bit, and without it the model of
    16 threads (row chunks by the work, kernels in other orders) predicts what one thread's does."""
    import json
    import os
    import subprocess
    import sys
    env = {**os.environ, "NUMBA_NUM_THREADS": "16"}
    result = subprocess.run([sys.executable, "-c", SIXTEEN_THREADS], env=env, capture_output=True, text=True,
                            check=True, timeout=600)
    cells = json.loads(result.stdout.strip().splitlines()[-1])
    assert any(2 < chunks < 16 for chunks in cells.pop("chunk counts")), "no node was built in fewer chunks"
    for name, cell in cells.items():
        assert cell["identical"], f"{name}: deterministic=True differs between 1 and 16 threads"
        assert cell["gap"] < 1e-9, f"{name}: 16 threads predict {cell['gap']} away from one thread"
