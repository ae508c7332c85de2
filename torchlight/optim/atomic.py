"""Crash-safe file writes: a temporary file in the same directory, fsynced, then renamed over the target."""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Callable
from typing import BinaryIO

_FILE_KINDS = {
    stat.S_IFDIR: "a directory",
    stat.S_IFIFO: "a FIFO (named pipe)",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
}


def file_kind(mode: int) -> str:
    """What a ``st_mode`` names, in words ("a FIFO (named pipe)", "a directory", ...)."""
    return _FILE_KINDS.get(stat.S_IFMT(mode), "not a regular file")


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


def _temporary_prefix(directory: str, name: str) -> str:
    """``.NAME.`` for the temporary file beside ``name``, NAME cut so that the whole temporary
    name (prefix, mkstemp's 8 characters, ``.tmp``) fits the file system's longest name."""
    try:
        longest = os.pathconf(directory, "PC_NAME_MAX")
    except (OSError, ValueError, AttributeError):
        longest = 255
    room = max(1, longest - len(".") - len(".") - 8 - len(".tmp"))
    return f".{name[:room]}."


def _preflight(path: str | os.PathLike) -> tuple[str, str, int | None]:
    """The target, its directory and its mode (None when new); the error :func:`atomic_write` would
    raise before writing a byte."""
    given = os.fspath(path)
    if os.fsdecode(given).endswith(tuple(sep for sep in (os.sep, os.altsep) if sep)):
        raise IsADirectoryError(
            f"cannot write {given!r}: a path ending in a separator names a directory; pass a file path"
        )
    target = os.path.realpath(given)
    directory = os.path.dirname(target)
    try:
        existing = os.stat(target).st_mode
    except FileNotFoundError:
        existing = None
    if existing is not None and stat.S_ISDIR(existing):
        raise IsADirectoryError(f"cannot write {given!r}: it is a directory; pass a file path")
    if existing is not None and not stat.S_ISREG(existing):
        # Renaming over it would silently turn a FIFO or a device (/dev/null) into a plain file.
        raise FileExistsError(
            f"cannot write {given!r}: it exists and is {file_kind(existing)}, not a regular file; "
            f"pass a new path or a regular file"
        )
    if existing is not None and (not existing & 0o222 or not os.access(target, os.W_OK)):
        # A rename would replace it all the same (the directory is what a rename needs): a file
        # made read-only is kept, as a plain write would keep it.
        raise PermissionError(
            f"cannot write {given!r}: it is read-only (mode {stat.S_IMODE(existing):04o}); make it "
            f"writable (chmod u+w) or pass another path"
        )
    if not os.path.isdir(directory):
        raise FileNotFoundError(
            f"cannot write {given!r}: directory {directory!r} does not exist; create it first"
        )
    return target, directory, existing


def check_writable(path: str | os.PathLike) -> None:
    """Raise now what :func:`atomic_write` would raise for ``path`` before writing (and
    PermissionError or OSError when its directory takes no new file), writing nothing that stays:
    a long job checks where its result goes before it starts."""
    target, directory, _ = _preflight(path)
    fd, temporary = tempfile.mkstemp(
        prefix=_temporary_prefix(directory, os.path.basename(target)), suffix=".tmp", dir=directory
    )
    os.close(fd)
    os.unlink(temporary)


def atomic_write(path: str | os.PathLike, write: Callable[[BinaryIO], None]) -> None:
    """Write ``path`` with ``write(handle)`` so that a crash leaves the old file or the new one, never part.

    The bytes go to a temporary file next to the target, which is flushed and fsynced, given
    the target's permissions, and renamed over it with ``os.replace``; the directory is then
    fsynced. On any error the temporary file is removed and the target is untouched. A symbolic
    link is written through (its target is replaced, the link stays). A target that exists and
    is not a regular file (a directory, a FIFO, a device such as ``/dev/null``), or a path ending
    in a separator, is refused (IsADirectoryError / FileExistsError) rather than replaced; so is
    a read-only file (PermissionError).
    """
    target, directory, existing = _preflight(path)
    mode = _default_mode() if existing is None else stat.S_IMODE(existing)
    prefix = _temporary_prefix(directory, os.path.basename(target))
    fd, temporary = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=directory)
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
