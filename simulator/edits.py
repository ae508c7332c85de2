"""What a syntax-tree walk collects: the edits to the preprocessed text, and each function's facts."""

from __future__ import annotations

from dataclasses import dataclass, field

from .errors import SimBuildError
from .linemap import SourceMap

__all__ = ["Edit", "Func", "on_device", "source_error"]


@dataclass
class Edit:
    """A rewrite of the preprocessed text ``[start, end)`` (an empty range inserts)."""

    start: int
    end: int
    parts: list  # str, or (start, end) of a sub-range rendered with the edits inside it
    children: list = field(default_factory=list)
    exact: bool = False  # its text brings its own line markers: no padding to the line count


@dataclass
class Func:
    """A function the walk met: its kind, body, callees and whether it waits (barrier-free marking)."""

    key: int
    name: str
    kind: str  # "global", "device", "hd", "host"
    user: bool
    body: tuple[int, int] | None = None
    calls: set = field(default_factory=set)
    waits: bool = False
    unknown: bool = False
    # The first wait or unknown callee of its own: (position, what it is), for the launch log's
    # reason the kernel keeps fibers (``TranslationUnit.fibers_why``).
    why: tuple[int, str] | None = None
    sites: dict = field(default_factory=dict)  # callee key -> position of the first call of it


def on_device(func: Func | None) -> bool:
    """Whether ``func`` is device code (``__global__``, ``__device__`` or ``__host__ __device__``)."""
    return func is not None and func.kind in ("global", "device", "hd")


def source_error(src: SourceMap, pos: int, msg: str) -> SimBuildError:
    """A build error naming the user's file and line of preprocessed offset ``pos``."""
    path, line = src.where(pos)
    return SimBuildError(f"{path}:{line}: {msg}")
