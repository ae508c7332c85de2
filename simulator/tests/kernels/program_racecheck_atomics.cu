// Atomics under racecheck (test_racecheck_atomics.py): a histogram of global atomicAdds, and a
// threadfence reduction whose last block sums what the others published, with the
// __threadfence() (argv[1] == "fenced") or without it ("unfenced": a data race, as on a GPU).
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>

__global__ void histogram(const int* in, int n, unsigned int* bins) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&bins[in[i] % 4], 1u);
}

__global__ void sum_blocks(const float* in, float* partial, unsigned int* count, float* total, bool fence) {
    __shared__ float part[64];
    __shared__ bool last;
    part[threadIdx.x] = in[blockIdx.x * blockDim.x + threadIdx.x];
    __syncthreads();
    if (threadIdx.x == 0) {
        float s = 0.0f;
        for (int k = 0; k < (int)blockDim.x; ++k) s += part[k];
        partial[blockIdx.x] = s;  // PLANT: publish
        if (fence) __threadfence();
        last = atomicInc(count, gridDim.x - 1) == gridDim.x - 1;
    }
    __syncthreads();
    if (last && threadIdx.x < gridDim.x) {
        atomicAdd(total, partial[threadIdx.x]);  // PLANT: read
    }
}

int main(int argc, char** argv) {
    const char* what = argc > 1 ? argv[1] : "hist";
    if (std::strcmp(what, "hist") == 0) {
        const int n = 1 << 14;
        int* h = new int[n];
        for (int i = 0; i < n; ++i) h[i] = i * 7 + 3;
        int* d;
        unsigned int* bins;
        cudaMalloc(&d, n * sizeof(int));
        cudaMalloc(&bins, 4 * sizeof(unsigned int));
        cudaMemcpy(d, h, n * sizeof(int), cudaMemcpyHostToDevice);
        cudaMemset(bins, 0, 4 * sizeof(unsigned int));
        histogram<<<n / 256, 256>>>(d, n, bins);
        unsigned int out[4];
        cudaMemcpy(out, bins, sizeof out, cudaMemcpyDeviceToHost);
        std::printf("bins %u %u %u %u\n", out[0], out[1], out[2], out[3]);
        cudaFree(d);
        cudaFree(bins);
        delete[] h;
        return 0;
    }
    const int blocks = 32, threads = 64;
    float h[blocks * threads];
    for (int i = 0; i < blocks * threads; ++i) h[i] = (float)(i % 5);
    float *in, *partial, *total;
    unsigned int* count;
    cudaMalloc(&in, sizeof h);
    cudaMalloc(&partial, blocks * sizeof(float));
    cudaMalloc(&total, sizeof(float));
    cudaMalloc(&count, sizeof(unsigned int));
    cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice);
    cudaMemset(total, 0, sizeof(float));
    cudaMemset(count, 0, sizeof(unsigned int));
    sum_blocks<<<blocks, threads>>>(in, partial, count, total, std::strcmp(what, "fenced") == 0);
    float t = 0.0f;
    cudaMemcpy(&t, total, sizeof t, cudaMemcpyDeviceToHost);
    std::printf("total %g\n", t);
    cudaFree(in);
    cudaFree(partial);
    cudaFree(total);
    cudaFree(count);
    return 0;
}
