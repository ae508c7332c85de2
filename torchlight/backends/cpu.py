"""CPUBackend: vectorised numpy over strided views. The semantic reference for every backend.

The fused ops here define the maths other backends must match:

* ``attn_softmax_fw(x, mask, causal)``: softmax over the last dim of ``[B, H, Q, K]`` scores
  after adding ``mask[b, k]`` (additive, broadcast over heads and queries) and, with
  ``causal``, excluding keys ``k > q`` (top-left alignment). A row whose every key is
  excluded (all ``-inf``) is defined as all zeros, and so is its gradient.
* ``layernorm_fw(x, gamma, beta, eps)``: ``y = (x - mean) * rstd * gamma + beta`` over the last
  dim, with ``rstd = 1 / sqrt(var + eps)`` and the two-pass variance (never negative).
  Returns ``mean`` and ``rstd`` shaped ``x.shape[:-1]`` for the backward.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..core.device import Device
from ..core.tensor_data import TensorData, broadcast_shapes
from .base import Backend
from .checks import (
    check_attn_softmax,
    check_layernorm,
    check_layernorm_bw,
    check_reduce_dim,
    check_same_shape,
    matmul_shape,
)
from .ops import BINARY_OPS, REDUCE_OPS, UNARY_OPS, ReduceOp, ScalarOp

ARRAY_MAP: dict[str, Callable] = {op.name: op.array for op in UNARY_OPS}
ARRAY_ZIP: dict[str, Callable] = {op.name: op.array for op in BINARY_OPS}
ARRAY_REDUCE: dict[str, tuple[np.ufunc, float]] = {op.name: (op.ufunc, op.start) for op in REDUCE_OPS}


class CPUBackend(Backend):
    """Vectorised numpy on the CPU; every primitive works on TensorData strided views."""

    device = Device("cpu")
    name = "cpu"

    def kernel_for(self, op: ScalarOp) -> Callable:
        table = ARRAY_MAP if op in UNARY_OPS else ARRAY_ZIP
        return table[op.name]

    def reduce_kernel_for(self, op: ReduceOp) -> tuple[np.ufunc, float]:
        return ARRAY_REDUCE[op.name]

    # --- primitives ---------------------------------------------------------------------

    def map(self, fn: Callable) -> Callable:
        def run(a: TensorData, out: TensorData | None = None) -> TensorData:
            result = fn(a.array)
            if out is None:
                return TensorData.from_array(result)
            if out.shape != a.shape:
                raise ValueError(f"map out= has shape {out.shape}, expected {a.shape}")
            out.array[...] = result
            return out

        run.__name__ = f"map_{getattr(fn, '__name__', 'fn')}"
        return run

    def zip(self, fn: Callable) -> Callable:
        def run(a: TensorData, b: TensorData) -> TensorData:
            x, y = a.array, b.array
            if x.dtype != y.dtype:
                # Promote first: composite bodies such as -g / (x * x) would otherwise round
                # their float32-only sub-expressions in float32.
                common = np.result_type(x.dtype, y.dtype)
                x, y = x.astype(common), y.astype(common)
            try:
                return TensorData.from_array(fn(x, y))
            except ValueError:
                broadcast_shapes(a.shape, b.shape)  # raises naming both shapes
                raise

        run.__name__ = f"zip_{getattr(fn, '__name__', 'fn')}"
        return run

    def reduce(self, fn: np.ufunc, start: float) -> Callable:
        def run(a: TensorData, dim: int) -> TensorData:
            axis = check_reduce_dim(a, dim)
            result = fn.reduce(a.array, axis=axis, keepdims=True, initial=start)
            return TensorData.from_array(np.asarray(result, dtype=a.dtype))

        run.__name__ = f"reduce_{fn.__name__}"
        return run

    def matmul(self, a: TensorData, b: TensorData) -> TensorData:
        matmul_shape(a, b)
        return TensorData.from_array(np.matmul(a.array, b.array))

    # --- fused ops (the reference maths) ------------------------------------------------

    def attn_softmax_fw(
        self, x: TensorData, mask: TensorData | None = None, causal: bool = False
    ) -> TensorData:
        check_attn_softmax(x, mask)
        scores = x.array
        if mask is not None:
            scores = scores + mask.array[:, None, None, :]
        if causal:
            q_len, k_len = x.shape[2], x.shape[3]
            future = np.arange(k_len)[None, :] > np.arange(q_len)[:, None]
            scores = np.where(future, -np.inf, scores)
        row_max = scores.max(axis=-1, keepdims=True, initial=-np.inf)
        live = np.isfinite(row_max)
        shifted = np.exp(scores - np.where(live, row_max, 0))
        total = shifted.sum(axis=-1, keepdims=True)
        y = np.where(live, shifted / np.where(live, total, 1), 0)
        return TensorData.from_array(y.astype(x.dtype, copy=False))

    def attn_softmax_bw(self, y: TensorData, dy: TensorData) -> TensorData:
        check_same_shape("attn_softmax_bw", y, dy)
        yv, dyv = y.array, dy.array
        dot = (yv * dyv).sum(axis=-1, keepdims=True)
        return TensorData.from_array((yv * (dyv - dot)).astype(y.dtype, copy=False))

    def layernorm_fw(
        self, x: TensorData, gamma: TensorData, beta: TensorData, eps: float = 1e-5
    ) -> tuple[TensorData, TensorData, TensorData]:
        check_layernorm(x, gamma, beta, eps)
        xv = x.array
        mean = xv.mean(axis=-1, keepdims=True)
        centred = xv - mean
        var = (centred * centred).mean(axis=-1, keepdims=True)
        rstd = (1.0 / np.sqrt(var + eps)).astype(x.dtype, copy=False)
        y = centred * rstd * gamma.array + beta.array
        return (
            TensorData.from_array(y.astype(x.dtype, copy=False)),
            TensorData.from_array(mean[..., 0].astype(x.dtype, copy=False)),
            TensorData.from_array(rstd[..., 0]),
        )

    def layernorm_bw(
        self, dy: TensorData, x: TensorData, gamma: TensorData, mean: TensorData, rstd: TensorData
    ) -> tuple[TensorData, TensorData, TensorData]:
        check_layernorm_bw(dy, x, gamma, mean, rstd)
        dyv = dy.array
        r = rstd.array[..., None]
        xhat = (x.array - mean.array[..., None]) * r
        g = dyv * gamma.array
        dx = r * (g - g.mean(axis=-1, keepdims=True) - xhat * (g * xhat).mean(axis=-1, keepdims=True))
        lead = tuple(range(x.ndim - 1))
        dgamma = (dyv * xhat).sum(axis=lead) if lead else dyv * xhat
        dbeta = dyv.sum(axis=lead) if lead else dyv.copy()
        dt = x.dtype
        return (
            TensorData.from_array(dx.astype(dt, copy=False)),
            TensorData.from_array(np.asarray(dgamma, dtype=dt)),
            TensorData.from_array(np.asarray(dbeta, dtype=dt)),
        )


_CPU_BACKEND: CPUBackend | None = None


def cpu_backend() -> CPUBackend:
    """The cached CPUBackend singleton."""
    global _CPU_BACKEND
    if _CPU_BACKEND is None:
        _CPU_BACKEND = CPUBackend()
    return _CPU_BACKEND
