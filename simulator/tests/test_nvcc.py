"""``python -m simulator nvcc`` and the toolkit folder: projects built by their own Makefile and
CMake files (separate compilation, a static library, device code across units with -rdc), nvcc's
dependency output, and the command lines it refuses."""

from __future__ import annotations

import os
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest

from simulator import build, nvcc, toolkit
from simulator.nvcc_options import NvccUsageError, parse

# A library unit: a device function, a __device__ variable and a __constant__ array that a kernel
# in another unit uses (relocatable device code), and a host function that launches it.
SCALE_CU = """
__device__ int offset = 5;
__constant__ int factors[4];
__device__ int scaled(int x, int i) { return x * factors[i % 4] + offset; }
"""
APPLY_CU = """
#include <cstdio>
extern __device__ int offset;
extern __constant__ int factors[4];
__device__ int scaled(int x, int i);
__global__ void apply(int* v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) v[i] = scaled(v[i], i);
}
int run_apply(int* host, int n) {
    int f[4] = {1, 2, 3, 4};
    cudaMemcpyToSymbol(factors, f, sizeof f);
    int add = 7;
    cudaMemcpyToSymbol(offset, &add, sizeof add);
    int* d;
    cudaMalloc(&d, n * sizeof(int));
    cudaMemcpy(d, host, n * sizeof(int), cudaMemcpyHostToDevice);
    apply<<<(n + 31) / 32, 32>>>(d, n);
    cudaMemcpy(host, d, n * sizeof(int), cudaMemcpyDeviceToHost);
    cudaFree(d);
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
"""
MAIN_CPP = """
#include <cstdio>
int run_apply(int* host, int n);
int main() {
    int v[40];
    for (int i = 0; i < 40; ++i) v[i] = i;
    if (run_apply(v, 40) != 0) return 2;
    long sum = 0;
    for (int i = 0; i < 40; ++i) sum += v[i];
    std::printf("sum=%ld\\n", sum);
    return 0;
}
"""
# sum over i < 40 of i * (i % 4 + 1) + 7
EXPECTED_SUM = sum(i * (i % 4 + 1) + 7 for i in range(40))

MAKEFILE = """
NVCC ?= nvcc
NVFLAGS = -O3 -arch=sm_80 -rdc=true -Xcompiler -Wall,-Wno-unused
app: main.o libscale.a
\t$(NVCC) $(NVFLAGS) main.o -L. -lscale -o app
libscale.a: scale.o apply.o
\tar rcs $@ $^
%.o: %.cu
\t$(NVCC) $(NVFLAGS) -c $< -o $@
main.o: main.cpp
\tg++ -O2 -c $< -o $@
"""

CMAKELISTS = """
cmake_minimum_required(VERSION 3.18)
project(demo LANGUAGES CXX CUDA)
find_package(CUDAToolkit REQUIRED)
add_library(scale STATIC scale.cu apply.cu)
set_target_properties(scale PROPERTIES CUDA_SEPARABLE_COMPILATION ON)
add_executable(app main.cpp)
target_link_libraries(app PRIVATE scale CUDA::cudart)
"""


def _project(folder: Path) -> None:
    (folder / "scale.cu").write_text(SCALE_CU)
    (folder / "apply.cu").write_text(APPLY_CU)
    (folder / "main.cpp").write_text(MAIN_CPP)


def _toolkit_env() -> dict[str, str]:
    home = toolkit.root()
    return {**os.environ, "CUDA_HOME": str(home), "PATH": f"{home / 'bin'}{os.pathsep}{os.environ['PATH']}"}


def _run(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    proc = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"{' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_makefile_builds_separate_units_with_a_static_library_and_rdc(tmp_path):
    """Make with the toolkit's nvcc: device function, __device__ and __constant__ across units."""
    _project(tmp_path)
    (tmp_path / "Makefile").write_text(MAKEFILE)
    env = _toolkit_env()
    _run(["make", "-s"], tmp_path, env)
    out = _run([str(tmp_path / "app")], tmp_path, env)
    assert out.stdout.strip() == f"sum={EXPECTED_SUM}"


@pytest.mark.skipif(shutil.which("cmake") is None, reason="cmake is not installed")
def test_cmake_project_with_enable_language_cuda_and_cudart(tmp_path):
    """CMake identifies the toolkit's nvcc, finds CUDAToolkit and links CUDA::cudart."""
    _project(tmp_path)
    (tmp_path / "CMakeLists.txt").write_text(CMAKELISTS)
    env = _toolkit_env()
    _run(["cmake", "-S", ".", "-B", "build"], tmp_path, env)  # no CMAKE_CUDA_ARCHITECTURES: nvcc names sm_80
    _run(["cmake", "--build", "build"], tmp_path, env)
    out = _run([str(tmp_path / "build" / "app")], tmp_path, env)
    assert out.stdout.strip() == f"sum={EXPECTED_SUM}"


def _real_nvcc() -> str | None:
    """NVIDIA's nvcc when one is on PATH (not the simulator's), to compare formats against."""
    found = shutil.which("nvcc")
    if found is None:
        return None
    version = subprocess.run([found, "--version"], capture_output=True, text=True)
    return found if version.returncode == 0 and "simulator" not in version.stdout else None


# The make rules of nvcc 13 for h.cpp including "local.h" (from "sub/../h.cpp" with -MP, and with
# two -MT, of which nvcc takes the last and warns): a four-space indent, " : " after the target,
# and -MP's empty rules with no space before the colon.
DEPENDENCY_CASES = {
    ("-MM", "h.cpp"): "h.o : h.cpp \\\n    local.h\n",
    ("-MM", "-MP", "sub/../h.cpp"): "h.o : sub/../h.cpp \\\n    sub/../local.h\n\nsub/../local.h:\n",
    ("-MM", "-MT", "a.o", "-MT", "b/c.o", "h.cpp"): "b/c.o : h.cpp \\\n    local.h\n",
    ("-MM", "-odir", "sub", "h.cpp"): "sub/h.o : h.cpp \\\n    local.h\n",
}


def _dependency_project(folder: Path) -> None:
    (folder / "sub").mkdir()
    (folder / "local.h").write_text("#define SIZE 4\n")
    (folder / "h.cpp").write_text('#include "local.h"\nint f() { return SIZE; }\n')
    (folder / "k.cu").write_text('#include "local.h"\n__global__ void k(int* p) { p[0] = SIZE; }\n')


def test_dependency_output_in_nvccs_format(tmp_path, capsys, monkeypatch):
    """-M/-MM/-MP/-MT/-odir: nvcc's make rules, byte for byte; a .cu lists the runtime's headers."""
    _dependency_project(tmp_path)
    monkeypatch.chdir(tmp_path)
    for args, expected in DEPENDENCY_CASES.items():
        assert nvcc.main(list(args)) == 0
        assert capsys.readouterr().out == expected, args
    assert nvcc.main(["-M", "k.cu", "-MT", "out/k.o", "-o", "k.d"]) == 0
    text = (tmp_path / "k.d").read_text()
    assert text.startswith("out/k.o : k.cu \\\n    /usr/include/stdc-predef.h \\\n")
    assert "cuda_runtime.h" in text and text.endswith("    local.h\n")


def test_cuda_phase_writes_the_host_pass_source(tmp_path, monkeypatch):
    """-cuda (Rodinia's nn runs it) writes FILE.cu.cpp.ii, the preprocessed source, beside no object."""
    _dependency_project(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert nvcc.main(["-cuda", "k.cu"]) == 0
    text = (tmp_path / "k.cu.cpp.ii").read_text()
    assert "p[0] = 4;" in text and not (tmp_path / "k.o").exists()


@pytest.mark.skipif(_real_nvcc() is None, reason="NVIDIA's nvcc is not on PATH to compare against")
def test_dependency_output_matches_nvcc(tmp_path, capsys, monkeypatch):
    """Where NVIDIA's nvcc is installed, its -M output for a C++ source is the same as ours."""
    _dependency_project(tmp_path)
    monkeypatch.chdir(tmp_path)
    real = _real_nvcc()
    for args in [*DEPENDENCY_CASES, ("-M", "-MP", "h.cpp")]:
        theirs = subprocess.run([real, *args], capture_output=True, text=True, check=True).stdout
        assert nvcc.main(list(args)) == 0
        assert capsys.readouterr().out == theirs, args


def test_checker_toolkit_links_the_sanitizer_for_a_plain_link(tmp_path, monkeypatch):
    """A memcheck toolkit's lib64 links AddressSanitizer's runtime for a g++ link without
    -fsanitize (as CMake links CUDA programs); the runtime stands in as a one-function object."""
    monkeypatch.setenv("SIMULATOR_CACHE", str(tmp_path / "cache"))
    (tmp_path / "runtime.cpp").write_text('extern "C" int sim_answer() { return 4; }\n')
    (tmp_path / "main.cpp").write_text(
        'extern "C" int sim_answer();\n'
        "int main() { int* p = new int[4]; int v = p[sim_answer()]; delete[] p; return v; }\n"
    )
    cxx = build.compiler()
    _run([cxx, "-c", "runtime.cpp", "-o", "runtime.o"], tmp_path, dict(os.environ))
    _run([cxx, "-fsanitize=address", "-c", "main.cpp", "-o", "main.o"], tmp_path, dict(os.environ))
    monkeypatch.setattr(build, "runtime_object", lambda mode: tmp_path / "runtime.o")
    monkeypatch.setattr(toolkit, "_libraries", lambda mode: [])
    monkeypatch.setattr(toolkit, "_all_stubs", lambda objects: [])
    top = toolkit.mode_root("memcheck")
    assert top == toolkit.root() / "checkers" / "memcheck" and (top / "bin" / "nvcc").is_file()
    _run([cxx, "main.o", f"-L{top / 'lib64'}", "-lcudart", "-o", "app"], tmp_path, dict(os.environ))
    ran = subprocess.run([str(tmp_path / "app")], capture_output=True, text=True, timeout=60)
    assert ran.returncode != 0 and "heap-buffer-overflow" in ran.stderr


@pytest.mark.parametrize(
    "option", ["-Wall", "--no-such-option", "-fopenmp", "-frobnicate=1", "--gpu-architecturex=sm_80"]
)
def test_unknown_options_are_refused_by_name(option, capsys):
    """nvcc's answer to an option it does not know: one line naming it, exit status 1."""
    assert nvcc.main([option, "k.cu"]) == 1
    err = capsys.readouterr().err
    assert err == f"nvcc fatal   : Unknown option '{option}'\n"


def test_command_line_forms():
    """Attached, '=' and spaced values, comma lists, response files and CMake's forwarding."""
    cmd = parse(
        ["-Iinc", "-I", "b", "--include-path=c", "-DX=1,Y", "-Xcompiler", "-fopenmp,-Wall", "-O3", "a.cu"]
    )
    assert cmd.get("include_dirs") == ["inc", "b", "c"]
    assert cmd.get("defines") == ["X=1", "Y"]
    assert cmd.get("compiler_options") == ["-fopenmp", "-Wall"]
    assert cmd.last("optimize") == "3" and cmd.inputs == ["a.cu"]
    assert parse(["-forward-unknown-to-host-compiler", "-Wall", "a.cu"]).get("compiler_options") == ["-Wall"]
    assert parse(["-c", "-dlink"]).phase == "device-link"
    # -I$(CUDA_DIR)/include names headers the build searches already, as system headers
    given = parse(["-I", str(toolkit.include_dir()), "-Iinc", "a.cu"])
    assert nvcc._host_flags(given, "cu") == ["-I", str(Path("inc").resolve())]
    with pytest.raises(NvccUsageError, match="Option '-o' needs a value"):
        parse(["a.cu", "-o"])


def test_response_file_and_bad_input(tmp_path, capsys, monkeypatch):
    """@FILE expands; a missing input or an output that names an input is one nvcc line."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "args.rsp").write_text('-DNAME="a b" -c\n')
    assert parse(["@args.rsp", "x.cu"]).get("defines") == ["NAME=a b"]
    (tmp_path / "x.cu").write_text("int main() { return 0; }\n")
    assert nvcc.main(["-c", "x.cu", "-o", "x.cu"]) == 1
    assert "nvcc fatal   : Output file 'x.cu' is also an input file" in capsys.readouterr().err
    assert (tmp_path / "x.cu").read_text() == "int main() { return 0; }\n"
    assert nvcc.main(["-c", "missing.cu"]) == 1
    assert capsys.readouterr().err == "nvcc fatal   : Could not open input file 'missing.cu'\n"


def test_version_names_the_simulator(capsys):
    """--version prints nvcc's lines (which CMake reads) and names the simulator."""
    assert nvcc.main(["--version"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("nvcc: NVIDIA (R) Cuda compiler driver\n")
    assert "simulator" in out and textwrap.dedent(out).count("Cuda compilation tools, release 13.") == 1
