"""Atomic file writes: every model and data file is written to a temporary file beside its target
and renamed over it only once complete, so a failed write never leaves half a file or destroys the
previous one."""
from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager


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
