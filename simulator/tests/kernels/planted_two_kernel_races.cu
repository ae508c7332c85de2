// Two kernels, launched one after the other, each with a race between the same two thread
// indices: each report must name its own kernel and lines.
#include <cuda_runtime.h>

__global__ void first_racy_kernel(int* d) {
    if (threadIdx.x == 1) d[0] = 1;     // PLANT: first write
    if (threadIdx.x == 0) d[1] = d[0];  // PLANT: first read
}

__global__ void second_racy_kernel(int* d) {
    if (threadIdx.x == 1) d[2] = 2;     // PLANT: second write
    if (threadIdx.x == 0) d[3] = d[2];  // PLANT: second read
}

extern "C" int planted_two_kernel_races(void) {
    int* d;
    if (cudaMalloc(&d, 4 * sizeof(int)) != cudaSuccess) return 1;
    if (cudaMemset(d, 0, 4 * sizeof(int)) != cudaSuccess) return 1;
    first_racy_kernel<<<1, 32>>>(d);
    second_racy_kernel<<<1, 32>>>(d);
    if (cudaDeviceSynchronize() != cudaSuccess) return 1;
    return cudaFree(d) == cudaSuccess ? 0 : 1;
}
