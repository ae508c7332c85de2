"""NumbaBackend: the CPU twin of the CUDA kernels, compiled by numba.

Every primitive and fused op runs the per-thread bodies of ``kernel_bodies`` (the ones the
CUDA kernels reuse) over every "thread" index with ``prange``. So an index-maths bug shows
here, on any CPU, in seconds.

Compiled kernels and the on-disk cache: each kernel is ``njit(cache=True)`` (``parallel=True``
but for the BLAS one). numba keys a cached closure by the pickled values of its free
variables, so kernels close over nothing but plain values: the op table's ``scalar``
function (pickled by reference, hence stable across processes; made callable from compiled
code with ``register_jitable``) and ``source_key``, a hash of the sources the kernel inlines,
so that editing a body or an op recompiles rather than loading stale code. The compiled
bodies are reached through a module global, which the cache key does not include. A new
process with a warm cache therefore loads every kernel instead of compiling it.

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

import hashlib
import logging
import types
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ..core.device import Device
from ..core.tensor_data import TensorData, broadcast_shapes
from . import kernel_bodies, ops
from .base import Backend
from .checks import (
    check_attn_softmax,
    check_layernorm,
    check_layernorm_bw,
    check_reduce_dim,
    check_same_shape,
    matmul_shape,
)
from .ops import BINARY_OPS, UNARY_OPS, ReduceOp, ScalarOp

INSTALL_HINT = 'NumbaBackend needs numba, which is not installed: pip install "torchlight[numba]"'

log = logging.getLogger(__name__)

# Replaced by numba.prange (and the compiled bodies) when the kernels are first built; the
# kernels below resolve both as module globals at compile time.
prange = range
_jb: types.ModuleType | None = None

# Shortest last dim that map/zip run one row per thread (see _row_len).
_MIN_ROW_LEN = 16

# Row chunks of the layernorm parameter gradients: enough to spread over the threads.
_LN_CHUNKS = 32

# Rows per thread task, and depth and width of one tile, of the tiled matmul (measured best
# at 512x512 float32 on a 2-core x86 machine).
_TILE_ROWS = 32
_TILE_DEPTH = 64
_TILE_COLS = 256


def _require_numba() -> types.ModuleType:
    """Import numba or raise ImportError with the install line."""
    try:
        import numba
    except ImportError as err:
        raise ImportError(INSTALL_HINT) from err
    return numba


# --- kernel sources (compiled lazily by _build) -----------------------------------------
#
# Each kernel is built by a factory so that ``source_key`` -- a hash of the sources it
# inlines (kernel_bodies.py, ops.py, the scalar's code) -- is one of its closure values.
# numba keys cached machine code by closure values but checks only the kernel's own file for
# edits; with the key in the closure, editing a body or an op recompiles instead of loading
# stale code. The ``_ = source_key`` lines exist only to put it in the closure.


def _make_map_kernel(scalar: Callable, source_key: int) -> Callable:
    def map_kernel(out, shape, out_strides, out_offset, a, a_strides, a_offset, n, flat, row_len):
        _ = source_key
        if flat:
            for t in prange(n):
                out[t] = scalar(a[t])
        elif row_len:
            # One thread per output row: the body places the row's first two elements and
            # the rest follow at the same step (positions are affine along a dim).
            for r in prange(n // row_len):
                i = np.int64(r) * row_len
                o, p = _jb.map_positions(i, shape, out_strides, out_offset, a_strides, a_offset)
                o1, p1 = _jb.map_positions(i + 1, shape, out_strides, out_offset, a_strides, a_offset)
                for j in range(row_len):
                    out[o + j * (o1 - o)] = scalar(a[p + j * (p1 - p)])
        else:
            for t in prange(n):
                o, p = _jb.map_positions(np.int64(t), shape, out_strides, out_offset, a_strides, a_offset)
                out[o] = scalar(a[p])

    return map_kernel


def _make_zip_kernel(scalar: Callable, source_key: int) -> Callable:
    def zip_kernel(
        out, out_shape, a, a_shape, a_strides, a_offset, b, b_shape, b_strides, b_offset, n, flat, row_len
    ):
        _ = source_key
        if flat:
            for t in prange(n):
                out[t] = scalar(a[t], b[t])
        elif row_len:
            # One thread per output row, as in map_kernel.
            for r in prange(n // row_len):
                i = np.int64(r) * row_len
                pa, pb = _jb.zip_positions(
                    i, out_shape, a_shape, a_strides, a_offset, b_shape, b_strides, b_offset
                )
                pa1, pb1 = _jb.zip_positions(
                    i + 1, out_shape, a_shape, a_strides, a_offset, b_shape, b_strides, b_offset
                )
                for j in range(row_len):
                    out[i + j] = scalar(a[pa + j * (pa1 - pa)], b[pb + j * (pb1 - pb)])
        else:
            for t in prange(n):
                pa, pb = _jb.zip_positions(
                    np.int64(t), out_shape, a_shape, a_strides, a_offset, b_shape, b_strides, b_offset
                )
                out[t] = scalar(a[pa], b[pb])

    return zip_kernel


def _make_reduce_kernel(scalar: Callable, source_key: int) -> Callable:
    def reduce_kernel(out, out_shape, a, a_strides, a_offset, dim, count, start, n):
        _ = source_key
        step = a_strides[dim]
        for t in prange(n):
            p = _jb.reduce_start(np.int64(t), out_shape, a_strides, a_offset, dim)
            acc = start
            j = 0
            if count >= 8:
                # Four independent chains hide the op's latency (reductions are associative).
                s0 = np.float64(a[p])
                s1 = np.float64(a[p + step])
                s2 = np.float64(a[p + 2 * step])
                s3 = np.float64(a[p + 3 * step])
                j = 4
                while j + 4 <= count:
                    q = p + j * step
                    s0 = scalar(s0, a[q])
                    s1 = scalar(s1, a[q + step])
                    s2 = scalar(s2, a[q + 2 * step])
                    s3 = scalar(s3, a[q + 3 * step])
                    j += 4
                acc = scalar(acc, scalar(scalar(s0, s1), scalar(s2, s3)))
            while j < count:
                acc = scalar(acc, a[p + j * step])
                j += 1
            out[t] = acc

    return reduce_kernel


def _make_matmul_body(source_key: int) -> Callable:
    def matmul_body_kernel(
        out, out_shape, a, a_shape, a_strides, a_offset, b, b_shape, b_strides, b_offset, n
    ):
        _ = source_key
        for t in prange(n):
            out[t] = _jb.matmul_element(
                np.int64(t), out_shape, a, a_shape, a_strides, a_offset, b, b_shape, b_strides, b_offset
            )

    return matmul_body_kernel


def _make_matmul_tiled(source_key: int) -> Callable:
    def matmul_tiled_kernel(out, a, b, batch, m, k, n, tile_rows, tile_depth, tile_cols):
        # out must be zero-filled. One thread per (batch, block of rows); i-k-j order over
        # row slices, two output rows per pass, so the innermost loop streams one slice of b
        # into two slices of out -- contiguous, distinct arrays that LLVM vectorises.
        _ = source_key
        row_tiles = (m + tile_rows - 1) // tile_rows
        for t0 in prange(batch * row_tiles):
            t = np.int64(t0)
            bi = t // row_tiles
            i0 = (t % row_tiles) * tile_rows
            i1 = min(i0 + tile_rows, m)
            a_blk = a[bi * m * k : (bi + 1) * m * k]
            b_blk = b[bi * k * n : (bi + 1) * k * n]
            o_blk = out[bi * m * n : (bi + 1) * m * n]
            for j0 in range(0, n, tile_cols):
                j1 = min(j0 + tile_cols, n)
                for k0 in range(0, k, tile_depth):
                    k1 = min(k0 + tile_depth, k)
                    i = i0
                    while i + 2 <= i1:
                        o_row = o_blk[i * n + j0 : i * n + j1]
                        o_next = o_blk[(i + 1) * n + j0 : (i + 1) * n + j1]
                        for kk in range(k0, k1):
                            b_row = b_blk[kk * n + j0 : kk * n + j1]
                            av = a_blk[i * k + kk]
                            an = a_blk[(i + 1) * k + kk]
                            for j in range(j1 - j0):
                                bv = b_row[j]
                                o_row[j] += av * bv
                                o_next[j] += an * bv
                        i += 2
                    if i < i1:
                        o_row = o_blk[i * n + j0 : i * n + j1]
                        for kk in range(k0, k1):
                            b_row = b_blk[kk * n + j0 : kk * n + j1]
                            av = a_blk[i * k + kk]
                            for j in range(j1 - j0):
                                o_row[j] += av * b_row[j]

    return matmul_tiled_kernel


def _make_matmul_blas(source_key: int) -> Callable:
    def matmul_blas_kernel(out, a, b, batch, m, k, n):
        # BLAS is threaded itself, so the batch loop stays serial.
        _ = source_key
        for bi in range(batch):
            a_blk = a[bi * m * k : (bi + 1) * m * k].reshape((m, k))
            b_blk = b[bi * k * n : (bi + 1) * k * n].reshape((k, n))
            o_blk = out[bi * m * n : (bi + 1) * m * n].reshape((m, n))
            np.dot(a_blk, b_blk, o_blk)

    return matmul_blas_kernel


def _make_softmax_fw(source_key: int) -> Callable:
    def softmax_fw_kernel(x, mask, y, rows, rows_per_batch, q_len, k_len, mask_stride, causal):
        _ = source_key
        for t in prange(rows):
            _jb.softmax_fw_row(np.int64(t), x, mask, y, rows_per_batch, q_len, k_len, mask_stride, causal)

    return softmax_fw_kernel


def _make_softmax_bw(source_key: int) -> Callable:
    def softmax_bw_kernel(y, dy, dx, rows, k_len):
        _ = source_key
        for t in prange(rows):
            _jb.softmax_bw_row(np.int64(t), y, dy, dx, k_len)

    return softmax_bw_kernel


def _make_layernorm_fw(source_key: int) -> Callable:
    def layernorm_fw_kernel(x, gamma, beta, y, mean, rstd, rows, hidden, eps):
        _ = source_key
        for t in prange(rows):
            _jb.layernorm_fw_row(np.int64(t), x, gamma, beta, y, mean, rstd, hidden, eps)

    return layernorm_fw_kernel


def _make_layernorm_bw(source_key: int) -> Callable:
    def layernorm_bw_kernel(dy, x, gamma, mean, rstd, dx, dgamma, dbeta, rows, hidden, chunks):
        _ = source_key
        for t in prange(rows):
            _jb.layernorm_bw_row(np.int64(t), dy, x, gamma, mean, rstd, dx, hidden)
        # Parameter gradients: partial sums over row chunks (rows stay contiguous), then a sum.
        per_chunk = (rows + chunks - 1) // chunks
        dgamma_part = np.empty(chunks * hidden, dtype=np.float64)
        dbeta_part = np.empty(chunks * hidden, dtype=np.float64)
        for t in prange(chunks):
            _jb.layernorm_param_rows(
                np.int64(t), per_chunk, rows, dy, x, mean, rstd, dgamma_part, dbeta_part, hidden
            )
        for col in prange(hidden):
            sg = 0.0
            sb = 0.0
            for c in range(chunks):
                sg += dgamma_part[c * hidden + col]
                sb += dbeta_part[c * hidden + col]
            dgamma[col] = sg
            dbeta[col] = sb

    return layernorm_bw_kernel


# name -> (factory, njit options besides cache=True)
_PARALLEL = {"parallel": True}
_FIXED_KERNELS = {
    "matmul_body": (_make_matmul_body, _PARALLEL),
    # fastmath lets LLVM fuse the multiply-adds of the tiled loop (it only reorders rounding).
    "matmul_tiled": (_make_matmul_tiled, {"parallel": True, "fastmath": True}),
    "matmul_blas": (_make_matmul_blas, {}),
    "softmax_fw": (_make_softmax_fw, _PARALLEL),
    "softmax_bw": (_make_softmax_bw, _PARALLEL),
    "layernorm_fw": (_make_layernorm_fw, _PARALLEL),
    "layernorm_bw": (_make_layernorm_bw, _PARALLEL),
}
_FACTORIES = {"map": _make_map_kernel, "zip": _make_zip_kernel, "reduce": _make_reduce_kernel}
_SOURCES_DIGEST: bytes | None = None


def source_key(scalar: Callable | None = None) -> int:
    """Hash of the sources a kernel inlines: kernel_bodies.py, ops.py and ``scalar``'s code."""
    global _SOURCES_DIGEST
    if _SOURCES_DIGEST is None:
        files = hashlib.sha256()
        for module in (kernel_bodies, ops):
            files.update(Path(module.__file__).read_bytes())
        _SOURCES_DIGEST = files.digest()
    digest = hashlib.sha256(_SOURCES_DIGEST)
    code = getattr(scalar, "__code__", None)
    if code is not None:
        digest.update(code.co_code)
        digest.update(repr((code.co_consts, code.co_names)).encode())
    return int(digest.hexdigest()[:15], 16)


_compiled: dict | None = None
_op_kernels: dict[tuple[str, Callable], Callable] = {}
_registered: set[Callable] = set()


def _build() -> dict:
    """Import numba, compile-wrap the bodies and the fixed kernels (compiled on first call)."""
    global _compiled, _jb, prange
    if _compiled is None:
        numba = _require_numba()
        bodies = types.ModuleType("torchlight_numba_bodies")
        for name in kernel_bodies.BODY_NAMES:
            setattr(bodies, name, numba.njit(getattr(kernel_bodies, name)))
        _jb = bodies
        prange = numba.prange
        key = source_key()
        _compiled = {
            name: numba.njit(cache=True, **options)(factory(key))
            for name, (factory, options) in _FIXED_KERNELS.items()
        }
    return _compiled


def _op_kernel(kind: str, scalar: Callable) -> Callable:
    """The cached compiled ``kind`` kernel ("map", "zip", "reduce") for one scalar body."""
    key = (kind, scalar)
    kernel = _op_kernels.get(key)
    if kernel is None:
        _build()
        numba = _require_numba()
        if scalar not in _registered:
            numba.extending.register_jitable(scalar)
            _registered.add(scalar)
        kernel = numba.njit(parallel=True, cache=True)(_FACTORIES[kind](scalar, source_key(scalar)))
        _op_kernels[key] = kernel
    return kernel


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


class NumbaBackend(Backend):
    """The kernel bodies run by numba on the CPU with ``prange`` over every thread index."""

    device = Device("cpu")
    name = "numba"

    def __init__(self, blocked_matmul: bool = True) -> None:
        _require_numba()
        self.blocked_matmul = blocked_matmul
        # Names of ops that ran the numpy path because numba could not compile them.
        self.fallbacks: set[str] = set()
        super().__init__()

    def kernel_for(self, op: ScalarOp) -> ScalarOp:
        return op

    def reduce_kernel_for(self, op: ReduceOp) -> tuple[ReduceOp, float]:
        return op, op.start

    # --- compiled kernel or visible numpy fallback --------------------------------------

    def _try(self, kind: str, fn, scalar: Callable | None, launch: Callable, numpy_path: Callable):
        """Run ``launch(kernel)``; if numba cannot compile ``scalar``, log once and use numpy."""
        name = _op_name(fn)
        if scalar is not None and name not in self.fallbacks:
            from numba.core.errors import NumbaError

            try:
                return launch(_op_kernel(kind, scalar))
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

            result = self._try("map", fn, scalar, launch, numpy_path)
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

            return self._try("zip", fn, scalar, launch, numpy_path)

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

            return self._try("reduce", fn, scalar, launch, numpy_path)

        run.__name__ = f"reduce_{_op_name(fn)}"
        return run

    def matmul(self, a: TensorData, b: TensorData) -> TensorData:
        shape = matmul_shape(a, b)
        dtype = np.result_type(a.dtype, b.dtype)
        a, b = _as_dtype(a, dtype), _as_dtype(b, dtype)
        out = _empty(shape, dtype)
        if out.size == 0:
            return out
        kernels = _build()
        same_batch = a.shape[:-2] == b.shape[:-2]
        if self.blocked_matmul and same_batch and a.is_contiguous() and b.is_contiguous():
            m, k, n = a.shape[-2], a.shape[-1], b.shape[-1]
            args = (_flat(out), _flat(a), _flat(b), out.size // (m * n), m, k, n)
            # numba binds BLAS for float dtypes only.
            if k and dtype.kind == "f" and "matmul_blas" not in self.fallbacks:
                from numba.core.errors import NumbaError

                try:
                    kernels["matmul_blas"](*args)
                    return out
                except NumbaError as err:
                    # numba's np.dot needs SciPy's BLAS; without it the tiled loop runs.
                    self.fallbacks.add("matmul_blas")
                    log.debug(
                        "numba backend: no BLAS matmul kernel, using the tiled loop (%s)", _first_line(err)
                    )
            out.storage[:] = 0  # the tiled loop accumulates into out
            kernels["matmul_tiled"](*args, _TILE_ROWS, _TILE_DEPTH, _TILE_COLS)
        else:
            kernels["matmul_body"](_flat(out), _i64(shape), *_parts(a), *_parts(b), out.size)
        return out

    # --- fused ops ----------------------------------------------------------------------

    def attn_softmax_fw(
        self, x: TensorData, mask: TensorData | None = None, causal: bool = False
    ) -> TensorData:
        check_attn_softmax(x, mask)
        batch, heads, q_len, k_len = x.shape
        y = np.empty(x.size, dtype=x.dtype)
        rows = batch * heads * q_len
        if rows and k_len:
            if mask is None:
                m, mask_stride = np.zeros(k_len, dtype=x.dtype), 0
            else:
                m, mask_stride = _dense(mask), k_len
            _build()["softmax_fw"](
                _dense(x), m, y, rows, heads * q_len, q_len, k_len, mask_stride, bool(causal)
            )
        return TensorData.from_array(y.reshape(x.shape))

    def attn_softmax_bw(self, y: TensorData, dy: TensorData) -> TensorData:
        check_same_shape("attn_softmax_bw", y, dy)
        dtype = np.result_type(y.dtype, dy.dtype)
        dx = np.empty(y.size, dtype=dtype)
        k_len = y.shape[-1] if y.ndim else 1
        if dx.size:
            yv, dyv = _dense(_as_dtype(y, dtype)), _dense(_as_dtype(dy, dtype))
            _build()["softmax_bw"](yv, dyv, dx, y.size // k_len, k_len)
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
            _build()["layernorm_fw"](
                _dense(x), _dense(gamma), _dense(beta), y, mean, rstd, rows, hidden, float(eps)
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
            _build()["layernorm_bw"](*args, dx, dgamma, dbeta, rows, hidden, chunks)
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
