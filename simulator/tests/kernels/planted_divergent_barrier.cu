// synccheck plant: the first half-block waits at a barrier inside a branch the other half
// never takes; the other half waits at the barrier after it.
#include <cuda_runtime.h>

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

static int run(bool planted) {
    float* d = NULL;
    float host[64];
    if (cudaMalloc(&d, sizeof host) != cudaSuccess) return 1;
    halves_kernel<<<1, 64>>>(d, planted);
    cudaError_t err = cudaDeviceSynchronize();
    if (err == cudaSuccess) err = cudaMemcpy(host, d, sizeof host, cudaMemcpyDeviceToHost);
    cudaFree(d);
    return err == cudaSuccess ? 0 : 2;
}

extern "C" int planted_divergent_barrier(void) { return run(true); }
extern "C" int fixed_divergent_barrier(void) { return run(false); }
