"""Which store holds each feature, and exclusive feature bundling (EFB; Ke et al. 2017, Sec. 4).

A feature whose default (most frequent) bin holds at least ``sparse_threshold`` of the sample is
*sparse*: its default bin is never visited row by row (its sums are derived from the node totals).
Features whose default bin holds at least half the sample are bundled greedily (Alg. 3; the
bundled features' default bins are derived as well): in order of their degree in the conflict graph
(the number of sample rows they share with other features' non-default values), or, with many
features, of their non-default counts (the paper's cheaper ordering), each joins a bundle where it
adds at most the conflict budget ``max_conflict_rate * n_sample`` to the bundle's conflicts.
A bundle is stored as one uint8 column of codes (Alg. 4's offsets, as a code table) when it is
dense enough; the members of sparser bundles, and lone sparse features, go to the CSR store.

Bundling never loses a value: a row where two members are non-default (a conflict, which the
budget allows and rows outside the sample may hold) keeps the first member's bin in the bundle
column and the others' in the CSR store, where every kernel looks too.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from ..kernels.bundling import greedy_bundles
from ..kernels.store import FEATURE_BUNDLED, FEATURE_DENSE, FEATURE_SPARSE
from .binning import BinMapper, BinnedEntries

#: a bundle's column of codes is one byte: code 0 means "every member at its default bin"
MAX_BUNDLE_CODES = 255
#: a bundle becomes a column of codes when at least this share of the sample rows is non-default
#: in it; below that, its members' few entries are cheaper in the CSR store (measured, see CHANGELOG.md)
DENSE_BUNDLE_MIN_FRACTION = 0.25
#: features whose default bin holds at least this share of the sample take part in bundling
BUNDLE_MIN_DEFAULT_FRACTION = 0.5
#: degree ordering builds the conflict graph (F x F); beyond this many sparse features the
#: non-default-count ordering is used instead (the paper's choice for many features)
DEGREE_ORDER_MAX_FEATURES = 2000
#: bundles kept open for new members (a ring of bitsets over the sample rows)
OPEN_BUNDLES = 64


class StoreLayout(NamedTuple):
    """Where each feature lives; decided once on the training sample, shared by every data set
    binned with the same bins."""
    kind: np.ndarray          # (F,) int8: FEATURE_DENSE, FEATURE_BUNDLED, FEATURE_SPARSE
    slot: np.ndarray          # (F,) int32: column in the dense or bundle store, -1 for sparse
    dense_features: np.ndarray  # (n_dense,) int32, in column order
    bundles: list             # per bundle column: its member features, in code order
    code_map: np.ndarray      # (n_codes,) int64: global histogram index of each code
    code_offset: np.ndarray   # (n_bundles + 1,) int64
    bin_code: np.ndarray      # (total_bins,) int16: code of a bundled feature's global bin (-1: none)

    @property
    def derived(self) -> np.ndarray:
        """Features whose default-bin sums are derived from node totals."""
        return np.flatnonzero(self.kind != FEATURE_DENSE).astype(np.int32)


def _nondefault_rows(mapper: BinMapper, sample, features: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """CSC-like (indptr over all F features, row ids) of the sample rows where each of ``features``
    (ascending) is not at its default bin (for a sparse sample: stored entries only, the zeros being default)."""
    feats, rows, _ = BinnedEntries(mapper, sample).nondefault(features, mapper.default_bin)
    indptr = np.concatenate([[0], np.cumsum(np.bincount(feats, minlength=mapper.n_features))]).astype(np.int64)
    return indptr, rows


def _degree_order(features: np.ndarray, indptr: np.ndarray, rows: np.ndarray, n_sample: int) -> np.ndarray:
    """Features by descending weighted degree in the conflict graph (ties: more non-default rows first).

    A feature's weighted degree, the rows it shares with each other feature summed over the others, is the
    sum over its non-default rows of the other features non-default there: no feature-by-feature product."""
    nondefault = indptr[features + 1] - indptr[features]
    own_rows = np.concatenate([rows[indptr[f]:indptr[f + 1]] for f in features]) if features.size else rows[:0]
    per_row = np.bincount(own_rows, minlength=n_sample)  # the features non-default in each row
    shared = np.concatenate([[0], np.cumsum(per_row[own_rows] - 1)])
    ends = np.cumsum(nondefault)
    degree = shared[ends] - shared[ends - nondefault]
    return features[np.lexsort((-nondefault, -degree))]


def plan_layout(mapper: BinMapper, sample, enable_sparse: bool = True, enable_bundle: bool = True,
                max_conflict_rate: float = 0.0, sparse_threshold: float = 0.8) -> StoreLayout:
    """Decide each feature's store and the bundles from the binning sample (see the module docstring)."""
    F = mapper.n_features
    n_sample = sample.shape[0]
    sparse_input = sp.issparse(sample)
    # implicit zeros of a sparse matrix must fall in the default bin to stay implicit
    implicit_ok = (mapper.default_bin == mapper.zero_bin) if sparse_input else np.ones(F, np.bool_)
    implicit_ok &= ~mapper.categorical  # a categorical feature is a dense column: its splits are sets of bins
    candidate = (mapper.default_fraction >= sparse_threshold) & implicit_ok & enable_sparse
    kind = np.where(candidate, FEATURE_SPARSE, FEATURE_DENSE).astype(np.int8)
    # bundling considers denser features too (the frequent level of a one-hot categorical is exclusive
    # with the others); the conflict budget keeps features without a dominant bin out anyway
    bundle_features = np.flatnonzero((mapper.default_fraction >= BUNDLE_MIN_DEFAULT_FRACTION) & implicit_ok
                                     & enable_sparse)
    bundles: list[np.ndarray] = []
    if enable_bundle and bundle_features.size > 1:
        sparse_features = bundle_features
        indptr, rows = _nondefault_rows(mapper, sample, sparse_features)
        # every bin but the default; the missing bin only if the sample has NaN (a rare NaN elsewhere
        # goes to the CSR store like a conflict)
        n_codes = mapper.n_value_bins.astype(np.int64) \
            - ((mapper.missing_count == 0) & (mapper.default_bin != mapper.missing_bin))
        if sparse_features.size <= DEGREE_ORDER_MAX_FEATURES:
            order = _degree_order(sparse_features, indptr, rows, n_sample)
        else:
            order = sparse_features[np.argsort(-(indptr[sparse_features + 1] - indptr[sparse_features]),
                                               kind="stable")]
        bundle_of = np.full(F, -1, np.int32)
        bits = np.zeros((OPEN_BUNDLES, (n_sample + 63) // 64), np.uint64)
        n_bundles = greedy_bundles(order.astype(np.int64), indptr, rows, n_codes,
                                   int(max_conflict_rate * n_sample), MAX_BUNDLE_CODES, bits, bundle_of)
        members = [[] for _ in range(n_bundles)]
        for f in order:
            members[bundle_of[f]].append(int(f))
        nondefault = indptr[1:] - indptr[:-1]
        for group in members:
            if len(group) >= 2 and nondefault[group].sum() >= DENSE_BUNDLE_MIN_FRACTION * n_sample:
                bundles.append(np.array(group, np.int32))
    slot = np.full(F, -1, np.int32)
    for group in bundles:
        kind[group] = FEATURE_BUNDLED
    dense_features = np.flatnonzero(kind == FEATURE_DENSE).astype(np.int32)
    slot[dense_features] = np.arange(dense_features.size)
    bin_code = np.full(mapper.total_bins, -1, np.int16)
    code_map, code_offset = [], [0]
    for j, group in enumerate(bundles):
        slot[group] = j
        codes = [int(mapper.hist_offsets[group[0]] + mapper.default_bin[group[0]])]  # code 0: all default
        for f in group:
            for b in range(int(mapper.n_value_bins[f]) + 1):
                is_missing = b == mapper.missing_bin[f]
                if b != mapper.default_bin[f] and (not is_missing or mapper.missing_count[f] > 0):
                    bin_code[mapper.hist_offsets[f] + b] = len(codes)
                    codes.append(int(mapper.hist_offsets[f] + b))
        code_map += codes
        code_offset.append(len(code_map))
    return StoreLayout(kind=kind, slot=slot, dense_features=dense_features, bundles=bundles,
                       code_map=np.array(code_map, np.int64), code_offset=np.array(code_offset, np.int64),
                       bin_code=bin_code)
