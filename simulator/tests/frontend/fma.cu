// Front-end conformance: device arithmetic as nvcc compiles it by default (-fmad=true). In device
// code a * b + c is one fused multiply-add (rounded once, as fmaf), __fmul_rn and __fadd_rn are
// never contracted, and __fmaf_rn is the fused operation; host code is compiled as the host
// compiler compiles it (no contraction on baseline x86-64).
#include <cuda_runtime.h>
#include <cmath>
#include <cstdio>

#include "conformance_check.h"

__global__ void contract(const float* in, float* out) {
    const float a = in[0], b = in[1], c = in[2];
    out[0] = a * b + c;
    out[1] = __fadd_rn(__fmul_rn(a, b), c);
    out[2] = __fmaf_rn(a, b, c);
    out[3] = __fmul_rn(a, b) + c;
}

// The product rounded to float, then the sum rounded: what an unfused multiply and add give.
static float unfused(float a, float b, float c) {
    volatile float product = a * b;
    volatile float sum = product + c;
    return sum;
}

int main() {
    // (1 + 2^-12)^2 = 1 + 2^-11 + 2^-24 needs 25 bits: the unfused product rounds 2^-24 away.
    const float a = 1.0f + 1.0f / 4096.0f, c = -1.0f;
    float* buf = nullptr;
    CHECK(cudaMallocManaged(&buf, 7 * sizeof(float)) == cudaSuccess);
    buf[0] = a;
    buf[1] = a;
    buf[2] = c;
    contract<<<1, 1>>>(buf, buf + 3);
    CHECK(cudaDeviceSynchronize() == cudaSuccess);
    const float fused = std::fmaf(a, a, c), plain = unfused(a, a, c);
    CHECK(fused != plain);
    CHECK(buf[3] == fused);
    CHECK(buf[4] == plain);
    CHECK(buf[5] == fused);
    CHECK(buf[6] == plain);
    volatile float ha = a, hc = c;  // host code: the host compiler's arithmetic
    CHECK(ha * ha + hc == plain);
    CHECK(cudaFree(buf) == cudaSuccess);
    std::printf("fma: OK\n");
    return 0;
}
