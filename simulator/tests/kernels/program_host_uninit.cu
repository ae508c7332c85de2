// A CPU reference accumulated into host memory it never cleared, as some benchmarks do: it reads
// zeros in fast mode (fresh pages) and must read the same under memcheck, which judges device
// code, unless its host checks are asked for (test_memcheck_host_memory.py).
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

__global__ void add_one(float* x, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += 1.0f;
}

int main() {
    const int n = 1 << 18;  // 1 MiB of floats
    float* ref = static_cast<float*>(std::malloc(n * sizeof(float)));
    for (int i = 0; i < n; ++i) ref[i] += 1.0f;  // never cleared
    float* d = nullptr;
    cudaMalloc(&d, n * sizeof(float));
    add_one<<<(n + 255) / 256, 256>>>(d, n);
    float* got = static_cast<float*>(std::calloc(n, sizeof(float)));
    cudaMemcpy(got, d, n * sizeof(float), cudaMemcpyDeviceToHost);
    int matching = 0;
    for (int i = 0; i < n; ++i) matching += got[i] == ref[i];
    std::printf("matching=%d\n", matching);
    std::free(got);
    std::free(ref);
    cudaFree(d);
    return matching == n ? 0 : 1;
}
