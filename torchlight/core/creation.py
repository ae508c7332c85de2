"""Tensor constructors: tensor, zeros, ones, rand, randn (seedable), from_numpy."""

from __future__ import annotations

from typing import Any

import numpy as np

from .checks import check_count, check_flag, check_numel, check_seed
from .tensor import DTypeLike, Tensor, _backend_for, resolve_dtype
from .tensor_data import SUPPORTED_DTYPES, TensorData, shape_arguments

_generator = np.random.default_rng()


def manual_seed(seed: int) -> None:
    """Seed the generator behind ``rand`` and ``randn`` (a non-negative int)."""
    global _generator
    _generator = np.random.default_rng(check_seed(seed))


def default_generator() -> np.random.Generator:
    """The generator ``manual_seed`` reseeds (used by rand, randn, layer init and dropout)."""
    return _generator


def _shape(shape: tuple) -> tuple[int, ...]:
    sizes = shape_arguments(shape, "shape")
    for size in sizes:
        check_count(size, "size", f"shape {sizes}:")
    return check_numel(sizes, "shape")


def _make(array: np.ndarray, device: Any, requires_grad: bool) -> Tensor:
    flag = check_flag(requires_grad, "requires_grad")
    return Tensor._wrap(TensorData.from_array(array), _backend_for(device), flag)


def tensor(data: Any, dtype: DTypeLike = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """A new tensor holding a copy of ``data`` (nested lists, numbers or an array)."""
    return Tensor(data, dtype=dtype, device=device, requires_grad=requires_grad)


def zeros(*shape: int, dtype: DTypeLike = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """A tensor of zeros."""
    return _make(np.zeros(_shape(shape), resolve_dtype(dtype)), device, requires_grad)


def ones(*shape: int, dtype: DTypeLike = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """A tensor of ones."""
    return _make(np.ones(_shape(shape), resolve_dtype(dtype)), device, requires_grad)


def rand(
    *shape: int,
    dtype: DTypeLike = None,
    device: Any = None,
    requires_grad: bool = False,
    generator: np.random.Generator | None = None,
) -> Tensor:
    """Uniform samples in [0, 1); seed with ``manual_seed`` or pass a numpy ``generator``."""
    return _sample("random", shape, dtype, device, requires_grad, generator)


def randn(
    *shape: int,
    dtype: DTypeLike = None,
    device: Any = None,
    requires_grad: bool = False,
    generator: np.random.Generator | None = None,
) -> Tensor:
    """Standard normal samples; seed with ``manual_seed`` or pass a numpy ``generator``."""
    return _sample("standard_normal", shape, dtype, device, requires_grad, generator)


def _sample(method: str, shape: tuple, dtype: DTypeLike, device: Any, requires_grad: bool, generator):
    if generator is not None and not isinstance(generator, np.random.Generator):
        raise TypeError(
            f"generator must be a numpy.random.Generator, got {type(generator).__name__}; "
            f"pass numpy.random.default_rng(seed)"
        )
    rng = generator if generator is not None else _generator
    return _make(getattr(rng, method)(_shape(shape), dtype=resolve_dtype(dtype)), device, requires_grad)


def from_numpy(array: np.ndarray, device: Any = None) -> Tensor:
    """A CPU tensor sharing memory with a float32/float64 numpy array."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"from_numpy expects a numpy.ndarray, got {type(array).__name__}")
    if array.dtype not in SUPPORTED_DTYPES:
        raise TypeError(
            f"from_numpy got dtype {array.dtype}; torchlight holds float32 or float64: "
            f"convert first with array.astype(numpy.float32)"
        )
    if array.flags.c_contiguous:
        data = TensorData.from_array(array)
    else:
        # Keep sharing memory: describe the existing strides over the array's base buffer.
        item = array.itemsize
        if any(s % item or s < 0 for s in array.strides):
            raise ValueError(
                f"from_numpy cannot share an array with strides {array.strides}: "
                f"pass numpy.ascontiguousarray(array) instead"
            )
        data = _strided_view(array)
    return Tensor._wrap(data, _backend_for(device))


def _strided_view(array: np.ndarray) -> TensorData:
    item = array.itemsize
    strides = tuple(s // item for s in array.strides)
    span = 1 + sum((n - 1) * s for n, s in zip(array.shape, strides)) if array.size else 0
    flat = np.lib.stride_tricks.as_strided(array, shape=(span,), strides=(item,))
    data = TensorData(flat, array.shape, strides, 0)
    data._array = array
    return data
