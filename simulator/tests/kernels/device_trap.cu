// __trap(): the kernel stops and the launch fails with cudaErrorLaunchFailure, sticky.
#include <cuda_runtime.h>
#include <cstdio>

__global__ void trap_if(int* out, int bad) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i == bad) {
        __trap();
    }
    out[i] = i;
}

int main() {
    int* d;
    cudaMalloc(&d, 64 * sizeof(int));
    trap_if<<<2, 32>>>(d, -1);  // no thread traps
    std::printf("clean=%d\n", (int)cudaDeviceSynchronize());
    trap_if<<<2, 32>>>(d, 37);  // block 1, thread 5 traps
    std::printf("launch=%d\n", (int)cudaGetLastError());
    std::printf("sync=%d\n", (int)cudaDeviceSynchronize());
    std::printf("after=%d\n", (int)cudaMemcpy(d, d, 4, cudaMemcpyDeviceToDevice));
    std::printf("launch_failure=%d\n", (int)cudaErrorLaunchFailure);
    return 0;
}
