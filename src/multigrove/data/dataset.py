"""Dataset: features binned once, labels and weights checked once, reused across rounds."""
from __future__ import annotations

import warnings
from typing import Any, Mapping

import numpy as np
import scipy.sparse as sp

from .._validation import (
    check_features_and_categories,
    check_init_score,
    check_label,
    check_weight,
    default_feature_names,
)
from ..params import DATASET_PARAMS, MultigroveWarning, Params
from .binning import BinMapper
from .bundling import plan_layout
from .categories import categories_from_json, categories_to_json, check_codes, resolve_features
from .storage import build_store
from .target_statistics import TargetStatistics, fit_statistics, statistics_features


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
        Numeric features, and categorical ones: a DataFrame's ``category`` columns (and Arrow dictionary
        columns), and the columns of integer codes that ``categorical_feature`` names.  NaN marks a
        missing value; in a sparse matrix an implicit zero is the value 0.  Sparse data are never
        densified: binning reads the stored values only.
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
        ``enable_bundle``, ``max_conflict_rate``, ``is_enable_sparse``, ``sparse_threshold``,
        ``categorical_feature`` or their aliases); those not given here are taken from the parameters
        passed to ``train``.
    categorical_feature : "auto" or list of str or int, optional
        Features split on sets of categories (LightGBM's parameter): "auto" takes a DataFrame's
        ``category`` columns; a list (names or indices) adds columns of integer codes (NaN or a
        negative code: missing).  A validation set reads its categorical columns with its reference's
        category lists, by category value (see ``multigrove.data.categories``).
    categories : dict, optional
        ``{feature index: category list}`` of data given as codes (an array whose categorical columns
        hold each row's position in the list, NaN missing): the lists the model stores and encodes a
        DataFrame with at prediction.  A DataFrame's category columns bring their own.

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
                 params: Mapping[str, Any] | None = None, init_score: Any = None, categorical_feature: Any = None,
                 categories: Mapping[int, list] | None = None):
        reference_names = reference.feature_names if isinstance(reference, Dataset) else None
        reference_categories = reference.categories if isinstance(reference, Dataset) else None
        X, names, found = check_features_and_categories(data, name="data", expected_by="the reference Dataset",
                                                        expected_names=reference_names,
                                                        categories=reference_categories)
        #: {feature: category list, or None for integer codes}: the DataFrame's category columns (a reference's
        #: lists for a validation set), completed by categorical_feature when the Dataset is constructed
        self.categories: dict = dict(reference_categories) if reference_categories is not None else found
        if categories:
            if reference is not None or found:
                raise ValueError("categories= is for data given as codes without a reference; a DataFrame's category "
                                 "columns and a reference bring their own")
            self.categories = categories_from_json(categories_to_json(dict(categories)), X.shape[1], "categories")
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
        #: the ordered target statistics appended to the features at construction (data.target_statistics), or None
        self.target_statistics: TargetStatistics | None = None
        #: (features of the store,) bool: features no split may use (a categorical feature its statistics replace)
        self.unsplittable: np.ndarray | None = None
        if categorical_feature is not None:
            if "categorical_feature" in self.params:
                raise ValueError("categorical_feature given twice: as an argument and in params")
            self.params["categorical_feature"] = dataset_params({"categorical_feature": categorical_feature})[
                "categorical_feature"]
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
        if name in ("enable_bundle", "is_enable_sparse") and params.device_type == "cuda":
            return False  # the CUDA kernels read dense binned columns only (boosting/cuda_builder.py)
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

    def construct(self, params: Params | None = None, n_outputs: int = 1, targets: tuple | None = None) -> "Dataset":
        """Bin the features (once); a Dataset with a reference uses the reference's bins and layout.

        A value that cannot apply any more (the Dataset is already binned with another) is reported with
        a warning naming the parameter.

        Parameters
        ----------
        params : Params, optional
            The training parameters: their binning values apply unless this Dataset was given its own.
        n_outputs : int, default 1
            Outputs of the model to train (it picks the default sparse threshold).
        targets : (ndarray (n_rows, k), list of k names), optional
            The target columns of a training set (train passes them): they give the ordered target
            statistics of the categorical features ``cat_encoding`` encodes so (data.target_statistics).
            Without them a Dataset is binned with set splits only; a validation set uses its reference's
            statistics.

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
            self.categories = dict(self.reference.categories)
            self.unsplittable = self.reference.unsplittable
            data = check_codes(self.data, self._integer_coded(), self.feature_names, "data")
            known = self.reference.target_statistics
            if known is not None and targets is not None:  # a training set on its reference's bins (a fold of cv)
                self.target_statistics, data = fit_statistics(data, list(known.features), targets[0],
                                                              list(known.column_names), self.binning["seed"])
            elif known is not None:
                data = known.encode(data)
        else:
            b = self.binning = self._binning_values(params, n_outputs)
            self.categories = resolve_features(b["categorical_feature"], self.feature_names, self.categories)
            data = check_codes(self.data, self._integer_coded(), self.feature_names, "data")
            encoded = statistics_features(b["cat_encoding"], self.categories, targets)
            if encoded:
                self.target_statistics, data = fit_statistics(data, encoded, targets[0], targets[1], b["seed"])
            self.unsplittable = np.zeros(data.shape[1], np.bool_)
            self.unsplittable[encoded] = True  # its statistics stand in for it
            mapper = BinMapper(b["max_bin"], b["bin_construct_sample_cnt"], b["seed"], b["min_data_in_bin"])
            sample = mapper.sample(data)
            categorical = np.zeros(data.shape[1], np.bool_)
            categorical[list(self.categories)] = True
            self.bin_mapper = mapper.fit(sample, categorical)
            self.layout = plan_layout(mapper, sample, b["is_enable_sparse"], b["enable_bundle"],
                                      b["max_conflict_rate"], b["sparse_threshold"])
        self.store = build_store(data, self.bin_mapper, self.layout)
        self.data = None  # the binned store is all training needs
        return self

    def _integer_coded(self) -> list[int]:
        """The categorical features given as integer codes (no category list)."""
        return [f for f, values in self.categories.items() if values is None]

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
