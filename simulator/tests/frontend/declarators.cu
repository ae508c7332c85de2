// Front-end conformance: file-scope __constant__ and __device__ declarations with several
// declarators (`__constant__ float a, b, c;`, as in The CUDA Handbook's normalizedCrossCorrelation),
// with and without initializers (braces and commas inside them too): each is its own variable,
// written by cudaMemcpyToSymbol, read by cudaMemcpyFromSymbol and seen by device code.
#include <cuda_runtime.h>
#include <cstdio>

#include "conformance_check.h"

__constant__ float c_a, c_b, c_c;
__constant__ int2 c_p = {1, 2}, c_q = {3, 4};
__device__ int d_x = 5, d_arr[3] = {6, 7, 8}, d_y;

__global__ void read_all(float* out) {
    out[0] = c_a;
    out[1] = c_b;
    out[2] = c_c;
    out[3] = c_p.x * 10 + c_p.y;
    out[4] = c_q.x * 10 + c_q.y;
    out[5] = d_x + d_arr[0] + d_arr[1] + d_arr[2];
    out[6] = d_y;
    d_y = 9;
}

int main() {
    const float a = 1.5f, b = 2.5f, c = -4.0f;
    CHECK(cudaMemcpyToSymbol(c_a, &a, sizeof(a)) == cudaSuccess);
    CHECK(cudaMemcpyToSymbol(c_b, &b, sizeof(b)) == cudaSuccess);
    CHECK(cudaMemcpyToSymbol(c_c, &c, sizeof(c)) == cudaSuccess);
    const int y = 11;
    CHECK(cudaMemcpyToSymbol(d_y, &y, sizeof(y)) == cudaSuccess);

    float* d = nullptr;
    CHECK(cudaMalloc(&d, 7 * sizeof(float)) == cudaSuccess);
    read_all<<<1, 1>>>(d);
    float h[7];
    CHECK(cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost) == cudaSuccess);
    CHECK(h[0] == 1.5f && h[1] == 2.5f && h[2] == -4.0f);
    CHECK(h[3] == 12.0f && h[4] == 34.0f);
    CHECK(h[5] == 26.0f && h[6] == 11.0f);
    int back = 0;
    CHECK(cudaMemcpyFromSymbol(&back, d_y, sizeof(back)) == cudaSuccess);
    CHECK(back == 9);
    size_t size = 0;
    CHECK(cudaGetSymbolSize(&size, d_arr) == cudaSuccess && size == 3 * sizeof(int));
    CHECK(cudaFree(d) == cudaSuccess);
    std::printf("declarators: OK\n");
    return 0;
}
