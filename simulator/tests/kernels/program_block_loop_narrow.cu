// Column indices of a block-loop kernel that a fast build computes as signed sums where the
// block's values allow it (simulator/block_loops_simd.py): `col = blockIdx.x * W + base + tx` and
// `j = base + blockIdx.x * blockDim.x + threadIdx.x` are unsigned sums converted to int, computed
// again after the barrier. With `base` near INT_MAX the first blocks pass the check (their sums
// stay below INT_MAX - 1023), the later ones do not, and one block's row passes INT_MAX, where
// the int wraps to INT_MIN; with `base` near UINT_MAX every block passes (the int is negative) and
// one block's row wraps past UINT_MAX to 0. prefix_fold's regions are each one `if (t < S)`, S
// block-uniform (a fast build runs only the threads below S): S above the block's width, within
// it, and at or below zero. Each result is checked against the host's and printed as a hash of
// its bytes, so that a run with SIMULATOR_FIBERS=1 can be compared line for line.
#include <climits>
#include <cstdio>
#include <vector>

#define W 40
#define BLOCKS 30

__global__ void narrow_columns(const unsigned int* in, unsigned int* out, unsigned int base) {
    __shared__ int s[W];
    const int tx = threadIdx.x;
    const int col = blockIdx.x * W + base + tx;
    const int j = base + blockIdx.x * blockDim.x + threadIdx.x;
    s[tx] = col ^ (j & 0x3fffffff) * 2;
    __syncthreads();
    // The int widened: a signed sum taken not to wrap where it does would give 2^31, not -2^31.
    const long long wide = col;
    out[blockIdx.x * W + tx] =
        s[W - 1 - tx] + in[(unsigned int)col - base] - (unsigned int)(col >> 3) + (j & 1023) + (unsigned int)(wide >> 32);
}

#define W2 50

__global__ void prefix_fold(const unsigned int* in, unsigned int* out, int first) {
    __shared__ unsigned int a[W2], b[W2];
    const int t = threadIdx.x;
    a[t] = in[blockIdx.x * W2 + t];
    b[t] = 0u - a[t];
    __syncthreads();
    for (int k = first; k > -8; k -= 7) {
        if (t < k) b[t] += a[(t + k) % W2] * 3u - (unsigned int)k;
        __syncthreads();
        if (t < k - 3) a[t] ^= b[W2 - 1 - t];
        __syncthreads();
    }
    out[blockIdx.x * W2 + t] = a[t] + b[t];
}

static unsigned long long hash(const void* p, size_t n) {
    unsigned long long h = 1469598103934665603ull;
    for (size_t i = 0; i < n; ++i) h = (h ^ static_cast<const unsigned char*>(p)[i]) * 1099511628211ull;
    return h;
}

// The kernel's results for ``base`` as the host computes them (the int conversions modular).
static std::vector<unsigned int> expected(const std::vector<unsigned int>& in, unsigned int base) {
    std::vector<unsigned int> want(W * BLOCKS);
    for (unsigned int b = 0; b < BLOCKS; ++b) {
        std::vector<int> s(W), col(W), j(W);
        for (unsigned int t = 0; t < W; ++t) {
            col[t] = (int)(b * W + base + t);
            j[t] = (int)(base + b * W + t);
            s[t] = col[t] ^ (j[t] & 0x3fffffff) * 2;
        }
        for (unsigned int t = 0; t < W; ++t) {
            want[b * W + t] = s[W - 1 - t] + in[(unsigned int)col[t] - base] - (unsigned int)(col[t] >> 3) +
                              (j[t] & 1023) + (unsigned int)((long long)col[t] >> 32);
        }
    }
    return want;
}

// prefix_fold's results as the host computes them, thread after thread in each region.
static std::vector<unsigned int> expected_fold(const std::vector<unsigned int>& in, int blocks, int first) {
    std::vector<unsigned int> want(W2 * blocks);
    for (int blk = 0; blk < blocks; ++blk) {
        std::vector<unsigned int> a(in.begin() + blk * W2, in.begin() + (blk + 1) * W2), b(W2);
        for (int t = 0; t < W2; ++t) b[t] = 0u - a[t];
        for (int k = first; k > -8; k -= 7) {
            for (int t = 0; t < W2; ++t)
                if (t < k) b[t] += a[(t + k) % W2] * 3u - (unsigned int)k;
            for (int t = 0; t < W2; ++t)
                if (t < k - 3) a[t] ^= b[W2 - 1 - t];
        }
        for (int t = 0; t < W2; ++t) want[blk * W2 + t] = a[t] + b[t];
    }
    return want;
}

int main() {
    const int n = W * BLOCKS;
    std::vector<unsigned int> in(n);
    for (int i = 0; i < n; ++i) in[i] = (unsigned int)(i * 2654435761u) >> 7;
    unsigned int* din = nullptr;
    unsigned int* dout = nullptr;
    cudaMalloc(&din, n * sizeof(unsigned int));
    cudaMalloc(&dout, n * sizeof(unsigned int));
    cudaMemcpy(din, in.data(), n * sizeof(unsigned int), cudaMemcpyHostToDevice);
    // Blocks 0-2 pass the check, block 28's row passes INT_MAX; every block passes with the
    // second base, and block 28's row wraps past UINT_MAX.
    const unsigned int bases[] = {(unsigned int)INT_MAX - 1120u, UINT_MAX - 1120u, 7u};
    for (unsigned int base : bases) {
        cudaMemset(dout, 0, n * sizeof(unsigned int));
        narrow_columns<<<BLOCKS, W>>>(din, dout, base);
        std::vector<unsigned int> got(n);
        cudaMemcpy(got.data(), dout, n * sizeof(unsigned int), cudaMemcpyDeviceToHost);
        const bool ok = got == expected(in, base);
        std::printf("narrow_columns base %u %s %016llx\n", base, ok ? "ok" : "WRONG", hash(got.data(), n * sizeof(unsigned int)));
    }
    // W * BLOCKS values are W2 * 24 of prefix_fold's: 24 blocks of 50 threads.
    for (int first : {60, 23, 2}) {
        prefix_fold<<<24, W2>>>(din, dout, first);
        std::vector<unsigned int> got(W2 * 24);
        cudaMemcpy(got.data(), dout, got.size() * sizeof(unsigned int), cudaMemcpyDeviceToHost);
        const bool ok = got == expected_fold(in, 24, first);
        std::printf("prefix_fold first %d %s %016llx\n", first, ok ? "ok" : "WRONG", hash(got.data(), got.size() * 4));
    }
    std::printf("status %s\n", cudaGetErrorName(cudaDeviceSynchronize()));
    return 0;
}
