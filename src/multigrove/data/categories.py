"""Categorical features: category <-> code maps, learnt from the training data and stored in the model.

A categorical feature reaches the binning as codes, one number per row: the position of the row's
category in the feature's *category list* (a pandas ``category`` column's categories, an Arrow
dictionary column's dictionary), or the integer itself for a column of integer codes named by
``categorical_feature``.  The lists are taken from the training data once; every later data set
(validation sets, data to predict) is encoded with them, by category value: a DataFrame whose
categories come in another order, or hold more categories, gives the same codes for the same
values.  A value with no code -- missing, a category the training data did not have, a negative
integer code -- becomes NaN: the feature's missing value.  A split of a categorical feature sends
a set of categories left and everything else right, missing values included (see
``boosting.grower``); a category seen too rarely to get a bin of its own goes right too.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

#: a categorical feature without a category list: its values are integer codes themselves
INTEGER_CODES = None


def is_category_column(dtype) -> bool:
    """Whether a pandas column dtype holds categories: ``category``, or an Arrow dictionary."""
    if type(dtype).__name__ == "CategoricalDtype":
        return True
    arrow = getattr(dtype, "pyarrow_dtype", None)
    return arrow is not None and type(arrow).__name__ == "DictionaryType"


def _as_list(values) -> list:
    """Category values as plain Python objects (str, int, float, bool), for the model file."""
    return [v.item() if isinstance(v, np.generic) else v for v in values]


def frame_categories(frame) -> dict[int, list]:
    """{column index: its category list} for the category columns of a pandas DataFrame."""
    out = {}
    for j, dtype in enumerate(frame.dtypes):
        if not is_category_column(dtype):
            continue
        if type(dtype).__name__ == "CategoricalDtype":
            out[j] = _as_list(dtype.categories)
        else:  # an Arrow dictionary column: its dictionary, as pandas sees it
            out[j] = _as_list(frame.iloc[:, j].astype("category").cat.categories)
    return out


def encode_column(column, categories: list) -> np.ndarray:
    """A column's values as float64 codes: the position of each value in ``categories``, NaN for a missing
    value or one not in the list."""
    import pandas as pd
    codes = pd.Index(categories).get_indexer(np.asarray(column, dtype=object)).astype(np.float64)
    codes[codes < 0] = np.nan
    return codes


def check_codes(X: np.ndarray, features, names: list[str], name: str) -> np.ndarray:
    """X with the columns of integer-coded categorical ``features`` checked: integers, NaN for a missing value;
    a negative code is missing too (a copy of X is made then).  Raise naming the column and row otherwise."""
    if len(features) and sp.issparse(X):
        raise ValueError(f"categorical features need dense data (an array or a DataFrame), got a sparse matrix for "
                         f"{name}")
    copied = False
    for f in features:
        column = X[:, f]
        present = ~np.isnan(column)
        bad = present & (column != np.floor(column))
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise ValueError(f"{name} column {names[f]!r} is categorical (categorical_feature) but holds "
                             f"{column[row]!r} at row {row}: give integer category codes (NaN or a negative code "
                             "for a missing value), or make it a pandas 'category' column")
        if (present & (column < 0)).any():
            if not copied:
                X, copied = np.array(X, dtype=np.float64), True
            X[X[:, f] < 0, f] = np.nan
    return X


def resolve_features(wanted, names: list[str], known: dict[int, list], name: str = "categorical_feature"
                     ) -> dict[int, list | None]:
    """{feature index: category list, or INTEGER_CODES} of every categorical feature: the category columns
    the data came with (``known``) and those named by ``wanted`` ("auto", or names and indices)."""
    out: dict[int, list | None] = dict(known)
    if wanted == "auto" or wanted is None:
        return out
    for item in wanted:
        if isinstance(item, str):
            if item not in names:
                raise ValueError(f"{name} names column {item!r}, which the data does not have (its columns: "
                                 f"{names[:8]}{' ...' if len(names) > 8 else ''})")
            index = names.index(item)
        else:
            if not 0 <= item < len(names):
                raise ValueError(f"{name} holds index {item}, outside the data's {len(names)} columns")
            index = int(item)
        out.setdefault(index, INTEGER_CODES)
    return dict(sorted(out.items()))


def categories_to_json(categories: dict[int, list | None]) -> dict:
    """The maps as a model file stores them: {"feature index": category list or null}."""
    return {str(f): (None if values is None else list(values)) for f, values in categories.items()}


def categories_from_json(data, n_features: int, where: str = "model") -> dict[int, list | None]:
    """The maps back from a model file, checked."""
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ValueError(f"{where}: 'categories' must be a mapping of feature index to category list")
    out = {}
    for key, values in data.items():
        try:
            f = int(key)
        except (TypeError, ValueError):
            raise ValueError(f"{where}: 'categories' has key {key!r}, not a feature index") from None
        if not 0 <= f < n_features:
            raise ValueError(f"{where}: 'categories' names feature {f}, outside [0, {n_features})")
        if values is not None and not isinstance(values, list):
            raise ValueError(f"{where}: the categories of feature {f} must be a list or null")
        out[f] = values
    return dict(sorted(out.items()))
