// Device clock(): the SM's cycle counter (as clock64()), not the C library's CPU-time clock.
// The kernel spins as NVIDIA's simpleHyperQ does, until clock() has advanced by `cycles`.
#include <cuda_runtime.h>
#include <cstdio>
#include <ctime>

// The counter is 32 bits wide, as on a GPU: differences are taken modulo 2^32 so that a spin
// across its wrap still ends.
__device__ void spin(unsigned int cycles) {
    clock_t start = clock();
    clock_t now = start;
    while ((unsigned int)(now - start) < cycles) now = clock();
}

__global__ void timed_spin(unsigned int cycles, long long* out) {
    long long t0 = clock64();
    clock_t c0 = clock();
    spin(cycles);
    clock_t c1 = clock();
    long long t1 = clock64();
    out[0] = (long long)(unsigned int)(c1 - c0);
    out[1] = t1 - t0;
}

int main() {
    int rate_khz = 0;
    cudaDeviceGetAttribute(&rate_khz, cudaDevAttrClockRate, 0);
    const int ms = 2;
    long long* d;
    long long h[2] = {0, 0};
    cudaMalloc(&d, sizeof h);
    clock_t host0 = clock();  // host code: the C library's clock()
    timed_spin<<<1, 1>>>((unsigned int)rate_khz * ms, d);
    cudaError_t err = cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    clock_t host1 = clock();
    cudaFree(d);
    std::printf("err=%d\n", (int)err);
    std::printf("rate_khz=%d\n", rate_khz);
    std::printf("target=%lld\n", (long long)rate_khz * ms);
    std::printf("clock_delta=%lld\n", h[0]);
    std::printf("clock64_delta=%lld\n", h[1]);
    std::printf("host_clock_ok=%d\n", (int)(host1 >= host0 && host0 >= 0));
    return 0;
}
