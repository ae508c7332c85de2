"""What the simulator refuses by name, and the C library functions device code may call."""

from __future__ import annotations

import re

__all__ = ["DEVICE_LIBC", "MATH_HEADER", "UNDECLARED", "unsupported"]

# (name pattern, what it is, what to do instead): named constructs the simulator refuses.
UNSUPPORTED = [
    (
        r"__shfl(?:_up|_down|_xor)?|__ballot|__any|__all",
        "warp intrinsic without _sync (removed in CUDA 9)",
        "use the *_sync form with a mask",
    ),
]
UNSUPPORTED_RE = [(re.compile(p), what, fix) for p, what, fix in UNSUPPORTED]
# Clang's messages that name a declaration it could not find.
UNDECLARED = re.compile(
    r"(?:use of undeclared identifier|unknown type name|no template named|no member named"
    r"|use of undeclared label|no type named) '([A-Za-z_]\w*)'"
)

# C library functions CUDA also provides in device code (math functions are allowed by header).
DEVICE_LIBC = frozenset(
    "printf malloc free memcpy memset __assert_fail __assert_perror_fail __assert abs labs llabs"
    " clock".split()
)
MATH_HEADER = re.compile(r"math|cmath|std_abs|fenv|complex|limits|numeric")


def unsupported(name: str) -> tuple[str, str] | None:
    """(what it is, what to do instead) when ``name`` is a construct the simulator refuses."""
    for rx, what, fix in UNSUPPORTED_RE:
        if rx.fullmatch(name):
            return what, fix
    return None
