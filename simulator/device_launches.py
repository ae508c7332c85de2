"""Launches in device code that clang's parse drops: a kernel template launched from a kernel.

clang does not implement dynamic parallelism: it refuses a kernel *template* named in a
``<<<...>>>`` inside a ``__global__`` or ``__device__`` function ("call to __global__ function from
__global__ function") and keeps only a recovery expression without the launch configuration
(a plain kernel is accepted). The front end finds those launches by the diagnostic and reads the
configuration from the source text instead.
"""

from __future__ import annotations

import re

__all__ = ["failed_device_launches", "split_config"]

_REFUSED = re.compile(r"call to __global__ function from __(?:global|device)__ function")
_OPEN = "([{"
_CLOSE = ")]}"


def failed_device_launches(diagnostics) -> set[int]:
    """Parse offsets of the launches clang refused because device code launches a kernel template."""
    found = set()
    for d in diagnostics:
        if d.severity < 3 or d.location.file is None:
            continue
        if any(_REFUSED.search(ch.spelling) for ch in d.children):
            found.add(d.location.offset)
    return found


def split_config(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """The comma-separated parts of ``text[start:end]`` (a launch configuration), outside brackets."""
    parts, depth, begin = [], 0, start
    for i in range(start, end):
        ch = text[i]
        if ch in _OPEN:
            depth += 1
        elif ch in _CLOSE:
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append((begin, i))
            begin = i + 1
    parts.append((begin, end))
    return [(a, b) for a, b in parts if text[a:b].strip()]
