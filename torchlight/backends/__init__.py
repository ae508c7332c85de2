"""The hardware layer: every tensor op reduces to map, zip, reduce and matmul (+ fused ops).

``get_backend(device)`` resolves a device hint into a backend instance through the one
backend registry: ``registry.DEVICES`` says which backend a device name means here, and why.
"""

from __future__ import annotations

import os
from typing import Any

from ..core.device import Device
from .base import Backend
from .cpu import CPUBackend, cpu_backend
from .registry import BACKENDS, device_backend

DEVICE_ENV = "TORCHLIGHT_DEVICE"


def get_backend(device: None | str | Device | Backend = None) -> Backend:
    """Resolve None (``TORCHLIGHT_DEVICE``, else CPU), a Device, a string or a backend."""
    if isinstance(device, Backend):
        return device
    if device is None:
        spec = os.environ.get(DEVICE_ENV, "").strip()
        if not spec:
            return cpu_backend()
        try:
            device = Device(spec)
        except ValueError as err:
            raise ValueError(f"{DEVICE_ENV}={spec!r} is not a device: {err}") from None
    elif not isinstance(device, Device):
        device = Device(device)
    if device.index not in (None, 0):
        raise ValueError(
            f"device {str(device)!r} is not available: torchlight drives one GPU, use 'cuda' or 'cuda:0'"
        )
    return device_backend(device.type)


def __getattr__(name: str) -> Any:
    # The numba backends live in .cuda; importing it stays cheap (numba loads on first use).
    if name in ("NumbaBackend", "CudaBackend"):
        from . import cuda

        return getattr(cuda, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["BACKENDS", "Backend", "CPUBackend", "get_backend", "NumbaBackend", "CudaBackend"]
