"""Rung 1 for the sampling kernels: GOSS and bagging selections, the row norms GOSS ranks by, the
amplification of the drawn rows and the compact copy of a sample's rows, each against a plain NumPy twin."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from multigrove.kernels.histogram import unpack_counts
from multigrove.kernels.sampling import (
    PACKED_AMPLIFIED_UNIT,
    gather_column_rows,
    gather_packed_counts,
    gather_rows,
    goss_select,
    row_sq_norms,
    scale_rows,
    scale_rows_by,
    split_marked,
)

SETTINGS = settings(max_examples=30, deadline=None)


@SETTINGS
@given(n=st.integers(1, 300), k=st.integers(1, 6), seed=st.integers(0, 2**16))
def test_row_sq_norms_equal_numpy(n, k, seed):
    stats = np.random.default_rng(seed).normal(size=(n, k + 2)).astype(np.float32)[:, :k]  # a strided view
    out = np.empty(n, np.float32)
    row_sq_norms(stats, out)
    np.testing.assert_allclose(out, (stats.astype(np.float64) ** 2).sum(1), rtol=1e-5)


@SETTINGS
@given(n=st.integers(0, 300), frac=st.floats(0, 1), seed=st.integers(0, 2**16))
def test_split_marked_equals_its_twin(n, frac, seed):
    marked = np.random.default_rng(seed).random(n) < frac
    n_marked = int(marked.sum())
    rows, left_out = np.full(n_marked + 1, -7, np.int32), np.full(n - n_marked + 1, -7, np.int32)
    split_marked(marked, rows, left_out)
    np.testing.assert_array_equal(rows[:-1], np.flatnonzero(marked))  # the twin
    np.testing.assert_array_equal(left_out[:-1], np.flatnonzero(~marked))


@SETTINGS
@given(n=st.integers(2, 300), top=st.floats(0, 1), other=st.floats(0, 1), levels=st.integers(1, 50),
       seed=st.integers(0, 2**16))
def test_goss_select_equals_its_twin(n, top, other, levels, seed):
    rng = np.random.default_rng(seed)
    magnitude = rng.integers(0, levels, n).astype(np.float32)  # few levels: many ties at the threshold
    n_top = min(int(round(top * n)), n - 1)
    n_other = min(int(round(other * n)), n - n_top - 1)
    threshold = np.sort(magnitude)[n - n_top] if n_top else np.inf
    drawn = np.zeros(n - n_top, np.bool_)
    drawn[rng.choice(n - n_top, n_other, replace=False)] = True
    rows, left_out, other_rows = (np.full(size + 1, -7, np.int32)
                                  for size in (n_top + n_other, n - n_top - n_other, n_other))
    goss_select(magnitude, threshold, n_top, drawn, rows, left_out, other_rows)
    # the twin: the rows above the threshold, then rows equal to it in row order until the top is full;
    # the j-th row of the rest is drawn when drawn[j]
    is_top = magnitude > threshold
    is_top[np.flatnonzero(magnitude == threshold)[: n_top - is_top.sum()]] = True
    expect_other = np.flatnonzero(~is_top)[drawn]
    kept = np.sort(np.concatenate([np.flatnonzero(is_top), expect_other]))
    assert is_top.sum() == n_top
    np.testing.assert_array_equal(rows[:-1], kept)
    np.testing.assert_array_equal(other_rows[:-1], expect_other)
    np.testing.assert_array_equal(left_out[:-1], np.setdiff1d(np.arange(n), kept))


@SETTINGS
@given(n=st.integers(1, 200), c=st.integers(1, 5), seed=st.integers(0, 2**16))
def test_scale_rows_scales_the_given_rows_and_columns_only(n, c, seed):
    rng = np.random.default_rng(seed)
    stats = rng.normal(size=(n, c + 1)).astype(np.float32)
    rows = np.flatnonzero(rng.random(n) < 0.4).astype(np.int32)
    expected = stats.copy()
    expected[rows, :c] *= np.float32(3.5)
    scale_rows(stats, rows, c, np.float32(3.5))
    np.testing.assert_array_equal(stats, expected)


@SETTINGS
@given(n=st.integers(0, 200), c=st.integers(1, 5), seed=st.integers(0, 2**16))
def test_scale_rows_by_weights_each_row_and_leaves_the_count(n, c, seed):
    rng = np.random.default_rng(seed)
    stats = rng.normal(size=(n, c + 1)).astype(np.float32)
    weights = rng.exponential(size=n).astype(np.float32)
    expected = stats.copy()
    for i in range(n):  # the naive twin: row by row
        expected[i, :c] = expected[i, :c] * weights[i]
    scale_rows_by(stats, weights, c)
    np.testing.assert_array_equal(stats, expected)


@SETTINGS
@given(n=st.integers(1, 300), m=st.integers(0, 40), seed=st.integers(0, 2**16))
def test_gather_rows_copies_rows_in_both_orders(n, m, seed):
    rng = np.random.default_rng(seed)
    matrix = rng.integers(0, 256, (n, m), dtype=np.uint8)
    rows = np.flatnonzero(rng.random(n) < 0.5).astype(np.int32)
    out_c = np.empty((rows.size, m), np.uint8)
    out_columns = np.empty((m, rows.size), np.uint8)  # the transpose, as BinnedStore.dense_cols
    gather_rows(matrix, rows, out_c)
    gather_column_rows(np.ascontiguousarray(matrix.T), rows, out_columns)
    np.testing.assert_array_equal(out_c, matrix[rows])
    np.testing.assert_array_equal(out_columns, matrix[rows].T)
    stats = rng.normal(size=(n, 3)).astype(np.float32)  # the statistics of a sample go through gather_rows too
    out_stats = np.empty((rows.size, 3), np.float32)
    gather_rows(stats, rows, out_stats)
    np.testing.assert_array_equal(out_stats, stats[rows])


@SETTINGS
@given(n=st.integers(1, 400), factor=st.sampled_from([8.0, 4.6666665, 2.5, 0.75]), seed=st.integers(0, 2**16))
def test_packed_counts_give_back_the_three_statistic_columns(n, factor, seed):
    """A GOSS sample's (gradient, Hessian, count) statistics packed in two columns, summed by bin and
    unpacked, equal the three columns summed by bin (naive twin: np.add.at over the unpacked rows)."""
    rng = np.random.default_rng(seed)
    plain = np.float32(1.0)
    amplified = plain * np.float32(factor)
    drawn = rng.random(n) < 0.4
    stats = np.column_stack([rng.normal(size=n), np.where(drawn, amplified, plain), np.ones(n)]).astype(np.float32)
    stats[drawn, 0] *= np.float32(factor)
    rows = np.flatnonzero(rng.random(n) < 0.7).astype(np.int32)
    packed_rows = np.empty((rows.size, 2), np.float32)
    gather_packed_counts(stats, rows, plain, packed_rows)
    np.testing.assert_array_equal(packed_rows[:, 0], stats[rows, 0])
    np.testing.assert_array_equal(packed_rows[:, 1], np.where(drawn[rows], PACKED_AMPLIFIED_UNIT, 1.0))
    bins = rng.integers(0, 7, rows.size)
    packed_hist = np.zeros((7, 2))
    np.add.at(packed_hist, bins, packed_rows.astype(np.float64))
    unpacked = np.empty((7, 3))
    unpack_counts(packed_hist, PACKED_AMPLIFIED_UNIT, float(plain), float(amplified), unpacked)
    expected = np.zeros((7, 3))
    np.add.at(expected, bins, stats[rows].astype(np.float64))
    np.testing.assert_array_equal(unpacked[:, 0], expected[:, 0])
    np.testing.assert_array_equal(unpacked[:, 2], expected[:, 2])  # counts: exact
    np.testing.assert_allclose(unpacked[:, 1], expected[:, 1], rtol=1e-15)
