"""The C++ front end: conformance programs (built and run by the simulator, compiled by nvcc where
present), barrier-free marking, refusals of host-only calls, and the missing-libclang message."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from .conftest import REPO, TESTS, run_cli

FRONTEND = TESTS / "frontend"
PROGRAMS = sorted(p.name for p in FRONTEND.glob("*.cu"))


def _nvcc() -> str | None:
    return shutil.which("nvcc") or (
        "/usr/local/cuda/bin/nvcc" if os.path.exists("/usr/local/cuda/bin/nvcc") else None
    )


def test_the_conformance_suite_is_there():
    assert {"launches.cu", "shared.cu", "arch.cu", "semantics.cu", "device_launches.cu"} <= set(PROGRAMS)


@pytest.mark.parametrize("name", PROGRAMS)
def test_conformance_program_runs_and_checks_itself(name):
    proc = run_cli("run", str(FRONTEND / name))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"{Path(name).stem}: OK" in proc.stdout


def test_arch_option_reaches_device_code_only(tmp_path):
    src = tmp_path / "arch700.cu"
    src.write_text(f'#define EXPECT_ARCH 700\n#include "{FRONTEND / "arch.cu"}"\n')
    proc = run_cli("run", str(src), "--arch", "700")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "arch: OK" in proc.stdout


@pytest.mark.kernels
@pytest.mark.parametrize("name", PROGRAMS)
def test_conformance_program_compiles_with_nvcc(tmp_path, name):
    nvcc = _nvcc()
    if nvcc is None:
        pytest.skip("nvcc is not installed: no reference compile of the conformance programs")
    proc = subprocess.run(
        [
            nvcc,
            "-c",
            "-std=c++17",
            "-arch=sm_80",
            "--extended-lambda",
            "-rdc=true",  # device-side launches (device_launches.cu) need relocatable device code
            str(FRONTEND / name),
            "-o",
            str(tmp_path / "x.o"),
        ],
        capture_output=True,
        text=True,
        timeout=280,
    )
    assert proc.returncode == 0, proc.stderr


_MARKING = """\
#include <cuda_runtime.h>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__device__ float twice(float v) { return 2.0f * v; }
__device__ float block_total(float v) {
    __shared__ float s[64];
    s[threadIdx.x] = v;
    __syncthreads();
    return s[0];
}
__global__ void elementwise(float* x, int* count, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = twice(x[i]) + 1.0f;
    atomicAdd(count, 1);
}
__global__ void barrier(float* x) { x[threadIdx.x] = block_total(x[threadIdx.x]); }
__global__ void warp(float* x) { x[threadIdx.x] = __shfl_down_sync(0xffffffffu, x[threadIdx.x], 1); }
__global__ void tile(float* x) {
    cg::thread_block_tile<32> t = cg::tiled_partition<32>(cg::this_thread_block());
    t.sync();
    x[threadIdx.x] = 0.0f;
}
__device__ float (*hook)(float) = nullptr;
__global__ void through_pointer(float* x) { x[threadIdx.x] = hook(x[threadIdx.x]); }
__device__ float elsewhere(float v);
__global__ void undefined_callee(float* x) { x[threadIdx.x] = elsewhere(x[threadIdx.x]); }
__global__ void spin(volatile int* flag) { while (*flag == 0) { } }
template <class T>
__global__ void generic(T* x) { x[threadIdx.x] = T(twice(1.0f)); }
void host(float* x, int* c, volatile int* f) {
    elementwise<<<1, 64>>>(x, c, 64);
    barrier<<<1, 64>>>(x);
    warp<<<1, 64>>>(x);
    tile<<<1, 64>>>(x);
    through_pointer<<<1, 64>>>(x);
    undefined_callee<<<1, 64>>>(x);
    spin<<<1, 64>>>(f);
    generic<<<1, 64>>>(x);
}
"""


def test_launches_are_marked_barrier_free_from_the_kernels_call_graph(tmp_path):
    from simulator.build import translate_source

    src = tmp_path / "marking.cu"
    src.write_text(_MARKING)
    out = translate_source(src)
    marks = {}
    for m in re.finditer(r'::__sim::(?:launcher|launch_deduced)\("(\w+)"[^\n]*', out):
        line = m.group(0)
        # A kernel run as block loops is marked by its kind (kBlockLoops...): not barrier-free.
        flag = re.search(r"\b(true|false|kBlockLoops\w*)\b", line[line.index(", 0, 0, ") :])
        marks[m.group(1)] = flag.group(1) == "true"
    assert marks == {
        "elementwise": True,  # an atomic does not wait for another thread
        "barrier": False,  # __syncthreads in a called __device__ function
        "warp": False,  # a shuffle the whole block reaches: block loops (block_loops_warps.py)
        "tile": False,  # cooperative-groups sync
        "through_pointer": False,  # unknown callee: conservative
        "undefined_callee": False,
        "spin": False,  # a loop on a volatile flag waits for another thread
        "generic": True,
    }


_HOST_FORMS = """
#include <atomic>
#include <cstdio>
struct Acc {
    int total = 0;
    Acc() { total = 1; }
    ~Acc() { total = 0; }
    int add(int x) { total += x; return total; }
    __host__ __device__ int get() const { return total; }
    operator int() const { return total; }
    friend int peek(const Acc& a) { return a.total; }
};
int twice(const Acc& a);
int twice(const Acc& a) { return 2 * a.total; }
template <class T> T square(T v) { return v * v; }
template <> int square<int>(int v) { return v * v; }
constexpr int cube(int v) { return v * v * v; }
static inline __attribute__((noinline)) int shifted(int b) { return 1 << b; }
extern "C" int c_entry(int x) { return x + 1; }
namespace ns { int inner(int x) { return x - 1; } }
int flagged(std::atomic<int>& f) { return f.load(); }
__device__ int dev(int x) { return x * 3; }
__global__ void k(int* p) { p[threadIdx.x] = dev(threadIdx.x) + cube(2); }
int main() { Acc a; return a.add(1) + twice(a) + shifted(1) + c_entry(ns::inner(1)) - 9; }
"""


def test_unchecked_host_code_marks_the_plain_host_functions_only(tmp_path):
    from simulator.build import translate_source
    from simulator.transform import UNCHECKED_HOST

    src = tmp_path / "host_forms.cu"
    src.write_text(_HOST_FORMS)
    assert UNCHECKED_HOST not in translate_source(src, "memcheck")
    out = translate_source(src, "memcheck", unchecked_host=True)
    marked = set()
    for line in out[out.index("struct Acc") :].splitlines():
        if UNCHECKED_HOST in line:
            after = re.sub(r"__attribute__\(\(\w+\)\)", "", line.split(UNCHECKED_HOST, 1)[1])
            marked.add(re.search(r"(~?\w+|operator int)\s*\(", after).group(1))
    # Templates, the specialization, constexpr, the friend, __device__/__host__ __device__ code,
    # the kernel and a function naming an atomic keep the sanitizers' instrumentation.
    assert marked == {"Acc", "~Acc", "add", "operator int", "twice", "shifted", "c_entry", "inner", "main"}


@pytest.mark.parametrize(
    "body,name",
    [
        ("exit(1);", "exit"),
        ("host_helper(p);", "host_helper"),
    ],
)
def test_device_code_calling_a_host_function_is_refused_at_build_time(tmp_path, body, name):
    src = tmp_path / "hostcall.cu"
    src.write_text(
        textwrap.dedent(
            """\
            #include <cuda_runtime.h>
            #include <cstdlib>
            void host_helper(float* p) { p[0] = 1.0f; }
            __device__ float ok(float v) { return sqrtf(v) + fabsf(v); }
            __global__ void k(float* p) {
                p[1] = ok(p[1]);
                printf("%f", p[0]);
                {body}
            }
            """
        ).replace("{body}", body)
    )
    proc = run_cli("build", str(src), "--out", str(tmp_path / "out"))
    assert proc.returncode == 2
    assert f"{src}:8: a __global__ function calls the host function '{name}'" in proc.stderr


def _without_libclang(tmp_path: Path) -> dict:
    """An environment in which ``import clang`` fails, as where libclang is not installed."""
    blocker = tmp_path / "block" / "clang"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text("raise ImportError('libclang is not installed')\n")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path / "block"), str(REPO)])
    return env


@pytest.mark.parametrize(
    "command",
    [
        ["-m", "simulator", "build", str(FRONTEND / "arch.cu"), "--out", "{out}"],
        ["-m", "torchlight", "build-kernels", "--simulator", "--out", "{out}"],
    ],
    ids=["simulator-build", "build-kernels"],
)
def test_without_libclang_the_build_names_the_pip_command(tmp_path, command):
    args = [a.replace("{out}", str(tmp_path / "out")) for a in command]
    proc = subprocess.run(
        [sys.executable, *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        env=_without_libclang(tmp_path),
    )
    assert proc.returncode != 0
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert 'pip install "torchlight[simulator]"' in lines[0]
