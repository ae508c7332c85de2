// synccheck's planted bugs for `check` (test_check.py), each an entry with its fixed twin, in one
// source so that synccheck builds it once.
#include <cuda_runtime.h>

// synccheck plant: the first half-block waits at a barrier inside a branch the other half
// never takes; the other half waits at the barrier after it.
__global__ void halves_kernel(float* out, bool planted) {
    __shared__ float s[64];
    const int t = threadIdx.x;
    s[t] = (float)t;
    if (planted) {
        if (t < 32) {
            s[t] += 1.0f;
            __syncthreads();  // PLANT: barrier in the branch
        }
    } else {
        if (t < 32) s[t] += 1.0f;
    }
    __syncthreads();
    out[t] = s[63 - t];
}

static int run_halves(bool planted) {
    float* d = NULL;
    float host[64];
    if (cudaMalloc(&d, sizeof host) != cudaSuccess) return 1;
    halves_kernel<<<1, 64>>>(d, planted);
    cudaError_t err = cudaDeviceSynchronize();
    if (err == cudaSuccess) err = cudaMemcpy(host, d, sizeof host, cudaMemcpyDeviceToHost);
    cudaFree(d);
    return err == cudaSuccess ? 0 : 2;
}

extern "C" int planted_divergent_barrier(void) { return run_halves(true); }
extern "C" int fixed_divergent_barrier(void) { return run_halves(false); }

// synccheck plant: half a warp shuffles with a full mask while the other half has left the
// branch and exited, so the mask names lanes that will never arrive.
__global__ void shift_down_kernel(int* out, bool planted) {
    const int lane = threadIdx.x & 31;
    int v = lane;
    if (planted) {
        if (lane < 16) v = __shfl_down_sync(0xffffffffu, v, 1);  // PLANT: half-warp shuffle
        else return;
    } else {
        v = __shfl_down_sync(0xffffffffu, v, 1);
    }
    out[threadIdx.x] = v;
}

static int run_shift_down(bool planted) {
    int* d = NULL;
    int host[32];
    if (cudaMalloc(&d, sizeof host) != cudaSuccess) return 1;
    cudaMemset(d, 0, sizeof host);
    shift_down_kernel<<<1, 32>>>(d, planted);
    cudaError_t err = cudaMemcpy(host, d, sizeof host, cudaMemcpyDeviceToHost);
    cudaFree(d);
    return err == cudaSuccess ? 0 : 2;
}

extern "C" int planted_divergent_shuffle(void) { return run_shift_down(true); }
extern "C" int fixed_divergent_shuffle(void) { return run_shift_down(false); }

// synccheck plants that the source line alone cannot tell apart: divergent barriers and warp
// operations written on one line or inside one __device__ helper, where threads take different
// numbers of them. Each differs from its fixed twin only in which threads take which calls.
__device__ void block_sync() { __syncthreads(); }  // PLANT: helper barrier

__device__ int warp_sum(int v) {
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);  // PLANT: helper shuffle
    return v;
}

// Same line: the first half of the block takes two barriers on the line, the rest one.
__global__ void same_line_kernel(float* out, bool planted) {
    __shared__ float s[64];
    const int t = threadIdx.x;
    s[t] = (float)t;
    const bool first = planted ? t < 32 : true;
    if (first) { __syncthreads(); s[t] += 1.0f; __syncthreads(); } else { __syncthreads(); }  // PLANT: same line
    out[t] = s[63 - t];
}

// Helper: threads in [lo, hi) call block_sync() twice, the others once. With [0, 32) the
// second barrier is reached after the other half has left; with [32, 64) the other half
// leaves while the second barrier is waited at.
__global__ void helper_barrier_kernel(float* out, int lo, int hi) {
    __shared__ float s[64];
    const int t = threadIdx.x;
    s[t] = (float)t;
    if (t >= lo && t < hi) {
        block_sync();
        s[t] += 1.0f;
        block_sync();
    } else {
        block_sync();
    }
    out[t] = s[63 - t];
}

// Helper shuffle: lanes 0-15 call warp_sum twice, lanes 16-31 once and then leave, so the
// second call's full mask names lanes that have exited (caught before this file was written:
// warp operations wait for every lane of their mask, which exited lanes never reach).
__global__ void helper_shuffle_kernel(int* out, bool planted) {
    const int lane = threadIdx.x & 31;
    int v = warp_sum(lane);
    if (!planted || lane < 16) v = warp_sum(v);
    out[threadIdx.x] = v;
}

// Correct: threads past the end return before any barrier; the rest take the same barriers.
__global__ void early_return_kernel(float* out, int n) {
    __shared__ float s[64];
    const int t = threadIdx.x;
    if (t >= n) return;
    s[t] = (float)t;
    block_sync();
    s[t] += s[n - 1 - t];
    block_sync();
    out[t] = s[t];
}

extern "C" int early_return_then_barriers(void) {
    float* d = NULL;
    if (cudaMalloc(&d, 64 * sizeof(float)) != cudaSuccess) return 1;
    early_return_kernel<<<1, 64>>>(d, 40);
    cudaError_t err = cudaDeviceSynchronize();
    cudaFree(d);
    return err == cudaSuccess ? 0 : 2;
}

// which: 0 same line, 1 and 3 helper barrier, 2 helper shuffle.
static int run(int which, bool planted) {
    void* d = NULL;
    if (cudaMalloc(&d, 64 * sizeof(float)) != cudaSuccess) return 1;
    if (which == 0) same_line_kernel<<<1, 64>>>((float*)d, planted);
    if (which == 1) helper_barrier_kernel<<<1, 64>>>((float*)d, 0, planted ? 32 : 64);
    if (which == 3) helper_barrier_kernel<<<1, 64>>>((float*)d, planted ? 32 : 0, 64);
    if (which == 2) helper_shuffle_kernel<<<1, 64>>>((int*)d, planted);
    cudaError_t err = cudaDeviceSynchronize();
    float host[64];
    if (err == cudaSuccess) err = cudaMemcpy(host, d, sizeof host, cudaMemcpyDeviceToHost);
    cudaFree(d);
    return err == cudaSuccess ? 0 : 2;
}

extern "C" int planted_same_line_barrier(void) { return run(0, true); }
extern "C" int fixed_same_line_barrier(void) { return run(0, false); }
extern "C" int planted_helper_barrier(void) { return run(1, true); }
extern "C" int fixed_helper_barrier(void) { return run(1, false); }
extern "C" int planted_helper_barrier_exit(void) { return run(3, true); }
extern "C" int fixed_helper_barrier_exit(void) { return run(3, false); }
extern "C" int planted_helper_shuffle(void) { return run(2, true); }
extern "C" int fixed_helper_shuffle(void) { return run(2, false); }
