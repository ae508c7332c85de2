"""CudaCKernelProvider routing: which ops go to the CUDA C launchers, which stay on numba-cuda.

Only the four fused ops with all-float32 operands go to the launchers; any other dtype, and
every primitive, runs CudaProvider's numba-cuda kernels. The routing tests replace the
loaded libraries by a recorder and CudaProvider's own fused ops by recorders, so they need
neither numba nor a GPU; the last test runs the real CudaProvider where one can be built
(numba-cuda's simulator or a GPU).
"""

from __future__ import annotations

import numpy as np
import pytest

from torchlight.backends import get_backend, registry
from torchlight.backends.cpu import cpu_backend
from torchlight.backends.cuda_c import loader
from torchlight.backends.cuda_c import provider as cuda_c
from torchlight.backends.cuda_c.provider import KERNEL_DIR_ENV, KernelLibraryError
from torchlight.backends.numba_cuda import provider as cp
from torchlight.backends.numba_cuda.backend import CudaBackend
from torchlight.core.tensor_data import TensorData

FUSED = ("attn_softmax_fw", "attn_softmax_bw", "layernorm_fw", "layernorm_bw")
F32, F64 = np.float32, np.float64


def td(shape, dtype=F32, seed=0) -> TensorData:
    return TensorData.from_array(np.random.default_rng(seed).standard_normal(shape).astype(dtype))


class RecordingKernels:
    """Stands in for CudaCKernels: records each fused op and answers with the CPU reference."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def __getattr__(self, name):
        if name not in FUSED:
            raise AttributeError(name)

        def run(*args):
            self.calls.append((name, args))
            return getattr(cpu_backend(), name)(*args)

        return run


@pytest.fixture
def provider(monkeypatch):
    """A CudaCKernelProvider over a RecordingKernels, with CudaProvider's fused ops recorded."""
    numba_calls: list[tuple] = []
    monkeypatch.setattr(cp.CudaProvider, "__init__", lambda self, *a, **k: None)
    for name in FUSED:

        def recorder(self, *args, _name=name):
            numba_calls.append((_name, args))
            return "numba-cuda"

        monkeypatch.setattr(cp.CudaProvider, name, recorder)
    kernels = RecordingKernels()
    instance = cuda_c.CudaCKernelProvider(kernels=kernels)
    return instance, kernels.calls, numba_calls


def test_subclass_overrides_exactly_the_four_fused_ops():
    cls = cuda_c.CudaCKernelProvider
    assert issubclass(cls, cp.CudaProvider)
    own = {name for name, value in vars(cls).items() if callable(value) and not name.startswith("__")}
    assert own == set(FUSED)
    for name in ("map", "zip", "reduce", "matmul"):
        assert getattr(cls, name) is getattr(cp.CudaProvider, name)


def test_public_home_is_backends_cuda():
    from torchlight.backends import cuda

    assert cuda.CudaCKernelProvider is cuda_c.CudaCKernelProvider


def _mask(dtype):
    return td((2, 5), dtype, seed=1)


ROUTES = [
    ("softmax fw f32", "attn_softmax_fw", lambda: (td((2, 3, 4, 5)), None, True), "c"),
    ("softmax fw f32 + mask", "attn_softmax_fw", lambda: (td((2, 3, 4, 5)), _mask(F32), False), "c"),
    ("softmax fw f64", "attn_softmax_fw", lambda: (td((2, 3, 4, 5), F64), None, False), "numba"),
    ("softmax fw f64 mask", "attn_softmax_fw", lambda: (td((2, 3, 4, 5)), _mask(F64), False), "numba"),
    ("softmax bw f32", "attn_softmax_bw", lambda: (td((2, 3)), td((2, 3), seed=1)), "c"),
    ("softmax bw f64", "attn_softmax_bw", lambda: (td((2, 3), F64), td((2, 3), F64)), "numba"),
    ("softmax bw mixed", "attn_softmax_bw", lambda: (td((2, 3)), td((2, 3), F64)), "numba"),
    ("layernorm fw f32", "layernorm_fw", lambda: (td((3, 4)), td((4,)), td((4,)), 1e-3), "c"),
    (
        "layernorm fw f64",
        "layernorm_fw",
        lambda: (td((3, 4), F64), td((4,), F64), td((4,), F64), 1e-5),
        "numba",
    ),
    ("layernorm bw f32", "layernorm_bw", lambda: (td((3, 4)), td((3, 4)), td((4,)), td((3,)), td((3,))), "c"),
    (
        "layernorm bw f64",
        "layernorm_bw",
        lambda: tuple(td(s, F64) for s in ((3, 4), (3, 4), (4,), (3,), (3,))),
        "numba",
    ),
    (
        "layernorm bw f64 rstd",
        "layernorm_bw",
        lambda: (td((3, 4)), td((3, 4)), td((4,)), td((3,)), td((3,), F64)),
        "numba",
    ),
]


@pytest.mark.parametrize("case", ROUTES, ids=[r[0] for r in ROUTES])
def test_fused_op_routing(provider, case):
    _, op, make, route = case
    instance, c_calls, numba_calls = provider
    args = make()
    result = getattr(instance, op)(*args)
    taken, other = (c_calls, numba_calls) if route == "c" else (numba_calls, c_calls)
    assert other == []
    assert len(taken) == 1
    name, passed = taken[0]
    assert name == op and passed == args  # arguments (causal, eps) pass through unchanged
    if route == "numba":
        assert result == "numba-cuda"


def test_constructor_loads_the_given_directory(monkeypatch, tmp_path):
    monkeypatch.setattr(cp.CudaProvider, "__init__", lambda self, *a, **k: None)
    loaded = []
    monkeypatch.setattr(cuda_c, "load_kernels", lambda d: loaded.append(d) or "kernels")
    assert cuda_c.CudaCKernelProvider(kernel_dir=tmp_path).kernels == "kernels"
    assert loaded == [tmp_path]


def test_constructor_without_libraries_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(cp.CudaProvider, "__init__", lambda self, *a, **k: None)
    monkeypatch.setattr(cuda_c, "find_kernel_dir", lambda: None)
    with pytest.raises(
        KernelLibraryError, match="no CUDA C kernel libraries.*python -m torchlight build-kernels"
    ):
        cuda_c.CudaCKernelProvider()


def test_constructor_with_a_bad_env_dir_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.setattr(cp.CudaProvider, "__init__", lambda self, *a, **k: None)
    monkeypatch.setenv(KERNEL_DIR_ENV, str(tmp_path / "missing"))
    with pytest.raises(KernelLibraryError, match="is not a directory"):
        cuda_c.CudaCKernelProvider()
    with pytest.raises(KernelLibraryError, match="is not a directory"):
        registry.device_rule("cuda").choose()  # never a silent switch to the numba-cuda kernels
    assert "cuda -> error: KernelLibraryError" in registry.explain_device("cuda")


def test_the_registry_chooses_cuda_c_where_the_libraries_are(monkeypatch, tmp_path):
    monkeypatch.setattr(loader, "find_kernel_dir", lambda: None)
    name, why = registry.device_rule("cuda").choose()
    assert name == "cuda" and "no CUDA C kernel libraries" in why
    monkeypatch.setattr(loader, "find_kernel_dir", lambda: tmp_path)
    name, why = registry.device_rule("cuda").choose()
    assert name == "cuda-c" and str(tmp_path) in why
    assert registry.explain_device("cuda").startswith(
        f"cuda -> cuda-c: CUDA C kernel libraries found in {tmp_path}"
    )


def test_get_backend_cuda_builds_the_registry_choice(monkeypatch, tmp_path):
    monkeypatch.setattr(cp.CudaProvider, "__init__", lambda self, *a, **k: None)
    monkeypatch.setattr(registry, "_DEVICE_BACKENDS", {})
    monkeypatch.setattr(loader, "find_kernel_dir", lambda: tmp_path)  # the registry's rule
    monkeypatch.setattr(cuda_c, "find_kernel_dir", lambda: tmp_path)  # the provider's own lookup
    monkeypatch.setattr(cuda_c, "load_kernels", lambda d: RecordingKernels())
    backend = get_backend("cuda")
    assert type(backend.provider) is cuda_c.CudaCKernelProvider
    assert get_backend("cuda") is backend


@pytest.mark.requires_backend("cuda", reason="runs the numba-cuda kernels beside recorded CUDA C calls")
def test_real_cuda_provider_keeps_float64_and_primitives_on_numba_cuda():
    kernels = RecordingKernels()
    instance = cuda_c.CudaCKernelProvider(kernels=kernels)
    backend = CudaBackend(provider=instance)
    cpu = cpu_backend()
    x64 = td((1, 1, 2, 3), F64)
    np.testing.assert_allclose(backend.attn_softmax_fw(x64).array, cpu.attn_softmax_fw(x64).array, rtol=1e-12)
    a, b = td((2, 3)), td((2, 3), seed=1)
    np.testing.assert_allclose(backend.add(a, b).array, a.array + b.array, rtol=1e-6)
    assert kernels.calls == []
    x32 = td((1, 1, 2, 3))
    backend.attn_softmax_fw(x32, None, True)
    assert [name for name, _ in kernels.calls] == ["attn_softmax_fw"]
