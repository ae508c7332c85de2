"""CudaProvider and CudaBackend: errors, the fallback rule, the singleton, the kernel registry,
and the block logic that only the CUDA tiers exercise (rows longer than a block, partial tiles,
grids smaller than the work).

In-process kernel tests need numba-cuda with a GPU or ``NUMBA_ENABLE_CUDASIM=1``; the error
and fallback tests run fresh interpreters so that numba's import-time state is their own.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from torchlight.backends.ops import BINARY_OPS, REDUCE_OPS, UNARY_OPS
from torchlight.core.tensor_data import TensorData

ROOT = Path(__file__).resolve().parents[3]
needs_numba = pytest.mark.requires_backend(
    "numba", installed=True, reason="the CUDA fallback and the shared bodies run on the numba twin"
)
needs_numba_cuda = pytest.mark.requires_backend(
    "cuda", installed=True, reason="checks numba-cuda's own errors and kernel registry (no GPU needed)"
)
needs_cuda = pytest.mark.requires_backend(
    "cuda", reason="launches numba-cuda kernels (on a GPU, or with NUMBA_ENABLE_CUDASIM=1)"
)

# Prepended to a child interpreter's code: makes numba-cuda look uninstalled.
BLOCK_NUMBA_CUDA = "import sys; sys.modules['numba_cuda'] = None\n"


def run_python(
    code: str, *, simulator: bool | None = None, env: dict | None = None
) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter with the checkout importable."""
    child = dict(os.environ)
    child["PYTHONPATH"] = os.pathsep.join([str(ROOT), child.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    for key in ("NUMBA_ENABLE_CUDASIM", "TORCHLIGHT_CUDA_FALLBACK", "TORCHLIGHT_CUDA_KERNEL_DIR"):
        child.pop(key, None)
    if simulator:
        child["NUMBA_ENABLE_CUDASIM"] = "1"
    child.update(env or {})
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=child,
        timeout=300,
        check=False,
    )


@pytest.fixture(scope="module")
def provider():
    """A CudaProvider on the GPU or the simulator (tests using it carry ``needs_cuda``)."""
    from torchlight.backends.numba_cuda.provider import CudaProvider

    return CudaProvider()


def small_provider(launch_fields: dict):
    """A provider with an explicit (small) launch configuration, on whatever device exists."""
    from torchlight.backends.numba_cuda.kernels import LaunchConfig
    from torchlight.backends.numba_cuda.provider import CudaProvider

    return CudaProvider(launch=LaunchConfig(**launch_fields))


def data(array: np.ndarray) -> TensorData:
    return TensorData.from_array(np.ascontiguousarray(array))


# --- import, errors and the fallback rule -----------------------------------------------------------


def test_importing_the_cuda_modules_does_not_import_numba():
    done = run_python(
        """
        import sys
        import torchlight, torchlight.backends.cuda, torchlight.backends.numba_cuda.provider
        from torchlight.backends.cuda import CudaBackend, CudaProvider
        loaded = sorted(m for m in sys.modules if m == "numba" or m.startswith(("numba.", "numba_cuda")))
        print("LOADED", loaded)
        """
    )
    assert done.returncode == 0, done.stderr
    assert "LOADED []" in done.stdout


def test_missing_numba_cuda_raises_the_install_hint():
    done = run_python(
        BLOCK_NUMBA_CUDA
        + """
from torchlight.backends import get_backend
from torchlight.backends.cuda import CudaBackend
for make in (CudaBackend, lambda: get_backend("cuda")):
    try:
        make()
    except ImportError as err:
        print("IMPORTERROR", err)
    else:
        print("NO ERROR")
"""
    )
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stdout.splitlines() if line.startswith(("IMPORTERROR", "NO ERROR"))]
    assert len(lines) == 2, done.stdout
    for line in lines:
        assert line.startswith("IMPORTERROR"), line
        assert 'pip install "torchlight[cuda]"' in line
        assert "numba-cuda" in line


@needs_numba
def test_fallback_env_returns_the_numba_twin_with_a_warning():
    done = run_python(
        BLOCK_NUMBA_CUDA
        + """
import warnings
import numpy as np
from torchlight.backends import get_backend
from torchlight.backends.cuda import NumbaBackend, numba_backend
from torchlight.core.tensor_data import TensorData
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    backend = get_backend("cuda")
print("TYPE", type(backend).__name__, backend is numba_backend())
print("WARN", [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)])
a = TensorData.from_array(np.arange(6.0).reshape(2, 3))
b = TensorData.from_array(np.array([10.0, 20.0, 30.0]))
print("SUM", backend.add(a, b).array.tolist())
""",
        env={"TORCHLIGHT_CUDA_FALLBACK": "numba"},
    )
    assert done.returncode == 0, done.stderr
    assert "TYPE NumbaBackend True" in done.stdout
    warn = next(line for line in done.stdout.splitlines() if line.startswith("WARN"))
    assert "TORCHLIGHT_CUDA_FALLBACK=numba" in warn and "numba-cuda" in warn
    assert "SUM [[10.0, 21.0, 32.0], [13.0, 24.0, 35.0]]" in done.stdout


@needs_numba
def test_kernel_bodies_are_validated_on_the_twin_without_numba_cuda():
    """Without numba-cuda the twin still compiles the shared bodies with njit and runs them."""
    done = run_python(
        BLOCK_NUMBA_CUDA
        + """
import numba, numpy as np
from torchlight.backends import kernel_bodies
bodies = kernel_bodies.make_bodies(numba.njit)
shape = np.array([2, 3], dtype=np.int64)
b_shape = np.array([3], dtype=np.int64)
strides = np.array([1], dtype=np.int64)
out = [bodies.zip_positions(i, shape, shape, np.array([3, 1], dtype=np.int64), 0, b_shape, strides, 5)
       for i in range(6)]
print("POS", out)
print("NUMBA_CUDA_LOADED", "numba_cuda" in sys.modules and sys.modules["numba_cuda"] is not None)
"""
    )
    assert done.returncode == 0, done.stderr
    # Output element i = (r, c) reads a at 3r + c and the broadcast row b at 5 + c.
    expected = [(3 * r + c, 5 + c) for r in range(2) for c in range(3)]
    assert f"POS {expected}" in done.stdout
    assert "NUMBA_CUDA_LOADED False" in done.stdout


def test_unknown_fallback_value_is_refused():
    from torchlight.backends.registry import device_rule

    fallback_choice = device_rule("cuda").fallback_choice
    assert fallback_choice({}) is None
    assert fallback_choice({"TORCHLIGHT_CUDA_FALLBACK": "Numba"}) == "numba"
    with pytest.raises(ValueError, match=r"TORCHLIGHT_CUDA_FALLBACK='cpu'.*numba"):
        fallback_choice({"TORCHLIGHT_CUDA_FALLBACK": "cpu"})


@needs_numba_cuda
def test_no_gpu_gives_a_clear_error_pointing_to_the_simulator_and_the_twin():
    done = run_python(
        """
from numba import cuda
if cuda.is_available():
    print("HAS GPU")
    raise SystemExit(0)
from torchlight.backends.cuda import CudaBackend
try:
    CudaBackend()
except RuntimeError as err:
    print("RUNTIMEERROR", type(err).__name__, err)
"""
    )
    assert done.returncode == 0, done.stderr
    if "HAS GPU" in done.stdout:
        pytest.skip("a GPU is visible here, so the no-driver error cannot happen")
    line = next(line for line in done.stdout.splitlines() if line.startswith("RUNTIMEERROR"))
    assert "CudaUnavailableError" in line
    assert "NVIDIA GPU and driver" in line
    assert "NUMBA_ENABLE_CUDASIM=1" in line
    assert "numba_backend()" in line
    assert "Traceback" not in done.stdout


@needs_numba_cuda
@needs_numba
def test_no_gpu_with_the_fallback_env_returns_the_twin():
    done = run_python(
        """
import warnings
from numba import cuda
if cuda.is_available():
    print("HAS GPU")
    raise SystemExit(0)
from torchlight.backends import get_backend
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    print("TYPE", type(get_backend("cuda")).__name__)
print("WARN", [str(w.message)[:200] for w in caught])
""",
        env={"TORCHLIGHT_CUDA_FALLBACK": "numba"},
    )
    assert done.returncode == 0, done.stderr
    if "HAS GPU" in done.stdout:
        pytest.skip("a GPU is visible here, so CUDA does not fall back")
    assert "TYPE NumbaBackend" in done.stdout
    assert "NVIDIA GPU and driver" in done.stdout


# --- the registry ----------------------------------------------------------------------------------


@needs_numba_cuda
def test_registry_lists_every_op_of_the_table_for_both_dtypes():
    from torchlight.backends.numba_cuda.provider import CudaProvider

    specs = CudaProvider.kernel_specs()
    names = [s.name for s in specs]
    assert len(names) == len(set(names)), "kernel names must be unique"
    expected = set()
    for dtype in ("float32", "float64"):
        expected |= {f"map_{op.name}[{dtype}]" for op in UNARY_OPS}
        expected |= {f"zip_{op.name}[{dtype}]" for op in BINARY_OPS}
        expected |= {f"reduce_{op.name}[{dtype}]" for op in REDUCE_OPS}
        for kind in (
            "matmul",
            "attn_softmax_fw",
            "attn_softmax_bw",
            "layernorm_fw",
            "layernorm_bw",
            "layernorm_params",
        ):
            expected.add(f"{kind}[{dtype}]")
    assert set(names) == expected
    for spec in specs:
        assert callable(spec.pyfunc)
        assert spec.signature, spec.name
        # Every signature carries the kernel's dtype (its data arrays) and nothing else.
        dtypes = {str(t.dtype) for t in spec.signature if hasattr(t, "dtype") and str(t.dtype) != "int64"}
        assert dtypes == {spec.name.split("[")[1].rstrip("]")}, spec.name


@needs_cuda
def test_launches_compile_exactly_the_registry_specs(provider):
    from torchlight.backends.numba_cuda.provider import CudaProvider

    built = []

    class Recording(CudaProvider):
        @staticmethod
        def kernel_spec(kind, fn, dtype, launch):
            spec = CudaProvider.kernel_spec(kind, fn, dtype, launch)
            built.append(spec.name)
            return spec

    rec = Recording()
    x = data(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4))
    exp = next(op for op in UNARY_OPS if op.name == "exp")
    rec.map(exp.scalar, x)
    rec.reduce(REDUCE_OPS[0].scalar, 0.0, x, 1)
    rec.matmul(x, data(np.ones((4, 2), np.float32)))
    registry = {s.name for s in CudaProvider.kernel_specs()}
    assert built == ["map_exp[float32]", f"reduce_{REDUCE_OPS[0].name}[float32]", "matmul[float32]"]
    assert set(built) <= registry


# --- the backend -----------------------------------------------------------------------------------


@needs_cuda
def test_cuda_backend_is_a_cached_singleton_on_the_cuda_device(provider):
    import torchlight as tl
    from torchlight.backends import get_backend
    from torchlight.backends.cuda import CudaBackend, cuda_backend
    from torchlight.core.device import Device

    first = cuda_backend()
    assert isinstance(first, CudaBackend)
    assert cuda_backend() is first
    assert get_backend("cuda") is first
    assert get_backend(Device("cuda:0")) is first
    assert first.device == Device("cuda") and first.name == "cuda"
    t = tl.tensor([1.0, 2.0], device="cuda")
    assert t.device == Device("cuda")
    np.testing.assert_allclose((t * t).numpy(), [1.0, 4.0])


@needs_cuda
def test_get_backend_cuda_follows_the_kernel_libraries(provider, monkeypatch, tmp_path):
    """CudaBackend() runs numba-cuda; get_backend("cuda") takes the registry's choice, and a
    configured kernel directory that is missing is an error, never a silent switch."""
    from torchlight.backends import get_backend, registry
    from torchlight.backends.cuda_c import loader
    from torchlight.backends.numba_cuda.backend import CudaBackend

    monkeypatch.delenv("TORCHLIGHT_CUDA_KERNEL_DIR", raising=False)
    monkeypatch.setattr(registry, "_DEVICE_BACKENDS", {})
    assert type(CudaBackend().provider).__name__ == "CudaProvider"
    expected = "CudaProvider" if loader.find_kernel_dir() is None else "CudaCKernelProvider"
    assert type(get_backend("cuda").provider).__name__ == expected
    monkeypatch.setattr(registry, "_DEVICE_BACKENDS", {})
    monkeypatch.setenv("TORCHLIGHT_CUDA_KERNEL_DIR", str(tmp_path / "missing"))
    with pytest.raises(loader.KernelLibraryError, match="missing"):
        get_backend("cuda")


@needs_cuda
def test_backend_checks_inputs_before_launching(provider):
    from torchlight.backends.numba_cuda.backend import CudaBackend

    backend = CudaBackend(provider=provider)
    a = data(np.zeros((2, 3), np.float32))
    with pytest.raises(ValueError, match=r"\(2, 3\).*\(4,\)"):
        backend.add(a, data(np.zeros(4, np.float32)))
    with pytest.raises(IndexError, match="reduce dim 2"):
        backend.add_reduce(a, 2)
    with pytest.raises(ValueError, match="inner dimensions"):
        backend.matmul(a, a)
    with pytest.raises(ValueError, match="out= has shape"):
        backend.exp_map(a, out=data(np.zeros(3, np.float32)))


# --- block logic: rows longer than a block, partial tiles, grids smaller than the work -----------------


@needs_cuda
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("op", REDUCE_OPS, ids=lambda op: op.name)
def test_reduce_over_rows_longer_than_the_block(provider, op, dtype):
    block = provider.launch.row_threads
    length = 3 * block + 5
    assert provider._row_block(length) == block < length
    rng = np.random.default_rng(1)
    # Values near 1 keep a long product finite.
    values = rng.uniform(0.9, 1.1, (3, length)).astype(dtype)
    # Reduce a strided view (dim 0 of the transpose) so the row stride is not 1.
    view = data(values).transpose(0, 1)
    out = provider.reduce(op.scalar, op.start, view, 0)
    expected = op.ufunc.reduce(values.T.astype(np.float64), axis=0, keepdims=True)
    assert out.shape == (1, 3)
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(out.array, expected, rtol=rtol)


@needs_cuda
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_matmul_with_shapes_that_are_not_multiples_of_the_tile(provider, dtype):
    tile = provider.launch.tile
    m, k, n = 2 * tile + 1, tile + 3, 3 * tile - 1
    rng = np.random.default_rng(2)
    a = rng.standard_normal((2, 1, m, k)).astype(dtype)
    b = rng.standard_normal((3, k, n)).astype(dtype)
    out = provider.matmul(data(a), data(b))
    expected = np.matmul(a.astype(np.float64), b.astype(np.float64))
    assert out.shape == (2, 3, m, n)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(out.array, expected, rtol=tol, atol=tol * k)
    # A transposed (strided) right operand and an empty inner dim.
    bt = data(np.ascontiguousarray(np.swapaxes(b, -1, -2))).transpose(-1, -2)
    np.testing.assert_allclose(provider.matmul(data(a), bt).array, expected, rtol=tol, atol=tol * k)
    empty = provider.matmul(data(np.zeros((m, 0), dtype)), data(np.zeros((0, n), dtype)))
    assert empty.shape == (m, n) and not empty.array.any()


@needs_cuda
def test_grids_smaller_than_the_work_cover_every_element():
    """Two blocks of four threads (and 2x2 tiles) still reach every element and row."""
    p = small_provider(dict(threads=4, max_blocks=2, row_threads=4, min_row_threads=1, tile=2))
    rng = np.random.default_rng(3)
    x = rng.standard_normal((5, 7))
    exp = next(op for op in UNARY_OPS if op.name == "exp")
    add = next(op for op in BINARY_OPS if op.name == "add")
    total = next(op for op in REDUCE_OPS if op.name == "add")
    np.testing.assert_allclose(p.map(exp.scalar, data(x)).array, np.exp(x), rtol=1e-12)
    np.testing.assert_allclose(p.zip(add.scalar, data(x), data(x[:1])).array, x + x[:1], rtol=1e-12)
    np.testing.assert_allclose(p.reduce(total.scalar, 0.0, data(x), 1).array, x.sum(1, keepdims=True))
    b = rng.standard_normal((7, 5))
    np.testing.assert_allclose(p.matmul(data(x), data(b)).array, x @ b, rtol=1e-12)


@needs_cuda
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fused_rows_longer_than_the_block(provider, dtype):
    """Softmax (masked, causal, a fully masked batch) and layernorm over rows wider than a block."""
    from torchlight.backends.cpu import cpu_backend

    cpu = cpu_backend()
    width = 2 * provider.launch.row_threads + 3
    rng = np.random.default_rng(4)
    x = data(rng.standard_normal((2, 1, 3, width)).astype(dtype))
    mask = np.zeros((2, width), dtype)
    mask[0, ::3] = -np.inf
    mask[1, :] = -np.inf  # every key of batch 1 is masked: its rows are all zeros
    tol = 1e-5 if dtype == np.float32 else 1e-12
    for causal in (False, True):
        got = provider.attn_softmax_fw(x, data(mask), causal)
        want = cpu.attn_softmax_fw(x, data(mask), causal)
        np.testing.assert_allclose(got.array, want.array, rtol=tol, atol=tol)
        assert not got.array[1].any()
    y = cpu.attn_softmax_fw(x)
    dy = data(rng.standard_normal(x.shape).astype(dtype))
    np.testing.assert_allclose(
        provider.attn_softmax_bw(y, dy).array, cpu.attn_softmax_bw(y, dy).array, rtol=tol, atol=tol
    )
    h = data(rng.standard_normal((3, width)).astype(dtype))
    gamma = data(rng.standard_normal(width).astype(dtype))
    beta = data(rng.standard_normal(width).astype(dtype))
    for got, want in zip(provider.layernorm_fw(h, gamma, beta, 1e-5), cpu.layernorm_fw(h, gamma, beta, 1e-5)):
        np.testing.assert_allclose(got.array, want.array, rtol=10 * tol, atol=10 * tol)
    _, mean, rstd = cpu.layernorm_fw(h, gamma, beta, 1e-5)
    g = data(rng.standard_normal(h.shape).astype(dtype))
    got = provider.layernorm_bw(g, h, gamma, mean, rstd)
    want = cpu.layernorm_bw(g, h, gamma, mean, rstd)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a.array, b.array, rtol=10 * tol, atol=10 * tol)


@needs_cuda
def test_scalar_ops_give_ieee_results_at_the_edges(provider):
    """log(0) = -inf, exp overflow = inf, 1/0 = inf, 0/0 = nan: as numpy and a GPU give them."""
    from torchlight.backends.cpu import cpu_backend
    from torchlight.backends.numba_cuda.backend import CudaBackend

    backend, cpu = CudaBackend(provider=provider), cpu_backend()
    for dtype in (np.float32, np.float64):
        x = data(np.array([0.0, -1.0, 1.0, 1000.0], dtype))
        with np.errstate(all="ignore"):
            for name in ("log_map", "exp_map", "inv_map", "sigmoid_map", "tanh_map"):
                got, want = getattr(backend, name)(x).array, getattr(cpu, name)(x).array
                np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=name)
                np.testing.assert_allclose(got, want, rtol=1e-6, err_msg=name)
            np.testing.assert_array_equal(np.isnan(backend.div(x, x).array), [True, False, False, False])


# numba.cuda once a test loads it: the simulator swaps module globals (not closures) for its fake.
cuda = None


def _one_shared_array_kernel(out):
    t = cuda.threadIdx.x
    cuda.syncthreads()  # every thread then asks for the shared array at once
    buf = cuda.shared.array(32, np.float64)
    buf[t] = t
    cuda.syncthreads()
    if t == 0:
        total = 0.0
        for i in range(32):
            total += buf[i]
        out[0] = total


@needs_cuda
def test_simulator_gives_every_thread_of_a_block_one_shared_array(provider):
    """The simulator's unlocked shared-array lookup can hand threads private copies; ours cannot."""
    global cuda
    if not provider.simulator:
        pytest.skip("only the numba-cuda simulator allocates shared memory in Python")
    from numba import cuda

    kernel = cuda.jit(_one_shared_array_kernel)
    wrong = 0
    for _ in range(100):
        out = np.zeros(1)
        with provider._launching():
            kernel[1, 32](out)
        wrong += int(out[0] != 496.0)
    assert wrong == 0, f"{wrong} of 100 launches saw more than one shared array in a block"
