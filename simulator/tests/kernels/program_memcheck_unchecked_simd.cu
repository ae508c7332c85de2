// memcheck's region copies without checks as vectorisable loops (test_memcheck_unchecked_simd.py,
// runtime/block_loops_hoist.h): each run of a row's threads is one loop in thread order, the
// thread-index locals computed again and the slots read plainly, while the runs keep the fibers'
// order. Block shapes whose widths are no multiple of a vector's. Arguments: "none", or "overflow"
// (a recomputed local's initializer overflows an int for one thread: that block's copies must
// read the slot, the finding made once, by the declaring region, as with fibers).
#include <climits>
#include <cstdio>
#include <cstring>

#define W 20  // the block's width: literals where the front end reads the shared arrays' extents
#define H 10
#define N (W * H)

// A chain: thread t adds the element thread t - 1 wrote in the same region, so the result depends
// on the order the threads run in (the fibers' order starts the round after a barrier at the
// thread that released it, here the last one, and wraps).
__global__ void chain(const float* x, float* out, int mul) {
    __shared__ float sm[N + 1];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int t = ty * W + tx;
    const int r = (int)blockIdx.x * mul + tx;  // PLANT-RECOMPUTED
    sm[t + 1] = x[blockIdx.x * N + t];
    if (t == 0) sm[0] = 1.0f;
    __syncthreads();
    const float left = sm[t];  // a statement of its own: not warp-synchronous code (a[i] = a[j])
    if (r > 0)
        sm[t + 1] = sm[t + 1] * 0.5f + left;
    else
        sm[t + 1] = left;
    __syncthreads();
    out[blockIdx.x * N + t] = sm[t + 1];
}

// A tile in blocks of 12 x 6 threads: the loads, a counted inner loop and a store through a column
// index, each thread reading the others' elements of the tile.
__global__ void tile(const float* x, float* out, int n) {
    __shared__ float As[6][12];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * 6 + ty;
    const int col = blockIdx.x * 12 + tx;
    As[ty][tx] = x[row * n + col];
    __syncthreads();
    float sum = 0.0f;
    for (int k = 0; k < 12; ++k) sum += As[ty][k] * (float)(k + 1);
    __syncthreads();
    out[row * n + col] = sum + As[5 - ty][11 - tx];
}

// A tree reduction whose halving bound is a prefix region's.
__global__ void tree(const float* x, float* out) {
    __shared__ float sm[64];
    const int t = threadIdx.x;
    sm[t] = x[blockIdx.x * 64 + t];
    __syncthreads();
    for (int s = 32; s > 0; s >>= 1) {
        if (t < s) sm[t] += sm[t + s];
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = sm[0];
}

static double digest(const float* v, int n) {
    double d = 0;
    for (int k = 0; k < n; ++k) d += (double)v[k] * (k % 97 + 1);
    return d;
}

int main(int argc, char** argv) {
    const bool overflow = argc > 1 && std::strcmp(argv[1], "overflow") == 0;
    const int blocks = 7, n = 36;  // tile: 3 x 6 blocks of 12 x 6 over a 36 x 36 matrix
    const int count = blocks * N > n * n ? blocks * N : n * n;
    float* host = new float[count];
    for (int k = 0; k < count; ++k) host[k] = (float)((k * 37) % 101) * 0.125f - 6.0f;
    float *x, *out;
    cudaMalloc(&x, sizeof(float) * count);
    cudaMalloc(&out, sizeof(float) * count);
    cudaMemcpy(x, host, sizeof(float) * count, cudaMemcpyHostToDevice);
    // blockIdx.x * mul passes INT_MAX in the last block only.
    chain<<<blocks, dim3(W, H)>>>(x, out, overflow ? INT_MAX / (blocks - 1) + 1 : 1000);
    cudaError_t e = cudaDeviceSynchronize();
    cudaMemcpy(host, out, sizeof(float) * blocks * N, cudaMemcpyDeviceToHost);
    std::printf("chain: %s %.17g\n", cudaGetErrorName(e), digest(host, blocks * N));
    tile<<<dim3(n / 12, n / 6), dim3(12, 6)>>>(x, out, n);
    e = cudaDeviceSynchronize();
    cudaMemcpy(host, out, sizeof(float) * n * n, cudaMemcpyDeviceToHost);
    std::printf("tile: %s %.17g\n", cudaGetErrorName(e), digest(host, n * n));
    tree<<<blocks, 64>>>(x, out);
    e = cudaDeviceSynchronize();
    cudaMemcpy(host, out, sizeof(float) * blocks, cudaMemcpyDeviceToHost);
    std::printf("tree: %s %.17g\n", cudaGetErrorName(e), digest(host, blocks));
    cudaFree(x);
    cudaFree(out);
    delete[] host;
    return 0;
}
