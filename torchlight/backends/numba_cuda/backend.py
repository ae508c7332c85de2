"""CudaBackend, the GPU backend built on a provider (numba-cuda's, or the CUDA C one).

``CudaBackend(provider=None)`` runs ``CudaProvider``, the numba-cuda kernels. Which provider
``get_backend("cuda")`` gets, and the ``TORCHLIGHT_CUDA_FALLBACK`` rule, are registry data
(``registry.DEVICES``).

Importing this module never imports numba.
"""

from __future__ import annotations

from collections.abc import Callable

from ...core.device import Device
from ...core.tensor_data import TensorData
from ..base import Backend
from ..checks import (
    check_attn_softmax,
    check_layernorm,
    check_layernorm_bw,
    check_reduce_dim,
    check_same_shape,
    matmul_shape,
)
from ..ops import ReduceOp, ScalarOp
from .provider import CudaProvider


class CudaBackend(Backend):
    """numba-cuda kernels on an NVIDIA GPU (or its simulator); per-op transfer to and from it."""

    device = Device("cuda")
    name = "cuda"

    def __init__(self, provider: CudaProvider | None = None) -> None:
        self.provider = CudaProvider() if provider is None else provider
        super().__init__()

    def kernel_for(self, op: ScalarOp) -> Callable:
        return op.scalar

    def reduce_kernel_for(self, op: ReduceOp) -> tuple[Callable, float]:
        return op.scalar, op.start

    # --- primitives ---------------------------------------------------------------------------

    def map(self, fn: Callable) -> Callable:
        provider = self.provider

        def run(a: TensorData, out: TensorData | None = None) -> TensorData:
            if out is not None and out.shape != a.shape:
                raise ValueError(f"map out= has shape {out.shape}, expected {a.shape}")
            result = provider.map(fn, a)
            if out is None:
                return result
            out.array[...] = result.array
            return out

        run.__name__ = f"map_{getattr(fn, '__name__', 'fn')}"
        return run

    def zip(self, fn: Callable) -> Callable:
        provider = self.provider

        def run(a: TensorData, b: TensorData) -> TensorData:
            return provider.zip(fn, a, b)

        run.__name__ = f"zip_{getattr(fn, '__name__', 'fn')}"
        return run

    def reduce(self, fn: Callable, start: float) -> Callable:
        provider = self.provider

        def run(a: TensorData, dim: int) -> TensorData:
            return provider.reduce(fn, start, a, check_reduce_dim(a, dim))

        run.__name__ = f"reduce_{getattr(fn, '__name__', 'fn')}"
        return run

    def matmul(self, a: TensorData, b: TensorData) -> TensorData:
        matmul_shape(a, b)
        return self.provider.matmul(a, b)

    # --- fused ops ----------------------------------------------------------------------------

    def attn_softmax_fw(
        self, x: TensorData, mask: TensorData | None = None, causal: bool = False
    ) -> TensorData:
        check_attn_softmax(x, mask)
        return self.provider.attn_softmax_fw(x, mask, causal)

    def attn_softmax_bw(self, y: TensorData, dy: TensorData) -> TensorData:
        check_same_shape("attn_softmax_bw", y, dy)
        return self.provider.attn_softmax_bw(y, dy)

    def layernorm_fw(
        self, x: TensorData, gamma: TensorData, beta: TensorData, eps: float = 1e-5
    ) -> tuple[TensorData, TensorData, TensorData]:
        check_layernorm(x, gamma, beta, eps)
        return self.provider.layernorm_fw(x, gamma, beta, eps)

    def layernorm_bw(
        self, dy: TensorData, x: TensorData, gamma: TensorData, mean: TensorData, rstd: TensorData
    ) -> tuple[TensorData, TensorData, TensorData]:
        check_layernorm_bw(dy, x, gamma, mean, rstd)
        return self.provider.layernorm_bw(dy, x, gamma, mean, rstd)

    def __repr__(self) -> str:
        return f"CudaBackend(device={self.device!r}, provider={self.provider!r})"
