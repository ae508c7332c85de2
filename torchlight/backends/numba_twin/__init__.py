"""The numba CPU twin of the CUDA kernels: ``backend`` (NumbaBackend) and its ``kernels``.

Its public names, ``NumbaBackend`` and ``numba_backend``, are exported here and loaded on first
use, so importing this package never imports numba.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["NumbaBackend", "numba_backend"]


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(".backend", __package__), name)
    globals()[name] = value
    return value
