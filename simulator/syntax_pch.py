"""libclang's parse of the runtime prelude, precompiled once and loaded by every parse that has it.

Every preprocessed ``.cu`` source starts with the same 1.5-2 MB: the runtime header the build
force-includes (``cuda_sim.h``) with NVIDIA's headers and the C++ library (``pch.py`` finds its
ends). libclang parsed it again for every source, mode and pass; here the parse text is cut in
two:

* the header: the front end's own declarations (``linemap._PRELUDE``) and the prelude, parsed
  once as an incomplete unit and saved as a precompiled header in the build cache (keyed by its
  bytes, the parse's flags and the libclang library), beside the header's own text, which the
  precompiled header names and libclang checks;
* the main file: the whole parse text with every byte before the program's part blanked (spaces,
  newlines kept), parsed with ``-include-pch``.

The main file's offsets are the whole text's; the header's map back by :meth:`Layout.offset`
(its two pieces sit apart in the whole text: the source's head markers fall between them). A
parse that cannot use one (no prelude in the text, no writable cache, a header libclang will not
save or load) parses the whole text as before.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path

from . import pch
from .build_cache import cache_dir, cache_key, cached_output
from .errors import RUNTIME_DIR, SimBuildError
from .linemap import HD_BEGIN, HD_END

__all__ = ["ENABLED", "Layout", "layout", "parse"]

# Off, every parse reads the whole text (the tests compare the two).
ENABLED = True

# clang's CXTranslationUnit_ForSerialization (cindex names no constant for it).
_FOR_SERIALIZATION = 0x10
_FATAL = 4  # a diagnostic's severity: the parse stopped (an unusable precompiled header, among others)


@dataclass(frozen=True)
class Layout:
    """The parse text cut for a precompiled prelude: ``header`` (parsed once) and ``main``."""

    header: bytes
    main: bytes
    own: int  # bytes at the header's start that sit at the same offsets in the whole text
    shift: int  # what the rest of the header's offsets move by in the whole text

    def offset(self, raw: int) -> int:
        """The whole parse text's offset of a libclang offset (the header's or the main file's)."""
        if raw > len(self.header):
            return raw  # the main file's: its blanked start keeps every offset the whole text's
        return raw if raw < self.own else raw + self.shift


def layout(parse_text: str, text: str, inserted: list[tuple[int, int]]) -> Layout | None:
    """The cut of ``parse_text`` (``SourceMap``'s, made from ``text`` with ``inserted``'s pragmas,
    the first being the front end's own declarations), or None where the prelude cannot be split
    off as one piece of library code."""
    parts = pch.split(text, Path(RUNTIME_DIR) / "cuda_sim.h")
    if parts is None or not inserted:
        return None
    start, end = len(parts.head), len(parts.head) + len(parts.prelude)
    if any(start < at < end for at, _ in inserted):
        return None  # the program's own code inside the prelude: its pragmas differ per program
    # Parse-text offsets of the prelude: after what is inserted at its start, before its end's.
    before = [n for at, n in inserted[1:] if at <= start]
    s = start + inserted[0][1] + sum(before)
    e = end + inserted[0][1] + sum(n for at, n in inserted[1:] if at < end)
    own = parse_text[: inserted[0][1]]
    # The prelude must open in the same host-device state as the header's own start leaves it.
    if _depth(parse_text[:s]) != _depth(own):
        return None
    header = (own + parse_text[s:e]).encode("utf-8", "surrogateescape")
    whole = parse_text.encode("utf-8", "surrogateescape")
    own_b = len(own.encode("utf-8", "surrogateescape"))
    s_b = len(parse_text[:s].encode("utf-8", "surrogateescape"))
    e_b = s_b + len(header) - own_b
    main = whole[:e_b].translate(_BLANK) + whole[e_b:]
    return Layout(header, main, own_b, s_b - own_b)


_BLANK = bytes(10 if b == 10 else 32 for b in range(256))  # every byte a space, newlines kept


def _depth(text: str) -> int:
    """How many host-device stretches (``linemap``'s pragmas) are open at the end of ``text``."""
    return text.count(HD_BEGIN) - text.count(HD_END)


def _library_key(ci) -> str:
    """The libclang library's path, size and time: a precompiled header is that library's format."""
    name = ci.conf.lib._name
    try:
        info = os.stat(name)
    except (OSError, TypeError):
        return str(name)
    return f"{name} {info.st_size} {info.st_mtime_ns}"


def _precompiled(ci, index, cut: Layout, args: list[str]) -> Path | None:
    """The precompiled header of ``cut.header`` for a parse with ``args`` (built once, in the build
    cache), or None where it cannot be built."""
    try:
        folder = cache_dir()
    except SimBuildError:
        return None  # the parse needs no cache; the build that has one says what is wrong with it
    key = cache_key(cut.header, " ".join(args), _library_key(ci))
    source = folder / f"frontend-prelude-{key}.cuh"
    out = folder / f"frontend-prelude-{key}.pch"

    def produce(tmp: Path) -> None:
        # The header's text under its final name, which the precompiled header records.
        cached_output(source, lambda t: t.write_bytes(cut.header))
        opts = ci.TranslationUnit.PARSE_INCOMPLETE | _FOR_SERIALIZATION
        unit = index.parse(str(source), args=args, options=opts)
        if any(d.severity >= _FATAL for d in unit.diagnostics):
            raise SimBuildError("the runtime prelude did not parse")
        try:
            unit.save(str(tmp))
        except ci.TranslationUnitSaveError as exc:
            raise SimBuildError(f"libclang did not save the runtime prelude: {exc}") from None
        tmp.chmod(0o600)  # libclang writes a new file with the umask's mode; the cache's are private

    try:
        return cached_output(out, produce)
    except SimBuildError:
        return None


def parse(ci, index, name: str, args: list[str], whole: bytes, cut: Layout | None):
    """libclang's unit of the parse text ``whole`` (the file ``name``): with the precompiled
    prelude of ``cut`` where there is one and it loads, else of the whole text; and the cut used."""
    header = _precompiled(ci, index, cut, args) if cut is not None else None
    if header is not None and cut is not None:
        loaded = [*args, "-include-pch", str(header)]
        try:
            unit = index.parse(name, args=loaded, unsaved_files=[(name, cut.main)])
        except ci.TranslationUnitLoadError:
            # A header libclang will not load (its text changed since): the next parse builds it again.
            unit = None
            with contextlib.suppress(OSError):
                header.unlink()
        if unit is not None and not any(d.severity >= _FATAL for d in unit.diagnostics):
            return unit, cut
    return index.parse(name, args=args, unsaved_files=[(name, whole)]), None
