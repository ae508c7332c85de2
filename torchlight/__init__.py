"""torchlight: a small, readable tensor library with autograd over four primitives."""

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

__version__ = "0.1.0"

float32 = "float32"
float64 = "float64"

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
]
