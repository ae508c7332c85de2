// Barrier-free grid-stride loops for the lockstep rounds (simulator/block_loops_interchange.py):
// those named stride_* run round by round in a fast build (round k: the body for each thread whose
// counter still passes the loop's condition); those named plain_* keep the plain loop's order.
// Each output buffer is longer than the loop's bound and filled with a sentinel first, so that a
// thread that ran a round it should not have shows. Each result is checked against the host's and
// printed with a hash of its bits, so that runs in other orders can be compared line for line.
// Arguments: a kernel's name (none: all) and the element count (default 1000, not a multiple of
// any launch's stride).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

// The common shape: the counter starts at the thread's global index, steps by the whole grid.
__global__ void stride_add(const float* a, const float* b, float* c, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        c[i] = a[i] + b[i];
}

// The stride and the start computed before the loop; the start read in the body too.
__global__ void stride_locals(const float* in, float* out, int n) {
    int stride = blockDim.x * gridDim.x;
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    for (int i = idx; i < n; i += stride) out[i] = 2.0f * in[i] + (float)(idx % 5);
}

// A size_t counter and bound.
__global__ void stride_size_t(const float* in, float* out, size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)blockDim.x * gridDim.x)
        out[i] = in[i] * in[i] - 1.0f;
}

// An unsigned counter stepped as `i = i + step`, the condition written the other way round.
__global__ void stride_unsigned(const float* in, float* out, unsigned n) {
    for (unsigned i = threadIdx.x + blockIdx.x * blockDim.x; n > i; i = i + gridDim.x * blockDim.x)
        out[i] = sqrtf(in[i] * in[i] + 1.0f);
}

// 2-D: a block-uniform loop over rows around a grid-stride loop over columns.
__global__ void stride_rows(const float* in, float* out, int w, int h) {
    for (int y = blockIdx.y; y < h; y += gridDim.y)
        for (int x = blockIdx.x * blockDim.x + threadIdx.x; x < w; x += blockDim.x * gridDim.x)
            out[y * w + x] = in[y * w + x] + (float)y;
}

// 2-D in both: the loop over rows is the grid-stride one that runs in rounds, each thread walking
// its columns in its round.
__global__ void stride_2d(const float* in, float* out, int w, int h) {
    for (int y = blockIdx.y * blockDim.y + threadIdx.y; y < h; y += blockDim.y * gridDim.y)
        for (int x = blockIdx.x * blockDim.x + threadIdx.x; x < w; x += blockDim.x * gridDim.x)
            out[y * w + x] = in[y * w + x] * 0.5f + (float)x;
}

// Under a thread guard: threads past `limit` in their block do nothing.
__global__ void stride_guarded(const float* in, float* out, int n, int limit) {
    const int stride = blockDim.x * gridDim.x;
    if (threadIdx.x < limit) {
        for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) out[i] = in[i] + 3.0f;
    }
}

// Under a condition that leaves out scattered threads of each row of a 2-D block, the counter
// declared before the loop and read after it: a round that leaves some threads out runs those
// still in as several runs of adjacent threads, and each thread's last counter is kept once.
__global__ void stride_scattered(const float* in, float* out, int n) {
    const int t = threadIdx.y * blockDim.x + threadIdx.x;
    const int threads = blockDim.x * blockDim.y;
    int i;
    if ((threadIdx.x + threadIdx.y) % 3 != 1) {
        for (i = blockIdx.x * threads + t; i < n; i += threads * gridDim.x) out[i] = in[i] * 3.0f + 1.0f;
        out[n + blockIdx.x * threads + t] = (float)(i - n);
    }
}

// cudahandbook's globalCopy: U elements a thread per step, a block's stride apart, unrolled.
template <class T, int U>
__global__ void stride_unrolled(T* out, const T* in, size_t n) {
    for (size_t i = U * blockIdx.x * blockDim.x + threadIdx.x; i + (U - 1) * blockDim.x < n;
         i += U * blockDim.x * gridDim.x) {
        T temp[U];
#pragma unroll
        for (int j = 0; j < U; j++) temp[j] = in[i + j * blockDim.x];
#pragma unroll
        for (int j = 0; j < U; j++) out[i + j * blockDim.x] = temp[j] + (T)j;
    }
}

// globalCopy's whole shape: the counter declared before the loop and read after it, where each
// thread finishes the elements its whole steps left; an array per thread across the loop.
template <class T, int U>
__global__ void stride_counter_after(T* out, const T* in, size_t n) {
    T held[U];
    size_t i;
    for (i = U * blockIdx.x * blockDim.x + threadIdx.x; i + (U - 1) * blockDim.x < n;
         i += U * blockDim.x * gridDim.x) {
#pragma unroll
        for (int j = 0; j < U; j++) held[j] = in[i + j * blockDim.x];
#pragma unroll
        for (int j = 0; j < U; j++) out[i + j * blockDim.x] = held[j] * (T)2;
    }
    for (int j = 0; j < U; j++) {
        const size_t at = i + j * blockDim.x;
        if (at < n) out[at] = in[at] - (T)1;
    }
}

// The counter is written in the body: each thread may skip a step, the plain order stays.
__global__ void plain_counter_written(const float* in, float* out, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        out[i] = in[i];
        if (in[i] > 1.0f) i += blockDim.x * gridDim.x;
    }
}

// A thread may leave its loop early: the plain order stays.
__global__ void plain_break(const float* in, float* out, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        if (in[i] > 1.5f) break;
        out[i] = in[i];
    }
}

#include "lockstep_check.h"

static const int kPad = 300;  // sentinel elements past the bound
static const float kSentinel = -99.0f;

int main(int argc, char** argv) {
    const char* only = argc > 1 && std::strcmp(argv[1], "all") != 0 ? argv[1] : nullptr;
    const int n = argc > 2 ? std::atoi(argv[2]) : 1000;
    const size_t len = (size_t)n + kPad;
    auto a = values(len, 1), b = values(len, 2);
    std::vector<float> blank(len, kSentinel);
    float *da = to_device(a), *db = to_device(b), *dout = to_device(blank);
    auto fresh = [&] { cudaMemcpy(dout, blank.data(), len * sizeof(float), cudaMemcpyHostToDevice); };
    if (wanted(only, "stride_add")) {
        std::vector<float> want = blank;
        for (int i = 0; i < n; ++i) want[i] = a[i] + b[i];
        fresh();
        stride_add<<<3, 128>>>(da, db, dout, n);  // a stride of 384
        report("stride_add", from_device(dout, len), want);
        fresh();
        stride_add<<<7, 96>>>(da, db, dout, n / 10);  // fewer elements than threads
        std::vector<float> few = blank;
        for (int i = 0; i < n / 10; ++i) few[i] = a[i] + b[i];
        report("stride_add", from_device(dout, len), few);
    }
    if (wanted(only, "stride_locals")) {
        std::vector<float> want = blank;
        const int stride = 5 * 64;
        for (int i = 0; i < n; ++i) want[i] = 2.0f * a[i] + (float)((i % stride) % 5);
        fresh();
        stride_locals<<<5, 64>>>(da, dout, n);
        report("stride_locals", from_device(dout, len), want);
    }
    if (wanted(only, "stride_size_t")) {
        std::vector<float> want = blank;
        for (int i = 0; i < n; ++i) want[i] = a[i] * a[i] - 1.0f;
        fresh();
        stride_size_t<<<2, 160>>>(da, dout, (size_t)n);
        report("stride_size_t", from_device(dout, len), want);
    }
    if (wanted(only, "stride_unsigned")) {
        std::vector<float> want = blank;
        for (int i = 0; i < n; ++i) want[i] = sqrtf(a[i] * a[i] + 1.0f);
        fresh();
        stride_unsigned<<<4, 32>>>(da, dout, (unsigned)n);
        report("stride_unsigned", from_device(dout, len), want);
    }
    const int w = n / 20 + 3, h = 17;  // 53 x 17 by default: partial in both
    if (wanted(only, "stride_rows")) {
        std::vector<float> want = blank;
        for (int y = 0; y < h; ++y)
            for (int x = 0; x < w; ++x) want[(size_t)y * w + x] = a[(size_t)y * w + x] + (float)y;
        fresh();
        stride_rows<<<dim3(2, 3), 16>>>(da, dout, w, h);
        report("stride_rows", from_device(dout, len), want);
    }
    if (wanted(only, "stride_2d")) {
        std::vector<float> want = blank;
        for (int y = 0; y < h; ++y)
            for (int x = 0; x < w; ++x) want[(size_t)y * w + x] = a[(size_t)y * w + x] * 0.5f + (float)x;
        fresh();
        stride_2d<<<dim3(2, 2), dim3(8, 4)>>>(da, dout, w, h);
        report("stride_2d", from_device(dout, len), want);
    }
    if (wanted(only, "stride_guarded")) {
        std::vector<float> want = blank;
        for (int i = 0; i < n; ++i)
            if (i % 64 < 40) want[i] = a[i] + 3.0f;
        fresh();
        stride_guarded<<<3, 64>>>(da, dout, n, 40);  // a stride of 192, a multiple of 64
        report("stride_guarded", from_device(dout, len), want);
    }
    if (wanted(only, "stride_scattered")) {
        const int bx = 8, by = 3, gx = 3, threads = bx * by;  // a stride of 72
        std::vector<float> want = blank;
        for (int blk = 0; blk < gx; ++blk)
            for (int t = 0; t < threads; ++t) {
                if ((t % bx + t / bx) % 3 == 1) continue;
                int i = blk * threads + t;
                for (; i < n; i += threads * gx) want[i] = a[i] * 3.0f + 1.0f;
                want[n + blk * threads + t] = (float)(i - n);
            }
        fresh();
        stride_scattered<<<gx, dim3(bx, by)>>>(da, dout, n);
        report("stride_scattered", from_device(dout, len), want);
    }
    if (wanted(only, "stride_unrolled")) {
        // Each step copies 4 elements 32 apart; the steps stop where a whole step no longer fits.
        const int U = 4, bx = 32, gx = 3;
        std::vector<float> want = blank;
        for (size_t i0 = 0; i0 < (size_t)gx * bx; ++i0) {
            size_t blk = i0 / bx, t = i0 % bx;
            for (size_t i = U * blk * bx + t; i + (U - 1) * bx < (size_t)n; i += (size_t)U * bx * gx)
                for (int j = 0; j < U; ++j) want[i + j * bx] = a[i + j * bx] + (float)j;
        }
        fresh();
        stride_unrolled<float, 4><<<gx, bx>>>(dout, da, (size_t)n);
        report("stride_unrolled", from_device(dout, len), want);
    }
    if (wanted(only, "stride_counter_after")) {
        const int U = 4, bx = 32, gx = 3;
        std::vector<float> want = blank;
        for (size_t i0 = 0; i0 < (size_t)gx * bx; ++i0) {
            size_t blk = i0 / bx, t = i0 % bx, i = U * blk * bx + t;
            for (; i + (U - 1) * bx < (size_t)n; i += (size_t)U * bx * gx)
                for (int j = 0; j < U; ++j) want[i + j * bx] = a[i + j * bx] * 2.0f;
            for (int j = 0; j < U; ++j)
                if (i + j * bx < (size_t)n) want[i + j * bx] = a[i + j * bx] - 1.0f;
        }
        fresh();
        stride_counter_after<float, 4><<<gx, bx>>>(dout, da, (size_t)n);
        report("stride_counter_after", from_device(dout, len), want);
    }
    if (wanted(only, "plain_counter_written")) {
        std::vector<float> want = blank;
        const int stride = 2 * 64;
        for (int t = 0; t < stride; ++t)
            for (int i = t; i < n; i += stride) {
                want[i] = a[i];
                if (a[i] > 1.0f) i += stride;
            }
        fresh();
        plain_counter_written<<<2, 64>>>(da, dout, n);
        report("plain_counter_written", from_device(dout, len), want);
    }
    if (wanted(only, "plain_break")) {
        std::vector<float> want = blank;
        const int stride = 2 * 64;
        for (int t = 0; t < stride; ++t)
            for (int i = t; i < n; i += stride) {
                if (a[i] > 1.5f) break;
                want[i] = a[i];
            }
        fresh();
        plain_break<<<2, 64>>>(da, dout, n);
        report("plain_break", from_device(dout, len), want);
    }
    cudaFree(da), cudaFree(db), cudaFree(dout);
    std::printf("status %s\n", cudaGetErrorName(cudaDeviceSynchronize()));
    return 0;
}
