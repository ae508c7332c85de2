"""Device: where a tensor's backend runs ("cpu" or "cuda[:index]")."""

from __future__ import annotations

import numpy as np

ACCEPTED_FORMS = "'cpu', 'cuda', or 'cuda:N' with N a non-negative integer"
DEVICE_TYPES = ("cpu", "cuda")


class Device:
    """A device name parsed once: ``Device("cpu")``, ``Device("cuda")``, ``Device("cuda:0")``."""

    __slots__ = ("type", "index")

    def __init__(self, spec: str | Device, index: int | None = None) -> None:
        """Parse ``spec`` (and an optional ``index``), or raise naming it and the accepted forms."""
        if isinstance(spec, Device):
            spec, index = spec.type, spec.index if index is None else index
        if index is not None:
            if isinstance(index, bool) or not isinstance(index, (int, np.integer)):
                raise TypeError(
                    f"device index {index!r} for {spec!r} is a {type(index).__name__}: "
                    f"pass a non-negative int, e.g. Device('cuda', 0)"
                )
            index = int(index)
        if not isinstance(spec, str):
            raise ValueError(f"unknown device {spec!r}: expected {ACCEPTED_FORMS}")
        kind, sep, number = spec.strip().lower().partition(":")
        if sep:
            if index is not None:
                raise ValueError(
                    f"device {spec!r} already names an index: pass index={index!r} or ':N', not both"
                )
            if not (number.isascii() and number.isdigit()):
                raise ValueError(f"unknown device {spec!r}: expected {ACCEPTED_FORMS}")
            index = int(number)
        if kind not in DEVICE_TYPES:
            raise ValueError(f"unknown device {spec!r}: expected {ACCEPTED_FORMS}")
        if index is not None and (not isinstance(index, int) or index < 0):
            raise ValueError(f"device index {index!r} for {spec!r}: expected a non-negative integer")
        if kind == "cpu" and index not in (None, 0):
            raise ValueError(f"unknown device {spec!r}: the CPU has no index but 0; use 'cpu'")
        self.type = kind
        self.index = None if kind == "cpu" else index

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            try:
                other = Device(other)
            except ValueError:
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
