"""Checks and conversions at the trust boundary: everything a user hands us passes here."""
from __future__ import annotations

import math
import numbers

import numpy as np
import scipy.sparse as sp

from ._dtypes import STAT_INPUT_LIMIT


def _is_dataframe(X) -> bool:
    return hasattr(X, "dtypes") and hasattr(X, "columns") and hasattr(X, "to_numpy")


def _first_inf(values: np.ndarray) -> int | None:
    bad = np.isinf(values)
    return int(np.flatnonzero(bad)[0]) if bad.any() else None


def check_sparse_features(X, name: str = "X") -> sp.csr_matrix | sp.csc_matrix:
    """A canonical CSR or CSC float32/float64 matrix: index structure checked, no duplicate or unsorted
    indices, no +-inf.  Other sparse formats are converted to CSR."""
    if not isinstance(X, (sp.csr_matrix, sp.csc_matrix, sp.csr_array, sp.csc_array)):
        X = sp.csr_matrix(X)
    csr = isinstance(X, (sp.csr_matrix, sp.csr_array))
    X = sp.csr_matrix(X) if csr else sp.csc_matrix(X)  # matrix interface, no copy of the arrays
    major, minor = (X.shape[0], X.shape[1]) if csr else (X.shape[1], X.shape[0])
    outer, inner = ("row", "column") if csr else ("column", "row")
    indptr, indices = np.asarray(X.indptr), np.asarray(X.indices)
    if indptr.shape != (major + 1,) or indptr[0] != 0 or np.any(np.diff(indptr) < 0) \
            or indptr[-1] != indices.shape[0] or X.data.shape[0] != indices.shape[0]:
        raise ValueError(f"{name} is a malformed sparse matrix: indptr must start at 0, never decrease and end at "
                         f"the number of stored values ({indices.shape[0]}) with {major + 1} entries")
    if indices.size and (indices.min() < 0 or indices.max() >= minor):
        bad = int(np.flatnonzero((indices < 0) | (indices >= minor))[0])
        where = int(np.searchsorted(indptr, bad, side="right") - 1)
        raise ValueError(f"{name} has {inner} index {int(indices[bad])} in {outer} {where}, outside "
                         f"[0, {minor})")
    cross = indptr[1:-1] - 1  # the step from each row's last entry to the next row's first may go down
    inside = np.ones(max(indices.shape[0] - 1, 0), bool)
    inside[cross[(cross >= 0) & (cross < inside.size)]] = False
    if np.any(inside & (np.diff(indices) < 0)):  # unsorted (scikit-learn's projections give such): sort a copy
        X = X.sorted_indices()
        indices = np.asarray(X.indices)
    steps = np.diff(indices)
    if np.any(inside & (steps == 0)):
        bad = int(np.flatnonzero(inside & (steps == 0))[0])
        where = int(np.searchsorted(indptr, bad, side="right") - 1)
        raise ValueError(f"{name} has duplicate {inner} indices in {outer} {where}: call {name}.sum_duplicates() "
                         f"first (it adds them up)")
    if X.dtype == object or not (np.issubdtype(X.dtype, np.number) or X.dtype == np.bool_):
        raise TypeError(f"{name} must hold numbers, got dtype {X.dtype}")
    if np.iscomplexobj(X.data):
        raise ValueError(f"{name} holds complex numbers (dtype {X.dtype}): Complex data not supported")
    if X.dtype not in (np.float32, np.float64):
        X = X.astype(np.float64)
    bad = _first_inf(X.data)
    if bad is not None:
        where = int(np.searchsorted(indptr, bad, side="right") - 1)
        raise ValueError(f"{name} must not contain +-inf (NaN marks a missing value), got {X.data[bad]} in "
                         f"{outer} {where}, {inner} {int(indices[bad])}")
    return X


def default_feature_names(n_features: int) -> list[str]:
    """The names of features given without names (arrays, sparse matrices): f0, f1, ..."""
    return [f"f{i}" for i in range(n_features)]


def check_features(X, *, name: str = "X", n_features: int | None = None, allow_empty: bool = False,
                   expected_by: str = "the model", expected_names: list[str] | None = None,
                   categories: dict | None = None) -> tuple[np.ndarray, list[str] | None]:
    """Return (X as a C-ordered float32/float64 2-D array or a CSR/CSC matrix, feature names or None).

    Accepts NumPy arrays (any real dtype), array-likes, pandas DataFrames of numeric (or sparse
    numeric) and category columns, and scipy.sparse matrices.  NaN marks a missing value (an implicit
    zero of a sparse matrix is the value 0); +-inf is rejected.  With ``expected_names`` (the names a
    model was trained with), a DataFrame's columns must carry them in that order; arrays are taken by
    position, as are the columns of a model trained without names.  A DataFrame's categorical columns
    become codes (``data.categories``): of ``categories`` ({feature: category list}: the training
    data's, for a validation set or a prediction), else of the columns' own categories.
    """
    return check_features_and_categories(X, name=name, n_features=n_features, allow_empty=allow_empty,
                                         expected_by=expected_by, expected_names=expected_names,
                                         categories=categories)[:2]


def check_features_and_categories(X, *, name: str = "X", n_features: int | None = None, allow_empty: bool = False,
                                  expected_by: str = "the model", expected_names: list[str] | None = None,
                                  categories: dict | None = None) -> tuple[np.ndarray, list[str] | None, dict]:
    """check_features, and the category lists of a DataFrame's category columns ({feature: list}: the ones
    ``categories`` gives, else the columns' own; {} for other data)."""
    from .data.categories import frame_categories  # data/ imports this module: resolved at call time
    names = None
    found: dict = {}
    if X is None:
        raise TypeError(f"{name} must be a 2-D array of numbers, got None")
    if _is_dataframe(X):
        names = [str(c) for c in X.columns]
        if expected_names is not None:
            check_feature_names(names, list(expected_names), name, expected_by)
        found = frame_categories(X) if categories is None else {f: v for f, v in categories.items()
                                                                 if v is not None and f < X.shape[1]}
        _check_frame_columns(X, name, found, categories)
        if X.shape[1] and all(_is_sparse_dtype(dt) for dt in X.dtypes):
            X = sp.csr_matrix(X.sparse.to_coo())
        else:
            X = _frame_values(X, found)
    if sp.issparse(X):
        X = check_sparse_features(X, name)
    else:
        try:
            X = np.asarray(X)
        except Exception as exc:  # ragged lists and the like
            raise TypeError(f"{name} must be a 2-D array of numbers: {exc}") from None
        if X.dtype == object or not (np.issubdtype(X.dtype, np.number) or X.dtype == np.bool_):
            try:
                X = X.astype(np.float64)
            except (TypeError, ValueError) as exc:
                raise TypeError(f"{name} must hold numbers, got dtype {X.dtype} ({exc})") from None
        if np.iscomplexobj(X):
            raise ValueError(f"{name} holds complex numbers (dtype {X.dtype}): Complex data not supported")
    if X.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n_rows, n_features), got an array of shape {X.shape}: Reshape your "
                         "data (X.reshape(-1, 1) for a single feature, X.reshape(1, -1) for a single row)")
    if not allow_empty and X.shape[0] == 0:
        raise ValueError(f"{name} has 0 sample(s) (shape={X.shape}) while a minimum of 1 is required: "
                         "at least one row")
    if X.shape[1] == 0:
        raise ValueError(f"{name} has 0 feature(s) (shape={X.shape}) while a minimum of 1 is required: "
                         "at least one feature")
    if n_features is not None and X.shape[1] != n_features:
        raise ValueError(f"{name} has {X.shape[1]} features, but {expected_by} is expecting {n_features} "
                         "features as input (the number it was trained with)")
    if sp.issparse(X):
        return X, names, found
    if X.dtype not in (np.float32, np.float64):
        X = X.astype(np.float64)
    X = np.ascontiguousarray(X)
    check_no_inf(X, name)
    return X, names, found


def check_no_inf(X: np.ndarray, name: str) -> None:
    """A dense float matrix of features holds no +-inf (NaN, a missing value, is allowed)."""
    infinite = np.isinf(X)
    if infinite.any():
        i, j = np.argwhere(infinite)[0]
        raise ValueError(f"{name} must not contain +-inf (NaN marks a missing value), got {X[i, j]} at row {i}, "
                         f"column {j}")


def _frame_values(X, categories: dict) -> np.ndarray:
    """A DataFrame as float64, its categorical columns (``categories``' keys) as codes of their lists."""
    from .data.categories import encode_column
    out = np.empty(X.shape, dtype=np.float64)
    for j in range(X.shape[1]):
        column = X.iloc[:, j]
        if j in categories:
            out[:, j] = encode_column(column, categories[j])
        else:
            out[:, j] = column.to_numpy(dtype=np.float64, na_value=np.nan)
    return out


def _check_frame_columns(X, name: str, categorical: dict, model_categories: dict | None) -> None:
    """Every column of a DataFrame holds numbers -- NumPy's numeric and bool dtypes, pandas' nullable ones
    (``Int64``, ``Float64``, ``boolean``: a missing value becomes NaN), Arrow-backed numbers and sparse
    numeric columns -- or is categorical (``categorical``: a category column, or a column the model reads
    by its category list).  Text and date columns are refused by name, and a category column the model
    trained as a number."""
    from pandas.api.types import is_bool_dtype, is_numeric_dtype  # X is a pandas DataFrame

    from .data.categories import is_category_column
    if model_categories is not None:
        numeric_only = [str(c) for j, (c, dt) in enumerate(zip(X.columns, X.dtypes))
                        if is_category_column(dt) and j not in model_categories]
        if numeric_only:
            raise TypeError(f"{name} column(s) {numeric_only[:5]} hold categories, but the model was trained on "
                            "them as numbers: give their numeric values, as in training")
    bad = [(str(column), dtype) for j, (column, dtype) in enumerate(zip(X.columns, X.dtypes))
           if j not in categorical and not (is_numeric_dtype(dtype) or is_bool_dtype(dtype))]
    if not bad:
        return
    described = ", ".join(f"'{column}' ({dtype})" for column, dtype in bad[:5]) + (" ..." if len(bad) > 5 else "")
    text = any(str(dtype) in ("object", "string", "str") or "string" in str(dtype) for _, dtype in bad)
    hint = "; a column of categories is split on as such when it is a pandas 'category' column " \
           "(df[column].astype('category'))" if text else ""
    raise TypeError(f"{name} has {len(bad)} column(s) that hold neither numbers nor categories: {described}; every "
                    f"column must be numeric, boolean or categorical{hint}")


def check_feature_names(names: list[str], expected: list[str], name: str, expected_by: str) -> None:
    """Named columns (a DataFrame's, a table file's header) against a model's feature names: the same
    names in the same order.  Skipped when either side has the default names (f0, f1, ...: an array, a
    file without a header, a model trained on one): columns then go by position."""
    if names == expected or len(names) != len(expected) or default_feature_names(len(expected)) in (names, expected):
        return  # a different number of columns is reported by the shape check, with the numbers
    if sorted(names) == sorted(expected):
        first = next(i for i, (given, known) in enumerate(zip(names, expected)) if given != known)
        raise ValueError(f"{name}'s columns are {expected_by}'s features in another order (column {first} is "
                         f"'{names[first]}', trained as '{expected[first]}'): put them in the training order "
                         f"{_listed(expected)} so that each feature is read from its own column")
    missing = [n for n in expected if n not in names]
    raise ValueError(f"{name}'s columns are not the features {expected_by} was trained on: {_listed(missing)} "
                     f"missing, {_listed([n for n in names if n not in expected])} not known; name the columns as "
                     "in training, or give the values without names (an array) to take the columns by position")


def _listed(names: list[str], shown: int = 5) -> str:
    return "[" + ", ".join(repr(n) for n in names[:shown]) + (", ..." if len(names) > shown else "") + "]"


def _is_sparse_dtype(dt) -> bool:
    return type(dt).__name__ == "SparseDtype"


def check_weight(weight, n_rows: int, name: str = "weight", whole: bool = True) -> np.ndarray | None:
    """Per-row weights as a float64 (n_rows,) array: finite, >= 0, within the float32 statistics; None stays None.
    ``whole``: they are all of the data's weights, which must have a positive sum (False for a part of them, a Dask
    worker's rows, whose sum the caller checks over every part: check_weight_sum)."""
    if weight is None:
        return None
    w = np.asarray(weight, dtype=np.float64)
    if w.ndim != 1:
        w = w.reshape(-1) if w.size == n_rows else w
    if w.ndim != 1 or w.shape[0] != n_rows:
        raise ValueError(f"{name} must be 1-D with one value per row ({n_rows}), got shape {np.shape(weight)}")
    if not np.all(np.isfinite(w)):
        bad = int(np.flatnonzero(~np.isfinite(w))[0])
        raise ValueError(f"{name} must be finite, got {w[bad]} at row {bad}")
    if np.any(w < 0):
        bad = int(np.flatnonzero(w < 0)[0])
        raise ValueError(f"{name} must be >= 0, got {w[bad]} at row {bad}")
    if np.any(w > STAT_INPUT_LIMIT):
        bad = int(np.flatnonzero(w > STAT_INPUT_LIMIT)[0])
        raise ValueError(f"{name} must be at most {STAT_INPUT_LIMIT:g} (the statistics are float32; only the ratios "
                         f"of the weights matter, so rescale them), got {w[bad]:g} at row {bad}")
    if whole and n_rows:
        check_weight_sum(float(w.sum()), name)
    return w


def counted_rows(weight: np.ndarray | None, n_rows: int) -> np.ndarray:
    """The rows of positive weight (check_weight's), ascending: every row where the data is unweighted."""
    return np.arange(n_rows) if weight is None or weight.min() > 0 else np.flatnonzero(weight > 0)


def check_weight_sum(total: float, name: str = "weight") -> None:
    """The sum of a data set's weights (check_weight's) must be positive: all zeros leave no loss to fit or score."""
    if not total > 0:
        raise ValueError(f"{name} must have a positive sum, got all zeros")


def check_init_score(init_score, n_rows: int, name: str = "init_score") -> np.ndarray | None:
    """Per-row start scores as a float64 (n_rows, n_outputs) array (1-D: one output), finite; None stays None.
    Whether the number of outputs fits the objective is for training to say."""
    if init_score is None:
        return None
    if sp.issparse(init_score):
        raise TypeError(f"{name} must be a dense array of raw scores, got a scipy.sparse matrix")
    try:
        scores = np.asarray(init_score, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be an array of numbers: {exc}") from None
    if scores.ndim == 1:
        scores = scores.reshape(-1, 1)
    if scores.ndim != 2 or scores.shape[0] != n_rows:
        raise ValueError(f"{name} must have one row per data row: shape ({n_rows},) or ({n_rows}, n_outputs), "
                         f"got {np.shape(init_score)}")
    if not np.all(np.isfinite(scores)):
        row, col = np.argwhere(~np.isfinite(scores))[0]
        raise ValueError(f"{name} must be finite, got {scores[row, col]} at row {row}, output {col}")
    return np.ascontiguousarray(scores)


def check_label(y, n_rows: int | None, name: str = "label", data_name: str = "the data"):
    """A 1-D or 2-D float64 label array with one row per data row, without inf (NaN, a missing label,
    is for the objective to accept or refuse: see boosting.losses); a scipy.sparse label comes back as
    a CSR matrix (structure checked), for the objective to keep sparse or densify."""
    if y is None:
        raise ValueError(f"{name} is required for training, got None")
    if sp.issparse(y):  # kept sparse: the objective decides (sparse-output objectives keep it so)
        Y = sp.csr_matrix(check_sparse_features(y, name=name))
        if n_rows is not None and Y.shape[0] != n_rows:
            raise ValueError(f"{name} has {Y.shape[0]} rows but {data_name} has {n_rows} rows: lengths must match")
        if Y.shape[1] == 0:
            raise ValueError(f"{name} has 0 columns: at least one output is required")
        return Y
    if _is_dataframe(y) or hasattr(y, "to_numpy"):
        y = y.to_numpy()
    try:
        y = np.asarray(y, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must hold numbers, got {np.asarray(y).dtype}") from None
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if y.ndim not in (1, 2):
        raise ValueError(f"{name} must be 1-D or 2-D, got shape {y.shape}")
    if n_rows is not None and y.shape[0] != n_rows:
        raise ValueError(f"{name} has {y.shape[0]} rows but {data_name} has {n_rows} rows: lengths must match")
    if y.ndim == 2 and y.shape[1] == 0:
        raise ValueError(f"{name} has 0 columns: at least one output is required")
    infinite = np.isinf(y)
    if infinite.any():
        idx = np.argwhere(infinite)[0]
        where = f"row {idx[0]}" + (f", column {idx[1]}" if y.ndim == 2 else "")
        raise ValueError(f"{name} must not hold inf (NaN marks a missing label), got {y[tuple(idx)]} at {where}")
    return np.ascontiguousarray(y)


def check_int(value, name: str, low: int | None = None, high: int | None = None, high_is: str = "") -> int:
    """``value`` as an int: TypeError unless it is an integer (bool is not), ValueError outside [low, high]
    (``high_is`` says what the upper bound is, for the message)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    value = int(value)
    if low is not None and value < low:
        raise ValueError(f"{name} must be >= {low}, got {value}")
    if high is not None and value > high:
        bound = f"{high} ({high_is})" if high_is else f"{high}"
        raise ValueError(f"{name} must be <= {bound}, got {value}")
    return value


def check_real(value, name: str, low: float | None = None, low_open: bool = False) -> float:
    """``value`` as a float: TypeError unless it is a real number (bool is not), ValueError if it is
    not finite or below ``low`` (or equal to it, with ``low_open``)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number, got {value!r}")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value}")
    if low is not None and (value < low or (low_open and value == low)):
        raise ValueError(f"{name} must be {'>' if low_open else '>='} {low}, got {value}")
    return value


def check_indicator(Y, n_rows: int | None = None, name: str = "Y", missing_ok: bool = False):
    """A 0/1 label indicator (n_rows, n_labels): the library's one check of multi-label targets.

    A dense Y comes back as float64 (NaN kept where ``missing_ok``: a missing label); a sparse Y as a
    CSR matrix of float32 ones with sorted indices (stored zeros dropped).  A wrong shape, row count,
    dtype or value raises ValueError naming ``name``, the row and the column."""
    if sp.issparse(Y):
        M = sp.csr_matrix(Y, copy=True)
        if M.ndim != 2:
            raise ValueError(f"{name} must be 2-D (n_rows, n_labels), got shape {M.shape}")
        M.sum_duplicates()
        M.eliminate_zeros()
        bad = M.data != 1
        if bad.any():
            pos = int(np.argmax(bad))
            row = int(np.searchsorted(M.indptr, pos, side="right")) - 1
            raise ValueError(f"{name} must be a 0/1 indicator, got {M.data[pos]:g} at row {row}, column "
                             f"{int(M.indices[pos])}")
        M.sort_indices()
        out = sp.csr_matrix((np.ones(M.nnz, np.float32), M.indices, M.indptr), shape=M.shape)
    else:
        arr = np.asarray(Y)
        if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool) \
                or np.iscomplexobj(arr):
            raise ValueError(f"{name} must be a 0/1 indicator of numbers, got dtype {arr.dtype}")
        out = arr.astype(np.float64)
        if out.ndim != 2:
            raise ValueError(f"{name} must be a 2-D 0/1 indicator (n_rows, n_labels), got shape {out.shape}")
        bad = (out != 0) & (out != 1)
        if missing_ok:
            bad &= ~np.isnan(out)
        if bad.any():
            i, j = (int(v) for v in np.argwhere(bad)[0])
            hint = " (NaN marks a missing label)" if missing_ok else ""
            raise ValueError(f"{name} must be a 0/1 indicator, got {out[i, j]:g} at row {i}, column {j}{hint}")
    if n_rows is not None and out.shape[0] != n_rows:
        raise ValueError(f"{name} has {out.shape[0]} rows but X has {n_rows} rows: lengths must match")
    if out.shape[1] < 1:
        raise ValueError(f"{name} has no label columns")
    return out
