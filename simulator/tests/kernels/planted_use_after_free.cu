// memcheck plant: the input buffer is freed before the kernel that reads it is launched.
#include <cuda_runtime.h>

__global__ void copy_kernel(const float* in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i];  // PLANT
}

static int run(bool planted) {
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

extern "C" int planted_use_after_free(void) { return run(true); }
extern "C" int fixed_use_after_free(void) { return run(false); }
