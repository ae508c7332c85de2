// Kernels in the shape of the tensor-core samples' *_async_copy kernels: a thread-scope
// cuda::pipeline and a cuda::aligned_size_t living across barriers, cuda::memcpy_async into shared
// memory waited on before a barrier, and a parameter written among the thread's own statements.
// The simulator runs the first two as block loops; the last writes its parameter after a
// statement that reads it and keeps fibers. Each prints its output's sum and whether every
// element equals the host's.
#include <cuda/pipeline>

#include <cstdio>
#include <cstdlib>

constexpr int kThreads = 128;  // threads per block
constexpr int kTile = 4;       // floats each thread copies per tile (one float4)

// out[i] = scale * (sum over tiles of in[tile][j] for the element j 7 threads ahead in the
// block's staged tile): each thread copies its float4 of every tile with memcpy_async and reads
// another thread's after the barrier.
__global__ void pipe_tiles(const float* in, float* out, int tiles, float scale) {
    __shared__ float stage[kThreads * kTile];
    const int t = (int)threadIdx.x;
    const int base = (int)blockIdx.x * kThreads * kTile;
    cuda::pipeline<cuda::thread_scope_thread> pipe = cuda::make_pipeline();
    const auto shape = cuda::aligned_size_t<alignof(float4)>(sizeof(float4));
    float acc[kTile] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int tile = 0; tile < tiles; ++tile) {
        const float* src = in + (size_t)tile * gridDim.x * kThreads * kTile + base;
        pipe.producer_acquire();
        cuda::memcpy_async(&stage[t * kTile], &src[t * kTile], shape, pipe);
        pipe.producer_commit();
        cuda::pipeline_consumer_wait_prior<0>(pipe);
        __syncthreads();
        const int from = ((t + 7) % kThreads) * kTile;
        for (int e = 0; e < kTile; ++e) acc[e] += stage[from + e];
        pipe.consumer_release();
        __syncthreads();
    }
    for (int e = 0; e < kTile; ++e) out[base + t * kTile + e] = acc[e] * scale;
}

// out[i] = in[i + 1 in the block] * scale / div: the parameter is written among the thread's own
// statements, as the samples' `beta /= alpha;`.
__global__ void param_between(const float* in, float* out, float scale, float div) {
    __shared__ float stage[kThreads];
    const int t = (int)threadIdx.x;
    const int i = (int)blockIdx.x * kThreads + t;
    scale /= div;
    const float mine = in[i];
    stage[t] = mine;
    __syncthreads();
    out[i] = stage[(t + 1) % kThreads] * scale;
}

// A parameter written after a statement of the same region that reads it: each thread's first
// read sees the value before its own write, which a write once for the block would change (the
// parameter is each thread's own, in a slot).
__global__ void param_read_first(const float* in, float* out, float scale) {
    __shared__ float stage[kThreads];
    const int t = (int)threadIdx.x;
    const float first = in[blockIdx.x * kThreads + t] * scale;
    scale *= 2.0f;
    stage[t] = first;
    __syncthreads();
    out[blockIdx.x * kThreads + t] = stage[(t + 1) % kThreads] + scale;
}

static bool check(const char* name, const float* got, const float* want, int n) {
    double sum = 0.0;
    bool ok = true;
    for (int i = 0; i < n; ++i) {
        sum += got[i];
        ok = ok && got[i] == want[i];
    }
    printf("%s %s %.3f\n", name, ok ? "ok" : "WRONG", sum);
    return ok;
}

int main() {
    const int blocks = 3, tiles = 5, n = blocks * kThreads * kTile;
    const float scale = 3.0f, div = 2.0f;
    float* in = nullptr;
    float* out = nullptr;
    cudaMallocManaged(&in, sizeof(float) * (size_t)n * tiles);
    cudaMallocManaged(&out, sizeof(float) * n);
    for (int i = 0; i < n * tiles; ++i) in[i] = (float)((i * 37) % 101) * 0.25f;
    float* want = (float*)malloc(sizeof(float) * n);

    pipe_tiles<<<blocks, kThreads>>>(in, out, tiles, scale);
    cudaDeviceSynchronize();
    for (int b = 0; b < blocks; ++b)
        for (int t = 0; t < kThreads; ++t)
            for (int e = 0; e < kTile; ++e) {
                float acc = 0.0f;
                for (int tile = 0; tile < tiles; ++tile)
                    acc += in[tile * n + b * kThreads * kTile + ((t + 7) % kThreads) * kTile + e];
                want[b * kThreads * kTile + t * kTile + e] = acc * scale;
            }
    bool ok = check("pipe_tiles", out, want, n);

    param_between<<<blocks, kThreads>>>(in, out, scale, div);
    cudaDeviceSynchronize();
    for (int b = 0; b < blocks; ++b)
        for (int t = 0; t < kThreads; ++t) want[b * kThreads + t] = in[b * kThreads + (t + 1) % kThreads] * (scale / div);
    ok = check("param_between", out, want, blocks * kThreads) && ok;

    param_read_first<<<blocks, kThreads>>>(in, out, scale);
    cudaDeviceSynchronize();
    for (int b = 0; b < blocks; ++b)
        for (int t = 0; t < kThreads; ++t)
            want[b * kThreads + t] = in[b * kThreads + (t + 1) % kThreads] * scale + scale * 2.0f;
    ok = check("param_read_first", out, want, blocks * kThreads) && ok;

    printf("%s\n", cudaGetErrorString(cudaGetLastError()));
    free(want);
    cudaFree(in);
    cudaFree(out);
    return ok ? 0 : 1;
}
