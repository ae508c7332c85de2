// Barrier-free kernels for the lockstep order (simulator/block_loops_interchange.py): those named
// lockstep_* have a loop that walks memory across threads and run a step for all of a block's
// threads at a time in a fast build; those named plain_* keep the plain loop's order. Each result
// is checked against the host's and printed in full, so that a run with SIMULATOR_FIBERS=1 can be
// compared line for line. An argument picks one kernel (by name); none runs them all.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

// The naive matmul under a guard (olcf hw1's): each thread walks a column of B.
__global__ void lockstep_matmul_guarded(const float* A, const float* B, float* C, int n) {
    int idx = threadIdx.x + blockDim.x * blockIdx.x;
    int idy = threadIdx.y + blockDim.y * blockIdx.y;
    if ((idx < n) && (idy < n)) {
        float temp = 0;
        for (int i = 0; i < n; i++) temp += A[idy * n + i] * B[i * n + idx];
        C[idy * n + idx] = temp;
    }
}

// The naive matmul without a guard (bench_simulator.py's): `sum` lives across the loop.
__global__ void lockstep_matmul(const float* A, const float* B, float* C, int n) {
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    float sum = 0.0f;
    for (int k = 0; k < n; ++k) sum += A[row * n + k] * B[k * n + col];
    C[row * n + col] = sum;
}

// pcuda's sumMatrixOnGPU1D: one thread a column, a local declared in the loop, a 1-D block whose
// last one is partly outside the matrix.
__global__ void lockstep_column_sum(float* MatA, float* MatB, float* MatC, int nx, int ny) {
    unsigned int ix = threadIdx.x + blockIdx.x * blockDim.x;
    if (ix < nx)
        for (int iy = 0; iy < ny; iy++) {
            int idx = iy * nx + ix;
            MatC[idx] = MatA[idx] + MatB[idx];
        }
}

// Two nested guards, per-thread state before and after the loop (an accumulator and a running
// maximum), a bound from a block-uniform local and a 2-D grid whose last blocks are partial.
__global__ void lockstep_nested_guards(const float* in, float* out, int w, int h) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    const int rows = h / 2;
    if (x < w) {
        float acc = 0.5f * x;
        float top = -1.0f;
        if (y < 3) {
            for (int r = 0; r < rows; ++r) {
                const float v = in[r * w + x] * (1.0f + y);
                acc += v;
                top = v > top ? v : top;
            }
            out[(y * w + x) * 2] = acc;
            out[(y * w + x) * 2 + 1] = top;
        }
    }
}

// The loop's trip count differs between threads: it keeps the plain loop.
__global__ void plain_thread_trip_count(const float* in, float* out, int w) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    float s = 0.0f;
    for (int r = 0; r < x % 7; ++r) s += in[r * w + x];
    out[x] = s;
}

// Each thread walks its own row (adjacent steps are adjacent elements): the plain order is the
// better one, kept.
__global__ void plain_row_walk(const float* in, float* out, int w) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    float s = 0.0f;
    for (int c = 0; c < w; ++c) s += in[x * w + c];
    out[x] = s;
}

// A loop that may stop early for one thread: kept.
__global__ void plain_break(const float* in, float* out, int w, int h) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    float s = 0.0f;
    for (int r = 0; r < h; ++r) {
        if (in[r * w + x] < 0.0f) break;
        s += in[r * w + x];
    }
    out[x] = s;
}

// A guard that reads memory another thread's statements could write: kept.
__global__ void plain_memory_guard(const int* flags, float* out, int w, int h) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    if (flags[x]) {
        float s = 0.0f;
        for (int r = 0; r < h; ++r) s += 1.0f * (r * w + x);
        out[x] = s;
    }
}

// A block-uniform local under a thread's condition (it would be computed once for the block, even
// where no thread passes the condition, here a division by zero): kept.
__global__ void plain_uniform_under_guard(const float* in, float* out, int w, int d) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    if (x < w && d != 0) {
        const int rows = w / d;
        float s = 0.0f;
        for (int r = 0; r < rows; ++r) s += in[r * w + x];
        out[x] = s;
    }
}

#include "lockstep_check.h"

// The host's matmul, each sum in the kernel's order.
static std::vector<float> host_matmul(const std::vector<float>& A, const std::vector<float>& B, int n) {
    std::vector<float> C((size_t)n * n);
    for (int r = 0; r < n; ++r)
        for (int c = 0; c < n; ++c) {
            float s = 0.0f;
            for (int k = 0; k < n; ++k) s += A[(size_t)r * n + k] * B[(size_t)k * n + c];
            C[(size_t)r * n + c] = s;
        }
    return C;
}

int main(int argc, char** argv) {
    const char* only = argc > 1 ? argv[1] : nullptr;
    if (wanted(only, "lockstep_matmul_guarded")) {
        const int n = 45;  // 3x3 blocks of 16x16, the last ones partial
        auto A = values((size_t)n * n, 1), B = values((size_t)n * n, 2);
        float *dA = to_device(A), *dB = to_device(B), *dC = to_device(std::vector<float>((size_t)n * n, 7.0f));
        lockstep_matmul_guarded<<<dim3(3, 3), dim3(16, 16)>>>(dA, dB, dC, n);
        report("lockstep_matmul_guarded", from_device(dC, (size_t)n * n), host_matmul(A, B, n));
        cudaFree(dA), cudaFree(dB), cudaFree(dC);
    }
    if (wanted(only, "lockstep_matmul")) {
        const int n = 64;
        auto A = values((size_t)n * n, 3), B = values((size_t)n * n, 4);
        float *dA = to_device(A), *dB = to_device(B), *dC = to_device(std::vector<float>((size_t)n * n));
        lockstep_matmul<<<dim3(4, 4), dim3(16, 16)>>>(dA, dB, dC, n);
        report("lockstep_matmul", from_device(dC, (size_t)n * n), host_matmul(A, B, n));
        cudaFree(dA), cudaFree(dB), cudaFree(dC);
    }
    if (wanted(only, "lockstep_column_sum")) {
        const int nx = 1000, ny = 37;  // 4 blocks of 256, the last one partial
        auto A = values((size_t)nx * ny, 5), B = values((size_t)nx * ny, 6);
        std::vector<float> want((size_t)nx * ny);
        for (size_t i = 0; i < want.size(); ++i) want[i] = A[i] + B[i];
        float *dA = to_device(A), *dB = to_device(B), *dC = to_device(std::vector<float>((size_t)nx * ny));
        lockstep_column_sum<<<(nx + 255) / 256, 256>>>(dA, dB, dC, nx, ny);
        report("lockstep_column_sum", from_device(dC, (size_t)nx * ny), want);
        cudaFree(dA), cudaFree(dB), cudaFree(dC);
    }
    if (wanted(only, "lockstep_nested_guards")) {
        const int w = 50, h = 9;  // blocks of 16x4: 4x2 of them, partial in x and in y
        auto in = values((size_t)w * h, 7);
        std::vector<float> want((size_t)w * 8 * 2, 3.0f);
        for (int y = 0; y < 3; ++y)
            for (int x = 0; x < w; ++x) {
                float acc = 0.5f * x, top = -1.0f;
                for (int r = 0; r < h / 2; ++r) {
                    const float v = in[(size_t)r * w + x] * (1.0f + y);
                    acc += v;
                    top = v > top ? v : top;
                }
                want[(size_t)(y * w + x) * 2] = acc;
                want[(size_t)(y * w + x) * 2 + 1] = top;
            }
        float *din = to_device(in), *dout = to_device(std::vector<float>(want.size(), 3.0f));
        lockstep_nested_guards<<<dim3(4, 2), dim3(16, 4)>>>(din, dout, w, h);
        report("lockstep_nested_guards", from_device(dout, want.size()), want);
        cudaFree(din), cudaFree(dout);
    }
    const int w = 256, h = 20;
    auto in = values((size_t)w * h, 8);
    auto square = values((size_t)w * w, 9);
    if (wanted(only, "plain_thread_trip_count")) {
        std::vector<float> want(w);
        for (int x = 0; x < w; ++x) {
            float s = 0.0f;
            for (int r = 0; r < x % 7; ++r) s += in[(size_t)r * w + x];
            want[x] = s;
        }
        float *din = to_device(in), *dout = to_device(std::vector<float>(w));
        plain_thread_trip_count<<<w / 64, 64>>>(din, dout, w);
        report("plain_thread_trip_count", from_device(dout, w), want);
        cudaFree(din), cudaFree(dout);
    }
    if (wanted(only, "plain_row_walk")) {
        std::vector<float> want(w);
        for (int x = 0; x < w; ++x) {
            float s = 0.0f;
            for (int c = 0; c < w; ++c) s += square[(size_t)x * w + c];
            want[x] = s;
        }
        float *din = to_device(square), *dout = to_device(std::vector<float>(w));
        plain_row_walk<<<w / 64, 64>>>(din, dout, w);
        report("plain_row_walk", from_device(dout, w), want);
        cudaFree(din), cudaFree(dout);
    }
    if (wanted(only, "plain_break")) {
        std::vector<float> want(w);
        for (int x = 0; x < w; ++x) {
            float s = 0.0f;
            for (int r = 0; r < h; ++r) {
                if (in[(size_t)r * w + x] < 0.0f) break;
                s += in[(size_t)r * w + x];
            }
            want[x] = s;
        }
        float *din = to_device(in), *dout = to_device(std::vector<float>(w));
        plain_break<<<w / 64, 64>>>(din, dout, w, h);
        report("plain_break", from_device(dout, w), want);
        cudaFree(din), cudaFree(dout);
    }
    if (wanted(only, "plain_memory_guard")) {
        std::vector<int> flags(w);
        std::vector<float> want(w, 2.0f);
        for (int x = 0; x < w; ++x) {
            flags[x] = x % 3 != 0;
            if (flags[x]) {
                float s = 0.0f;
                for (int r = 0; r < h; ++r) s += 1.0f * (r * w + x);
                want[x] = s;
            }
        }
        int* dflags = nullptr;
        cudaMalloc(&dflags, w * sizeof(int));
        cudaMemcpy(dflags, flags.data(), w * sizeof(int), cudaMemcpyHostToDevice);
        float* dout = to_device(std::vector<float>(w, 2.0f));
        plain_memory_guard<<<w / 64, 64>>>(dflags, dout, w, h);
        report("plain_memory_guard", from_device(dout, w), want);
        cudaFree(dflags), cudaFree(dout);
    }
    if (wanted(only, "plain_uniform_under_guard")) {
        std::vector<float> want(w);
        for (int x = 0; x < w; ++x) {
            float s = 0.0f;
            for (int r = 0; r < w / 16; ++r) s += square[(size_t)r * w + x];
            want[x] = s;
        }
        float *din = to_device(square), *dout = to_device(std::vector<float>(w));
        plain_uniform_under_guard<<<w / 64, 64>>>(din, dout, w, 16);
        report("plain_uniform_under_guard", from_device(dout, w), want);
        cudaFree(din), cudaFree(dout);
    }
    std::printf("status %s\n", cudaGetErrorName(cudaDeviceSynchronize()));
    return 0;
}
