"""CPUBackend: vectorised numpy over strided views. The semantic reference for every backend.

The fused ops here define the maths other backends must match:

* ``attn_softmax_fw(x, mask, causal)``: softmax over the last dim of ``[B, H, Q, K]`` scores
  after adding ``mask`` (additive; broadcast to ``[B, H, Q, K]``, a 2-d mask being ``[B, K]``
  key padding; see ``checks.attn_mask_4d``; promoted with the scores as ``x + mask``) and, with
  ``causal``, excluding keys ``k > q`` (top-left alignment). A row whose every key is
  excluded (all ``-inf``) is defined as all zeros, and so is its gradient.
* ``layernorm_fw(x, gamma, beta, eps)``: ``y = (x - mean) * rstd * gamma + beta`` over the last
  dim, with ``rstd = 1 / sqrt(var + eps)`` and the two-pass variance (never negative).
  Returns ``mean`` and ``rstd`` shaped ``x.shape[:-1]`` for the backward.

Non-finite values (NaN, +-inf) follow PyTorch everywhere, and every backend must match:

* NaN propagates: an elementwise op of NaN is NaN (``relu(NaN)`` and ``max(NaN, x)`` too; the
  comparisons ``lt``/``eq``/``gt`` give 0), a sum, product or max over a NaN is NaN, and a
  matmul row or column that meets a NaN is NaN.
* IEEE rules otherwise: ``1 / -0.0 = -inf``, ``log(0) = -inf``, ``exp(-inf) = 0``,
  ``inf - inf = NaN``, ``0 * inf = NaN``; a finite result beyond float32's range is ``+-inf``.
* Softmax and log_softmax over a row holding a NaN or ``+inf`` give a NaN row; so does the
  fused attention softmax when a score or a mask value of a key it does not exclude is NaN or
  ``+inf`` (after adding the mask). A causally excluded key's score is never read.
* The one exception to PyTorch: an attention row whose every key is excluded (``-inf`` mask
  or score, or causal) gives zeros and a zero gradient, where PyTorch gives NaN.
* Layer norm: a NaN or ``+-inf`` in a row makes that row NaN; a row whose float32 variance
  overflows has ``rstd = 0`` and ``y = beta``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import numpy as np

from ..core.device import Device
from ..core.tensor_data import TensorData, broadcast_shapes
from .base import Backend, gelu_constants
from .checks import (
    attn_softmax_inputs,
    check_gelu_bw,
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


# NaN, inf and overflow are results under the non-finite rule, not events to warn about
# (PyTorch does not warn either): every numpy call here runs with the warnings off.
def _ieee() -> np.errstate:
    return np.errstate(all="ignore")


def _ieee_call(fn: Callable) -> Callable:
    """``fn`` run with numpy's warnings off: the primitives' form of ``with _ieee()``."""
    if _ERRSTATE_DECORATES_PER_CALL:
        return _QUIET(fn)

    @functools.wraps(fn)
    def quiet(*args, **kwargs):
        with _ieee():
            return fn(*args, **kwargs)

    return quiet


# numpy 2's errstate decorator sets the state per call (thread-safe, re-entrant) at a fraction of
# the cost of entering a new errstate; numpy 1's shares one saved state between calls.
_ERRSTATE_DECORATES_PER_CALL = np.lib.NumpyVersion(np.__version__) >= "2.0.0"
_QUIET = np.errstate(all="ignore")


_quiet_matmul = _ieee_call(np.matmul)


def _spare(buffer: np.ndarray, *operands: np.ndarray) -> np.ndarray | None:
    """``buffer`` as the ``out=`` of an elementwise op of ``buffer`` and ``operands`` when the
    result has its dtype (then its bits are a fresh result's), else None: a fresh result."""
    return buffer if np.result_type(buffer, *operands) == buffer.dtype else None


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
        quiet_fn = _ieee_call(fn)

        def run(a: TensorData, out: TensorData | None = None) -> TensorData:
            result = quiet_fn(a.array)
            if out is None:
                return TensorData.from_array(result)
            if out.shape != a.shape:
                raise ValueError(f"map out= has shape {out.shape}, expected {a.shape}")
            out.array[...] = result
            return out

        run.__name__ = f"map_{getattr(fn, '__name__', 'fn')}"
        return run

    def zip(self, fn: Callable) -> Callable:
        quiet_fn = _ieee_call(fn)

        def run(a: TensorData, b: TensorData) -> TensorData:
            x, y = a.array, b.array
            if x.dtype != y.dtype:
                # Promote first: composite bodies such as -g / (x * x) would otherwise round
                # their float32-only sub-expressions in float32.
                common = np.result_type(x.dtype, y.dtype)
                x, y = x.astype(common), y.astype(common)
            try:
                return TensorData.from_array(quiet_fn(x, y))
            except ValueError:
                broadcast_shapes(a.shape, b.shape)  # raises naming both shapes
                raise

        run.__name__ = f"zip_{getattr(fn, '__name__', 'fn')}"
        return run

    def reduce(self, fn: np.ufunc, start: float) -> Callable:
        quiet_reduce = _ieee_call(fn.reduce)

        def run(a: TensorData, dim: int) -> TensorData:
            axis = check_reduce_dim(a, dim)
            result = quiet_reduce(a.array, axis=axis, keepdims=True, initial=start)
            return TensorData.from_array(np.asarray(result, dtype=a.dtype))

        run.__name__ = f"reduce_{fn.__name__}"
        return run

    def matmul(self, a: TensorData, b: TensorData) -> TensorData:
        matmul_shape(a, b)
        x, y = a.array, b.array
        if y.ndim == 2 and x.ndim > 2:
            # A stack times one matrix is one (rows, k) @ (k, n) product: numpy would run a
            # small product per stack entry (several times slower for a layer's [batch, seq, dim]).
            rows = _quiet_matmul(x.reshape(math.prod(x.shape[:-1]), x.shape[-1]), y)
            return TensorData.from_array(rows.reshape(*x.shape[:-1], y.shape[-1]))
        return TensorData.from_array(_quiet_matmul(x, y))

    # --- fused ops (the reference maths) ------------------------------------------------

    def attn_softmax_fw(
        self, x: TensorData, mask: TensorData | None = None, causal: bool = False
    ) -> TensorData:
        x, mask = attn_softmax_inputs(x, mask)
        scores = x.array
        if mask is not None:
            with _ieee():
                scores = scores + mask.array
        if causal:
            q_len, k_len = x.shape[2], x.shape[3]
            future = np.arange(k_len)[None, :] > np.arange(q_len)[:, None]
            scores = np.where(future, -np.inf, scores)
        # A NaN or +inf among the scores makes the max NaN or +inf, and then every
        # exp(score - max) and the row sum NaN: the row is NaN. Only a row whose every key is
        # excluded (max -inf) is special: zeros, not exp(-inf - -inf) = NaN.
        row_max = scores.max(axis=-1, keepdims=True, initial=-np.inf)
        live = row_max != -np.inf
        with _ieee():
            shifted = np.exp(scores - np.where(live, row_max, 0))
            total = shifted.sum(axis=-1, keepdims=True)
            y = np.where(live, shifted / np.where(live, total, 1), 0)
        return TensorData.from_array(y.astype(x.dtype, copy=False))

    def attn_softmax_bw(self, y: TensorData, dy: TensorData) -> TensorData:
        check_same_shape("attn_softmax_bw", y, dy)
        yv, dyv = y.array, dy.array
        with _ieee():
            dot = (yv * dyv).sum(axis=-1, keepdims=True)
            return TensorData.from_array((yv * (dyv - dot)).astype(y.dtype, copy=False))

    def layernorm_fw(
        self, x: TensorData, gamma: TensorData, beta: TensorData, eps: float = 1e-5
    ) -> tuple[TensorData, TensorData, TensorData]:
        check_layernorm(x, gamma, beta, eps)
        xv = x.array
        with _ieee():
            mean = xv.mean(axis=-1, keepdims=True)
            centred = xv - mean
            var = (centred * centred).mean(axis=-1, keepdims=True)
            rstd = (1.0 / np.sqrt(var + eps)).astype(x.dtype, copy=False)
            # centred * rstd * gamma + beta, each step written over the one before (same bits).
            y = np.multiply(centred, rstd, out=centred)
            np.multiply(y, gamma.array, out=y)
            np.add(y, beta.array, out=y)
        return (
            TensorData.from_array(y),
            TensorData.from_array(mean[..., 0].astype(x.dtype, copy=False)),
            TensorData.from_array(rstd[..., 0]),
        )

    def layernorm_bw(
        self, dy: TensorData, x: TensorData, gamma: TensorData, mean: TensorData, rstd: TensorData
    ) -> tuple[TensorData, TensorData, TensorData]:
        check_layernorm_bw(dy, x, gamma, mean, rstd)
        dyv = dy.array
        r = rstd.array[..., None]
        lead = tuple(range(x.ndim - 1))
        with _ieee():
            centred = x.array - mean.array[..., None]
            xhat = np.multiply(centred, r, out=_spare(centred, r))
            g = dyv * gamma.array
            # r * (g - mean(g) - xhat * mean(g * xhat)), the elementwise steps written over the
            # temporaries before them where the dtypes allow; the means read what they read before.
            g_xhat = g * xhat
            slope = g_xhat.mean(axis=-1, keepdims=True)
            g_mean = g.mean(axis=-1, keepdims=True)
            dx = np.subtract(g, g_mean, out=_spare(g, g_mean))
            second = np.multiply(xhat, slope, out=_spare(g_xhat, xhat, slope))
            dx = np.subtract(dx, second, out=_spare(dx, second))
            dx = np.multiply(r, dx, out=_spare(dx, r))
            dgamma = (dyv * xhat).sum(axis=lead) if lead else dyv * xhat
            dbeta = dyv.sum(axis=lead) if lead else dyv.copy()
        dt = x.dtype
        return (
            TensorData.from_array(dx.astype(dt, copy=False)),
            TensorData.from_array(np.asarray(dgamma, dtype=dt)),
            TensorData.from_array(np.asarray(dbeta, dtype=dt)),
        )

    # --- GELU: Backend's composition with its temporaries reused --------------------------
    #
    # The same ops on the same operands as ``Backend.gelu_fw``/``gelu_bw``; only exactly rounded
    # ones (+, -, *) write into a temporary made here, so every value is bit for bit the
    # composition's. tanh runs out of place, as ``tanh_map`` does.

    def gelu_fw(self, x: TensorData) -> tuple[TensorData, TensorData]:
        cube, scale, half, one = (c.array for c in gelu_constants(x.dtype))
        xv = x.array
        with _ieee():
            acc = xv * xv
            np.multiply(acc, xv, out=acc)
            np.multiply(acc, cube, out=acc)
            np.add(xv, acc, out=acc)
            np.multiply(acc, scale, out=acc)
            t = np.tanh(acc)
            y = xv * half
            np.add(t, one, out=acc)
            np.multiply(y, acc, out=y)
        return TensorData.from_array(y), TensorData.from_array(t)

    def gelu_bw(self, x: TensorData, t: TensorData, dy: TensorData) -> TensorData:
        check_gelu_bw(x, t, dy)
        cube, scale, half, one = (c.array for c in gelu_constants(x.dtype))
        xv, tv, g = x.array, t.array, dy.array
        with _ieee():
            d_sum = xv * half
            np.multiply(g, d_sum, out=d_sum)
            slope = tv * tv  # tanh_back: g * (1 - t * t)
            np.subtract(1, slope, out=slope)
            np.multiply(d_sum, slope, out=d_sum)
            np.multiply(d_sum, scale, out=d_sum)
            d_cube = d_sum * cube
            term = np.multiply(xv, xv, out=slope)
            np.multiply(d_cube, term, out=term)
            dx = np.add(d_sum, term, out=d_sum)
            d_square = np.multiply(d_cube, xv, out=d_cube)
            np.multiply(d_square, xv, out=d_square)
            np.add(dx, d_square, out=dx)
            np.add(dx, d_square, out=dx)
            term = np.add(tv, one, out=term)
            np.multiply(g, term, out=term)
            np.multiply(term, half, out=term)
            np.add(dx, term, out=dx)
        return TensorData.from_array(dx)


_CPU_BACKEND: CPUBackend | None = None


def cpu_backend() -> CPUBackend:
    """The cached CPUBackend singleton."""
    global _CPU_BACKEND
    if _CPU_BACKEND is None:
        _CPU_BACKEND = CPUBackend()
    return _CPU_BACKEND
