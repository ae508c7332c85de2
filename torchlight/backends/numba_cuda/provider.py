"""CudaProvider: the host side of the numba-cuda kernels (transfers, launch shapes, launches).

A *provider* owns the kernels and the per-op host<->device transfer; ``CudaBackend``
(``backend``) owns the input checks and the op names. The kernels themselves, and the
registry of their specs, live in ``kernels``.

Importing this module never imports numba; it loads when a provider is constructed.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

import numpy as np

from ...core.tensor_data import TensorData, broadcast_shapes, contiguous_strides
from ..checks import attn_softmax_inputs, compact_mask, matmul_shape
from . import kernels as cuda_kernels
from .cudasim_shims import short_switch_interval
from .kernels import GPU_LAUNCH, SIM_LAUNCH, KernelSpec, LaunchConfig, unavailable_error
from .launch_lock import LAUNCH_LOCK


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
        nb = cuda_kernels.load_numba_cuda()
        self.simulator = nb.simulator
        self._cuda = nb.cuda
        if not self.simulator:
            try:
                available = nb.cuda.is_available()
            except Exception as err:  # numba's driver errors: say what to do instead
                raise unavailable_error(str(err)) from err
            if not available:
                raise unavailable_error(_driver_reason(nb.cuda))
        self.launch = launch or (SIM_LAUNCH if self.simulator else GPU_LAUNCH)
        self._kernels: dict[tuple, Callable] = {}

    # --- the registry ---------------------------------------------------------------------

    @classmethod
    def kernel_specs(cls, launch: LaunchConfig | None = None) -> list[KernelSpec]:
        """Every kernel this provider launches, per dtype, with its explicit signature."""
        launch = launch or GPU_LAUNCH
        return [cls.kernel_spec(kind, fn, dtype, launch) for kind, fn, dtype in cuda_kernels.kernel_keys()]

    @staticmethod
    def kernel_spec(kind: str, fn: Callable | None, dtype: np.dtype, launch: LaunchConfig) -> KernelSpec:
        """The spec of one kernel: ``kind`` from the registry, ``fn`` its scalar op (or None)."""
        return cuda_kernels.kernel_spec(kind, fn, dtype, launch)

    def kernel(self, kind: str, fn: Callable | None, dtype: np.dtype) -> Callable:
        """The compiled kernel for ``kind``/``fn``/``dtype``, built from its spec on first use."""
        key = (kind, fn, np.dtype(dtype))
        compiled = self._kernels.get(key)
        if compiled is None:
            spec = self.kernel_spec(kind, fn, dtype, self.launch)
            compiled = self._kernels[key] = self._cuda.jit(spec.signature)(spec.pyfunc)
        return compiled

    # --- launching --------------------------------------------------------------------------

    @contextlib.contextmanager
    def _launching(self) -> Iterator[None]:
        # One transfer or launch at a time per process: see launch_lock for why.
        with LAUNCH_LOCK:
            if not self.simulator:
                try:
                    yield
                except Exception as err:
                    # A driver that vanished after start-up; other CUDA errors keep their own message.
                    if type(err).__name__ == "CudaSupportError":
                        raise unavailable_error(str(err)) from err
                    raise
                return
            # Simulated threads hand the GIL around at every barrier; at the default 5 ms
            # switch interval a block spends most of its time waiting for its turn.
            with short_switch_interval():
                yield

    def _run(self, kernel: Callable, grid, block, *args) -> None:
        with self._launching():
            kernel[grid, block](*args)

    def _to_device(self, array: np.ndarray):
        with self._launching():
            return self._cuda.to_device(np.ascontiguousarray(array))

    def _empty(self, size: int, dtype: np.dtype):
        with self._launching():
            return self._cuda.device_array(max(int(size), 1), dtype=dtype)

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
        x, mask = attn_softmax_inputs(x, mask)
        batch, heads, q_len, k_len = x.shape
        rows = batch * heads * q_len
        if rows * k_len == 0:
            return TensorData.from_array(np.zeros(x.shape, dtype=x.dtype))
        if mask is None:
            mask_values, strides = np.zeros(1, dtype=x.dtype), (0, 0, 0, 0)
        else:  # the mask's own elements; strides broadcast it (never expanded to the scores' size)
            mask_values, strides = compact_mask(mask)
            mask_values = mask_values.reshape(-1)
        dims = (rows, heads, q_len, k_len, int(mask is not None), int(bool(causal)), *strides)
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
