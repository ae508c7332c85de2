// Every thread of a launch spins on the clock, as NVIDIA's graphMemoryFootprint (clock(), in a
// kernel without barriers) and p2pBandwidthLatencyTest (clock64()) do. Each thread records how
// many times it read the clock and how many cycles it saw pass; one kernel also waits at a
// barrier, so its threads run as fibers rather than in the plain loop.
#include <cuda_runtime.h>
#include <cstdio>
#include <ctime>

__global__ void spin_clock(unsigned int cycles, unsigned int* reads, unsigned int* seen) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned int start = (unsigned int)clock();
    unsigned int now = start;
    unsigned int n = 0;
    while (now - start < cycles) {
        now = (unsigned int)clock();
        ++n;
    }
    reads[i] = n;
    seen[i] = now - start;
}

__global__ void spin_clock64_after_barrier(long long cycles, unsigned int* reads, unsigned int* seen) {
    __syncthreads();
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const long long start = clock64();
    long long now = start;
    unsigned int n = 0;
    while (now - start < cycles) {
        now = clock64();
        ++n;
    }
    reads[i] = n;
    seen[i] = (unsigned int)(now - start);
}

// One line per thread: the test takes the least cycles seen and the median number of reads.
static void report(const char* name, const unsigned int* reads, const unsigned int* seen, int count) {
    for (int i = 0; i < count; ++i) printf("%s reads=%u seen=%u\n", name, reads[i], seen[i]);
}

int main() {
    int rate_khz = 0;
    cudaDeviceGetAttribute(&rate_khz, cudaDevAttrClockRate, 0);
    const unsigned int cycles = (unsigned int)rate_khz * 2;  // 2 ms of the device's clock
    const int blocks = 4, threads = 64, count = blocks * threads;
    unsigned int *reads, *seen;
    cudaMallocManaged(&reads, count * sizeof(unsigned int));
    cudaMallocManaged(&seen, count * sizeof(unsigned int));
    printf("cycles=%u\n", cycles);

    spin_clock<<<blocks, threads>>>(cycles, reads, seen);
    cudaError_t err = cudaDeviceSynchronize();
    report("clock", reads, seen, count);

    spin_clock64_after_barrier<<<blocks, threads>>>((long long)cycles, reads, seen);
    cudaError_t err64 = cudaDeviceSynchronize();
    report("clock64", reads, seen, count);

    printf("err=%d\n", (int)(err != cudaSuccess || err64 != cudaSuccess));
    cudaFree(reads);
    cudaFree(seen);
    return 0;
}
