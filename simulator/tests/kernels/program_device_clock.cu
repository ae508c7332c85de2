// clock() in device code, as CUDA provides it (simpleHyperQ's clock_block spins on it): the
// build accepts it and the count never runs backwards within a thread.
#include <cstdio>
#include <ctime>
#include <cuda_runtime.h>

__device__ long spin(int rounds, clock_t* first, clock_t* last) {
    *first = clock();
    long acc = 0;
    for (int r = 0; r < rounds; ++r) acc += r % 7;
    *last = clock();
    return acc;
}

__global__ void timed(int rounds, long* sums, int* forward) {
    clock_t a, b;
    sums[threadIdx.x] = spin(rounds, &a, &b);
    forward[threadIdx.x] = (b >= a) ? 1 : 0;
}

int main() {
    const int n = 32, rounds = 1000;
    long* sums;
    int* forward;
    cudaMallocManaged(&sums, n * sizeof(long));
    cudaMallocManaged(&forward, n * sizeof(int));
    timed<<<1, n>>>(rounds, sums, forward);
    cudaDeviceSynchronize();
    int all_forward = 1;
    for (int i = 0; i < n; ++i) all_forward &= forward[i];
    printf("sum0=%ld\nforward=%d\n", sums[0], all_forward);
    printf("error=%s\n", cudaGetErrorName(cudaGetLastError()));
    cudaFree(sums);
    cudaFree(forward);
    return 0;
}
