"""The CUDA C kernel loader: argument checks before C, error translation, the kernel directory.

Most tests here drive ``CudaCKernels`` with fake libraries whose launchers record their calls,
so they prove that bad input never reaches C and that the ctypes plumbing (pointers, sizes,
contiguous copies) is right, on any machine. The tests marked ``kernels`` load the real
libraries from ``TORCHLIGHT_CUDA_KERNEL_DIR`` (or torchlight/cuda_kernels/).
"""

from __future__ import annotations

import _ctypes
import ctypes
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from torchlight.backends.cpu import cpu_backend
from torchlight.backends.cuda_c import loader as cuda_c_loader
from torchlight.backends.cuda_c.loader import (
    KERNEL_DIR_ENV,
    CudaCKernelError,
    CudaCKernels,
    KernelLibraryError,
    find_kernel_dir,
)
from torchlight.core.tensor_data import TensorData

REPO = Path(__file__).resolve().parents[3]
F32 = np.float32


def _floats(address: int, count: int) -> np.ndarray:
    """A numpy view of ``count`` floats at a host address the launcher was given."""
    if count == 0:
        return np.empty(0, dtype=F32)
    return np.ctypeslib.as_array((ctypes.c_float * count).from_address(address))


class FakeLauncher:
    """Stands in for a ctypes function: records calls, runs ``body`` on the raw arguments."""

    def __init__(self, body=None, code: int = 0) -> None:
        self.argtypes = None
        self.restype = None
        self.calls: list[tuple] = []
        self.body = body
        self.code = code

    def __call__(self, *args):
        self.calls.append(args)
        if self.body is not None:
            self.body(*args)
        return self.code


def _softmax_fw_body(x, mask, y, batch, heads, q_len, k_len, causal):
    """The CPU reference maths on the launcher's raw pointers, to check the plumbing."""
    shape = (batch, heads, q_len, k_len)
    n = batch * heads * q_len * k_len
    xs = TensorData.from_array(_floats(x, n).reshape(shape).copy())
    ms = (
        None
        if mask is None
        else TensorData.from_array(_floats(mask, batch * k_len).reshape(batch, k_len).copy())
    )
    _floats(y, n)[:] = cpu_backend().attn_softmax_fw(xs, ms, bool(causal)).array.reshape(-1)


def _softmax_fw_strided_body(x, mask, y, batch, heads, q_len, k_len, sb, sh, sq, sk, causal):
    """The reference on the strided launcher's pointers: the mask is read through its strides."""
    shape = (batch, heads, q_len, k_len)
    n = batch * heads * q_len * k_len
    xs = TensorData.from_array(_floats(x, n).reshape(shape).copy())
    ms = None
    if mask is not None:
        extent = 1 + sum((d - 1) * s for d, s in zip(shape, (sb, sh, sq, sk)))
        own = _floats(mask, extent)
        view = np.lib.stride_tricks.as_strided(own, shape, tuple(4 * s for s in (sb, sh, sq, sk)))
        ms = TensorData.from_array(view.copy())
    _floats(y, n)[:] = cpu_backend().attn_softmax_fw(xs, ms, bool(causal)).array.reshape(-1)


def _softmax_bw_body(y, dy, dx, rows, k_len):
    n = rows * k_len
    ys = TensorData.from_array(_floats(y, n).reshape(rows, k_len).copy())
    dys = TensorData.from_array(_floats(dy, n).reshape(rows, k_len).copy())
    _floats(dx, n)[:] = cpu_backend().attn_softmax_bw(ys, dys).array.reshape(-1)


def _layernorm_fw_body(x, gamma, beta, y, mean, rstd, rows, hidden, eps):
    n = rows * hidden
    xs = TensorData.from_array(_floats(x, n).reshape(rows, hidden).copy())
    g = TensorData.from_array(_floats(gamma, hidden).copy())
    b = TensorData.from_array(_floats(beta, hidden).copy())
    ry, rm, rr = cpu_backend().layernorm_fw(xs, g, b, eps)
    _floats(y, n)[:] = ry.array.reshape(-1)
    _floats(mean, rows)[:] = rm.array
    _floats(rstd, rows)[:] = rr.array


def _layernorm_bw_body(dy, x, gamma, mean, rstd, dx, dgamma, dbeta, rows, hidden):
    n = rows * hidden
    args = [
        TensorData.from_array(_floats(p, c).reshape(s).copy())
        for p, c, s in (
            (dy, n, (rows, hidden)),
            (x, n, (rows, hidden)),
            (gamma, hidden, (hidden,)),
            (mean, rows, (rows,)),
            (rstd, rows, (rows,)),
        )
    ]
    rdx, rdg, rdb = cpu_backend().layernorm_bw(*args)
    _floats(dx, n)[:] = rdx.array.reshape(-1)
    _floats(dgamma, hidden)[:] = rdg.array
    _floats(dbeta, hidden)[:] = rdb.array


class FakeLibrary:
    """A loaded kernel library stand-in: the ABI symbol plus the given launchers."""

    def __init__(
        self, abi_symbol: str, launchers: dict[str, FakeLauncher], version: int = cuda_c_loader.ABI_VERSION
    ):
        setattr(self, abi_symbol, FakeLauncher(code=version))
        for name, fn in launchers.items():
            setattr(self, name, fn)


def fake_kernels(code: int = 0, compute: bool = True) -> tuple[CudaCKernels, dict[str, FakeLauncher]]:
    """CudaCKernels over fake libraries; every launcher returns ``code``."""
    bodies = {
        "tl_attn_softmax_fw": _softmax_fw_body,
        "tl_attn_softmax_fw_strided": _softmax_fw_strided_body,
        "tl_attn_softmax_bw": _softmax_bw_body,
        "tl_layernorm_fw": _layernorm_fw_body,
        "tl_layernorm_bw": _layernorm_bw_body,
    }
    launchers = {
        name: FakeLauncher(body if compute and code == 0 else None, code) for name, body in bodies.items()
    }
    libraries = {
        lib: FakeLibrary(abi, {name: launchers[name] for name in table})
        for lib, (abi, table) in cuda_c_loader.LIBRARIES.items()
    }
    return CudaCKernels(libraries, origin="fake"), launchers


def td(array) -> TensorData:
    return TensorData.from_array(np.asarray(array))


def rand(*shape, dtype=F32, seed=0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


# --- signatures and plumbing -----------------------------------------------------------------


def test_signatures_are_declared_once_at_load():
    kernels, launchers = fake_kernels()
    for table in (t for _, t in cuda_c_loader.LIBRARIES.values()):
        for name, argtypes in table.items():
            assert launchers[name].argtypes == argtypes
            assert launchers[name].restype is ctypes.c_int
    launchers["tl_attn_softmax_bw"].argtypes = "changed"
    kernels.attn_softmax_bw(td(rand(2, 3)), td(rand(2, 3)))
    assert launchers["tl_attn_softmax_bw"].argtypes == "changed"  # a call never redeclares


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("with_mask", [False, True])
def test_softmax_fw_passes_contiguous_float32_and_sizes(causal, with_mask):
    kernels, launchers = fake_kernels()
    base = rand(2, 3, 5, 4)
    x = td(base).permute(0, 1, 3, 2)  # strided: must reach C as a contiguous copy
    mask = td(rand(2, 5, seed=1)) if with_mask else None
    y = kernels.attn_softmax_fw(x, mask, causal)
    (args,) = launchers["tl_attn_softmax_fw_strided"].calls
    # A [batch, k_len] mask is [batch, 1, 1, k_len] read through strides (k_len, 0, 0, 1).
    strides = (5, 0, 0, 1) if with_mask else (0, 0, 0, 0)
    assert args[3:] == (2, 3, 4, 5, *strides, int(causal))
    assert (args[1] is None) == (not with_mask)
    expected = cpu_backend().attn_softmax_fw(x, mask, causal)
    np.testing.assert_array_equal(y.array, expected.array)
    assert y.dtype == F32 and y.shape == (2, 3, 4, 5)


@pytest.mark.parametrize(
    "mask_shape, strides",
    [
        ((2, 1, 1, 5), (5, 0, 0, 1)),
        ((1, 3, 4, 5), (0, 20, 5, 1)),
        ((2, 1, 4, 5), (20, 0, 5, 1)),
        ((5,), (0, 0, 0, 1)),
    ],
)
def test_a_broadcast_mask_reaches_c_as_its_own_elements_and_strides(mask_shape, strides):
    kernels, launchers = fake_kernels()
    x = td(rand(2, 3, 4, 5))
    own = np.where(rand(*mask_shape, seed=2) > 0.5, -np.inf, 0.25).astype(F32)
    y = kernels.attn_softmax_fw(x, td(own), True)
    (args,) = launchers["tl_attn_softmax_fw_strided"].calls
    assert args[7:11] == strides
    assert args[1] == own.ctypes.data, "a contiguous mask must reach C without any copy"
    expected = cpu_backend().attn_softmax_fw(x, td(np.broadcast_to(own, (2, 3, 4, 5)).copy()), True)
    np.testing.assert_array_equal(y.array, expected.array)


def test_softmax_bw_rows_and_k_len():
    kernels, launchers = fake_kernels()
    y = td(rand(2, 3, 4, 6))
    dy = td(rand(2, 3, 6, 4, seed=1)).transpose(-1, -2)
    dx = kernels.attn_softmax_bw(y, dy)
    assert launchers["tl_attn_softmax_bw"].calls[0][3:] == (24, 6)
    np.testing.assert_array_equal(dx.array, cpu_backend().attn_softmax_bw(y, dy).array)


@pytest.mark.parametrize("shape", [(7,), (3, 5), (2, 3, 4)])
def test_layernorm_round_trip_shapes(shape):
    kernels, launchers = fake_kernels()
    x, g, b = td(rand(*shape)), td(rand(shape[-1], seed=1)), td(rand(shape[-1], seed=2))
    y, mean, rstd = kernels.layernorm_fw(x, g, b, 1e-5)
    ref = cpu_backend().layernorm_fw(x, g, b, 1e-5)
    rows = int(np.prod(shape[:-1], dtype=np.int64))
    assert launchers["tl_layernorm_fw"].calls[0][6:8] == (rows, shape[-1])
    assert launchers["tl_layernorm_fw"].calls[0][8] == pytest.approx(1e-5)
    for got, want in zip((y, mean, rstd), ref):
        assert got.shape == want.shape
        np.testing.assert_array_equal(got.array, want.array)
    dy = td(rand(*shape, seed=3))
    got = kernels.layernorm_bw(dy, x, g, mean, rstd)
    for a, want in zip(got, cpu_backend().layernorm_bw(dy, x, g, mean, rstd)):
        assert a.shape == want.shape
        np.testing.assert_array_equal(a.array, want.array)


def test_empty_tensors_pass_null_pointers_and_zero_sizes():
    kernels, launchers = fake_kernels(compute=False)
    y = kernels.attn_softmax_fw(td(np.zeros((2, 0, 3, 4), F32)))
    assert y.shape == (2, 0, 3, 4)
    args = launchers["tl_attn_softmax_fw_strided"].calls[0]
    assert args[0] is None and args[3:7] == (2, 0, 3, 4)


# --- every bad input is refused before the call ------------------------------------------------

SOFTMAX_BAD = [
    ("3-d scores", lambda: (td(rand(2, 3, 4)), None), ValueError, "batch, heads, q_len, k_len"),
    ("mask shape", lambda: (td(rand(2, 1, 3, 4)), td(rand(2, 3))), ValueError, "does not broadcast"),
    # A float64 mask promotes the scores to float64 (as x + mask would): not for these kernels.
    (
        "mask dtype",
        lambda: (td(rand(2, 1, 3, 4)), td(rand(2, 4, dtype=np.float64))),
        TypeError,
        "float32 only",
    ),
    ("float64 scores", lambda: (td(rand(1, 1, 2, 2, dtype=np.float64)), None), TypeError, "float32 only"),
    ("int scores", lambda: (td(np.ones((1, 1, 2, 2), np.int32)), None), TypeError, "float32 only"),
]


@pytest.mark.parametrize("case", SOFTMAX_BAD, ids=[c[0] for c in SOFTMAX_BAD])
def test_softmax_fw_refuses_before_c(case):
    _, make, error, words = case
    kernels, launchers = fake_kernels()
    x, mask = make()
    with pytest.raises(error, match=re.escape(words)):
        kernels.attn_softmax_fw(x, mask)
    assert launchers["tl_attn_softmax_fw_strided"].calls == []


@pytest.mark.parametrize(
    "y, dy, error, words",
    [
        (rand(2, 3), rand(3, 2), ValueError, "must be equal"),
        (rand(2, 3), rand(2, 3, dtype=np.float64), TypeError, "float32 only"),
        (rand(2, 3, dtype=np.float64), rand(2, 3, dtype=np.float64), TypeError, "float32 only"),
        (np.float32(1.0), np.float32(1.0), ValueError, "0-d"),
    ],
)
def test_softmax_bw_refuses_before_c(y, dy, error, words):
    kernels, launchers = fake_kernels()
    with pytest.raises(error, match=re.escape(words)):
        kernels.attn_softmax_bw(td(y), td(dy))
    assert launchers["tl_attn_softmax_bw"].calls == []


LN_FW_BAD = [
    ("gamma shape", (rand(2, 4), rand(3), rand(4), 1e-5), ValueError, "gamma has shape"),
    ("beta shape", (rand(2, 4), rand(4), rand(4, 1), 1e-5), ValueError, "beta has shape"),
    ("gamma dtype", (rand(2, 4), rand(4, dtype=np.float64), rand(4), 1e-5), TypeError, "gamma dtype"),
    (
        "empty row",
        (np.zeros((2, 0), F32), np.zeros(0, F32), np.zeros(0, F32), 1e-5),
        ValueError,
        "empty last dim",
    ),
    ("0-d input", (np.float32(1), rand(1), rand(1), 1e-5), ValueError, "at least one dimension"),
    ("eps zero", (rand(2, 4), rand(4), rand(4), 0.0), ValueError, "eps must be > 0"),
    ("eps negative", (rand(2, 4), rand(4), rand(4), -1e-5), ValueError, "eps must be > 0"),
    ("eps nan", (rand(2, 4), rand(4), rand(4), float("nan")), ValueError, "eps must be > 0"),
    ("eps below float32", (rand(2, 4), rand(4), rand(4), 1e-50), ValueError, "in float32"),
    (
        "float64 all",
        (rand(2, 4, dtype=np.float64), rand(4, dtype=np.float64), rand(4, dtype=np.float64), 1e-5),
        TypeError,
        "float32 only",
    ),
]


@pytest.mark.parametrize("case", LN_FW_BAD, ids=[c[0] for c in LN_FW_BAD])
def test_layernorm_fw_refuses_before_c(case):
    _, (x, g, b, eps), error, words = case
    kernels, launchers = fake_kernels()
    with pytest.raises(error, match=re.escape(words)):
        kernels.layernorm_fw(td(x), td(g), td(b), eps)
    assert launchers["tl_layernorm_fw"].calls == []


def _ln_bw_args(**override):
    args = {
        "dy": rand(3, 4),
        "x": rand(3, 4, seed=1),
        "gamma": rand(4),
        "mean": rand(3),
        "rstd": rand(3) ** 2,
    }
    args.update(override)
    return {k: td(v) for k, v in args.items()}


LN_BW_BAD = [
    ("dy shape", {"dy": rand(4, 3)}, ValueError, "must be equal"),
    ("gamma shape", {"gamma": rand(3)}, ValueError, "gamma has shape"),
    ("mean shape", {"mean": rand(4)}, ValueError, "must have shape"),
    ("rstd shape", {"rstd": rand(3, 1)}, ValueError, "must have shape"),
    ("float64 mean", {"mean": rand(3, dtype=np.float64)}, TypeError, "mean has dtype float64"),
    ("float64 gamma", {"gamma": rand(4, dtype=np.float64)}, TypeError, "gamma has dtype float64"),
    (
        "empty row",
        {"dy": np.zeros((3, 0), F32), "x": np.zeros((3, 0), F32)},
        ValueError,
        "non-empty last dim",
    ),
]


@pytest.mark.parametrize("case", LN_BW_BAD, ids=[c[0] for c in LN_BW_BAD])
def test_layernorm_bw_refuses_before_c(case):
    _, override, error, words = case
    kernels, launchers = fake_kernels()
    with pytest.raises(error, match=re.escape(words)):
        kernels.layernorm_bw(**_ln_bw_args(**override))
    assert launchers["tl_layernorm_bw"].calls == []


# --- nonzero codes become exceptions that name the error and the fix -----------------------------


@pytest.mark.parametrize(
    "code, name, words",
    [
        (35, "cudaErrorInsufficientDriver", "no NVIDIA driver"),
        (100, "cudaErrorNoDevice", "no NVIDIA driver"),
        (34, "cudaErrorStubLibrary", "python -m torchlight build-kernels --simulator"),
        (2, "cudaErrorMemoryAllocation", "ran out of memory"),
        (209, "cudaErrorNoKernelImageForDevice", "TORCHLIGHT_CUDA_ARCHS"),
        (803, "cudaErrorSystemDriverMismatch", "update the driver"),
        (700, "cudaErrorIllegalAddress", "compute-sanitizer"),
        (20001, "TL_ERR_NEGATIVE_SIZE", "refused its arguments"),
        (31337, "unknown CUDA error 31337", "compute-sanitizer"),
    ],
)
def test_error_codes_are_named_with_a_fix(code, name, words):
    kernels, _ = fake_kernels(code=code)
    with pytest.raises(CudaCKernelError) as info:
        kernels.attn_softmax_bw(td(rand(2, 3)), td(rand(2, 3)))
    err = info.value
    assert err.code == code and err.error_name == name and err.launcher == "tl_attn_softmax_bw"
    assert name in str(err) and words in str(err) and f"code {code}" in str(err)


def test_error_table_matches_the_cuda_headers():
    header = next(
        (p for p in (Path("/usr/local/cuda/include/driver_types.h"),) if p.is_file()),
        None,
    )
    if header is None:
        pytest.skip("no CUDA toolkit headers (/usr/local/cuda/include/driver_types.h) to compare with")
    text = header.read_text()
    body = text[text.index("enum __device_builtin__ cudaError") :]
    body = body[: body.index("};")]
    found = {int(v): n for n, v in re.findall(r"(cudaError\w+)\s*=\s*(\d+)", body)}
    found = {code: name for code, name in found.items() if code not in (0, 10000)}
    assert cuda_c_loader.CUDA_ERRORS == found


# --- the kernel directory ------------------------------------------------------------------------


def test_env_dir_missing_is_a_clear_error(monkeypatch, tmp_path):
    missing = tmp_path / "nowhere"
    monkeypatch.setenv(KERNEL_DIR_ENV, str(missing))
    with pytest.raises(KernelLibraryError, match="is not a directory") as info:
        find_kernel_dir()
    assert str(missing) in str(info.value) and "python -m torchlight build-kernels" in str(info.value)


def test_env_dir_without_libraries_names_what_is_missing(monkeypatch, tmp_path):
    (tmp_path / "softmax_kernel.so").write_bytes(b"")
    monkeypatch.setenv(KERNEL_DIR_ENV, str(tmp_path))
    with pytest.raises(KernelLibraryError, match="layernorm_kernel.so") as info:
        find_kernel_dir()
    assert "softmax_kernel.so," not in str(info.value)


def test_env_dir_is_used_when_complete(monkeypatch, tmp_path):
    for name in cuda_c_loader.LIBRARIES:
        (tmp_path / f"{name}.so").write_bytes(b"")
    monkeypatch.setenv(KERNEL_DIR_ENV, str(tmp_path))
    assert find_kernel_dir() == tmp_path


def test_no_env_and_no_built_libraries_means_none(monkeypatch, tmp_path):
    monkeypatch.setenv(KERNEL_DIR_ENV, "")
    monkeypatch.setattr(cuda_c_loader, "DEFAULT_KERNEL_DIR", tmp_path)
    assert find_kernel_dir() is None
    for name in cuda_c_loader.LIBRARIES:
        (tmp_path / f"{name}.so").write_bytes(b"")
    assert find_kernel_dir() == tmp_path


def test_a_file_that_is_not_a_library_is_refused(monkeypatch, tmp_path):
    for name in cuda_c_loader.LIBRARIES:
        (tmp_path / f"{name}.so").write_text("not an ELF file\n")
    with pytest.raises(KernelLibraryError, match="not a loadable shared library"):
        CudaCKernels.load(tmp_path)


def test_a_shared_library_without_the_abi_symbol_is_refused(tmp_path):
    if not getattr(_ctypes, "__file__", None):
        pytest.skip("this Python has _ctypes built in, so there is no stand-alone shared library to use")
    other = Path(_ctypes.__file__)  # a real shared library that is not a kernel library
    for name in cuda_c_loader.LIBRARIES:
        (tmp_path / f"{name}.so").symlink_to(other)
    with pytest.raises(
        KernelLibraryError, match="tl_softmax_abi_version: it is not a torchlight kernel library"
    ):
        CudaCKernels.load(tmp_path)


def test_abi_version_mismatch_is_refused():
    libraries = {lib: FakeLibrary(abi, {}, version=99) for lib, (abi, _) in cuda_c_loader.LIBRARIES.items()}
    with pytest.raises(KernelLibraryError, match=f"ABI version 99, expected {cuda_c_loader.ABI_VERSION}"):
        CudaCKernels(libraries)


def test_a_missing_launcher_is_refused():
    libraries = {lib: FakeLibrary(abi, {}) for lib, (abi, _) in cuda_c_loader.LIBRARIES.items()}
    with pytest.raises(KernelLibraryError, match="does not export the launcher tl_attn_softmax_fw"):
        CudaCKernels(libraries)


def test_libraries_load_once_per_directory(monkeypatch, tmp_path):
    loads = []
    monkeypatch.setattr(cuda_c_loader, "_LOADED", {})
    monkeypatch.setattr(CudaCKernels, "load", classmethod(lambda cls, d: loads.append(d) or object()))
    first = cuda_c_loader.load_kernels(tmp_path)
    assert cuda_c_loader.load_kernels(str(tmp_path)) is first
    assert len(loads) == 1


def test_importing_cuda_c_does_not_import_numba():
    code = "import sys, torchlight.backends.cuda_c.loader, torchlight.backends.cuda_c.provider\n"
    code += "print('numba' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    assert out.stdout.strip() == "False"


# --- the build script's argument handling (no nvcc needed) -----------------------------------------


def _build_script(*args, env_extra=None):
    env = {**os.environ, **(env_extra or {})}
    return subprocess.run(
        ["bash", str(REPO / "ci" / "build-kernels.sh"), *args], capture_output=True, text=True, env=env
    )


def test_build_script_without_nvcc_says_what_to_do(tmp_path):
    out = _build_script("--out", str(tmp_path), env_extra={"NVCC": str(tmp_path / "no-nvcc")})
    assert out.returncode == 1
    assert "is not an executable" in out.stderr
    assert "python -m torchlight build-kernels --simulator" in out.stderr


@pytest.mark.parametrize("archs", ["sm80", ";;"])
def test_build_script_refuses_a_bad_arch_list(tmp_path, archs):
    out = _build_script("--out", str(tmp_path), env_extra={"TORCHLIGHT_CUDA_ARCHS": archs, "NVCC": "true"})
    assert out.returncode == 2 and "TORCHLIGHT_CUDA_ARCHS" in out.stderr


def test_build_script_refuses_unknown_arguments():
    out = _build_script("--bogus")
    assert out.returncode == 2 and "unrecognized arguments: --bogus" in out.stderr
