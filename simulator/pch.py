"""The runtime's prelude of a translated source, split off so that g++ compiles it once.

Every translated ``.cu`` source starts with the same text: the runtime header that the build
force-includes (``cuda_sim.h``) with NVIDIA's headers and the C++ library it includes, about
1.5 MB that g++ spends most of a small program's compile on. This module cuts the translated
text into

* the head: the line markers before the prelude (the source's name and the working folder),
* the prelude: from ``<built-in>`` to the return from ``cuda_sim.h``, and
* the rest: the source's own text (its line markers keep every diagnostic's file and line),

so that the build can compile the prelude into a precompiled header (one per content and
flags, in the build cache) and compile ``head + #pragma GCC pch_preprocess + rest``, which gives
g++ the same declarations in the same order as the whole text does.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["Split", "main_text", "split", "usable_path"]

_BUILT_IN = '# 0 "<built-in>"\n'
_BACK_TO_SOURCE = '\n# 0 "<command-line>" 2\n'


@dataclass(frozen=True)
class Split:
    """A translated source cut at the prelude's ends (``head + prelude + rest`` is the whole)."""

    head: str
    prelude: str
    rest: str


def split(text: str, runtime_header: Path) -> Split | None:
    """``text`` (a translated source) cut around the force-included ``runtime_header``; None when
    its line markers are not laid out as ``g++ -E`` writes them for one force-included header."""
    start = text.find(_BUILT_IN)
    if start < 0 or any(line and not line.startswith("# ") for line in text[:start].split("\n")):
        return None
    entry = text.find(f'\n# 1 "{runtime_header}" 1\n', start)
    if entry < 0:
        return None
    end = text.find(_BACK_TO_SOURCE, entry)
    if end < 0:
        return None
    end += len(_BACK_TO_SOURCE)
    if not text.startswith("# 1 ", end):  # the source's own first line marker
        return None
    return Split(text[:start], text[start:end], text[end:])


def usable_path(path: Path) -> bool:
    """Whether ``path`` can be written in a ``#pragma`` string as it is (no quote, backslash,
    newline or character outside printable ASCII)."""
    name = str(path)
    return all(" " <= ch <= "~" for ch in name) and '"' not in name and "\\" not in name


def main_text(parts: Split, header: Path) -> str:
    """The text g++ compiles with the precompiled ``header`` in place of the prelude."""
    return f'{parts.head}#pragma GCC pch_preprocess "{header}"\n{parts.rest}'
