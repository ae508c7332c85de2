// memcheck keeps a block's shared memory and per-thread slots for the launch's next block on the
// same worker (test_memcheck_kept_shared.py; device_api.cpp keep_shared, kept_slots): each
// __shared__ variable is still a heap block of its exact size, filled with 0xff for every block.
// Arguments: "none" (every kernel in bounds), or where thread 63 reads one element past the end
// of a __shared__ array ("second", "last": that block of the launch) or of the dynamic shared
// memory ("dynamic": the last block).
#include <cstdio>
#include <cstring>

#define T 64
#define BLOCKS 6

// Reads each element before any thread of the block writes it: what a GPU leaves there, which the
// simulator gives as 0xff bytes in every block, whatever an earlier block wrote.
__global__ void fresh(unsigned int* out, int bad) {
    __shared__ unsigned int sm[T];
    const int t = threadIdx.x;
    out[blockIdx.x * T + t] = sm[t];
    __syncthreads();
    sm[t] = blockIdx.x * 1000u + t;
    __syncthreads();
    unsigned int v = sm[T - 1 - t];
    if (blockIdx.x == bad && t == T - 1) v = sm[t + 1];  // PLANT-STATIC
    out[BLOCKS * T + blockIdx.x * T + t] = v;
}

// The same with the dynamic shared memory (T elements).
__global__ void dynamic(unsigned int* out, int bad) {
    extern __shared__ unsigned int dyn[];
    const int t = threadIdx.x;
    out[blockIdx.x * T + t] = dyn[t];
    __syncthreads();
    dyn[t] = blockIdx.x * 1000u + t;
    __syncthreads();
    unsigned int v = dyn[T - 1 - t];
    if (blockIdx.x == bad && t == T - 1) v = dyn[t + 1];  // PLANT-DYNAMIC
    out[BLOCKS * T + blockIdx.x * T + t] = v;
}

// Locals of three types across barriers (each a per-thread slot) whose values differ per block.
__global__ void slots(const float* x, float* out) {
    __shared__ float sm[T];
    const int t = threadIdx.x;
    const int i = blockIdx.x * T + t;
    double d = (double)x[i] * 0.5;
    float f = x[i] + (float)blockIdx.x;
    long long k = (long long)i * 3 - 7;
    sm[t] = f;
    __syncthreads();
    d += sm[(t + 1) % T];
    __syncthreads();
    out[i] = (float)d + f + (float)k;
}

static double digest(const unsigned int* v, int n) {
    double s = 0;
    for (int k = 0; k < n; ++k) s += (double)v[k] * (k % 89 + 1);
    return s;
}

int main(int argc, char** argv) {
    const char* what = argc > 1 ? argv[1] : "none";
    const int bad = std::strcmp(what, "second") == 0 ? 1 : std::strcmp(what, "last") == 0 ? BLOCKS - 1 : -1;
    const int dyn_bad = std::strcmp(what, "dynamic") == 0 ? BLOCKS - 1 : -1;
    const int n = 2 * BLOCKS * T;
    unsigned int* host = new unsigned int[n];
    float* xf = new float[BLOCKS * T];
    for (int k = 0; k < BLOCKS * T; ++k) xf[k] = (float)((k * 29) % 61) * 0.25f - 7.0f;
    unsigned int* out;
    float *x, *fo;
    cudaMalloc(&out, sizeof(unsigned int) * n);
    cudaMalloc(&x, sizeof(float) * BLOCKS * T);
    cudaMalloc(&fo, sizeof(float) * BLOCKS * T);
    cudaMemcpy(x, xf, sizeof(float) * BLOCKS * T, cudaMemcpyHostToDevice);
    for (int round = 0; round < 2; ++round) {  // twice: a second launch gets the memory anew too
        fresh<<<BLOCKS, T>>>(out, bad);
        cudaError_t e = cudaDeviceSynchronize();
        cudaMemcpy(host, out, sizeof(unsigned int) * n, cudaMemcpyDeviceToHost);
        int unset = 0;
        for (int k = 0; k < BLOCKS * T; ++k) unset += host[k] == 0xffffffffu;
        std::printf("fresh: %s unset %d digest %.17g\n", cudaGetErrorName(e), unset, digest(host + BLOCKS * T, BLOCKS * T));
        if (e != cudaSuccess) return 1;
        dynamic<<<BLOCKS, T, T * sizeof(unsigned int)>>>(out, dyn_bad);
        e = cudaDeviceSynchronize();
        cudaMemcpy(host, out, sizeof(unsigned int) * n, cudaMemcpyDeviceToHost);
        unset = 0;
        for (int k = 0; k < BLOCKS * T; ++k) unset += host[k] == 0xffffffffu;
        std::printf("dynamic: %s unset %d digest %.17g\n", cudaGetErrorName(e), unset, digest(host + BLOCKS * T, BLOCKS * T));
        if (e != cudaSuccess) return 1;
        slots<<<BLOCKS, T>>>(x, fo);
        e = cudaDeviceSynchronize();
        cudaMemcpy(xf, fo, sizeof(float) * BLOCKS * T, cudaMemcpyDeviceToHost);
        double s = 0;
        for (int k = 0; k < BLOCKS * T; ++k) s += (double)xf[k] * (k % 89 + 1);
        std::printf("slots: %s digest %.17g\n", cudaGetErrorName(e), s);
        cudaMemcpy(x, fo, sizeof(float) * BLOCKS * T, cudaMemcpyDeviceToDevice);
    }
    cudaFree(out);
    cudaFree(x);
    cudaFree(fo);
    delete[] host;
    delete[] xf;
    return 0;
}
