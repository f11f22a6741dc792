"""Top-k selection, sparse membership and sparse-row parsing kernels vs naive twins."""
import numpy as np
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from multigrove.kernels.parse import OK, first_duplicate, parse_sparse_rows
from multigrove.kernels.sparse import row_membership, topk_csr_rows, topk_dense_rows


def naive_topk(rows, k):
    """rows: list of (cols, vals); descending by value, ties by smaller column."""
    idx = np.full((len(rows), k), -1)
    val = np.zeros((len(rows), k))
    for i, (cols, vals) in enumerate(rows):
        order = sorted(zip(cols, vals), key=lambda cv: (-cv[1], cv[0]))[:k]
        for j, (c, v) in enumerate(order):
            idx[i, j], val[i, j] = c, v
    return idx, val


@settings(max_examples=60, deadline=None)
@given(n=st.integers(0, 6), L=st.integers(1, 12), k=st.integers(1, 15), seed=st.integers(0, 2**31 - 1),
       levels=st.integers(2, 6))
def test_topk_dense_and_csr_equal_naive(n, L, k, seed, levels):
    rng = np.random.default_rng(seed)
    scores = rng.integers(0, levels, (n, L)).astype(np.float64)  # few levels: many ties
    out_i = np.empty((n, k), np.int64)
    out_v = np.empty((n, k))
    topk_dense_rows(scores, k, out_i, out_v)
    ref_i, ref_v = naive_topk([(list(range(L)), list(scores[i])) for i in range(n)], k)
    np.testing.assert_array_equal(out_i, ref_i)
    np.testing.assert_array_equal(out_v, ref_v)
    C = sp.csr_matrix(scores)
    topk_csr_rows(C.indptr.astype(np.int64), C.indices.astype(np.int64), C.data, k, out_i, out_v)
    ref_i, ref_v = naive_topk([(list(C[i].indices), list(C[i].data)) for i in range(n)], k)
    np.testing.assert_array_equal(out_i, ref_i)
    np.testing.assert_array_equal(out_v, ref_v)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 6), L=st.integers(1, 10), k=st.integers(1, 6), seed=st.integers(0, 2**31 - 1))
def test_row_membership_equals_naive(n, L, k, seed):
    rng = np.random.default_rng(seed)
    Y = sp.csr_matrix(rng.random((n, L)) < 0.4)
    cols = rng.integers(-1, L, (n, k))
    out = np.empty((n, k), np.bool_)
    row_membership(Y.indptr.astype(np.int64), Y.indices.astype(np.int64), cols, out)
    dense = Y.toarray()
    ref = np.array([[c >= 0 and bool(dense[i, c]) for c in cols[i]] for i in range(n)], dtype=bool).reshape(n, k)
    np.testing.assert_array_equal(out, ref)


@settings(max_examples=60, deadline=None)
@given(rows=st.lists(st.tuples(st.lists(st.integers(0, 50), max_size=4, unique=True),
                               st.lists(st.tuples(st.integers(0, 99), st.floats(-1e6, 1e6, allow_nan=False)),
                                        max_size=5)), max_size=6))
def test_parse_equals_naive(rows):
    lines = []
    for labels, feats in rows:
        body = " ".join(f"{j}:{v!r}" for j, v in feats)
        lines.append(",".join(map(str, labels)) + (" " + body if body else "") if labels else " " + body)
    buf = np.frombuffer(("\n".join(lines) + "\n").encode(), np.uint8)
    m = max(len(rows), 1)
    n_colon = max(int((buf == 58).sum()), 1)
    n_lab = int((buf == 44).sum()) + m
    row_line = np.zeros(m, np.int64)
    li, lx = np.zeros(m + 1, np.int64), np.zeros(n_lab, np.int64)
    fi, fx, fv = np.zeros(m + 1, np.int64), np.zeros(n_colon, np.int64), np.zeros(n_colon)
    counts = np.zeros(3, np.int64)
    code, _, _ = parse_sparse_rows(buf, 0, 1, m, row_line, li, lx, fi, fx, fv, counts)
    assert code == OK
    kept = [(lab, f) for lab, f in rows if lab or f]  # blank lines are skipped
    assert counts[0] == len(kept)
    for r, (labels, feats) in enumerate(kept):
        assert list(lx[li[r]:li[r + 1]]) == labels
        assert list(fx[fi[r]:fi[r + 1]]) == [j for j, _ in feats]
        np.testing.assert_allclose(fv[fi[r]:fi[r + 1]], [v for _, v in feats], rtol=1e-12, atol=1e-300)


def test_first_duplicate():
    assert first_duplicate(np.array([0, 2, 4]), np.array([1, 2, 3, 3])) == 1
    assert first_duplicate(np.array([0, 2, 4]), np.array([1, 2, 3, 4])) == -1
