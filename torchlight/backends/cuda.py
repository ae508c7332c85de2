"""NumbaBackend (the CPU twin) and CudaBackend (numba-cuda on an NVIDIA GPU).

Public home of ``NumbaBackend``, ``numba_backend``, ``CudaProvider``, ``CudaBackend``,
``cuda_backend`` and ``CudaCKernelProvider``. Each lives in its own module and is loaded on
first use, so importing this module never imports numba.
"""

from __future__ import annotations

import importlib

_HOMES = {
    "NumbaBackend": "numba_twin",
    "numba_backend": "numba_twin",
    "CudaProvider": "cuda_provider",
    "CudaBackend": "cuda_provider",
    "cuda_backend": "cuda_provider",
    "CudaCKernelProvider": "cuda_c",
}

__all__ = sorted(_HOMES)


def __getattr__(name: str):
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{home}", __package__), name)
    globals()[name] = value
    return value
