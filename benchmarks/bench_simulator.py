"""The CPU simulator against numba's CUDA simulator, per simulated CUDA thread.

Usage: ``python benchmarks/bench_simulator.py [--k-len 512] [--numba-rows 4] [--sim-rows 4096]
[--checkers | --checkers-only]``

Both run the same softmax-shaped kernel: one block of 256 threads per row, a strided pass
for the row max, a shared-memory tree reduction with a barrier per level, a strided pass for
the sum of exponentials, a second tree reduction, and a strided write of the result. Numba's
simulator runs a Python thread per CUDA thread, so it gets a few rows; this simulator gets
many. Each side reports seconds per simulated thread (the minimum over ``--repeat`` rounds,
after a warm-up that pays compilation); the ratio is numba's over this simulator's. Numba's
side runs in a child process because ``NUMBA_ENABLE_CUDASIM`` must be set before import.

Two more cases run on this simulator only (numba's simulator has neither): the same softmax
written with cooperative groups (``cg::tiled_partition<32>`` warps, ``cg::reduce`` with
``cg::greater``/``cg::plus``, one shared slot per warp, ``block.sync()``), and the first
softmax reading and writing ``__nv_bfloat16`` data (float arithmetic). Their cost per thread
is printed next to the shared-memory softmax's, with the same rows and row length.

Then, against numpy doing the same work on ``--elements`` (default 4M) float32 values, as a
ratio of seconds in one run: an elementwise kernel (one add per thread, 256-thread blocks) and
a 256-thread block tree-sum with a ``__syncthreads`` per level (numpy: the same per-block sums),
and the same sums by warp shuffles (``__shfl_down_sync`` within each warp, one barrier between).
Only the launch is timed (the data is on the device already); each side takes the minimum over
``--repeat`` rounds, of wall-clock seconds (``ratio``) and of the process's CPU seconds (``cpu
ratio``: all workers together, steadier on a shared machine). The elementwise kernel runs
three ways: launched through the runtime's ``::__sim::launch`` with ``LaunchSpec::barrier_free``
set (a plain loop, the kernel called through a pointer for each thread), the same launch with
``SIMULATOR_FIBERS=1`` (fibers forced), and as the build translates its ``<<<...>>>`` launch
(the front end finds the kernel barrier-free with a column index that narrows, and writes it a
loop of its own over the block's threads that the compiler vectorises,
``simulator/block_loops_plain.py``): the last is what a program gets, and the one the 10x target
is for.
The same add written as a grid-stride loop (264 blocks, each thread many steps a grid apart) runs
as built (in lockstep rounds, ``simulator/block_loops_interchange.py``), next to its anchor: the
same loop as C++ loops over blocks and threads, each thread's steps in turn, compiled as the
matmul anchors are (below); the line after the table gives the ratio of the two.
A fourth way replays a graph that stream capture recorded from that ``<<<...>>>`` launch, and a
fifth launches the kernel by address with ``cudaLaunchKernel`` (as a graph's kernel node does):
both run the same loop as the launch itself. The tree-sum and the warp-shuffle sum run twice: as
built (a kernel with barriers only at block-uniform places runs as loops over the block's threads,
one per region between barriers, each shuffle two lockstep rounds of such loops,
``simulator/block_loops_warps.py``) and with ``SIMULATOR_FIBERS=1`` (a fiber per CUDA thread, as
every kernel with a barrier ran before). The runtime reads ``SIMULATOR_FIBERS`` once, at a
library's first launch, so the fibers rows run in a second copy of the built library loaded under
another name (its own runtime, first launched with the variable set); with
``SIMULATOR_LAUNCH_LOG=1`` each row prints ``bench row: NAME`` on stderr before its launches' log
lines.

Last, matrix products of ``--matmul-n`` (default 512) square float32 matrices, in GFLOP/s: the
naive kernel (one thread per output, no barrier; its column walk over ``B`` runs in lockstep order,
each step for the block's threads in turn, ``simulator/block_loops_interchange.py``), the classic
16x16 shared-memory tiled kernel (two barriers a tile) as built and with ``SIMULATOR_FIBERS=1``,
the same two kernels written as
C++ loops over blocks and threads (the tiled one as one loop nest per region between barriers)
and compiled with ``g++ -O3 -march=native -fopenmp`` (the anchor; skipped when that compiler
cannot build it), and numpy's BLAS. Each ratio is the anchor's speed over the case's.

With ``--checkers`` (or ``--checkers-only``, which runs nothing else), the tree-sum on
``--elements`` values and the tiled matmul at ``--matmul-n`` also run as one program that times
itself, built in fast mode, memcheck and racecheck (of shared memory, its default) and run as a
child process each (memcheck's sanitizers cannot be loaded into this one): each checker's
seconds over fast mode's, wall-clock and CPU (targets: memcheck <= 3x, racecheck <= 10x).

Reading the numbers on a loaded machine: every case takes the best of ``--repeat`` rounds, and
the ratios are taken within this one run, so a slower machine moves both sides; the ``cpu
ratio`` columns (process CPU seconds, all workers together) move least when other work shares
the cores. Compare runs only by their ratios, and rerun with a larger ``--repeat`` when two
runs disagree by more than about a third.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from script_deps import require

np = require("numpy", "the kernels' inputs and results")
REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from simulator.host import cpu_count  # noqa: E402

BLOCK = 256


def host_entry(kernel: str) -> str:
    """The C entry the benchmark calls: copy the rows in, launch ``kernel`` one block a row, copy back."""
    return """
extern "C" int bench_softmax(const float* x, float* y, int rows, int k_len) {
    float *dx = NULL, *dy = NULL;
    size_t bytes = (size_t)rows * k_len * sizeof(float);
    if (cudaMalloc(&dx, bytes) != cudaSuccess || cudaMalloc(&dy, bytes) != cudaSuccess) return 1;
    cudaMemcpy(dx, x, bytes, cudaMemcpyHostToDevice);
    KERNEL<<<rows, BLOCK>>>(dx, dy, k_len);
    cudaError_t err = cudaGetLastError();
    if (err == cudaSuccess) err = cudaMemcpy(y, dy, bytes, cudaMemcpyDeviceToHost);
    cudaFree(dx);
    cudaFree(dy);
    return (int)err;
}
""".replace("KERNEL", kernel)


KERNEL_CU = r"""
#include <cuda_runtime.h>
#include <math.h>
#define BLOCK 256

__global__ void softmax_rows(const float* x, float* y, int k_len) {
    __shared__ float sm[BLOCK];
    const int row = blockIdx.x;
    const int t = threadIdx.x;
    const float* xr = x + (size_t)row * k_len;
    float m = -INFINITY;
    for (int k = t; k < k_len; k += BLOCK) m = fmaxf(m, xr[k]);
    sm[t] = m;
    __syncthreads();
    for (int s = BLOCK / 2; s > 0; s >>= 1) {
        if (t < s) sm[t] = fmaxf(sm[t], sm[t + s]);
        __syncthreads();
    }
    m = sm[0];
    __syncthreads();
    float acc = 0.0f;
    for (int k = t; k < k_len; k += BLOCK) acc += expf(xr[k] - m);
    sm[t] = acc;
    __syncthreads();
    for (int s = BLOCK / 2; s > 0; s >>= 1) {
        if (t < s) sm[t] += sm[t + s];
        __syncthreads();
    }
    const float total = sm[0];
    for (int k = t; k < k_len; k += BLOCK) y[(size_t)row * k_len + k] = expf(xr[k] - m) / total;
}

""" + host_entry("softmax_rows")

CG_KERNEL_CU = r"""
#include <cuda_runtime.h>
#include <math.h>
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
#define BLOCK 256

__global__ void softmax_rows_cg(const float* x, float* y, int k_len) {
    __shared__ float part[BLOCK / 32];
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    const int row = blockIdx.x;
    const int t = block.thread_rank();
    const float* xr = x + (size_t)row * k_len;
    float m = -INFINITY;
    for (int k = t; k < k_len; k += BLOCK) m = fmaxf(m, xr[k]);
    m = cg::reduce(warp, m, cg::greater<float>());
    if (warp.thread_rank() == 0) part[warp.meta_group_rank()] = m;
    block.sync();
    m = part[0];
    for (int w = 1; w < (int)warp.meta_group_size(); w++) m = fmaxf(m, part[w]);
    block.sync();
    float acc = 0.0f;
    for (int k = t; k < k_len; k += BLOCK) acc += expf(xr[k] - m);
    acc = cg::reduce(warp, acc, cg::plus<float>());
    if (warp.thread_rank() == 0) part[warp.meta_group_rank()] = acc;
    block.sync();
    float total = 0.0f;
    for (int w = 0; w < (int)warp.meta_group_size(); w++) total += part[w];
    for (int k = t; k < k_len; k += BLOCK) y[(size_t)row * k_len + k] = expf(xr[k] - m) / total;
}

""" + host_entry("softmax_rows_cg")

# The shared-memory softmax over bfloat16 data: the host converts float <-> bf16 around it.
BF16_KERNEL_CU = r"""
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <math.h>
#include <stdlib.h>
#define BLOCK 256

__global__ void softmax_rows_bf16(const __nv_bfloat16* x, __nv_bfloat16* y, int k_len) {
    __shared__ float sm[BLOCK];
    const int row = blockIdx.x;
    const int t = threadIdx.x;
    const __nv_bfloat16* xr = x + (size_t)row * k_len;
    float m = -INFINITY;
    for (int k = t; k < k_len; k += BLOCK) m = fmaxf(m, __bfloat162float(xr[k]));
    sm[t] = m;
    __syncthreads();
    for (int s = BLOCK / 2; s > 0; s >>= 1) {
        if (t < s) sm[t] = fmaxf(sm[t], sm[t + s]);
        __syncthreads();
    }
    m = sm[0];
    __syncthreads();
    float acc = 0.0f;
    for (int k = t; k < k_len; k += BLOCK) acc += expf(__bfloat162float(xr[k]) - m);
    sm[t] = acc;
    __syncthreads();
    for (int s = BLOCK / 2; s > 0; s >>= 1) {
        if (t < s) sm[t] += sm[t + s];
        __syncthreads();
    }
    const float total = sm[0];
    for (int k = t; k < k_len; k += BLOCK)
        y[(size_t)row * k_len + k] = __float2bfloat16(expf(__bfloat162float(xr[k]) - m) / total);
}

// x is rounded to bf16 on the way in (the caller's reference uses the same rounded values,
// returned in x_rounded); y comes back as float.
extern "C" int bench_softmax(const float* x, float* y, int rows, int k_len, float* x_rounded) {
    size_t n = (size_t)rows * k_len;
    __nv_bfloat16* hx = (__nv_bfloat16*)malloc(n * sizeof(__nv_bfloat16));
    __nv_bfloat16* hy = (__nv_bfloat16*)malloc(n * sizeof(__nv_bfloat16));
    __nv_bfloat16 *dx = NULL, *dy = NULL;
    if (!hx || !hy) return 2;
    if (cudaMalloc(&dx, n * 2) != cudaSuccess || cudaMalloc(&dy, n * 2) != cudaSuccess) return 1;
    for (size_t i = 0; i < n; i++) {
        hx[i] = __float2bfloat16(x[i]);
        if (x_rounded) x_rounded[i] = __bfloat162float(hx[i]);
    }
    cudaMemcpy(dx, hx, n * 2, cudaMemcpyHostToDevice);
    softmax_rows_bf16<<<rows, BLOCK>>>(dx, dy, k_len);
    cudaError_t err = cudaGetLastError();
    if (err == cudaSuccess) err = cudaMemcpy(hy, dy, n * 2, cudaMemcpyDeviceToHost);
    for (size_t i = 0; i < n; i++) y[i] = __bfloat162float(hy[i]);
    cudaFree(dx);
    cudaFree(dy);
    free(hx);
    free(hy);
    return (int)err;
}
"""

# The two barrier kernels more than one program below runs (each program stays a whole file).
TREE_SUM_KERNEL = r"""
__global__ void tree_sum(const float* x, float* out) {
    __shared__ float sm[BLOCK];
    const int t = threadIdx.x;
    sm[t] = x[(size_t)blockIdx.x * BLOCK + t];
    __syncthreads();
    for (int s = BLOCK / 2; s > 0; s >>= 1) {
        if (t < s) sm[t] += sm[t + s];
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = sm[0];
}
"""

# The same per-block sums by warp shuffles: each warp's sum by __shfl_down_sync, the warps' sums
# through shared memory (one barrier), then the first lanes' again (every warp does it alike).
WARP_SUM_KERNEL = r"""
__global__ void warp_sum(const float* x, float* out) {
    __shared__ float sums[BLOCK / 32];
    const int t = threadIdx.x;
    float v = x[(size_t)blockIdx.x * BLOCK + t];
    for (int off = 16; off > 0; off /= 2) v += __shfl_down_sync(0xffffffffu, v, off);
    if (t % 32 == 0) sums[t / 32] = v;
    __syncthreads();
    v = t % 32 < BLOCK / 32 ? sums[t % 32] : 0.0f;
    for (int off = 16; off > 0; off /= 2) v += __shfl_down_sync(0xffffffffu, v, off);
    if (t == 0) out[blockIdx.x] = v;
}
"""

TILED_MATMUL_KERNEL = r"""
__global__ void matmul_tiled(const float* A, const float* B, float* C, int n) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * TILE + ty;
    const int col = blockIdx.x * TILE + tx;
    float sum = 0.0f;
    for (int m = 0; m < n / TILE; ++m) {
        As[ty][tx] = A[row * n + m * TILE + tx];
        Bs[ty][tx] = B[(m * TILE + ty) * n + col];
        __syncthreads();
        for (int k = 0; k < TILE; ++k) sum += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    C[row * n + col] = sum;
}
"""

# Blocks of the grid-stride add's launch: a GPU's few per multiprocessor (an H100 has 132), not
# one per 256 elements, so each thread runs many steps.
STRIDE_GRID = 264

ELEMENTWISE_CU = (
    r"""
#include <cuda_runtime.h>
#define BLOCK 256
#define STRIDE_GRID 264

__global__ void add_one(const float* a, const float* b, float* c, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

// The same add as a grid-stride loop, launched with a fixed grid (STRIDE_GRID blocks).
__global__ void add_stride(const float* a, const float* b, float* c, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        c[i] = a[i] + b[i];
}

"""
    + TREE_SUM_KERNEL
    + WARP_SUM_KERNEL
    + r"""
static float *da = NULL, *db = NULL, *dc = NULL;
static int n_ = 0;

// Device copies of a and b (n values, a multiple of BLOCK) and room for the results.
extern "C" int bench_setup(const float* a, const float* b, int n) {
    n_ = n;
    const size_t bytes = (size_t)n * sizeof(float);
    if (cudaMalloc(&da, bytes) != cudaSuccess || cudaMalloc(&db, bytes) != cudaSuccess ||
        cudaMalloc(&dc, bytes) != cudaSuccess)
        return 1;
    cudaMemcpy(da, a, bytes, cudaMemcpyHostToDevice);
    cudaMemcpy(db, b, bytes, cudaMemcpyHostToDevice);
    return 0;
}

// c = a + b as the build translates the launch.
extern "C" int bench_add_built(void) {
    add_one<<<n_ / BLOCK, BLOCK>>>(da, db, dc, n_);
    return (int)cudaGetLastError();
}

// c = a + b by the grid-stride kernel, as the build translates the launch.
extern "C" int bench_add_stride(void) {
    add_stride<<<STRIDE_GRID, BLOCK>>>(da, db, dc, n_);
    return (int)cudaGetLastError();
}

// c = a + b through the runtime's launch with barrier_free set: the plain loop (fibers with
// SIMULATOR_FIBERS=1), whatever the build does with <<<...>>>.
extern "C" int bench_add_flagged(void) {
    ::__sim::LaunchSpec spec{dim3(n_ / BLOCK), dim3(BLOCK), 0, 0, true};
    ::__sim::launch(spec, "add_one", __FILE__, __LINE__, add_one, da, db, dc, n_);
    return (int)cudaGetLastError();
}

// c = a + b launched by address, as cudaLaunchKernel and graph kernel nodes launch.
extern "C" int bench_add_by_address(void) {
    void* args[4] = {&da, &db, &dc, &n_};
    cudaLaunchKernel((const void*)add_one, dim3(n_ / BLOCK), dim3(BLOCK), args, 0, 0);
    return (int)cudaGetLastError();
}

// c = a + b replayed from a graph that stream capture recorded from the same <<<...>>> launch
// (captured on the first call, replayed on every call).
static cudaStream_t graph_stream_ = NULL;
static cudaGraphExec_t add_graph_ = NULL;
extern "C" int bench_add_graph(void) {
    if (add_graph_ == NULL) {
        cudaGraph_t g;
        if (cudaStreamCreate(&graph_stream_) != cudaSuccess) return 1;
        cudaStreamBeginCapture(graph_stream_, cudaStreamCaptureModeGlobal);
        add_one<<<n_ / BLOCK, BLOCK, 0, graph_stream_>>>(da, db, dc, n_);
        if (cudaStreamEndCapture(graph_stream_, &g) != cudaSuccess) return 1;
        if (cudaGraphInstantiate(&add_graph_, g, NULL, NULL, 0) != cudaSuccess) return 1;
        cudaGraphDestroy(g);
    }
    cudaGraphLaunch(add_graph_, graph_stream_);
    return (int)cudaStreamSynchronize(graph_stream_);
}

// c[0 .. n / BLOCK) = the sum of each BLOCK values of a.
extern "C" int bench_tree_sum(void) {
    tree_sum<<<n_ / BLOCK, BLOCK>>>(da, dc);
    return (int)cudaGetLastError();
}

// The same sums by warp shuffles (WARP_SUM_KERNEL).
extern "C" int bench_warp_sum(void) {
    warp_sum<<<n_ / BLOCK, BLOCK>>>(da, dc);
    return (int)cudaGetLastError();
}

extern "C" int bench_fetch(float* c) {
    return (int)cudaMemcpy(c, dc, (size_t)n_ * sizeof(float), cudaMemcpyDeviceToHost);
}

extern "C" int bench_free(void) {
    if (add_graph_ != NULL) cudaGraphExecDestroy(add_graph_);
    if (graph_stream_ != NULL) cudaStreamDestroy(graph_stream_);
    cudaFree(da);
    cudaFree(db);
    cudaFree(dc);
    return 0;
}
"""
)

MATMUL_CU = (
    r"""
#include <cuda_runtime.h>
#define TILE 16

__global__ void matmul_naive(const float* A, const float* B, float* C, int n) {
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    float sum = 0.0f;
    for (int k = 0; k < n; ++k) sum += A[row * n + k] * B[k * n + col];
    C[row * n + col] = sum;
}

"""
    + TILED_MATMUL_KERNEL
    + r"""
static float *da = NULL, *db = NULL, *dc = NULL;
static int n_ = 0;

extern "C" int mm_setup(const float* a, const float* b, int n) {
    n_ = n;
    const size_t bytes = (size_t)n * n * sizeof(float);
    if (cudaMalloc(&da, bytes) != cudaSuccess || cudaMalloc(&db, bytes) != cudaSuccess ||
        cudaMalloc(&dc, bytes) != cudaSuccess)
        return 1;
    cudaMemcpy(da, a, bytes, cudaMemcpyHostToDevice);
    cudaMemcpy(db, b, bytes, cudaMemcpyHostToDevice);
    return 0;
}

extern "C" int mm_naive(void) {
    matmul_naive<<<dim3(n_ / TILE, n_ / TILE), dim3(TILE, TILE)>>>(da, db, dc, n_);
    return (int)cudaGetLastError();
}

extern "C" int mm_tiled(void) {
    matmul_tiled<<<dim3(n_ / TILE, n_ / TILE), dim3(TILE, TILE)>>>(da, db, dc, n_);
    return (int)cudaGetLastError();
}

extern "C" int mm_fetch(float* c) {
    return (int)cudaMemcpy(c, dc, (size_t)n_ * n_ * sizeof(float), cudaMemcpyDeviceToHost);
}

extern "C" int mm_free(void) {
    cudaFree(da);
    cudaFree(db);
    cudaFree(dc);
    return 0;
}
"""
)

# The two matmul kernels as native C++ loops over the blocks (in parallel) and their threads:
# the tiled one as one loop nest per region between its barriers, the form a CUDA-to-CPU
# compiler that splits kernels at barriers emits.
MATMUL_NATIVE_CPP = r"""
#define TILE 16
extern "C" void native_naive(const float* A, const float* B, float* C, int n) {
#pragma omp parallel for collapse(2)
    for (int by = 0; by < n / TILE; ++by)
        for (int bx = 0; bx < n / TILE; ++bx)
            for (int ty = 0; ty < TILE; ++ty)
                for (int tx = 0; tx < TILE; ++tx) {
                    const int row = by * TILE + ty, col = bx * TILE + tx;
                    float sum = 0.0f;
                    for (int k = 0; k < n; ++k) sum += A[row * n + k] * B[k * n + col];
                    C[row * n + col] = sum;
                }
}

extern "C" void native_tiled(const float* A, const float* B, float* C, int n) {
#pragma omp parallel for collapse(2)
    for (int by = 0; by < n / TILE; ++by)
        for (int bx = 0; bx < n / TILE; ++bx) {
            float As[TILE][TILE], Bs[TILE][TILE], sum[TILE][TILE] = {};
            for (int m = 0; m < n / TILE; ++m) {
                for (int ty = 0; ty < TILE; ++ty)
                    for (int tx = 0; tx < TILE; ++tx) {
                        As[ty][tx] = A[(by * TILE + ty) * n + m * TILE + tx];
                        Bs[ty][tx] = B[(m * TILE + ty) * n + bx * TILE + tx];
                    }
                for (int ty = 0; ty < TILE; ++ty)
                    for (int tx = 0; tx < TILE; ++tx)
                        for (int k = 0; k < TILE; ++k) sum[ty][tx] += As[ty][k] * Bs[k][tx];
            }
            for (int ty = 0; ty < TILE; ++ty)
                for (int tx = 0; tx < TILE; ++tx) C[(by * TILE + ty) * n + bx * TILE + tx] = sum[ty][tx];
        }
}
"""

# The grid-stride add as native C++ loops over the blocks (in parallel) and their threads, each
# thread's loop in turn: the order a CUDA-to-CPU compiler that wraps a kernel's body in a loop
# over the threads emits.
ELEMENTWISE_NATIVE_CPP = r"""
extern "C" void native_add_stride(const float* a, const float* b, float* c, int n, int grid, int block) {
#pragma omp parallel for
    for (int bx = 0; bx < grid; ++bx)
        for (int tx = 0; tx < block; ++tx)
            for (int i = bx * block + tx; i < n; i += block * grid) c[i] = a[i] + b[i];
}
"""

NUMBA_SIDE = r"""
import json, math, sys, time
import numpy as np
from numba import cuda, float32

BLOCK = 256

@cuda.jit
def softmax_rows(x, y, k_len):
    sm = cuda.shared.array(BLOCK, float32)
    row = cuda.blockIdx.x
    t = cuda.threadIdx.x
    m = -math.inf
    for k in range(t, k_len, BLOCK):
        m = max(m, x[row, k])
    sm[t] = m
    cuda.syncthreads()
    s = BLOCK // 2
    while s > 0:
        if t < s:
            sm[t] = max(sm[t], sm[t + s])
        cuda.syncthreads()
        s //= 2
    m = sm[0]
    cuda.syncthreads()
    acc = 0.0
    for k in range(t, k_len, BLOCK):
        acc += math.exp(x[row, k] - m)
    sm[t] = acc
    cuda.syncthreads()
    s = BLOCK // 2
    while s > 0:
        if t < s:
            sm[t] += sm[t + s]
        cuda.syncthreads()
        s //= 2
    total = sm[0]
    for k in range(t, k_len, BLOCK):
        y[row, k] = math.exp(x[row, k] - m) / total

rows, k_len, repeat = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
x = np.random.default_rng(0).standard_normal((rows, k_len)).astype(np.float32)
y = np.zeros_like(x)
softmax_rows[1, BLOCK](x[:1], y[:1], k_len)  # warm-up
best = math.inf
for _ in range(repeat):
    t0 = time.perf_counter()
    softmax_rows[rows, BLOCK](x, y, k_len)
    best = min(best, time.perf_counter() - t0)
e = np.exp(x - x.max(axis=1, keepdims=True))
err = float(np.abs(y - e / e.sum(axis=1, keepdims=True)).max())
print(json.dumps({"seconds": best, "max_error": err}))
"""


def time_numba(rows: int, k_len: int, repeat: int) -> dict:
    """Seconds for ``rows`` rows under numba's CUDA simulator (child process)."""
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    proc = subprocess.run(
        [sys.executable, "-c", NUMBA_SIDE, str(rows), str(k_len), str(repeat)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if proc.returncode != 0:
        raise SystemExit(f"numba's simulator run failed:\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def time_simulator(rows: int, k_len: int, repeat: int, source: str = KERNEL_CU, bf16: bool = False) -> dict:
    """Seconds for ``rows`` rows under this simulator's fast build, called through ctypes.

    With ``bf16`` the launcher takes a fourth array: the input as rounded to bfloat16, which the
    reference uses; the error is then relative to the largest output (bf16 keeps 8 bits).
    """
    from simulator import build_shared

    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "bench_softmax.cu"
        src.write_text(source)
        lib = ctypes.CDLL(str(build_shared(src, Path(tmp) / "out", "fast")))
    x = np.random.default_rng(0).standard_normal((rows, k_len)).astype(np.float32)
    y = np.zeros_like(x)
    xr = np.zeros_like(x)
    px, py = ctypes.c_void_p(x.ctypes.data), ctypes.c_void_p(y.ctypes.data)
    extra = (ctypes.c_void_p(xr.ctypes.data),) if bf16 else ()
    if lib.bench_softmax(px, py, 1, k_len, *extra) != 0:
        raise SystemExit("the simulated kernel failed")
    best = best_cpu = float("inf")
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        rc = lib.bench_softmax(px, py, rows, k_len, *extra)
        best = min(best, time.perf_counter() - t0)
        best_cpu = min(best_cpu, time.process_time() - c0)
        if rc != 0:
            raise SystemExit(f"the simulated kernel returned {rc}")
    ref_in = (xr if bf16 else x).astype(np.float64)
    e = np.exp(ref_in - ref_in.max(axis=1, keepdims=True))
    want = e / e.sum(axis=1, keepdims=True)
    return {"seconds": best, "cpu_seconds": best_cpu, "max_error": float(np.abs(y - want).max())}


def _best(fn, repeat: int) -> dict:
    """The fastest of ``repeat`` timed calls of ``fn`` (after a warm-up call): wall and CPU seconds.

    CPU seconds are the process's (all of the simulator's workers together): on a machine shared
    with other work they vary much less than wall-clock time.
    """
    fn()
    wall = cpu = float("inf")
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall = min(wall, time.perf_counter() - t0)
        cpu = min(cpu, time.process_time() - c0)
    return {"wall": wall, "cpu": cpu}


def time_against_numpy(elements: int, repeat: int) -> dict:
    """Seconds of the elementwise and tree-sum kernels and of numpy doing the same work."""
    from simulator import build_shared

    n = elements - elements % BLOCK
    rng = np.random.default_rng(1)
    a = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    c = np.zeros(n, dtype=np.float32)
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "bench_elementwise.cu"
        src.write_text(ELEMENTWISE_CU)
        libs = _built_and_fibers(build_shared(src, Path(tmp) / "out", "fast"))
        native = _native_lib(Path(tmp), "native_elementwise", ELEMENTWISE_NATIVE_CPP)
    for fibers, lib in libs.items():
        with _fibers_env(fibers):
            if lib.bench_setup(ctypes.c_void_p(a.ctypes.data), ctypes.c_void_p(b.ctypes.data), n) != 0:
                raise SystemExit("cudaMalloc failed in the elementwise benchmark")

    def launch(row: str, entry: str, want: np.ndarray, fibers: bool = False) -> dict:
        lib = libs[fibers]
        _mark_row(row)
        with _fibers_env(fibers):

            def call() -> None:
                rc = getattr(lib, entry)()
                if rc != 0:
                    raise SystemExit(f"the simulated kernel returned {rc}")

            seconds = _best(call, repeat)
        c[:] = 0
        lib.bench_fetch(ctypes.c_void_p(c.ctypes.data))
        got = c[: want.size]
        if not np.allclose(got, want, rtol=1e-5, atol=1e-4):
            raise SystemExit(f"wrong results from {entry} ({row}): max error {np.abs(got - want).max():.3g}")
        return seconds

    add_want = a + b
    sum_want = a.reshape(-1, BLOCK).astype(np.float64).sum(axis=1)
    out = np.empty_like(a)
    res = {
        "elements": n,
        "numpy_add": _best(lambda: np.add(a, b, out=out), repeat),
        "numpy_sum": _best(lambda: a.reshape(-1, BLOCK).sum(axis=1), repeat),
        "add_plain": launch("add_plain", "bench_add_flagged", add_want),
        "add_fibers": launch("add_fibers", "bench_add_flagged", add_want, fibers=True),
        "add_built": launch("add_built", "bench_add_built", add_want),
        "add_graph": launch("add_graph", "bench_add_graph", add_want),
        "add_address": launch("add_address", "bench_add_by_address", add_want),
        "add_stride": launch("add_stride", "bench_add_stride", add_want),
        "tree_sum": launch("tree_sum", "bench_tree_sum", sum_want),
        "tree_sum_fibers": launch("tree_sum_fibers", "bench_tree_sum", sum_want, fibers=True),
        "warp_sum": launch("warp_sum", "bench_warp_sum", sum_want),
        "warp_sum_fibers": launch("warp_sum_fibers", "bench_warp_sum", sum_want, fibers=True),
    }
    for fibers, lib in libs.items():
        with _fibers_env(fibers):
            lib.bench_free()
    if native is not None:
        pa, pb, pc = (ctypes.c_void_p(x.ctypes.data) for x in (a, b, c))
        add = native.native_add_stride
        res["native_add_stride"] = _best(lambda: add(pa, pb, pc, n, STRIDE_GRID, BLOCK), repeat)
        if not np.array_equal(c, add_want):
            raise SystemExit("wrong results from native_add_stride")
    return res


def _fibers_env(fibers: bool):
    """Set SIMULATOR_FIBERS to 1 or 0 while the returned context is open, as it was after."""
    import contextlib

    @contextlib.contextmanager
    def scope():
        saved = os.environ.get("SIMULATOR_FIBERS")
        os.environ["SIMULATOR_FIBERS"] = "1" if fibers else "0"
        try:
            yield
        finally:
            if saved is None:
                os.environ.pop("SIMULATOR_FIBERS", None)
            else:
                os.environ["SIMULATOR_FIBERS"] = saved

    return scope()


def _built_and_fibers(built: Path) -> dict[bool, ctypes.CDLL]:
    """The built library loaded twice, as two copies of the runtime: {False: as built, True: fibers}.

    The runtime reads SIMULATOR_FIBERS once, at a library's first launch, and keeps it, so one
    loaded library cannot run some launches as built and others with fibers. Each linked library
    holds its own copy of the runtime (linked with -Bsymbolic, its knobs internal to it), and a
    copy of the file under another name loads as a second library: every call into the fibers
    copy runs inside ``_fibers_env(True)``, so its first launch reads 1, and the other copy's 0.
    """
    twin = built.with_name(f"{built.stem}-fibers{built.suffix}")
    shutil.copyfile(built, twin)
    return {False: ctypes.CDLL(str(built)), True: ctypes.CDLL(str(twin))}


def _mark_row(row: str) -> None:
    """With SIMULATOR_LAUNCH_LOG=1, say on stderr which row the launch log lines that follow belong to."""
    if os.environ.get("SIMULATOR_LAUNCH_LOG") == "1":
        print(f"bench row: {row}", file=sys.stderr, flush=True)


def _native_lib(tmp: Path, name: str = "native_matmul", source: str = MATMUL_NATIVE_CPP):
    """A native-loops anchor library (g++ -O3 -march=native -fopenmp), or None without one."""
    cxx = os.environ.get("CXX", "g++")
    src = tmp / f"{name}.cpp"
    src.write_text(source)
    lib = tmp / f"{name}.so"
    cmd = [cxx, "-O3", "-march=native", "-fopenmp", "-shared", "-fPIC", str(src), "-o", str(lib)]
    try:
        subprocess.run(cmd, check=True, capture_output=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    return ctypes.CDLL(str(lib))


def time_matmul(n: int, repeat: int) -> dict:
    """Seconds of the naive and tiled matmul kernels, their native-loop anchors and numpy's."""
    from simulator import build_shared

    if n % 16 != 0:
        raise SystemExit(f"--matmul-n {n} is not a multiple of 16 (the tile); pass e.g. --matmul-n 512")
    rng = np.random.default_rng(2)
    a = rng.standard_normal((n, n)).astype(np.float32)
    b = rng.standard_normal((n, n)).astype(np.float32)
    c = np.zeros((n, n), dtype=np.float32)
    want = a.astype(np.float64) @ b.astype(np.float64)
    pa, pb, pc = (ctypes.c_void_p(x.ctypes.data) for x in (a, b, c))
    res: dict = {"n": n}

    def check(name: str) -> None:
        err = float(np.abs(c - want).max())
        if not err <= 1e-3 * n**0.5:
            raise SystemExit(f"wrong results from {name}: max error {err:.3g}")
        c[:] = 0

    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "bench_matmul.cu"
        src.write_text(MATMUL_CU)
        libs = _built_and_fibers(build_shared(src, Path(tmp) / "out", "fast"))
        native = _native_lib(Path(tmp))
    for fibers, lib in libs.items():
        with _fibers_env(fibers):
            if lib.mm_setup(pa, pb, n) != 0:
                raise SystemExit("cudaMalloc failed in the matmul benchmark")
    for name, entry, fibers in (
        ("naive", "mm_naive", False),
        ("tiled", "mm_tiled", False),
        ("tiled_fibers", "mm_tiled", True),
    ):
        lib = libs[fibers]

        def call(fn=lib[entry]) -> None:
            rc = fn()
            if rc != 0:
                raise SystemExit(f"the simulated matmul returned {rc}")

        _mark_row(name)
        with _fibers_env(fibers):
            res[name] = _best(call, repeat)
        lib.mm_fetch(pc)
        check(name)
    for fibers, lib in libs.items():
        with _fibers_env(fibers):
            lib.mm_free()
    if native is not None:
        for name, fn in (("native_naive", native.native_naive), ("native_tiled", native.native_tiled)):
            res[name] = _best(lambda fn=fn: fn(pa, pb, pc, n), repeat)
            check(name)
    res["numpy"] = _best(lambda: a @ b, repeat)
    return res


# The tree-sum and the tiled matmul as one program that times itself, built in fast mode and in
# the checkers' modes (``--checkers``): memcheck's sanitizers cannot be loaded into Python, so
# each build runs as a child process, and the ratio is each checker's over the fast build's.
CHECKERS_CU = (
    r"""
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#define BLOCK 256
#define TILE 16

"""
    + TREE_SUM_KERNEL
    + TILED_MATMUL_KERNEL
    + r"""
static double seconds(clockid_t clock) {
    struct timespec ts;
    clock_gettime(clock, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int best_of; // the rounds timed after a warm-up
static double wall_best, cpu_best;

static int rounds(int (*launch)(void)) {
    wall_best = cpu_best = 1e30;
    for (int r = 0; r <= best_of; ++r) {
        const double w0 = seconds(CLOCK_MONOTONIC), c0 = seconds(CLOCK_PROCESS_CPUTIME_ID);
        if (launch() != 0) return 1;
        const double w = seconds(CLOCK_MONOTONIC) - w0, c = seconds(CLOCK_PROCESS_CPUTIME_ID) - c0;
        if (r > 0 && w < wall_best) wall_best = w;
        if (r > 0 && c < cpu_best) cpu_best = c;
    }
    return 0;
}

static float *dx, *dsum, *da, *db, *dc;
static int elements, n;

static int launch_sum(void) {
    tree_sum<<<elements / BLOCK, BLOCK>>>(dx, dsum);
    return (int)cudaDeviceSynchronize();
}

static int launch_tiled(void) {
    matmul_tiled<<<dim3(n / TILE, n / TILE), dim3(TILE, TILE)>>>(da, db, dc, n);
    return (int)cudaDeviceSynchronize();
}

// Times both kernels (sizes from BENCH_ELEMENTS, BENCH_MATMUL_N, BENCH_REPEAT), checks their
// results against the host's, and prints one line of JSON.
extern "C" int bench_checkers(void) {
    elements = atoi(getenv("BENCH_ELEMENTS"));
    n = atoi(getenv("BENCH_MATMUL_N"));
    best_of = atoi(getenv("BENCH_REPEAT"));
    const int blocks = elements / BLOCK;
    float* x = (float*)malloc(sizeof(float) * elements);
    float* sums = (float*)malloc(sizeof(float) * blocks);
    float* a = (float*)malloc(sizeof(float) * n * n);
    float* b = (float*)malloc(sizeof(float) * n * n);
    float* c = (float*)malloc(sizeof(float) * n * n);
    for (int i = 0; i < elements; ++i) x[i] = (float)((unsigned)i * 7919u % 1000u) / 1000.0f - 0.5f;
    for (int i = 0; i < n * n; ++i) {
        a[i] = (float)((unsigned)i * 31u % 17u) / 17.0f - 0.5f;
        b[i] = (float)((unsigned)i * 13u % 23u) / 23.0f - 0.5f;
    }
    cudaMalloc(&dx, sizeof(float) * elements);
    cudaMalloc(&dsum, sizeof(float) * blocks);
    cudaMalloc(&da, sizeof(float) * n * n);
    cudaMalloc(&db, sizeof(float) * n * n);
    cudaMalloc(&dc, sizeof(float) * n * n);
    cudaMemcpy(dx, x, sizeof(float) * elements, cudaMemcpyHostToDevice);
    cudaMemcpy(da, a, sizeof(float) * n * n, cudaMemcpyHostToDevice);
    cudaMemcpy(db, b, sizeof(float) * n * n, cudaMemcpyHostToDevice);
    if (rounds(launch_sum) != 0) return 1;
    const double sum_wall = wall_best, sum_cpu = cpu_best;
    if (rounds(launch_tiled) != 0) return 1;
    const double mm_wall = wall_best, mm_cpu = cpu_best;
    cudaMemcpy(sums, dsum, sizeof(float) * blocks, cudaMemcpyDeviceToHost);
    cudaMemcpy(c, dc, sizeof(float) * n * n, cudaMemcpyDeviceToHost);
    for (int k = 0; k < blocks; ++k) {
        double want = 0;
        for (int i = 0; i < BLOCK; ++i) want += x[k * BLOCK + i];
        if (fabs(sums[k] - want) > 1e-3) {
            fprintf(stderr, "tree_sum: block %d gives %g, want %g\n", k, sums[k], want);
            return 2;
        }
    }
    for (int i = 0; i < n; i += 7) {
        for (int j = 0; j < n; j += 5) {
            double want = 0;
            for (int k = 0; k < n; ++k) want += (double)a[i * n + k] * b[k * n + j];
            if (fabs(c[i * n + j] - want) > 1e-3 * sqrt((double)n)) {
                fprintf(stderr, "matmul_tiled: C[%d][%d] is %g, want %g\n", i, j, c[i * n + j], want);
                return 2;
            }
        }
    }
    printf("{\"tree_sum\": {\"wall\": %.9g, \"cpu\": %.9g}, \"tiled\": {\"wall\": %.9g, \"cpu\": %.9g}}\n",
           sum_wall, sum_cpu, mm_wall, mm_cpu);
    cudaFree(dx);
    cudaFree(dsum);
    cudaFree(da);
    cudaFree(db);
    cudaFree(dc);
    free(x);
    free(sums);
    free(a);
    free(b);
    free(c);
    return 0;
}
"""
)

# The builds --checkers times, and the environment each runs with (as ``run --mode`` gives it).
CHECKER_BUILDS = (
    ("fast", "fast", "fast"),
    ("memcheck", "memcheck", "memcheck"),
    ("racecheck (shared memory, the default)", "racecheck-shared", "racecheck"),
)


def time_checkers(elements: int, n: int, repeat: int) -> dict:
    """Seconds of the tree-sum and the tiled matmul in fast mode and under each checker (child runs)."""
    from simulator import build_executable
    from simulator.sanitizer_env import run_child_env

    if n % 16 != 0:
        raise SystemExit(f"--matmul-n {n} is not a multiple of 16 (the tile); pass e.g. --matmul-n 512")
    res: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "bench_checkers.cu"
        src.write_text(CHECKERS_CU)
        for label, build_mode, env_mode in CHECKER_BUILDS:
            exe = build_executable([src], "bench_checkers", build_mode)
            env = run_child_env(env_mode, 3600)
            env.update(
                BENCH_ELEMENTS=str(elements - elements % BLOCK),
                BENCH_MATMUL_N=str(n),
                BENCH_REPEAT=str(repeat),
            )
            proc = subprocess.run([str(exe)], capture_output=True, text=True, env=env, check=False)
            if proc.returncode != 0:
                raise SystemExit(f"the {label} build of the checker benchmark failed:\n{proc.stderr[-3000:]}")
            res[build_mode] = {"label": label, **json.loads(proc.stdout.strip().splitlines()[-1])}
    return res


def print_checkers(ck: dict, elements: int, n: int) -> None:
    """Each checker's seconds for the tree-sum and the tiled matmul, as a ratio to fast mode's."""
    print(f"checkers: tree-sum of {elements} values, tiled matmul {n}^3; ratio = checker's seconds / fast's")
    print(f"{'case':<52}{'seconds':>10}{'ratio':>9}{'cpu ratio':>11}  target")
    targets = {"memcheck": "<= 3x", "racecheck-shared": "<= 10x"}
    fast = ck["fast"]
    for kernel, name in (("tree_sum", "tree-sum"), ("tiled", "tiled 16x16")):
        for mode, row in ck.items():
            sec, ref = row[kernel], fast[kernel]
            print(
                f"{name + ', ' + row['label']:<52}{sec['wall']:>10.4f}{sec['wall'] / ref['wall']:>8.1f}x"
                f"{sec['cpu'] / ref['cpu']:>10.1f}x  {targets.get(mode, '')}"
            )


def time_numpy_softmax(rows: int, k_len: int, repeat: int) -> dict:
    """Seconds numpy takes for the softmax the kernels compute (float32 rows)."""
    x = np.random.default_rng(0).standard_normal((rows, k_len)).astype(np.float32)

    def softmax() -> None:
        e = np.exp(x - x.max(axis=1, keepdims=True))
        e / e.sum(axis=1, keepdims=True)

    return _best(softmax, repeat)


def print_matmul(mm: dict) -> None:
    """The matmul cases in GFLOP/s, each with its ratio to its anchor (native loops, else numpy)."""
    n = mm["n"]
    flop = 2.0 * n**3
    rows = [
        ("naive (no barrier), as built", "naive", "native_naive", ""),
        ("tiled 16x16, as built", "tiled", "native_tiled", "<= 3x"),
        ("tiled 16x16, SIMULATOR_FIBERS=1", "tiled_fibers", "native_tiled", ""),
        ("naive, native loops (g++ -O3)", "native_naive", None, ""),
        ("tiled, native loops (g++ -O3)", "native_tiled", None, ""),
        ("numpy (BLAS)", "numpy", None, ""),
    ]
    print(f"matmul {n}x{n}x{n} float32, GFLOP/s (best of the rounds); ratio = anchor's speed / case's")
    print(f"{'case':<38}{'GFLOP/s':>10}{'anchor':>16}{'ratio':>9}{'cpu ratio':>11}  target")
    for name, key, anchor, target in rows:
        if key not in mm:
            print(f"{name:<38}{'(not built: no g++ with -fopenmp -march=native)':>40}")
            continue
        sec = mm[key]
        line = f"{name:<38}{flop / sec['wall'] / 1e9:>10.2f}"
        if anchor is not None and anchor in mm:
            ref = mm[anchor]
            line += (
                f"{anchor:>16}{sec['wall'] / ref['wall']:>8.1f}x{sec['cpu'] / ref['cpu']:>10.1f}x  {target}"
            )
        print(line)
    if "tiled" in mm and "naive" in mm:
        print(f"tiled as built is {mm['naive']['wall'] / mm['tiled']['wall']:.2f}x the naive kernel's speed")


def main(argv: list[str] | None = None) -> int:
    """Run both sides and print seconds per simulated thread and their ratio."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--k-len", type=int, default=512, help="row length (default 512: two strides per thread)")
    p.add_argument("--numba-rows", type=int, default=4)
    p.add_argument("--sim-rows", type=int, default=4096)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--elements", type=int, default=4 << 20, help="values against numpy (default 4M)")
    p.add_argument("--matmul-n", type=int, default=512, help="matrix size of the matmul cases (default 512)")
    p.add_argument("--json", type=Path, help="also write the results here")
    p.add_argument(
        "--checkers",
        action="store_true",
        help="also time the tree-sum and tiled matmul under memcheck and racecheck",
    )
    p.add_argument("--checkers-only", action="store_true", help="only the --checkers cases")
    a = p.parse_args(argv)
    if a.elements < BLOCK:
        p.error(f"--elements {a.elements} is below one block of {BLOCK}; pass e.g. --elements 4194304")
    if a.checkers_only:
        ck = time_checkers(a.elements, a.matmul_n, a.repeat)
        print_checkers(ck, a.elements - a.elements % BLOCK, a.matmul_n)
        if a.json:
            a.json.write_text(json.dumps({"checkers": ck}, indent=2))
        return 0
    require("numba", "numba's CUDA simulator, the side it compares with")
    nb = time_numba(a.numba_rows, a.k_len, a.repeat)
    sm = time_simulator(a.sim_rows, a.k_len, a.repeat)
    cg = time_simulator(a.sim_rows, a.k_len, a.repeat, CG_KERNEL_CU)
    bf = time_simulator(a.sim_rows, a.k_len, a.repeat, BF16_KERNEL_CU, bf16=True)
    vs = time_against_numpy(a.elements, a.repeat)
    np_softmax = time_numpy_softmax(a.sim_rows, a.k_len, a.repeat)
    mm = time_matmul(a.matmul_n, a.repeat)
    ck = time_checkers(a.elements, a.matmul_n, a.repeat) if a.checkers else None
    per_nb = nb["seconds"] / (a.numba_rows * BLOCK)
    per_sm = sm["seconds"] / (a.sim_rows * BLOCK)
    per_cg = cg["seconds"] / (a.sim_rows * BLOCK)
    per_bf = bf["seconds"] / (a.sim_rows * BLOCK)
    ratio = per_nb / per_sm
    threads = os.environ.get("SIMULATOR_THREADS", str(cpu_count()))
    softmax_sm = {"wall": sm["seconds"], "cpu": sm["cpu_seconds"]}
    softmax_cg = {"wall": cg["seconds"], "cpu": cg["cpu_seconds"]}
    vs_rows = [
        ("elementwise add, plain loop", vs["add_plain"], vs["numpy_add"], ""),
        ("elementwise add, SIMULATOR_FIBERS=1", vs["add_fibers"], vs["numpy_add"], ""),
        ("elementwise add, <<<>>> as built", vs["add_built"], vs["numpy_add"], "<= 10x"),
        ("elementwise add, graph replay", vs["add_graph"], vs["numpy_add"], ""),
        ("elementwise add, cudaLaunchKernel", vs["add_address"], vs["numpy_add"], ""),
        (f"grid-stride add <<<{STRIDE_GRID}>>>, as built", vs["add_stride"], vs["numpy_add"], ""),
        *(
            [("  the same, native loops (g++ -O3)", vs["native_add_stride"], vs["numpy_add"], "")]
            if "native_add_stride" in vs
            else []
        ),
        ("tree-sum, barrier per level", vs["tree_sum"], vs["numpy_sum"], "<= 50x"),
        ("tree-sum, SIMULATOR_FIBERS=1", vs["tree_sum_fibers"], vs["numpy_sum"], ""),
        ("warp-shuffle sum, as built", vs["warp_sum"], vs["numpy_sum"], ""),
        ("warp-shuffle sum, SIMULATOR_FIBERS=1", vs["warp_sum_fibers"], vs["numpy_sum"], ""),
        ("softmax (shared memory)", softmax_sm, np_softmax, ""),
        ("softmax (cooperative groups)", softmax_cg, np_softmax, ""),
    ]
    print(f"against numpy, {vs['elements']} float32 values (softmax: {a.sim_rows} x {a.k_len}), launch only")
    print(f"{'case':<38}{'seconds':>10}{'numpy s':>10}{'ratio':>9}{'cpu ratio':>11}  target")
    for name, sec, ref, target in vs_rows:
        print(
            f"{name:<38}{sec['wall']:>10.4f}{ref['wall']:>10.4f}{sec['wall'] / ref['wall']:>8.0f}x"
            f"{sec['cpu'] / ref['cpu']:>10.0f}x  {target}"
        )
    if "native_add_stride" in vs:
        anchor = vs["native_add_stride"]
        print(
            f"grid-stride add: {vs['add_stride']['wall'] / anchor['wall']:.1f}x its native loops "
            f"(cpu {vs['add_stride']['cpu'] / anchor['cpu']:.1f}x), one thread's steps in turn"
        )
    print_matmul(mm)
    if ck is not None:
        print_checkers(ck, vs["elements"], a.matmul_n)
    print(f"softmax rows x {BLOCK} threads, k_len {a.k_len}, {2 * 8 + 3} barriers per thread")
    print(f"{'side':<28}{'rows':>7}{'seconds':>11}{'us/thread':>12}{'max err':>10}")
    print(
        f"{'numba CUDA simulator':<28}{a.numba_rows:>7}{nb['seconds']:>11.3f}{per_nb * 1e6:>12.3f}"
        f"{nb['max_error']:>10.1e}"
    )
    print(
        f"{'this simulator (fast)':<28}{a.sim_rows:>7}{sm['seconds']:>11.3f}{per_sm * 1e6:>12.3f}"
        f"{sm['max_error']:>10.1e}"
    )
    print(
        f"{'  cooperative groups':<28}{a.sim_rows:>7}{cg['seconds']:>11.3f}{per_cg * 1e6:>12.3f}"
        f"{cg['max_error']:>10.1e}   ({per_cg / per_sm:.2f}x the shared-memory softmax)"
    )
    print(
        f"{'  bf16 data':<28}{a.sim_rows:>7}{bf['seconds']:>11.3f}{per_bf * 1e6:>12.3f}"
        f"{bf['max_error']:>10.1e}   ({per_bf / per_sm:.2f}x the shared-memory softmax)"
    )
    print(
        f"ratio: this simulator is {ratio:.0f}x faster per simulated thread "
        f"(target >= 50x; SIMULATOR_THREADS={threads})"
    )
    # bf16 keeps 8 significant bits: outputs up to 1 round to within 2^-8 of the float answer.
    bad = [
        name
        for name, res, tol in (("simulator", sm, 1e-5), ("cooperative groups", cg, 1e-5), ("bf16", bf, 2**-8))
        if not res["max_error"] <= tol
    ]
    if a.json:
        a.json.write_text(
            json.dumps(
                {
                    "numba": nb,
                    "simulator": sm,
                    "cooperative_groups": cg,
                    "bf16": bf,
                    "us_per_thread": {
                        "numba": per_nb * 1e6,
                        "simulator": per_sm * 1e6,
                        "cooperative_groups": per_cg * 1e6,
                        "bf16": per_bf * 1e6,
                    },
                    "ratio": ratio,
                    "k_len": a.k_len,
                    "against_numpy": vs,
                    "matmul": mm,
                    "checkers": ck,
                    "numpy_softmax": np_softmax,
                    "ratios_to_numpy": {name: sec["wall"] / ref["wall"] for name, sec, ref, _ in vs_rows},
                    "cpu_ratios_to_numpy": {name: sec["cpu"] / ref["cpu"] for name, sec, ref, _ in vs_rows},
                },
                indent=2,
            )
        )
    if bad:
        print(f"wrong results: {', '.join(bad)} (max error above the tolerance)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
