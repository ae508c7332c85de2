// racecheck: __syncwarp orders shared-memory accesses between the lanes of a warp; the same
// warp-synchronous exchange without it is a race. Also file-scope static and dynamic shared.
#include <cuda_runtime.h>
extern __shared__ float dynbuf[];
__shared__ int counter_tile[32];
__global__ void warp_exchange_kernel(float* out, bool use_syncwarp) {
    const int t = threadIdx.x;
    dynbuf[t] = (float)t;
    counter_tile[t] = t * 2;  // PLANT: write
    if (use_syncwarp) __syncwarp();
    out[t] = dynbuf[31 - t] + counter_tile[(t + 1) % 32];
}
static int run(bool sw) {
    float* d; float h[32];
    cudaMalloc(&d, sizeof h);
    warp_exchange_kernel<<<1, 32, 32 * sizeof(float)>>>(d, sw);
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    cudaFree(d);
    for (int t = 0; t < 32; ++t) if (h[t] != (31 - t) + ((t + 1) % 32) * 2) return 5;
    return 0;
}
extern "C" int with_syncwarp(void) { return run(true); }
extern "C" int without_syncwarp(void) { return run(false); }
