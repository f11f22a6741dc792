"""Binned stores (``kernels/store.py``) built from dense or sparse X with a ``StoreLayout``.

Nothing here builds an n x n_features array from sparse X: every feature is binned from its stored
values (a CSC column), implicit zeros are the value 0 (never missing), explicit NaN is missing.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..kernels.store import FEATURE_DENSE, FEATURE_SPARSE, BinnedStore
from .binning import BinMapper
from .bundling import StoreLayout


def _feature_bins(mapper: BinMapper, X, f: int) -> tuple[np.ndarray | None, np.ndarray, np.ndarray]:
    """(all n bins of f or None, rows, bins) of feature f: for dense X the whole column; for CSC X the
    stored entries (rows, bins), every other row being in the zero bin."""
    if sp.issparse(X):
        lo, hi = X.indptr[f], X.indptr[f + 1]
        return None, X.indices[lo:hi].astype(np.int64), mapper.bin_values(X.data[lo:hi], np.full(hi - lo, f))
    col = X[:, f]
    return col, np.arange(col.shape[0]), col


class _SparseEntries:
    """(row, feature, local bin) entries collected feature by feature, assembled into the CSR store
    (by row) and its by-feature index."""

    def __init__(self, n_features: int):
        self.rows, self.bins, self.features = [], [], []
        self.counts = np.zeros(n_features, np.int64)

    def add(self, f: int, rows: np.ndarray, bins: np.ndarray) -> None:
        if rows.size:
            self.rows.append(np.asarray(rows, np.int64))
            self.bins.append(np.asarray(bins, np.uint8))
            self.features.append(np.full(rows.size, f, np.int64))
            self.counts[f] += rows.size

    def stores(self, n_rows: int, offsets: np.ndarray) -> tuple[np.ndarray, ...]:
        """(CSR indptr, CSR global bins, by-feature indptr, rows, local bins)."""
        csc_indptr = np.concatenate([[0], np.cumsum(self.counts)]).astype(np.int64)
        if not self.rows:
            return np.zeros(n_rows + 1, np.int64), np.zeros(0, np.int32), csc_indptr, np.zeros(0, np.int32), \
                np.zeros(0, np.uint8)
        rows, bins, feats = np.concatenate(self.rows), np.concatenate(self.bins), np.concatenate(self.features)
        by_feature = np.lexsort((rows, feats))  # features ascending, rows ascending within each
        global_bins = offsets[feats] + bins
        M = sp.csr_matrix((np.ones(rows.size, np.int8), (rows, global_bins)), shape=(n_rows, int(offsets[-1])))
        M.sort_indices()
        return (M.indptr.astype(np.int64), M.indices.astype(np.int32), csc_indptr,
                rows[by_feature].astype(np.int32), bins[by_feature])


def build_store(X, mapper: BinMapper, layout: StoreLayout) -> BinnedStore:
    """Bin X (a dense array or a scipy.sparse matrix) into the stores the layout assigns."""
    n = X.shape[0]
    if sp.issparse(X):
        B = sp.csc_matrix(X)
        B.sort_indices()
    else:
        B = mapper.transform(X)
    offsets = mapper.hist_offsets
    dense = np.empty((n, layout.dense_features.size), np.uint8)
    for c, f in enumerate(layout.dense_features):
        col, rows, bins = _feature_bins(mapper, B, f)
        if col is None:
            dense[:, c] = mapper.zero_bin[f]
            dense[rows, c] = bins
        else:
            dense[:, c] = col
    entries = _SparseEntries(mapper.n_features)
    bundle = np.zeros((n, len(layout.bundles)), np.uint8)
    for j, members in enumerate(layout.bundles):
        column = bundle[:, j]
        for f in members:
            _, rows, bins = _feature_bins(mapper, B, f)
            keep = bins != mapper.default_bin[f]
            rows, bins = rows[keep], bins[keep].astype(np.int64)
            codes = layout.bin_code[offsets[f] + bins]
            fits = (codes > 0) & (column[rows] == 0)
            column[rows[fits]] = codes[fits]
            entries.add(f, rows[~fits], bins[~fits])  # conflicts and uncoded bins: the sparse store
    for f in np.flatnonzero(layout.kind == FEATURE_SPARSE):
        _, rows, bins = _feature_bins(mapper, B, f)
        keep = bins != mapper.default_bin[f]
        entries.add(f, rows[keep], bins[keep])
    indptr, sparse_bins, csc_indptr, csc_rows, csc_bins = entries.stores(n, offsets)
    return BinnedStore(
        dense=dense, dense_cols=np.asfortranarray(dense), dense_base=offsets[layout.dense_features].astype(np.int64),
        bundle=bundle, bundle_cols=np.asfortranarray(bundle), code_map=layout.code_map,
        code_offset=layout.code_offset, sparse_indptr=indptr, sparse_bins=sparse_bins, csc_indptr=csc_indptr,
        csc_rows=csc_rows, csc_bins=csc_bins, feature_kind=layout.kind, feature_slot=layout.slot, default_bin=mapper.default_bin.astype(np.int32),
        offsets=offsets.astype(np.int64), missing_bin=mapper.missing_bin.astype(np.int32), derived=layout.derived)


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
    empty = np.zeros((n, 0), dtype=np.uint8)
    return BinnedStore(
        dense=dense, dense_cols=np.asfortranarray(dense), dense_base=np.asarray(offsets[:-1], dtype=np.int64),
        bundle=empty, bundle_cols=np.asfortranarray(empty), code_map=np.zeros(0, np.int64),
        code_offset=np.zeros(1, np.int64), sparse_indptr=np.zeros(n + 1, np.int64),
        sparse_bins=np.zeros(0, np.int32), csc_indptr=np.zeros(n_features + 1, np.int64),
        csc_rows=np.zeros(0, np.int32), csc_bins=np.zeros(0, np.uint8),
        feature_kind=np.full(n_features, FEATURE_DENSE, np.int8),
        feature_slot=np.arange(n_features, dtype=np.int32), default_bin=np.zeros(n_features, np.int32),
        offsets=np.asarray(offsets, dtype=np.int64), missing_bin=np.asarray(missing_bin, dtype=np.int32),
        derived=np.zeros(0, np.int32))
