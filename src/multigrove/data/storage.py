"""Binned stores (``kernels/store.py``) built from dense or sparse X with a ``StoreLayout``.

Nothing here builds an n x n_features array from sparse X: every feature is binned from its stored
values (a CSC column), implicit zeros are the value 0 (never missing), explicit NaN is missing.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..kernels.bundling import fill_bundle_column
from ..kernels.store import (
    FEATURE_DENSE,
    FEATURE_SPARSE,
    ROW_INDEX_MIN_ENTRIES_PER_WORD,
    BinnedStore,
    fill_row_index,
)
from .binning import BinMapper, BinnedEntries
from .bundling import StoreLayout


class _SparseEntries:
    """(feature, row, local bin) entries collected feature by feature, assembled into the CSR store
    (by row) and its by-feature index."""

    def __init__(self):
        self.rows, self.bins, self.feats = [], [], []

    def add(self, feats: np.ndarray, rows: np.ndarray, bins: np.ndarray) -> None:
        if rows.size:
            self.feats.append(np.asarray(feats, np.int64))
            self.rows.append(np.asarray(rows, np.int64))
            self.bins.append(np.asarray(bins, np.uint8))

    def stores(self, n_rows: int, offsets: np.ndarray) -> tuple[np.ndarray, ...]:
        """(CSR indptr, CSR global bins, by-feature indptr, rows, local bins)."""
        F = offsets.size - 1
        if not self.rows:  # no sparse store: an empty indptr (n + 1 int64 would be 8 bytes a row for nothing)
            return (np.zeros(0, np.int64), np.zeros(0, np.int32), np.zeros(F + 1, np.int64),
                    np.zeros(0, np.int32), np.zeros(0, np.uint8))
        rows, bins, feats = np.concatenate(self.rows), np.concatenate(self.bins), np.concatenate(self.feats)
        # entries arrive feature by feature with rows ascending (bundle conflicts first): a stable
        # sort by feature keeps the rows ascending, and timsort is linear on such runs
        by_feature = np.argsort(feats, kind="stable")
        csc_indptr = np.concatenate([[0], np.cumsum(np.bincount(feats, minlength=F))]).astype(np.int64)
        M = sp.csr_matrix((np.ones(rows.size, np.int8), (rows, offsets[feats] + bins)),
                          shape=(n_rows, int(offsets[-1])))
        M.sort_indices()
        return (M.indptr.astype(np.int64), M.indices.astype(np.int32), csc_indptr,
                rows[by_feature].astype(np.int32), bins[by_feature])


def build_store(X, mapper: BinMapper, layout: StoreLayout, row_index: bool = True) -> BinnedStore:
    """Bin X (a dense array or a scipy.sparse matrix) into the stores the layout assigns; with ``row_index``,
    the sparse and bundled features of enough entries get their row index (kernels/store.py; the tests
    build stores without it too, so that the partition's merge of a node's rows with a feature's entries
    stays covered)."""
    n = X.shape[0]
    entries = BinnedEntries(mapper, X)
    offsets = mapper.hist_offsets
    # the column-major copies are C-order transposes: a (1, n) or (0, n) array is C and Fortran contiguous at
    # once, and Numba types such an array C, so that a Fortran (n, 1) copy compiled every kernel again
    dense_cols = np.empty((layout.dense_features.size, n), np.uint8)
    for c, f in enumerate(layout.dense_features):
        dense_cols[c] = entries.column(f, mapper.zero_bin[f])
    sparse = _SparseEntries()
    bundle_cols = np.zeros((len(layout.bundles), n), np.uint8)  # filled column by column
    for j, members in enumerate(layout.bundles):
        feats, rows, bins = entries.nondefault(members, mapper.default_bin)  # members in code order
        fits = np.empty(rows.size, np.bool_)
        fill_bundle_column(rows, layout.bin_code[offsets[feats] + bins].astype(np.int64), bundle_cols[j], fits)
        sparse.add(feats[~fits], rows[~fits], bins[~fits])  # conflicts and uncoded bins
    sparse.add(*entries.nondefault(np.flatnonzero(layout.kind == FEATURE_SPARSE), mapper.default_bin))
    indptr, sparse_bins, csc_indptr, csc_rows, csc_bins = sparse.stores(n, offsets)
    csc_index, csc_words, csc_word_rank = _row_index(csc_indptr, csc_rows, layout.kind, n, row_index)
    return BinnedStore(
        dense=np.ascontiguousarray(dense_cols.T), dense_cols=dense_cols,
        dense_base=offsets[layout.dense_features].astype(np.int64),
        bundle=np.ascontiguousarray(bundle_cols.T), bundle_cols=bundle_cols, code_map=layout.code_map,
        code_offset=layout.code_offset, sparse_indptr=indptr, sparse_bins=sparse_bins, csc_indptr=csc_indptr,
        csc_rows=csc_rows, csc_bins=csc_bins, feature_kind=layout.kind, feature_slot=layout.slot,
        default_bin=mapper.default_bin.astype(np.int32), offsets=offsets.astype(np.int64),
        missing_bin=mapper.missing_bin.astype(np.int32), derived=layout.derived, csc_index=csc_index,
        csc_words=csc_words, csc_word_rank=csc_word_rank)


def _row_index(csc_indptr: np.ndarray, csc_rows: np.ndarray, kind: np.ndarray, n_rows: int,
               wanted: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(csc_index, csc_words, csc_word_rank): the row index of every sparse or bundled feature with at least
    ROW_INDEX_MIN_ENTRIES_PER_WORD entries per 64 rows (none unless ``wanted``)."""
    n_words = (n_rows + 63) // 64
    entries = np.diff(csc_indptr)
    indexed = wanted & (kind != FEATURE_DENSE) & (entries > 0) & (entries >= ROW_INDEX_MIN_ENTRIES_PER_WORD * n_words)
    csc_index = np.full(kind.shape[0], -1, np.int32)
    csc_index[indexed] = np.arange(int(indexed.sum()), dtype=np.int32)
    words = np.empty((int(indexed.sum()), n_words), np.uint64)
    ranks = np.empty(words.shape, np.int32)
    if words.shape[0]:  # a store without indexed features does not compile the kernel (a first fit's seconds)
        fill_row_index(csc_indptr, csc_rows, csc_index, words, ranks)
    return csc_index, words, ranks


def dense_layout(mapper: BinMapper) -> StoreLayout:
    """Every feature a plain dense column (no sparse store, no bundles)."""
    F = mapper.n_features
    return StoreLayout(kind=np.full(F, FEATURE_DENSE, np.int8), slot=np.arange(F, dtype=np.int32),
                       dense_features=np.arange(F, dtype=np.int32), bundles=[], code_map=np.zeros(0, np.int64),
                       code_offset=np.zeros(1, np.int64), bin_code=np.full(mapper.total_bins, -1, np.int16))


def dense_store(binned: np.ndarray, offsets: np.ndarray, missing_bin: np.ndarray) -> BinnedStore:
    """A store of plain dense columns only, from an (n, F) uint8 bin matrix (tests, tools)."""
    n, n_features = binned.shape
    dense = np.ascontiguousarray(binned, dtype=np.uint8)
    return BinnedStore(
        dense=dense, dense_cols=np.ascontiguousarray(dense.T), dense_base=np.asarray(offsets[:-1], dtype=np.int64),
        bundle=np.zeros((n, 0), np.uint8), bundle_cols=np.zeros((0, n), np.uint8), code_map=np.zeros(0, np.int64),
        code_offset=np.zeros(1, np.int64), sparse_indptr=np.zeros(0, np.int64),
        sparse_bins=np.zeros(0, np.int32), csc_indptr=np.zeros(n_features + 1, np.int64),
        csc_rows=np.zeros(0, np.int32), csc_bins=np.zeros(0, np.uint8),
        feature_kind=np.full(n_features, FEATURE_DENSE, np.int8),
        feature_slot=np.arange(n_features, dtype=np.int32), default_bin=np.zeros(n_features, np.int32),
        offsets=np.asarray(offsets, dtype=np.int64), missing_bin=np.asarray(missing_bin, dtype=np.int32),
        derived=np.zeros(0, np.int32), csc_index=np.full(n_features, -1, np.int32),
        csc_words=np.zeros((0, (n + 63) // 64), np.uint64), csc_word_rank=np.zeros((0, (n + 63) // 64), np.int32))
