// CUDA's two kinds of error. Non-sticky errors (a failed allocation, an invalid launch
// configuration or argument) are returned by the failing call, kept as the host thread's last
// error until cudaGetLastError reads it, and leave the device usable. A sticky error (here a
// kernel that deadlocks: cudaErrorLaunchFailure) is returned by every later call that uses the
// device, in every host thread, until cudaDeviceReset.
#include <cuda_runtime.h>

#include <cassert>
#include <thread>

__global__ void add_one_kernel(int* data, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] += 1;
}

// Thread 0 waits in a shuffle for lanes that wait at a barrier for it: the launch fails.
__global__ void stuck_kernel(int* out) {
    if (threadIdx.x == 0) {
        out[0] = __shfl_sync(0xffffffffu, 1, 0);
    } else {
        __syncthreads();
    }
}

// 1 when add_one_kernel ran right on 64 values (and no call failed), else 0.
static int add_one_works() {
    int host[64];
    for (int i = 0; i < 64; ++i) host[i] = i;
    int* d = nullptr;
    if (cudaMalloc(&d, sizeof host) != cudaSuccess) return 0;
    if (cudaMemcpy(d, host, sizeof host, cudaMemcpyHostToDevice) != cudaSuccess) return 0;
    add_one_kernel<<<2, 32>>>(d, 64);
    if (cudaMemcpy(host, d, sizeof host, cudaMemcpyDeviceToHost) != cudaSuccess) return 0;
    if (cudaFree(d) != cudaSuccess) return 0;
    for (int i = 0; i < 64; ++i) {
        if (host[i] != i + 1) return 0;
    }
    return 1;
}

extern "C" int errors_nonsticky(int* codes) {
    void* p = nullptr;
    codes[0] = (int)cudaMalloc(&p, (size_t)1 << 50);  // out of memory
    codes[1] = (int)cudaPeekAtLastError();
    codes[2] = (int)cudaGetLastError();
    codes[3] = (int)cudaGetLastError();  // read once: cleared
    // A stale error is what the next cudaGetLastError returns, even after a good launch.
    codes[4] = (int)cudaMalloc(&p, (size_t)1 << 50);
    codes[5] = add_one_works();
    codes[6] = (int)cudaGetLastError();
    // An invalid configuration fails that launch only.
    int* d = nullptr;
    codes[7] = (int)cudaMalloc(&d, sizeof(int) * 64);
    add_one_kernel<<<1, 2048>>>(d, 64);
    codes[8] = (int)cudaGetLastError();
    codes[9] = (int)cudaDeviceSynchronize();
    // An invalid argument: a copy from device memory that is not an allocation.
    int host[4];
    codes[10] = (int)cudaMemcpy(host, host + 1, sizeof(int), cudaMemcpyDeviceToHost);
    codes[11] = (int)cudaGetLastError();
    codes[12] = add_one_works();
    // The last error belongs to the host thread that made the failing call.
    int other = -1;
    std::thread t([&other] {
        void* q = nullptr;
        (void)cudaMalloc(&q, (size_t)1 << 50);
        other = (int)cudaPeekAtLastError();
    });
    t.join();
    codes[13] = other;
    codes[14] = (int)cudaGetLastError();
    codes[15] = (int)cudaFree(d);
    return 0;
}

extern "C" int errors_sticky(int* codes) {
    int* managed = nullptr;
    int* d = nullptr;
    if (cudaMallocManaged(&managed, sizeof(int) * 64) != cudaSuccess) return -1;
    if (cudaMalloc(&d, sizeof(int) * 64) != cudaSuccess) return -1;
    for (int i = 0; i < 64; ++i) managed[i] = i;
    stuck_kernel<<<1, 64>>>(d);
    codes[0] = (int)cudaDeviceSynchronize();
    codes[1] = (int)cudaGetLastError();
    codes[2] = (int)cudaGetLastError();  // not cleared
    codes[3] = (int)cudaPeekAtLastError();
    void* p = nullptr;
    codes[4] = (int)cudaMalloc(&p, 16);
    int host[4] = {0, 0, 0, 0};
    codes[5] = (int)cudaMemcpy(d, host, sizeof host, cudaMemcpyHostToDevice);
    add_one_kernel<<<2, 32>>>(managed, 64);  // does not run
    codes[6] = (int)cudaGetLastError();
    codes[7] = managed[5];
    int count = 0;
    codes[8] = (int)cudaGetDeviceCount(&count);  // a device query still answers
    int other = -1;
    std::thread t([&other] { other = (int)cudaGetLastError(); });
    t.join();
    codes[9] = other;
    codes[10] = (int)cudaFree(d);  // frees it, and says the context is broken
    codes[11] = (int)cudaDeviceReset();
    codes[12] = (int)cudaGetLastError();
    codes[13] = add_one_works();
    return 0;
}

// A wild write: thread 5 of block 1 stores through a pointer to unmapped memory.
__global__ void wild_kernel(int* data, int* wild) {
    if (blockIdx.x == 1 && threadIdx.x == 5) wild[0] = 1;
    data[threadIdx.x] = 1;
}

// Unbounded recursion: the CUDA thread's stack overflows into its guard page.
__device__ int deep(volatile int* p, int n) {
    volatile char pad[512];
    pad[0] = (char)n;
    return n == 0 ? pad[0] : deep(p, n - 1) + pad[0] + p[0];
}

__global__ void deep_kernel(int* out) { out[threadIdx.x] = deep(out, 1 << 22); }

// codes: [the launch's error, cudaMalloc after it, cudaDeviceReset, a launch after the reset,
// a stack overflow's error, cudaDeviceReset, a launch after that].
extern "C" int errors_illegal_address(int* codes) {
    int* d = nullptr;
    if (cudaMalloc(&d, sizeof(int) * 32) != cudaSuccess) return -1;
    wild_kernel<<<2, 32>>>(d, reinterpret_cast<int*>(16));
    codes[0] = (int)cudaDeviceSynchronize();
    void* p = nullptr;
    codes[1] = (int)cudaMalloc(&p, 16);
    codes[2] = (int)cudaDeviceReset();
    codes[3] = add_one_works();
    if (cudaMalloc(&d, sizeof(int) * 32) != cudaSuccess) return -1;
    deep_kernel<<<1, 4>>>(d);
    codes[4] = (int)cudaDeviceSynchronize();
    codes[5] = (int)cudaDeviceReset();
    codes[6] = add_one_works();
    return 0;
}

// Thread 3 of block 2 fails an assert().
__global__ void assert_kernel(int* data) {
    assert(!(blockIdx.x == 2 && threadIdx.x == 3));
    data[blockIdx.x * 32 + threadIdx.x] = 1;
}

// codes: [the launch's error, cudaGetLastError, cudaDeviceReset, a launch after the reset].
extern "C" int errors_assert(int* codes) {
    int* d = nullptr;
    if (cudaMalloc(&d, sizeof(int) * 32 * 4) != cudaSuccess) return -1;
    assert_kernel<<<4, 32>>>(d);
    codes[0] = (int)cudaDeviceSynchronize();
    codes[1] = (int)cudaGetLastError();
    codes[2] = (int)cudaDeviceReset();
    codes[3] = add_one_works();
    return 0;
}
