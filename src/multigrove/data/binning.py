"""Quantile binning of raw features (LightGBM's histogram input)."""
from __future__ import annotations

import numpy as np

from .._dtypes import BIN, MAX_VALUE_BINS
from ..kernels.binning import bin_matrix


def feature_bounds(values: np.ndarray, max_bin: int) -> np.ndarray:
    """Ascending upper bounds of the value bins of one feature, the last one +inf.

    ``values`` are the non-missing sample values.  With at most ``max_bin`` distinct values
    each gets its own bin (bounds halfway between neighbours); otherwise bins hold about equal
    numbers of sample rows, always cut between two distinct values so that a heavy value never
    straddles two bins.
    """
    distinct, counts = np.unique(values, return_counts=True)
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


class BinMapper:
    """Per-feature quantile bins learnt on a row sample; NaN gets each feature's last bin.

    Attributes after ``fit``: ``bounds`` (flat float64 upper bounds), ``bound_offsets`` (F+1),
    ``n_value_bins`` (F,), ``missing_bin`` (F,) = n_value_bins, ``hist_offsets`` (F+1) offsets of
    each feature's bins (value bins + missing bin) in a flat histogram.
    """

    def __init__(self, max_bin: int = MAX_VALUE_BINS, sample_cnt: int = 200_000, seed: int = 0):
        if not 2 <= max_bin <= MAX_VALUE_BINS:
            raise ValueError(f"max_bin must be between 2 and {MAX_VALUE_BINS}, got {max_bin}")
        self.max_bin = int(max_bin)
        self.sample_cnt = int(sample_cnt)
        self.seed = int(seed)

    def fit(self, X: np.ndarray) -> "BinMapper":
        n = X.shape[0]
        if n > self.sample_cnt:
            rng = np.random.default_rng(self.seed)
            sample = X[np.sort(rng.choice(n, self.sample_cnt, replace=False))]
        else:
            sample = X
        per_feature = []
        for f in range(X.shape[1]):
            col = np.asarray(sample[:, f], dtype=np.float64)
            per_feature.append(feature_bounds(col[~np.isnan(col)], self.max_bin))
        self._set_bounds(per_feature)
        return self

    def _set_bounds(self, per_feature: list[np.ndarray]) -> None:
        sizes = np.array([b.size for b in per_feature], dtype=np.int64)
        self.n_value_bins = sizes
        self.bound_offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        self.bounds = np.concatenate(per_feature).astype(np.float64)
        self.missing_bin = sizes.astype(np.int32)
        self.hist_offsets = np.concatenate([[0], np.cumsum(sizes + 1)]).astype(np.int64)

    @property
    def n_features(self) -> int:
        return int(self.n_value_bins.size)

    @property
    def total_bins(self) -> int:
        return int(self.hist_offsets[-1])

    def transform(self, X: np.ndarray) -> np.ndarray:
        out = np.empty(X.shape, dtype=BIN)
        bin_matrix(X, self.bounds, self.bound_offsets, out)
        return out

    def threshold(self, feature: int, bin_index: int) -> float:
        """The raw-value threshold of 'bin <= bin_index' (left when x <= threshold)."""
        return float(self.bounds[self.bound_offsets[feature] + bin_index])
