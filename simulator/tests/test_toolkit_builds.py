"""Programs built by their own Makefile with the toolkit folder's nvcc that use what real projects
use and the simulator once refused: CUDA 12.8's built-in ``__nv_atomic_*`` functions, managed
memory's placement hints (``cudaMemPrefetchAsync``, ``cudaMemAdvise``) and libcu++'s PTX wrappers
that need a newer architecture than the oldest (``cuda::ptx::get_sreg_lanemask_*``, as CUB's
segmented warp reduction calls them), ``cublasDotEx`` and ``cublasDgeam`` linked by ``-lcublas``, and
the driver library ``-lcuda`` linked with no ``-L`` by nvcc (nvcc's profile adds the toolkit's
library folders), by gcc from ``$(CUDA_DIR)/lib64`` (as Rodinia's myocyte and lavaMD link) or from
``$(CUDA_DIR)/lib64/stubs``."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from simulator import toolkit

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")

MAKEFILE = """
app: main.cu
\tnvcc -std=c++17 -O2 -arch=sm_80 main.cu -o app
"""

# Each built-in in the forms its documentation gives, on 4 blocks of 64 threads; the expected
# line follows from the counts (256 threads).
NV_ATOMICS_CU = r"""
#include <cstdio>
__global__ void k(unsigned* u, unsigned long long* ull, float* f, double* d, int* lo, int* hi, int* flag,
                  int* got) {
    const int i = threadIdx.x + blockIdx.x * blockDim.x;
    __nv_atomic_fetch_add(u, 1u, __NV_ATOMIC_RELAXED);
    __nv_atomic_add(ull, 2ull, __NV_ATOMIC_RELAXED, __NV_THREAD_SCOPE_DEVICE);
    __nv_atomic_fetch_add(f, 0.5f, __NV_ATOMIC_RELAXED);
    double old = __nv_atomic_load_n(d, __NV_ATOMIC_ACQUIRE);
    while (!__nv_atomic_compare_exchange_n(d, &old, old + 1.0, false, __NV_ATOMIC_ACQ_REL,
                                           __NV_ATOMIC_RELAXED)) {
    }
    __nv_atomic_fetch_min(lo, i - 7, __NV_ATOMIC_RELAXED, __NV_THREAD_SCOPE_BLOCK);
    __nv_atomic_max(hi, i * 3, __NV_ATOMIC_RELAXED);
    __nv_atomic_thread_fence(__NV_ATOMIC_SEQ_CST, __NV_THREAD_SCOPE_SYSTEM);
    if (i == 5) {
        int five = 5, before;
        __nv_atomic_exchange(flag, &five, &before, __NV_ATOMIC_ACQ_REL);
        __nv_atomic_store_n(got, before + 100, __NV_ATOMIC_RELEASE);
    }
}
int main() {
    unsigned* u; unsigned long long* ull; float* f; double* d; int *lo, *hi, *flag, *got;
    cudaMallocManaged(&u, 4); cudaMallocManaged(&ull, 8); cudaMallocManaged(&f, 4); cudaMallocManaged(&d, 8);
    cudaMallocManaged(&lo, 4); cudaMallocManaged(&hi, 4);
    cudaMallocManaged(&flag, 4); cudaMallocManaged(&got, 4);
    *u = 0; *ull = 0; *f = 0; *d = 0; *lo = 1000; *hi = -1; *flag = 9; *got = 0;
    k<<<4, 64>>>(u, ull, f, d, lo, hi, flag, got);
    if (cudaDeviceSynchronize() != cudaSuccess) return 1;
    printf("%u %llu %g %g %d %d %d %d\n", *u, *ull, *f, *d, *lo, *hi, *flag, *got);
    return 0;
}
"""

# Prefetches and advice succeed on managed memory for a device, the host and a stream, and are
# refused as CUDA refuses them: a device that does not exist, a location type, flags, advice.
PREFETCH_CU = r"""
#include <cstdio>
__global__ void add(int n, float* a, const float* b) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] += b[i];
}
int main() {
    const int n = 1000;
    float *a, *b;
    cudaMallocManaged(&a, n * sizeof(float));
    cudaMallocManaged(&b, n * sizeof(float));
    for (int i = 0; i < n; ++i) { a[i] = i; b[i] = 2 * i; }
    cudaStream_t s;
    cudaStreamCreate(&s);
    cudaMemLocation dev{cudaMemLocationTypeDevice, 0}, host{cudaMemLocationTypeHost, 0};
    cudaMemLocation nodev{cudaMemLocationTypeDevice, 99}, bad{cudaMemLocationTypeInvalid, 0};
    int ok[5] = {cudaMemAdvise(b, n * sizeof(float), cudaMemAdviseSetReadMostly, dev),
                 cudaMemAdvise(a, n * sizeof(float), cudaMemAdviseSetPreferredLocation, dev),
                 cudaMemPrefetchAsync(a, n * sizeof(float), dev, 0),
                 cudaMemPrefetchAsync(b, n * sizeof(float), dev, 0, s),
                 cudaMemPrefetchAsync(a, n * sizeof(float), host, 0, s)};
    add<<<(n + 127) / 128, 128>>>(n, a, b);
    cudaDeviceSynchronize();
    int refused[4] = {cudaMemPrefetchAsync(a, 4, nodev, 0), cudaMemPrefetchAsync(a, 4, bad, 0),
                      cudaMemPrefetchAsync(a, 4, dev, 1),
                      cudaMemAdvise(a, 4, (cudaMemoryAdvise)42, dev)};
    cudaGetLastError();
    printf("ok %d %d %d %d %d refused %d %d %d %d sum %g\n", ok[0], ok[1], ok[2], ok[3], ok[4], refused[0],
           refused[1], refused[2], refused[3], a[10] + a[999]);
    return 0;
}
"""

# Lane masks through libcu++'s wrappers (SM_35 and later) beside the lane id (every architecture).
LANEMASK_CU = r"""
#include <cstdio>
#include <cuda/ptx>
__global__ void k(unsigned* o) {
    const unsigned lane = ::cuda::ptx::get_sreg_laneid();
    o[threadIdx.x] = ::cuda::ptx::get_sreg_lanemask_ge() ^ ::cuda::ptx::get_sreg_lanemask_lt() ^ (lane << 8);
    o[32 + threadIdx.x] = ::cuda::ptx::get_sreg_lanemask_le() & ~::cuda::ptx::get_sreg_lanemask_lt();
    o[64 + threadIdx.x] = ::cuda::ptx::get_sreg_lanemask_gt();
}
int main() {
    unsigned* o;
    cudaMallocManaged(&o, 96 * sizeof(unsigned));
    k<<<1, 32>>>(o);
    cudaDeviceSynchronize();
    printf("%x %x %x %x %x %x %x\n", o[0], o[3], o[31], o[32 + 3], o[32 + 31], o[64 + 3], o[64 + 31]);
    return 0;
}
"""


def _make_and_run(folder: Path, source: str, makefile: bool = True) -> str:
    """Build ``source`` by a Makefile (``MAKEFILE`` unless ``makefile`` is False: the caller's)
    with the toolkit's nvcc first on PATH; its output."""
    (folder / "main.cu").write_text(source)
    if makefile:
        (folder / "Makefile").write_text(MAKEFILE)
    home = toolkit.root()
    env = {**os.environ, "CUDA_HOME": str(home), "PATH": f"{home / 'bin'}{os.pathsep}{os.environ['PATH']}"}
    made = subprocess.run(["make", "-s"], cwd=folder, env=env, capture_output=True, text=True, timeout=900)
    assert made.returncode == 0, f"make failed:\n{made.stdout}\n{made.stderr}"
    ran = subprocess.run([str(folder / "app")], cwd=folder, capture_output=True, text=True, timeout=300)
    assert ran.returncode == 0, f"app failed ({ran.returncode}):\n{ran.stdout}\n{ran.stderr}"
    return ran.stdout.strip()


def test_nv_atomic_builtins(tmp_path):
    """Every __nv_atomic_* form counts as its GPU does; the order and scope macros are defined."""
    threads = 4 * 64
    expected = f"{threads} {2 * threads} {threads / 2:g} {threads:g} -7 {3 * (threads - 1)} 5 109"
    assert _make_and_run(tmp_path, NV_ATOMICS_CU) == expected


def test_managed_memory_prefetch_and_advice(tmp_path):
    """cudaMemPrefetchAsync and cudaMemAdvise succeed where CUDA's do and refuse what it refuses."""
    invalid_value, invalid_device = 1, 101
    refused = f"{invalid_device} {invalid_value} {invalid_value} {invalid_value}"
    assert _make_and_run(tmp_path, PREFETCH_CU) == f"ok 0 0 0 0 0 refused {refused} sum {10 * 3 + 999 * 3}"


def test_ptx_lane_masks_of_newer_architectures(tmp_path):
    """libcu++'s SM_35 lane-mask wrappers link and give each lane's masks (ge ^ lt is all ones,
    le & ~lt the lane's own bit, gt the bits above it)."""
    assert _make_and_run(tmp_path, LANEMASK_CU) == "ffffffff fffffcff ffffe0ff 8 80000000 fffffff0 0"


# cublasDotEx in each type combination cuBLAS supports and cublasDgeam, linked by -lcublas; 0.5 * 0.25 over 64
# elements is 8 exactly in every type, and the reversed walk of a negative increment gives the
# same sum of 1..4 * 1..4 products backwards (1*4 + 2*3 + 3*2 + 4*1 = 20).
DOT_EX_CU = r"""
#include <cstdio>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cublas_v2.h>
template <class T>
double dot(cublasHandle_t h, cudaDataType t, cudaDataType exec, double a, double b, int n, int incy) {
    T *x, *y, *r;
    cudaMallocManaged(&x, n * sizeof(T));
    cudaMallocManaged(&y, n * sizeof(T));
    cudaMallocManaged(&r, sizeof(T));
    for (int i = 0; i < n; ++i) {
        x[i] = (T)(a < 0 ? i + 1 : a);
        y[i] = (T)(b < 0 ? i + 1 : b);
    }
    if (cublasDotEx(h, n, x, t, 1, y, t, incy, r, t, exec) != CUBLAS_STATUS_SUCCESS) return -1;
    cudaDeviceSynchronize();
    return (double)*r;
}
int main() {
    cublasHandle_t h;
    cublasCreate(&h);
    cublasSetPointerMode(h, CUBLAS_POINTER_MODE_DEVICE);
    printf("%g %g %g %g %g", dot<double>(h, CUDA_R_64F, CUDA_R_64F, 0.5, 0.25, 64, 1),
           dot<float>(h, CUDA_R_32F, CUDA_R_32F, 0.5, 0.25, 64, 1),
           dot<__half>(h, CUDA_R_16F, CUDA_R_32F, 0.5, 0.25, 64, 1),
           dot<__nv_bfloat16>(h, CUDA_R_16BF, CUDA_R_32F, 0.5, 0.25, 64, 1),
           dot<float>(h, CUDA_R_32F, CUDA_R_32F, -1, -1, 4, -1));
    float r;
    printf(" %d", (int)cublasDotEx(h, 4, &r, CUDA_R_32F, 1, &r, CUDA_R_32F, 1, &r, CUDA_R_32F, CUDA_R_64F));
    // Dgeam: C (3x2) = 2 A^T + B with A 2x3 and B 3x2, column-major.
    double *A, *B, *C, *alpha, *beta;
    cudaMallocManaged(&A, 6 * sizeof(double));
    cudaMallocManaged(&B, 6 * sizeof(double));
    cudaMallocManaged(&C, 6 * sizeof(double));
    cudaMallocManaged(&alpha, sizeof(double));
    cudaMallocManaged(&beta, sizeof(double));
    for (int i = 0; i < 6; ++i) { A[i] = i + 1; B[i] = 100 * (i + 1); }
    *alpha = 2;
    *beta = 1;
    int st = cublasDgeam(h, CUBLAS_OP_T, CUBLAS_OP_N, 3, 2, alpha, A, 2, beta, B, 3, C, 3);
    cudaDeviceSynchronize();
    printf(" geam %d", st);
    for (int i = 0; i < 6; ++i) printf(" %g", C[i]);
    printf("\n");
    return 0;
}
"""


def test_cublas_dot_ex_and_dgeam(tmp_path):
    """cublasDotEx computes in each supported combination and refuses an unsupported one; Dgeam
    adds a scaled transpose to a matrix."""
    (tmp_path / "Makefile").write_text(MAKEFILE.replace("-o app", "-o app -lcublas"))
    not_supported = 15  # CUBLAS_STATUS_NOT_SUPPORTED
    # A = [[1, 3, 5], [2, 4, 6]] column-major, so A^T = [[1, 2], [3, 4], [5, 6]]; C = 2 A^T + B.
    a_t = [1, 3, 5, 2, 4, 6]
    c = " ".join(f"{2 * a + 100 * (i + 1)}" for i, a in enumerate(a_t))
    assert _make_and_run(tmp_path, DOT_EX_CU, makefile=False) == f"8 8 8 8 20 {not_supported} geam 0 {c}"


# A C program calls a .cu file's wrapper, which asks the driver API (libcuda) for the device count
# and launches a kernel through the runtime.
DRIVER_CU = r"""
#include <cuda.h>
extern "C" int fill_and_count(int* out) {
    int devices = 0;
    if (cuInit(0) != CUDA_SUCCESS || cuDeviceGetCount(&devices) != CUDA_SUCCESS) return -1;
    int* d;
    cudaMalloc(&d, sizeof(int));
    cudaMemset(d, 0, sizeof(int));
    cudaMemcpy(out, d, sizeof(int), cudaMemcpyDeviceToHost);
    *out += 7;
    cudaFree(d);
    return devices;
}
"""

DRIVER_C = r"""
#include <stdio.h>
int fill_and_count(int* out);
int main(void) {
    int v = 0;
    int devices = fill_and_count(&v);
    printf("%d %d\n", devices, v);
    return devices < 1;
}
"""

# Rodinia's two ways: myocyte links with nvcc and -lcuda and a -L folder that does not exist,
# lavaMD links its C objects with gcc, -L the toolkit's lib64, -lcuda and -lcudart; and the driver
# from lib64/stubs alone, beside the static runtime named by its path, as CMake links them.
DRIVER_MAKEFILE = """
all: app_nvcc app_gcc app_stubs
wrap.o: wrap.cu
\tnvcc -arch=sm_80 -c wrap.cu -o wrap.o
main.o: main.c
\tgcc -c main.c -o main.o
app_nvcc: main.o wrap.o
\tnvcc main.o wrap.o -L/nonexistent/cuda/lib -lm -lcuda -lcudart -o app_nvcc
app_gcc: main.o wrap.o
\tgcc main.o wrap.o -lm -L$(CUDA_DIR)/lib64 -lcuda -lcudart -o app_gcc
app_stubs: main.o wrap.o
\tg++ main.o wrap.o $(CUDA_DIR)/lib64/libcudart_static.a -L$(CUDA_DIR)/lib64/stubs -lcuda -o app_stubs
"""


def _make_with_toolkit(folder) -> None:
    """``make -s CUDA_DIR=<the toolkit>`` in ``folder``, with the toolkit's ``bin`` first on PATH."""
    home = toolkit.root()
    env = {**os.environ, "PATH": f"{home / 'bin'}{os.pathsep}{os.environ['PATH']}"}
    made = subprocess.run(
        ["make", "-s", f"CUDA_DIR={home}"], cwd=folder, env=env, capture_output=True, text=True, timeout=900
    )
    assert made.returncode == 0, f"make failed:\n{made.stdout}\n{made.stderr}"


def test_driver_library_links_by_nvcc_and_gcc(tmp_path):
    """-lcuda resolves with nvcc's own library folders, and for gcc from $(CUDA_DIR)/lib64 and from
    $(CUDA_DIR)/lib64/stubs, where a CUDA installation keeps the driver's stub."""
    (tmp_path / "wrap.cu").write_text(DRIVER_CU)
    (tmp_path / "main.c").write_text(DRIVER_C)
    (tmp_path / "Makefile").write_text(DRIVER_MAKEFILE)
    _make_with_toolkit(tmp_path)
    for app in ("app_nvcc", "app_gcc", "app_stubs"):
        ran = subprocess.run([str(tmp_path / app)], capture_output=True, text=True, timeout=300)
        assert (ran.returncode, ran.stdout.strip()) == (0, "1 7"), f"{app}: {ran.stdout}{ran.stderr}"


# A program with a kernel of its own that also loads a driver-API module, linked by g++ with the
# toolkit's libcuda.so as CMake links CUDA::cuda_driver (cuda-samples' streamOrderedAllocationIPC):
# the program's objects refer to the runtime's internals, which the driver library's exports must
# still find exported, and the module's kernel binds to them when it is loaded.
OWN_KERNEL_CU = r"""
#include <cstdio>
#include <cuda.h>
__global__ void twice(int* p) { p[threadIdx.x] *= 2; }
int main(int argc, char** argv) {
    CUdevice dev;
    CUcontext ctx;
    if (argc != 2 || cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&dev, 0) != CUDA_SUCCESS) return 2;
    cuDevicePrimaryCtxRetain(&ctx, dev);
    cuCtxSetCurrent(ctx);
    int h[4] = {1, 2, 3, 4};
    int* d;
    cudaMalloc(&d, sizeof(h));
    cudaMemcpy(d, h, sizeof(h), cudaMemcpyHostToDevice);
    twice<<<1, 4>>>(d);
    CUmodule module;
    CUfunction add_index;
    if (cuModuleLoad(&module, argv[1]) != CUDA_SUCCESS) return 3;
    if (cuModuleGetFunction(&add_index, module, "add_index") != CUDA_SUCCESS) return 4;
    void* args[] = {&d};
    if (cuLaunchKernel(add_index, 1, 1, 1, 4, 1, 1, 0, nullptr, args, nullptr) != CUDA_SUCCESS) return 5;
    cuCtxSynchronize();
    cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost);
    std::printf("%d %d %d %d\n", h[0], h[1], h[2], h[3]);
    return 0;
}
"""

MODULE_CU = r"""
extern "C" __global__ void add_index(int* p) { p[threadIdx.x] += threadIdx.x; }
"""

OWN_KERNEL_MAKEFILE = """
all: app module.fatbin
main.o: main.cu
\tnvcc -arch=sm_80 -c main.cu -o main.o
app: main.o
\tg++ main.o $(CUDA_DIR)/lib64/libcudart_static.a -ldl -lrt -pthread $(CUDA_DIR)/lib64/libcuda.so -o app
module.fatbin: module.cu
\tnvcc -arch=sm_80 -fatbin module.cu -o module.fatbin
"""


def test_program_with_own_kernels_links_the_driver_library_and_loads_a_module(tmp_path):
    """The program's own kernel doubles 1 2 3 4; the module's adds each thread's index."""
    (tmp_path / "main.cu").write_text(OWN_KERNEL_CU)
    (tmp_path / "module.cu").write_text(MODULE_CU)
    (tmp_path / "Makefile").write_text(OWN_KERNEL_MAKEFILE)
    _make_with_toolkit(tmp_path)
    ran = subprocess.run(
        [str(tmp_path / "app"), str(tmp_path / "module.fatbin")], capture_output=True, text=True, timeout=300
    )
    want = " ".join(str(2 * v + i) for i, v in enumerate([1, 2, 3, 4]))
    assert (ran.returncode, ran.stdout.strip()) == (0, want), ran.stdout + ran.stderr
