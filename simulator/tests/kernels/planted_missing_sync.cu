// racecheck plant: each thread reads its neighbour's shared slot with no barrier between the
// neighbour's write and the read.
#include <cuda_runtime.h>

__global__ void neighbour_kernel(const float* in, float* out, bool planted) {
    extern __shared__ float buf[];
    const int t = threadIdx.x;
    buf[t] = in[blockIdx.x * blockDim.x + t];  // PLANT: write
    if (!planted) __syncthreads();
    out[blockIdx.x * blockDim.x + t] = buf[(t + 1) % blockDim.x];  // PLANT: read
}

static int run(bool planted) {
    const int n = 128;
    float host[n];
    for (int i = 0; i < n; ++i) host[i] = (float)i;
    float *d_in = NULL, *d_out = NULL;
    if (cudaMalloc(&d_in, sizeof host) != cudaSuccess || cudaMalloc(&d_out, sizeof host) != cudaSuccess) return 1;
    cudaMemcpy(d_in, host, sizeof host, cudaMemcpyHostToDevice);
    neighbour_kernel<<<2, 64, 64 * sizeof(float)>>>(d_in, d_out, planted);
    cudaError_t err = cudaMemcpy(host, d_out, sizeof host, cudaMemcpyDeviceToHost);
    cudaFree(d_in);
    cudaFree(d_out);
    return err == cudaSuccess ? 0 : 2;
}

extern "C" int planted_missing_sync(void) { return run(true); }
extern "C" int fixed_missing_sync(void) { return run(false); }
