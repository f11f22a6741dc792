"""Quantile binning of raw features (LightGBM's histogram input), from dense or sparse X."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .._dtypes import BIN, MAX_VALUE_BINS
from ..kernels.binning import bin_entries, bin_matrix


def feature_bounds(distinct: np.ndarray, counts: np.ndarray, max_bin: int) -> np.ndarray:
    """Ascending upper bounds of the value bins of one feature, the last one +inf.

    ``distinct`` are the ascending distinct non-missing sample values, ``counts`` how often each
    occurs.  With at most ``max_bin`` distinct values each gets its own bin (bounds halfway
    between neighbours); otherwise bins hold about equal numbers of sample rows, always cut
    between two distinct values so that a heavy value never straddles two bins.
    """
    if distinct.size <= 1:
        return np.array([np.inf])
    if distinct.size <= max_bin:
        cut = np.arange(distinct.size - 1)
    else:
        cum = np.cumsum(counts)
        targets = cum[-1] * np.arange(1, max_bin) / max_bin
        cut = np.unique(np.searchsorted(cum, targets, side="left"))
        cut = cut[cut < distinct.size - 1]
    lo, hi = distinct[cut], distinct[cut + 1]
    mid = lo + (hi - lo) / 2.0
    mid = np.where(mid >= hi, lo, mid)  # neighbours one ulp apart: cut at the lower value
    return np.append(mid, np.inf)


def sample_rows(n_rows: int, sample_cnt: int, seed: int) -> np.ndarray | None:
    """Sorted row ids of the binning sample, or None for every row."""
    if n_rows <= sample_cnt:
        return None
    return np.sort(np.random.default_rng(seed).choice(n_rows, sample_cnt, replace=False))


def _column_values(X, f: int) -> tuple[np.ndarray, int]:
    """(stored values of column f, number of implicit zeros) of a dense array or a CSC matrix."""
    if sp.issparse(X):
        vals = X.data[X.indptr[f]:X.indptr[f + 1]]
        return np.asarray(vals, dtype=np.float64), X.shape[0] - vals.size
    return np.asarray(X[:, f], dtype=np.float64), 0


class BinMapper:
    """Per-feature quantile bins learnt on a row sample; NaN gets each feature's last bin.

    Attributes after ``fit``: ``bounds`` (flat float64 upper bounds), ``bound_offsets`` (F+1),
    ``n_value_bins`` (F,), ``missing_bin`` (F,) = n_value_bins, ``hist_offsets`` (F+1) offsets of
    each feature's bins (value bins + missing bin) in a flat histogram; ``default_bin`` (F,) the
    most frequent bin in the sample, ``default_fraction`` (F,) its share of the sample rows,
    ``missing_count`` (F,) the sample's NaN count, and ``zero_bin`` (F,) the bin of the value 0
    (an implicit zero of a sparse matrix).
    """

    def __init__(self, max_bin: int = MAX_VALUE_BINS, sample_cnt: int = 200_000, seed: int = 0):
        if not 2 <= max_bin <= MAX_VALUE_BINS:
            raise ValueError(f"max_bin must be between 2 and {MAX_VALUE_BINS}, got {max_bin}")
        self.max_bin = int(max_bin)
        self.sample_cnt = int(sample_cnt)
        self.seed = int(seed)

    def sample(self, X):
        """The rows of X (dense, or CSR/CSC) that bins are learnt from."""
        rows = sample_rows(X.shape[0], self.sample_cnt, self.seed)
        if rows is None:
            return X
        return X[rows]

    def fit(self, X) -> "BinMapper":
        """Learn the bins from X's sample (dense array, or any scipy.sparse matrix: never densified)."""
        S = self.sample(X)
        if sp.issparse(S):
            S = sp.csc_matrix(S)
        n_sample = S.shape[0]
        per_feature, value_counts = [], []
        for f in range(S.shape[1]):
            vals, n_zero = _column_values(S, f)
            finite = vals[~np.isnan(vals)]
            distinct, counts = np.unique(finite, return_counts=True)
            if n_zero:
                at = np.searchsorted(distinct, 0.0)
                if at < distinct.size and distinct[at] == 0.0:
                    counts[at] += n_zero
                else:
                    distinct, counts = np.insert(distinct, at, 0.0), np.insert(counts, at, n_zero)
            per_feature.append(feature_bounds(distinct, counts, self.max_bin))
            value_counts.append((distinct, counts, vals.size - finite.size))
        self._set_bounds(per_feature)
        self._set_defaults(value_counts, n_sample)
        return self

    def _set_bounds(self, per_feature: list[np.ndarray]) -> None:
        sizes = np.array([b.size for b in per_feature], dtype=np.int64)
        self.n_value_bins = sizes
        self.bound_offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        self.bounds = np.concatenate(per_feature).astype(np.float64) if per_feature else np.zeros(0)
        self.missing_bin = sizes.astype(np.int32)
        self.hist_offsets = np.concatenate([[0], np.cumsum(sizes + 1)]).astype(np.int64)

    def _set_defaults(self, value_counts: list, n_sample: int) -> None:
        """The most frequent bin of every feature and its share of the sample."""
        F = len(value_counts)
        self.default_bin = np.zeros(F, np.int32)
        self.default_fraction = np.zeros(F, np.float64)
        self.missing_count = np.array([vc[2] for vc in value_counts], np.int64)
        self.zero_bin = self.bin_values(np.zeros(F), np.arange(F)).astype(np.int32)
        for f, (distinct, counts, n_missing) in enumerate(value_counts):
            per_bin = np.bincount(self.bin_values(distinct, np.full(distinct.size, f)), weights=counts,
                                  minlength=int(self.n_value_bins[f]) + 1)
            per_bin[self.missing_bin[f]] += n_missing
            self.default_bin[f] = int(np.argmax(per_bin))
            self.default_fraction[f] = per_bin[self.default_bin[f]] / max(n_sample, 1)

    @property
    def n_features(self) -> int:
        return int(self.n_value_bins.size)

    @property
    def total_bins(self) -> int:
        return int(self.hist_offsets[-1])

    def transform(self, X: np.ndarray) -> np.ndarray:
        """Bins of dense X (n, F) as uint8."""
        out = np.empty(X.shape, dtype=BIN)
        bin_matrix(X, self.bounds, self.bound_offsets, out)
        return out

    def bin_values(self, values: np.ndarray, features: np.ndarray) -> np.ndarray:
        """Bins of (value, feature) pairs, as uint8."""
        out = np.empty(values.shape[0], dtype=BIN)
        bin_entries(np.ascontiguousarray(values, dtype=np.float64), np.ascontiguousarray(features, dtype=np.int64),
                    self.bounds, self.bound_offsets, out)
        return out

    def threshold(self, feature: int, bin_index: int) -> float:
        """The raw-value threshold of 'bin <= bin_index' (left when x <= threshold)."""
        return float(self.bounds[self.bound_offsets[feature] + bin_index])
