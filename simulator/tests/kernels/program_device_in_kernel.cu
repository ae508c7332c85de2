// cudaGetDevice in device code (the device runtime; nvcc needs -rdc=true) names the device the
// launch runs on: the launching host thread's current device. Run with --devices 3 or more.
#include <cuda_runtime.h>

#include <cstdio>

__global__ void where(int* out) { cudaGetDevice(out); }

int main() {
    int* seen = nullptr;
    cudaMallocManaged(&seen, 3 * sizeof(int));
    for (int d = 2; d >= 0; --d) {
        seen[d] = -1;
        cudaSetDevice(d);
        where<<<1, 1>>>(seen + d);
    }
    std::printf("launch=%s seen0=%d seen1=%d seen2=%d\n", cudaGetErrorName(cudaDeviceSynchronize()), seen[0],
                seen[1], seen[2]);
    cudaFree(seen);
    return 0;
}
