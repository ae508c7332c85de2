"""What preprocessing a source read, recorded in the cache, so that a later build of the same
source with the same flags finds its object without running ``g++ -E`` again.

A manifest (``STEM-MODE-KEY.deps``, a cache artefact checked against its record like any other)
is keyed by everything the preprocessor is given (the source's path, the flags, the working folder,
the compiler and the environment variables it reads) and the object's own key parts besides the
preprocessed text. It holds the object's name and:

* the SHA-256 of every file the preprocessor read (the line markers of its output name them),
  with the identity it had (device, inode, size, modification and change times, which any write
  changes and no user can set back): a file whose identity is unchanged is not read again;
* the modification and change times of every folder where a new file could change what the
  preprocessor finds: each folder of the include search (as ``g++ -v`` lists it, with those it
  skips as missing) and each folder holding a file read, and for each file read and each of
  those folders, the folder where a file of the same name relative to its search folder would be
  found first (or, when that folder does not exist, the nearest one above it, where creating it
  would show).

The object is used only when every file still has its digest and every folder its times; else the
source is preprocessed and keyed by its text, as without a manifest. None is written when a file
or folder changed within ``SETTLE_S`` seconds before the preprocessor started (a change inside
the file system's time resolution, or during the run, would go unseen), when a file read is not a
regular file or its name in the line markers is escaped or not ASCII, when a program's own file
tests ``__has_include`` (which can depend on a file that no one has read yet), or when one uses
``__DATE__``, ``__TIME__`` or ``__TIMESTAMP__``. (``source_compile.py`` writes none either for a
source whose flags make the preprocessor read a file it does not name: ``@FILE``, ``-imacros``.)
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
from collections.abc import Set
from pathlib import Path

from .build_cache import cache_key, file_identity, publish, recorded_digest, verified
from .compiler_run import invoke
from .linemap import marker_matches

__all__ = [
    "ENVIRONMENT",
    "SETTLE_S",
    "environment_key",
    "lookup",
    "manifest_key",
    "record",
    "search_dirs",
    "search_list",
]

# The environment variables that change what g++ preprocesses.
ENVIRONMENT = (
    "CPATH",
    "C_INCLUDE_PATH",
    "CPLUS_INCLUDE_PATH",
    "GCC_EXEC_PREFIX",
    "COMPILER_PATH",
    "SOURCE_DATE_EPOCH",
)
# How long before a preprocessor run a file or folder it depends on must have last changed.
SETTLE_S = 2.0
_MARKER = re.compile(r'(?m)^# \d+ "((?:[^"\\]++|\\.)*+)"')
_VOLATILE = (b"__DATE__", b"__TIME__", b"__TIMESTAMP__")
_READ_LIMIT = 64 << 20  # a file read is a header, never this large; larger, no manifest


def environment_key() -> str:
    """The values of :data:`ENVIRONMENT`, as a manifest's key takes them."""
    return "\n".join(f"{name}={os.environ.get(name, '')}" for name in ENVIRONMENT)


def manifest_key(*parts: str) -> str:
    """The key of a manifest: ``parts`` (what the preprocessor and the object's key are given),
    the working folder and :func:`environment_key`."""
    return cache_key("manifest 2", os.getcwd(), environment_key(), *parts)


def search_dirs(command: list[str]) -> list[str]:
    """The include search folders of the preprocessor ``command`` (its flags, no input), as
    ``g++ -v`` lists them, with those it leaves out because they do not exist yet (a header
    created there later would be found); empty when the compiler does not list them."""
    return search_list(invoke([*command, "-E", "-v", "/dev/null"], "the include search path").stderr)


def search_list(messages: str) -> list[str]:
    """The include search folders that the messages of a preprocessor run with ``-v`` list (as
    :func:`search_dirs` gives them); empty when they list none."""
    found: list[str] = []
    inside = False
    for line in messages.splitlines():
        missing = re.fullmatch(r'ignoring nonexistent directory "([^"]*)"', line)
        if missing:
            found.append(os.path.normpath(missing.group(1)))
        elif "search starts here:" in line:
            inside = True
        elif line.startswith("End of search list."):
            break
        elif inside and line.startswith(" "):
            found.append(os.path.normpath(line.strip().removesuffix(" (framework directory)")))
    return found


def _files_read(texts: list[str]) -> list[str] | None:
    """The files that the line markers of the preprocessed ``texts`` name (no ``<built-in>``,
    no working-folder marker); None when a name is escaped or not ASCII (no manifest then)."""
    # Thousands of markers name a few hundred files: each name is looked at once.
    raw = {m.group(1) for text in texts for m in marker_matches(_MARKER, text)}
    names: set[str] = set()
    for name in raw:
        if "\\" in name or not name.isascii():
            return None
        if not name.startswith("<") and not name.endswith("/"):
            names.add(os.path.normpath(name))
    return sorted(names)


def _read_regular(path: str) -> bytes | None:
    """The bytes of ``path`` when it is a regular file (never a FIFO or a device, which could block)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > _READ_LIMIT:
            return None
        with os.fdopen(fd, "rb", closefd=False) as fh:
            return fh.read()
    finally:
        os.close(fd)


def _unchanged(path: str, digest: str, identity: str) -> bool:
    """Whether the file ``path`` still has the SHA-256 ``digest``: at once when its identity is
    still ``identity``, else by reading it."""
    try:
        info = os.stat(path)
    except OSError:
        return False
    if stat.S_ISREG(info.st_mode) and file_identity(info) == identity:
        return True
    data = _read_regular(path)
    return data is not None and hashlib.sha256(data).hexdigest() == digest


def _times(path: str) -> list[int] | None:
    """A folder's modification and change times, None when it is not a folder."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return [info.st_mtime_ns, info.st_ctime_ns] if stat.S_ISDIR(info.st_mode) else None


def _existing(folder: str, known: dict[str, str]) -> str:
    """``folder`` or the nearest folder above it that exists (``known``: the answers so far, for
    ``folder`` and those above it: many folders asked about share the ones above them)."""
    below = []
    while folder not in known:
        parent = os.path.dirname(folder)
        if os.path.isdir(folder) or parent == folder:
            known[folder] = folder
            break
        below.append(folder)
        folder = parent
    found = known[folder]
    for f in below:
        known[f] = found
    return found


def _watched(files: list[str], search: list[str]) -> set[str]:
    """The folders where a new file could change what a preprocessor that read ``files`` with the
    include ``search`` path finds (see the module's docstring)."""
    roots = list(dict.fromkeys([*search, *(os.path.dirname(f) for f in files)]))
    prefixes = [(r, r.rstrip("/") + "/") for r in roots]
    relative: set[str] = set()
    for f in files:
        # Both normalized, a file under a root is the root's path, a slash and the rest (what
        # os.path.relpath gives, without its work on every pair); the working folder's files
        # have the root "", which relpath takes for the working folder's absolute path.
        under = [f[len(p) :] if r else os.path.relpath(f, r) for r, p in prefixes if f.startswith(p)]
        relative.update(os.path.dirname(rel) for rel in under or [os.path.basename(f)])
    known: dict[str, str] = {}
    joined = {os.path.normpath(os.path.join(root, rel)) for root in roots for rel in relative}
    return {_existing(folder, known) for folder in joined}


def record(
    manifest: Path,
    obj: Path,
    texts: list[str],
    command: list[str],
    started: float,
    user_files: Set[str],
    search: list[str] | None = None,
) -> None:
    """Write ``manifest`` for the object ``obj`` built from the preprocessed ``texts`` of the
    preprocessor ``command`` (its flags, no input) started at ``started`` (``time.time()``);
    nothing when a file or folder is too recent, unreadable or volatile (the module's docstring
    says which). ``user_files``: the program's own files, whose ``__has_include`` rules it out.
    ``search``: the command's include search folders when its run listed them (:func:`search_list`),
    else None (they are asked for)."""
    files = _files_read(texts)
    if files is None:
        return
    settled = int((started - SETTLE_S) * 1e9)
    digests = {}
    for f in files:
        data = _read_regular(f)
        if data is None or any(word in data for word in _VOLATILE):
            return
        if f in user_files and b"__has_include" in data:
            return
        info = os.stat(f)
        # A write after the read above would show here as a change too recent to record.
        if max(info.st_mtime_ns, info.st_ctime_ns) >= settled:
            return
        digests[f] = [hashlib.sha256(data).hexdigest(), file_identity(info)]
    folders = {}
    for folder in sorted(_watched(files, search_dirs(command) if search is None else search)):
        times = _times(folder)
        if times is None or max(times) >= settled:
            return
        folders[folder] = times
    digest = recorded_digest(obj)
    if digest is None:
        return
    body = {"object": obj.name, "sha256": digest, "files": digests, "folders": folders}
    try:
        publish(manifest, json.dumps(body, sort_keys=True).encode())
    except OSError:
        pass  # the object is built; without its manifest the next build preprocesses again


def lookup(manifest: Path) -> Path | None:
    """The object ``manifest`` names when it is verified and every file and folder it lists is as
    it was recorded; else None (the source is preprocessed)."""
    if not verified(manifest):
        return None
    try:
        body = json.loads(manifest.read_bytes())
        obj = manifest.with_name(body["object"])
        files, folders = body["files"], body["folders"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if obj.parent != manifest.parent or recorded_digest(obj) != body.get("sha256"):
        return None
    for folder, times in folders.items():
        if _times(folder) != times:
            return None
    try:
        for f, (digest, identity) in files.items():
            if not _unchanged(f, digest, identity):
                return None
    except (TypeError, ValueError):
        return None  # not a manifest this version wrote
    return obj
