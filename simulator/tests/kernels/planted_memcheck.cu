// memcheck's planted bugs for `check` (test_check.py), each an entry with its fixed twin, in one
// source so that memcheck builds it once.
#include <cuda_runtime.h>

// memcheck plant: the bounds test lets thread n write one element past the buffer.
__global__ void scale_kernel(const float* in, float* out, int n, bool planted) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (planted ? i <= n : i < n) out[i] = 2.0f * in[i < n ? i : 0];  // PLANT: off by one
}

static int run_offbyone(bool planted) {
    const int n = 100;
    float host[n];
    for (int i = 0; i < n; ++i) host[i] = (float)i;
    float *d_in = NULL, *d_out = NULL;
    if (cudaMalloc(&d_in, n * sizeof(float)) != cudaSuccess) return 1;
    if (cudaMalloc(&d_out, n * sizeof(float)) != cudaSuccess) return 1;
    cudaMemcpy(d_in, host, n * sizeof(float), cudaMemcpyHostToDevice);
    scale_kernel<<<(n + 63) / 64, 64>>>(d_in, d_out, n, planted);
    cudaError_t err = cudaDeviceSynchronize();
    cudaMemcpy(host, d_out, n * sizeof(float), cudaMemcpyDeviceToHost);
    cudaFree(d_in);
    cudaFree(d_out);
    return err == cudaSuccess && host[n - 1] == 2.0f * (n - 1) ? 0 : 2;
}

extern "C" int planted_offbyone(void) { return run_offbyone(true); }
extern "C" int fixed_offbyone(void) { return run_offbyone(false); }

// memcheck plant: the input buffer is freed before the kernel that reads it is launched.
__global__ void copy_kernel(const float* in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i];  // PLANT: use after free
}

static int run_use_after_free(bool planted) {
    const int n = 32;
    float host[n] = {0};
    float *d_in = NULL, *d_out = NULL;
    if (cudaMalloc(&d_in, sizeof host) != cudaSuccess || cudaMalloc(&d_out, sizeof host) != cudaSuccess) return 1;
    cudaMemcpy(d_in, host, sizeof host, cudaMemcpyHostToDevice);
    if (planted) cudaFree(d_in);
    copy_kernel<<<1, n>>>(d_in, d_out, n);
    cudaError_t err = cudaMemcpy(host, d_out, sizeof host, cudaMemcpyDeviceToHost);
    if (!planted) cudaFree(d_in);
    cudaFree(d_out);
    return err == cudaSuccess ? 0 : 2;
}

extern "C" int planted_use_after_free(void) { return run_use_after_free(true); }
extern "C" int fixed_use_after_free(void) { return run_use_after_free(false); }

// memcheck plants: a shift into a static __shared__ tile reads one element past its end; a
// write into dynamic shared memory goes one element past the size the launch gave.
__global__ void shift_kernel(float* out, bool planted) {
    __shared__ float tile[64];
    const int t = threadIdx.x;
    tile[t] = (float)t;
    __syncthreads();
    const int src = planted ? t + 1 : (t + 1) % 64;
    out[t] = tile[src];  // PLANT: static shared read
}

static int run_shared(bool planted) {
    float* d = NULL;
    float host[64];
    if (cudaMalloc(&d, sizeof host) != cudaSuccess) return 1;
    shift_kernel<<<1, 64>>>(d, planted);
    cudaError_t err = cudaMemcpy(host, d, sizeof host, cudaMemcpyDeviceToHost);
    cudaFree(d);
    return err == cudaSuccess && host[0] == 1.0f ? 0 : 2;
}

extern "C" int planted_shared_oob(void) { return run_shared(true); }
extern "C" int fixed_shared_oob(void) { return run_shared(false); }

__global__ void dyn_kernel(float* out, int extra) {
    extern __shared__ float dyn[];
    const int t = threadIdx.x;
    dyn[t + extra] = (float)t;  // PLANT: dynamic shared write
    __syncthreads();
    out[t] = dyn[t];
}

static int run_dynamic(int extra) {
    float* d = NULL;
    float host[32];
    if (cudaMalloc(&d, sizeof host) != cudaSuccess) return 1;
    dyn_kernel<<<1, 32, 32 * sizeof(float)>>>(d, extra);
    cudaError_t err = cudaMemcpy(host, d, sizeof host, cudaMemcpyDeviceToHost);
    cudaFree(d);
    return err == cudaSuccess ? 0 : 2;
}

extern "C" int planted_dynamic_shared_oob(void) { return run_dynamic(1); }
extern "C" int fixed_dynamic_shared_oob(void) { return run_dynamic(0); }
