"""The real kernel libraries from ``TORCHLIGHT_CUDA_KERNEL_DIR`` (or torchlight/cuda_kernels/).

* ``kernels``-marked tests need only a built library, not a GPU: the launchers' own argument
  checks (which return before any CUDA call) and, for an nvcc build on a machine without an
  NVIDIA driver, the translated "no NVIDIA driver" error.
* The numerics tests need a library that can run: the simulator's CPU build or an nvcc build on
  a GPU. They cover what the device-generic suite's small shapes cannot: rows longer than a
  block, many rows, masks with excluded keys, large score magnitudes.

Tolerances (float32 against the numpy float32 reference): softmax rtol 2e-5, atol 1e-6 (outputs
lie in [0, 1]; the launchers and numpy sum the exponentials in different orders and the device
expf may be 2 ulp off); layer norm elementwise outputs rtol 1e-4, atol 1e-5 (mean and variance
are sums over the row in a different order, and a rounding error in the mean is multiplied by
rstd * gamma); dgamma/dbeta atol 8 * eps32 * sum over rows of |term| (they sum over rows in a
different association, and the error of a float32 sum scales with the sum of magnitudes).
"""

from __future__ import annotations

import ctypes
import itertools
from pathlib import Path

import numpy as np
import pytest
from tl_testing import central_difference

import torchlight
from torchlight.backends.cpu import cpu_backend
from torchlight.backends.cuda_c import loader as cuda_c_loader
from torchlight.backends.cuda_c.loader import CudaCKernelError, CudaCKernels
from torchlight.core.tensor_data import TensorData

F32 = np.float32


def _is_nvcc_build(kernels: CudaCKernels) -> bool:
    path = cuda_c_loader.library_paths(kernels.origin)["softmax_kernel"]
    return b".nv_fatbin" in path.read_bytes()


def _driver_present() -> bool:
    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    return True


def td(array) -> TensorData:
    return TensorData.from_array(np.asarray(array))


def rand(*shape, scale=1.0, seed=0) -> np.ndarray:
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(F32)


# --- the launchers' own checks (no GPU needed: they return before any CUDA call) ----------------


@pytest.mark.kernels
def test_abi_symbols(kernels):
    for lib, (abi, table) in cuda_c_loader.LIBRARIES.items():
        handle = ctypes.CDLL(str(cuda_c_loader.library_paths(kernels.origin)[lib]))
        assert getattr(handle, abi)() == cuda_c_loader.ABI_VERSION
        for symbol in table:
            assert callable(kernels.launcher(symbol))


@pytest.mark.kernels
@pytest.mark.parametrize(
    "symbol, args, code",
    [
        ("tl_attn_softmax_fw", (None, None, None, -1, 1, 1, 1, 0), 20001),
        ("tl_attn_softmax_fw", (None, None, None, 1, 1, 1, -5, 1), 20001),
        ("tl_attn_softmax_fw", (None, None, None, 1, 1, 1, 4, 0), 20002),
        ("tl_attn_softmax_fw", (None, None, None, 2**40, 2**40, 1, 1, 0), 20003),
        ("tl_attn_softmax_fw", (None, None, None, 1, 1, 2**31, 2**31, 0), 20003),
        ("tl_attn_softmax_fw", (None, None, None, 3, 0, 2, 4, 1), 0),
        ("tl_attn_softmax_bw", (None, None, None, -2, 4), 20001),
        ("tl_attn_softmax_bw", (None, None, None, 2, 4), 20002),
        ("tl_attn_softmax_bw", (None, None, None, 5, 0), 0),
        ("tl_layernorm_fw", (None,) * 6 + (-1, 4, 1e-5), 20001),
        ("tl_layernorm_fw", (None,) * 6 + (2, 4, 0.0), 20004),
        ("tl_layernorm_fw", (None,) * 6 + (2, 4, -1.0), 20004),
        ("tl_layernorm_fw", (None,) * 6 + (2, 0, 1e-5), 20004),
        ("tl_layernorm_fw", (None,) * 6 + (2, 4, 1e-5), 20002),
        ("tl_layernorm_fw", (None,) * 6 + (0, 4, 1e-5), 0),
        ("tl_layernorm_bw", (None,) * 8 + (3, -1), 20001),
        ("tl_layernorm_bw", (None,) * 8 + (3, 0), 20004),
        ("tl_layernorm_bw", (None,) * 8 + (0, 0), 0),
        ("tl_layernorm_bw", (None,) * 8 + (2, 4), 20002),
        ("tl_layernorm_bw", (None,) * 8 + (2**62, 4), 20003),
    ],
)
def test_launchers_refuse_bad_arguments_themselves(kernels, symbol, args, code):
    assert kernels.launcher(symbol)(*args) == code


@pytest.mark.kernels
def test_layernorm_bw_over_no_rows_gives_zero_parameter_gradients(kernels):
    dx, dgamma, dbeta = kernels.layernorm_bw(
        *(td(np.zeros((0, 3), F32)) for _ in range(2)),
        td(np.ones(3, F32)),
        td(np.zeros(0, F32)),
        td(np.zeros(0, F32)),
    )
    assert dx.shape == (0, 3)
    np.testing.assert_array_equal(dgamma.array, np.zeros(3, F32))
    np.testing.assert_array_equal(dbeta.array, np.zeros(3, F32))


@pytest.mark.kernels
def test_nvcc_build_without_a_driver_says_no_nvidia_driver(kernels):
    if not _is_nvcc_build(kernels):
        pytest.skip(
            f"{kernels.origin} holds a CPU (simulator) build; the no-driver path needs the nvcc build"
        )
    if _driver_present():
        pytest.skip("an NVIDIA driver (libcuda.so.1) is present, so the no-driver error cannot occur here")
    x = td(rand(1, 1, 2, 3))
    with pytest.raises(CudaCKernelError) as info:
        kernels.attn_softmax_fw(x)
    err = info.value
    assert err.error_name in ("cudaErrorInsufficientDriver", "cudaErrorNoDevice", "cudaErrorStubLibrary")
    message = str(err)
    assert "no NVIDIA driver" in message and "python -m torchlight build-kernels --simulator" in message
    assert message.startswith(f"tl_attn_softmax_fw_strided failed with {err.error_name} (code {err.code})")
    with pytest.raises(CudaCKernelError, match="no NVIDIA driver"):
        kernels.layernorm_fw(td(rand(2, 3)), td(np.ones(3, F32)), td(np.zeros(3, F32)), 1e-5)


# --- numerics through a runnable library ---------------------------------------------------------

SOFTMAX_TOL = {"rtol": 2e-5, "atol": 1e-6}
LN_TOL = {"rtol": 1e-4, "atol": 1e-5}
EPS32 = float(np.finfo(F32).eps)


def _softmax_case(shape, with_mask, scale, seed):
    x = rand(*shape, scale=scale, seed=seed)
    mask = None
    if with_mask:
        rng = np.random.default_rng(seed + 1)
        m = rng.standard_normal((shape[0], shape[3])).astype(F32)
        m[rng.random(m.shape) < 0.3] = -np.inf
        m[0] = -np.inf  # every key of batch 0 excluded: rows of zeros
        mask = td(m)
    return td(x), mask


@pytest.mark.parametrize(
    "shape", [(1, 1, 1, 1), (2, 3, 4, 33), (1, 2, 5, 300), (2, 1, 3, 1000), (1, 1, 40, 7), (1, 1, 2, 4099)]
)
@pytest.mark.parametrize("with_mask, causal", list(itertools.product([False, True], [False, True])))
def test_softmax_matches_the_reference(runnable, shape, with_mask, causal):
    _check_softmax(runnable, shape, with_mask, causal)


def test_softmax_is_stable_for_large_scores(runnable):
    x = td(rand(2, 2, 3, 50, scale=1e4, seed=3))
    got = runnable.attn_softmax_fw(x, None, True).array
    assert np.isfinite(got).all()
    np.testing.assert_allclose(got, cpu_backend().attn_softmax_fw(x, None, True).array, **SOFTMAX_TOL)
    np.testing.assert_allclose(got.sum(axis=-1), 1.0, rtol=1e-5)


def test_a_launch_reads_no_shared_memory_an_earlier_launch_left(runnable):
    # Rows of 300 keys take blocks of 8 warps, and rows of NaN leave NaN in every warp's slot of the
    # block merge's shared scratch; blocks keep no shared memory between launches, but a GPU (and
    # the simulator's per-worker arena) hands the next launch the same bytes. Rows of 5 keys then
    # take one-warp blocks, whose merge must read only the slot its own warp wrote.
    poison = np.full((4, 8, 2, 300), np.nan, F32)
    runnable.attn_softmax_fw(td(poison), None, False)
    x = td(rand(2, 3, 4, 5, seed=52))
    want = cpu_backend().attn_softmax_fw(x, None, False)
    np.testing.assert_allclose(runnable.attn_softmax_fw(x, None, False).array, want.array, **SOFTMAX_TOL)


def test_fully_excluded_rows_are_zero_with_zero_gradient(runnable):
    mask = td(np.full((2, 6), -np.inf, F32))
    y = runnable.attn_softmax_fw(td(rand(2, 3, 4, 6)), mask, False)
    np.testing.assert_array_equal(y.array, 0.0)
    np.testing.assert_array_equal(runnable.attn_softmax_bw(y, td(rand(2, 3, 4, 6))).array, 0.0)


def _sum_tol(terms: np.ndarray) -> np.ndarray:
    return 8 * EPS32 * np.abs(terms).reshape(-1, terms.shape[-1]).sum(axis=0) + LN_TOL["atol"]


def _check_softmax(kernels: CudaCKernels, shape, with_mask: bool, causal: bool) -> None:
    cpu = cpu_backend()
    x, mask = _softmax_case(shape, with_mask, scale=4.0, seed=sum(shape))
    want = cpu.attn_softmax_fw(x, mask, causal)
    got = kernels.attn_softmax_fw(x, mask, causal)
    np.testing.assert_allclose(got.array, want.array, **SOFTMAX_TOL)
    dy = td(rand(*shape, seed=7))
    np.testing.assert_allclose(
        kernels.attn_softmax_bw(want, dy).array, cpu.attn_softmax_bw(want, dy).array, **SOFTMAX_TOL
    )


def _check_layernorm(kernels: CudaCKernels, shape, offset: float = 0.0) -> None:
    cpu = cpu_backend()
    x = td(rand(*shape, scale=3.0, seed=len(shape)) + F32(offset))
    gamma, beta = td(rand(shape[-1], seed=1)), td(rand(shape[-1], seed=2))
    want = cpu.layernorm_fw(x, gamma, beta, 1e-5)
    got = kernels.layernorm_fw(x, gamma, beta, 1e-5)
    for name, g, w in zip(("y", "mean", "rstd"), got, want):
        assert g.shape == w.shape, name
        np.testing.assert_allclose(g.array, w.array, err_msg=name, **LN_TOL)
    dy = td(rand(*shape, seed=5))
    dx, dgamma, dbeta = kernels.layernorm_bw(dy, x, gamma, want[1], want[2])
    rdx, rdgamma, rdbeta = cpu.layernorm_bw(dy, x, gamma, want[1], want[2])
    np.testing.assert_allclose(dx.array, rdx.array, **LN_TOL)
    xhat = (x.array - want[1].array[..., None]) * want[2].array[..., None]
    assert np.all(np.abs(dgamma.array - rdgamma.array) <= _sum_tol(dy.array * xhat))
    assert np.all(np.abs(dbeta.array - rdbeta.array) <= _sum_tol(dy.array))


@pytest.mark.parametrize(
    "shape", [(1,), (5,), (3, 33), (2, 3, 300), (2, 1000), (70, 33), (300, 5), (1, 2049)]
)
@pytest.mark.parametrize("offset", [0.0, 100.0])
def test_layernorm_matches_the_reference(runnable, shape, offset):
    _check_layernorm(runnable, shape, offset)


# --- the backward passes against float64 gradients --------------------------------------------------
#
# The cuda-c column's float64 gradient checks run numba-cuda (the C kernels are float32 only), so
# here the C backward passes meet the gradients of the same maths in float64 (central differences
# of a numpy forward written from the formulas), with float32 tolerances.

GRAD_TOL = {"rtol": 1e-4, "atol": 2e-5}


def _softmax64(x, mask, causal):
    s = x + mask[:, None, None, :]
    if causal:
        q, k = s.shape[-2:]
        s = np.where(np.arange(k)[None, :] > np.arange(q)[:, None], -np.inf, s)
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _layernorm64(x, gamma, beta, eps=1e-5):
    mean = x.mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(((x - mean) ** 2).mean(axis=-1, keepdims=True) + eps) * gamma + beta


@pytest.mark.parametrize("causal", [False, True])
def test_softmax_backward_matches_float64_gradients(runnable, causal):
    x = rand(2, 2, 3, 7, scale=2.0, seed=31).astype(np.float64)
    mask = np.where(np.random.default_rng(32).random((2, 7)) < 0.3, -np.inf, 0.5)
    mask[:, 0] = 0.0  # every row keeps a key
    w = rand(2, 2, 3, 7, seed=33).astype(np.float64)
    y = runnable.attn_softmax_fw(td(x.astype(F32)), td(mask.astype(F32)), causal)
    dx = runnable.attn_softmax_bw(y, td(w.astype(F32))).array
    want = central_difference(lambda: float((_softmax64(x, mask, causal) * w).sum()), x)
    np.testing.assert_allclose(dx, want, **GRAD_TOL)


def test_layernorm_backward_matches_float64_gradients(runnable):
    x = rand(5, 37, scale=2.0, seed=41).astype(np.float64)
    gamma, beta = rand(37, seed=42).astype(np.float64), rand(37, seed=43).astype(np.float64)
    w = rand(5, 37, seed=44).astype(np.float64)
    _, mean, rstd = runnable.layernorm_fw(
        td(x.astype(F32)), td(gamma.astype(F32)), td(beta.astype(F32)), 1e-5
    )
    dx, dgamma, dbeta = runnable.layernorm_bw(
        td(w.astype(F32)), td(x.astype(F32)), td(gamma.astype(F32)), mean, rstd
    )

    def loss() -> float:
        return float((_layernorm64(x, gamma, beta) * w).sum())

    for name, got, value in (("dx", dx, x), ("dgamma", dgamma, gamma), ("dbeta", dbeta, beta)):
        np.testing.assert_allclose(got.array, central_difference(loss, value), err_msg=name, **GRAD_TOL)


# --- every grid-stride loop wrapping: the kernels built with a grid of at most two blocks ----------

TWO_BLOCKS = 2


@pytest.fixture(scope="module")
def two_block_grid(tmp_path_factory) -> CudaCKernels:
    """The shipped kernels built by the simulator with ``TL_MAX_GRID`` 2, so the blocks of every
    kernel loop over more rows (and items, and columns) than the grid has, at small shapes."""
    build = pytest.importorskip("simulator.build", reason="the two-block libraries are built by simulator/")
    sources, out = tmp_path_factory.mktemp("two-block-src"), tmp_path_factory.mktemp("two-block")
    for name in cuda_c_loader.LIBRARIES:
        wrapper = sources / f"{name}.cu"
        shipped = Path(torchlight.__file__).resolve().parent / "cuda_kernels" / f"{name}.cu"
        wrapper.write_text(f'#define TL_MAX_GRID {TWO_BLOCKS}\n#include "{shipped}"\n')
        try:
            build.build_shared(wrapper, out, "fast")
        except build.SimBuildError as err:
            pytest.skip(f"the simulator cannot build the two-block libraries here: {err}")
    return cuda_c_loader.load_kernels(out)


def test_every_grid_stride_loop_wraps_with_a_two_block_grid(two_block_grid):
    # 12 score rows over 2 blocks, forward (key padding, causal) and backward.
    _check_softmax(two_block_grid, (2, 3, 2, 40), with_mask=True, causal=True)
    # Layer norm: 70 rows over 2 blocks (forward, dx); 3 row chunks x 2 column tiles of the
    # parameter gradients over 2 blocks; then 600 columns: 19 tiles, and 3 blocks of 256 columns
    # for the final sum over the chunks.
    _check_layernorm(two_block_grid, (70, 40))
    _check_layernorm(two_block_grid, (3, 600))


def test_layernorm_variance_is_never_negative(runnable):
    x = td(np.full((3, 257), 1e4, F32) + np.arange(257, dtype=F32) * 1e-3)
    _, _, rstd = runnable.layernorm_fw(x, td(np.ones(257, F32)), td(np.zeros(257, F32)), 1e-5)
    assert np.isfinite(rstd.array).all() and (rstd.array <= 1 / np.sqrt(F32(1e-5)) * (1 + 1e-6)).all()


def test_layernorm_parameter_gradients_are_deterministic(runnable):
    x, dy = td(rand(600, 40, seed=1)), td(rand(600, 40, seed=2))
    gamma = td(rand(40, seed=3))
    _, mean, rstd = runnable.layernorm_fw(x, gamma, td(np.zeros(40, F32)), 1e-5)
    first = runnable.layernorm_bw(dy, x, gamma, mean, rstd)
    second = runnable.layernorm_bw(dy, x, gamma, mean, rstd)
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a.array, b.array)
