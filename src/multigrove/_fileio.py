"""Model and data files: every one is written to a temporary file beside its target and renamed over
it only once complete, so a failed write never leaves half a file or destroys the previous one; .npz
files are read without unpickling."""
from __future__ import annotations

import os
import pickle  # only for its error type: nothing is ever unpickled
import tempfile
import zipfile
from contextlib import contextmanager

import numpy as np


@contextmanager
def atomic_write(path: str | os.PathLike):
    """Yield a binary file handle; on success the data is flushed, synced and renamed to `path`,
    on error the temporary file is removed and `path` is left as it was."""
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
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
