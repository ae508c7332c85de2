// Front-end conformance: what nvcc predefines in each pass and the rules it compiles by.
// - __NVCC__, __CUDACC__, __CUDACC_VER_MAJOR__/MINOR/BUILD, CUDART_VERSION and
//   __CUDA_ARCH_LIST__ in both passes; __CUDA_ARCH__ in the device pass only;
// - a function declared __host__ __device__ and defined without the qualifiers is both;
// - a function defined once per pass (#if __CUDA_ARCH__ ... #else ... #endif) is one function,
//   with its device definition on the device and its host one on the host;
// - a program's own `#ifdef __NVCC__` qualifier macros, and NVIDIA's include guards and error
//   codes (every value of <cuda.h>'s enum, such as CUDA_ERROR_PROFILER_DISABLED).
#include <cuda.h>
#include <cuda_runtime.h>
#include <cstdio>

#include "conformance_check.h"

#ifndef EXPECT_ARCH
#define EXPECT_ARCH 800
#endif

#ifdef __NVCC__
#define HD __host__ __device__
#else
#define HD
#endif

#if defined(__CUDA_ARCH__)
__device__ int pass_of() { return __CUDA_ARCH__; }
#else
int pass_of() { return -1; }
#endif

__host__ __device__ int twice(int x);
int twice(int x) { return 2 * x; }

HD int thrice(int x) { return 3 * x; }

// The macros as device code sees them: the values, or -1 for a macro the pass does not define.
__global__ void device_view(int* out) {
    out[0] = pass_of();
    out[1] = twice(21);
    out[2] = thrice(14);
#ifdef __CUDA_ARCH__
    out[3] = __CUDA_ARCH__;
#else
    out[3] = -1;
#endif
#ifdef __NVCC__
    out[4] = __CUDACC_VER_MAJOR__ * 100 + __CUDACC_VER_MINOR__;
#else
    out[4] = -1;
#endif
    out[5] = __CUDA_ARCH_LIST__;
}

int main() {
    CHECK(__NVCC__ == 1 && __CUDACC__ == 1);
    CHECK(__CUDACC_VER_MAJOR__ == CUDART_VERSION / 1000);
    CHECK(__CUDACC_VER_MINOR__ == CUDART_VERSION % 1000 / 10);
    CHECK(__CUDACC_VER_BUILD__ >= 0);
    CHECK(__CUDA_ARCH_LIST__ == EXPECT_ARCH);
#ifdef __CUDA_ARCH__
    CHECK(!"__CUDA_ARCH__ is defined in the host pass");
#endif
#if !defined(__CUDA_RUNTIME_H__) || !defined(__DRIVER_TYPES_H__) || !defined(__cuda_cuda_h__)
    CHECK(!"NVIDIA's include guards are not defined");
#endif
    CHECK(CUDA_ERROR_PROFILER_DISABLED == 5 && cudaErrorProfilerDisabled == 5);
    CHECK(pass_of() == -1 && twice(2) == 4 && thrice(2) == 6);

    int* d = nullptr;
    CHECK(cudaMallocManaged(&d, 6 * sizeof(int)) == cudaSuccess);
    device_view<<<1, 1>>>(d);
    CHECK(cudaDeviceSynchronize() == cudaSuccess);
    CHECK(d[0] == EXPECT_ARCH);
    CHECK(d[1] == 42 && d[2] == 42);
    CHECK(d[3] == EXPECT_ARCH);
    CHECK(d[4] == CUDART_VERSION / 1000 * 100 + CUDART_VERSION % 1000 / 10);
    CHECK(d[5] == EXPECT_ARCH);
    CHECK(cudaFree(d) == cudaSuccess);
    std::printf("nvcc_rules: OK\n");
    return 0;
}
