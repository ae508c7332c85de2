"""Backend: the four primitives, the four fused ops, and the op names bound from the table.

A backend never knows about autograd. Functions call only the bound names built here:
``<name>_map`` for unary ops, ``<name>`` for binary ops (the ``*_back`` helpers are
binary), ``<name>_reduce`` for reductions. Which kernel object a backend binds for an
entry (a numpy function, a numba-compiled scalar body, ...) is the backend's choice,
made in ``kernel_for``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable

from ..core.device import Device
from ..core.tensor_data import TensorData
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
        import numpy as np

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

    def __repr__(self) -> str:
        return f"{type(self).__name__}(device={self.device!r})"
