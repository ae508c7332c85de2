// Blocks that wait for one another, as a GPU that keeps every block of a small grid resident runs
// them. Each case prints its results as key=value lines and checks them itself (ok=1):
//   chain     block b waits for block b + 1, so block 0 waits (through all the others) for the last
//             block of the grid: an atomic poll, a volatile poll and a __nanosleep poll, each
//             with barriers around it as HeCBench's pad has
//   atomics   the same without the volatile poll
//   lookback  4096 blocks, each waiting for its predecessor's sum (a decoupled look-back scan)
//   fits      the chain of `chain` with as many blocks as the modelled device holds at once
//   beyond    one block more: on a GPU the last block never starts, here the launch times out
//   stuck     block 0 waits for a flag no block ever sets: the launch times out
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>

constexpr int kThreads = 64;

// The block's threads agree on a value (thread 0 reads it after the wait) and each writes it out.
__device__ void finish(int b, int got, int* token, int* ready, int* vals) {
    __shared__ int shared_got;
    if (threadIdx.x == 0) shared_got = got;
    __syncthreads();
    vals[b * blockDim.x + threadIdx.x] = shared_got * 1000 + (int)threadIdx.x;
    __syncthreads();
    if (threadIdx.x == 0) {
        atomicExch(&token[b], shared_got);
        __threadfence();
        atomicExch(&ready[b], 1);
    }
}

__global__ void chain_atomic(int* ready, int* token, int* vals) {
    const int b = blockIdx.x;
    int got = 1;
    __syncthreads();
    if (threadIdx.x == 0 && b + 1 < (int)gridDim.x) {
        while (atomicAdd(&ready[b + 1], 0) == 0) {
        }
        got = atomicAdd(&token[b + 1], 0) + 1;
    }
    finish(b, got, token, ready, vals);
}

__global__ void chain_volatile(int* ready, int* token, int* vals) {
    const int b = blockIdx.x;
    int got = 1;
    __syncthreads();
    if (threadIdx.x == 0 && b + 1 < (int)gridDim.x) {
        volatile int* flag = ready + b + 1;
        do {
        } while (*flag == 0);
        __threadfence();
        got = ((volatile int*)token)[b + 1] + 1;
    }
    finish(b, got, token, ready, vals);
}

__global__ void chain_sleep(int* ready, int* token, int* vals) {
    const int b = blockIdx.x;
    int got = 1;
    __syncthreads();
    if (threadIdx.x == 0 && b + 1 < (int)gridDim.x) {
        int seen = 0;
        for (; seen == 0; seen = atomicOr(&ready[b + 1], 0)) __nanosleep(100);
        got = atomicAdd(&token[b + 1], 0) + 1;
    }
    finish(b, got, token, ready, vals);
}

// Each block sums its slice, waits for its predecessor's inclusive sum and publishes its own.
__global__ void lookback(const int* in, int* ready, long long* sums) {
    __shared__ long long part[kThreads];
    const int b = blockIdx.x;
    part[threadIdx.x] = in[b * kThreads + threadIdx.x];
    __syncthreads();
    if (threadIdx.x == 0) {
        long long s = 0;
        for (int i = 0; i < kThreads; ++i) s += part[i];
        if (b > 0) {
            while (atomicAdd(&ready[b - 1], 0) == 0) {
            }
            s += atomicAdd((unsigned long long*)&sums[b - 1], 0ull);
        }
        atomicExch((unsigned long long*)&sums[b], (unsigned long long)s);
        __threadfence();
        atomicExch(&ready[b], 1);
    }
}

// Block 0's thread 0 waits for a flag no block sets; the others finish.
__global__ void stuck(int* never) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        while (atomicAdd(never, 0) == 0) {
        }
    }
    __syncthreads();
}

static bool check(cudaError_t e, const char* what) {
    if (e == cudaSuccess) return true;
    std::printf("error=%s at=%s\n", cudaGetErrorName(e), what);
    return false;
}

// Runs ``kernel`` over ``grid`` blocks with ``smem`` bytes of dynamic shared memory; true when
// every block saw the chain's value: token[b] == grid - b and each thread's value from it.
static bool run_chain(void (*kernel)(int*, int*, int*), const char* name, int grid, size_t smem) {
    int *ready, *token, *vals;
    const int n = grid * kThreads;
    cudaMalloc(&ready, grid * sizeof(int));
    cudaMalloc(&token, grid * sizeof(int));
    cudaMalloc(&vals, n * sizeof(int));
    cudaMemset(ready, 0, grid * sizeof(int));
    cudaMemset(token, 0, grid * sizeof(int));
    kernel<<<grid, kThreads, smem>>>(ready, token, vals);
    const cudaError_t e = cudaDeviceSynchronize();
    std::printf("%s_error=%s\n", name, cudaGetErrorName(e));
    if (e != cudaSuccess) return false;
    int* t = new int[grid];
    int* v = new int[n];
    cudaMemcpy(t, token, grid * sizeof(int), cudaMemcpyDeviceToHost);
    cudaMemcpy(v, vals, n * sizeof(int), cudaMemcpyDeviceToHost);
    int bad = 0;
    for (int b = 0; b < grid; ++b) {
        if (t[b] != grid - b) ++bad;
        for (int i = 0; i < kThreads; ++i) bad += v[b * kThreads + i] != (grid - b) * 1000 + i;
    }
    std::printf("%s_token0=%d\n%s_bad=%d\n", name, t[0], name, bad);
    delete[] t;
    delete[] v;
    cudaFree(ready);
    cudaFree(token);
    cudaFree(vals);
    return bad == 0;
}

static bool run_lookback() {
    const int grid = 4096, n = grid * kThreads;
    int* h = new int[n];
    for (int i = 0; i < n; ++i) h[i] = (i * 37 + 11) % 101 - 50;
    int *in, *ready;
    long long* sums;
    cudaMalloc(&in, n * sizeof(int));
    cudaMalloc(&ready, grid * sizeof(int));
    cudaMalloc(&sums, grid * sizeof(long long));
    cudaMemcpy(in, h, n * sizeof(int), cudaMemcpyHostToDevice);
    cudaMemset(ready, 0, grid * sizeof(int));
    lookback<<<grid, kThreads>>>(in, ready, sums);
    const cudaError_t e = cudaDeviceSynchronize();
    std::printf("lookback_error=%s\n", cudaGetErrorName(e));
    long long* got = new long long[grid];
    cudaMemcpy(got, sums, grid * sizeof(long long), cudaMemcpyDeviceToHost);
    long long s = 0;
    int bad = 0;
    for (int b = 0; b < grid; ++b) {
        for (int i = 0; i < kThreads; ++i) s += h[b * kThreads + i];
        bad += got[b] != s;
    }
    std::printf("lookback_last=%lld\nlookback_bad=%d\n", got[grid - 1], bad);
    delete[] h;
    delete[] got;
    cudaFree(in);
    cudaFree(ready);
    cudaFree(sums);
    return e == cudaSuccess && bad == 0;
}

// The most blocks of chain_atomic with ``smem`` bytes of dynamic shared memory the device holds.
static int resident_most(size_t smem) {
    int per_sm = 0, sms = 0;
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, chain_atomic, kThreads, smem);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    return per_sm * sms;
}

int main(int argc, char** argv) {
    const char* mode = argc > 1 ? argv[1] : "chain";
    // 150 KiB of dynamic shared memory leaves room for one block per multiprocessor.
    const size_t big = 150 * 1024;
    bool ok = false;
    if (std::strcmp(mode, "chain") == 0 || std::strcmp(mode, "atomics") == 0) {
        const bool a = run_chain(chain_atomic, "atomic", 16, 0);
        const bool s = run_chain(chain_sleep, "sleep", 16, 0);
        // ThreadSanitizer over every access takes the volatile poll for the race it is in C++.
        const bool v = std::strcmp(mode, "atomics") == 0 || run_chain(chain_volatile, "volatile", 16, 0);
        ok = a && v && s;
    } else if (std::strcmp(mode, "lookback") == 0) {
        ok = run_lookback();
    } else if (std::strcmp(mode, "fits") == 0 || std::strcmp(mode, "beyond") == 0) {
        if (!check(cudaFuncSetAttribute(chain_atomic, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024),
                   "cudaFuncSetAttribute")) {
            return 1;
        }
        const int most = resident_most(big);
        std::printf("most=%d\n", most);
        ok = run_chain(chain_atomic, "atomic", std::strcmp(mode, "fits") == 0 ? most : most + 1, big);
    } else if (std::strcmp(mode, "stuck") == 0) {
        int* never;
        cudaMalloc(&never, sizeof(int));
        cudaMemset(never, 0, sizeof(int));
        stuck<<<8, kThreads>>>(never);
        const cudaError_t e = cudaDeviceSynchronize();
        std::printf("stuck_error=%s\n", cudaGetErrorName(e));
    } else {
        std::printf("unknown case '%s' (chain, atomics, lookback, fits, beyond, stuck)\n", mode);
        return 2;
    }
    std::printf("ok=%d\n", ok ? 1 : 0);
    return 0;
}
