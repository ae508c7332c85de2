// A __global__ function called from host code without <<<...>>> through a template parameter,
// as llm.c's benchmark_kernel does (a program bug nvcc cannot see): the kernel does not run and
// the call records cudaErrorMissingConfiguration.
#include <cuda_runtime.h>
#include <cstdio>

__global__ void set_value(int* p, int v) { p[threadIdx.x] = v; }

template <class Kernel, class... Args>
void call_plain(Kernel kernel, Args... args) {
    kernel(args...);
}

int main() {
    int* d;
    int h[2] = {0, 0};
    cudaMalloc(&d, sizeof h);
    cudaMemset(d, 0, sizeof h);
    call_plain(set_value, d, 5);
    std::printf("call=%d\n", (int)cudaGetLastError());
    std::printf("cleared=%d\n", (int)cudaGetLastError());
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    std::printf("untouched=%d\n", (int)(h[0] == 0 && h[1] == 0));
    set_value<<<1, 2>>>(d, 9);  // a configured launch still works afterwards
    std::printf("launch=%d\n", (int)cudaDeviceSynchronize());
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    cudaFree(d);
    std::printf("h0=%d\nh1=%d\n", h[0], h[1]);
    std::printf("missing_configuration=%d\n", (int)cudaErrorMissingConfiguration);
    return 0;
}
