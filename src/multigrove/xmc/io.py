"""Readers and writers of the multi-label data formats.

* XMC repository text format: a header ``N D L``, then one row per line ``l1,l2 f:v f:v ...``
  (0-based labels and features; a row without labels starts with a space) — ``read_xmc`` / ``write_xmc``.
* LIBSVM multi-label: the same rows without the header — ``read_libsvm`` / ``write_libsvm``.
* Mulan ARFF (dense rows and sparse ``{index value, ...}`` rows), the labels named in Mulan's XML
  file or given as the last L attributes — ``read_mulan`` / ``write_mulan``; ``read_arff`` is the
  general ARFF reader underneath.
* ``.npz`` holding the CSR arrays of X and Y — ``save_npz`` / ``load_npz`` (never unpickled).

The multi-label readers return ``(X, Y)``: CSR float32 features and a CSR label indicator (float32
ones).  Malformed input raises ``ValueError`` naming the file, the line number and what was
expected; nothing is dropped silently (a repeated feature or label in a row is an error too).
Writers write to a temporary file and rename it, so a failed write never leaves half a file; a
path ending in ``.gz`` is gzip-compressed, for readers and writers alike.
"""
from __future__ import annotations

import contextlib
import gzip
import io
import os
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .._fileio import atomic_write, open_npz
from ..kernels import parse as _parse

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
    """Read an ARFF file (dense or sparse ``{index value, ...}`` rows).

    Nominal attributes whose values are all numbers (e.g. Mulan's ``{0,1}`` labels) keep those
    numbers; other nominal values are coded by their position in the declaration.  A ``?`` is a
    missing value: NaN, in a dense or a CSR X alike.

    Parameters
    ----------
    path : str or PathLike
        The file; a name ending in ``.gz`` is gzip-compressed.
    sparse : bool or None, default None
        Return X as CSR (True), dense (False), or CSR exactly when the data rows are sparse (None).

    Returns
    -------
    ArffData
        ``relation``, ``names``, ``X`` (every attribute as a column) and ``nominal`` (the declared
        values of each nominal attribute).
    """
    fname = os.fspath(path)
    with _open_text(path) as fh:
        lines = _content_lines(fh)
        relation, names, nominal = _read_arff_header(lines, fname)
        rows = _ArffRows(fname, names, nominal)
        for lineno, s in lines:  # the same iterator: the data rows after '@data'
            rows.add(s, lineno)
    return ArffData(relation, names, rows.matrix(sparse), nominal)


def _content_lines(fh):
    """(line number, stripped line) of every line that is neither blank nor a '%' comment."""
    for lineno, line in enumerate(fh, start=1):
        s = line.strip()
        if s and not s.startswith("%"):
            yield lineno, s


def _read_arff_header(lines, fname: str) -> tuple[str, list[str], dict[int, list[str]]]:
    """(relation, attribute names, nominal values by attribute) from the lines up to '@data'."""
    relation, names, nominal = "", [], {}
    for lineno, s in lines:
        low = s.lower()
        if low.startswith("@relation"):
            relation = _unquote(s[len("@relation"):])
        elif low.startswith("@attribute"):
            m = _ATTR.match(s)
            if not m:
                raise ValueError(f"{fname}, line {lineno}: expected '@attribute <name> <type>', got {s[:80]!r}")
            name, typ = _unquote(m.group(1)), m.group(2).strip()
            kind = typ.lower()
            if typ.startswith("{"):
                if not typ.endswith("}"):
                    raise ValueError(f"{fname}, line {lineno}: nominal type of attribute {name!r} "
                                     f"must end with '}}', got {typ[:80]!r}")
                nominal[len(names)] = [_unquote(v) for v in typ[1:-1].split(",")]
            elif kind == "string" or kind.startswith("date"):
                raise ValueError(f"{fname}, line {lineno}: attribute {name!r} has type {typ!r}; "
                                 "only numeric and nominal attributes are supported")
            elif kind not in ("numeric", "real", "integer"):
                raise ValueError(f"{fname}, line {lineno}: unknown type {typ!r} for attribute {name!r}")
            names.append(name)
        elif low.startswith("@data"):
            break
        else:
            raise ValueError(f"{fname}, line {lineno}: expected '@relation', '@attribute' or '@data', "
                             f"got {s[:80]!r}")
    else:
        raise ValueError(f"{fname}: no '@data' section found (file truncated?)")
    if not names:
        raise ValueError(f"{fname}: no attributes declared before '@data'")
    return relation, names, nominal


class _ArffRows:
    """The data rows of an ARFF file, dense or sparse (not both), collected line by line."""

    def __init__(self, fname: str, names: list[str], nominal: dict[int, list[str]]):
        self.fname, self.names, self.nominal = fname, names, nominal
        self.codes = {}  # nominal attribute -> {value: number}: the value itself when all are numbers
        for j, values in nominal.items():
            try:
                self.codes[j] = {v: float(v) for v in values}
            except ValueError:
                self.codes[j] = {v: float(i) for i, v in enumerate(values)}
        self.dense_rows: list[list[float]] = []
        self.entry_rows: list[int] = []
        self.entry_cols: list[int] = []
        self.entry_values: list[float] = []
        self.n_rows = 0
        self.saw_sparse = self.saw_dense = False

    def add(self, s: str, lineno: int) -> None:
        if s.startswith("{"):
            self.saw_sparse = True
            self._add_sparse(s, lineno)
        else:
            self.saw_dense = True
            toks = s.split(",")
            if len(toks) != len(self.names):
                raise ValueError(f"{self.fname}, line {lineno}: expected {len(self.names)} comma-separated values, "
                                 f"got {len(toks)}")
            self.dense_rows.append([self._value(t, j, lineno) for j, t in enumerate(toks)])
        self.n_rows += 1

    def _add_sparse(self, s: str, lineno: int) -> None:
        where = f"{self.fname}, line {lineno}"
        if not s.endswith("}"):
            raise ValueError(f"{where}: sparse row must end with '}}'")
        body = s[1:-1].strip()
        last = -1
        for item in body.split(",") if body else ():
            parts = item.split()
            if len(parts) != 2:
                raise ValueError(f"{where}: expected '<index> <value>' in a sparse row, got {item.strip()[:40]!r}")
            try:
                j = int(parts[0])
            except ValueError:
                raise ValueError(f"{where}: sparse index {parts[0]!r} is not an integer") from None
            if not 0 <= j < len(self.names):
                raise ValueError(f"{where}: sparse index {j} outside [0, {len(self.names)})")
            if j <= last:
                raise ValueError(f"{where}: sparse indices must increase, got {j} after {last}")
            last = j
            v = self._value(parts[1], j, lineno)
            if v != 0:  # NaN too: a missing value stays an explicit entry
                self.entry_rows.append(self.n_rows)
                self.entry_cols.append(j)
                self.entry_values.append(v)

    def _value(self, tok: str, j: int, lineno: int) -> float:
        tok = tok.strip()
        if tok == "?":
            return np.nan
        if j in self.codes:
            t = _unquote(tok)
            if t not in self.codes[j]:
                raise ValueError(f"{self.fname}, line {lineno}: value {t!r} of attribute {self.names[j]!r} is not "
                                 f"one of its declared values {self.nominal[j][:10]}")
            return self.codes[j][t]
        try:
            return float(tok)
        except ValueError:
            raise ValueError(f"{self.fname}, line {lineno}: expected a number for attribute {self.names[j]!r}, "
                             f"got {tok[:40]!r}") from None

    def matrix(self, sparse: bool | None) -> np.ndarray | sp.csr_matrix:
        """X (n_rows, n_attributes) float64: CSR when ``sparse`` says so (None: when the rows were sparse)."""
        if self.saw_sparse and self.saw_dense:
            raise ValueError(f"{self.fname}: mixes sparse and dense data rows")
        shape = (self.n_rows, len(self.names))
        if self.saw_sparse:
            X = sp.csr_matrix((np.asarray(self.entry_values, dtype=np.float64),
                               (self.entry_rows, self.entry_cols)), shape=shape)
            return X.toarray() if sparse is False else X
        X = np.asarray(self.dense_rows, dtype=np.float64).reshape(shape)
        return sp.csr_matrix(X) if sparse else X  # a NaN (missing) is kept as an explicit entry


# ------------------------------------------------------------------ sparse text rows (XMC, LIBSVM)
_PARSE_ERRORS = {
    _parse.ERR_LABEL: "labels as comma-separated non-negative integers (e.g. '3,17,42')",
    _parse.ERR_PAIR: "a feature as 'index:value'",
    _parse.ERR_INDEX: "a feature index that is a non-negative integer",
    _parse.ERR_VALUE: "a feature value that is a finite number",
}


def _read_bytes(path) -> np.ndarray:
    path = os.fspath(path)
    if path.endswith(".gz"):
        with gzip.open(path, "rb") as fh:
            raw = fh.read()
    else:
        with open(path, "rb") as fh:
            raw = fh.read()
    return np.frombuffer(raw, dtype=np.uint8)


def _token_at(buf: np.ndarray, pos: int) -> str:
    end = pos
    while end < buf.shape[0] and end - pos < 40 and buf[end] not in (32, 9, 10, 13):
        end += 1
    return bytes(buf[pos:end]).decode("utf-8", errors="replace")


def _parse_rows(fname: str, buf: np.ndarray, start: int, line0: int, max_rows: int):
    n_colon = int(np.count_nonzero(buf[start:] == 58))
    n_lab = int(np.count_nonzero(buf[start:] == 44)) + max_rows
    row_line = np.zeros(max_rows, np.int64)
    lab_indptr = np.zeros(max_rows + 1, np.int64)
    feat_indptr = np.zeros(max_rows + 1, np.int64)
    lab_idx = np.zeros(n_lab, np.int64)
    feat_idx = np.zeros(n_colon, np.int64)
    feat_val = np.zeros(n_colon, np.float64)
    counts = np.zeros(3, np.int64)
    code, line, pos = _parse.parse_sparse_rows(buf, start, line0, max_rows, row_line, lab_indptr, lab_idx,
                                               feat_indptr, feat_idx, feat_val, counts)
    if code == _parse.ERR_TOO_MANY:
        raise ValueError(f"{fname}, line {line}: more data rows than the {max_rows} the header declares")
    if code != _parse.OK:
        raise ValueError(f"{fname}, line {line}: expected {_PARSE_ERRORS[code]}, got {_token_at(buf, pos)!r}")
    rows, nl, nf = (int(c) for c in counts)
    return (row_line[:rows], lab_indptr[: rows + 1], lab_idx[:nl], feat_indptr[: rows + 1], feat_idx[:nf],
            feat_val[:nf])


def row_of_entry(indptr: np.ndarray, pos: int) -> int:
    """The row of a CSR matrix that holds stored entry number ``pos``.

    Parameters
    ----------
    indptr : ndarray
        The CSR row pointers.
    pos : int
        Index into the stored entries (``data`` / ``indices``).

    Returns
    -------
    int
    """
    return int(np.searchsorted(indptr, pos, side="right")) - 1


def _check_range(fname, what, indptr, indices, limit, row_line, hint=""):
    if indices.size and (indices.max() >= limit):
        bad = int(np.argmax(indices >= limit))
        row = row_of_entry(indptr, bad)
        raise ValueError(f"{fname}, line {row_line[row]}: {what} index {int(indices[bad])} is outside "
                         f"[0, {limit}){hint}")


def _to_csr(fname, what, indptr, indices, data, n_cols, row_line, dtype=np.float32):
    M = sp.csr_matrix((data.astype(dtype), indices.astype(np.int32), indptr), shape=(indptr.shape[0] - 1, n_cols))
    M.has_sorted_indices = False
    M.sort_indices()
    dup = _parse.first_duplicate(M.indptr.astype(np.int64), M.indices.astype(np.int64))
    if dup >= 0:
        raise ValueError(f"{fname}, line {row_line[dup]}: a {what} index appears twice in the row")
    if what == "feature" and not np.isfinite(M.data).all():
        bad = int(np.argmax(~np.isfinite(M.data)))
        row = row_of_entry(M.indptr, bad)
        raise ValueError(f"{fname}, line {row_line[row]}: feature value overflows float32")
    return M


def read_xmc(path) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """Read the XMC repository text format: a header ``N D L``, then N rows ``l1,l2 f:v ...``.

    Parameters
    ----------
    path : str or PathLike
        The file; a name ending in ``.gz`` is gzip-compressed.

    Returns
    -------
    X : scipy.sparse.csr_matrix, float32, shape (n_rows, n_features)
    Y : scipy.sparse.csr_matrix, float32 ones, shape (n_rows, n_labels)
        The label indicator.
    """
    fname = os.fspath(path)
    buf = _read_bytes(path)
    pos = 0
    line = 1
    header = None
    while pos < buf.shape[0]:
        nl = pos
        while nl < buf.shape[0] and buf[nl] != 10:
            nl += 1
        text = bytes(buf[pos:nl]).decode("utf-8", errors="replace").strip()
        pos = nl + 1
        if text:
            header = text
            break
        line += 1
    if header is None:
        raise ValueError(f"{fname}: empty file; expected a header line 'N D L'")
    parts = header.split()
    if len(parts) != 3 or not all(field.isdigit() for field in parts):
        raise ValueError(f"{fname}, line {line}: expected the header 'N D L' (rows, features, labels as "
                         f"integers), got {header[:80]!r}")
    n, n_columns, n_labels = (int(field) for field in parts)
    row_line, lab_indptr, lab_idx, feat_indptr, feat_idx, feat_val = _parse_rows(fname, buf, pos, line + 1, n)
    if row_line.shape[0] != n:
        raise ValueError(f"{fname}: the header declares {n} rows but the file holds {row_line.shape[0]}")
    _check_range(fname, "feature", feat_indptr, feat_idx, n_columns, row_line,
                 f" (the header declares D = {n_columns})")
    _check_range(fname, "label", lab_indptr, lab_idx, n_labels, row_line, f" (the header declares L = {n_labels})")
    X = _to_csr(fname, "feature", feat_indptr, feat_idx, feat_val, n_columns, row_line)
    Y = _to_csr(fname, "label", lab_indptr, lab_idx, np.ones(lab_idx.shape[0]), n_labels, row_line)
    return X, Y


def read_libsvm(path, n_features: int | None = None, n_labels: int | None = None,
                zero_based: bool | str = "auto") -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """Read LIBSVM multi-label rows ``l1,l2 f:v ...`` (no header).

    Parameters
    ----------
    path : str or PathLike
        The file; a name ending in ``.gz`` is gzip-compressed.
    n_features, n_labels : int, optional
        Widths of X and Y; default one past the largest index seen (a larger index is an error).
    zero_based : {True, False, "auto"}, default "auto"
        Feature indices 0-based, 1-based, or 1-based unless an index 0 occurs.  Labels are always
        0-based ids.

    Returns
    -------
    X : scipy.sparse.csr_matrix, float32, shape (n_rows, n_features)
    Y : scipy.sparse.csr_matrix, float32 ones, shape (n_rows, n_labels)
        The label indicator.
    """
    fname = os.fspath(path)
    if zero_based not in (True, False, "auto"):
        raise ValueError(f"zero_based must be True, False or 'auto', got {zero_based!r}")
    buf = _read_bytes(path)
    max_rows = int(np.count_nonzero(buf == 10)) + 1
    row_line, lab_indptr, lab_idx, feat_indptr, feat_idx, feat_val = _parse_rows(fname, buf, 0, 1, max_rows)
    if zero_based == "auto":
        zero_based = bool(feat_idx.size and feat_idx.min() == 0)
    if not zero_based:
        if feat_idx.size and feat_idx.min() == 0:
            bad = int(np.argmax(feat_idx == 0))
            row = row_of_entry(feat_indptr, bad)
            raise ValueError(f"{fname}, line {row_line[row]}: feature index 0 in a file read as 1-based "
                             "(pass zero_based=True)")
        feat_idx = feat_idx - 1
    n_columns = int(feat_idx.max()) + 1 if feat_idx.size else 0
    if n_features is not None:
        _check_range(fname, "feature", feat_indptr, feat_idx, n_features, row_line, f" (n_features={n_features})")
        n_columns = n_features
    n_lab = int(lab_idx.max()) + 1 if lab_idx.size else 0
    if n_labels is not None:
        _check_range(fname, "label", lab_indptr, lab_idx, n_labels, row_line, f" (n_labels={n_labels})")
        n_lab = n_labels
    X = _to_csr(fname, "feature", feat_indptr, feat_idx, feat_val, n_columns, row_line)
    Y = _to_csr(fname, "label", lab_indptr, lab_idx, np.ones(lab_idx.shape[0]), n_lab, row_line)
    return X, Y


def _as_pair(X, Y):
    X = sp.csr_matrix(X)
    Y = sp.csr_matrix(Y)
    if X.shape[0] != Y.shape[0]:
        raise ValueError(f"X has {X.shape[0]} rows but Y has {Y.shape[0]}")
    X.sum_duplicates()
    X.sort_indices()
    Y.sum_duplicates()
    Y.eliminate_zeros()
    Y.sort_indices()
    if X.data.size and not np.isfinite(X.data).all():
        raise ValueError("X holds NaN or infinite values; these formats cannot store them")
    return X, Y


def _format_rows(X, Y, base: int):
    for i in range(X.shape[0]):
        labels = ",".join(map(str, Y.indices[Y.indptr[i]:Y.indptr[i + 1]].tolist()))
        s, e = X.indptr[i], X.indptr[i + 1]
        feats = " ".join(f"{j + base}:{v:.9g}" for j, v in zip(X.indices[s:e].tolist(), X.data[s:e].tolist()))
        yield f"{labels} {feats}".rstrip(" ") + "\n" if feats else f"{labels}\n" if labels else " \n"


@contextlib.contextmanager
def _atomic_text(path):
    """A UTF-8 text handle writing atomically to `path` (gzip-compressed for a .gz path)."""
    with atomic_write(path) as raw:
        inner = gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) if os.fspath(path).endswith(".gz") else raw
        fh = io.TextIOWrapper(inner, encoding="utf-8", newline="\n")
        yield fh
        fh.flush()
        fh.detach()
        if inner is not raw:
            inner.close()


def write_xmc(path, X, Y) -> None:
    """Write (X, Y) in the XMC repository text format (0-based indices, values with 9 significant digits); atomic.

    Parameters
    ----------
    path : str or PathLike
        The file; a name ending in ``.gz`` is gzip-compressed.
    X : array-like or sparse matrix, shape (n_rows, n_features)
    Y : 0/1 indicator, array-like or sparse matrix, shape (n_rows, n_labels)
    """
    X, Y = _as_pair(X, Y)
    with _atomic_text(path) as fh:
        fh.write(f"{X.shape[0]} {X.shape[1]} {Y.shape[1]}\n")
        fh.writelines(_format_rows(X, Y, 0))


def write_libsvm(path, X, Y, zero_based: bool = True) -> None:
    """Write (X, Y) as LIBSVM multi-label rows; atomic.

    Parameters
    ----------
    path : str or PathLike
        The file; a name ending in ``.gz`` is gzip-compressed.
    X : array-like or sparse matrix, shape (n_rows, n_features)
    Y : 0/1 indicator, array-like or sparse matrix, shape (n_rows, n_labels)
    zero_based : bool, default True
        Write feature indices 0-based, or 1-based with False.
    """
    X, Y = _as_pair(X, Y)
    with _atomic_text(path) as fh:
        fh.writelines(_format_rows(X, Y, 0 if zero_based else 1))


# ------------------------------------------------------------------ Mulan ARFF
def read_mulan_xml(path) -> list[str]:
    """Label names listed in a Mulan XML label file (nested labels included, in document order).

    Parameters
    ----------
    path : str or PathLike

    Returns
    -------
    list of str
    """
    fname = os.fspath(path)
    try:
        root = ET.parse(fname).getroot()
    except ET.ParseError as err:
        raise ValueError(f"{fname}, line {err.position[0]}: malformed XML ({err})") from None
    names = [el.get("name") for el in root.iter() if el.tag.split("}")[-1] == "label"]
    if not names or any(n is None for n in names):
        raise ValueError(f"{fname}: expected <label name=\"...\"> elements")
    return names


def read_mulan(path, labels) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """Read a Mulan ARFF multi-label file (dense or sparse rows).

    Parameters
    ----------
    path : str or PathLike
        The file; a name ending in ``.gz`` is gzip-compressed.
    labels : str, PathLike, list of str or int
        The Mulan XML file naming the label attributes, a list of label attribute names, or an int L
        meaning the last L attributes.  Label values must be 0 or 1.

    Returns
    -------
    X : scipy.sparse.csr_matrix, float32, shape (n_rows, n_features)
    Y : scipy.sparse.csr_matrix, float32 ones, shape (n_rows, n_labels)
        The label indicator.
    """
    fname = os.fspath(path)
    arff = read_arff(path, sparse=True)
    n_attr = len(arff.names)
    if isinstance(labels, (int, np.integer)) and not isinstance(labels, bool):
        if not 1 <= labels < n_attr:
            raise ValueError(f"labels={labels}: expected a number of label attributes in [1, {n_attr})")
        lab_cols = list(range(n_attr - int(labels), n_attr))
    else:
        names = read_mulan_xml(labels) if isinstance(labels, (str, os.PathLike)) else list(labels)
        pos = {n: i for i, n in enumerate(arff.names)}
        missing = [n for n in names if n not in pos]
        if missing:
            raise ValueError(f"{fname}: label attribute(s) {missing[:5]} named in the label list are not declared")
        lab_cols = [pos[n] for n in names]
    is_label = np.zeros(n_attr, bool)
    is_label[lab_cols] = True
    A = arff.X.tocsc()
    Y = A[:, lab_cols].tocsr()
    if Y.data.size and not np.isin(Y.data, (0.0, 1.0)).all():
        bad = int(np.argmax(~np.isin(Y.data, (0.0, 1.0))))
        row = row_of_entry(Y.indptr, bad)
        raise ValueError(f"{fname}: data row {row + 1}: label {arff.names[lab_cols[Y.indices[bad]]]!r} is "
                         f"{Y.data[bad]}, expected 0 or 1")
    X = A[:, np.flatnonzero(~is_label)].tocsr().astype(np.float32)
    if X.data.size and np.isnan(X.data).any():
        row = row_of_entry(X.indptr, int(np.argmax(np.isnan(X.data))))
        raise ValueError(f"{fname}: data row {row + 1} has a missing feature value ('?'); the multi-label "
                         "readers take finite features only (read_arff keeps '?' as NaN)")
    Y.eliminate_zeros()
    Y = sp.csr_matrix((np.ones(Y.nnz, np.float32), Y.indices, Y.indptr), shape=Y.shape)
    X.sort_indices()
    Y.sort_indices()
    return X, Y


def write_mulan(path, X, Y, xml_path=None, relation: str = "multigrove") -> None:
    """Write (X, Y) as a sparse Mulan ARFF file: numeric features ``f0..``, then ``{0,1}`` labels ``l0..``.

    Parameters
    ----------
    path : str or PathLike
        The file; a name ending in ``.gz`` is gzip-compressed.
    X : array-like or sparse matrix, shape (n_rows, n_features)
    Y : 0/1 indicator, array-like or sparse matrix, shape (n_rows, n_labels)
    xml_path : str or PathLike, optional
        Also write Mulan's XML file naming the labels here.
    relation : str, default "multigrove"
        The ARFF relation name.
    """
    X, Y = _as_pair(X, Y)
    n_features, L = X.shape[1], Y.shape[1]
    with _atomic_text(path) as fh:
        fh.write(f"@relation {relation}\n\n")
        fh.writelines(f"@attribute f{j} numeric\n" for j in range(n_features))
        fh.writelines(f"@attribute l{j} {{0,1}}\n" for j in range(L))
        fh.write("\n@data\n")
        for i in range(X.shape[0]):
            s, e = X.indptr[i], X.indptr[i + 1]
            items = [f"{j} {v:.9g}" for j, v in zip(X.indices[s:e].tolist(), X.data[s:e].tolist())]
            items += [f"{n_features + j} 1" for j in Y.indices[Y.indptr[i]:Y.indptr[i + 1]].tolist()]
            fh.write("{" + ",".join(items) + "}\n")
    if xml_path is not None:
        with _atomic_text(xml_path) as fh:
            fh.write('<?xml version="1.0" encoding="utf-8"?>\n<labels xmlns="http://mulan.sourceforge.net/labels">\n')
            fh.writelines(f'<label name="l{j}"></label>\n' for j in range(L))
            fh.write("</labels>\n")


# ------------------------------------------------------------------ .npz
_NPZ_VERSION = 1


def save_npz(path, X, Y) -> None:
    """Save (X, Y) as CSR arrays in one compressed ``.npz`` (no pickled objects); atomic.

    Parameters
    ----------
    path : str or PathLike
    X : array-like or sparse matrix, shape (n_rows, n_features)
    Y : 0/1 indicator, array-like or sparse matrix, shape (n_rows, n_labels)
    """
    X, Y = _as_pair(X, Y)
    with atomic_write(path) as fh:
        np.savez_compressed(fh, format=np.array("multigrove-xmc"), version=np.array(_NPZ_VERSION),
                            X_data=X.data.astype(np.float32), X_indices=X.indices, X_indptr=X.indptr,
                            X_shape=np.array(X.shape, np.int64), Y_indices=Y.indices, Y_indptr=Y.indptr,
                            Y_shape=np.array(Y.shape, np.int64))


def load_npz(path) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """Load (X, Y) written by ``save_npz``; every array is checked before use (nothing is unpickled).

    Parameters
    ----------
    path : str or PathLike

    Returns
    -------
    X : scipy.sparse.csr_matrix, float32, shape (n_rows, n_features)
    Y : scipy.sparse.csr_matrix, float32 ones, shape (n_rows, n_labels)
        The label indicator.
    """
    fname, z = open_npz(path, ".npz file")
    with z:
        need = ["format", "version", "X_data", "X_indices", "X_indptr", "X_shape", "Y_indices", "Y_indptr", "Y_shape"]
        missing = [k for k in need if k not in z.files]
        if missing:
            raise ValueError(f"{fname}: missing arrays {missing}; expected a file written by save_npz")
        if str(z["format"]) != "multigrove-xmc" or int(z["version"]) != _NPZ_VERSION:
            raise ValueError(f"{fname}: format {str(z['format'])!r} version {int(z['version'])}; expected "
                             f"'multigrove-xmc' version {_NPZ_VERSION}")
        out = []
        for name, data in (("X", z["X_data"]), ("Y", None)):
            indptr, indices = z[f"{name}_indptr"], z[f"{name}_indices"]
            shape = tuple(int(s) for s in z[f"{name}_shape"])
            if data is None:
                data = np.ones(indices.shape[0], np.float32)
            try:
                M = sp.csr_matrix((data, indices, indptr), shape=shape)
                M.check_format(full_check=True)
            except ValueError as err:
                raise ValueError(f"{fname}: {name} is not a valid CSR matrix ({err})") from None
            out.append(M)
    X, Y = out
    if X.shape[0] != Y.shape[0]:
        raise ValueError(f"{fname}: X has {X.shape[0]} rows but Y has {Y.shape[0]}")
    if X.data.size and not np.isfinite(X.data).all():
        raise ValueError(f"{fname}: X holds non-finite values")
    return X.astype(np.float32), Y
