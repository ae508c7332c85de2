"""The build: refused constructs, the exported launchers (against nvcc's build), and the
shipped kernels' results through ctypes against numpy."""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
import textwrap

import numpy as np
import pytest
from elftools.elf.elffile import ELFFile

from simulator.build import BUILD_MODES, BUILD_NAMED

from .conftest import SHIPPED, run_cli, shipped_sources

UNSUPPORTED = [
    ('asm volatile("brkpt;");', "inline PTX instruction 'brkpt'"),
    ("int v = __shfl(1, 0);", "without _sync"),
]


@pytest.mark.parametrize("stmt,what", UNSUPPORTED, ids=[w for _, w in UNSUPPORTED])
def test_unsupported_construct_fails_the_build_naming_it_and_the_line(tmp_path, stmt, what):
    src = tmp_path / "bad.cu"
    src.write_text(
        textwrap.dedent(
            """\
            #include <cuda_runtime.h>
            __global__ void child(float* p) { p[0] = 1.0f; }
            __global__ void parent(float* p) {
                {stmt}
            }
            """
        ).replace("{stmt}", stmt)
    )
    proc = run_cli("build", str(src), "--out", str(tmp_path / "out"))
    assert proc.returncode == 2
    assert f"{src}:4:" in proc.stderr
    assert what in proc.stderr
    assert not (tmp_path / "out" / "bad.so").exists()


def test_unknown_cuda_api_is_named(tmp_path):
    src = tmp_path / "api.cu"
    src.write_text('#include <cuda_runtime.h>\nextern "C" int f(void) { return (int)cudaFrobnicate(); }\n')
    proc = run_cli("build", str(src), "--out", str(tmp_path))
    assert proc.returncode == 2
    assert "'cudaFrobnicate' is declared nowhere: neither the program nor CUDA 13's headers" in proc.stderr


@pytest.mark.parametrize(
    "header,library",
    [
        ("cudnn.h", "cuDNN"),
        ("cufft.h", "cuFFT"),
        ("nccl.h", "NCCL"),
        ("my_missing_header.h", None),
    ],
)
def test_unsupported_header_is_named_and_libraries_are_out_of_scope(tmp_path, header, library):
    src = tmp_path / "hdr.cu"
    src.write_text(f"#include <cuda_runtime.h>\n\n#include <{header}>\n__global__ void k() {{}}\n")
    proc = run_cli("build", str(src), "--out", str(tmp_path))
    assert proc.returncode == 2
    if library:
        assert (
            f"{src}:3: unsupported header <{header}>: {library} is not provided by the simulator"
            in proc.stderr
        )
        assert "out of its scope" in proc.stderr
    else:
        assert f"{src}:3: unsupported header <{header}>: it is not provided by the simulator" in proc.stderr


def test_a_declared_api_without_an_implementation_builds_and_says_so_when_called(tmp_path):
    # NVIDIA's headers declare it, the simulator implements none of it: the program builds, and a
    # call returns the library's "not supported" status with one line naming it and the caller.
    src = tmp_path / "xt.cu"
    src.write_text(
        textwrap.dedent(
            """\
            #include <cstdio>
            #include <cuda_runtime.h>
            #include <cuda.h>
            int main() {
                size_t width = 0;
                cudaError_t e = cudaDeviceGetTexture1DLinearMaxWidth(&width, nullptr, 0);
                cudaError_t last = cudaGetLastError();
                std::printf("status=%s last=%s\\n", cudaGetErrorName(e), cudaGetErrorName(last));
                CUlinkState link;
                std::printf("driver=%d\\n", (int)cuLinkCreate(0, nullptr, nullptr, &link));
                return 0;
            }
            """
        )
    )
    proc = run_cli("run", str(src))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "status=cudaErrorNotSupported last=cudaErrorNotSupported" in proc.stdout
    assert f"driver={801}" in proc.stdout  # CUDA_ERROR_NOT_SUPPORTED
    line = (
        "simulator: cudaDeviceGetTexture1DLinearMaxWidth (declared in <cuda_runtime_api.h>) "
        f"is not implemented by the simulator; it returns cudaErrorNotSupported (main at {src}:6)"
    )
    assert proc.stderr.count(line) == 1, proc.stderr


def test_a_declared_device_function_without_an_implementation_stops_the_kernel_naming_its_line(tmp_path):
    src = tmp_path / "tmpl.cu"
    src.write_text(
        textwrap.dedent(
            """\
            #include <cstdio>
            template <class T>
            __global__ void k(T* p) {
                p[threadIdx.x] = T(__fns(0xffu, 0, 1));
            }
            int main() {
                unsigned* p;
                cudaMalloc(&p, 32 * sizeof(unsigned));
                k<<<1, 32>>>(p);
                std::printf("%s\\n", cudaGetErrorName(cudaDeviceSynchronize()));
                return 0;
            }
            """
        )
    )
    proc = run_cli("run", str(src))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "cudaErrorLaunchFailure" in proc.stdout
    assert "__fns (declared in <sm_30_intrinsics.h>) is not implemented by the simulator" in proc.stderr
    assert f"{src}:4)" in proc.stderr


def test_host_code_using_a_device_builtin_is_explained(tmp_path):
    src = tmp_path / "host_ws.cu"
    src.write_text('#include <cstdio>\nextern "C" int f(void) { return warpSize; }\n')
    proc = run_cli("build", str(src), "--out", str(tmp_path))
    assert proc.returncode == 2
    assert f"{src}:2: 'warpSize' is a device built-in variable: host code cannot use it" in proc.stderr


def test_a_launch_inside_a_macro_is_built_and_runs(tmp_path):
    # Launches are rewritten after the preprocessor, so a launch written in a macro is one too.
    src = tmp_path / "macro.cu"
    src.write_text(
        "#include <cuda_runtime.h>\n#define LAUNCH(k, n) k<<<1, n>>>(d)\n"
        "__global__ void kk(int* d) { d[threadIdx.x] = threadIdx.x + 1; }\n"
        'extern "C" int f(int* h) {\n    int* d;\n    cudaMalloc(&d, 8 * sizeof(int));\n'
        "    LAUNCH(kk, 8);\n    cudaMemcpy(h, d, 8 * sizeof(int), cudaMemcpyDeviceToHost);\n"
        "    cudaFree(d);\n    return 0;\n}\n"
    )
    proc = run_cli("build", str(src), "--out", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    host = np.zeros(8, np.int32)
    assert ctypes.CDLL(str(tmp_path / "macro.so")).f(ctypes.c_void_p(host.ctypes.data)) == 0
    np.testing.assert_array_equal(host, np.arange(1, 9))


def test_builtin_names_are_device_builtins_only_in_device_code(tmp_path):
    # Host code's own variables, parameters and members named like a built-in stay its own.
    src = tmp_path / "names.cu"
    src.write_text(
        textwrap.dedent(
            """\
            #include <cuda_runtime.h>
            struct Shape { dim3 gridDim; };
            __device__ int lane() { return threadIdx.x % warpSize; }
            __host__ __device__ int hd() { return blockDim.x; }
            __global__ void k(int* p, Shape s) {
                p[threadIdx.x] = gridDim.x * 100 + s.gridDim.x * 10 + lane() + hd() - blockDim.x;
            }
            extern "C" int host(int* out) {
                int warpSize = 7;
                dim3 blockDim(4);
                Shape s;
                s.gridDim = blockDim;
                int* d;
                cudaMalloc(&d, 4 * sizeof(int));
                k<<<1, blockDim>>>(d, s);
                cudaMemcpy(out, d, 4 * sizeof(int), cudaMemcpyDeviceToHost);
                cudaFree(d);
                cudaDeviceProp prop;
                cudaGetDeviceProperties(&prop, 0);
                return warpSize * 1000 + prop.warpSize;
            }
            """
        )
    )
    proc = run_cli("build", str(src), "--out", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    out = np.zeros(4, np.int32)
    assert ctypes.CDLL(str(tmp_path / "names.so")).host(ctypes.c_void_p(out.ctypes.data)) == 7032
    np.testing.assert_array_equal(out, 100 + 40 + np.arange(4))


def test_constructs_in_inactive_preprocessor_branches_do_not_count(tmp_path):
    src = tmp_path / "arch.cu"
    src.write_text(
        textwrap.dedent(
            """\
            #include <cuda_runtime.h>
            __global__ void k(float* p) {
            #if __CUDA_ARCH__ >= 900
                asm volatile("membar.gl;");
            #else
                __threadfence();
            #endif
                p[threadIdx.x] = 1.0f;
            }
            """
        )
    )
    proc = run_cli("build", str(src), "--out", str(tmp_path / "out"))
    assert proc.returncode == 0, proc.stderr


def test_launch_forms_templates_deduction_streams_and_multiline(tmp_path):
    src = tmp_path / "forms.cu"
    src.write_text(
        textwrap.dedent(
            """\
            #include <cuda_runtime.h>
            namespace ns {
            template <typename T, int K>
            __global__ void fill(T* out, T value) {
                __shared__ T tile[K][2];
                tile[threadIdx.x % K][threadIdx.x % 2] = value;
                __syncthreads();
                out[blockIdx.x * blockDim.x + threadIdx.x] = tile[0][0] + (T)K;
            }
            template <typename T>
            __global__ void add_one(T* out, int n) {
                int i = blockIdx.x * blockDim.x + threadIdx.x;
                if (i < n) out[i] += (T)1;
            }
            }  // namespace ns
            extern "C" int forms(double* host) {
                double* d = NULL;
                cudaStream_t stream;
                cudaStreamCreate(&stream);
                if (cudaMalloc(&d, 64 * sizeof(double)) != cudaSuccess) return 1;
                ns::fill<double, 4><<<dim3(2), dim3(32, 1, 1),
                                      0, stream>>>(d,
                                                   2.5);
                int line = __LINE__;
                ns::add_one<<<2, 32>>>(d, 64);
                cudaMemcpy(host, d, 64 * sizeof(double), cudaMemcpyDeviceToHost);
                cudaFree(d);
                cudaStreamDestroy(stream);
                return line;
            }
            """
        )
    )
    proc = run_cli("build", str(src), "--out", str(tmp_path / "out"))
    assert proc.returncode == 0, proc.stderr
    lib = ctypes.CDLL(str(tmp_path / "out" / "forms.so"))
    host = np.zeros(64)
    # __LINE__ after a three-line launch still matches the source: line numbers are preserved.
    assert lib.forms(ctypes.c_void_p(host.ctypes.data)) == 24
    np.testing.assert_array_equal(host, np.full(64, 7.5))


def _launchers(path) -> set[str]:
    """The global functions ``path`` defines in its dynamic symbol table, bar the reserved ``_`` names."""
    with open(path, "rb") as handle:
        return {
            symbol.name
            for table in ELFFile(handle).iter_sections("SHT_DYNSYM")
            for symbol in table.iter_symbols()
            if symbol["st_info"]["type"] == "STT_FUNC"
            and symbol["st_info"]["bind"] == "STB_GLOBAL"
            and symbol["st_shndx"] != "SHN_UNDEF"
            and not symbol.name.startswith("_")
        }


@pytest.mark.parametrize("name", ["softmax_kernel", "layernorm_kernel"])
def test_exports_match_the_nvcc_build(sim_lib_dir, tmp_path, name):
    shipped_sources()
    nvcc = shutil.which("nvcc") or (
        "/usr/local/cuda/bin/nvcc" if os.path.exists("/usr/local/cuda/bin/nvcc") else None
    )
    if nvcc is None:
        pytest.skip("nvcc is not installed: no reference build to compare the exported symbols with")
    ref = tmp_path / f"{name}.so"
    subprocess.run(
        [
            nvcc,
            "-shared",
            "-Xcompiler",
            "-fPIC",
            "-Xcompiler",
            "-fvisibility=hidden",
            "-cudart",
            "static",
            "-arch=sm_80",
            "-o",
            str(ref),
            str(SHIPPED / f"{name}.cu"),
        ],
        check=True,
        capture_output=True,
        timeout=240,
    )
    want = _launchers(ref)
    assert want, "the nvcc build exports no launcher"
    assert _launchers(sim_lib_dir / f"{name}.so") == want


def _softmax_ref(x, mask, causal):
    s = x.astype(np.float64)
    if mask is not None:
        s = s + mask[:, None, None, :]
    if causal:
        q, k = s.shape[-2:]
        s = np.where(np.arange(k)[None, :] > np.arange(q)[:, None], -np.inf, s)
    m = s.max(axis=-1, keepdims=True)
    e = np.where(np.isfinite(s), np.exp(s - np.where(np.isfinite(m), m, 0)), 0.0)
    tot = e.sum(axis=-1, keepdims=True)
    return np.divide(e, tot, out=np.zeros_like(e), where=tot > 0)


def _p(a):
    return ctypes.c_void_p(a.ctypes.data) if a is not None else None


@pytest.mark.parametrize(
    "shape,use_mask,causal",
    [
        ((1, 1, 1, 1), False, False),
        ((2, 3, 4, 5), True, False),
        ((1, 2, 7, 33), False, True),
        ((2, 1, 3, 300), True, True),
        ((1, 1, 2, 1000), False, False),
    ],
)
def test_shipped_softmax_matches_numpy(sim_lib_dir, shape, use_mask, causal):
    shipped_sources()
    lib = ctypes.CDLL(str(sim_lib_dir / "softmax_kernel.so"))
    rng = np.random.default_rng(sum(shape))
    b, h, q, k = shape
    x = rng.standard_normal(shape).astype(np.float32)
    mask = rng.standard_normal((b, k)).astype(np.float32) if use_mask else None
    y = np.zeros_like(x)
    i64 = ctypes.c_int64
    rc = lib.tl_attn_softmax_fw(_p(x), _p(mask), _p(y), i64(b), i64(h), i64(q), i64(k), ctypes.c_int(causal))
    assert rc == 0
    want = _softmax_ref(x, mask, causal)
    # float32 kernel against a float64 reference: exp and the sums round at ~1e-7 relative.
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-6)
    dy = rng.standard_normal(shape).astype(np.float32)
    dx = np.zeros_like(x)
    assert lib.tl_attn_softmax_bw(_p(y), _p(dy), _p(dx), i64(b * h * q), i64(k)) == 0
    yd = y.astype(np.float64)
    want_dx = yd * (dy - (dy * yd).sum(axis=-1, keepdims=True))
    np.testing.assert_allclose(dx, want_dx, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("rows,hidden", [(1, 1), (3, 7), (4, 256), (70, 40), (2, 600)])
def test_shipped_layernorm_matches_numpy(sim_lib_dir, rows, hidden):
    shipped_sources()
    lib = ctypes.CDLL(str(sim_lib_dir / "layernorm_kernel.so"))
    rng = np.random.default_rng(rows * 1000 + hidden)
    x = rng.standard_normal((rows, hidden)).astype(np.float32)
    g = rng.standard_normal(hidden).astype(np.float32)
    be = rng.standard_normal(hidden).astype(np.float32)
    y = np.zeros_like(x)
    mean = np.zeros(rows, np.float32)
    rstd = np.zeros(rows, np.float32)
    i64 = ctypes.c_int64
    eps = 1e-5
    rc = lib.tl_layernorm_fw(
        _p(x), _p(g), _p(be), _p(y), _p(mean), _p(rstd), i64(rows), i64(hidden), ctypes.c_float(eps)
    )
    assert rc == 0
    xd = x.astype(np.float64)
    mu = xd.mean(axis=1)
    var = ((xd - mu[:, None]) ** 2).mean(axis=1)
    rs = 1.0 / np.sqrt(var + eps)
    xhat = (xd - mu[:, None]) * rs[:, None]
    # float32 sums over up to 600 terms: a few ulp of the row's magnitude.
    np.testing.assert_allclose(mean, mu, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(rstd, rs, rtol=1e-4)
    np.testing.assert_allclose(y, xhat * g + be, rtol=1e-4, atol=1e-4)
    dy = rng.standard_normal((rows, hidden)).astype(np.float32)
    dx = np.zeros_like(x)
    dg = np.zeros(hidden, np.float32)
    db = np.zeros(hidden, np.float32)
    rc = lib.tl_layernorm_bw(
        _p(dy), _p(x), _p(g), _p(mean), _p(rstd), _p(dx), _p(dg), _p(db), i64(rows), i64(hidden)
    )
    assert rc == 0
    gg = dy * g
    want_dx = rs[:, None] * (
        gg - gg.mean(axis=1, keepdims=True) - xhat * (gg * xhat).mean(axis=1, keepdims=True)
    )
    np.testing.assert_allclose(dx, want_dx, rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(dg, (dy * xhat).sum(axis=0), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(db, dy.sum(axis=0), rtol=1e-4, atol=1e-4)


def test_runtime_groups_hold_every_source_once():
    from simulator import build

    sources = sorted(build.RUNTIME_DIR.glob("*.cpp"))
    for count in (1, 2, 3, 16, 1000):
        groups = build.runtime_units(count)
        assert len(groups) == min(count, len(sources))
        assert sorted(src for g in groups for src in g) == sources
        assert all(groups)


# Each set of flags the runtime's mode-free sources are compiled with, by the first build that has it.
MODE_FREE_FLAGS = sorted({BUILD_NAMED[m].runtime_options: m for m in reversed(BUILD_MODES)}.values())


@pytest.mark.parametrize(
    "mode,mode_free", [(m, False) for m in BUILD_MODES] + [(m, True) for m in MODE_FREE_FLAGS]
)
def test_the_runtime_compiles_as_one_unit(tmp_path, mode, mode_free):
    """The runtime is built a group of sources per compiler run, the groups depending on the CPUs
    (its per-mode sources in each mode, its mode-free ones once per set of flags): all of them in
    one unit must compile (no two sources define the same file-local name)."""
    from simulator import build, runtime_build
    from simulator.compiler_run import compiler_command

    sources = [
        src for src in sorted(build.RUNTIME_DIR.glob("*.cpp")) if runtime_build.per_mode(src) != mode_free
    ]
    (group,) = build.runtime_units(1, sources)
    unit = tmp_path / "runtime_unit.cpp"
    unit.write_text(runtime_build.unit_text(group, mode_free))
    cxx = build.compiler()
    flags = runtime_build.mode_free_flags(cxx, mode) if mode_free else build.runtime_flags(cxx, mode)
    proc = subprocess.run(
        [*compiler_command(cxx), *flags, "-fsyntax-only", str(unit)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
