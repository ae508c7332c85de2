"""NumbaBackend (the CPU twin) and CudaBackend (numba-cuda on an NVIDIA GPU).

Public home of ``NumbaBackend``, ``numba_backend``, ``CudaProvider``, ``CudaBackend``,
``cuda_backend`` and ``CudaCKernelProvider``. Each lives in the module of its role and is
loaded on first use, so importing this module never imports numba:

* ``numba_twin``: ``NumbaBackend``, ``numba_backend`` (kernels in ``numba_kernels``)
* ``cuda_provider``: ``CudaProvider`` (kernels in ``cuda_kernels``)
* ``cuda_backend``: ``CudaBackend``, ``cuda_backend``
* ``cuda_c``: ``CudaCKernelProvider`` (libraries loaded by ``cuda_c_loader``)
"""

from __future__ import annotations

import importlib
from typing import Any

_HOMES = {
    "NumbaBackend": "numba_twin",
    "numba_backend": "numba_twin",
    "CudaProvider": "cuda_provider",
    "CudaBackend": "cuda_backend",
    "cuda_backend": "cuda_backend",
    "CudaCKernelProvider": "cuda_c",
}

__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{home}", __package__), name)
    globals()[name] = value
    return value
