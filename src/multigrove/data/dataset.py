"""Dataset: features binned once, labels and weights checked once, reused across rounds."""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from .._validation import check_features, check_label, check_weight
from .binning import BinMapper
from .storage import dense_store


class Dataset:
    """Training or validation data for :func:`multigrove.train`.

    Parameters
    ----------
    data : array-like or pandas DataFrame, shape (n_rows, n_features)
        Numeric features; NaN marks a missing value.
    label : array-like, shape (n_rows,) or (n_rows, n_outputs), optional
        Targets: values (regression), 0/1 (binary), class ids 0..K-1 (multiclass) or a 0/1
        indicator matrix (multilabel).  Required for training and validation sets.
    weight : array-like, shape (n_rows,), optional
        Non-negative row weights.
    reference : Dataset, optional
        A validation set passes its training set here and reuses its bins.
    params : dict, optional
        Binning parameters (``max_bin``, ``bin_construct_sample_cnt``, ``seed``); by default
        those given to ``train``.

    Binning is lazy: it happens at :meth:`construct`, which ``train`` calls.
    """

    def __init__(self, data: Any, label: Any = None, weight: Any = None,
                 reference: "Dataset | None" = None, feature_names: list[str] | None = None,
                 params: Mapping[str, Any] | None = None):
        X, names = check_features(data, name="data")
        self.data = X
        self.n_rows, self.n_features = X.shape
        self.label = None if label is None else check_label(label, self.n_rows)
        self.weight = check_weight(weight, self.n_rows)
        if reference is not None and not isinstance(reference, Dataset):
            raise TypeError(f"reference must be a Dataset, got {type(reference).__name__}")
        if reference is not None and reference.n_features != self.n_features:
            raise ValueError(f"data has {self.n_features} features but the reference Dataset has "
                             f"{reference.n_features}: a validation set must have the training set's features")
        self.reference = reference
        if feature_names is not None:
            names = [str(n) for n in feature_names]
            if len(names) != self.n_features:
                raise ValueError(f"feature_names has {len(names)} names for {self.n_features} features")
        self.feature_names = names or [f"f{i}" for i in range(self.n_features)]
        self.params = dict(params or {})
        self.bin_mapper: BinMapper | None = None
        self.store = None  # the binned features (kernels.store.BinnedStore), after construct()

    def construct(self, max_bin: int = 255, sample_cnt: int = 200_000, seed: int = 0) -> "Dataset":
        """Bin the features (once); a Dataset with a reference uses the reference's bins."""
        if self.store is not None:
            return self
        if self.reference is not None:
            self.reference.construct(max_bin, sample_cnt, seed)
            self.bin_mapper = self.reference.bin_mapper
        else:
            max_bin = int(self.params.get("max_bin", max_bin))
            sample_cnt = int(self.params.get("bin_construct_sample_cnt", sample_cnt))
            seed = int(self.params.get("seed", seed))
            self.bin_mapper = BinMapper(max_bin, sample_cnt, seed).fit(self.data)
        m = self.bin_mapper
        self.store = dense_store(m.transform(self.data), m.hist_offsets, m.missing_bin)
        return self

    def num_data(self) -> int:
        return self.n_rows

    def num_feature(self) -> int:
        return self.n_features

    def get_label(self) -> np.ndarray | None:
        return self.label

    def get_weight(self) -> np.ndarray | None:
        return self.weight
