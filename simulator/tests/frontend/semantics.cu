// Front-end conformance: built-in names in host code, PTX shift semantics in device code, an
// extended __device__ lambda written in host code (nvcc: --extended-lambda).
#include <cuda_runtime.h>
#include <cstdio>

#include "conformance_check.h"

// Host code may name its own variables and members like the device built-ins.
struct Launch {
    dim3 gridDim;
    dim3 blockDim;
};
static int threadIdx_count(int threadIdx) { return threadIdx + 1; }

// On the GPU a shift by the operand's width or more gives 0 (sign for a signed right shift);
// the count is read as unsigned, so a negative count shifts everything out too.
__global__ void shifts(unsigned* bits, int* sr, unsigned long long* wide) {
    const unsigned tid = threadIdx.x;
    bits[tid] = 1u << tid;
    sr[tid] = -8 >> tid;
    unsigned long long w = 1ull;
    w <<= tid;
    wide[tid] = w;
    if (tid == 0) {
        int neg = -1;
        bits[64] = 1u << neg;
        unsigned x = 0xF0u;
        x >>= 40;
        bits[65] = x;
    }
}

template <class F>
__global__ void apply(int* out, F f) { out[threadIdx.x] = f(threadIdx.x); }

int main() {
    Launch launch;
    launch.gridDim = dim3(1);
    launch.blockDim = dim3(64);
    const int warpSize = 3;
    CHECK(threadIdx_count(warpSize) == 4);

    unsigned* bits;
    int* sr;
    unsigned long long* wide;
    cudaMalloc(&bits, 66 * sizeof(unsigned));
    cudaMalloc(&sr, 64 * sizeof(int));
    cudaMalloc(&wide, 64 * sizeof(unsigned long long));
    shifts<<<launch.gridDim, launch.blockDim>>>(bits, sr, wide);
    unsigned hb[66];
    int hs[64];
    unsigned long long hw[64];
    cudaMemcpy(hb, bits, sizeof hb, cudaMemcpyDeviceToHost);
    cudaMemcpy(hs, sr, sizeof hs, cudaMemcpyDeviceToHost);
    cudaMemcpy(hw, wide, sizeof hw, cudaMemcpyDeviceToHost);
    for (int t = 0; t < 64; t++) {
        CHECK(hb[t] == (t < 32 ? (1u << t) : 0u));
        CHECK(hs[t] == (t < 3 ? (-8 / (1 << t)) : -1));
        CHECK(hw[t] == (1ull << t));
    }
    int* lam;
    int hl[4];
    cudaMalloc(&lam, sizeof hl);
    auto twice = [] __device__(unsigned i) { return (int)(2 * i + blockDim.x); };
    apply<<<1, 4>>>(lam, twice);
    cudaMemcpy(hl, lam, sizeof hl, cudaMemcpyDeviceToHost);
    cudaFree(lam);
    for (int t = 0; t < 4; t++) CHECK(hl[t] == 2 * t + 4);
    CHECK(hb[64] == 0u);
    CHECK(hb[65] == 0u);
    cudaFree(bits);
    cudaFree(sr);
    cudaFree(wide);
    std::printf("semantics: OK\n");
    return 0;
}
