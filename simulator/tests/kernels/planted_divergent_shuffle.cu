// synccheck plant: half a warp shuffles with a full mask while the other half has left the
// branch and exited, so the mask names lanes that will never arrive.
#include <cuda_runtime.h>

__global__ void shift_down_kernel(int* out, bool planted) {
    const int lane = threadIdx.x & 31;
    int v = lane;
    if (planted) {
        if (lane < 16) v = __shfl_down_sync(0xffffffffu, v, 1);  // PLANT
        else return;
    } else {
        v = __shfl_down_sync(0xffffffffu, v, 1);
    }
    out[threadIdx.x] = v;
}

static int run(bool planted) {
    int* d = NULL;
    int host[32];
    if (cudaMalloc(&d, sizeof host) != cudaSuccess) return 1;
    cudaMemset(d, 0, sizeof host);
    shift_down_kernel<<<1, 32>>>(d, planted);
    cudaError_t err = cudaMemcpy(host, d, sizeof host, cudaMemcpyDeviceToHost);
    cudaFree(d);
    return err == cudaSuccess ? 0 : 2;
}

extern "C" int planted_divergent_shuffle(void) { return run(true); }
extern "C" int fixed_divergent_shuffle(void) { return run(false); }
