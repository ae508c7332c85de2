// memcheck in block-loop regions whose checks are made once per block (test_memcheck_hoisted.py,
// simulator/block_loops_hoist.py): a prefix region `if (t < lo) sd[t] = sm[t] + sm[t + lo + off];` and a
// tile's inner loop `sum += As[ty][k + koff] * Bs[k][tx];`. With the arguments in range each runs
// as its copy without checks; the others plant a fault the ranges must see, so that the
// instrumented loop runs and names the same thread, line and kind as fibers. Arguments: the kind
// ("none", "low", "middle", "last", "overflow", "tile").
#include <climits>
#include <cstdio>
#include <cstring>

constexpr int THREADS = 256;
#define TILE 16  // a literal where the front end reads the tile loop's bound

__global__ void prefix_sum(const float* x, float* out, int lo, int off) {
    __shared__ float sm[THREADS];
    __shared__ float sd[THREADS];
    const int t = threadIdx.x;
    sm[t] = x[t];
    sd[t] = 0.0f;
    __syncthreads();
    if (t < lo) sd[t] = sm[t] + sm[t + lo + off];  // PLANT-PREFIX
    __syncthreads();
    out[t] = sd[t];
}

__global__ void tile_sum(const float* x, float* out, int koff) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    const int tx = threadIdx.x, ty = threadIdx.y;
    As[ty][tx] = x[ty * TILE + tx];
    Bs[ty][tx] = x[tx * TILE + ty];
    __syncthreads();
    float sum = 0.0f;
    for (int k = 0; k < TILE; ++k) sum += As[ty][k + koff] * Bs[k][tx];  // PLANT-TILE
    __syncthreads();
    out[ty * TILE + tx] = sum;
}

int main(int argc, char** argv) {
    const char* what = argc > 1 ? argv[1] : "none";
    // (lo, off): the threads below lo read sm[t + lo + off].
    int lo = 128, off = 0, koff = 0;
    if (std::strcmp(what, "low") == 0) lo = 256, off = -257;  // thread 0 reads sm[-1]
    if (std::strcmp(what, "middle") == 0) lo = 128, off = 1;  // thread 127 reads sm[256]
    if (std::strcmp(what, "last") == 0) lo = 256, off = -255;  // thread 255 reads sm[256]
    if (std::strcmp(what, "overflow") == 0) lo = INT_MAX, off = -INT_MAX;  // t + lo passes INT_MAX from t = 1
    if (std::strcmp(what, "tile") == 0) koff = 1;  // As[ty][16] at k = 15
    float host[THREADS];
    for (int k = 0; k < THREADS; ++k) host[k] = (float)(k % 13) * 0.25f - 1.0f;
    float *x, *out;
    cudaMalloc(&x, sizeof(host));
    cudaMalloc(&out, sizeof(host));
    cudaMemcpy(x, host, sizeof(host), cudaMemcpyHostToDevice);
    prefix_sum<<<1, THREADS>>>(x, out, lo, off);
    cudaError_t e = cudaDeviceSynchronize();
    cudaMemcpy(host, out, sizeof(host), cudaMemcpyDeviceToHost);
    double sum = 0;
    for (int k = 0; k < THREADS; ++k) sum += host[k] * (k + 1);
    std::printf("%s prefix_sum: %s %.9g\n", what, cudaGetErrorName(e), sum);
    tile_sum<<<1, dim3(TILE, TILE)>>>(x, out, koff);
    e = cudaDeviceSynchronize();
    cudaMemcpy(host, out, sizeof(host), cudaMemcpyDeviceToHost);
    sum = 0;
    for (int k = 0; k < THREADS; ++k) sum += host[k] * (k + 1);
    std::printf("%s tile_sum: %s %.9g\n", what, cudaGetErrorName(e), sum);
    return 0;
}
