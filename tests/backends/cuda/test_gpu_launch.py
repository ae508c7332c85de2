"""The gpu_launch pass: every numba-cuda kernel with the launch configuration a GPU uses.

The cudasim tier's provider runs with ``SIM_LAUNCH`` (blocks of at most 32 threads, 4x4 tiles,
two blocks), so block logic that only a bigger block reaches (a tree reduction's upper levels,
a 16x16 matmul tile) would first run on a GPU. Here a ``CudaProvider`` is built with the
``GPU_LAUNCH`` object itself, so the grid and block sizes come from the same provider code a
GPU run takes, and every kernel of ``CudaProvider.kernel_specs()`` runs on shapes chosen for the
edges of that configuration:

* sizes that are not a multiple of the block (256 threads) or of the matmul tile (16), and
  more than one block per grid;
* rows shorter than, equal to the next power of two of, and longer than one block: the row
  kernels' block-size tiers 32, 64, 128 and 256 threads, the last one looping over its row;
* grid-stride wrap-around: ``GPU_LAUNCH`` caps grids at 65535 blocks, which no simulated run can
  exceed, so a copy of it that differs only in ``max_blocks`` (2) makes the stride loops wrap
  with the GPU's block and tile sizes.

Every result is compared with the numpy reference (CPUBackend). Under numba's simulator a
thread costs ~0.2 ms, so the shapes stay as small as those edges allow. Marked ``gpu_launch``:
``TORCHLIGHT_TEST_BACKENDS=cuda TORCHLIGHT_TEST_TIER=cudasim NUMBA_ENABLE_CUDASIM=1 pytest -m
gpu_launch`` runs it alone; the cudasim and gpu tiers run it with the rest.
"""

from __future__ import annotations

import dataclasses
import types

import numpy as np
import pytest
from tl_testing import TOLERANCE

from torchlight.backends.cpu import cpu_backend
from torchlight.backends.ops import BINARY_OPS, REDUCE_OPS, UNARY_OPS
from torchlight.core.tensor_data import TensorData

pytestmark = [
    pytest.mark.gpu_launch,
    pytest.mark.requires_backend("cuda", reason="the gpu_launch pass runs the numba-cuda kernels"),
]

DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
ROW_TIERS = (20, 50, 100, 300)  # -> row blocks of 32, 64, 128 and 256 threads (300: two strides)
ELEMENTS = (9, 61)  # 549 elements: three 256-thread blocks, the last one mostly idle
MATMUL = ((2, 17, 33), (33, 18))  # 16x16 tiles: partial tiles on m, n and k, two batches


@pytest.fixture(scope="module")
def ck():
    """The numba-cuda kernel module (kernels, launch configurations, device helpers)."""
    from torchlight.backends.numba_cuda import kernels as cuda_kernels

    return cuda_kernels


@pytest.fixture(scope="module")
def provider_class():
    from torchlight.backends.numba_cuda.provider import CudaProvider

    return CudaProvider


@pytest.fixture(scope="module")
def gpu(ck, provider_class):
    """A provider with the GPU's launch configuration (the very object, not an equal copy)."""
    provider = provider_class(launch=ck.GPU_LAUNCH)
    assert provider.launch is ck.GPU_LAUNCH
    return provider


@pytest.fixture(scope="module")
def wrapping(ck, provider_class):
    """GPU_LAUNCH with a grid cap of 2 blocks: the same blocks and tiles, stride loops that wrap."""
    return provider_class(launch=dataclasses.replace(ck.GPU_LAUNCH, max_blocks=2))


def td(array) -> TensorData:
    return TensorData.from_array(np.asarray(array))


def rand(shape, dtype, low=-2.0, high=2.0, seed=0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(low, high, shape).astype(dtype)


def close(got: TensorData, want: TensorData, what: str, scale: float = 1.0) -> None:
    rtol, atol = TOLERANCE[np.dtype(want.dtype)]
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    np.testing.assert_allclose(got.array, want.array, rtol=rtol, atol=atol * max(scale, 1.0), err_msg=what)


def built(provider, kind: str, fn, dtype) -> bool:
    """Whether ``provider`` compiled (and so launched) this kernel."""
    return (kind, fn, np.dtype(dtype)) in provider._kernels


# --- the checks (each takes a provider, so the planted-bug test reuses them) --------------------


def check_map(provider, op, dtype) -> None:
    x = rand(ELEMENTS, dtype, 0.5, 2.0).T  # a transposed view: strided reads
    got = provider.map(op.scalar, td(x))
    close(got, cpu_backend().map(op.array)(td(x)), f"map {op.name}")


def check_zip(provider, op, dtype) -> None:
    a, b = rand(ELEMENTS, dtype, 0.5, 2.0, 1), rand(ELEMENTS[1:], dtype, 0.5, 2.0, 2)  # b broadcasts
    got = provider.zip(op.scalar, td(a), td(b))
    close(got, cpu_backend().zip(op.array)(td(a), td(b)), f"zip {op.name}")


def check_reduce(provider, op, dtype, length: int, rows: int = 2) -> None:
    cpu = cpu_backend()
    x = rand((rows, length), dtype, 0.9, 1.1, length)  # products of ~1 stay finite
    got = provider.reduce(op.scalar, op.start, td(x), 1)
    close(got, cpu.reduce(op.ufunc, op.start)(td(x), 1), f"{op.name}_reduce over {length}", scale=length)
    xt = x.T  # the reduced dim strided, one row per output column
    got = provider.reduce(op.scalar, op.start, td(xt), 0)
    close(got, cpu.reduce(op.ufunc, op.start)(td(xt), 0), f"{op.name}_reduce dim 0", scale=length)


def check_matmul(provider, dtype) -> None:
    a, b = rand(MATMUL[0], dtype, seed=3), rand(MATMUL[1], dtype, seed=4)
    close(provider.matmul(td(a), td(b)), cpu_backend().matmul(td(a), td(b)), "matmul", scale=MATMUL[1][0])
    bt = np.ascontiguousarray(b.T).T  # the right operand column-major
    close(provider.matmul(td(a), td(bt)), cpu_backend().matmul(td(a), td(bt)), "matmul (strided)", scale=33)


def check_attn_softmax(provider, dtype, length: int, rows: int = 2, causal: bool = False) -> None:
    cpu = cpu_backend()
    x = rand((2, 1, rows, length), dtype, -4.0, 4.0, length)
    mask = np.zeros((2, length), dtype)
    mask[0, ::3] = -np.inf  # excluded keys
    mask[1, length // 2] = 1.5
    want = cpu.attn_softmax_fw(td(x), td(mask), causal)
    close(
        provider.attn_softmax_fw(td(x), td(mask), causal),
        want,
        f"attn_softmax_fw over {length}",
        scale=length,
    )
    dy = rand(x.shape, dtype, seed=length + 1)
    close(
        provider.attn_softmax_bw(want, td(dy)),
        cpu.attn_softmax_bw(want, td(dy)),
        f"attn_softmax_bw over {length}",
        scale=length,
    )


def check_layernorm(provider, dtype, length: int, rows: int = 2) -> None:
    cpu = cpu_backend()
    x = rand((rows, length), dtype, -3.0, 3.0, length)
    gamma, beta = rand(length, dtype, 0.5, 1.5, 1), rand(length, dtype, seed=2)
    want = cpu.layernorm_fw(td(x), td(gamma), td(beta), 1e-5)
    got = provider.layernorm_fw(td(x), td(gamma), td(beta), 1e-5)
    for name, g, w in zip(("y", "mean", "rstd"), got, want):
        close(g, w, f"layernorm_fw {name} over {length}", scale=length)
    dy = rand(x.shape, dtype, seed=3)
    for name, g, w in zip(
        ("dx", "dgamma", "dbeta"),
        provider.layernorm_bw(td(dy), td(x), td(gamma), want[1], want[2]),
        cpu.layernorm_bw(td(dy), td(x), td(gamma), want[1], want[2]),
    ):
        close(g, w, f"layernorm_bw {name} over {length}", scale=length)


# --- the registry is covered ------------------------------------------------------------------------


def _case_names() -> set[str]:
    names = set()
    for dtype in DTYPES:
        d = dtype.name
        names |= {f"map_{op.name}[{d}]" for op in UNARY_OPS}
        names |= {f"zip_{op.name}[{d}]" for op in BINARY_OPS}
        names |= {f"reduce_{op.name}[{d}]" for op in REDUCE_OPS}
        names |= {f"{kind}[{d}]" for kind in FUSED_KINDS}
    return names


# kind -> the check that launches it (layernorm_params runs inside layernorm_bw)
FUSED_KINDS = {
    "matmul": "matmul",
    "attn_softmax_fw": "attn_softmax",
    "attn_softmax_bw": "attn_softmax",
    "layernorm_fw": "layernorm",
    "layernorm_bw": "layernorm",
    "layernorm_params": "layernorm",
}


def test_the_pass_covers_every_kernel_of_the_registry(provider_class):
    assert {spec.name for spec in provider_class.kernel_specs()} == _case_names()


# --- every kernel with GPU_LAUNCH -------------------------------------------------------------------


@pytest.mark.op("gpu_launch map")
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("op", UNARY_OPS, ids=lambda op: op.name)
def test_map(gpu, op, dtype):
    check_map(gpu, op, dtype)
    assert built(gpu, "map", op.scalar, dtype)


@pytest.mark.op("gpu_launch zip")
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("op", BINARY_OPS, ids=lambda op: op.name)
def test_zip(gpu, op, dtype):
    check_zip(gpu, op, dtype)
    assert built(gpu, "zip", op.scalar, dtype)


@pytest.mark.op("gpu_launch reduce")
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("op", REDUCE_OPS, ids=lambda op: op.name)
def test_reduce_every_block_tier(gpu, op, dtype):
    for length in ROW_TIERS:
        check_reduce(gpu, op, dtype, length)
    assert {gpu._row_block(n) for n in ROW_TIERS} == {32, 64, 128, 256}
    assert built(gpu, "reduce", op.scalar, dtype)


@pytest.mark.op("gpu_launch matmul")
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_matmul(gpu, dtype):
    check_matmul(gpu, dtype)
    assert built(gpu, "matmul", None, dtype)


@pytest.mark.op("gpu_launch attn_softmax")
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_attn_softmax_every_block_tier(gpu, dtype):
    for length in ROW_TIERS:
        check_attn_softmax(gpu, dtype, length)
    check_attn_softmax(gpu, dtype, ROW_TIERS[-1], rows=3, causal=True)
    assert built(gpu, "attn_softmax_fw", None, dtype) and built(gpu, "attn_softmax_bw", None, dtype)


@pytest.mark.op("gpu_launch layer_norm")
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_layernorm_every_block_tier(gpu, dtype):
    for length in ROW_TIERS:
        check_layernorm(gpu, dtype, length)
    for kind in ("layernorm_fw", "layernorm_bw", "layernorm_params"):
        assert built(gpu, kind, None, dtype), kind


# --- grid-stride wrap-around: GPU blocks and tiles, a 2-block grid cap ----------------------------------


@pytest.mark.op("gpu_launch wrap")
def test_grid_stride_loops_wrap(wrapping, ck, provider_class):
    f32 = DTYPES[0]
    assert dataclasses.replace(wrapping.launch, max_blocks=ck.GPU_LAUNCH.max_blocks) == ck.GPU_LAUNCH
    by_name = {op.name: op for op in (*UNARY_OPS, *BINARY_OPS)}
    check_map(wrapping, by_name["exp"], f32)  # 549 elements over 2 x 256 threads
    check_zip(wrapping, by_name["mul"], f32)
    check_reduce(wrapping, REDUCE_OPS[0], f32, 100, rows=5)  # 5 rows over 2 blocks
    check_matmul(wrapping, f32)  # 2 x 2 tiles x 2 batches over a 2 x 2 x 2 grid ... and 1 x 1 x 1 below
    check_attn_softmax(wrapping, f32, 50, rows=3)
    check_layernorm(wrapping, f32, 600, rows=5)  # layernorm_params: 600 columns over 2 blocks of 256
    single = provider_class(launch=dataclasses.replace(ck.GPU_LAUNCH, max_blocks=1))
    check_matmul(single, f32)  # every tile of every batch from one block


# --- the pass catches what SIM_LAUNCH cannot reach ----------------------------------------------------


def _planted_tree_reduce(combine):
    """``cuda_kernels.tree_reduce`` with a planted bug: the tree starts at step 32, whatever the
    block size. Blocks of up to 64 threads reduce correctly; in a bigger block the values of the
    threads above 64 are never combined in."""

    def tree(buf, value, t, nt):
        buf[t] = value
        cuda.syncthreads()  # noqa: F821  (cuda_kernels' ``cuda``: this runs with its globals)
        step = nt // 2
        if step > 32:
            step = 32
        while step > 0:
            if t < step:
                buf[t] = combine(buf[t], buf[t + step])
            cuda.syncthreads()  # noqa: F821
            step //= 2
        total = buf[0]
        cuda.syncthreads()  # noqa: F821
        return total

    return tree


@pytest.mark.op("gpu_launch planted bug")
def test_a_tree_bug_in_blocks_over_64_threads_fails_here_and_passes_with_sim_launch(
    ck, provider_class, monkeypatch
):
    nb = ck.load_numba_cuda()
    # The planted tree runs with cuda_kernels' globals, as the real one does; the kernels
    # built after this read it from the same place.
    factory = types.FunctionType(_planted_tree_reduce.__code__, ck.tree_reduce.__globals__, "tree_reduce")
    monkeypatch.setattr(nb, "tree_sum", nb.device(factory(nb.device(ck._add))))
    f32 = DTYPES[0]

    sim = provider_class(launch=ck.SIM_LAUNCH)  # what every other cudasim test runs with
    assert sim.launch.row_threads <= 64
    for length in ROW_TIERS:
        check_layernorm(sim, f32, length)
        check_attn_softmax(sim, f32, length)

    gpu = provider_class(launch=ck.GPU_LAUNCH)  # a fresh provider: its kernels get the bug
    for length in ROW_TIERS[:2]:  # blocks of 32 and 64 threads: the bug does not show
        check_layernorm(gpu, f32, length)
    for length in ROW_TIERS[2:]:  # 128 and 256 threads: it does
        with pytest.raises(AssertionError, match="layernorm_fw"):
            check_layernorm(gpu, f32, length)
        with pytest.raises(AssertionError, match="attn_softmax"):
            check_attn_softmax(gpu, f32, length)
