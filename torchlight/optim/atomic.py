"""Crash-safe file writes: a temporary file in the same directory, fsynced, then renamed over the target."""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Callable
from typing import BinaryIO


def _default_mode() -> int:
    """The mode a new file gets from ``open()``: 0o666 less the process umask (read without changing it)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return 0o666 & ~int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    return 0o644


def _fsync_directory(directory: str) -> None:
    """Make a rename inside ``directory`` durable (POSIX; Windows has no directory handles)."""
    if os.name != "posix":
        return
    fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write(path: str | os.PathLike, write: Callable[[BinaryIO], None]) -> None:
    """Write ``path`` with ``write(handle)`` so that a crash leaves the old file or the new one, never part.

    The bytes go to a temporary file next to the target, which is flushed and fsynced, given
    the target's permissions, and renamed over it with ``os.replace``; the directory is then
    fsynced. On any error the temporary file is removed and the target is untouched. A symbolic
    link is written through (its target is replaced, the link stays).
    """
    target = os.path.realpath(os.fspath(path))
    directory = os.path.dirname(target)
    if os.path.isdir(target):
        raise IsADirectoryError(f"cannot write {os.fspath(path)!r}: it is a directory; pass a file path")
    if not os.path.isdir(directory):
        raise FileNotFoundError(
            f"cannot write {os.fspath(path)!r}: directory {directory!r} does not exist; create it first"
        )
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        mode = _default_mode()
    fd, temporary = tempfile.mkstemp(prefix=f".{os.path.basename(target)}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    _fsync_directory(directory)
