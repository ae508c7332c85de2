// Front-end conformance: __shared__ variables in every form nvcc accepts.
#include <cuda_runtime.h>
#include <cstdio>

#include "conformance_check.h"

#define SHARED_TILE(T, name, n) __shared__ T name[n]
#define N 32

extern __shared__ float file_dyn[];  // file-scope dynamic shared memory

// Several declarators in one declaration, a 2-D array and a scalar.
__global__ void several(int* out) {
    __shared__ int a[N], b[N], total;
    __shared__ float grid2d[4][N / 4];
    const int t = threadIdx.x;
    a[t] = t;
    b[t] = 2 * t;
    grid2d[t % 4][t / 4] = (float)t;
    if (t == 0) total = 0;
    __syncthreads();
    atomicAdd(&total, a[t] + b[t]);
    __syncthreads();
    out[t] = total + (int)grid2d[t % 4][t / 4] - t;
}

// Through a macro, and in a template whose size depends on the template argument.
template <class T, int B>
__global__ void block_sum(const T* in, T* out) {
    SHARED_TILE(T, tile, B);
    const int t = threadIdx.x;
    tile[t] = in[t];
    __syncthreads();
    for (int s = B / 2; s > 0; s >>= 1) {
        if (t < s) tile[t] += tile[t + s];
        __syncthreads();
    }
    if (t == 0) out[0] = tile[0];
}

// Dynamic shared memory, at function scope (2-D view) and at file scope.
__global__ void dynamic(int* out) {
    extern __shared__ int dyn[][4];
    const int t = threadIdx.x;
    dyn[t / 4][t % 4] = t * 3;
    file_dyn[64 + t] = 1.0f;
    __syncthreads();
    out[t] = dyn[(N - 1 - t) / 4][(N - 1 - t) % 4] + (int)file_dyn[64 + (N - 1 - t)];
}

// A __device__ function with its own shared variable, called from a kernel.
__device__ int bump() {
    static __shared__ int counter;
    if (threadIdx.x == 0) counter = 100;
    __syncthreads();
    return counter;
}
__global__ void via_device(int* out) { out[threadIdx.x] = bump() + threadIdx.x; }

int main() {
    int* d;
    int h[N];
    cudaMalloc(&d, N * sizeof(int));

    several<<<1, N>>>(d);
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    for (int t = 0; t < N; t++) CHECK(h[t] == 3 * (N * (N - 1) / 2));

    float fin[N], fout = 0;
    double din[16], dout = 0;
    for (int i = 0; i < N; i++) fin[i] = 0.5f * i;
    for (int i = 0; i < 16; i++) din[i] = i;
    float* fd;
    double* dd;
    cudaMalloc(&fd, (N + 1) * sizeof(float));
    cudaMalloc(&dd, 17 * sizeof(double));
    cudaMemcpy(fd, fin, sizeof fin, cudaMemcpyHostToDevice);
    cudaMemcpy(dd, din, sizeof din, cudaMemcpyHostToDevice);
    block_sum<float, N><<<1, N>>>(fd, fd + N);
    block_sum<double, 16><<<1, 16>>>(dd, dd + 16);
    cudaMemcpy(&fout, fd + N, sizeof fout, cudaMemcpyDeviceToHost);
    cudaMemcpy(&dout, dd + 16, sizeof dout, cudaMemcpyDeviceToHost);
    CHECK(fout == 0.5f * (N * (N - 1) / 2));
    CHECK(dout == 120.0);

    dynamic<<<1, N, (64 + N) * sizeof(float)>>>(d);
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    for (int t = 0; t < N; t++) CHECK(h[t] == 3 * (N - 1 - t) + 1);

    via_device<<<2, N>>>(d);
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    for (int t = 0; t < N; t++) CHECK(h[t] == 100 + t);
    CHECK(cudaGetLastError() == cudaSuccess);

    cudaFree(d);
    cudaFree(fd);
    cudaFree(dd);
    std::printf("shared: OK\n");
    return 0;
}
