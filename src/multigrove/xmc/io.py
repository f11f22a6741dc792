"""Readers for multi-label / multi-target data formats.

``read_arff``: Weka ARFF as used by Mulan (dense rows and sparse ``{index value, ...}`` rows,
``?`` for missing values, numeric and nominal attributes).  Malformed input raises
``ValueError`` naming the file, the line number and what was expected; nothing is dropped.
"""
from __future__ import annotations

import gzip
import io
import os
import re
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

_ATTR = re.compile(r"""^@attribute\s+('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|\S+)\s+(.+?)\s*$""", re.IGNORECASE)


@dataclass
class ArffData:
    relation: str
    names: list[str]
    X: np.ndarray | sp.csr_matrix   # (n_rows, n_attributes) float64; NaN = missing
    nominal: dict[int, list[str]]  # attribute index -> its nominal values


def _open_text(path: str | os.PathLike):
    path = os.fspath(path)
    if path.endswith(".gz"):
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8", errors="strict")
    return open(path, "r", encoding="utf-8", errors="strict")


def _unquote(s: str) -> str:
    s = s.strip()
    if len(s) >= 2 and s[0] == s[-1] and s[0] in "'\"":
        return s[1:-1]
    return s


def read_arff(path: str | os.PathLike, sparse: bool | None = None) -> ArffData:
    """Read an ARFF file (optionally gzip-compressed, by the .gz suffix).

    Nominal attributes whose values are all numbers (e.g. Mulan's ``{0,1}`` labels) keep
    those numbers; other nominal values are coded by their position in the declaration.
    ``sparse=None`` returns CSR when the data rows are sparse, dense otherwise.
    """
    names: list[str] = []
    kinds: list[str] = []
    nominal: dict[int, list[str]] = {}
    codes: dict[int, dict[str, float]] = {}
    relation = ""
    fname = os.fspath(path)
    with _open_text(path) as fh:
        lineno = 0
        for line in fh:
            lineno += 1
            s = line.strip()
            if not s or s.startswith("%"):
                continue
            low = s.lower()
            if low.startswith("@relation"):
                relation = _unquote(s[len("@relation"):])
            elif low.startswith("@attribute"):
                m = _ATTR.match(s)
                if not m:
                    raise ValueError(f"{fname}, line {lineno}: expected '@attribute <name> <type>', got {s[:80]!r}")
                name, typ = _unquote(m.group(1)), m.group(2).strip()
                idx = len(names)
                names.append(name)
                tl = typ.lower()
                if typ.startswith("{"):
                    if not typ.endswith("}"):
                        raise ValueError(f"{fname}, line {lineno}: nominal type of attribute {name!r} "
                                         f"must end with '}}', got {typ[:80]!r}")
                    vals = [_unquote(v) for v in typ[1:-1].split(",")]
                    nominal[idx] = vals
                    try:
                        codes[idx] = {v: float(v) for v in vals}
                    except ValueError:
                        codes[idx] = {v: float(i) for i, v in enumerate(vals)}
                    kinds.append("nominal")
                elif tl in ("numeric", "real", "integer"):
                    kinds.append("numeric")
                elif tl == "string" or tl.startswith("date"):
                    raise ValueError(f"{fname}, line {lineno}: attribute {name!r} has type {typ!r}; "
                                     "only numeric and nominal attributes are supported")
                else:
                    raise ValueError(f"{fname}, line {lineno}: unknown type {typ!r} for attribute {name!r}")
            elif low.startswith("@data"):
                break
            else:
                raise ValueError(f"{fname}, line {lineno}: expected '@relation', '@attribute' or '@data', "
                                 f"got {s[:80]!r}")
        else:
            raise ValueError(f"{fname}: no '@data' section found (file truncated?)")
        if not names:
            raise ValueError(f"{fname}: no attributes declared before '@data'")
        n_attr = len(names)
        dense_rows: list[list[float]] = []
        rows_i: list[int] = []
        cols_i: list[int] = []
        vals: list[float] = []
        n_rows = 0
        saw_sparse = saw_dense = False

        def value(tok: str, j: int, ln: int) -> float:
            tok = tok.strip()
            if tok == "?":
                return np.nan
            if j in codes:
                t = _unquote(tok)
                if t not in codes[j]:
                    raise ValueError(f"{fname}, line {ln}: value {t!r} of attribute {names[j]!r} is not one of "
                                     f"its declared values {nominal[j][:10]}")
                return codes[j][t]
            try:
                return float(tok)
            except ValueError:
                raise ValueError(f"{fname}, line {ln}: expected a number for attribute {names[j]!r}, "
                                 f"got {tok[:40]!r}") from None

        for line in fh:
            lineno += 1
            s = line.strip()
            if not s or s.startswith("%"):
                continue
            if s.startswith("{"):
                saw_sparse = True
                if not s.endswith("}"):
                    raise ValueError(f"{fname}, line {lineno}: sparse row must end with '}}'")
                body = s[1:-1].strip()
                last = -1
                if body:
                    for item in body.split(","):
                        parts = item.split()
                        if len(parts) != 2:
                            raise ValueError(f"{fname}, line {lineno}: expected '<index> <value>' in a sparse "
                                             f"row, got {item.strip()[:40]!r}")
                        try:
                            j = int(parts[0])
                        except ValueError:
                            raise ValueError(f"{fname}, line {lineno}: sparse index {parts[0]!r} is not an "
                                             "integer") from None
                        if not 0 <= j < n_attr:
                            raise ValueError(f"{fname}, line {lineno}: sparse index {j} outside [0, {n_attr})")
                        if j <= last:
                            raise ValueError(f"{fname}, line {lineno}: sparse indices must increase, got {j} "
                                             f"after {last}")
                        last = j
                        v = value(parts[1], j, lineno)
                        if v != 0:
                            rows_i.append(n_rows)
                            cols_i.append(j)
                            vals.append(v)
            else:
                saw_dense = True
                toks = s.split(",")
                if len(toks) != n_attr:
                    raise ValueError(f"{fname}, line {lineno}: expected {n_attr} comma-separated values, "
                                     f"got {len(toks)}")
                dense_rows.append([value(t, j, lineno) for j, t in enumerate(toks)])
            n_rows += 1
    if saw_sparse and saw_dense:
        raise ValueError(f"{fname}: mixes sparse and dense data rows")
    if saw_sparse:
        X = sp.csr_matrix((np.asarray(vals, dtype=np.float64), (rows_i, cols_i)), shape=(n_rows, n_attr))
        if sparse is False:
            X = X.toarray()
    else:
        X = np.asarray(dense_rows, dtype=np.float64).reshape(n_rows, n_attr)
        if sparse:
            X = sp.csr_matrix(np.nan_to_num(X))
    return ArffData(relation, names, X, nominal)
