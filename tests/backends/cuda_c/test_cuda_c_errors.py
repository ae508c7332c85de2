"""CUDA error hygiene of the CUDA C launchers: no error crosses from one call to the next.

The CUDA runtime keeps a "last error" that a failed call sets and only ``cudaGetLastError``
clears; a launcher that reads it after its own launch would report an error some earlier call
left behind. Non-sticky errors (a failed ``cudaMalloc``) must leave the library usable; a
sticky one (a kernel fault) breaks the context for good, and every later call must say so.

* The out-of-memory tests go through the configured libraries (``TORCHLIGHT_CUDA_KERNEL_DIR``:
  the simulator build, or an nvcc build on a GPU, where a 2 TiB ``cudaMalloc`` fails the same way).
* The tests that need a call which leaves an error pending, or a kernel fault, build the
  launcher source together with a few test-only entry points through ``simulator/`` (so they
  need a C++ compiler, not a GPU); the simulator runtime models pending and sticky errors as CUDA
  documents them.
"""

from __future__ import annotations

import ctypes
import shutil
from pathlib import Path

import numpy as np
import pytest

from torchlight.backends.cpu import cpu_backend
from torchlight.backends.cuda_c import loader as cuda_c_loader
from torchlight.backends.cuda_c.loader import CudaCKernelError, CudaCKernels
from torchlight.core.tensor_data import TensorData

F32 = np.float32
OOM = 2  # cudaErrorMemoryAllocation
KERNEL_SOURCES = Path(__file__).resolve().parents[3] / "torchlight" / "cuda_kernels"
SOFTMAX_TOL = {"rtol": 2e-5, "atol": 1e-6}
LN_TOL = {"rtol": 1e-4, "atol": 1e-5}

# Element counts whose float32 buffers (2 TiB and more) no device can allocate, with sizes that
# pass every argument check (the byte counts fit in size_t and int64).
HUGE_ROWS, HUGE_COLS = 2**20, 2**19


def td(array) -> TensorData:
    return TensorData.from_array(np.asarray(array))


def rand(*shape, seed=0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(F32)


def _scratch() -> tuple[np.ndarray, int]:
    """A small host buffer: the huge calls fail at their first cudaMalloc, before any copy."""
    buf = np.zeros(16, F32)
    return buf, buf.ctypes.data


def _oom_calls(ptr: int) -> dict[str, tuple]:
    return {
        "tl_attn_softmax_fw": (ptr, None, ptr, 1, 1, HUGE_ROWS, HUGE_COLS, 0),
        "tl_attn_softmax_bw": (ptr, ptr, ptr, HUGE_ROWS, HUGE_COLS),
        "tl_layernorm_fw": (ptr,) * 6 + (HUGE_ROWS, HUGE_COLS, 1e-5),
        "tl_layernorm_bw": (ptr,) * 8 + (HUGE_ROWS, HUGE_COLS),
    }


def _check_every_op(kernels: CudaCKernels) -> None:
    """Run all four fused ops on small inputs and compare them with the numpy reference."""
    cpu = cpu_backend()
    x, dy = td(rand(2, 2, 3, 5, seed=1)), td(rand(2, 2, 3, 5, seed=2))
    mask = td(np.where(rand(2, 5, seed=3) > 1.0, -np.inf, 0.0).astype(F32))
    want = cpu.attn_softmax_fw(x, mask, True)
    np.testing.assert_allclose(kernels.attn_softmax_fw(x, mask, True).array, want.array, **SOFTMAX_TOL)
    np.testing.assert_allclose(
        kernels.attn_softmax_bw(want, dy).array, cpu.attn_softmax_bw(want, dy).array, **SOFTMAX_TOL
    )
    h, g = td(rand(4, 7, seed=4)), td(rand(4, 7, seed=5))
    gamma, beta = td(rand(7, seed=6)), td(rand(7, seed=7))
    ref = cpu.layernorm_fw(h, gamma, beta, 1e-5)
    for got, expected in zip(kernels.layernorm_fw(h, gamma, beta, 1e-5), ref):
        np.testing.assert_allclose(got.array, expected.array, **LN_TOL)
    ref_bw = cpu.layernorm_bw(g, h, gamma, ref[1], ref[2])
    for got, expected in zip(kernels.layernorm_bw(g, h, gamma, ref[1], ref[2]), ref_bw):
        np.testing.assert_allclose(got.array, expected.array, **LN_TOL)


@pytest.mark.parametrize("symbol", list(_oom_calls(0)))
def test_a_failed_allocation_leaves_the_library_usable(runnable, symbol):
    buf, ptr = _scratch()
    assert runnable.launcher(symbol)(*_oom_calls(ptr)[symbol]) == OOM
    _check_every_op(runnable)
    # And again after the good calls: nothing accumulates.
    assert runnable.launcher(symbol)(*_oom_calls(ptr)[symbol]) == OOM
    assert runnable.launcher(symbol)(*_oom_calls(ptr)[symbol]) == OOM
    _check_every_op(runnable)
    del buf


def test_a_failed_allocation_raises_the_out_of_memory_error(runnable):
    with pytest.raises(CudaCKernelError) as info:
        runnable._call("tl_attn_softmax_bw", *_oom_calls(_scratch()[1])["tl_attn_softmax_bw"])
    assert info.value.error_name == "cudaErrorMemoryAllocation"
    assert "ran out of memory" in str(info.value)


# --- pending and sticky errors left by other code in the process (simulator build) --------------

_HOOKS = r"""
#include "{softmax}"
#include "{layernorm}"

// Another user of the runtime in this process: a failed call whose error it never reads.
TL_EXPORT int tl_test_leave_pending_error(void) {{
    void* p = NULL;
    return (int)cudaMalloc(&p, (size_t)1 << 62);
}}

__global__ void tl_test_faulting_kernel(float* out) {{
    // A warp shuffle whose mask leaves out the calling lane: undefined on a GPU, a kernel fault
    // in the simulator, which makes the context unusable (a sticky error).
    out[threadIdx.x] = __shfl_sync(0u, 1.0f, 0);
}}

TL_EXPORT int tl_test_fault(void) {{
    float* d = NULL;
    if (cudaMalloc((void**)&d, 32 * sizeof(float)) != cudaSuccess) return -1;
    tl_test_faulting_kernel<<<1, 32>>>(d);
    cudaError_t err = cudaDeviceSynchronize();
    (void)cudaGetLastError();
    return (int)err;
}}
"""


def _build_hooks(out_dir: Path) -> ctypes.CDLL:
    if shutil.which("g++") is None and shutil.which("c++") is None and shutil.which("clang++") is None:
        pytest.skip("no C++ compiler (g++, c++ or clang++): simulator/ needs one to build the test library")
    from simulator.build import build_shared

    source = out_dir / "tl_error_hooks.cu"
    source.write_text(
        _HOOKS.format(
            softmax=KERNEL_SOURCES / "softmax_kernel.cu", layernorm=KERNEL_SOURCES / "layernorm_kernel.cu"
        )
    )
    return ctypes.CDLL(str(build_shared(source, out_dir / "lib", mode="fast")))


@pytest.fixture
def hooks(tmp_path, monkeypatch) -> tuple[ctypes.CDLL, CudaCKernels]:
    """A fresh simulator build of both launcher sources plus the test entry points (own runtime state)."""
    monkeypatch.setenv("SIMULATOR_QUIET", "1")  # the planted fault's report is expected
    lib = _build_hooks(tmp_path)
    return lib, CudaCKernels({"softmax_kernel": lib, "layernorm_kernel": lib}, origin=str(tmp_path))


def test_an_error_left_pending_by_other_code_is_not_reported_by_the_next_launch(hooks):
    lib, kernels = hooks
    assert lib.tl_test_leave_pending_error() == OOM
    _check_every_op(kernels)


def test_after_a_kernel_fault_every_launcher_returns_the_sticky_error(hooks):
    lib, kernels = hooks
    sticky = lib.tl_test_fault()
    assert sticky in cuda_c_loader.STICKY_ERRORS, f"the planted kernel fault returned {sticky}"
    buf, ptr = _scratch()
    small = {
        "tl_attn_softmax_fw": (ptr, None, ptr, 1, 1, 2, 4, 0),
        "tl_attn_softmax_bw": (ptr, ptr, ptr, 2, 4),
        "tl_layernorm_fw": (ptr, ptr, ptr, ptr, ptr, ptr, 2, 4, 1e-5),
        "tl_layernorm_bw": (ptr,) * 8 + (2, 4),
    }
    before = buf.copy()
    for _ in range(2):  # reading the error does not clear it
        for symbol, args in small.items():
            assert kernels.launcher(symbol)(*args) == sticky, symbol
    np.testing.assert_array_equal(buf, before)  # and nothing was written
    # Through the provider's checked calls: an exception that says the process must restart.
    with pytest.raises(CudaCKernelError) as info:
        kernels.attn_softmax_bw(td(np.ones((2, 3), F32)), td(np.ones((2, 3), F32)))
    err = info.value
    assert err.sticky and err.code == sticky
    assert "the CUDA context is broken by this or an earlier error" in str(err)
    assert "restart the process" in str(err)


def test_only_the_documented_sticky_errors_ask_for_a_restart():
    for code, name in cuda_c_loader.CUDA_ERRORS.items():
        err = CudaCKernelError("tl_attn_softmax_fw", code)
        assert err.sticky == (code in cuda_c_loader.STICKY_ERRORS), name
        assert ("restart the process" in str(err)) == err.sticky, name
    assert {cuda_c_loader.error_name(c) for c in cuda_c_loader.STICKY_ERRORS} == {
        "cudaErrorIllegalAddress",
        "cudaErrorLaunchTimeout",
        "cudaErrorAssert",
        "cudaErrorHardwareStackError",
        "cudaErrorIllegalInstruction",
        "cudaErrorMisalignedAddress",
        "cudaErrorInvalidAddressSpace",
        "cudaErrorInvalidPc",
        "cudaErrorLaunchFailure",
    }
