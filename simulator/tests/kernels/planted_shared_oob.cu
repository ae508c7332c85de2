// memcheck plants: a shift into a static __shared__ tile reads one element past its end; a
// write into dynamic shared memory goes one element past the size the launch gave.
#include <cuda_runtime.h>

__global__ void shift_kernel(float* out, bool planted) {
    __shared__ float tile[64];
    const int t = threadIdx.x;
    tile[t] = (float)t;
    __syncthreads();
    const int src = planted ? t + 1 : (t + 1) % 64;
    out[t] = tile[src];  // PLANT: static shared read
}

static int run(bool planted) {
    float* d = NULL;
    float host[64];
    if (cudaMalloc(&d, sizeof host) != cudaSuccess) return 1;
    shift_kernel<<<1, 64>>>(d, planted);
    cudaError_t err = cudaMemcpy(host, d, sizeof host, cudaMemcpyDeviceToHost);
    cudaFree(d);
    return err == cudaSuccess && host[0] == 1.0f ? 0 : 2;
}

extern "C" int planted_shared_oob(void) { return run(true); }
extern "C" int fixed_shared_oob(void) { return run(false); }

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
