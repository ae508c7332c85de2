// Barrier-free kernels whose column index a fast build narrows in a loop of their own
// (simulator/block_loops_plain.py): `i = blockIdx.x * blockDim.x + base + threadIdx.x` is an
// unsigned sum converted to int, computed as `(int)U + (int)threadIdx.x` in a block whose check
// `(int)U <= INT_MAX - 1023` passed. With `base` near INT_MAX the first blocks pass the check and
// the later ones do not, and one block's row passes INT_MAX, where the int wraps to INT_MIN; with
// `base` near UINT_MAX every block passes (the int is negative) and one block's row wraps past
// UINT_MAX to 0. plain_below and plain_rows are one `if (i < n)` after the declarations: a fast
// build runs only the threads of a row with x < n - (int)U there, n cutting a row in two, above
// every thread and below the wrapped ones. Each result is checked against the host's and printed
// with a hash of its bytes, so that a run with SIMULATOR_FIBERS=1 can be compared line for line.
#include <climits>
#include <cstdio>
#include <cstring>
#include <vector>

#define W 100
#define BLOCKS 16
#define W2 37
#define ROWS 3
#define BLOCKS2 44
#define N_IN 2048
#define N_OUT (W2 * ROWS * BLOCKS2)

__global__ void plain_columns(const int* in, long long* out, unsigned int base) {
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    const int i = blockIdx.x * blockDim.x + base + threadIdx.x;
    // A thread whose index wrapped marks its value: a signed sum taken not to wrap where it does
    // would make the test false for every thread (it is i < i - threadIdx.x there).
    const bool wrapped = i < (int)(blockIdx.x * blockDim.x + base);
    out[t] = (long long)i * 2 + in[(unsigned int)i - base] + (wrapped ? 1000000 : 0);
}

__global__ void plain_below(const int* in, long long* out, unsigned int base, int n) {
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    const int i = blockIdx.x * blockDim.x + base + threadIdx.x;
    if (i < n) out[t] = (long long)i * 2 + in[(unsigned int)i - base];
}

// A 2-D block: the bound on x holds for each of its rows.
__global__ void plain_rows(const int* in, long long* out, unsigned int base, int n) {
    const int i = blockIdx.x * blockDim.x + base + threadIdx.x;
    if (i < n) {
        const int t = (blockIdx.x * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
        out[t] = (long long)i * 2 + in[(unsigned int)i - base] + threadIdx.y;
    }
}

static unsigned long long hash(const void* p, size_t n) {
    unsigned long long h = 1469598103934665603ull;
    for (size_t i = 0; i < n; ++i) h = (h ^ static_cast<const unsigned char*>(p)[i]) * 1099511628211ull;
    return h;
}

// What each kernel stores, as the host computes it (the int conversions modular); -1 where a
// thread stores nothing (the memset's bytes). ``n`` INT_MAX with ``rows`` 0: plain_columns.
static std::vector<long long> expected(const std::vector<int>& in, unsigned int base, int n, int width, int blocks,
                                       int rows) {
    std::vector<long long> want(N_OUT, -1);
    for (int b = 0; b < blocks; ++b) {
        for (int y = 0; y < (rows > 0 ? rows : 1); ++y) {
            for (int x = 0; x < width; ++x) {
                const int i = (int)((unsigned int)(b * width) + base + (unsigned int)x);
                if (rows == 0 || i < n) {
                    const int t = rows > 0 ? (b * rows + y) * width + x : b * width + x;
                    want[t] = (long long)i * 2 + in[(unsigned int)i - base] + (rows > 0 ? y : 0);
                    if (rows == 0 && i < (int)((unsigned int)(b * width) + base)) want[t] += 1000000;
                }
            }
        }
    }
    return want;
}

int main() {
    std::vector<int> in(N_IN);
    for (int i = 0; i < N_IN; ++i) in[i] = (int)((unsigned int)(i * 2654435761u) >> 9);
    int* din = nullptr;
    long long* dout = nullptr;
    cudaMalloc(&din, N_IN * sizeof(int));
    cudaMalloc(&dout, N_OUT * sizeof(long long));
    cudaMemcpy(din, in.data(), N_IN * sizeof(int), cudaMemcpyHostToDevice);
    // INT_MAX - 1400: plain_columns' blocks 0-3 pass the check, block 14's row starts at INT_MAX
    // and wraps; n cuts block 2's row. UINT_MAX - 1120: every block passes, block 11's row wraps
    // past UINT_MAX, n = 5 cuts it. 7: every block passes, n cuts block 7's row.
    const unsigned int bases[] = {(unsigned int)INT_MAX - 1400u, UINT_MAX - 1120u, 7u};
    const int bounds[] = {INT_MAX - 1400 + 250, 5, 777};
    std::vector<long long> got(N_OUT);
    for (int k = 0; k < 3; ++k) {
        const unsigned int base = bases[k];
        const int n = bounds[k];
        for (int which = 0; which < 3; ++which) {
            cudaMemset(dout, 0xff, N_OUT * sizeof(long long));
            std::vector<long long> want;
            const char* name = which == 0 ? "plain_columns" : which == 1 ? "plain_below" : "plain_rows";
            if (which == 0) {
                plain_columns<<<BLOCKS, W>>>(din, dout, base);
                want = expected(in, base, INT_MAX, W, BLOCKS, 0);
            } else if (which == 1) {
                plain_below<<<BLOCKS, W>>>(din, dout, base, n);
                // plain_below's threads store where i < n: rows of 1 in the host's layout.
                want = expected(in, base, n, W, BLOCKS, 1);
            } else {
                plain_rows<<<BLOCKS2, dim3(W2, ROWS)>>>(din, dout, base, n);
                want = expected(in, base, n, W2, BLOCKS2, ROWS);
            }
            cudaMemcpy(got.data(), dout, N_OUT * sizeof(long long), cudaMemcpyDeviceToHost);
            const bool ok = got == want;
            std::printf("%s base %u n %d %s %016llx\n", name, base, n, ok ? "ok" : "WRONG",
                        hash(got.data(), N_OUT * sizeof(long long)));
        }
    }
    std::printf("status %s\n", cudaGetErrorName(cudaDeviceSynchronize()));
    return 0;
}
