"""The hardware layer: every tensor op reduces to map, zip, reduce and matmul (+ fused ops).

``get_backend(device)`` resolves a device hint into a backend instance through the one
backend registry (``registry``): ``registry.DEVICES`` says which backend a device name means
here, and why; the registry's table of built backends answers every later lookup in one hop.
"""

from __future__ import annotations

from typing import Any

from .base import Backend
from .cpu import CPUBackend
from .registry import BACKENDS, DEVICE_ENV, get_backend


def __getattr__(name: str) -> Any:
    # Each lives in its own package; importing it stays cheap (numba loads on first use).
    if name == "NumbaBackend":
        from .numba_twin.backend import NumbaBackend

        return NumbaBackend
    if name == "CudaBackend":
        from .numba_cuda.backend import CudaBackend

        return CudaBackend
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["BACKENDS", "DEVICE_ENV", "Backend", "CPUBackend", "get_backend", "NumbaBackend", "CudaBackend"]
