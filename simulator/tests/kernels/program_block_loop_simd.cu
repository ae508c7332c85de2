// Block-loop kernels in the forms that let a region's thread loop vectorise (simulator/block_loops.py):
// regions that call nothing and read threadIdx only as threadIdx.x/.y/.z (no index stored per
// thread), integer and pointer locals that later regions compute again instead of keeping per
// thread, and the cases around them: an array living across a barrier, a region with a loop that
// `continue`s, 2-D and 3-D blocks whose widths are no multiple of a vector's, a local computed from
// another that no later region names, an unsigned index that wraps, a local that is written, and a
// region that calls a function reading threadIdx (it keeps storing the index per thread).
// Each result is checked against the host's and printed as a hash of its bytes, so that a run with
// SIMULATOR_FIBERS=1 can be compared line for line. An argument picks one kernel; none runs them all.
#include <cstdio>
#include <cstring>
#include <vector>

// An array per thread across the barrier; 37 threads a block (no multiple of 4, 8 or 16).
__global__ void simd_array_locals(const float* in, float* out) {
    __shared__ float s[64];
    const int t = threadIdx.x;
    const int base = (blockIdx.x * blockDim.x + t) * 3;
    float acc[3];
    for (int j = 0; j < 3; ++j) acc[j] = in[base + j] * 0.5f + 0.25f;
    s[t] = acc[0] * acc[1] + acc[2];
    __syncthreads();
    out[blockIdx.x * blockDim.x + t] = s[blockDim.x - 1 - t] + acc[1] * acc[2] - acc[0];
}

// A loop inside a region that skips some iterations with `continue`.
__global__ void simd_continue(const int* in, int* out, int n) {
    __shared__ int s[64];
    const int t = threadIdx.x;
    int sum = 0;
    for (int k = 0; k < n; ++k) {
        if ((k + t) % 3 == 0) continue;
        sum += in[k] * (t + 1);
    }
    s[t] = sum;
    __syncthreads();
    out[blockIdx.x * blockDim.x + t] = s[(t + 1) % blockDim.x] - sum + (int)blockIdx.x;
}

// A 13x5 block over a matrix whose edges fall inside blocks: indices from unsigned arithmetic, a
// pointer and a flag computed again after the barrier.
__global__ void simd_2d(const float* in, float* out, int w, int h) {
    __shared__ float tile[5][13];
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    const float* row = in + (size_t)(y < h ? y : 0) * w;
    const bool inside = x < w && y < h;
    tile[threadIdx.y][threadIdx.x] = inside ? row[x] : -1.0f;
    __syncthreads();
    if (inside) {
        out[(size_t)y * w + x] = tile[blockDim.y - 1 - threadIdx.y][blockDim.x - 1 - threadIdx.x] * 2.0f + row[x];
    }
}

// A 4x3x2 block: `lin` lives across the barrier and is computed from `zy`, which no later region names.
__global__ void simd_3d(int* out) {
    __shared__ int s[64];
    const int zy = threadIdx.z * blockDim.y + threadIdx.y;
    const int lin = zy * blockDim.x + threadIdx.x;
    const int n = blockDim.x * blockDim.y * blockDim.z;
    s[lin] = lin * 7 + (int)blockIdx.x;
    __syncthreads();
    out[blockIdx.x * n + lin] = s[n - 1 - lin] - lin;
}

// An unsigned index that wraps below zero, and a local that a thread writes (kept per thread).
__global__ void simd_wrap_and_written(unsigned int* out) {
    __shared__ unsigned int s[48];
    const unsigned int u = threadIdx.x - 5u;
    unsigned int v = threadIdx.x * 3u;
    v += u >> 28;
    s[threadIdx.x] = u ^ v;
    __syncthreads();
    out[blockIdx.x * blockDim.x + threadIdx.x] = s[(threadIdx.x + 7u) % blockDim.x] + u + v;
}

__device__ int thread_code() { return (int)(threadIdx.x * 3 + threadIdx.y); }

// A region that calls a function reading threadIdx: its loop stores the index for every thread.
__global__ void simd_call(int* out) {
    __shared__ int s[40];
    const int t = threadIdx.x;
    s[t] = thread_code();
    __syncthreads();
    out[blockIdx.x * blockDim.x + t] = s[blockDim.x - 1 - t] * 10 + thread_code();
}

static bool wanted(const char* only, const char* name) { return only == nullptr || std::strcmp(only, name) == 0; }

// FNV-1a of the result's bytes: a run with fibers must give every bit the same.
static unsigned long long hash(const void* p, size_t n) {
    unsigned long long h = 1469598103934665603ull;
    for (size_t i = 0; i < n; ++i) h = (h ^ static_cast<const unsigned char*>(p)[i]) * 1099511628211ull;
    return h;
}

template <class T>
static void result(const char* name, const std::vector<T>& got, const std::vector<T>& want) {
    const bool ok = std::memcmp(got.data(), want.data(), got.size() * sizeof(T)) == 0;
    std::printf("%s %s %016llx\n", name, ok ? "ok" : "WRONG", hash(got.data(), got.size() * sizeof(T)));
}

template <class T>
static T* device_copy(const std::vector<T>& h) {
    T* d = nullptr;
    cudaMalloc(&d, h.size() * sizeof(T));
    cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice);
    return d;
}

template <class T>
static std::vector<T> host_copy(const T* d, size_t n) {
    std::vector<T> h(n);
    cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost);
    return h;
}

int main(int argc, char** argv) {
    const char* only = argc > 1 ? argv[1] : nullptr;
    if (wanted(only, "simd_array_locals")) {
        const int bs = 37, nb = 5, n = bs * nb;
        std::vector<float> in(n * 3), want(n);
        for (int i = 0; i < n * 3; ++i) in[i] = (float)((i * 13) % 29) * 0.37f - 3.0f;
        for (int b = 0; b < nb; ++b) {
            std::vector<float> s(bs);
            std::vector<float> acc(bs * 3);
            for (int t = 0; t < bs; ++t) {
                for (int j = 0; j < 3; ++j) acc[t * 3 + j] = in[(b * bs + t) * 3 + j] * 0.5f + 0.25f;
                s[t] = acc[t * 3] * acc[t * 3 + 1] + acc[t * 3 + 2];
            }
            for (int t = 0; t < bs; ++t) {
                want[b * bs + t] = s[bs - 1 - t] + acc[t * 3 + 1] * acc[t * 3 + 2] - acc[t * 3];
            }
        }
        float* din = device_copy(in);
        float* dout = device_copy(std::vector<float>(n));
        simd_array_locals<<<nb, bs>>>(din, dout);
        const std::vector<float> got = host_copy(dout, n);
        // The device contracts a * b + c into a fused multiply-add where the host may not: the
        // check is to within rounding, the printed hash is every bit.
        bool close = true;
        for (int i = 0; i < n; ++i) close &= got[i] - want[i] < 1e-3f && want[i] - got[i] < 1e-3f;
        std::printf("simd_array_locals %s %016llx\n", close ? "ok" : "WRONG", hash(got.data(), n * sizeof(float)));
    }
    if (wanted(only, "simd_continue")) {
        const int bs = 45, nb = 3, k = 50;
        std::vector<int> in(k), want(bs * nb);
        for (int i = 0; i < k; ++i) in[i] = (i * 7) % 19 - 9;
        for (int b = 0; b < nb; ++b) {
            std::vector<int> sum(bs);
            for (int t = 0; t < bs; ++t)
                for (int j = 0; j < k; ++j)
                    if ((j + t) % 3 != 0) sum[t] += in[j] * (t + 1);
            for (int t = 0; t < bs; ++t) want[b * bs + t] = sum[(t + 1) % bs] - sum[t] + b;
        }
        int* din = device_copy(in);
        int* dout = device_copy(std::vector<int>(bs * nb));
        simd_continue<<<nb, bs>>>(din, dout, k);
        result("simd_continue", host_copy(dout, bs * nb), want);
    }
    if (wanted(only, "simd_2d")) {
        const int w = 30, h = 12, bx = 13, by = 5;
        std::vector<float> in(w * h), want(w * h, 0.0f);
        for (int i = 0; i < w * h; ++i) in[i] = (float)((i * 5) % 23) * 0.25f;
        for (int gy = 0; gy < (h + by - 1) / by; ++gy)
            for (int gx = 0; gx < (w + bx - 1) / bx; ++gx)
                for (int ty = 0; ty < by; ++ty)
                    for (int tx = 0; tx < bx; ++tx) {
                        const int x = gx * bx + tx, y = gy * by + ty;
                        if (x >= w || y >= h) continue;
                        const int ox = gx * bx + bx - 1 - tx, oy = gy * by + by - 1 - ty;
                        const float other = ox < w && oy < h ? in[oy * w + ox] : -1.0f;
                        want[y * w + x] = other * 2.0f + in[y * w + x];
                    }
        float* din = device_copy(in);
        float* dout = device_copy(std::vector<float>(w * h, 0.0f));
        simd_2d<<<dim3((w + bx - 1) / bx, (h + by - 1) / by), dim3(bx, by)>>>(din, dout, w, h);
        result("simd_2d", host_copy(dout, w * h), want);
    }
    if (wanted(only, "simd_3d")) {
        const int n = 24, nb = 4;
        std::vector<int> want(n * nb);
        for (int b = 0; b < nb; ++b)
            for (int lin = 0; lin < n; ++lin) want[b * n + lin] = (n - 1 - lin) * 7 + b - lin;
        int* dout = device_copy(std::vector<int>(n * nb));
        simd_3d<<<nb, dim3(4, 3, 2)>>>(dout);
        result("simd_3d", host_copy(dout, n * nb), want);
    }
    if (wanted(only, "simd_wrap_and_written")) {
        const int bs = 41, nb = 2;
        std::vector<unsigned int> want(bs * nb);
        for (int b = 0; b < nb; ++b) {
            std::vector<unsigned int> s(bs), u(bs), v(bs);
            for (unsigned int t = 0; t < (unsigned)bs; ++t) {
                u[t] = t - 5u;
                v[t] = t * 3u + (u[t] >> 28);
                s[t] = u[t] ^ v[t];
            }
            for (unsigned int t = 0; t < (unsigned)bs; ++t) want[b * bs + t] = s[(t + 7u) % bs] + u[t] + v[t];
        }
        unsigned int* dout = device_copy(std::vector<unsigned int>(bs * nb));
        simd_wrap_and_written<<<nb, bs>>>(dout);
        result("simd_wrap_and_written", host_copy(dout, bs * nb), want);
    }
    if (wanted(only, "simd_call")) {
        const int bs = 33, nb = 2;
        std::vector<int> want(bs * nb);
        for (int b = 0; b < nb; ++b)
            for (int t = 0; t < bs; ++t) want[b * bs + t] = (bs - 1 - t) * 3 * 10 + t * 3;
        int* dout = device_copy(std::vector<int>(bs * nb));
        simd_call<<<nb, bs>>>(dout);
        result("simd_call", host_copy(dout, bs * nb), want);
    }
    std::printf("status %s\n", cudaGetErrorName(cudaDeviceSynchronize()));
    return 0;
}
