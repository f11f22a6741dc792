"""Ordered target statistics: numeric features for categorical features of many categories (CatBoost's).

A set split sees a categorical feature through its bins, at most ``max_bin`` of them: the most frequent
categories; the thousands of others share the missing bin.  A target statistic gives every category a
number instead, the smoothed mean of the training targets of its rows,

    TS_j(c) = (sum of t_j over the rows of category c + prior_weight * prior_j) / (rows of c + prior_weight),

one per *target column* t_j: a regression target (standardized), a label, or a class indicator.  On the
training rows a row may not see its own target, or the feature leaks it: rows are visited in a random
permutation and each row's statistic counts only the rows of its category before it (ordered target
statistics, Prokhorenkova et al. 2018).  Every other data set (validation, prediction) uses the sums of all
training rows; a category the training data did not have, or a missing value, gets the prior.

The encoded feature's statistics are appended to the features (the feature itself stays, for the set
splits of its frequent categories); ``encode`` makes the same columns for any data set, from codes.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

#: target columns of the statistics at most: a statistic per column of more outputs would outnumber the features
#: (983 labels); such models split their categorical features on sets only
MAX_COLUMNS = 16
#: the weight of the prior (CatBoost's default of 1: one pseudo-row of the prior)
PRIOR_WEIGHT = 1.0


class TargetStatistics(NamedTuple):
    """The fitted statistics of the encoded features: what ``encode`` needs, and what the model file holds."""
    features: tuple          # the encoded categorical features (indices of the input features)
    prior: np.ndarray        # (k,): the mean of each target column
    codes: tuple             # per feature: (categories,) float64, ascending: the codes of the categories seen
    sums: tuple              # per feature: (categories, k) float64 sums of the target columns over its rows
    counts: tuple            # per feature: (categories, k) float64 rows of each category with each target given
    column_names: tuple      # the k target columns' names (for the appended features' names)

    @property
    def width(self) -> int:
        return int(self.prior.shape[0])

    def names(self, feature_names: list[str]) -> list[str]:
        """The names of the appended features: "<feature>:ts:<target column>"."""
        return [f"{feature_names[f]}:ts:{column}" for f in self.features for column in self.column_names]

    def encode(self, X: np.ndarray) -> np.ndarray:
        """X (n, F) with the statistics of all training rows appended, (n, F + len(features) * k)."""
        parts = [X]
        for f, codes, sums, counts in zip(self.features, self.codes, self.sums, self.counts):
            parts.append(_full_statistics(X[:, f], codes, sums, counts, self.prior))
        return np.hstack(parts) if len(parts) > 1 else X

    def fold(self, values: np.ndarray, n_input: int, axis: int) -> np.ndarray:
        """Per-feature values of the encoded features (importances, SHAP values along ``axis``) folded back: each
        appended statistic's value added to its categorical feature's; the first n_input entries remain."""
        values = np.moveaxis(np.asarray(values, dtype=np.float64), axis, 0).copy()
        k = self.width
        for i, f in enumerate(self.features):
            values[f] += values[n_input + i * k: n_input + (i + 1) * k].sum(axis=0)
        kept = np.concatenate([values[:n_input], values[n_input + len(self.features) * k:]])
        return np.moveaxis(kept, 0, axis)

    def to_json(self) -> dict:
        return {"features": list(self.features), "prior": self.prior.tolist(),
                "codes": [c.tolist() for c in self.codes], "sums": [s.tolist() for s in self.sums],
                "counts": [c.tolist() for c in self.counts], "column_names": list(self.column_names)}

    @classmethod
    def from_json(cls, data, n_features: int, where: str = "model") -> "TargetStatistics | None":
        if data is None:
            return None
        try:
            features = tuple(int(f) for f in data["features"])
            prior = np.asarray(data["prior"], dtype=np.float64).reshape(-1)
            codes = tuple(np.asarray(c, dtype=np.float64).reshape(-1) for c in data["codes"])
            sums = tuple(np.asarray(s, dtype=np.float64).reshape(-1, prior.size) for s in data["sums"])
            counts = tuple(np.asarray(c, dtype=np.float64).reshape(-1, prior.size) for c in data["counts"])
            names = tuple(str(n) for n in data["column_names"])
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"{where}: 'target_statistics' is malformed ({exc})") from None
        if not (len(features) == len(codes) == len(sums) == len(counts)) or len(names) != prior.size \
                or any(not (s.shape[0] == c.shape[0] == v.shape[0]) for v, s, c in zip(codes, sums, counts)) \
                or any(np.any(np.diff(v) <= 0) for v in codes) \
                or any(not 0 <= f < n_features for f in features) or not np.all(np.isfinite(prior)):
            raise ValueError(f"{where}: 'target_statistics' does not agree with itself or with the features")
        return cls(features, prior, codes, sums, counts, names)


def statistics_features(encoding: str, categories: dict, targets: tuple | None) -> list[int]:
    """The categorical features encoded by statistics: every one for "statistics", none for "sets" and "auto"
    (Params.cat_encoding says why) or without targets.  More than MAX_COLUMNS target columns: an error."""
    if encoding != "statistics" or targets is None or not categories:
        return []
    k = targets[0].shape[1]
    if k > MAX_COLUMNS:
        raise ValueError(f"cat_encoding='statistics' makes a feature per target column, at most {MAX_COLUMNS}; "
                         f"this model has {k}: use cat_encoding='sets' (or 'auto')")
    return list(categories)


def _full_statistics(values: np.ndarray, codes: np.ndarray, sums: np.ndarray, counts: np.ndarray,
                     prior: np.ndarray) -> np.ndarray:
    """(n, k) statistics of all training rows for these values (codes); the prior for a missing or unseen one."""
    out = np.tile(prior, (values.shape[0], 1))
    if codes.size == 0:
        return out
    at = np.minimum(np.searchsorted(codes, values), codes.size - 1)
    rows = np.flatnonzero(codes[at] == values)  # NaN never equals
    c = at[rows]
    out[rows] = (sums[c] + PRIOR_WEIGHT * prior) / (counts[c] + PRIOR_WEIGHT)
    return out


def fit_statistics(X: np.ndarray, features: list[int], targets: np.ndarray, column_names: list[str], seed: int
                   ) -> tuple[TargetStatistics, np.ndarray]:
    """(the statistics of ``features``, X with the training rows' ordered statistics appended).

    ``targets`` (n, k): the target columns (NaN: the row's target is missing and counts for none of them);
    categories are the features' codes (NaN missing)."""
    n, k = targets.shape
    given = ~np.isnan(targets)
    prior = np.where(given, targets, 0.0).sum(0) / np.maximum(given.sum(0), 1)
    order = np.random.default_rng((seed, 5)).permutation(n)
    parts, all_codes, all_sums, all_counts = [X], [], [], []
    for f in features:
        values = X[:, f]
        known = ~np.isnan(values)
        seen, index = np.unique(values[known], return_inverse=True)
        code_index = np.full(n, -1, np.int64)
        code_index[known] = index
        n_codes = seen.size
        ordered = np.tile(prior, (n, 1))
        rows = order[known[order]]  # the permutation's rows with a category
        c = code_index[rows]
        t = np.where(given[rows], targets[rows], 0.0)
        w = given[rows].astype(np.float64)
        before_sums, before_counts = _running_sums(c, t, n_codes), _running_sums(c, w, n_codes)
        ordered[rows] = (before_sums + PRIOR_WEIGHT * prior) / (before_counts + PRIOR_WEIGHT)
        sums, counts = np.zeros((n_codes, k)), np.zeros((n_codes, k))
        np.add.at(sums, c, t)
        np.add.at(counts, c, w)
        parts.append(ordered)
        all_codes.append(seen.astype(np.float64))
        all_sums.append(sums)
        all_counts.append(counts)
    stats = TargetStatistics(tuple(int(f) for f in features), prior, tuple(all_codes), tuple(all_sums),
                             tuple(all_counts), tuple(column_names))
    return stats, np.hstack(parts)


def _running_sums(codes: np.ndarray, values: np.ndarray, n_codes: int) -> np.ndarray:
    """For each position i of a sequence of (code, value row): the sum of the value rows of the same code at
    positions before i (a stable sort by code keeps the order within a code; then sums within codes)."""
    order = np.argsort(codes, kind="stable")
    sorted_values = values[order]
    inclusive = np.cumsum(sorted_values, axis=0)
    first = np.searchsorted(codes[order], np.arange(n_codes))[codes[order]]  # each position's code's first one
    before_code = np.concatenate([np.zeros((1, values.shape[1])), inclusive])[first]
    out = np.empty_like(values)
    out[order] = inclusive - sorted_values - before_code
    return out
