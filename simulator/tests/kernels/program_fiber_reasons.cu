// One kernel per way a launch runs, and per reason the launch log gives for fibers
// (simulator/tests/test_launch_log_reasons.py): each "why:" comment marks the line the reason names.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void tiled(const float* in, float* out) {
    __shared__ float tile[64];
    tile[threadIdx.x] = in[blockIdx.x * 64 + threadIdx.x];
    __syncthreads();
    out[blockIdx.x * 64 + threadIdx.x] = tile[63 - threadIdx.x];
}

__global__ void plain(const float* in, float* out) {
    int i = blockIdx.x * 64 + threadIdx.x;
    out[i] = in[i] * 2.0f;
}

__global__ void branchy(const float* in, float* out) {
    __shared__ float tile[64];
    tile[threadIdx.x] = in[blockIdx.x * 64 + threadIdx.x];
    if (threadIdx.x < 64) {  // why: branch
        __syncthreads();
    }
    out[blockIdx.x * 64 + threadIdx.x] = tile[63 - threadIdx.x];
}

__global__ void shuffled(const float* in, float* out) {
    float v = in[blockIdx.x * 64 + threadIdx.x];
    const unsigned int lanes = 0xffffffffu;
    v += __shfl_down_sync(lanes, v, 1);  // why: shuffle
    out[blockIdx.x * 64 + threadIdx.x] = v;
}

__device__ float block_pass(float* tile, float v) {
    tile[threadIdx.x] = v;
    __syncthreads();
    return tile[63 - threadIdx.x];
}

__global__ void calls_barrier(const float* in, float* out) {
    __shared__ float tile[64];
    float v = in[blockIdx.x * 64 + threadIdx.x];
    out[blockIdx.x * 64 + threadIdx.x] = block_pass(tile, v);  // why: callee
}

__global__ void spins(const int* flag, const float* in, float* out) {
    volatile const int* f = flag;
    while (f[0] != 0) {  // why: spin
    }
    out[blockIdx.x * 64 + threadIdx.x] = in[blockIdx.x * 64 + threadIdx.x];
}

__global__ void early_return(const float* in, float* out, int n) {
    __shared__ float tile[64];
    if (n < 0) return;  // why: return
    tile[threadIdx.x] = in[blockIdx.x * 64 + threadIdx.x];
    __syncthreads();
    out[blockIdx.x * 64 + threadIdx.x] = tile[63 - threadIdx.x];
}

__global__ void jumps(const float* in, float* out) {
    __shared__ float tile[64];
    tile[threadIdx.x] = in[blockIdx.x * 64 + threadIdx.x];
    __syncthreads();
    if (threadIdx.x == 0) goto done;  // why: goto
    out[blockIdx.x * 64 + threadIdx.x] = tile[63 - threadIdx.x];
done:
    out[blockIdx.x * 64] = tile[63];
}

__global__ void voted(const float* in, float* out) {
    float v = in[blockIdx.x * 64 + threadIdx.x];
    unsigned mask = 0;
    if (threadIdx.x < 32) mask = __ballot_sync(0xffffffffu, v > 3.0f);  // why: vote
    out[blockIdx.x * 64 + threadIdx.x] = (float)__popc(mask);
}

__global__ void coop(const float* in, float* out) {
    int i = blockIdx.x * 64 + threadIdx.x;
    out[i] = in[i] + 1.0f;
}

// Pointer parameters each thread offsets, as convolutionSeparable does: block loops.
__global__ void offset_tiled(const float* in, float* out) {
    __shared__ float tile[64];
    in += blockIdx.x * 64 + threadIdx.x;
    out += blockIdx.x * 64 + threadIdx.x;
    tile[threadIdx.x] = *in;
    __syncthreads();
    *out = tile[63 - threadIdx.x];
}

// A parameter a thread writes is its own from then on: a barrier's loop bound read from it is
// not shown to be block-uniform (every thread here gets the same bound, which the front end cannot see).
__global__ void own_bound(const float* in, float* out, int rounds) {
    __shared__ float tile[64];
    rounds += threadIdx.x / 64;
    tile[threadIdx.x] = in[blockIdx.x * 64 + threadIdx.x];
    for (int r = 0; r < rounds; ++r) {  // why: own_bound
        __syncthreads();
        out[blockIdx.x * 64 + threadIdx.x] = tile[63 - threadIdx.x] + r;
    }
}

// A thread that writes the counter of a loop holding a barrier.
__global__ void counter_written(const float* in, float* out) {
    __shared__ float tile[64];
    for (int r = 0; r < 2; ++r) {
        tile[threadIdx.x] = in[blockIdx.x * 64 + threadIdx.x] + r;
        __syncthreads();
        if (threadIdx.x == 64) r = 2;  // why: counter
        out[blockIdx.x * 64 + threadIdx.x] = tile[63 - threadIdx.x];
        __syncthreads();
    }
}

// A loop's counter passed as it is to a call the template's parameter decides (mergeSort's
// binarySearchInclusive<sortDir>(keyB, baseKey, stride, stride)): a reference parameter could change it.
template <int N>
__device__ float pick(const float* tile, int r) { return tile[(N - 1 - threadIdx.x + r) % N]; }

template <int N>
__global__ void counter_passed(const float* in, float* out) {
    __shared__ float tile[N];
    for (int r = 0; r < 2; ++r) {
        tile[threadIdx.x] = in[blockIdx.x * N + threadIdx.x] + r;
        __syncthreads();
        out[blockIdx.x * N + threadIdx.x] = pick<N>(tile, r);  // why: passed
        __syncthreads();
    }
}

int main() {
    const int n = 128;
    float *in, *out;
    int* flag;
    cudaMallocManaged(&in, n * sizeof(float));
    cudaMallocManaged(&out, n * sizeof(float));
    cudaMallocManaged(&flag, sizeof(int));
    for (int i = 0; i < n; ++i) in[i] = (float)i;
    *flag = 0;
    tiled<<<2, 64>>>(in, out);
    plain<<<2, 64>>>(in, out);
    branchy<<<2, 64>>>(in, out);
    shuffled<<<2, 64>>>(in, out);
    calls_barrier<<<2, 64>>>(in, out);
    spins<<<2, 64>>>(flag, in, out);
    early_return<<<2, 64>>>(in, out, n);
    jumps<<<2, 64>>>(in, out);
    offset_tiled<<<2, 64>>>(in, out);
    own_bound<<<2, 64>>>(in, out, 2);
    counter_written<<<2, 64>>>(in, out);
    counter_passed<64><<<2, 64>>>(in, out);
    void* args[] = {&in, &out};
    cudaLaunchKernel((void*)voted, dim3(2), dim3(64), args, 0, 0);  // by address: the registered reason
    cudaLaunchCooperativeKernel((void*)coop, dim3(2), dim3(64), args, 0, 0);
    cudaError_t e = cudaDeviceSynchronize();
    std::printf("status %s\n", cudaGetErrorString(e));
    return e == cudaSuccess ? 0 : 1;
}
