"""CudaBackend, the GPU backend built on a provider, and the CUDA fallback rule.

``CudaBackend(provider=None)`` picks ``CudaCKernelProvider`` when compiled CUDA C kernel
libraries are found, else ``CudaProvider``. ``cuda_backend()`` is the cached instance behind
``get_backend("cuda")``; with ``TORCHLIGHT_CUDA_FALLBACK=numba`` it returns the numba CPU twin
when CUDA is unavailable, with a warning.

Importing this module never imports numba.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import threading
import warnings
from collections.abc import Callable

from ..core.device import Device
from ..core.tensor_data import TensorData
from .base import Backend
from .checks import (
    check_attn_softmax,
    check_layernorm,
    check_layernorm_bw,
    check_reduce_dim,
    check_same_shape,
    matmul_shape,
)
from .cuda_c import default_cuda_provider
from .cuda_kernels import FALLBACK_ENV, CudaUnavailableError
from .cuda_provider import CudaProvider
from .ops import ReduceOp, ScalarOp

FALLBACK_CHOICES = ("numba",)


def default_provider() -> CudaProvider:
    """CudaCKernelProvider when compiled CUDA C kernel libraries are found, else CudaProvider."""
    # cuda_c decides: it knows where the libraries live and refuses a broken configured dir.
    return default_cuda_provider()


class CudaBackend(Backend):
    """numba-cuda kernels on an NVIDIA GPU (or its simulator); per-op transfer to and from it."""

    device = Device("cuda")
    name = "cuda"

    def __init__(self, provider: CudaProvider | None = None) -> None:
        self.provider = default_provider() if provider is None else provider
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


_CUDA_BACKEND: CudaBackend | None = None
_CUDA_BACKEND_LOCK = threading.Lock()


def fallback_choice(environ: dict | None = None) -> str | None:
    """The ``TORCHLIGHT_CUDA_FALLBACK`` choice (None when unset); ValueError on an unknown one."""
    env = os.environ if environ is None else environ
    value = env.get(FALLBACK_ENV, "").strip().lower()
    if not value:
        return None
    if value not in FALLBACK_CHOICES:
        raise ValueError(
            f"{FALLBACK_ENV}={env.get(FALLBACK_ENV)!r} is not a fallback: use "
            f"{' or '.join(FALLBACK_CHOICES)} (the numba CPU twin), or unset it to get an error "
            f"when CUDA is unavailable"
        )
    return value


def cuda_backend() -> Backend:
    """The cached CudaBackend; with ``TORCHLIGHT_CUDA_FALLBACK=numba`` the twin when CUDA is missing."""
    global _CUDA_BACKEND
    fallback = fallback_choice()
    with _CUDA_BACKEND_LOCK:  # threads asking at once share one backend
        if _CUDA_BACKEND is None:
            try:
                _CUDA_BACKEND = CudaBackend()
            except (ImportError, CudaUnavailableError) as err:
                if fallback is None:
                    raise
                return _fallback(err, fallback)
        return _CUDA_BACKEND


def _fallback(err: Exception, fallback: str) -> Backend:
    """The numba twin in place of CUDA, with one warning at the user's line; or one ImportError."""
    reason = getattr(err, "reason", None) or str(err).split(". ")[0]
    if importlib.util.find_spec("numba") is None:
        # The fallback cannot happen: say so once, with the one thing to install.
        raise ImportError(
            f"get_backend('cuda'): CUDA is unavailable ({reason}), and {FALLBACK_ENV}={fallback} needs "
            f'numba, which is not installed either: pip install "torchlight[numba]"'
        ) from None
    warnings.warn(
        f"CUDA is unavailable ({reason}): get_backend('cuda') returns the numba CPU twin, as "
        f"{FALLBACK_ENV}={fallback} asks, so tensors stay on the CPU",
        RuntimeWarning,
        stacklevel=caller_stacklevel(),
    )
    from .numba_twin import numba_backend

    return numba_backend()


_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def caller_stacklevel() -> int:
    """``warnings.warn``'s stacklevel for the first frame outside torchlight: the user's line."""
    frame = sys._getframe(1)  # the function that will call warnings.warn
    level = 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE_DIR + os.sep):
        frame = frame.f_back
        level += 1
    return level
