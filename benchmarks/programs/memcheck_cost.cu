// Workloads for benchmarks/bench_memcheck.py: one per argument (vadd, matmul, reduce, compute), each
// a common kernel shape (many short threads, tiles with barriers, a tree reduction, a long loop).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
#define TILE 16
__global__ void vadd(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
__global__ void matmul(const float* A, const float* B, float* C, int n) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.f;
    for (int t = 0; t < n / TILE; ++t) {
        As[threadIdx.y][threadIdx.x] = A[row * n + t * TILE + threadIdx.x];
        Bs[threadIdx.y][threadIdx.x] = B[(t * TILE + threadIdx.y) * n + col];
        __syncthreads();
        for (int k = 0; k < TILE; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        __syncthreads();
    }
    C[row * n + col] = acc;
}
__global__ void reduce(const float* x, float* out, int n) {
    extern __shared__ float s[];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = 0.f;
    for (int j = i; j < n; j += gridDim.x * blockDim.x) v += x[j];
    s[threadIdx.x] = v;
    __syncthreads();
    for (int st = blockDim.x / 2; st > 0; st >>= 1) {
        if (threadIdx.x < st) s[threadIdx.x] += s[threadIdx.x + st];
        __syncthreads();
    }
    if (threadIdx.x == 0) atomicAdd(out, s[0]);
}
__global__ void compute(float* x, int n, int iters) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i];
    for (int k = 0; k < iters; ++k) v = v * 0.999f + 0.001f * (float)(k & 7);
    x[i] = v;
}
int main(int argc, char** argv) {
    const char* which = argc > 1 ? argv[1] : "all";
    int n = 1 << 22;
    float *a, *b, *c, *out;
    cudaMalloc(&a, n * sizeof(float)); cudaMalloc(&b, n * sizeof(float)); cudaMalloc(&c, n * sizeof(float));
    cudaMalloc(&out, sizeof(float));
    float* h = (float*)malloc(n * sizeof(float));
    for (int i = 0; i < n; ++i) h[i] = (float)(i % 13) * 0.25f;
    cudaMemcpy(a, h, n * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemcpy(b, h, n * sizeof(float), cudaMemcpyHostToDevice);
    if (!strcmp(which, "all") || !strcmp(which, "vadd"))
        for (int r = 0; r < 3; ++r) vadd<<<(n + 255) / 256, 256>>>(a, b, c, n);
    if (!strcmp(which, "all") || !strcmp(which, "matmul")) {
        int m = 256;
        dim3 bl(TILE, TILE), gr(m / TILE, m / TILE);
        matmul<<<gr, bl>>>(a, b, c, m);
    }
    if (!strcmp(which, "all") || !strcmp(which, "reduce")) {
        cudaMemset(out, 0, sizeof(float));
        reduce<<<256, 256, 256 * sizeof(float)>>>(a, out, n);
    }
    if (!strcmp(which, "all") || !strcmp(which, "compute"))
        compute<<<(n / 4 + 255) / 256, 256>>>(c, n / 4, 200);
    cudaDeviceSynchronize();
    float r; cudaMemcpy(&r, out, sizeof(float), cudaMemcpyDeviceToHost);
    printf("err=%s\n", cudaGetErrorString(cudaGetLastError()));
    cudaFree(a); cudaFree(b); cudaFree(c); cudaFree(out); free(h);
    return 0;
}
