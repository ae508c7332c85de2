// CUDA's two kinds of error. Non-sticky errors (a failed allocation, an invalid launch
// configuration or argument) are returned by the failing call, kept as the host thread's last
// error until cudaGetLastError reads it, and leave the device usable. A sticky error (here a
// kernel that deadlocks: cudaErrorLaunchFailure) is returned by every later call that uses the
// device, in every host thread, until cudaDeviceReset.
#include <cuda_runtime.h>

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
