"""The CUDA backends' public names: ``CudaBackend``, ``CudaProvider``, ``CudaCKernelProvider`` and
``cuda_backend``, each loaded on first use from the package of its target, so importing this
module never imports numba:

* ``numba_cuda/``: ``CudaProvider`` (``provider``), ``CudaBackend`` (``backend``)
* ``cuda_c/``: ``CudaCKernelProvider`` (``provider``; libraries loaded by ``loader``)
* ``registry``: ``cuda_backend``, the cached backend ``get_backend("cuda")`` returns

The numba CPU twin is not a CUDA backend: it lives in ``numba_twin/``, which exports
``NumbaBackend`` and ``numba_backend``. This module still answers those two names (the
documented ``from torchlight.backends.cuda import numba_backend`` keeps working) without
listing them as its own.
"""

from __future__ import annotations

import importlib
from typing import Any

_HOMES = {
    "CudaProvider": "numba_cuda.provider",
    "CudaBackend": "numba_cuda.backend",
    "cuda_backend": "registry",
    "CudaCKernelProvider": "cuda_c.provider",
}
# Names of the numba twin this path has always answered; ``numba_twin`` is their home.
_TWIN_NAMES = {"NumbaBackend": "numba_twin.backend", "numba_backend": "numba_twin.backend"}

__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name) or _TWIN_NAMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{home}", __package__), name)
    globals()[name] = value
    return value
