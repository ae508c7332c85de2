"""CudaProvider (numba-cuda kernels) and CudaBackend, the GPU backend built on a provider.

A *provider* owns the kernels and the per-op host<->device transfer; the backend owns the
input checks and the op names. ``CudaBackend(provider=None)`` picks ``CudaCKernelProvider``
when compiled CUDA C kernel libraries are found, else ``CudaProvider``.

Kernel layout (one source for the GPU, the simulator and the compile check):

* map / zip: one thread per output element in a grid-stride loop; the index maths are the
  shared per-thread bodies of ``kernel_bodies`` compiled as inline device functions.
* reduce and the fused row ops: one block per row in a block-stride loop over rows; each
  thread strides over the row, then a shared-memory tree combines the partial results.
  The block size is a power of two fitted to the row length (so rows of any length work),
  and every ``syncthreads`` sits in code that all threads of the block reach.
* matmul: square shared-memory tiles, a barrier after each tile load and after its use;
  every grid dim is a stride loop, so any batch count and matrix size fit in the grid.

Under ``NUMBA_ENABLE_CUDASIM=1`` every simulated thread is a Python thread, so the launch
configuration shrinks (``SIM_LAUNCH``: blocks of at most 32 threads, 4x4 matmul tiles, two
blocks per grid) while the kernels and their code paths stay the same. Three more simulator
details keep its answers those of a GPU: scalar op bodies get IEEE ``math`` (log(0) = -inf,
not ValueError), launches lower the GIL switch interval (barriers otherwise wait ~5 ms each),
and shared arrays are looked up under a lock (see ``_lock_simulator_shared_arrays``).

``CudaProvider.kernel_specs()`` is the one registry of kernels and signatures: the launch
path compiles exactly the specs it lists, and ``ci/compile_ptx.py`` compiles them to PTX.

Importing this module never imports numba; it loads on first use.
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
import sys
import threading
import types
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np

from ..core.device import Device
from ..core.tensor_data import TensorData, broadcast_shapes, contiguous_strides
from . import kernel_bodies
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

INSTALL_HINT = 'pip install "torchlight[cuda]"'
FALLBACK_ENV = "TORCHLIGHT_CUDA_FALLBACK"
FALLBACK_CHOICES = ("numba",)
SIM_ENV = "NUMBA_ENABLE_CUDASIM"
KERNEL_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))

# numba.cuda, bound on first use. It must be a module global: the simulator runs a kernel by
# swapping every global that is numba.cuda for its fake module, and kernels read it from here.
cuda = None
_NUMBA: SimpleNamespace | None = None


class CudaUnavailableError(RuntimeError):
    """numba-cuda is installed but finds no usable NVIDIA GPU or driver."""


@dataclass(frozen=True)
class LaunchConfig:
    """Block and grid sizes; powers of two where a tree reduction depends on them."""

    threads: int  # block size of the elementwise kernels
    max_blocks: int  # cap of every grid dim; the stride loops cover the rest
    row_threads: int  # largest block of the row kernels (shared-memory size; a power of two)
    min_row_threads: int  # smallest block of the row kernels (a power of two)
    tile: int  # side of the square matmul tiles


GPU_LAUNCH = LaunchConfig(threads=256, max_blocks=65535, row_threads=256, min_row_threads=32, tile=16)
# The simulator costs ~0.2 ms per thread and a few ms per barrier: small blocks, two of them.
SIM_LAUNCH = LaunchConfig(threads=32, max_blocks=2, row_threads=32, min_row_threads=1, tile=4)


@dataclass(frozen=True)
class KernelSpec:
    """One kernel of a provider: a unique name, its Python source function and its signature."""

    name: str
    kind: str
    pyfunc: Callable
    signature: tuple


# --- loading numba-cuda -------------------------------------------------------------------------


def _load_numba_cuda() -> SimpleNamespace:
    """numba, numba.cuda and the compiled device helpers; ImportError with the install hint."""
    global cuda, _NUMBA
    if _NUMBA is not None:
        return _NUMBA
    try:
        import numba
        import numba_cuda  # noqa: F401  (the NVIDIA-maintained target, not numba's old built-in one)
        from numba import cuda as numba_cuda_module
    except ImportError as err:
        if type(err).__name__ == "CudaSupportError":
            raise _unavailable(str(err)) from err
        raise ImportError(
            f"CudaBackend needs numba-cuda, which is not installed ({err}). Install it with: "
            f"{INSTALL_HINT}. Without an NVIDIA GPU, torchlight.backends.cuda.numba_backend() runs "
            f"the same kernel bodies on the CPU."
        ) from err
    cuda = numba_cuda_module
    if numba.config.ENABLE_CUDASIM:
        _lock_simulator_shared_arrays()
    # Inline device functions: numba-cuda compiles a non-inlined device function for the
    # current device, which needs a GPU; inlined ones compile for any target (compile tier).
    device = numba_cuda_module.jit(device=True, inline="always")
    _NUMBA = SimpleNamespace(
        numba=numba,
        cuda=numba_cuda_module,
        device=device,
        bodies=kernel_bodies.make_bodies(device),
        tree_sum=device(_tree_sum),
        tree_sum2=device(_tree_sum2),
        tree_max=device(_tree_max),
        simulator=bool(numba.config.ENABLE_CUDASIM),
        scalars={},
    )
    return _NUMBA


def _lock_simulator_shared_arrays() -> None:
    """Make the simulator hand every thread of a block the same shared array.

    numba-cuda's simulator creates a block's shared array when the first thread asks for it,
    with no lock: two threads that ask at once each get a private array, and the block then
    computes garbage. Short GIL switch intervals (see ``CudaProvider._launching``) make that
    likely, so the lookup is replaced by one that holds a lock. Dynamic shared memory (size 0)
    keeps the simulator's own path.
    """
    from numba.core import types as numba_types
    from numba.cuda.simulator import kernelapi
    from numba.np import numpy_support

    shared = kernelapi.FakeCUDAShared
    if getattr(shared, "_torchlight_locked", False):
        return
    simulator_array = shared.array
    lock = threading.Lock()

    def array(self, shape, dtype, alignment=None):
        if shape == 0 or alignment is not None:
            return simulator_array(self, shape, dtype, alignment)
        caller = sys._getframe(1)
        # The same key as the simulator's: one array per source line of the kernel.
        key = (caller.f_code.co_filename, caller.f_lineno)
        with lock:
            found = self._allocations.get(key)
            if found is None:
                if isinstance(dtype, numba_types.Type):
                    dtype = numpy_support.as_dtype(dtype)
                found = self._allocations[key] = np.empty(shape, dtype)
        return found

    shared.array = array
    shared._torchlight_locked = True


def _unavailable(reason: str) -> CudaUnavailableError:
    reason = " ".join(reason.split()).rstrip(".") or "no CUDA driver"
    return CudaUnavailableError(
        f"CudaBackend needs an NVIDIA GPU and driver, and numba-cuda found none: {reason}. "
        f"Without a GPU, run the same kernels in numba-cuda's simulator by setting {SIM_ENV}=1 "
        f"before numba is first imported, or use the numba CPU twin: "
        f"torchlight.backends.cuda.numba_backend() (or {FALLBACK_ENV}=numba to have "
        f"get_backend('cuda') return it)."
    )


def _device_scalar(fn: Callable) -> Callable:
    """``fn`` (a scalar op body) as an inline device function, compiled once per function."""
    nb = _load_numba_cuda()
    dev = nb.scalars.get(fn)
    if dev is None:
        dev = nb.scalars[fn] = nb.device(_with_ieee_math(fn) if nb.simulator else fn)
    return dev


class _IeeeMath:
    """``math`` as a GPU computes it: log(0) is -inf and exp overflows to inf, never an exception.

    The simulator runs scalar bodies as Python, whose ``math`` raises ValueError or
    OverflowError there; numpy's ufuncs give the IEEE results (float32 in, float32 out).
    """

    def __getattr__(self, name: str):
        ufunc = getattr(np, name, None)
        if not callable(ufunc):
            return getattr(math, name) if ufunc is None else ufunc

        def quiet(*args):
            with np.errstate(all="ignore"):
                return ufunc(*args)

        return quiet


def _with_ieee_math(fn: Callable) -> Callable:
    """``fn`` with IEEE semantics for the simulator: ``math`` is ``_IeeeMath`` and numpy's
    scalar division by zero gives inf/nan silently, as on a GPU."""
    scope = dict(fn.__globals__)
    scope["math"] = _IeeeMath()
    clone = types.FunctionType(fn.__code__, scope, fn.__name__, fn.__defaults__, fn.__closure__)

    @functools.wraps(fn)
    def ieee(*args):
        with np.errstate(all="ignore"):
            return clone(*args)

    return ieee


# --- block-wide tree reductions (device helpers; every thread of the block must call them) ------


def _tree_sum(buf, value, t, nt):
    """Sum of ``value`` over the block's ``nt`` threads (a power of two) via ``buf``."""
    buf[t] = value
    cuda.syncthreads()
    step = nt // 2
    while step > 0:
        if t < step:
            buf[t] += buf[t + step]
        cuda.syncthreads()
        step //= 2
    total = buf[0]
    # Nobody may overwrite buf[0] for the next reduction before every thread has read it.
    cuda.syncthreads()
    return total


def _tree_sum2(buf_a, buf_b, a, b, t, nt):
    """Two block sums in one tree (half the barriers of two ``_tree_sum`` calls)."""
    buf_a[t] = a
    buf_b[t] = b
    cuda.syncthreads()
    step = nt // 2
    while step > 0:
        if t < step:
            buf_a[t] += buf_a[t + step]
            buf_b[t] += buf_b[t + step]
        cuda.syncthreads()
        step //= 2
    total_a = buf_a[0]
    total_b = buf_b[0]
    cuda.syncthreads()
    return total_a, total_b


def _tree_max(buf, value, t, nt):
    """Maximum of ``value`` over the block's ``nt`` threads (a power of two) via ``buf``."""
    buf[t] = value
    cuda.syncthreads()
    step = nt // 2
    while step > 0:
        if t < step:
            other = buf[t + step]
            if other > buf[t]:
                buf[t] = other
        cuda.syncthreads()
        step //= 2
    best = buf[0]
    cuda.syncthreads()
    return best


# --- kernel sources: each builder returns (pyfunc, signature) for one op and dtype -------------


def _types(dtype: np.dtype) -> SimpleNamespace:
    nb = _load_numba_cuda().numba
    scalar = nb.from_dtype(np.dtype(dtype))
    return SimpleNamespace(
        scalar=scalar, array=scalar[::1], index=nb.int64[::1], int=nb.int64, np=np.dtype(dtype).type
    )


def _build_map(fn: Callable, dtype: np.dtype, launch: LaunchConfig):
    ty = _types(dtype)
    scalar = _device_scalar(fn)
    map_positions = _load_numba_cuda().bodies.map_positions

    def map_kernel(out, a, shape, out_strides, a_strides, a_offset, n):
        i = cuda.grid(1)
        step = cuda.gridsize(1)
        while i < n:
            out_pos, a_pos = map_positions(i, shape, out_strides, 0, a_strides, a_offset)
            out[out_pos] = scalar(a[a_pos])
            i += step

    return map_kernel, (ty.array, ty.array, ty.index, ty.index, ty.index, ty.int, ty.int)


def _build_zip(fn: Callable, dtype: np.dtype, launch: LaunchConfig):
    ty = _types(dtype)
    scalar = _device_scalar(fn)
    zip_positions = _load_numba_cuda().bodies.zip_positions

    def zip_kernel(out, out_shape, a, a_shape, a_strides, a_offset, b, b_shape, b_strides, b_offset, n):
        i = cuda.grid(1)
        step = cuda.gridsize(1)
        while i < n:
            a_pos, b_pos = zip_positions(
                i, out_shape, a_shape, a_strides, a_offset, b_shape, b_strides, b_offset
            )
            out[i] = scalar(a[a_pos], b[b_pos])
            i += step

    sig = (ty.array, ty.index, ty.array, ty.index, ty.index, ty.int, ty.array, ty.index, ty.index, ty.int)
    return zip_kernel, (*sig, ty.int)


def _build_reduce(fn: Callable, dtype: np.dtype, launch: LaunchConfig):
    ty = _types(dtype)
    scalar = _device_scalar(fn)
    reduce_start = _load_numba_cuda().bodies.reduce_start
    width = launch.row_threads
    acc_type = ty.scalar

    def reduce_kernel(out, out_shape, a, a_strides, a_offset, dim, dim_len, n_rows, start):
        buf = cuda.shared.array(width, acc_type)
        t = cuda.threadIdx.x
        nt = cuda.blockDim.x
        dim_stride = a_strides[dim]
        row = cuda.blockIdx.x
        # The row loop's bounds depend on the block only, so the whole block runs each trip.
        while row < n_rows:
            base = reduce_start(row, out_shape, a_strides, a_offset, dim)
            acc = start
            j = t
            while j < dim_len:
                acc = scalar(acc, a[base + j * dim_stride])
                j += nt
            buf[t] = acc
            cuda.syncthreads()
            step = nt // 2
            while step > 0:
                if t < step:
                    buf[t] = scalar(buf[t], buf[t + step])
                cuda.syncthreads()
                step //= 2
            if t == 0:
                out[row] = buf[0]
            cuda.syncthreads()
            row += cuda.gridDim.x

    return reduce_kernel, (
        ty.array,
        ty.index,
        ty.array,
        ty.index,
        ty.int,
        ty.int,
        ty.int,
        ty.int,
        ty.scalar,
    )


def _build_matmul(fn: Callable | None, dtype: np.dtype, launch: LaunchConfig):
    ty = _types(dtype)
    broadcast_position = _load_numba_cuda().bodies.broadcast_position
    tile = launch.tile
    elem = ty.scalar
    zero = ty.np(0)

    def matmul_kernel(
        out, a, b, batch_shape, a_bshape, a_bstrides, a_offset, b_bshape, b_bstrides, b_offset, shape
    ):
        # shape = [m, n, k, n_batch, a_row_stride, a_col_stride, b_row_stride, b_col_stride]
        sa = cuda.shared.array((tile, tile), elem)
        sb = cuda.shared.array((tile, tile), elem)
        m = shape[0]
        n = shape[1]
        k = shape[2]
        n_batch = shape[3]
        tx = cuda.threadIdx.x
        ty_ = cuda.threadIdx.y
        tiles_m = (m + tile - 1) // tile
        tiles_n = (n + tile - 1) // tile
        z = cuda.blockIdx.z
        while z < n_batch:
            a_base = broadcast_position(z, batch_shape, a_bshape, a_bstrides, a_offset)
            b_base = broadcast_position(z, batch_shape, b_bshape, b_bstrides, b_offset)
            by = cuda.blockIdx.y
            while by < tiles_m:
                bx = cuda.blockIdx.x
                while bx < tiles_n:
                    row = by * tile + ty_
                    col = bx * tile + tx
                    acc = zero
                    for k0 in range(0, k, tile):
                        ka = k0 + tx
                        if row < m and ka < k:
                            sa[ty_, tx] = a[a_base + row * shape[4] + ka * shape[5]]
                        else:
                            sa[ty_, tx] = zero
                        kb = k0 + ty_
                        if kb < k and col < n:
                            sb[ty_, tx] = b[b_base + kb * shape[6] + col * shape[7]]
                        else:
                            sb[ty_, tx] = zero
                        cuda.syncthreads()
                        for q in range(tile):
                            acc += sa[ty_, q] * sb[q, tx]
                        # The next tile load must wait until every thread is done with this one.
                        cuda.syncthreads()
                    if row < m and col < n:
                        out[(z * m + row) * n + col] = acc
                    bx += cuda.gridDim.x
                by += cuda.gridDim.y
            z += cuda.gridDim.z

    sig = (ty.array, ty.array, ty.array, ty.index, ty.index, ty.index, ty.int, ty.index, ty.index, ty.int)
    return matmul_kernel, (*sig, ty.index)


def _build_attn_softmax_fw(fn: Callable | None, dtype: np.dtype, launch: LaunchConfig):
    ty = _types(dtype)
    nb = _load_numba_cuda()
    tree_max, tree_sum = nb.tree_max, nb.tree_sum
    width = launch.row_threads
    elem = ty.scalar
    zero = ty.np(0)
    inf = ty.np(math.inf)

    def attn_softmax_fw_kernel(y, x, mask, dims):
        # dims = [n_rows, rows_per_batch, q_len, k_len, use_mask, causal]
        buf = cuda.shared.array(width, elem)
        n_rows = dims[0]
        rows_per_batch = dims[1]
        q_len = dims[2]
        k_len = dims[3]
        use_mask = dims[4] != 0
        causal = dims[5] != 0
        t = cuda.threadIdx.x
        nt = cuda.blockDim.x
        row = cuda.blockIdx.x
        while row < n_rows:
            base = row * k_len
            mask_base = (row // rows_per_batch) * k_len
            q = row % q_len
            # Causal (top-left): keys after the query's own position are excluded.
            last = k_len
            if causal and q + 1 < k_len:
                last = q + 1
            # A nan or +inf score poisons the row: like the reference it becomes all zeros.
            best = -inf
            j = t
            while j < last:
                v = x[base + j]
                if use_mask:
                    v += mask[mask_base + j]
                if v != v or v == inf:
                    best = inf
                elif v > best:
                    best = v
                j += nt
            row_max = tree_max(buf, best, t, nt)
            live = row_max != inf and row_max != -inf
            shift = row_max if live else zero
            part = zero
            j = t
            while j < last:
                v = x[base + j]
                if use_mask:
                    v += mask[mask_base + j]
                part += math.exp(v - shift)
                j += nt
            total = tree_sum(buf, part, t, nt)
            j = t
            while j < k_len:
                if live and j < last:
                    v = x[base + j]
                    if use_mask:
                        v += mask[mask_base + j]
                    y[base + j] = math.exp(v - shift) / total
                else:
                    y[base + j] = zero
                j += nt
            row += cuda.gridDim.x

    return attn_softmax_fw_kernel, (ty.array, ty.array, ty.array, ty.index)


def _build_attn_softmax_bw(fn: Callable | None, dtype: np.dtype, launch: LaunchConfig):
    ty = _types(dtype)
    tree_sum = _load_numba_cuda().tree_sum
    width = launch.row_threads
    elem = ty.scalar
    zero = ty.np(0)

    def attn_softmax_bw_kernel(dx, y, dy, n_rows, k_len):
        buf = cuda.shared.array(width, elem)
        t = cuda.threadIdx.x
        nt = cuda.blockDim.x
        row = cuda.blockIdx.x
        while row < n_rows:
            base = row * k_len
            part = zero
            j = t
            while j < k_len:
                part += y[base + j] * dy[base + j]
                j += nt
            dot = tree_sum(buf, part, t, nt)
            j = t
            while j < k_len:
                dx[base + j] = y[base + j] * (dy[base + j] - dot)
                j += nt
            row += cuda.gridDim.x

    return attn_softmax_bw_kernel, (ty.array, ty.array, ty.array, ty.int, ty.int)


def _build_layernorm_fw(fn: Callable | None, dtype: np.dtype, launch: LaunchConfig):
    ty = _types(dtype)
    tree_sum = _load_numba_cuda().tree_sum
    width = launch.row_threads
    elem = ty.scalar
    zero = ty.np(0)
    one = ty.np(1)

    def layernorm_fw_kernel(y, mean, rstd, x, gamma, beta, eps, n_rows, hidden):
        buf = cuda.shared.array(width, elem)
        t = cuda.threadIdx.x
        nt = cuda.blockDim.x
        size = elem(hidden)
        row = cuda.blockIdx.x
        while row < n_rows:
            base = row * hidden
            part = zero
            j = t
            while j < hidden:
                part += x[base + j]
                j += nt
            mu = tree_sum(buf, part, t, nt) / size
            # Two passes: the variance of centred values cannot come out negative.
            part = zero
            j = t
            while j < hidden:
                c = x[base + j] - mu
                part += c * c
                j += nt
            r = one / math.sqrt(tree_sum(buf, part, t, nt) / size + eps)
            j = t
            while j < hidden:
                y[base + j] = (x[base + j] - mu) * r * gamma[j] + beta[j]
                j += nt
            if t == 0:
                mean[row] = mu
                rstd[row] = r
            row += cuda.gridDim.x

    sig = (ty.array, ty.array, ty.array, ty.array, ty.array, ty.array, ty.scalar, ty.int, ty.int)
    return layernorm_fw_kernel, sig


def _build_layernorm_bw(fn: Callable | None, dtype: np.dtype, launch: LaunchConfig):
    ty = _types(dtype)
    tree_sum2 = _load_numba_cuda().tree_sum2
    width = launch.row_threads
    elem = ty.scalar
    zero = ty.np(0)

    def layernorm_bw_kernel(dx, dy, x, gamma, mean, rstd, n_rows, hidden):
        buf_g = cuda.shared.array(width, elem)
        buf_gx = cuda.shared.array(width, elem)
        t = cuda.threadIdx.x
        nt = cuda.blockDim.x
        size = elem(hidden)
        row = cuda.blockIdx.x
        while row < n_rows:
            base = row * hidden
            mu = mean[row]
            r = rstd[row]
            part_g = zero
            part_gx = zero
            j = t
            while j < hidden:
                g = dy[base + j] * gamma[j]
                part_g += g
                part_gx += g * (x[base + j] - mu) * r
                j += nt
            sum_g, sum_gx = tree_sum2(buf_g, buf_gx, part_g, part_gx, t, nt)
            mean_g = sum_g / size
            mean_gx = sum_gx / size
            j = t
            while j < hidden:
                xhat = (x[base + j] - mu) * r
                dx[base + j] = r * (dy[base + j] * gamma[j] - mean_g - xhat * mean_gx)
                j += nt
            row += cuda.gridDim.x

    return layernorm_bw_kernel, (ty.array,) * 6 + (ty.int, ty.int)


def _build_layernorm_params(fn: Callable | None, dtype: np.dtype, launch: LaunchConfig):
    ty = _types(dtype)
    layernorm_param_col = _load_numba_cuda().bodies.layernorm_param_col

    # One thread per hidden column, summing down the rows: neighbouring threads read
    # neighbouring addresses, which a block-per-column tree would not.
    def layernorm_params_kernel(dgamma, dbeta, dy, x, mean, rstd, n_rows, hidden):
        col = cuda.grid(1)
        step = cuda.gridsize(1)
        while col < hidden:
            layernorm_param_col(col, dy, x, mean, rstd, dgamma, dbeta, n_rows, hidden)
            col += step

    return layernorm_params_kernel, (ty.array,) * 6 + (ty.int, ty.int)


# kind -> (builder, the op table entries it is built for; None: one kernel per dtype)
_KERNEL_KINDS: dict[str, tuple[Callable, tuple | None]] = {
    "map": (_build_map, UNARY_OPS),
    "zip": (_build_zip, BINARY_OPS),
    "reduce": (_build_reduce, REDUCE_OPS),
    "matmul": (_build_matmul, None),
    "attn_softmax_fw": (_build_attn_softmax_fw, None),
    "attn_softmax_bw": (_build_attn_softmax_bw, None),
    "layernorm_fw": (_build_layernorm_fw, None),
    "layernorm_bw": (_build_layernorm_bw, None),
    "layernorm_params": (_build_layernorm_params, None),
}

_OP_NAMES: dict[Callable, str] = {op.scalar: op.name for op in (*UNARY_OPS, *BINARY_OPS, *REDUCE_OPS)}


def _kernel_name(kind: str, fn: Callable | None, dtype: np.dtype) -> str:
    if fn is None:
        return f"{kind}[{np.dtype(dtype).name}]"
    op = _OP_NAMES.get(fn, getattr(fn, "__name__", repr(fn)))
    return f"{kind}_{op}[{np.dtype(dtype).name}]"


# --- host-side helpers ----------------------------------------------------------------------------


def _ints(values, pad: int = 1) -> np.ndarray:
    """An int64 array of ``values``; empty becomes ``[pad]`` (kernels never get 0-length arrays)."""
    out = np.asarray(tuple(values), dtype=np.int64)
    return out if out.size else np.asarray([pad], dtype=np.int64)


def _pow2_at_least(n: int) -> int:
    return 1 << max(0, int(n) - 1).bit_length()


def _result(array: np.ndarray, shape: tuple[int, ...]) -> TensorData:
    return TensorData.from_array(array.reshape(shape))


def _contiguous(data: TensorData) -> np.ndarray:
    """The elements of ``data`` as a flat C-ordered array (a copy only when needed)."""
    return np.ascontiguousarray(data.array).reshape(-1)


class CudaProvider:
    """numba-cuda kernels for the primitives and fused ops; inputs are already validated.

    Subclasses (``CudaCKernelProvider``) override some methods and call ``super()`` for the
    rest. Every method takes and returns host ``TensorData``; each call copies its inputs
    to the device, launches, and copies the result back.
    """

    name = "numba-cuda"

    def __init__(self, launch: LaunchConfig | None = None) -> None:
        nb = _load_numba_cuda()
        self.simulator = nb.simulator
        if not self.simulator:
            try:
                available = nb.cuda.is_available()
            except Exception as err:  # numba's driver errors: say what to do instead
                raise _unavailable(str(err)) from err
            if not available:
                raise _unavailable(_driver_reason(nb.cuda))
        self.launch = launch or (SIM_LAUNCH if self.simulator else GPU_LAUNCH)
        self._kernels: dict[tuple, Callable] = {}

    # --- the registry ---------------------------------------------------------------------

    @classmethod
    def kernel_specs(cls, launch: LaunchConfig | None = None) -> list[KernelSpec]:
        """Every kernel this provider launches, per dtype, with its explicit signature."""
        launch = launch or GPU_LAUNCH
        specs = []
        for kind, (_, ops) in _KERNEL_KINDS.items():
            for fn in [op.scalar for op in ops] if ops is not None else [None]:
                for dtype in KERNEL_DTYPES:
                    specs.append(cls.kernel_spec(kind, fn, dtype, launch))
        return specs

    @staticmethod
    def kernel_spec(kind: str, fn: Callable | None, dtype: np.dtype, launch: LaunchConfig) -> KernelSpec:
        """The spec of one kernel: ``kind`` from the registry, ``fn`` its scalar op (or None)."""
        builder, _ = _KERNEL_KINDS[kind]
        pyfunc, signature = builder(fn, np.dtype(dtype), launch)
        return KernelSpec(_kernel_name(kind, fn, dtype), kind, pyfunc, signature)

    def kernel(self, kind: str, fn: Callable | None, dtype: np.dtype) -> Callable:
        """The compiled kernel for ``kind``/``fn``/``dtype``, built from its spec on first use."""
        key = (kind, fn, np.dtype(dtype))
        compiled = self._kernels.get(key)
        if compiled is None:
            spec = self.kernel_spec(kind, fn, dtype, self.launch)
            compiled = self._kernels[key] = cuda.jit(spec.signature)(spec.pyfunc)
        return compiled

    # --- launching --------------------------------------------------------------------------

    @contextlib.contextmanager
    def _launching(self) -> Iterator[None]:
        if not self.simulator:
            try:
                yield
            except Exception as err:
                # A driver that vanished after start-up; other CUDA errors keep their own message.
                if type(err).__name__ == "CudaSupportError":
                    raise _unavailable(str(err)) from err
                raise
            return
        # Simulated threads hand the GIL around at every barrier; at the default 5 ms
        # switch interval a block spends most of its time waiting for its turn.
        previous = sys.getswitchinterval()
        sys.setswitchinterval(1e-4)
        try:
            yield
        finally:
            sys.setswitchinterval(previous)

    def _run(self, kernel: Callable, grid, block, *args) -> None:
        with self._launching():
            kernel[grid, block](*args)

    def _to_device(self, array: np.ndarray):
        with self._launching():
            return cuda.to_device(np.ascontiguousarray(array))

    def _empty(self, size: int, dtype: np.dtype):
        with self._launching():
            return cuda.device_array(max(int(size), 1), dtype=dtype)

    def _to_host(self, device_array, size: int) -> np.ndarray:
        with self._launching():
            return device_array.copy_to_host()[:size]

    def _grid(self, work: int, per_block: int) -> int:
        return max(1, min(-(-int(work) // per_block), self.launch.max_blocks))

    def _row_block(self, length: int) -> int:
        cap = self.launch.row_threads
        return max(self.launch.min_row_threads, min(cap, _pow2_at_least(length)))

    # --- primitives -------------------------------------------------------------------------

    def map(self, fn: Callable, a: TensorData) -> TensorData:
        """``fn`` applied to every element of ``a`` (a fresh contiguous result)."""
        n = a.size
        if n == 0:
            return TensorData.from_array(np.empty(a.shape, dtype=a.dtype))
        kernel = self.kernel("map", fn, a.dtype)
        out = self._empty(n, a.dtype)
        self._run(
            kernel,
            self._grid(n, self.launch.threads),
            self.launch.threads,
            out,
            self._to_device(a.storage),
            self._to_device(_ints(a.shape)),
            self._to_device(_ints(contiguous_strides(a.shape), 0)),
            self._to_device(_ints(a.strides, 0)),
            a.offset,
            n,
        )
        return _result(self._to_host(out, n), a.shape)

    def zip(self, fn: Callable, a: TensorData, b: TensorData) -> TensorData:
        """``fn`` over the numpy broadcast of ``a`` and ``b``, promoting the dtype like numpy."""
        shape = broadcast_shapes(a.shape, b.shape)
        dtype = np.result_type(a.dtype, b.dtype)
        n = int(np.prod(shape, dtype=np.int64))
        if n == 0:
            return TensorData.from_array(np.empty(shape, dtype=dtype))
        a = a if a.dtype == dtype else TensorData.from_array(a.array.astype(dtype))
        b = b if b.dtype == dtype else TensorData.from_array(b.array.astype(dtype))
        kernel = self.kernel("zip", fn, dtype)
        out = self._empty(n, dtype)
        self._run(
            kernel,
            self._grid(n, self.launch.threads),
            self.launch.threads,
            out,
            self._to_device(_ints(shape)),
            self._to_device(a.storage),
            self._to_device(_ints(a.shape)),
            self._to_device(_ints(a.strides, 0)),
            a.offset,
            self._to_device(b.storage),
            self._to_device(_ints(b.shape)),
            self._to_device(_ints(b.strides, 0)),
            b.offset,
            n,
        )
        return _result(self._to_host(out, n), shape)

    def reduce(self, fn: Callable, start: float, a: TensorData, dim: int) -> TensorData:
        """Reduce dim ``dim`` (non-negative) of ``a`` with ``fn`` from ``start``, keeping it as 1."""
        out_shape = a.shape[:dim] + (1,) + a.shape[dim + 1 :]
        rows = int(np.prod(out_shape, dtype=np.int64))
        if rows == 0:
            return TensorData.from_array(np.empty(out_shape, dtype=a.dtype))
        dim_len = a.shape[dim]
        storage = a.storage if a.storage.size else np.zeros(1, dtype=a.dtype)
        kernel = self.kernel("reduce", fn, a.dtype)
        out = self._empty(rows, a.dtype)
        self._run(
            kernel,
            self._grid(rows, 1),
            self._row_block(dim_len),
            out,
            self._to_device(_ints(out_shape)),
            self._to_device(storage),
            self._to_device(_ints(a.strides, 0)),
            a.offset,
            dim,
            dim_len,
            rows,
            a.dtype.type(start),
        )
        return _result(self._to_host(out, rows), out_shape)

    def matmul(self, a: TensorData, b: TensorData) -> TensorData:
        """Batched ``a @ b`` over the last two dims with broadcast batch dims."""
        dtype = np.result_type(a.dtype, b.dtype)
        a = a if a.dtype == dtype else TensorData.from_array(a.array.astype(dtype))
        b = b if b.dtype == dtype else TensorData.from_array(b.array.astype(dtype))
        shape = matmul_shape(a, b)
        batch = shape[:-2]
        m, n, k = a.shape[-2], b.shape[-1], a.shape[-1]
        n_batch = int(np.prod(batch, dtype=np.int64))
        size = n_batch * m * n
        if size == 0:
            return TensorData.from_array(np.zeros(shape, dtype=dtype))
        tile = self.launch.tile
        cap = self.launch.max_blocks
        grid = (min(-(-n // tile), cap), min(-(-m // tile), cap), min(n_batch, cap))
        dims = (m, n, k, n_batch, a.strides[-2], a.strides[-1], b.strides[-2], b.strides[-1])
        out = self._empty(size, dtype)
        self._run(
            self.kernel("matmul", None, dtype),
            grid,
            (tile, tile),
            out,
            self._to_device(a.storage if a.storage.size else np.zeros(1, dtype)),
            self._to_device(b.storage if b.storage.size else np.zeros(1, dtype)),
            self._to_device(_ints(batch)),
            self._to_device(_ints(a.shape[:-2])),
            self._to_device(_ints(a.strides[:-2], 0)),
            a.offset,
            self._to_device(_ints(b.shape[:-2])),
            self._to_device(_ints(b.strides[:-2], 0)),
            b.offset,
            self._to_device(_ints(dims)),
        )
        return _result(self._to_host(out, size), shape)

    # --- fused ops ----------------------------------------------------------------------------

    def attn_softmax_fw(
        self, x: TensorData, mask: TensorData | None = None, causal: bool = False
    ) -> TensorData:
        """Masked/causal softmax over the last dim of ``[batch, heads, q_len, k_len]``."""
        batch, heads, q_len, k_len = x.shape
        rows = batch * heads * q_len
        if rows * k_len == 0:
            return TensorData.from_array(np.zeros(x.shape, dtype=x.dtype))
        mask_values = _contiguous(mask) if mask is not None else np.zeros(1, dtype=x.dtype)
        dims = (rows, heads * q_len, q_len, k_len, int(mask is not None), int(bool(causal)))
        y = self._empty(x.size, x.dtype)
        self._run(
            self.kernel("attn_softmax_fw", None, x.dtype),
            self._grid(rows, 1),
            self._row_block(k_len),
            y,
            self._to_device(_contiguous(x)),
            self._to_device(mask_values),
            self._to_device(_ints(dims)),
        )
        return _result(self._to_host(y, x.size), x.shape)

    def attn_softmax_bw(self, y: TensorData, dy: TensorData) -> TensorData:
        """``dx = y * (dy - sum(dy * y))`` over the last dim."""
        k_len = y.shape[-1] if y.ndim else 1
        rows = y.size // k_len if k_len else 0
        if y.size == 0:
            return TensorData.from_array(np.zeros(y.shape, dtype=y.dtype))
        dtype = np.result_type(y.dtype, dy.dtype)
        dx = self._empty(y.size, dtype)
        self._run(
            self.kernel("attn_softmax_bw", None, dtype),
            self._grid(rows, 1),
            self._row_block(k_len),
            dx,
            self._to_device(_contiguous(y).astype(dtype, copy=False)),
            self._to_device(_contiguous(dy).astype(dtype, copy=False)),
            rows,
            k_len,
        )
        return _result(self._to_host(dx, y.size), y.shape)

    def layernorm_fw(
        self, x: TensorData, gamma: TensorData, beta: TensorData, eps: float = 1e-5
    ) -> tuple[TensorData, TensorData, TensorData]:
        """``(y, mean, rstd)`` of layer norm over the last dim (two-pass variance)."""
        hidden = x.shape[-1]
        rows = x.size // hidden
        stats_shape = x.shape[:-1]
        if rows == 0:
            empty = np.zeros(stats_shape, dtype=x.dtype)
            return (
                TensorData.from_array(np.zeros(x.shape, x.dtype)),
                _result(empty, stats_shape),
                _result(empty.copy(), stats_shape),
            )
        y = self._empty(x.size, x.dtype)
        mean = self._empty(rows, x.dtype)
        rstd = self._empty(rows, x.dtype)
        self._run(
            self.kernel("layernorm_fw", None, x.dtype),
            self._grid(rows, 1),
            self._row_block(hidden),
            y,
            mean,
            rstd,
            self._to_device(_contiguous(x)),
            self._to_device(_contiguous(gamma)),
            self._to_device(_contiguous(beta)),
            x.dtype.type(eps),
            rows,
            hidden,
        )
        return (
            _result(self._to_host(y, x.size), x.shape),
            _result(self._to_host(mean, rows), stats_shape),
            _result(self._to_host(rstd, rows), stats_shape),
        )

    def layernorm_bw(
        self, dy: TensorData, x: TensorData, gamma: TensorData, mean: TensorData, rstd: TensorData
    ) -> tuple[TensorData, TensorData, TensorData]:
        """``(dx, dgamma, dbeta)`` for ``layernorm_fw``."""
        hidden = x.shape[-1]
        rows = x.size // hidden if hidden else 0
        dtype = x.dtype

        def flat(t: TensorData) -> np.ndarray:
            return _contiguous(t).astype(dtype, copy=False)

        values = [self._to_device(flat(t) if t.size else np.zeros(1, dtype)) for t in (dy, x, mean, rstd)]
        d_dy, d_x, d_mean, d_rstd = values
        dgamma = self._empty(hidden, dtype)
        dbeta = self._empty(hidden, dtype)
        self._run(
            self.kernel("layernorm_params", None, dtype),
            self._grid(hidden, self.launch.threads),
            self.launch.threads,
            dgamma,
            dbeta,
            d_dy,
            d_x,
            d_mean,
            d_rstd,
            rows,
            hidden,
        )
        if rows:
            dx = self._empty(x.size, dtype)
            self._run(
                self.kernel("layernorm_bw", None, dtype),
                self._grid(rows, 1),
                self._row_block(hidden),
                dx,
                d_dy,
                d_x,
                self._to_device(flat(gamma)),
                d_mean,
                d_rstd,
                rows,
                hidden,
            )
            dx_host = self._to_host(dx, x.size)
        else:
            dx_host = np.zeros(x.size, dtype)
        return (
            _result(dx_host, x.shape),
            _result(self._to_host(dgamma, hidden), (hidden,)),
            _result(self._to_host(dbeta, hidden), (hidden,)),
        )

    def __repr__(self) -> str:
        mode = "simulator" if self.simulator else "gpu"
        return f"{type(self).__name__}({mode}, {self.launch})"


def _driver_reason(cuda_module) -> str:
    try:
        return str(cuda_module.cuda_error() or "no CUDA-capable device is visible")
    except Exception as err:  # the reason itself is best effort; the advice is what matters
        return str(err)


# --- the backend ------------------------------------------------------------------------------------


def default_provider() -> CudaProvider:
    """CudaCKernelProvider when compiled CUDA C kernel libraries are found, else CudaProvider."""
    try:
        from . import cuda_c
    except ModuleNotFoundError as err:
        if err.name != f"{__package__}.cuda_c":
            raise
        return CudaProvider()
    # cuda_c decides: it knows where the libraries live and refuses a broken configured dir.
    return cuda_c.default_cuda_provider()


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
    if _CUDA_BACKEND is None:
        try:
            _CUDA_BACKEND = CudaBackend()
        except (ImportError, CudaUnavailableError) as err:
            if fallback is None:
                raise
            warnings.warn(
                f"CUDA is unavailable ({err}); {FALLBACK_ENV}={fallback} returns the numba CPU twin "
                f"instead, so tensors stay on the CPU",
                RuntimeWarning,
                stacklevel=2,
            )
            from .numba_twin import numba_backend

            return numba_backend()
    return _CUDA_BACKEND
