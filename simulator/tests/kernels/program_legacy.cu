// Older CUDA code as it exists in the wild: runtime calls and error codes gone from current
// CUDA, and C library calls made without their headers (NVIDIA's <cuda_runtime.h> brings them in).
// Not for nvcc 13, which no longer declares the legacy names.
#include <cstdio>

__global__ void add_one(int* v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) v[i] += 1;
}

int main() {
    const int n = 64;
    int host[n];
    for (int i = 0; i < n; ++i) host[i] = i;
    int* dev;
    cudaMalloc((void**)&dev, sizeof(host));
    cudaMemcpy(dev, host, sizeof(host), cudaMemcpyHostToDevice);
    for (int round = 0; round < 3; ++round) {
        add_one<<<2, 32>>>(dev, n);
        cudaThreadSynchronize();  // a note once, not three times
    }
    cudaError_t err = cudaGetLastError();
    if (err == cudaErrorMissingConfiguration || err == cudaErrorPriorLaunchFailure) return 3;
    cudaMemcpy(host, dev, sizeof(host), cudaMemcpyDeviceToHost);
    cudaFree(dev);
    size_t stack = 0;
    cudaThreadGetLimit(&stack, cudaLimitStackSize);
    int copy[n];
    memcpy(copy, host, sizeof(host));  // no <string.h>
    long long stamp = (long long)time(NULL);  // no <time.h>
    std::printf("last=%d\nstack=%zu\nclock_ok=%d\n", copy[n - 1], stack, stamp > 1000000000LL);
    std::printf("missing_configuration=%d %s\n", (int)cudaErrorMissingConfiguration,
                cudaGetErrorString(cudaErrorMissingConfiguration));
    cudaThreadExit();
    return 0;
}
