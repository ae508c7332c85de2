// Workloads for benchmarks/bench_checkers.py, one per argument: "elementwise" (one short thread
// per element, barrier-free), "treesum" (a shared-memory tree sum per 256-thread block, a
// barrier per level) and "histogram" (one global atomicAdd per element into 16 bins). Each
// checks its own result and prints "ok" (the benchmark refuses a run that does not).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

__global__ void elementwise(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] * 2.0f + b[i];
}

__global__ void treesum(const float* x, float* sums) {
    __shared__ float s[256];
    s[threadIdx.x] = x[blockIdx.x * blockDim.x + threadIdx.x];
    __syncthreads();
    for (int st = blockDim.x / 2; st > 0; st >>= 1) {
        if ((int)threadIdx.x < st) s[threadIdx.x] += s[threadIdx.x + st];
        __syncthreads();
    }
    if (threadIdx.x == 0) sums[blockIdx.x] = s[0];
}

__global__ void histogram(const int* v, int n, unsigned int* bins) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&bins[v[i] & 15], 1u);
}

static bool run_elementwise() {
    const int n = 1 << 22;
    float* h = (float*)malloc(n * sizeof(float));
    for (int i = 0; i < n; ++i) h[i] = (float)(i % 13);
    float *a, *c;
    cudaMalloc(&a, n * sizeof(float));
    cudaMalloc(&c, n * sizeof(float));
    cudaMemcpy(a, h, n * sizeof(float), cudaMemcpyHostToDevice);
    elementwise<<<n / 256, 256>>>(a, a, c, n);
    cudaMemcpy(h, c, n * sizeof(float), cudaMemcpyDeviceToHost);
    bool ok = true;
    for (int i = 0; i < n; ++i) ok = ok && h[i] == 3.0f * (float)(i % 13);
    cudaFree(a);
    cudaFree(c);
    free(h);
    return ok;
}

static bool run_treesum() {
    const int blocks = 1024, n = blocks * 256;
    float* h = (float*)malloc(n * sizeof(float));
    for (int i = 0; i < n; ++i) h[i] = (float)(i % 7);  // small integers: every sum is exact
    float *x, *sums;
    cudaMalloc(&x, n * sizeof(float));
    cudaMalloc(&sums, blocks * sizeof(float));
    cudaMemcpy(x, h, n * sizeof(float), cudaMemcpyHostToDevice);
    treesum<<<blocks, 256>>>(x, sums);
    float* got = (float*)malloc(blocks * sizeof(float));
    cudaMemcpy(got, sums, blocks * sizeof(float), cudaMemcpyDeviceToHost);
    bool ok = true;
    for (int b = 0; b < blocks; ++b) {
        float want = 0.0f;
        for (int t = 0; t < 256; ++t) want += h[b * 256 + t];
        ok = ok && got[b] == want;
    }
    cudaFree(x);
    cudaFree(sums);
    free(h);
    free(got);
    return ok;
}

static bool run_histogram() {
    const int n = 1 << 22;
    int* h = (int*)malloc(n * sizeof(int));
    for (int i = 0; i < n; ++i) h[i] = i * 7 + 3;
    int* v;
    unsigned int* bins;
    cudaMalloc(&v, n * sizeof(int));
    cudaMalloc(&bins, 16 * sizeof(unsigned int));
    cudaMemcpy(v, h, n * sizeof(int), cudaMemcpyHostToDevice);
    cudaMemset(bins, 0, 16 * sizeof(unsigned int));
    histogram<<<n / 256, 256>>>(v, n, bins);
    unsigned int got[16];
    cudaMemcpy(got, bins, sizeof got, cudaMemcpyDeviceToHost);
    bool ok = true;
    for (int k = 0; k < 16; ++k) ok = ok && got[k] == (unsigned int)(n / 16);  // 7i+3 covers each bin equally
    cudaFree(v);
    cudaFree(bins);
    free(h);
    return ok;
}

int main(int argc, char** argv) {
    const char* which = argc > 1 ? argv[1] : "";
    bool ok = false;
    if (std::strcmp(which, "elementwise") == 0) ok = run_elementwise();
    else if (std::strcmp(which, "treesum") == 0) ok = run_treesum();
    else if (std::strcmp(which, "histogram") == 0) ok = run_histogram();
    else {
        std::fprintf(stderr, "usage: %s elementwise|treesum|histogram\n", argv[0]);
        return 2;
    }
    std::printf("%s (%s)\n", ok ? "ok" : "WRONG", cudaGetErrorString(cudaGetLastError()));
    return ok ? 0 : 1;
}
