// Warp-synchronous code: lanes of a warp exchange values through shared memory with no
// __syncwarp, leaning on a converged warp reading before any lane writes. Prints one line per
// case; the test computes the expected values in numpy.
#include <cooperative_groups.h>
#include <cstdio>

namespace cg = cooperative_groups;

struct Pair {
    float a, b;
};
__device__ Pair& operator+=(Pair& x, Pair y) {
    x.a += y.a;
    x.b += y.b;
    return x;
}

// The classic reduction: a block-wide tree down to 64 values, then the last warp unrolled on a
// volatile pointer.
__global__ void volatile_reduce(const int* in, int* out) {
    __shared__ int s[128];
    const unsigned tid = threadIdx.x;
    s[tid] = in[blockIdx.x * 128 + tid];
    __syncthreads();
    if (tid < 64) s[tid] += s[tid + 64];
    __syncthreads();
    if (tid < 32) {
        volatile int* v = s;
        v[tid] += v[tid + 32];
        v[tid] += v[tid + 16];
        v[tid] += v[tid + 8];
        v[tid] += v[tid + 4];
        v[tid] += v[tid + 2];
        v[tid] += v[tid + 1];
    }
    if (tid == 0) out[blockIdx.x] = s[0];
}

// A butterfly over 16 lanes (as NVIDIA's dxtc sample sums colours): every lane ends with the
// total, through an overloaded operator+= on a struct; a tile barrier between the steps only.
__global__ void butterfly(const float* in, float* out) {
    __shared__ Pair s[32];
    cg::thread_block block = cg::this_thread_block();
    cg::thread_group tile = cg::tiled_partition(block, 16);
    const int idx = threadIdx.x;
    if (idx < 16) {
        s[idx] = Pair{in[idx], 2.0f * in[idx]};
        cg::sync(tile);
        s[idx] += s[idx ^ 8];
        cg::sync(tile);
        s[idx] += s[idx ^ 4];
        cg::sync(tile);
        s[idx] += s[idx ^ 2];
        cg::sync(tile);
        s[idx] += s[idx ^ 1];
        out[2 * idx] = s[idx].a;
        out[2 * idx + 1] = s[idx].b;
    }
}

int main() {
    const int blocks = 3;
    int h_in[blocks * 128], h_out[blocks];
    for (int i = 0; i < blocks * 128; ++i) h_in[i] = (i * 37) % 101 - 50;
    int *d_in, *d_out;
    cudaMalloc(&d_in, sizeof h_in);
    cudaMalloc(&d_out, sizeof h_out);
    cudaMemcpy(d_in, h_in, sizeof h_in, cudaMemcpyHostToDevice);
    volatile_reduce<<<blocks, 128>>>(d_in, d_out);
    cudaMemcpy(h_out, d_out, sizeof h_out, cudaMemcpyDeviceToHost);
    std::printf("reduce");
    for (int b = 0; b < blocks; ++b) std::printf(" %d", h_out[b]);
    std::printf("\n");

    float f_in[16], f_out[32];
    for (int i = 0; i < 16; ++i) f_in[i] = 0.25f * (float)((i * 5) % 16);
    float *d_f, *d_fo;
    cudaMalloc(&d_f, sizeof f_in);
    cudaMalloc(&d_fo, sizeof f_out);
    cudaMemcpy(d_f, f_in, sizeof f_in, cudaMemcpyHostToDevice);
    butterfly<<<1, 64>>>(d_f, d_fo);
    cudaMemcpy(f_out, d_fo, sizeof f_out, cudaMemcpyDeviceToHost);
    std::printf("butterfly");
    for (int i = 0; i < 32; ++i) std::printf(" %g", f_out[i]);
    std::printf("\n");
    cudaFree(d_in);
    cudaFree(d_out);
    cudaFree(d_f);
    cudaFree(d_fo);
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
