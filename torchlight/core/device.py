"""Device: where a tensor's backend runs ("cpu" or "cuda[:index]")."""

from __future__ import annotations

import numpy as np

ACCEPTED_FORMS = "'cpu', 'cuda', or 'cuda:N' with N a non-negative integer (lower case, no spaces)"
DEVICE_TYPES = ("cpu", "cuda")
MAX_INDEX = 2**31 - 1  # CUDA numbers devices with a C int


def _check_index(index: object, spec: object) -> int:
    if isinstance(index, (bool, np.bool_)) or not isinstance(index, (int, np.integer)):
        raise TypeError(
            f"device index {index!r} for {spec!r} is a {type(index).__name__}: "
            f"pass a non-negative int, e.g. Device('cuda', 0)"
        )
    if not 0 <= index <= MAX_INDEX:
        raise ValueError(
            f"device index {index!r} for {spec!r} is out of range: expected a non-negative integer "
            f"of at most {MAX_INDEX}"
        )
    return int(index)


class Device:
    """A device name parsed once: ``Device("cpu")``, ``Device("cuda")``, ``Device("cuda:0")``."""

    __slots__ = ("type", "index")

    def __init__(self, spec: str | Device, index: int | None = None) -> None:
        """Parse ``spec`` (and an optional ``index``), or raise naming it and the accepted forms."""
        if isinstance(spec, Device):
            spec, index = spec.type, spec.index if index is None else index
        if not isinstance(spec, str):
            raise TypeError(
                f"device must be a string ({ACCEPTED_FORMS}) or a Device, got {type(spec).__name__} {spec!r}"
            )
        if index is not None:
            index = _check_index(index, spec)
        kind, sep, number = spec.partition(":")
        if kind not in DEVICE_TYPES:
            raise ValueError(f"unknown device {spec!r}: expected {ACCEPTED_FORMS}")
        if sep:
            if index is not None:
                raise ValueError(
                    f"device {spec!r} already names an index: pass index={index!r} or ':N', not both"
                )
            if not (number.isascii() and number.isdigit()):
                raise ValueError(f"unknown device {spec!r}: expected {ACCEPTED_FORMS}")
            if len(number) > len(str(MAX_INDEX)) or int(number) > MAX_INDEX:
                raise ValueError(
                    f"device {spec!r}: index {number} is out of range (at most {MAX_INDEX}); "
                    f"expected {ACCEPTED_FORMS}"
                )
            index = int(number)
        if kind == "cpu" and index not in (None, 0):
            raise ValueError(f"unknown device {spec!r}: the CPU has no index but 0; use 'cpu'")
        self.type = kind
        self.index = None if kind == "cpu" else index

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            try:
                other = Device(other)
            except (TypeError, ValueError):
                return False
        if not isinstance(other, Device):
            return NotImplemented
        return self.type == other.type and self.index == other.index

    def __hash__(self) -> int:
        return hash((self.type, self.index))

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __repr__(self) -> str:
        return f"Device({str(self)!r})"
