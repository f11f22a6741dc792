"""Model and data files: every one is written to a temporary file beside its target and renamed over
it only once complete, so a failed write never leaves half a file or destroys the previous one; .npz
files are read without unpickling."""
from __future__ import annotations

import hashlib
import os
import pickle  # only for its error type: nothing is ever unpickled
import tempfile
import zipfile
from contextlib import contextmanager
from typing import Iterable

import numpy as np


@contextmanager
def atomic_write(path: str | os.PathLike):
    """Yield a binary file handle; on success the data is flushed, synced and renamed to `path`,
    on error the temporary file is removed and `path` is left as it was."""
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise FileNotFoundError(f"cannot write {path}: the folder {folder} does not exist")
    if os.path.isdir(path):
        raise IsADirectoryError(f"cannot write {path}: it is a folder, not a file name")
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def open_npz(path: str | os.PathLike, what: str):
    """(file name, open NpzFile) with pickled objects refused; a file NumPy cannot read raises
    ValueError naming the file and ``what`` it was expected to be."""
    fname = os.fspath(path)
    try:
        return fname, np.load(fname, allow_pickle=False)
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, pickle.UnpicklingError) as err:
        raise ValueError(f"{fname}: not a readable {what} ({err})") from None


def checksum(parts: Iterable[bytes]) -> str:
    """The sha256 hex digest of the concatenated parts: the one checksum of every model file."""
    h = hashlib.sha256()
    for part in parts:
        h.update(part)
    return h.hexdigest()


def check_header(header, fmt: str, version: int, where: str) -> int:
    """Raise ValueError unless ``header`` (a model file's parsed header) names format ``fmt`` and a
    version this code reads (1 .. ``version``); return the file's version."""
    got = header.get("format") if isinstance(header, dict) else None
    if got != fmt:
        raise ValueError(f"{where} is not a {fmt} model (its format is {got!r})")
    found = header.get("version")
    if not isinstance(found, int) or isinstance(found, bool) or found < 1:
        raise ValueError(f"{where} has an invalid format version {found!r}")
    if found > version:
        raise ValueError(f"{where} has format version {found}, newer than this multigrove reads (<= {version}): "
                         "upgrade multigrove")
    return found
