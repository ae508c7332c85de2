"""CudaCKernelProvider: CudaProvider with the four fused ops on the CUDA C kernel libraries.

The libraries are found and loaded by ``loader``; this module only routes: float32
fused ops go to the CUDA C launchers, everything else stays on the numba-cuda kernels.
Importing this module never imports numba (``CudaProvider`` loads it on construction).
"""

from __future__ import annotations

import os
from typing import Any

from ...core.tensor_data import TensorData
from ..numba_cuda.provider import CudaProvider
from .loader import (
    BUILD_HINT,
    DEFAULT_KERNEL_DIR,
    KERNEL_DIR_ENV,
    CudaCKernelError,
    CudaCKernels,
    KernelLibraryError,
    all_float32,
    find_kernel_dir,
    load_kernels,
)

__all__ = [
    "CudaCKernelError",
    "CudaCKernelProvider",
    "CudaCKernels",
    "KERNEL_DIR_ENV",
    "KernelLibraryError",
    "find_kernel_dir",
    "load_kernels",
]


class CudaCKernelProvider(CudaProvider):
    """CudaProvider whose four fused ops run the CUDA C launchers for float32 operands.

    Every other op, and the fused ops for any other dtype (float64 for gradient checks),
    stays on the numba-cuda kernels of CudaProvider. ``kernels`` (a CudaCKernels) wins over
    ``kernel_dir``, which wins over ``find_kernel_dir()``.
    """

    def __init__(
        self,
        *args: Any,
        kernel_dir: str | os.PathLike | None = None,
        kernels: CudaCKernels | None = None,
        **kwargs: Any,
    ) -> None:
        if kernels is None:
            directory = kernel_dir if kernel_dir is not None else find_kernel_dir()
            if directory is None:
                raise KernelLibraryError(
                    f"no CUDA C kernel libraries: {KERNEL_DIR_ENV} is unset and {DEFAULT_KERNEL_DIR} "
                    f"does not hold softmax_kernel.so and layernorm_kernel.so; {BUILD_HINT}"
                )
            kernels = load_kernels(directory)
        self.kernels = kernels
        super().__init__(*args, **kwargs)

    def attn_softmax_fw(
        self, x: TensorData, mask: TensorData | None = None, causal: bool = False
    ) -> TensorData:
        """Softmax over the last dim of ``[batch, heads, q_len, k_len]``; float32 via CUDA C."""
        if all_float32(x, mask):
            return self.kernels.attn_softmax_fw(x, mask, causal)
        return super().attn_softmax_fw(x, mask, causal)

    def attn_softmax_bw(self, y: TensorData, dy: TensorData) -> TensorData:
        """``dx = y * (dy - sum(dy * y))``; float32 via CUDA C."""
        if all_float32(y, dy):
            return self.kernels.attn_softmax_bw(y, dy)
        return super().attn_softmax_bw(y, dy)

    def layernorm_fw(
        self, x: TensorData, gamma: TensorData, beta: TensorData, eps: float = 1e-5
    ) -> tuple[TensorData, TensorData, TensorData]:
        """Layer norm forward ``(y, mean, rstd)``; float32 via CUDA C."""
        if all_float32(x, gamma, beta):
            return self.kernels.layernorm_fw(x, gamma, beta, eps)
        return super().layernorm_fw(x, gamma, beta, eps)

    def layernorm_bw(
        self, dy: TensorData, x: TensorData, gamma: TensorData, mean: TensorData, rstd: TensorData
    ) -> tuple[TensorData, TensorData, TensorData]:
        """Layer norm backward ``(dx, dgamma, dbeta)``; float32 via CUDA C."""
        if all_float32(dy, x, gamma, mean, rstd):
            return self.kernels.layernorm_bw(dy, x, gamma, mean, rstd)
        return super().layernorm_bw(dy, x, gamma, mean, rstd)
