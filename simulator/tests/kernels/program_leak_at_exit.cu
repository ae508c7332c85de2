// A correct program that leaves device buffers allocated at exit (a GPU frees them with the
// process): memcheck is clean unless --leak-check full, which names each allocating line.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void fill(float* p, int n, float v) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = v * i;
}

static float* keep_buffer(int n) {
    float* d = nullptr;
    cudaMalloc((void**)&d, n * sizeof(float));  // LEAK: void** form
    return d;
}

int main() {
    const int n = 100;
    float* a = nullptr;
    cudaMalloc(&a, n * sizeof(float));  // LEAK: typed form
    float* b = keep_buffer(n);
    float* c = nullptr;
    cudaMalloc(&c, n * sizeof(float));  // freed below: never reported
    fill<<<1, 128>>>(a, n, 2.0f);
    fill<<<1, 128>>>(b, n, 3.0f);
    fill<<<1, 128>>>(c, n, 4.0f);
    float ha[n], hb[n];
    cudaMemcpy(ha, a, sizeof ha, cudaMemcpyDeviceToHost);
    cudaMemcpy(hb, b, sizeof hb, cudaMemcpyDeviceToHost);
    cudaFree(c);
    float* managed = nullptr;
    cudaMallocManaged(&managed, 64);  // LEAK: managed
    float* pitched = nullptr;
    size_t pitch = 0;
    cudaMallocPitch(&pitched, &pitch, 40, 3);  // LEAK: pitch
    float* async = nullptr;
    cudaMallocAsync(&async, 128, 0);  // LEAK: async
    cudaStreamSynchronize(0);
    int bad = pitch != 512;
    for (int i = 0; i < n; ++i) bad += ha[i] != 2.0f * i || hb[i] != 3.0f * i;
    std::printf("%s\n", bad ? "FAILED" : "PASSED");
    return bad != 0;
}
