// memcheck plant: the bounds test lets thread n write one element past the buffer.
#include <cuda_runtime.h>

__global__ void scale_kernel(const float* in, float* out, int n, bool planted) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (planted ? i <= n : i < n) out[i] = 2.0f * in[i < n ? i : 0];  // PLANT
}

static int run(bool planted) {
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

extern "C" int planted_offbyone(void) { return run(true); }
extern "C" int fixed_offbyone(void) { return run(false); }
