"""Dataset: features binned once, labels and weights checked once, reused across rounds."""
from __future__ import annotations

import warnings
from typing import Any, Mapping

import numpy as np
import scipy.sparse as sp

from .._validation import check_features, check_init_score, check_label, check_weight, default_feature_names
from ..params import DATASET_PARAMS, MultigroveWarning, Params
from .binning import BinMapper
from .bundling import plan_layout
from .storage import build_store


def dataset_params(params: Mapping[str, Any] | None) -> dict:
    """The binning parameters given to a Dataset, validated (aliases resolved, unknown names and
    training-only parameters refused)."""
    if not params:
        return {}
    config = Params.from_dict(params)
    other = sorted(config.given - set(DATASET_PARAMS))
    if other:
        raise ValueError(f"Dataset(params=...) takes binning parameters {DATASET_PARAMS}; '{other[0]}' is a "
                         "training parameter: pass it to train()")
    return {name: getattr(config, name) for name in config.given}


class Dataset:
    """Training or validation data for :func:`multigrove.train`.

    Parameters
    ----------
    data : array-like, pandas DataFrame or scipy.sparse matrix, shape (n_rows, n_features)
        Numeric features.  NaN marks a missing value; in a sparse matrix an implicit zero is the
        value 0.  Sparse data are never densified: binning reads the stored values only.
    label : array-like, shape (n_rows,) or (n_rows, n_outputs), optional
        Targets: values (regression), 0/1 (binary), class ids 0..K-1 (multiclass) or a 0/1
        indicator matrix (multilabel).  Required for training and validation sets.
    weight : array-like, shape (n_rows,), optional
        Non-negative row weights.
    init_score : array-like, shape (n_rows,) or (n_rows, n_outputs), optional
        Raw scores the boosting starts from, row by row (an offset, or another model's raw predictions:
        log-odds, class logits, values), instead of the objective's best constant.  The trees learn what
        they leave; the model does not hold them, so add them to ``predict(X, raw_score=True)`` yourself.
        A validation set's own are used for its metrics.
    reference : Dataset, optional
        A validation set passes its training set here and reuses its bins and feature layout.
    feature_names : list of str, optional
    params : dict, optional
        Binning parameters (``max_bin``, ``min_data_in_bin``, ``bin_construct_sample_cnt``, ``seed``,
        ``enable_bundle``, ``max_conflict_rate``, ``is_enable_sparse``, ``sparse_threshold`` or their
        aliases); those not given here are taken from the parameters passed to ``train``.

    Binning is lazy: it happens at :meth:`construct`, which ``train`` calls.  The raw features are
    released afterwards (the binned store is all training needs).

    Attributes
    ----------
    bin_mapper : BinMapper
        The bins of every feature (shared with the validation sets that reference this Dataset).
    layout : StoreLayout
        Which store holds each feature: dense column, exclusive feature bundle, or sparse rows.
    store : BinnedStore
        The binned features, as the kernels read them.
    binning : dict
        The binning parameter values the store was built with.
    """

    def __init__(self, data: Any, label: Any = None, weight: Any = None,
                 reference: "Dataset | None" = None, feature_names: list[str] | None = None,
                 params: Mapping[str, Any] | None = None, init_score: Any = None):
        reference_names = reference.feature_names if isinstance(reference, Dataset) else None
        X, names = check_features(data, name="data", expected_by="the reference Dataset",
                                  expected_names=reference_names)
        self.data = X
        self.n_rows, self.n_features = X.shape
        self.label = None if label is None else check_label(label, self.n_rows)
        self.weight = check_weight(weight, self.n_rows)
        self.init_score = check_init_score(init_score, self.n_rows)
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
        self.feature_names = names or default_feature_names(self.n_features)
        self.params = dataset_params(params)
        self.bin_mapper: BinMapper | None = None
        self.layout = None
        self.store = None
        self.binning: dict | None = None

    @property
    def is_sparse(self) -> bool:
        return sp.issparse(self.data)

    @staticmethod
    def _train_value(params: Params, name: str, n_outputs: int):
        if name == "sparse_threshold":
            return params.sparse_threshold_for(n_outputs)
        return getattr(params, name)

    def _binning_values(self, params: Params, n_outputs: int) -> dict:
        """This Dataset's binning parameters, else those given to train; a conflict is reported."""
        values = {}
        for name in DATASET_PARAMS:
            wanted = self._train_value(params, name, n_outputs)
            if name in self.params:
                values[name] = self.params[name]
                if name in params.given and getattr(params, name) is not None and wanted != self.params[name]:
                    warnings.warn(f"{name}={wanted!r} given to train() is ignored: the Dataset was "
                                  f"given {name}={self.params[name]!r}", MultigroveWarning, stacklevel=4)
            else:
                values[name] = wanted
        return values

    def construct(self, params: Params | None = None, n_outputs: int = 1) -> "Dataset":
        """Bin the features (once); a Dataset with a reference uses the reference's bins and layout.

        A value that cannot apply any more (the Dataset is already binned with another) is reported with
        a warning naming the parameter.

        Parameters
        ----------
        params : Params, optional
            The training parameters: their binning values apply unless this Dataset was given its own.
        n_outputs : int, default 1
            Outputs of the model to train (it picks the default sparse threshold).

        Returns
        -------
        Dataset
            self
        """
        params = params if params is not None else Params()
        if self.store is not None:
            self._warn_ignored(params, n_outputs)
            return self
        if self.reference is not None:
            self.reference.construct(params, n_outputs)
            self.bin_mapper, self.layout = self.reference.bin_mapper, self.reference.layout
            self.binning = self.reference.binning
        else:
            b = self.binning = self._binning_values(params, n_outputs)
            mapper = BinMapper(b["max_bin"], b["bin_construct_sample_cnt"], b["seed"], b["min_data_in_bin"])
            sample = mapper.sample(self.data)
            self.bin_mapper = mapper.fit(sample)
            self.layout = plan_layout(mapper, sample, b["is_enable_sparse"], b["enable_bundle"],
                                      b["max_conflict_rate"], b["sparse_threshold"])
        self.store = build_store(self.data, self.bin_mapper, self.layout)
        self.data = None  # the binned store is all training needs
        return self

    def _warn_ignored(self, params: Params, n_outputs: int) -> None:
        for name in DATASET_PARAMS:
            wanted = self._train_value(params, name, n_outputs)
            if name in params.given and getattr(params, name) is not None and self.binning is not None \
                    and wanted != self.binning[name]:
                warnings.warn(f"{name}={wanted!r} given to train() is ignored: the Dataset was already binned with "
                              f"{name}={self.binning[name]!r} (build a new Dataset to change it)",
                              MultigroveWarning, stacklevel=4)

    def num_data(self) -> int:
        """The number of data rows."""
        return self.n_rows

    def num_feature(self) -> int:
        """The number of features."""
        return self.n_features

    def get_label(self) -> np.ndarray | None:
        """The checked labels (float64, 1-D or 2-D), or None."""
        return self.label

    def get_weight(self) -> np.ndarray | None:
        """The checked row weights, or None."""
        return self.weight

    def get_init_score(self) -> np.ndarray | None:
        """The checked start scores, (n_rows, n_outputs) float64, or None."""
        return self.init_score
