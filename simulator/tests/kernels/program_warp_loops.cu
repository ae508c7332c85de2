// Warp shuffles and votes reached by the whole block in block-uniform control flow
// (simulator/block_loops_warps.py): the warp_* kernels run as block loops in a fast build, each
// shuffle or vote two lockstep rounds of the block's thread loop; the fibers_* kernels call one
// where the rewrite cannot show that (a branch on the thread, a mask in a variable) and keep
// fibers. Every result is printed in full, one line a launch, so that test_warp_loops.py can
// compare it with its own model and a run with SIMULATOR_FIBERS=1 line for line.
#include <cstdio>
#include <vector>

#define FULL 0xffffffffu

// Each block's sum: a shuffle reduction per warp, the warps' sums through shared memory, then
// the same reduction by every warp again (lanes past the block's warps add 0).
__global__ void warp_block_sum(const int* in, int* out, int n) {
    __shared__ int sums[32];
    const int tid = threadIdx.x;
    const int lane = tid % 32;
    const int warp = tid / 32;
    const int nwarps = (blockDim.x + 31) / 32;
    const int i = blockIdx.x * blockDim.x + tid;
    int v = i < n ? in[i] : 0;
    for (int off = 16; off > 0; off /= 2) v += __shfl_down_sync(FULL, v, off);
    if (lane == 0) sums[warp] = v;
    __syncthreads();
    v = lane < nwarps ? sums[lane] : 0;
    for (int off = 16; off > 0; off /= 2) v += __shfl_down_sync(FULL, v, off);
    if (tid == 0) out[blockIdx.x] = v;
}

// An inclusive scan of each block's values: a shuffle-up scan per warp, then one of the warps'
// totals, whose entry before the thread's warp each thread adds.
__global__ void warp_block_scan(const int* in, int* out) {
    __shared__ int totals[32];
    const int tid = threadIdx.x;
    const int lane = tid % 32;
    const int warp = tid / 32;
    const int i = blockIdx.x * blockDim.x + tid;
    int x = in[i];
    for (int d = 1; d < 32; d *= 2) {
        const int y = __shfl_up_sync(FULL, x, d);
        if (lane >= d) x += y;
    }
    if (lane == 31) totals[warp] = x;
    __syncthreads();
    int t = lane < (int)(blockDim.x / 32) ? totals[lane] : 0;
    for (int d = 1; d < 32; d *= 2) {
        const int y = __shfl_up_sync(FULL, t, d);
        if (lane >= d) t += y;
    }
    const int before = __shfl_sync(FULL, t, warp - 1);
    out[i] = x + (warp > 0 ? before : 0);
}

// The maximum of each 16 lanes (width 16), by a butterfly of xor shuffles, in double.
__global__ void warp_xor_max(const double* in, double* out) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    double v = in[i];
    for (int m = 8; m > 0; m /= 2) v = fmax(v, __shfl_xor_sync(FULL, v, m, 16));
    out[i] = v;
}

// Lane 3 of each group of 8 (width 8), then lane 5 of the warp, both by __shfl_sync.
__global__ void warp_broadcast(const float* in, float* out) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const float v = in[i];
    const float third = __shfl_sync(FULL, v, 3, 8);
    out[i] = third * 2.0f + __shfl_sync(FULL, v, 5);
}

// The multiples of 3 of in[0..n), in order, by one block: a ballot per warp and chunk places each
// kept value, the warps' counts through shared memory, in a loop over the chunks.
__global__ void warp_ballot_compact(const int* in, int* out, int* count, int n) {
    __shared__ int warp_counts[32];
    __shared__ int total;
    const int tid = threadIdx.x;
    const int lane = tid % 32;
    const int warp = tid / 32;
    const int nwarps = blockDim.x / 32;
    if (tid == 0) total = 0;
    __syncthreads();
    for (int base = 0; base < n; base += blockDim.x) {
        const int i = base + tid;
        const int v = i < n ? in[i] : 1;
        const bool keep = v % 3 == 0;
        const unsigned int votes = __ballot_sync(FULL, keep);
        if (lane == 0) warp_counts[warp] = __popc(votes);
        __syncthreads();
        int at = total;
        for (int w = 0; w < warp; ++w) at += warp_counts[w];
        if (keep) out[at + __popc(votes & ((1u << lane) - 1u))] = v;
        __syncthreads();
        if (tid == 0) {
            for (int w = 0; w < nwarps; ++w) total += warp_counts[w];
        }
        __syncthreads();
    }
    if (tid == 0) *count = total;
}

// __any_sync and __all_sync of each warp.
__global__ void warp_votes(const int* in, int* out) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int v = in[i];
    const int any_big = __any_sync(FULL, v > 45);
    const int all_above = __all_sync(FULL, v > -48);
    out[i] = any_big * 2 + all_above;
}

// In a 2-D block, warps are 32 threads of the linear index (x fastest): lane 0's value less the
// thread's own, by an indexed shuffle.
__global__ void warp_rows_2d(const int* in, int* out) {
    const int t = threadIdx.y * blockDim.x + threadIdx.x;
    const int i = blockIdx.x * blockDim.x * blockDim.y + t;
    const int v = in[i];
    out[i] = __shfl_sync(FULL, v, 0) - v;
}

// A shuffle under a branch on the thread (whole warps take it): fibers.
__global__ void fibers_branch(const int* in, int* out) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = in[i];
    if (threadIdx.x < 64) v += __shfl_down_sync(FULL, v, 1);
    out[i] = v;
}

// A shuffle whose mask is a variable: fibers.
__global__ void fibers_mask(const int* in, int* out) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned int mask = FULL;
    int v = in[i];
    v += __shfl_xor_sync(mask, v, 1);
    out[i] = v;
}

// A shuffle of a template's type, whose overload the template's parameters pick: fibers.
template <class T>
__global__ void fibers_template(const T* in, T* out) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    T v = in[i];
    v += __shfl_down_sync(FULL, v, 2);
    out[i] = v;
}

template <class T>
static void print(const char* name, const T* d, int n) {
    std::vector<T> h(n);
    cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost);
    std::printf("%s", name);
    for (int k = 0; k < n; ++k) {
        if constexpr (sizeof(T) == 8) {
            std::printf(" %.17g", (double)h[k]);
        } else if constexpr (std::is_same<T, float>::value) {
            std::printf(" %.9g", (double)h[k]);
        } else {
            std::printf(" %d", (int)h[k]);
        }
    }
    std::printf("\n");
}

int main() {
    const int n = 512;
    std::vector<int> hi(n);
    std::vector<double> hd(n);
    std::vector<float> hf(n);
    for (int k = 0; k < n; ++k) {
        hi[k] = (k * 37 + 11) % 101 - 50;
        hd[k] = ((k * 53 + 7) % 97 - 48) * 0.5;
        hf[k] = (float)((k * 29 + 3) % 61) * 0.25f;
    }
    int *in, *out, *count;
    double *ind, *outd;
    float *inf, *outf;
    cudaMalloc(&in, n * sizeof(int));
    cudaMalloc(&out, n * sizeof(int));
    cudaMalloc(&count, sizeof(int));
    cudaMalloc(&ind, n * sizeof(double));
    cudaMalloc(&outd, n * sizeof(double));
    cudaMalloc(&inf, n * sizeof(float));
    cudaMalloc(&outf, n * sizeof(float));
    cudaMemcpy(in, hi.data(), n * sizeof(int), cudaMemcpyHostToDevice);
    cudaMemcpy(ind, hd.data(), n * sizeof(double), cudaMemcpyHostToDevice);
    cudaMemcpy(inf, hf.data(), n * sizeof(float), cudaMemcpyHostToDevice);

    warp_block_sum<<<4, 128>>>(in, out, n);
    print("sum128", out, 4);
    warp_block_sum<<<11, 48>>>(in, out, n);  // a warp of 16 lanes: its shuffles past them read their own
    print("sum48", out, 11);
    warp_block_scan<<<2, 256>>>(in, out);
    print("scan", out, n);
    warp_xor_max<<<2, 256>>>(ind, outd);
    print("xormax", outd, n);
    warp_broadcast<<<4, 128>>>(inf, outf);
    print("broadcast", outf, n);
    cudaMemset(out, 0, n * sizeof(int));
    warp_ballot_compact<<<1, 128>>>(in, out, count, 500);
    print("compact", out, n);
    print("count", count, 1);
    warp_votes<<<4, 128>>>(in, out);
    print("votes", out, n);
    warp_rows_2d<<<4, dim3(16, 8)>>>(in, out);
    print("rows2d", out, n);
    fibers_branch<<<2, 128>>>(in, out);
    print("branch", out, 256);
    fibers_mask<<<2, 128>>>(in, out);
    print("mask", out, 256);
    fibers_template<int><<<2, 128>>>(in, out);
    print("template", out, 256);
    const cudaError_t err = cudaDeviceSynchronize();
    std::printf("status %s\n", cudaGetErrorName(err));
    return 0;
}
