"""NumbaBackend (the CPU twin) and CudaBackend (numba-cuda on an NVIDIA GPU).

The one public re-export path of the seed's names: ``NumbaBackend``, ``numba_backend``,
``CudaProvider``, ``CudaBackend``, ``cuda_backend`` and ``CudaCKernelProvider``. Each lives in
the package of its target and is loaded on first use, so importing this module never imports
numba:

* ``numba_twin/``: ``NumbaBackend``, ``numba_backend`` (``backend``; kernels in ``kernels``)
* ``numba_cuda/``: ``CudaProvider`` (``provider``), ``CudaBackend`` (``backend``)
* ``cuda_c/``: ``CudaCKernelProvider`` (``provider``; libraries loaded by ``loader``)
* ``registry``: ``cuda_backend``, the cached backend ``get_backend("cuda")`` returns
"""

from __future__ import annotations

import importlib
from typing import Any

_HOMES = {
    "NumbaBackend": "numba_twin.backend",
    "numba_backend": "numba_twin.backend",
    "CudaProvider": "numba_cuda.provider",
    "CudaBackend": "numba_cuda.backend",
    "cuda_backend": "registry",
    "CudaCKernelProvider": "cuda_c.provider",
}

__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{home}", __package__), name)
    globals()[name] = value
    return value
