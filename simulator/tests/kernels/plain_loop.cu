// Barrier-free launches as a plain loop, against the same launches with fibers: each entry
// launches through ::__sim::launch with a LaunchSpec whose barrier_free is ``plain`` (what the
// build does for a kernel that reaches no barrier, warp operation or other wait).
#include <assert.h>
#include <cuda_runtime.h>
#include <stdio.h>

#define LAUNCH(plain, grid, block, smem, kernel, ...)                                                        \
    ::__sim::launch(::__sim::LaunchSpec{dim3(grid), dim3(block), (size_t)(smem), 0, (plain) != 0}, #kernel, __FILE__, \
                  __LINE__, kernel, __VA_ARGS__)

// Elementwise, with every built-in a thread reads recorded.
__global__ void add_ids(const float* a, const float* b, float* c, int* ids, int n) {
    const int t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    const int bid = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    const int i = bid * (blockDim.x * blockDim.y * blockDim.z) + t;
    if (i >= n) return;
    c[i] = a[i] + b[i];
    int* r = ids + 8 * i;
    r[0] = threadIdx.x;
    r[1] = threadIdx.y;
    r[2] = threadIdx.z;
    r[3] = blockIdx.x;
    r[4] = blockIdx.y;
    r[5] = blockIdx.z;
    r[6] = blockDim.x * blockDim.y * blockDim.z;
    r[7] = gridDim.x * gridDim.y * gridDim.z;
}

extern "C" int plain_add(int plain, const float* a, const float* b, float* c, int* ids, int n, int gx, int gy,
                         int gz, int bx, int by, int bz) {
    float *da, *db, *dc;
    int* di;
    cudaMalloc(&da, n * sizeof(float));
    cudaMalloc(&db, n * sizeof(float));
    cudaMalloc(&dc, n * sizeof(float));
    cudaMalloc(&di, 8 * n * sizeof(int));
    cudaMemcpy(da, a, n * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemcpy(db, b, n * sizeof(float), cudaMemcpyHostToDevice);
    LAUNCH(plain, dim3(gx, gy, gz), dim3(bx, by, bz), 0, add_ids, da, db, dc, di, n);
    cudaError_t err = cudaGetLastError();
    cudaMemcpy(c, dc, n * sizeof(float), cudaMemcpyDeviceToHost);
    cudaMemcpy(ids, di, 8 * n * sizeof(int), cudaMemcpyDeviceToHost);
    cudaFree(da);
    cudaFree(db);
    cudaFree(dc);
    cudaFree(di);
    return (int)err;
}

// Shared memory without barriers: each thread reads the slot its predecessor wrote (threads of
// a block run in order here, with fibers too) and thread 0 the slot nobody wrote yet (0xff
// bytes, fresh in every block); the dynamic area likewise; exited lanes show in __activemask.
__global__ void shared_chain(int* out) {
    __shared__ int sm[64];
    extern __shared__ int dyn[];
    const int t = threadIdx.x;
    if (t % 5 == 4) return;
    const int before = t > 0 ? sm[t - 1] : sm[blockDim.x - 1];
    const int dyn_before = t > 0 ? dyn[t - 1] : dyn[blockDim.x - 1];
    sm[t] = 1000 * blockIdx.x + t;
    dyn[t] = -sm[t];
    int* r = out + 4 * (blockIdx.x * blockDim.x + t);
    r[0] = before;
    r[1] = dyn_before;
    r[2] = (int)__activemask();
    r[3] = (int)(threadIdx.x / 32);
}

extern "C" int plain_shared(int plain, int* out, int blocks, int threads) {
    int* d;
    const size_t bytes = 4 * sizeof(int) * blocks * threads;
    cudaMalloc(&d, bytes);
    cudaMemset(d, 0, bytes);
    LAUNCH(plain, dim3(blocks), dim3(threads), threads * sizeof(int), shared_chain, d);
    cudaError_t err = cudaGetLastError();
    cudaMemcpy(out, d, bytes, cudaMemcpyDeviceToHost);
    cudaFree(d);
    return (int)err;
}

__global__ void count_atomics(unsigned int* counter, float* sum) {
    atomicAdd(counter, 1u);
    atomicAdd(sum, 0.5f);
}

extern "C" int plain_atomics(int plain, unsigned int* counter, float* sum, int blocks, int threads) {
    unsigned int* dc;
    float* ds;
    cudaMalloc(&dc, sizeof(unsigned int));
    cudaMalloc(&ds, sizeof(float));
    cudaMemset(dc, 0, sizeof(unsigned int));
    cudaMemset(ds, 0, sizeof(float));
    LAUNCH(plain, dim3(blocks), dim3(threads), 0, count_atomics, dc, ds);
    cudaError_t err = cudaGetLastError();
    cudaMemcpy(counter, dc, sizeof(unsigned int), cudaMemcpyDeviceToHost);
    cudaMemcpy(sum, ds, sizeof(float), cudaMemcpyDeviceToHost);
    cudaFree(dc);
    cudaFree(ds);
    return (int)err;
}

// The two other launch forms the build emits, with the flag in their LaunchSpec: a kernel
// launched through ::__sim::launcher with an argument left to its default (so called by name),
// and a kernel template whose arguments are deduced (::__sim::launch_deduced).
__global__ void scale_ids(int* out, int factor = 3) {
    out[blockIdx.x * blockDim.x + threadIdx.x] = factor * threadIdx.x;
}

template <class T>
__global__ void fill_value(T* out, T value) {
    out[blockIdx.x * blockDim.x + threadIdx.x] = value + (T)blockIdx.x;
}

extern "C" int plain_launch_forms(int plain, int* scaled, float* filled) {
    int* di;
    float* df;
    cudaMalloc(&di, 64 * sizeof(int));
    cudaMalloc(&df, 64 * sizeof(float));
    const ::__sim::LaunchSpec spec{dim3(2), dim3(32), 0, 0, plain != 0};
    ::__sim::launcher(spec, "scale_ids", __FILE__, __LINE__, scale_ids,
                    [](auto... a) { scale_ids(a...); })(di);
    cudaError_t err = cudaGetLastError();
    ::__sim::launch_deduced(spec, "fill_value", __FILE__, __LINE__, [](auto... a) { fill_value(a...); }, df, 1.5f);
    if (err == cudaSuccess) err = cudaGetLastError();
    cudaMemcpy(scaled, di, 64 * sizeof(int), cudaMemcpyDeviceToHost);
    cudaMemcpy(filled, df, 64 * sizeof(float), cudaMemcpyDeviceToHost);
    cudaFree(di);
    cudaFree(df);
    return (int)err;
}

// printf from some threads, then a failing assert in block 2, thread 3.
__global__ void print_and_assert(int* out) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (threadIdx.x == 1) printf("hello from block %d thread %d\n", blockIdx.x, threadIdx.x);
    assert(!(blockIdx.x == 2 && threadIdx.x == 3));
    out[i] = i;
}

// A wild write from block 1, thread 5.
__global__ void wild_write(int* out) {
    if (blockIdx.x == 1 && threadIdx.x == 5) *(volatile int*)16 = 1;
    out[blockIdx.x * blockDim.x + threadIdx.x] = 1;
}

// Spins until the launch timeout stops it.
__global__ void spin_forever(volatile int* flag) {
    while (*flag == 0) {
    }
}

// Marked barrier-free by mistake: the first __syncthreads must stop the launch, not run on.
__global__ void tree_sum(const int* in, int* out) {
    __shared__ int sm[32];
    const int t = threadIdx.x;
    sm[t] = in[blockIdx.x * 32 + t];
    __syncthreads();
    for (int s = 16; s > 0; s >>= 1) {
        if (t < s) sm[t] += sm[t + s];
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = sm[0];
}

__global__ void warp_sum(const int* in, int* out) {
    int v = in[blockIdx.x * 32 + threadIdx.x];
    for (int s = 16; s > 0; s >>= 1) v += __shfl_xor_sync(0xffffffffu, v, s);
    if (threadIdx.x == 0) out[blockIdx.x] = v;
}

// ``which``: 0 print_and_assert, 1 wild_write, 2 spin_forever, 3 tree_sum, 4 warp_sum, 5 tree_sum
// through ::__sim::launcher, 6 tree_sum through ::__sim::launch_deduced. Returns
// the launch's error; ``out`` gets the kernel's output (4 blocks of 32 threads). The device is
// reset afterwards, so that a sticky error does not reach the next call.
extern "C" int plain_failure(int plain, int which, int* out) {
    int *d, *din;
    cudaMalloc(&d, 128 * sizeof(int));
    cudaMalloc(&din, 128 * sizeof(int));
    cudaMemset(d, 0, 128 * sizeof(int));
    int host_in[128];
    for (int i = 0; i < 128; i++) host_in[i] = i * 3 - 50;
    cudaMemcpy(din, host_in, sizeof host_in, cudaMemcpyHostToDevice);
    if (which == 0) LAUNCH(plain, dim3(4), dim3(32), 0, print_and_assert, d);
    if (which == 1) LAUNCH(plain, dim3(4), dim3(32), 0, wild_write, d);
    if (which == 2) LAUNCH(plain, dim3(4), dim3(32), 0, spin_forever, (volatile int*)d);
    if (which == 3) LAUNCH(plain, dim3(4), dim3(32), 0, tree_sum, (const int*)din, d);
    if (which == 4) LAUNCH(plain, dim3(4), dim3(32), 0, warp_sum, (const int*)din, d);
    const ::__sim::LaunchSpec spec{dim3(4), dim3(32), 0, 0, plain != 0};
    if (which == 5) ::__sim::launcher(spec, "tree_sum", __FILE__, __LINE__, tree_sum, ::__sim::no_default_args{})(din, d);
    if (which == 6)
        ::__sim::launch_deduced(spec, "tree_sum", __FILE__, __LINE__, [](auto... a) { tree_sum(a...); }, din, d);
    cudaError_t err = cudaGetLastError();
    if (err == cudaSuccess) err = cudaMemcpy(out, d, 128 * sizeof(int), cudaMemcpyDeviceToHost);
    fflush(stdout);
    cudaDeviceReset();
    return (int)err;
}
