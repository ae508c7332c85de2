"""One writer at a time for a compiled kernel's on-disk cache entry.

numba saves a kernel to its cache by reading the function's index, picking the first unused data
file number, and writing the index and the data file, with no lock. Two processes compiling
different forms of one kernel at once (pytest-xdist workers, data-loader processes) can both
pick the same number: the index then names one kernel's key and the data file holds the other
kernel's machine code, and a later process loads the wrong kernel and computes wrong numbers.
An exclusive ``flock`` on a file beside the index around each save (and each flush of the index)
makes those read-pick-write steps one at a time across processes.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Callable
from typing import Any

__all__ = ["serialize_cache_writes"]


def _locked(method: Callable[..., Any], lock_path: str) -> Callable[..., Any]:
    """``method`` run while this process holds the exclusive lock on ``lock_path``."""

    def run(*args: Any) -> Any:
        try:
            fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
        except OSError:
            return method(*args)  # an unwritable cache folder: numba's own save fails and says so
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            return method(*args)
        finally:
            os.close(fd)

    return run


def serialize_cache_writes(dispatcher: Any) -> Any:
    """Make ``dispatcher``'s (a ``numba.njit(cache=True)`` function's) cache saves take a lock; returns it."""
    cache_file = getattr(getattr(dispatcher, "_cache", None), "_cache_file", None)
    if cache_file is None or not hasattr(cache_file, "_index_path"):
        raise RuntimeError(
            f"numba {_numba_version()}'s cache has no index file where torchlight expects one; "
            "install the numba release torchlight pins (pip install 'torchlight[numba]')"
        )
    lock_path = cache_file._index_path + ".lock"
    cache_file.save = _locked(cache_file.save, lock_path)
    cache_file.flush = _locked(cache_file.flush, lock_path)
    return dispatcher


def _numba_version() -> str:
    import numba

    return numba.__version__
