"""The core: Device, TensorData, autograd, the Functions and Tensor."""

from .autograd import Context, Function, is_grad_enabled, no_grad
from .creation import from_numpy, manual_seed, ones, rand, randn, tensor, zeros
from .device import Device
from .tensor import Tensor
from .tensor_data import TensorData

__all__ = [
    "Context",
    "Device",
    "Function",
    "Tensor",
    "TensorData",
    "from_numpy",
    "is_grad_enabled",
    "manual_seed",
    "no_grad",
    "ones",
    "rand",
    "randn",
    "tensor",
    "zeros",
]
