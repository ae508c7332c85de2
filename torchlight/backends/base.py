"""Backend: the four primitives, the fused ops, and the op names bound from the table.

A backend never knows about autograd. Functions call only the bound names built here:
``<name>_map`` for unary ops, ``<name>`` for binary ops (the ``*_back`` helpers are
binary), ``<name>_reduce`` for reductions. Which kernel object a backend binds for an
entry (a numpy function, a numba-compiled scalar body, ...) is the backend's choice,
made in ``kernel_for``.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable
from functools import lru_cache

import numpy as np

from ..core.device import Device
from ..core.tensor_data import TensorData
from .checks import check_gelu_bw
from .ops import BINARY_OPS, REDUCE_OPS, UNARY_OPS, ReduceOp, ScalarOp

MapFn = Callable[..., TensorData]
ZipFn = Callable[[TensorData, TensorData], TensorData]
ReduceFn = Callable[[TensorData, int], TensorData]


class Backend(ABC):
    """Base of every backend: binds the op table onto the primitives in ``__init__``."""

    device: Device = Device("cpu")
    name: str = "backend"

    def __init__(self) -> None:
        for op in UNARY_OPS:
            setattr(self, f"{op.name}_map", self.map(self.kernel_for(op)))
        for op in BINARY_OPS:
            setattr(self, op.name, self.zip(self.kernel_for(op)))
        for op in REDUCE_OPS:
            setattr(self, f"{op.name}_reduce", self.reduce(*self.reduce_kernel_for(op)))

    # --- which kernel object stands for a table entry on this backend ------------------

    @abstractmethod
    def kernel_for(self, op: ScalarOp) -> Callable:
        """The function this backend's ``map``/``zip`` should run for ``op``."""

    @abstractmethod
    def reduce_kernel_for(self, op: ReduceOp) -> tuple[Callable, float]:
        """The ``(fn, start)`` pair this backend's ``reduce`` should run for ``op``."""

    # --- the four primitives ----------------------------------------------------------

    @abstractmethod
    def map(self, fn: Callable) -> MapFn:
        """Unary elementwise: returns ``run(a, out=None) -> TensorData``."""

    @abstractmethod
    def zip(self, fn: Callable) -> ZipFn:
        """Binary elementwise with numpy broadcasting: returns ``run(a, b) -> TensorData``."""

    @abstractmethod
    def reduce(self, fn: Callable, start: float) -> ReduceFn:
        """Reduce one dim, keeping it with size 1: returns ``run(a, dim) -> TensorData``."""

    @abstractmethod
    def matmul(self, a: TensorData, b: TensorData) -> TensorData:
        """Batched matrix product of the last two dims; batch dims broadcast."""

    def allclose(self, a: TensorData, b: TensorData, rtol: float = 1e-5, atol: float = 1e-8) -> bool:
        """True when ``a`` and ``b`` have one shape and agree within tolerance."""
        return a.shape == b.shape and bool(np.allclose(a.array, b.array, rtol=rtol, atol=atol))

    # --- the fused ops ------------------------------------------------------------------

    @abstractmethod
    def attn_softmax_fw(
        self, x: TensorData, mask: TensorData | None = None, causal: bool = False
    ) -> TensorData:
        """Softmax over the last dim of ``[batch, heads, q_len, k_len]`` scores."""

    @abstractmethod
    def attn_softmax_bw(self, y: TensorData, dy: TensorData) -> TensorData:
        """``dx = y * (dy - sum(dy * y, last dim))``."""

    @abstractmethod
    def layernorm_fw(
        self, x: TensorData, gamma: TensorData, beta: TensorData, eps: float = 1e-5
    ) -> tuple[TensorData, TensorData, TensorData]:
        """Normalise over the last dim: returns ``(y, mean, rstd)``."""

    @abstractmethod
    def layernorm_bw(
        self, dy: TensorData, x: TensorData, gamma: TensorData, mean: TensorData, rstd: TensorData
    ) -> tuple[TensorData, TensorData, TensorData]:
        """Returns ``(dx, dgamma, dbeta)`` for ``layernorm_fw``."""

    # --- GELU (tanh approximation), one op composed of the bound names ----------------------
    #
    # The ops, their operands, order and dtypes are those autograd runs for the composition
    # ``x * 0.5 * (tanh((x + x * x * x * 0.044715) * sqrt(2 / pi)) + 1.0)``, forward and backward
    # (each gradient of x summed in autograd's order), so the results are that composition's bit
    # for bit; a backend may override both with fewer temporaries but must keep the same bits.

    def gelu_fw(self, x: TensorData) -> tuple[TensorData, TensorData]:
        """GELU of ``x``: returns ``(y, t)``, with ``t`` the tanh term the backward reuses."""
        cube, scale, half, one = gelu_constants(x.dtype)
        inner = self.mul(self.add(x, self.mul(self.mul(self.mul(x, x), x), cube)), scale)
        t = self.tanh_map(inner)
        return self.mul(self.mul(x, half), self.add(t, one)), t

    def gelu_bw(self, x: TensorData, t: TensorData, dy: TensorData) -> TensorData:
        """Gradient of ``gelu_fw`` at ``x`` (``t`` its tanh term) for the output gradient ``dy``."""
        check_gelu_bw(x, t, dy)
        cube, scale, half, one = gelu_constants(x.dtype)
        mul, add = self.mul, self.add
        d_sum = mul(self.tanh_back(t, mul(dy, mul(x, half))), scale)  # through tanh and the scale
        d_cube = mul(d_sum, cube)
        d_square = mul(mul(d_cube, x), x)  # through x * x, once for each factor
        dx = add(add(add(d_sum, mul(d_cube, mul(x, x))), d_square), d_square)
        return add(dx, mul(mul(dy, add(t, one)), half))  # through x * 0.5

    def __repr__(self) -> str:
        return f"{type(self).__name__}(device={self.device!r})"


GELU_CUBE = 0.044715
GELU_SCALE = math.sqrt(2.0 / math.pi)


@lru_cache(maxsize=8)
def gelu_constants(dtype: np.dtype) -> tuple[TensorData, ...]:
    """GELU's four constants (cube coefficient, scale, 0.5, 1.0) as 0-d data of ``dtype``, as a
    Tensor operator lifts a Python number (only ever read: no op writes into its inputs)."""
    return tuple(TensorData.from_array(np.array(v, dtype=dtype)) for v in (GELU_CUBE, GELU_SCALE, 0.5, 1.0))
