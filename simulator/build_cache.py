"""The build cache: a folder of the user's own whose artefacts are checked before they are used.

Everything the build caches (objects, shared libraries, programs) is later linked, loaded or
run as the user, so the cache must hold only what this user's builds wrote:

* the folder (``$SIMULATOR_CACHE``, else ``build/simulator-cache``) is created private (0700);
  an existing one that another user owns, or that others may write to, is refused with one line;
* each artefact has a record beside it, ``NAME.sha256``, written after the artefact: its SHA-256
  (``sha256sum``'s line) and the identity it had when the record was written (device, inode,
  size, modification and change times, which any write changes and no user can set back). An
  artefact is used only when its record is there and its identity, or else its content, matches,
  so a truncated, damaged or planted file is rebuilt, never run, while an unchanged one is not
  read again;
* a second builder of the same artefact waits on ``NAME.lock`` (:class:`simulator.file_lock.FileLock`,
  which opens it without following links, does not truncate it, and wakes the waiter as soon as
  the first builder is done).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import re
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path

from .errors import SimBuildError
from .file_lock import FileLock

__all__ = [
    "CACHE_VARIABLE",
    "cache_dir",
    "cache_key",
    "cache_stem",
    "cached_output",
    "file_identity",
    "lock",
    "publish",
    "recorded_digest",
    "verified",
    "write_new",
]

CACHE_VARIABLE = "SIMULATOR_CACHE"
_CHECKOUT = Path(__file__).resolve().parent.parent


def _default_cache() -> Path:
    """``build/simulator-cache`` of a source checkout; installed, the user's cache folder (never
    site-packages)."""
    if (_CHECKOUT / "pyproject.toml").is_file():
        return _CHECKOUT / "build" / "simulator-cache"
    import platformdirs

    return Path(platformdirs.user_cache_dir("torchlight")) / "simulator-cache"


DEFAULT_CACHE = _default_cache()
_RECORD_SUFFIX = ".sha256"


def _describe(folder: Path, configured: bool) -> str:
    return f"{CACHE_VARIABLE}={folder}" if configured else f"the build cache {folder}"


def _fix(folder: Path, configured: bool) -> str:
    if configured:
        return f"point {CACHE_VARIABLE} at a folder of your own (it is created private), or unset it"
    return f"remove it (rm -r {folder}) or set {CACHE_VARIABLE} to a folder of your own"


def cache_dir() -> Path:
    """The build cache (``$SIMULATOR_CACHE`` or ``build/simulator-cache``), created private (0700).

    :class:`SimBuildError` in one line, naming the folder and the fix, when it cannot be created,
    is not a folder, belongs to another user, may be written by other users, or is not writable:
    whoever can write there could plant a program that the next run executes.
    """
    raw = os.environ.get(CACHE_VARIABLE, "")
    configured = raw != ""
    folder = Path(raw) if configured else DEFAULT_CACHE
    what = _describe(folder, configured)
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    except FileExistsError:
        raise SimBuildError(f"{what} is not a folder; {_fix(folder, configured)}") from None
    except OSError as exc:
        problem = f"cannot create it ({exc.strerror})"
        raise SimBuildError(f"{what}: {problem}; {_fix(folder, configured)}") from None
    info = folder.stat()
    if not stat.S_ISDIR(info.st_mode):
        raise SimBuildError(f"{what} is not a folder; {_fix(folder, configured)}")
    if info.st_uid != os.geteuid():
        raise SimBuildError(
            f"{what} belongs to user id {info.st_uid}, not to you (user id {os.geteuid()}): a program "
            f"planted there would run as you; {_fix(folder, configured)}"
        )
    if info.st_mode & 0o022:
        raise SimBuildError(
            f"{what} may be written by other users (mode {stat.S_IMODE(info.st_mode):03o}): a program "
            f"planted there would run as you; make it private (chmod 700 {folder}) or "
            f"{_fix(folder, configured)}"
        )
    if not os.access(folder, os.W_OK | os.X_OK):
        raise SimBuildError(f"{what} is not writable; {_fix(folder, configured)}")
    return folder


def _open_private(path: Path) -> int:
    """A descriptor of the regular file ``path`` that this user owns and only this user may write
    (a link is never followed); OSError otherwise."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o022:
        os.close(fd)
        raise OSError(errno.EPERM, "not a private regular file", str(path))
    return fd


def _digest(fd: int) -> str:
    h = hashlib.sha256()
    with os.fdopen(fd, "rb", closefd=False) as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _record_path(final: Path) -> Path:
    return final.with_name(final.name + _RECORD_SUFFIX)


def file_identity(info: os.stat_result) -> str:
    """What a file's content cannot change without changing: device, inode, size, modification
    and change times (any write changes the change time, and no user can set it back)."""
    return f"{info.st_dev} {info.st_ino} {info.st_size} {info.st_mtime_ns} {info.st_ctime_ns}"


def _identity(fd: int) -> str:
    return f"identity {file_identity(os.fstat(fd))}"


def recorded_digest(final: Path) -> str | None:
    """The SHA-256 of ``final`` when it is an artefact this user's build wrote, unchanged since
    (its record matches); else None."""
    try:
        fd = _open_private(final)
    except OSError:
        return None
    try:
        try:
            rfd = _open_private(_record_path(final))
        except OSError:
            return None
        with os.fdopen(rfd, "rb") as fh:
            lines = fh.read(512).decode("ascii", "replace").splitlines()
        if len(lines) != 2:
            return None
        digest, identity = lines[0].split(" ", 1)[0], lines[1]
        return digest if identity == _identity(fd) or _digest(fd) == digest else None
    finally:
        os.close(fd)


def verified(final: Path) -> bool:
    """Whether ``final`` is an artefact this user's build wrote, unchanged since (its record matches)."""
    return recorded_digest(final) is not None


def write_new(path: Path, data: bytes) -> None:
    """Create ``path`` (private, never through a link or over an existing file) holding ``data``."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)


def _publish(tmp: Path, final: Path) -> None:
    """Move the built ``tmp`` to ``final``, then write its record beside it (atomically, after it)."""
    fd = os.open(tmp, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        digest = _digest(fd)
        os.replace(tmp, final)
        identity = _identity(fd)  # after the rename, which changes the change time
    finally:
        os.close(fd)
    record = _record_path(final)
    rfd, rtmp = tempfile.mkstemp(dir=final.parent, prefix=".record-", suffix=".tmp")
    try:
        with os.fdopen(rfd, "wb") as fh:
            fh.write(f"{digest}  {final.name}\n{identity}\n".encode())
        os.replace(rtmp, record)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(rtmp)


def _lock(path: Path) -> FileLock:
    """The lock on ``path`` (a flock): created 0600, never opened through a link."""
    with contextlib.suppress(FileNotFoundError):
        if not stat.S_ISREG(path.lstat().st_mode):
            path.unlink()  # a link (or pipe) where the lock belongs: removed, not followed
    # One planted after this check fails the lock's O_NOFOLLOW open (ELOOP): an OSError, below.
    return FileLock(path)


def lock(path: Path) -> FileLock:
    """An exclusive lock on the file ``path`` (a ``with`` block holds it), as the cache's own."""
    return _lock(path)


def cached_output(final: Path, produce: Callable[[Path], None]) -> Path:
    """``final`` when it is a verified artefact; else run ``produce(tmp)`` and move ``tmp`` there.

    A lock file makes a second builder of the same artefact (another pytest worker) wait for
    the first instead of compiling it again; the rename keeps readers from seeing half a file,
    and the record written after it keeps them from trusting a file it does not describe.
    :class:`SimBuildError` in one line when the cache cannot be written (a full disk, a name
    too long for the file system).
    """
    if verified(final):
        return final
    try:
        with _lock(final.with_name(final.name + ".lock")):
            if verified(final):
                return final
            fd, tmp = tempfile.mkstemp(dir=final.parent, prefix=final.name + ".", suffix=final.suffix)
            os.close(fd)
            try:
                produce(Path(tmp))
                _publish(Path(tmp), final)
            finally:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(tmp)
    except OSError as exc:
        raise SimBuildError(
            f"cannot write {final.name} in the build cache {final.parent}: {exc.strerror or exc}; "
            f"free space there or point {CACHE_VARIABLE} at another folder"
        ) from None
    return final


def publish(final: Path, data: bytes) -> None:
    """Write ``data`` as the artefact ``final``, replacing the one there, with its record (a file
    that a later build rewrites, such as a source's manifest); OSError when it cannot be written."""
    with _lock(final.with_name(final.name + ".lock")):
        fd, tmp = tempfile.mkstemp(dir=final.parent, prefix=final.name + ".", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            _publish(Path(tmp), final)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)


def cache_key(*parts: str | bytes) -> str:
    """The key of an artefact made from ``parts`` (its inputs), as its name in the cache carries it."""
    h = hashlib.sha256()
    for p in parts:
        h.update(p if isinstance(p, bytes) else p.encode("utf-8", "surrogateescape"))
        h.update(b"\0")
    return h.hexdigest()[:20]


def cache_stem(name: str) -> str:
    """``name`` as the start of a cache file's name: safe characters, short enough that the name
    with its key and a temporary suffix fits every file system (the key tells sources apart)."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:64]
