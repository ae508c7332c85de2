// Front-end conformance: __CUDA_ARCH__ is defined in device code only, as nvcc compiles it.
// Expects the simulator's default architecture (800); EXPECT_ARCH overrides it.
#include <cuda_runtime.h>
#include <cstdio>

#ifndef EXPECT_ARCH
#define EXPECT_ARCH 800
#endif

#include "conformance_check.h"

__device__ int device_arch() {
#ifdef __CUDA_ARCH__
    return __CUDA_ARCH__;
#else
    return -1;  // never compiled for the device
#endif
}

// Both versions: the device one inside kernels, the host one from host code.
__host__ __device__ int where_am_i() {
#if defined(__CUDA_ARCH__)
    return 1000 + __CUDA_ARCH__ / 100;
#else
    return 2;
#endif
}

// One macro defining several functors: their operator() share the file, line and name (and, in
// the preprocessed text, often the column), and each keeps its own device body.
#define FUNCTORS(NAME)                                                    \
    template <int N>                                                      \
    struct NAME##Add {                                                    \
        inline __device__ int operator()(int x) const { return x + N; }   \
    };                                                                    \
    template <int N>                                                      \
    struct NAME##Mul {                                                    \
        inline __device__ int operator()(int x) const { return x * N; }   \
    };                                                                    \
    template <int N>                                                      \
    struct NAME##Sub {                                                    \
        inline __device__ int operator()(int x) const { return N - x; }   \
    };
FUNCTORS(Op)

__global__ void arch_kernel(int* out) {
#if __CUDA_ARCH__ >= 700
    out[0] = device_arch();
#else
    out[0] = -7;
#endif
    out[1] = where_am_i();
    out[2] = OpAdd<3>()(10) * 10000 + OpMul<3>()(10) * 100 + OpSub<3>()(10) + 50;
}

int main() {
    int* d;
    int h[3] = {0, 0, 0};
    cudaMalloc(&d, sizeof h);
    arch_kernel<<<1, 1>>>(d);
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    cudaFree(d);
    CHECK(h[0] == (EXPECT_ARCH >= 700 ? EXPECT_ARCH : -7));
    CHECK(h[1] == 1000 + EXPECT_ARCH / 100);
    CHECK(h[2] == 13 * 10000 + 30 * 100 + (3 - 10) + 50);
    CHECK(where_am_i() == 2);
#ifdef __CUDA_ARCH__
    const bool host_sees_arch = true;
#else
    const bool host_sees_arch = false;
#endif
    CHECK(!host_sees_arch);
    std::printf("arch: OK\n");
    return 0;
}
