"""torchlight: a small, readable tensor library with autograd over four primitives."""

import importlib as _importlib

from ._version import __version__
from .backends import get_backend
from .core import (
    Context,
    Device,
    Function,
    Tensor,
    TensorData,
    from_numpy,
    is_grad_enabled,
    manual_seed,
    no_grad,
    ones,
    rand,
    randn,
    tensor,
    zeros,
)
from .core import backend_lookup as _backend_lookup

# core/ resolves devices through get_backend without importing backends/ (which builds on core).
_backend_lookup.install(get_backend)

float32 = "float32"
float64 = "float64"

# Imported on first use (``tl.nn.Linear``, ``tl.optim.Adam``), so ``import torchlight`` stays cheap.
_LAZY_SUBMODULES = ("nn", "optim")


def __getattr__(name: str):
    if name in _LAZY_SUBMODULES:
        return _importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY_SUBMODULES})


__all__ = [
    "Context",
    "Device",
    "Function",
    "Tensor",
    "TensorData",
    "from_numpy",
    "get_backend",
    "is_grad_enabled",
    "manual_seed",
    "no_grad",
    "ones",
    "rand",
    "randn",
    "tensor",
    "zeros",
    "float32",
    "float64",
    "__version__",
    "nn",
    "optim",
]
