"""Binned stores (``kernels/store.py``) built from binned features."""
from __future__ import annotations

import numpy as np

from ..kernels.store import FEATURE_DENSE, BinnedStore


def dense_store(binned: np.ndarray, offsets: np.ndarray, missing_bin: np.ndarray) -> BinnedStore:
    """A store of plain dense columns only, from an (n, F) uint8 bin matrix."""
    n, n_features = binned.shape
    dense = np.ascontiguousarray(binned, dtype=np.uint8)
    empty = np.zeros((n, 0), dtype=np.uint8)
    return BinnedStore(
        dense=dense, dense_cols=np.asfortranarray(dense), dense_base=np.asarray(offsets[:-1], dtype=np.int64),
        bundle=empty, bundle_cols=np.asfortranarray(empty), code_map=np.zeros(0, np.int64),
        code_offset=np.zeros(1, np.int64), sparse_indptr=np.zeros(n + 1, np.int64),
        sparse_bins=np.zeros(0, np.int32), feature_kind=np.full(n_features, FEATURE_DENSE, np.int8),
        feature_slot=np.arange(n_features, dtype=np.int32), default_bin=np.zeros(n_features, np.int32),
        offsets=np.asarray(offsets, dtype=np.int64), missing_bin=np.asarray(missing_bin, dtype=np.int32),
        derived=np.zeros(0, np.int32))
