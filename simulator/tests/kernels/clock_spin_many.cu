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

static void report(const char* name, const unsigned int* reads, const unsigned int* seen, int count) {
    unsigned int min_seen = seen[0], max_reads = 0;
    // The median number of reads: a count of how many threads read at most k times.
    unsigned int hist[65] = {0};
    for (int i = 0; i < count; ++i) {
        if (seen[i] < min_seen) min_seen = seen[i];
        if (reads[i] > max_reads) max_reads = reads[i];
        hist[reads[i] < 64 ? reads[i] : 64]++;
    }
    unsigned int median = 64, below = 0;
    for (unsigned int k = 0; k <= 64; ++k) {
        below += hist[k];
        if (2 * below >= (unsigned int)count) {
            median = k;
            break;
        }
    }
    printf("%s_min_seen=%u\n%s_median_reads=%u\n%s_max_reads=%u\n", name, min_seen, name, median, name, max_reads);
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
