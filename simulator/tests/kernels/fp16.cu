// half and bfloat16: conversions, intrinsics, operators and the paired types, computed in a
// kernel from bit patterns given by the host. The same source builds with nvcc (sm_80+).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "entry_check.h"

// Per input float: half rn/rz/rd/ru bits, half back to float, bf16 rn/rz/rd/ru bits, bf16 back.
__global__ void convert_kernel(const float* in, unsigned short* bits, float* back, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const float f = __ldcs(in + i);
    const __half h = __float2half_rn(f);
    const __nv_bfloat16 b = __float2bfloat16(f);
    unsigned short* o = bits + i * 8;
    o[0] = __half_as_ushort(h);
    o[1] = __half_as_ushort(__float2half_rz(f));
    o[2] = __half_as_ushort(__float2half_rd(f));
    o[3] = __half_as_ushort(__float2half_ru(f));
    o[4] = __bfloat16_as_ushort(b);
    o[5] = __bfloat16_as_ushort(__float2bfloat16_rz(f));
    o[6] = __bfloat16_as_ushort(__float2bfloat16_rd(f));
    o[7] = __bfloat16_as_ushort(__float2bfloat16_ru(f));
    __stcs(back + i * 2, __half2float(h));
    __stwt(back + i * 2 + 1, __bfloat162float(b));
}

extern "C" int f16_convert(const float* in, unsigned short* bits, float* back, int n) {
    float *d_in, *d_back;
    unsigned short* d_bits;
    CHECK(cudaMalloc(&d_in, sizeof(float) * n));
    CHECK(cudaMalloc(&d_back, sizeof(float) * 2 * n));
    CHECK(cudaMalloc(&d_bits, sizeof(unsigned short) * 8 * n));
    CHECK(cudaMemcpy(d_in, in, sizeof(float) * n, cudaMemcpyHostToDevice));
    convert_kernel<<<(n + 63) / 64, 64>>>(d_in, d_bits, d_back, n);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(bits, d_bits, sizeof(unsigned short) * 8 * n, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(back, d_back, sizeof(float) * 2 * n, cudaMemcpyDeviceToHost));
    CHECK(cudaFree(d_in));
    CHECK(cudaFree(d_back));
    CHECK(cudaFree(d_bits));
    return 0;
}

// Per (a, b, c) triple of bit patterns, 12 results:
// hadd, hsub, hmul, hdiv, hfma, hmax, hmin, a*b+c with operators (two roundings), -a,
// comparison bits (lt | le<<1 | eq<<2 | ne<<3 | gt<<4 | ge<<5 | isnan(a)<<6), paired add
// (x: a+b, y: b+c) low and high.
template <class T, class T2, class Bits, class FromBits>
__device__ void arith(const unsigned short* in, unsigned short* out, Bits bits, FromBits from) {
    const T a = from(in[0]), b = from(in[1]), c = from(in[2]);
    out[0] = bits(__hadd(a, b));
    out[1] = bits(__hsub(a, b));
    out[2] = bits(__hmul(a, b));
    out[3] = bits(__hdiv(a, b));
    out[4] = bits(__hfma(a, b, c));
    out[5] = bits(__hmax(a, b));
    out[6] = bits(__hmin(a, b));
    T d = a * b;
    d += c;
    out[7] = bits(d);
    out[8] = bits(-a);
    out[9] = (unsigned short)((a < b) | ((a <= b) << 1) | ((a == b) << 2) | (__hne(a, b) << 3) | ((a > b) << 4) |
                              ((a >= b) << 5) | (__hisnan(a) << 6));
    T2 p;
    p.x = a;
    p.y = b;
    T2 q;
    q.x = b;
    q.y = c;
    const T2 r = __hadd2(p, q);
    out[10] = bits(r.x);
    out[11] = bits(r.y);
}

__global__ void arith_kernel(const unsigned short* in, unsigned short* out, int n, int bf16) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    if (bf16) {
        arith<__nv_bfloat16, __nv_bfloat162>(
            in + 3 * i, out + 12 * i, [](__nv_bfloat16 v) { return __bfloat16_as_ushort(v); },
            [](unsigned short v) { return __ushort_as_bfloat16(v); });
    } else {
        arith<__half, __half2>(
            in + 3 * i, out + 12 * i, [](__half v) { return __half_as_ushort(v); },
            [](unsigned short v) { return __ushort_as_half(v); });
    }
}

extern "C" int f16_arith(const unsigned short* in, unsigned short* out, int n, int bf16) {
    unsigned short *d_in, *d_out;
    CHECK(cudaMalloc(&d_in, sizeof(unsigned short) * 3 * n));
    CHECK(cudaMalloc(&d_out, sizeof(unsigned short) * 12 * n));
    CHECK(cudaMemcpy(d_in, in, sizeof(unsigned short) * 3 * n, cudaMemcpyHostToDevice));
    arith_kernel<<<(n + 31) / 32, 32>>>(d_in, d_out, n, bf16);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(out, d_out, sizeof(unsigned short) * 12 * n, cudaMemcpyDeviceToHost));
    CHECK(cudaFree(d_in));
    CHECK(cudaFree(d_out));
    return 0;
}

// A bf16 dot product per block with warp shuffles of __nv_bfloat162 and a float accumulator,
// and a half atomicAdd: out[block] = sum(x * y) over the block's 64 pairs; *count += 1 per thread.
__global__ void dot_kernel(const __nv_bfloat162* xy, float* out, __half* count) {
    const __nv_bfloat162 v = __ldg(xy + blockIdx.x * blockDim.x + threadIdx.x);
    float s = __bfloat162float(__hmul(v.x, v.y));
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    if ((threadIdx.x & 31) == 0) atomicAdd(out + blockIdx.x, s);
    atomicAdd(count, __float2half(1.0f));
}

extern "C" int f16_dot(const unsigned short* xy, float* out, unsigned short* count, int blocks) {
    __nv_bfloat162* d_xy;
    float* d_out;
    __half* d_count;
    CHECK(cudaMalloc(&d_xy, sizeof(__nv_bfloat162) * 64 * blocks));
    CHECK(cudaMalloc(&d_out, sizeof(float) * blocks));
    CHECK(cudaMalloc(&d_count, sizeof(__half)));
    CHECK(cudaMemcpy(d_xy, xy, sizeof(__nv_bfloat162) * 64 * blocks, cudaMemcpyHostToDevice));
    CHECK(cudaMemset(d_out, 0, sizeof(float) * blocks));
    CHECK(cudaMemset(d_count, 0, sizeof(__half)));
    dot_kernel<<<blocks, 64>>>(d_xy, d_out, d_count);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(out, d_out, sizeof(float) * blocks, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(count, d_count, sizeof(__half), cudaMemcpyDeviceToHost));
    CHECK(cudaFree(d_xy));
    CHECK(cudaFree(d_out));
    CHECK(cudaFree(d_count));
    return 0;
}

// Cache-hint loads and stores in a template kernel (names looked up at instantiation):
// out[6 i + k] = in[i] through each load hint and each store hint.
template <class T>
__global__ void hints_kernel(const T* in, T* out, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    __stcg(out + 6 * i + 0, __ldcg(in + i));
    __stcs(out + 6 * i + 1, __ldca(in + i));
    __stwb(out + 6 * i + 2, __ldcs(in + i));
    __stwt(out + 6 * i + 3, __ldlu(in + i));
    __stcg(out + 6 * i + 4, __ldcv(in + i));
    __stcs(out + 6 * i + 5, __ldg(in + i));
}

extern "C" int cache_hints(const double* in, double* out, int n) {
    double *d_in, *d_out;
    CHECK(cudaMalloc(&d_in, sizeof(double) * n));
    CHECK(cudaMalloc(&d_out, sizeof(double) * 6 * n));
    CHECK(cudaMemcpy(d_in, in, sizeof(double) * n, cudaMemcpyHostToDevice));
    hints_kernel<<<(n + 63) / 64, 64>>>(d_in, d_out, n);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(out, d_out, sizeof(double) * 6 * n, cudaMemcpyDeviceToHost));
    CHECK(cudaFree(d_in));
    CHECK(cudaFree(d_out));
    return 0;
}
