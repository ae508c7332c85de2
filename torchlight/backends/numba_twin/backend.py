"""NumbaBackend: the CPU twin of the CUDA kernels, compiled by numba.

Every primitive and fused op runs the per-thread bodies of ``kernel_bodies`` (the ones the
CUDA kernels reuse) over every "thread" index with ``prange`` (a call with little work runs the
kernel's serial form, see ``kernels.SERIAL_BELOW``). So an index-maths bug shows here, on any
CPU, in seconds.

The kernels themselves, and how they stay in numba's on-disk cache, are in ``kernels``;
this module holds the backend: operand preparation, path choice and the numpy fallback.

Paths that run:

* map / zip: a flat loop when every operand is contiguous and of one shape, else the
  ``map_positions`` / ``zip_positions`` bodies (strides, offsets, broadcasting).
* reduce: ``reduce_start`` per output element, then the scalar op along the reduced dim.
* matmul: contiguous operands with equal batch dims take a fast path -- ``np.dot`` on each
  batch's 2-D block inside a compiled kernel (numba's BLAS binding, present when SciPy is
  installed), else a tiled, vectorised loop. A strided or batch-broadcast operand runs the
  ``matmul_element`` body per output element; ``NumbaBackend(blocked_matmul=False)`` runs
  the body path for every matmul.
* fused ops: one row body per ``prange`` index on contiguous copies of the inputs.

An op whose scalar numba cannot compile runs the numpy path instead, announced by one
``logging.debug`` line naming the op.
"""

from __future__ import annotations

import importlib.util
import logging
from collections.abc import Callable

import numpy as np

from ...core.device import Device
from ...core.tensor_data import TensorData, broadcast_shapes
from ..base import Backend
from ..checks import (
    attn_softmax_inputs,
    check_layernorm,
    check_layernorm_bw,
    check_reduce_dim,
    check_same_shape,
    compact_mask,
    matmul_shape,
)
from ..ops import BINARY_OPS, UNARY_OPS, ReduceOp, ScalarOp
from .kernels import INSTALL_HINT, fixed_kernel, op_kernel, require_numba

__all__ = ["INSTALL_HINT", "NumbaBackend", "numba_backend"]

log = logging.getLogger(__name__)

# Shortest last dim that map/zip run one row per thread (see _row_len).
_MIN_ROW_LEN = 16

# Row chunks of the layernorm parameter gradients: enough to spread over the threads.
_LN_CHUNKS = 32

# Rows per thread task, and depth and width of one tile, of the tiled matmul (measured best
# at 512x512 float32 on a 2-core x86 machine).
_TILE_ROWS = 32
_TILE_DEPTH = 64
_TILE_COLS = 256


# --- host-side helpers ------------------------------------------------------------------


def _i64(values) -> np.ndarray:
    return np.asarray(values, dtype=np.int64).reshape(-1)


def _parts(t: TensorData) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """``(storage, shape, strides, offset)`` with a C-contiguous storage for the kernels."""
    if not t.storage.flags.c_contiguous:
        t = TensorData.from_array(np.ascontiguousarray(t.array))
    return t.storage, _i64(t.shape), _i64(t.strides), t.offset


def _flat(t: TensorData) -> np.ndarray:
    """The elements of a contiguous TensorData as a 1-D view."""
    return t.storage[t.offset : t.offset + t.size]


def _as_dtype(t: TensorData, dtype: np.dtype) -> TensorData:
    return t if t.dtype == dtype else TensorData.from_array(t.array.astype(dtype))


def _empty(shape: tuple[int, ...], dtype: np.dtype) -> TensorData:
    """A new contiguous TensorData left uninitialised: every kernel writes all of its output.

    (np.zeros maps fresh zero pages that the kernel's threads would then fault in.)"""
    return TensorData.from_array(np.empty(shape, dtype=dtype))


def _dense(t: TensorData) -> np.ndarray:
    """A C-contiguous 1-D copy-if-needed of ``t``'s elements (for the fused row bodies)."""
    return np.ascontiguousarray(t.array).reshape(-1)


def _row_len(shape: tuple[int, ...]) -> int:
    """Last-dim length for the row-per-thread path, or 0 for the element-per-thread path.

    Short rows (every shape the generic test suite draws) take the element path, where the
    body places every single element; long rows amortise its integer divisions."""
    return shape[-1] if shape and shape[-1] >= _MIN_ROW_LEN else 0


def _first_line(err: Exception) -> str:
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__


def _op_name(fn) -> str:
    return getattr(fn, "name", None) or getattr(fn, "__name__", repr(fn))


def _have_scipy() -> bool:
    """Whether SciPy is importable: numba's compiled ``np.dot`` needs its BLAS."""
    return importlib.util.find_spec("scipy") is not None


class NumbaBackend(Backend):
    """The kernel bodies run by numba on the CPU with ``prange`` over every thread index."""

    device = Device("cpu")
    name = "numba"

    def __init__(self, blocked_matmul: bool = True) -> None:
        require_numba()
        self.blocked_matmul = blocked_matmul
        # Names of ops that ran the numpy path because numba could not compile them.
        self.fallbacks: set[str] = set()
        super().__init__()

    def kernel_for(self, op: ScalarOp) -> ScalarOp:
        return op

    def reduce_kernel_for(self, op: ReduceOp) -> tuple[ReduceOp, float]:
        return op, op.start

    # --- compiled kernel or visible numpy fallback --------------------------------------

    def _try(self, kind: str, fn, scalar: Callable | None, work: int, launch: Callable, numpy_path: Callable):
        """Run ``launch(kernel)``, the form for ``work`` elements; numpy if numba can't compile ``scalar``."""
        name = _op_name(fn)
        if scalar is not None and name not in self.fallbacks:
            from numba.core.errors import NumbaError

            try:
                return launch(op_kernel(kind, scalar, work))
            except NumbaError as err:
                self.fallbacks.add(name)
                log.debug(
                    "numba backend: no compiled %s kernel for op %r, using numpy (%s)",
                    kind,
                    name,
                    _first_line(err),
                )
        elif scalar is None and name not in self.fallbacks:
            self.fallbacks.add(name)
            log.debug("numba backend: no compiled %s kernel for op %r, using numpy", kind, name)
        return numpy_path()

    # --- primitives ---------------------------------------------------------------------

    def map(self, fn: ScalarOp | Callable) -> Callable:
        scalar, array_fn = _split_elementwise(fn)

        def run(a: TensorData, out: TensorData | None = None) -> TensorData:
            if out is not None and out.shape != a.shape:
                raise ValueError(f"map out= has shape {out.shape}, expected {a.shape}")
            target = out
            # The kernel writes straight into out= only when it can address its storage and
            # no thread can overwrite an input element another thread has yet to read.
            if (
                target is None
                or target.dtype != a.dtype
                or not target.storage.flags.c_contiguous
                or not target.storage.flags.writeable
                or (
                    (target.strides, target.offset) != (a.strides, a.offset)
                    and np.may_share_memory(target.storage, a.storage)
                )
            ):
                target = _empty(a.shape, a.dtype)

            def launch(kernel):
                if a.size:
                    flat = a.is_contiguous() and target.is_contiguous()
                    if flat:
                        e = _i64(())
                        kernel(_flat(target), e, e, 0, _flat(a), e, 0, a.size, True, 0)
                    else:
                        o_store, shape, o_strides, o_off = _parts(target)
                        a_store, _, a_strides, a_off = _parts(a)
                        row_len = _row_len(a.shape)
                        kernel(
                            o_store,
                            shape,
                            o_strides,
                            o_off,
                            a_store,
                            a_strides,
                            a_off,
                            a.size,
                            False,
                            row_len,
                        )
                return target

            def numpy_path():
                target.array[...] = array_fn(a.array)
                return target

            result = self._try("map", fn, scalar, a.size, launch, numpy_path)
            if out is not None and result is not out:
                out.array[...] = result.array
                return out
            return result

        run.__name__ = f"map_{_op_name(fn)}"
        return run

    def zip(self, fn: ScalarOp | Callable) -> Callable:
        scalar, array_fn = _split_elementwise(fn)

        def run(a: TensorData, b: TensorData) -> TensorData:
            shape = a.shape if a.shape == b.shape else broadcast_shapes(a.shape, b.shape)
            dtype = np.result_type(a.dtype, b.dtype)
            a, b = _as_dtype(a, dtype), _as_dtype(b, dtype)
            out = _empty(shape, dtype)

            def launch(kernel):
                if out.size:
                    if a.shape == b.shape and a.is_contiguous() and b.is_contiguous():
                        e = _i64(())
                        kernel(_flat(out), e, _flat(a), e, e, 0, _flat(b), e, e, 0, out.size, True, 0)
                    else:
                        row_len = _row_len(shape)
                        kernel(_flat(out), _i64(shape), *_parts(a), *_parts(b), out.size, False, row_len)
                return out

            def numpy_path():
                out.array[...] = array_fn(a.array, b.array)
                return out

            return self._try("zip", fn, scalar, out.size, launch, numpy_path)

        run.__name__ = f"zip_{_op_name(fn)}"
        return run

    def reduce(self, fn: ReduceOp | Callable, start: float) -> Callable:
        if isinstance(fn, ReduceOp):
            scalar, ufunc = fn.scalar, fn.ufunc
        elif isinstance(fn, np.ufunc):
            scalar, ufunc = None, fn
        else:
            scalar, ufunc = fn, None

        def run(a: TensorData, dim: int) -> TensorData:
            axis = check_reduce_dim(a, dim)
            shape = a.shape[:axis] + (1,) + a.shape[axis + 1 :]
            out = _empty(shape, a.dtype)

            def launch(kernel):
                if out.size:
                    store, _, strides, offset = _parts(a)
                    kernel(
                        _flat(out),
                        _i64(shape),
                        store,
                        strides,
                        offset,
                        axis,
                        a.shape[axis],
                        float(start),
                        out.size,
                    )
                return out

            def numpy_path():
                if ufunc is not None:
                    result = ufunc.reduce(a.array, axis=axis, keepdims=True, initial=start)
                else:
                    result = np.full(shape, start, dtype=a.dtype)
                    for j in range(a.shape[axis]):
                        part = np.take(a.array, [j], axis=axis)
                        result = np.vectorize(scalar, otypes=[a.dtype])(result, part)
                out.array[...] = result
                return out

            return self._try("reduce", fn, scalar, a.size, launch, numpy_path)

        run.__name__ = f"reduce_{_op_name(fn)}"
        return run

    def matmul(self, a: TensorData, b: TensorData) -> TensorData:
        shape = matmul_shape(a, b)
        dtype = np.result_type(a.dtype, b.dtype)
        a, b = _as_dtype(a, dtype), _as_dtype(b, dtype)
        out = _empty(shape, dtype)
        if out.size == 0:
            return out
        work = out.size * max(a.shape[-1], 1)  # multiply-adds
        same_batch = a.shape[:-2] == b.shape[:-2]
        if self.blocked_matmul and same_batch and a.is_contiguous() and b.is_contiguous():
            m, k, n = a.shape[-2], a.shape[-1], b.shape[-1]
            args = (_flat(out), _flat(a), _flat(b), out.size // (m * n), m, k, n)
            # numba binds BLAS for float dtypes only, and only through SciPy (the [numba] extra).
            if k and dtype.kind == "f" and "matmul_blas" not in self.fallbacks and not _have_scipy():
                self.fallbacks.add("matmul_blas")
                log.debug(
                    "numba backend: no SciPy, so no BLAS matmul: the tiled loop runs "
                    '(pip install "torchlight[numba]" brings SciPy)'
                )
            if k and dtype.kind == "f" and "matmul_blas" not in self.fallbacks:
                from numba.core.errors import NumbaError

                try:
                    fixed_kernel("matmul_blas", work)(*args)
                    return out
                except (NumbaError, ImportError) as err:  # ImportError: numba's "scipy ... is required"
                    # numba's np.dot needs SciPy's BLAS; without it the tiled loop runs.
                    self.fallbacks.add("matmul_blas")
                    log.debug(
                        "numba backend: no BLAS matmul kernel, using the tiled loop (%s)", _first_line(err)
                    )
            out.storage[:] = 0  # the tiled loop accumulates into out
            fixed_kernel("matmul_tiled", work)(*args, _TILE_ROWS, _TILE_DEPTH, _TILE_COLS)
        else:
            fixed_kernel("matmul_body", work)(_flat(out), _i64(shape), *_parts(a), *_parts(b), out.size)
        return out

    # --- fused ops ----------------------------------------------------------------------

    def attn_softmax_fw(
        self, x: TensorData, mask: TensorData | None = None, causal: bool = False
    ) -> TensorData:
        x, mask = attn_softmax_inputs(x, mask)
        batch, heads, q_len, k_len = x.shape
        y = np.empty(x.size, dtype=x.dtype)
        rows = batch * heads * q_len
        if rows and k_len:
            if mask is None:
                m, strides = np.zeros(1, dtype=x.dtype), (0, 0, 0, 0)
            else:
                m, strides = compact_mask(mask)
            fixed_kernel("softmax_fw", x.size)(
                rows, _dense(x), m.reshape(-1), y, heads, q_len, k_len, *strides, bool(causal)
            )
        return TensorData.from_array(y.reshape(x.shape))

    def attn_softmax_bw(self, y: TensorData, dy: TensorData) -> TensorData:
        check_same_shape("attn_softmax_bw", y, dy)
        dtype = np.result_type(y.dtype, dy.dtype)
        dx = np.empty(y.size, dtype=dtype)
        k_len = y.shape[-1] if y.ndim else 1
        if dx.size:
            yv, dyv = _dense(_as_dtype(y, dtype)), _dense(_as_dtype(dy, dtype))
            fixed_kernel("softmax_bw", y.size)(y.size // k_len, yv, dyv, dx, k_len)
        return TensorData.from_array(dx.reshape(y.shape))

    def layernorm_fw(
        self, x: TensorData, gamma: TensorData, beta: TensorData, eps: float = 1e-5
    ) -> tuple[TensorData, TensorData, TensorData]:
        check_layernorm(x, gamma, beta, eps)
        hidden = x.shape[-1]
        rows = x.size // hidden
        y = np.empty(x.size, dtype=x.dtype)
        mean = np.empty(rows, dtype=x.dtype)
        rstd = np.empty(rows, dtype=x.dtype)
        if rows:
            fixed_kernel("layernorm_fw", x.size)(
                rows, _dense(x), _dense(gamma), _dense(beta), y, mean, rstd, hidden, float(eps)
            )
        lead = x.shape[:-1]
        return (
            TensorData.from_array(y.reshape(x.shape)),
            TensorData.from_array(mean.reshape(lead)),
            TensorData.from_array(rstd.reshape(lead)),
        )

    def layernorm_bw(
        self, dy: TensorData, x: TensorData, gamma: TensorData, mean: TensorData, rstd: TensorData
    ) -> tuple[TensorData, TensorData, TensorData]:
        check_layernorm_bw(dy, x, gamma, mean, rstd)
        dtype = x.dtype
        hidden = x.shape[-1]
        rows = x.size // hidden if hidden else 0
        dx = np.empty(x.size, dtype=dtype)
        dgamma = np.zeros(hidden, dtype=dtype)
        dbeta = np.zeros(hidden, dtype=dtype)
        if x.size:
            args = [_dense(_as_dtype(t, dtype)) for t in (dy, x, gamma, mean, rstd)]
            chunks = max(1, min(rows, _LN_CHUNKS))
            fixed_kernel("layernorm_bw", x.size)(*args, dx, dgamma, dbeta, rows, hidden, chunks)
        return (
            TensorData.from_array(dx.reshape(x.shape)),
            TensorData.from_array(dgamma),
            TensorData.from_array(dbeta),
        )


def _split_elementwise(fn) -> tuple[Callable | None, Callable]:
    """``(scalar body or None, numpy form)`` of an elementwise op given to map/zip."""
    if isinstance(fn, ScalarOp):
        return fn.scalar, fn.array
    if isinstance(fn, np.ufunc):
        return None, fn
    for op in (*UNARY_OPS, *BINARY_OPS):
        if fn is op.scalar or fn is op.array:
            return op.scalar, op.array
    # A plain scalar function: its numpy form is the same function vectorised.
    return fn, np.vectorize(fn)


_NUMBA_BACKEND: NumbaBackend | None = None


def numba_backend() -> NumbaBackend:
    """The cached NumbaBackend singleton."""
    global _NUMBA_BACKEND
    if _NUMBA_BACKEND is None:
        _NUMBA_BACKEND = NumbaBackend()
    return _NUMBA_BACKEND
