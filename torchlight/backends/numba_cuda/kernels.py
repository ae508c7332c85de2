"""The numba-cuda kernels: device helpers, one builder per kernel kind, and the kernel registry.

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
blocks per grid) while the kernels and their code paths stay the same; ``cudasim_shims``
keeps the simulator's answers those of a GPU.

``kernel_specs()`` is the one registry of kernels and signatures: ``CudaProvider`` compiles
exactly the specs it lists, and ``ci/compile_ptx.py`` compiles them to PTX.

Importing this module never imports numba; it loads on first use (``load_numba_cuda``).
"""

from __future__ import annotations

import importlib.util
import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np

from .. import kernel_bodies
from ..ops import BINARY_OPS, REDUCE_OPS, UNARY_OPS
from . import cudasim_shims

INSTALL_HINT = 'pip install "torchlight[cuda]"'
FALLBACK_ENV = "TORCHLIGHT_CUDA_FALLBACK"  # registry.FALLBACK_ENV (the rule); named in the no-GPU error
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


def load_numba_cuda() -> SimpleNamespace:
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
            raise unavailable_error(str(err)) from err
        raise missing_numba_cuda_error(err) from err
    cuda = numba_cuda_module
    if numba.config.ENABLE_CUDASIM:
        cudasim_shims.lock_simulator_shared_arrays()
        cudasim_shims.quiet_simulated_float_errors()
    # Inline device functions: numba-cuda compiles a non-inlined device function for the
    # current device, which needs a GPU; inlined ones compile for any target (compile tier).
    device = numba_cuda_module.jit(device=True, inline="always")
    _NUMBA = SimpleNamespace(
        numba=numba,
        cuda=numba_cuda_module,
        device=device,
        bodies=kernel_bodies.make_bodies(device),
        tree_sum=device(tree_reduce(device(_add))),
        tree_sum2=device(_tree_sum2),
        tree_max=device(tree_reduce(device(_larger))),
        simulator=bool(numba.config.ENABLE_CUDASIM),
        scalars={},
    )
    return _NUMBA


def missing_numba_cuda_error(err: ImportError) -> ImportError:
    """The error for a machine without numba-cuda; ``.reason`` is its short cause.

    The numba CPU twin is suggested only when numba itself is installed: it needs numba too.
    """
    if importlib.util.find_spec("numba") is None:
        reason = "numba and numba-cuda are not installed"
        hint = f"Install them with: {INSTALL_HINT} (device='cpu' needs neither)."
    else:
        reason = f"numba-cuda is not installed ({err})"
        hint = (
            f"Install it with: {INSTALL_HINT}. Without an NVIDIA GPU, "
            "torchlight.backends.cuda.numba_backend() runs the same kernel bodies on the CPU."
        )
    error = ImportError(f"CudaBackend needs numba-cuda: {reason}. {hint}")
    error.reason = reason
    return error


def unavailable_error(reason: str) -> CudaUnavailableError:
    """The error for a machine without a usable GPU, naming the simulator and the CPU twin.

    ``.reason`` is the short cause. The fallback variable is suggested only when it is unset.
    """
    reason = " ".join(reason.split()).rstrip(".") or "no CUDA driver"
    fallback = (
        ""
        if os.environ.get(FALLBACK_ENV)
        else f" (or {FALLBACK_ENV}=numba to have get_backend('cuda') return it)"
    )
    error = CudaUnavailableError(
        f"CudaBackend needs an NVIDIA GPU and driver, and numba-cuda found none: {reason}. "
        f"Without a GPU, run the same kernels in numba-cuda's simulator by setting {SIM_ENV}=1 "
        f"before numba is first imported, or use the numba CPU twin: "
        f"torchlight.backends.cuda.numba_backend(){fallback}."
    )
    error.reason = f"numba-cuda found no NVIDIA GPU and driver: {reason}"
    return error


def _device_scalar(fn: Callable) -> Callable:
    """``fn`` (a scalar op body) as an inline device function, compiled once per function."""
    nb = load_numba_cuda()
    dev = nb.scalars.get(fn)
    if dev is None:
        dev = nb.scalars[fn] = nb.device(cudasim_shims.with_ieee_math(fn) if nb.simulator else fn)
    return dev


# --- block-wide tree reductions (device helpers; every thread of the block must call them) ------
#
# One tree serves every reduction: ``tree_reduce(combine)`` closes over a device function, the
# one way numba-cuda lets a device helper take another (device functions cannot be passed as
# arguments). ``_tree_sum2`` stays separate: it runs two sums through one tree, and numba has
# no way to make the number of buffers a parameter.


def _add(a, b):
    return a + b


def _larger(a, b):
    # Not max(): a nan already in ``a`` must stay, as the kernels' own comparisons keep it.
    return b if b > a else a


def tree_reduce(combine: Callable) -> Callable:
    """A block-wide reduction with ``combine``: ``(buf, value, t, nt) -> combined value``.

    ``nt`` (the block size) must be a power of two and ``buf`` hold ``nt`` elements.
    """

    def tree(buf, value, t, nt):
        buf[t] = value
        cuda.syncthreads()
        step = nt // 2
        while step > 0:
            if t < step:
                buf[t] = combine(buf[t], buf[t + step])
            cuda.syncthreads()
            step //= 2
        total = buf[0]
        # Nobody may overwrite buf[0] for the next reduction before every thread has read it.
        cuda.syncthreads()
        return total

    return tree


def _tree_sum2(buf_a, buf_b, a, b, t, nt):
    """Two block sums in one tree (half the barriers of two ``tree_sum`` calls)."""
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


# --- kernel sources: each builder returns (pyfunc, signature) for one op and dtype -------------


def _types(dtype: np.dtype) -> SimpleNamespace:
    nb = load_numba_cuda().numba
    scalar = nb.from_dtype(np.dtype(dtype))
    return SimpleNamespace(
        scalar=scalar, array=scalar[::1], index=nb.int64[::1], int=nb.int64, np=np.dtype(dtype).type
    )


def _build_map(fn: Callable, dtype: np.dtype, launch: LaunchConfig):
    ty = _types(dtype)
    scalar = _device_scalar(fn)
    map_positions = load_numba_cuda().bodies.map_positions

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
    zip_positions = load_numba_cuda().bodies.zip_positions

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
    nb = load_numba_cuda()
    reduce_start = nb.bodies.reduce_start
    tree = nb.device(tree_reduce(scalar))
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
            total = tree(buf, acc, t, nt)
            if t == 0:
                out[row] = total
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
    broadcast_position = load_numba_cuda().bodies.broadcast_position
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
    nb = load_numba_cuda()
    tree_max, tree_sum = nb.tree_max, nb.tree_sum
    width = launch.row_threads
    elem = ty.scalar
    zero = ty.np(0)
    inf = ty.np(math.inf)
    nan = ty.np(math.nan)

    def attn_softmax_fw_kernel(y, x, mask, dims):
        # dims = [n_rows, heads, q_len, k_len, use_mask, causal, msb, msh, msq, msk]: mask
        # element [b, h, q, k] at b*msb + h*msh + q*msq + k*msk (0 along a broadcast dim).
        buf = cuda.shared.array(width, elem)
        n_rows = dims[0]
        heads = dims[1]
        q_len = dims[2]
        k_len = dims[3]
        use_mask = dims[4] != 0
        causal = dims[5] != 0
        msb = dims[6]
        msh = dims[7]
        msq = dims[8]
        msk = dims[9]
        t = cuda.threadIdx.x
        nt = cuda.blockDim.x
        row = cuda.blockIdx.x
        while row < n_rows:
            base = row * k_len
            q = row % q_len
            mask_base = (row // (q_len * heads)) * msb + ((row // q_len) % heads) * msh + q * msq
            # Causal (top-left): keys after the query's own position are excluded.
            last = k_len
            if causal and q + 1 < k_len:
                last = q + 1
            # A NaN or +inf score (after the mask) poisons the row: it is all NaN, as in
            # PyTorch. The thread marks it with +inf, which the tree max keeps.
            best = -inf
            j = t
            while j < last:
                v = x[base + j]
                if use_mask:
                    v += mask[mask_base + j * msk]
                if v != v or v == inf:
                    best = inf
                elif v > best:
                    best = v
                j += nt
            row_max = tree_max(buf, best, t, nt)
            poisoned = row_max == inf
            # Every key excluded (max -inf): the documented all-zero row.
            live = not poisoned and row_max != -inf
            shift = row_max if live else zero
            part = zero
            if live:  # the same for the whole block, and no exp of an unshifted score
                j = t
                while j < last:
                    v = x[base + j]
                    if use_mask:
                        v += mask[mask_base + j * msk]
                    part += math.exp(v - shift)
                    j += nt
            total = tree_sum(buf, part, t, nt)
            j = t
            while j < k_len:
                if poisoned:
                    y[base + j] = nan
                elif live and j < last:
                    v = x[base + j]
                    if use_mask:
                        v += mask[mask_base + j * msk]
                    y[base + j] = math.exp(v - shift) / total
                else:
                    y[base + j] = zero
                j += nt
            row += cuda.gridDim.x

    return attn_softmax_fw_kernel, (ty.array, ty.array, ty.array, ty.index)


def _build_attn_softmax_bw(fn: Callable | None, dtype: np.dtype, launch: LaunchConfig):
    ty = _types(dtype)
    tree_sum = load_numba_cuda().tree_sum
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
    tree_sum = load_numba_cuda().tree_sum
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
    tree_sum2 = load_numba_cuda().tree_sum2
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
    layernorm_param_col = load_numba_cuda().bodies.layernorm_param_col

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
KERNEL_KINDS: dict[str, tuple[Callable, tuple | None]] = {
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


def kernel_name(kind: str, fn: Callable | None, dtype: np.dtype) -> str:
    """The registry name of one kernel, e.g. ``map_exp[float32]`` or ``matmul[float64]``."""
    if fn is None:
        return f"{kind}[{np.dtype(dtype).name}]"
    op = _OP_NAMES.get(fn, getattr(fn, "__name__", repr(fn)))
    return f"{kind}_{op}[{np.dtype(dtype).name}]"


def kernel_spec(kind: str, fn: Callable | None, dtype: np.dtype, launch: LaunchConfig) -> KernelSpec:
    """The spec of one kernel: ``kind`` from the registry, ``fn`` its scalar op (or None)."""
    builder, _ = KERNEL_KINDS[kind]
    pyfunc, signature = builder(fn, np.dtype(dtype), launch)
    return KernelSpec(kernel_name(kind, fn, dtype), kind, pyfunc, signature)


def kernel_keys() -> list[tuple[str, Callable | None, np.dtype]]:
    """Every ``(kind, scalar op or None, dtype)`` the registry holds, in a stable order."""
    keys = []
    for kind, (_, ops) in KERNEL_KINDS.items():
        for fn in [op.scalar for op in ops] if ops is not None else [None]:
            for dtype in KERNEL_DTYPES:
                keys.append((kind, fn, dtype))
    return keys
