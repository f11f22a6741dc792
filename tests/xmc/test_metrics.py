"""XMC ranking metrics: hand-computed cases for every input form, napkinXC equality, errors."""
import math

import numpy as np
import pytest
import scipy.sparse as sp

from multigrove.xmc import metrics as M

# 2 rows, 4 labels.  Row 0 relevant {0, 2}; row 1 relevant {3}.
Y = np.array([[1, 0, 1, 0], [0, 0, 0, 1]])
SCORES = np.array([[0.9, 0.8, 0.1, 0.0],    # ranking 0, 1, 2, 3
              [0.2, 0.1, 0.3, 0.7]])   # ranking 3, 2, 0, 1
Q = np.array([1.0, 2.0, 3.0, 4.0])     # inverse propensities


def forms():
    """The same prediction as a dense array, a CSR matrix and a top-3 (indices, scores) pair."""
    idx = np.array([[0, 1, 2], [3, 2, 0]])
    return [SCORES, sp.csr_matrix(SCORES), (idx, np.take_along_axis(SCORES, idx, axis=1))]


@pytest.mark.parametrize("pred", forms(), ids=["dense", "csr", "topk"])
@pytest.mark.parametrize("truth", [Y, sp.csr_matrix(Y)], ids=["dense", "csr"])
def test_hand_computed(pred, truth):
    # P@1: row0 hit, row1 hit -> 1; P@2: (1 + 1) / 2 / 2 = 0.5; P@3: (2/3 + 1/3) / 2 = 0.5
    np.testing.assert_allclose(M.precision_at_k(truth, pred, 3), [1.0, 0.5, 0.5])
    # recall: row0 1/2, 1/2, 2/2; row1 1, 1, 1
    np.testing.assert_allclose(M.recall_at_k(truth, pred, 3), [0.75, 0.75, 1.0])
    # nDCG@3 row0: (1 + 1/2) / (1 + 1/log2(3)); row1: 1
    d3 = 1 / math.log2(3)
    np.testing.assert_allclose(M.ndcg_at_k(truth, pred, 3)[2], ((1 + 0.5) / (1 + d3) + 1) / 2)
    # PSP@1 = (q0 + q3) / (best: q2 + q3) = 5 / 7; PSP@3 = (q0 + q2 + q3) / 3 / ((q2 + q0 + q3) / 3) = 1
    np.testing.assert_allclose(M.psprecision_at_k(truth, pred, Q, 3)[[0, 2]], [5 / 7, 1.0])
    # PSnDCG@2: row0 gain q0 = 1 / idcg(2 labels at 2) = 1 / (1 + 1/log2 3); best (q2 + q0 / log2 3) / same
    idcg0 = 1 + d3
    num = 1 / idcg0 + 4 / 1
    best = (3 + 1 * d3) / idcg0 + 4 / 1
    np.testing.assert_allclose(M.psndcg_at_k(truth, pred, Q, 2)[1], num / best)
    # coverage: labels found at rank 1: {0, 3}; rank 3 adds 2; relevant labels {0, 2, 3}
    np.testing.assert_allclose(M.coverage_at_k(truth, pred, 3), [2 / 3, 2 / 3, 1.0])


def test_short_rankings_and_rows_without_labels():
    truth = sp.csr_matrix(np.array([[1, 1, 0], [0, 0, 0]]))
    pred = (np.array([[1, -1], [0, -1]]), np.array([[0.5, 0.0], [0.4, 0.0]]))  # one label per row
    np.testing.assert_allclose(M.precision_at_k(truth, pred, 2), [0.5, 0.25])
    np.testing.assert_allclose(M.recall_at_k(truth, pred, 2), [0.25, 0.25])      # empty row counts 0
    np.testing.assert_allclose(M.ndcg_at_k(truth, pred, 1), [0.5])
    csr_pred = sp.csr_matrix(np.array([[0.0, 0.5, 0.0], [0.0, 0.0, 0.0]]))       # row 1 ranks nothing
    np.testing.assert_allclose(M.precision_at_k(truth, csr_pred, 2), [0.5, 0.25])


def test_ties_rank_the_smaller_label_first():
    truth = np.array([[0, 1, 0]])
    np.testing.assert_allclose(M.precision_at_k(truth, np.array([[0.5, 0.5, 0.5]]), 1), [0.0])
    np.testing.assert_allclose(M.precision_at_k(truth, np.array([[0.1, 0.5, 0.5]]), 1), [1.0])


def test_propensity_formula():
    Yt = sp.csr_matrix(np.array([[1, 0], [1, 0], [1, 1], [0, 0]]))
    n, A, B = 4, 0.55, 1.5
    C = (math.log(n) - 1) * (B + 1) ** A
    expected = 1 / (1 + C * (np.array([3, 1]) + B) ** -A)
    np.testing.assert_allclose(M.propensity(Yt), expected)
    np.testing.assert_allclose(M.inverse_propensity(Yt.toarray(), 0.5, 0.4),
                               1 + (math.log(n) - 1) * 1.4 ** 0.5 * (np.array([3, 1]) + 0.4) ** -0.5)


def test_evaluate_collects_every_metric():
    out = M.evaluate(Y, SCORES, 3, inv_propensity=Q)
    assert out["P@1"] == 1.0 and out["coverage@3"] == 1.0
    assert out["PSP@1"] == pytest.approx(5 / 7)
    assert set(out) == {f"{m}@{j}" for m in ("P", "nDCG", "recall", "coverage", "PSP", "PSnDCG") for j in (1, 2, 3)}


@pytest.mark.parametrize("seed", range(3))
def test_equal_to_napkinxc(seed):
    nx = pytest.importorskip("napkinxc.metrics")
    rng = np.random.default_rng(seed)
    n, L = 400, 60
    truth = sp.random(n, L, density=0.05, random_state=seed, format="csr")
    truth.data[:] = 1
    dense = rng.random((n, L))
    csr = sp.random(n, L, density=0.15, random_state=seed + 100, format="csr")
    q = M.inverse_propensity(truth)
    np.testing.assert_allclose(q, nx.Jain_et_al_inverse_propensity(truth), atol=1e-12)
    for pred in (dense, csr):
        for ours, theirs in ((M.precision_at_k, nx.precision_at_k), (M.recall_at_k, nx.recall_at_k),
                             (M.ndcg_at_k, nx.ndcg_at_k), (M.coverage_at_k, nx.coverage_at_k)):
            np.testing.assert_allclose(ours(truth, pred, 5), theirs(truth, pred, k=5), atol=1e-6)
        np.testing.assert_allclose(M.psprecision_at_k(truth, pred, q, 5), nx.psprecision_at_k(truth, pred, q, k=5),
                                   atol=1e-6)
        np.testing.assert_allclose(M.psndcg_at_k(truth, pred, q, 5), nx.psndcg_at_k(truth, pred, q, k=5), atol=1e-6)
    # the top-k pair form gives the same values as the dense scores it came from
    idx = np.argsort(-dense, axis=1)[:, :5]
    pair = (idx, np.take_along_axis(dense, idx, axis=1))
    np.testing.assert_allclose(M.psprecision_at_k(truth, pair, q, 5), nx.psprecision_at_k(truth, dense, q, k=5),
                               atol=1e-6)


def test_errors_name_the_problem():
    with pytest.raises(ValueError, match="k must be >= 1, got 0"):
        M.precision_at_k(Y, SCORES, 0)
    with pytest.raises(TypeError, match="k must be an integer, got 2.5"):
        M.precision_at_k(Y, SCORES, 2.5)
    with pytest.raises(ValueError, match="Y_true has 3 rows but Y_pred has 2"):
        M.precision_at_k(np.zeros((3, 4)), SCORES, 1)
    with pytest.raises(ValueError, match="Y_pred has 3 columns but Y_true has 4 labels"):
        M.precision_at_k(Y, SCORES[:, :3], 1)
    with pytest.raises(ValueError, match="NaN"):
        M.precision_at_k(Y, np.where(SCORES > 0.85, np.nan, SCORES), 1)
    with pytest.raises(ValueError, match="outside"):
        M.precision_at_k(Y, (np.array([[7], [0]]), np.ones((2, 1))), 1)
    with pytest.raises(ValueError, match="inv_propensity must be a 1-D array of length 4"):
        M.psprecision_at_k(Y, SCORES, Q[:3], 1)
    with pytest.raises(ValueError, match="A must be > 0, got 0"):
        M.inverse_propensity(Y, A=0)
    with pytest.raises(ValueError, match="B must be finite, got nan"):
        M.inverse_propensity(Y, B=float("nan"))
