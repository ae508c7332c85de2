"""The numba CPU twin's kernels: ``prange`` loops over every "thread" running the shared bodies.

Every kernel runs the per-thread bodies of ``kernel_bodies`` (the ones the CUDA kernels
reuse) over every thread index with ``prange``; ``backend.NumbaBackend`` prepares the
operands and calls them.

Parallel and serial forms: each kernel is compiled twice from one source, ``parallel=True``
(``prange`` spreads the thread indices over numba's worker threads) and without it (``prange``
runs as ``range``). ``fixed_kernel`` and ``op_kernel`` hand out the serial form for a call
whose work is under ``SERIAL_BELOW`` elements: waking the workers costs more than such a
loop, and on a loaded machine a wake-up waits for a time slice (milliseconds per call).

Compiled kernels and the on-disk cache: each kernel is ``njit(cache=True)``. numba keys a
cached closure by the pickled values of its free variables, so kernels close over nothing but
plain values: plain Python functions (the op table's ``scalar``, or a fused op's row body from
``kernel_bodies``; pickled by reference, hence stable across processes; made callable from
compiled code with ``register_jitable``) and ``cache_key``: ``source_key``, a hash of the
sources the kernel inlines, so that editing a body or an op recompiles rather than loading stale
code, and the form (numba's cache key leaves out the compile options: without the form in the
closure, one form would load the other's machine code). The
compiled index bodies are reached through a module global, which the cache key does not
include. A new process with a warm cache therefore loads every kernel instead of compiling it.
(A compiled function is not such a value: a kernel closing over one misses the cache in every
new process.)

Importing this module never imports numba; ``build()``, ``fixed_kernel()`` and ``op_kernel()`` do.
"""

from __future__ import annotations

import hashlib
import types
from collections.abc import Callable
from pathlib import Path

import numpy as np

from .. import kernel_bodies, ops
from .cache_lock import serialize_cache_writes

INSTALL_HINT = 'NumbaBackend needs numba, which is not installed: pip install "torchlight[numba]"'

# Replaced by numba.prange (and the compiled bodies) when the kernels are first built; the
# kernels below resolve both as module globals at compile time.
prange = range
_jb: types.ModuleType | None = None


def require_numba() -> types.ModuleType:
    """Import numba or raise ImportError with the install line."""
    try:
        import numba
    except ImportError as err:
        raise ImportError(INSTALL_HINT) from err
    return numba


# --- kernel sources (compiled lazily by build) ------------------------------------------
#
# Each kernel is built by a factory so that ``cache_key`` -- ``(source_key, parallel)``: a hash
# of the sources it inlines (kernel_bodies.py, ops.py, the scalar's code) and the form -- is one
# of its closure values. numba keys cached machine code by closure values but checks only the
# kernel's own file for edits, and not the compile options; with the key in the closure,
# editing a body or an op recompiles instead of loading stale code, and each form loads its own
# code. The ``_ = cache_key`` lines exist only to put it in the closure.


def _make_map_kernel(scalar: Callable, cache_key: tuple[int, bool]) -> Callable:
    def map_kernel(out, shape, out_strides, out_offset, a, a_strides, a_offset, n, flat, row_len):
        _ = cache_key
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


def _make_zip_kernel(scalar: Callable, cache_key: tuple[int, bool]) -> Callable:
    def zip_kernel(
        out, out_shape, a, a_shape, a_strides, a_offset, b, b_shape, b_strides, b_offset, n, flat, row_len
    ):
        _ = cache_key
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


def _make_reduce_kernel(scalar: Callable, cache_key: tuple[int, bool]) -> Callable:
    def reduce_kernel(out, out_shape, a, a_strides, a_offset, dim, count, start, n):
        _ = cache_key
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


def _make_matmul_body(cache_key: tuple[int, bool]) -> Callable:
    def matmul_body_kernel(
        out, out_shape, a, a_shape, a_strides, a_offset, b, b_shape, b_strides, b_offset, n
    ):
        _ = cache_key
        for t in prange(n):
            out[t] = _jb.matmul_element(
                np.int64(t), out_shape, a, a_shape, a_strides, a_offset, b, b_shape, b_strides, b_offset
            )

    return matmul_body_kernel


def _make_matmul_tiled(cache_key: tuple[int, bool]) -> Callable:
    def matmul_tiled_kernel(out, a, b, batch, m, k, n, tile_rows, tile_depth, tile_cols):
        # out must be zero-filled. One thread per (batch, block of rows); i-k-j order over
        # row slices, two output rows per pass, so the innermost loop streams one slice of b
        # into two slices of out -- contiguous, distinct arrays that LLVM vectorises.
        _ = cache_key
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


def _make_matmul_blas(cache_key: tuple[int, bool]) -> Callable:
    def matmul_blas_kernel(out, a, b, batch, m, k, n):
        # BLAS is threaded itself, so the batch loop stays serial.
        _ = cache_key
        for bi in range(batch):
            a_blk = a[bi * m * k : (bi + 1) * m * k].reshape((m, k))
            b_blk = b[bi * k * n : (bi + 1) * k * n].reshape((k, n))
            o_blk = out[bi * m * n : (bi + 1) * m * n].reshape((m, n))
            np.dot(a_blk, b_blk, o_blk)

    return matmul_blas_kernel


def _make_row_kernel(row_body: Callable, cache_key: tuple[int, bool]) -> Callable:
    # One thread per row: ``row_body`` is a fused op's plain row body from kernel_bodies.
    def row_kernel(rows, *args):
        _ = cache_key
        for t in prange(rows):
            row_body(np.int64(t), *args)

    return row_kernel


def _make_layernorm_bw(cache_key: tuple[int, bool]) -> Callable:
    def layernorm_bw_kernel(dy, x, gamma, mean, rstd, dx, dgamma, dbeta, rows, hidden, chunks):
        _ = cache_key
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


# Elements of work (read or written) under which a call runs a kernel's serial form. Measured
# with benchmarks/bench_numba_dispatch.py on a quiet 2-core x86 machine: the parallel form is
# 10% faster than the serial one from 64 K elements of a flat add (bound by memory; at 256 it
# is 2x slower) and from 4 K elements of exp (bound by arithmetic). 8 K sits between.
SERIAL_BELOW = 1 << 13

# Every kernel's njit options. error_model="numpy": a float division by zero gives inf or nan,
# as on a GPU, instead of raising ZeroDivisionError (parallel=True implies it; the serial form
# must ask for it).
_OPTIONS = {"cache": True, "error_model": "numpy"}

# name -> (factory, njit options besides _OPTIONS and parallel)
_FIXED_KERNELS = {
    "matmul_body": (_make_matmul_body, {}),
    # fastmath lets LLVM fuse the multiply-adds of the tiled loop (it only reorders rounding).
    "matmul_tiled": (_make_matmul_tiled, {"fastmath": True}),
    "layernorm_bw": (_make_layernorm_bw, {}),
}
# BLAS is threaded itself: one form, run for any size.
_SERIAL_ONLY = {"matmul_blas": _make_matmul_blas}
# Fused ops whose kernel is one row body per prange index: name -> the body, called as
# ``kernel(rows, *the body's arguments after the row number)``.
_ROW_KERNELS = {
    "softmax_fw": kernel_bodies.softmax_fw_row,
    "softmax_bw": kernel_bodies.softmax_bw_row,
    "layernorm_fw": kernel_bodies.layernorm_fw_row,
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


# (name, parallel) -> the fixed kernel's compiled form
_compiled: dict[tuple[str, bool], Callable] | None = None
_op_kernels: dict[tuple[str, Callable, bool], Callable] = {}
_registered: set[Callable] = set()


def build() -> dict[tuple[str, bool], Callable]:
    """Import numba, compile-wrap the bodies and both forms of each fixed kernel (compiled on first call)."""
    global _compiled, _jb, prange
    if _compiled is None:
        numba = require_numba()
        bodies = types.ModuleType("torchlight_numba_bodies")
        for name in kernel_bodies.BODY_NAMES:
            setattr(bodies, name, numba.njit(getattr(kernel_bodies, name)))
        _jb = bodies
        prange = numba.prange
        key = source_key()
        factories = dict(_FIXED_KERNELS)
        for name, row_body in _ROW_KERNELS.items():
            _register(numba, row_body)
            factories[name] = (lambda k, body=row_body: _make_row_kernel(body, k), {})
        compiled = {}
        for name, (factory, options) in factories.items():
            for parallel in (True, False):
                kernel = factory((key, parallel))
                compiled[name, parallel] = _jit(numba, kernel, parallel=parallel, **options)
        for name, factory in _SERIAL_ONLY.items():
            compiled[name, True] = compiled[name, False] = _jit(numba, factory((key, False)))
        _compiled = compiled
    return _compiled


def _jit(numba: types.ModuleType, kernel: Callable, **options: object) -> Callable:
    """``kernel`` compiled with the shared options, its cache saves one process at a time (cache_lock.py)."""
    return serialize_cache_writes(numba.njit(**_OPTIONS, **options)(kernel))


def fixed_kernel(name: str, work: int) -> Callable:
    """The compiled fixed kernel ``name`` for a call touching ``work`` elements (serial below the bar)."""
    return build()[name, work >= SERIAL_BELOW]


def _register(numba: types.ModuleType, fn: Callable) -> None:
    """Make the plain function ``fn`` callable from compiled code (once per function)."""
    if fn not in _registered:
        numba.extending.register_jitable(fn)
        _registered.add(fn)


def op_kernel(kind: str, scalar: Callable, work: int) -> Callable:
    """The compiled ``kind`` kernel ("map", "zip", "reduce") for one scalar body and ``work`` elements."""
    parallel = work >= SERIAL_BELOW
    key = (kind, scalar, parallel)
    kernel = _op_kernels.get(key)
    if kernel is None:
        build()
        numba = require_numba()
        _register(numba, scalar)
        body = _FACTORIES[kind](scalar, (source_key(scalar), parallel))
        kernel = _jit(numba, body, parallel=parallel)
        _op_kernels[key] = kernel
    return kernel
