"""Quantile binning of raw features (LightGBM's histogram input), from dense or sparse X."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .._dtypes import BIN, MAX_VALUE_BINS, WIDE_BINS_PER_ROW, WIDE_HISTOGRAM_BINS, WIDE_MIN_DATA_IN_BIN
from ..kernels._variants import pick
from ..kernels.binning import (
    bin_matrix,
    bin_segments,
    bin_segments_serial,
    distinct_runs,
    distinct_runs_serial,
    keep_filled_cuts,
    keep_filled_cuts_serial,
    sort_short_segments,
    sort_short_segments_serial,
)


def quantile_cuts(counts: np.ndarray, max_bin: int) -> np.ndarray:
    """Where the value bins of a feature of more than ``max_bin`` distinct values end: the indices i of the
    distinct values after which a bin closes (ascending, below the last value).

    ``counts`` are the sample rows of each ascending distinct value.  Bins hold about equal numbers of
    sample rows and are always cut between two distinct values, so that a heavy value never straddles two
    bins.
    """
    cum = np.cumsum(counts)
    targets = cum[-1] * np.arange(1, max_bin) / max_bin
    cut = np.unique(np.searchsorted(cum, targets, side="left"))
    return cut[cut < counts.size - 1]


def sample_rows(n_rows: int, sample_cnt: int, seed: int) -> np.ndarray | None:
    """Sorted row ids of the binning sample, or None for every row."""
    if n_rows <= sample_cnt:
        return None
    return np.sort(np.random.default_rng(seed).choice(n_rows, sample_cnt, replace=False))


#: a feature's sample values are sorted in the kernel up to this many, by NumPy beyond (Numba's sort of 100
#: values took 2.8 times NumPy's, of 10,000 and of 200,000 values 18 times, where a call from Python costs more)
KERNEL_SORT_MAX_VALUES = 256


def _sort_segments(values: np.ndarray, indptr: np.ndarray) -> None:
    """Sort each feature's values ``values[indptr[f]:indptr[f+1]]`` in place, ascending, NaN last."""
    long_out_of_order = np.empty(indptr.size - 1, np.bool_)
    pick(sort_short_segments, sort_short_segments_serial, values.size)(values, indptr, KERNEL_SORT_MAX_VALUES,
                                                                       long_out_of_order)
    for f in np.flatnonzero(long_out_of_order):
        values[indptr[f]:indptr[f + 1]].sort()


def _distinct_values(sample) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(feature, value, count) of every distinct non-missing value of every feature of the sample,
    sorted by feature then value, each feature's NaN count, and where each feature's values start
    (F + 1,: feature f's are ``starts[f]:starts[f+1]``).  Implicit zeros of a sparse sample (CSC, indices
    sorted) count as the value 0."""
    n, F = sample.shape
    if sp.issparse(sample):  # each feature's stored values sorted in place, its implicit zeros merged in
        values = np.array(sample.data, dtype=np.float64)
        indptr = sample.indptr.astype(np.int64)
        _sort_segments(values, indptr)
        implicit_zeros = n - np.diff(indptr)
    else:  # each feature's values sorted in a row of their own (NaN last)
        columns = np.ascontiguousarray(np.asarray(sample, dtype=np.float64).T)
        columns.sort(axis=1)
        values, indptr = columns.reshape(-1), np.arange(F + 1, dtype=np.int64) * n
        implicit_zeros = np.zeros(F, np.int64)
    runs = pick(distinct_runs, distinct_runs_serial, values.size)
    n_distinct, n_missing = np.empty(F, np.int64), np.empty(F, np.int64)
    starts = np.zeros(F + 1, np.int64)
    feats, vals, counts = np.empty(0, np.int64), np.empty(0), np.empty(0, np.int64)
    runs(values, indptr, implicit_zeros, starts, False, n_distinct, n_missing, feats, vals, counts)
    starts[1:] = np.cumsum(n_distinct)
    feats, vals, counts = np.empty(starts[-1], np.int64), np.empty(starts[-1]), np.empty(starts[-1], np.int64)
    runs(values, indptr, implicit_zeros, starts, True, n_distinct, n_missing, feats, vals, counts)
    return feats, vals, counts, n_missing, starts


class BinMapper:
    """Per-feature quantile bins learnt on a row sample; NaN gets each feature's last bin.

    Attributes after ``fit``: ``bounds`` (flat float64 upper bounds), ``bound_offsets`` (F+1),
    ``n_value_bins`` (F,), ``missing_bin`` (F,) = n_value_bins, ``hist_offsets`` (F+1) offsets of
    each feature's bins (value bins + missing bin) in a flat histogram; ``default_bin`` (F,) the
    most frequent bin in the sample, ``default_fraction`` (F,) its share of the sample rows,
    ``missing_count`` (F,) the sample's NaN count, and ``zero_bin`` (F,) the bin of the value 0
    (an implicit zero of a sparse matrix).  Every value bin holds at least ``bin_min_rows`` sample rows
    (where the feature's sample has as many non-missing values): ``min_data_in_bin``, or for None 1 while
    the features' value bins number at most 2^20 in all and at most 64 a sample row, and 3 (LightGBM's
    default) beyond.

    Why None: a bin per distinct value gives the trees every threshold, which small sets use (LightGBM's 3
    made the accuracy panel's emotions, edm, rf1 and Otto worse, four other sets better).  Where the
    histogram holds millions of bins (wide sparse data, each feature's rare values a bin each), or a hundred
    times as many bins as rows (a few hundred rows of hundreds of continuous features), every split moves
    all of them through memory for a handful of rows, and 3 rows a bin makes the histograms two to three
    times smaller (CHANGELOG.md, stops 41 and 61: atp1d's default fit 13 -> 7 s, test loss 0.4043 -> 0.3932).
    """

    def __init__(self, max_bin: int = MAX_VALUE_BINS, sample_cnt: int = 200_000, seed: int = 0,
                 min_data_in_bin: int | None = None):
        if not 2 <= max_bin <= MAX_VALUE_BINS:
            raise ValueError(f"max_bin must be between 2 and {MAX_VALUE_BINS}, got {max_bin}")
        if min_data_in_bin is not None and min_data_in_bin < 1:
            raise ValueError(f"min_data_in_bin must be >= 1, got {min_data_in_bin}")
        self.max_bin = int(max_bin)
        self.min_data_in_bin = min_data_in_bin
        self.categorical = np.zeros(0, np.bool_)  # (F,) after fit: the categorical features
        self.sample_cnt = int(sample_cnt)
        self.seed = int(seed)

    def sample(self, X):
        """The rows of X (dense, or CSR/CSC) that bins are learnt from; of a sparse X as a CSC matrix with
        sorted indices (what ``fit`` and the store layout read: converted once)."""
        rows = sample_rows(X.shape[0], self.sample_cnt, self.seed)
        sample = X if rows is None else X[rows]
        if sp.issparse(sample):
            sample = sp.csc_matrix(sample)
            sample.sort_indices()
        return sample

    def fit(self, X, categorical: np.ndarray | None = None) -> "BinMapper":
        """Learn the bins from X's sample (dense array, or any scipy.sparse matrix: never densified).

        ``categorical`` (F,) bool marks the categorical features (integer codes, NaN missing; see
        data.categories): a bin per category, the max_bin most frequent of the sample's, most frequent
        first, their codes in ``bounds``; a category without a bin falls in the missing bin."""
        rows_sample = self.sample(X)
        n_sample, F = rows_sample.shape
        self.categorical = np.zeros(F, np.bool_) if categorical is None else np.asarray(categorical, np.bool_)
        if self.categorical.any() and sp.issparse(rows_sample):
            raise ValueError("categorical features need dense data (an array or a DataFrame), got a sparse matrix")
        feats, vals, counts, self.missing_count, starts = _distinct_values(rows_sample)
        n_distinct = np.diff(starts)
        # a bin closes after distinct value i where cut_after[i]: after each value of a feature of few
        # distinct values (the usual case for sparse features), for all such features at once; at the
        # quantiles of the others, one by one
        cut_after = np.zeros(feats.size, np.bool_)
        cut_after[:-1] = (n_distinct[feats[:-1]] <= self.max_bin) & (feats[:-1] == feats[1:])
        for f in np.flatnonzero(n_distinct > self.max_bin):
            cut_after[starts[f] + quantile_cuts(counts[starts[f]:starts[f + 1]], self.max_bin)] = True
        self.bin_min_rows = self.min_data_in_bin
        if self.bin_min_rows is None:
            n_value_bins = int(np.count_nonzero(cut_after)) + F
            wide = n_value_bins > min(WIDE_HISTOGRAM_BINS, WIDE_BINS_PER_ROW * n_sample)
            self.bin_min_rows = WIDE_MIN_DATA_IN_BIN if wide else 1
        if self.bin_min_rows > 1:
            pick(keep_filled_cuts, keep_filled_cuts_serial, counts.size)(counts, starts, self.bin_min_rows, cut_after)
        cut = np.flatnonzero(cut_after & ~self.categorical[feats])
        lo, hi = vals[cut], vals[cut + 1]
        mid = lo + (hi - lo) / 2.0
        mid = np.where(mid >= hi, lo, mid)  # neighbours one ulp apart: cut at the lower value
        # the bounds come ordered by feature then value; each feature's last one, +inf, goes after them (a
        # stable sort by feature: a merge of two sorted runs, where sorting by value too took seconds for
        # 20 M bounds); a categorical feature's codes, in bin order, after those
        numeric = np.flatnonzero(~self.categorical)
        cat_feats, cat_codes = self._category_bin_codes(feats, vals, counts, starts)
        bf = np.concatenate([feats[cut], numeric, cat_feats])
        bv = np.concatenate([mid, np.full(numeric.size, np.inf), cat_codes])
        order = np.argsort(bf, kind="stable")
        self._set_bounds(bf[order], bv[order], F)
        self._set_defaults(feats, vals, counts, starts, n_sample)
        return self

    def _category_bin_codes(self, feats: np.ndarray, vals: np.ndarray, counts: np.ndarray, starts: np.ndarray
                       ) -> tuple[np.ndarray, np.ndarray]:
        """(feature, code) of every categorical feature's bins, in bin order: the max_bin categories of most
        sample rows, ties to the smaller code."""
        out_f, out_v = [np.zeros(0, np.int64)], [np.zeros(0)]
        for f in np.flatnonzero(self.categorical):
            codes, n = vals[starts[f]:starts[f + 1]], counts[starts[f]:starts[f + 1]]
            kept = np.lexsort((codes, -n))[:self.max_bin]
            out_f.append(np.full(kept.size, f, np.int64))
            out_v.append(codes[kept])
        return np.concatenate(out_f), np.concatenate(out_v)

    def category_codes(self, feature: int) -> np.ndarray:
        """The codes of a categorical feature's value bins, bin by bin (int64)."""
        return self.bounds[self.bound_offsets[feature]: self.bound_offsets[feature + 1]].astype(np.int64)

    def category_bins(self, feature: int, codes: np.ndarray) -> np.ndarray:
        """The bins (uint8) of a categorical feature's codes (float64, NaN missing): a code without a bin, and NaN, get
        the missing bin."""
        bin_codes = self.bounds[self.bound_offsets[feature]: self.bound_offsets[feature + 1]]
        out = np.full(codes.shape[0], self.missing_bin[feature], dtype=BIN)
        if bin_codes.size:
            order = np.argsort(bin_codes)
            at = np.minimum(np.searchsorted(bin_codes[order], codes), bin_codes.size - 1)
            hit = bin_codes[order][at] == codes  # NaN never equals
            out[hit] = order[at[hit]]
        return out

    def _set_bounds(self, bound_feats: np.ndarray, bounds: np.ndarray, n_features: int) -> None:
        sizes = np.bincount(bound_feats, minlength=n_features).astype(np.int64)
        self.n_value_bins = sizes
        self.bound_offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        self.bounds = bounds.astype(np.float64)
        self.missing_bin = sizes.astype(np.int32)
        self.hist_offsets = np.concatenate([[0], np.cumsum(sizes + 1)]).astype(np.int64)

    def _set_defaults(self, feats: np.ndarray, vals: np.ndarray, counts: np.ndarray, starts: np.ndarray,
                      n_sample: int) -> None:
        """The most frequent bin of every feature (the lowest on ties) and its share of the sample, from the
        sample's distinct values (see _distinct_values)."""
        F = self.n_value_bins.size
        value_bins = self.bin_values(vals, starts)
        per_bin = np.bincount(self.hist_offsets[feats] + value_bins, weights=counts,
                              minlength=self.total_bins)
        per_bin[self.hist_offsets[:-1] + self.missing_bin] += self.missing_count
        starts = self.hist_offsets[:-1]  # every feature has a bin at least (its missing bin)
        most = np.repeat(np.maximum.reduceat(per_bin, starts), self.n_value_bins + 1)
        bin_index = np.arange(per_bin.size)
        first = np.minimum.reduceat(np.where(per_bin == most, bin_index, per_bin.size), starts)
        self.default_bin = (first - starts).astype(np.int32)
        self.default_fraction = per_bin[first] / max(n_sample, 1)
        self.zero_bin = self.bin_values(np.zeros(F), np.arange(F + 1)).astype(np.int32)

    @property
    def n_features(self) -> int:
        return int(self.n_value_bins.size)

    @property
    def total_bins(self) -> int:
        return int(self.hist_offsets[-1])

    def transform(self, X: np.ndarray) -> np.ndarray:
        """Bins of dense X (n, F) as uint8."""
        out = np.empty(X.shape, dtype=BIN)
        if pick(bin_matrix, bin_segments_serial, X.size) is bin_matrix:
            bin_matrix(X, self.bounds, self.bound_offsets, out)
        else:  # small: column by column with the serial kernel that bins the sample's distinct values, so that a
            # first fit compiles one binning kernel, not two (a serial bin_matrix cost 0.4-0.6 compile CPU seconds)
            n, n_features = X.shape
            binned = np.empty(X.size, dtype=BIN)
            bin_segments_serial(np.ascontiguousarray(X.T, dtype=np.float64).reshape(-1),
                                np.arange(n_features + 1, dtype=np.int64) * n, self.bounds, self.bound_offsets, binned)
            out[...] = binned.reshape(n_features, n).T
        for f in np.flatnonzero(self.categorical):  # their bounds are codes in bin order: looked up instead
            out[:, f] = self.category_bins(f, X[:, f])
        return out

    def bin_values(self, values: np.ndarray, indptr: np.ndarray) -> np.ndarray:
        """Bins, as uint8, of values given feature by feature: feature f's are ``values[indptr[f]:indptr[f+1]]``
        (the stored values of a CSC matrix)."""
        out = np.empty(values.shape[0], dtype=BIN)
        values = np.ascontiguousarray(values, dtype=np.float64)
        pick(bin_segments, bin_segments_serial, values.shape[0])(
            values, np.ascontiguousarray(indptr, dtype=np.int64), self.bounds, self.bound_offsets, out)
        for f in np.flatnonzero(self.categorical):
            out[indptr[f]:indptr[f + 1]] = self.category_bins(f, values[indptr[f]:indptr[f + 1]])
        return out

    def threshold(self, feature: int, bin_index: int) -> float:
        """The raw-value threshold of 'bin <= bin_index' (left when x <= threshold) of a numeric feature."""
        if self.categorical[feature]:
            raise ValueError(f"feature {feature} is categorical: its splits are sets of categories, not thresholds")
        return float(self.bounds[self.bound_offsets[feature] + bin_index])


class BinnedEntries:
    """Every feature's bins: a dense matrix of bins (dense X), or the stored entries of a CSC matrix
    as (row, bin), feature f's at ``indptr[f]:indptr[f+1]`` with rows ascending, every other row being
    in the feature's zero bin."""

    def __init__(self, mapper: BinMapper, X):
        self.n_rows = X.shape[0]
        self.sparse = sp.issparse(X)
        if self.sparse:
            C = sp.csc_matrix(X)
            C.sort_indices()
            self.indptr = C.indptr.astype(np.int64)
            self.rows = C.indices
            self.bins = mapper.bin_values(C.data, self.indptr)
        else:
            self.B = mapper.transform(np.ascontiguousarray(X))

    def column(self, f: int, zero_bin: int) -> np.ndarray:
        """All n bins of feature f."""
        if not self.sparse:
            return self.B[:, f]
        col = np.full(self.n_rows, zero_bin, np.uint8)
        lo, hi = self.indptr[f], self.indptr[f + 1]
        col[self.rows[lo:hi]] = self.bins[lo:hi]
        return col

    def nondefault(self, features: np.ndarray, default_bin: np.ndarray):
        """(feature, row, bin) of the rows where each of ``features`` is not at its default bin,
        feature by feature in the order given, rows ascending."""
        if self.sparse:  # the features' slices of the entries, which are grouped by feature
            lo, hi = self.indptr[features], self.indptr[features + 1]
            lengths = hi - lo
            positions = np.arange(lengths.sum()) + np.repeat(lo - (np.cumsum(lengths) - lengths), lengths)
            feats, bins = np.repeat(features, lengths), self.bins[positions]
            keep = bins != default_bin[feats]
            return feats[keep], self.rows[positions[keep]].astype(np.int64), bins[keep]
        B = self.B[:, features]
        cols, rows = np.nonzero((B != default_bin[features]).T)
        return features[cols], rows.astype(np.int64), B[rows, cols]
