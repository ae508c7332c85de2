// Launches that never end: SIMULATOR_TIMEOUT stops them with cudaErrorLaunchTimeout (sticky),
// and after cudaDeviceReset the process launches normally again.
#include <cuda_runtime.h>

// Every thread spins on a flag nobody sets: no barrier, no warp operation, no call.
__global__ void spin_kernel(volatile int* flag, int* out) {
    while (flag[0] == 0) {
    }
    out[threadIdx.x] = 1;
}

// Every thread keeps reaching barriers: the scheduler itself sees the deadline.
__global__ void barrier_loop_kernel(volatile int* flag) {
    while (flag[0] == 0) __syncthreads();
}

__global__ void add_one_kernel(int* data, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] += 1;
}

// codes: [error of the launch, cudaDeviceSynchronize, cudaMalloc after it, cudaGetLastError
// twice, cudaDeviceReset, a launch after the reset, its result check (0: right)].
extern "C" int timeout_run(int kind, int blocks, int* codes) {
    int* flag;
    int* out;
    cudaError_t e = cudaMalloc(&flag, sizeof(int));
    if (e != cudaSuccess) return (int)e;
    if ((e = cudaMalloc(&out, sizeof(int) * 1024)) != cudaSuccess) return (int)e;
    if ((e = cudaMemset(flag, 0, sizeof(int))) != cudaSuccess) return (int)e;
    if (kind == 0) {
        spin_kernel<<<blocks, 64>>>(flag, out);
    } else {
        barrier_loop_kernel<<<blocks, 64>>>(flag);
    }
    codes[0] = (int)cudaPeekAtLastError();
    codes[1] = (int)cudaDeviceSynchronize();
    int* more = nullptr;
    codes[2] = (int)cudaMalloc(&more, 16);
    codes[3] = (int)cudaGetLastError();
    codes[4] = (int)cudaGetLastError();
    codes[5] = (int)cudaDeviceReset();  // frees flag and out too
    int host[100];
    for (int i = 0; i < 100; ++i) host[i] = i;
    int* d;
    if ((e = cudaMalloc(&d, sizeof host)) != cudaSuccess) return (int)e;
    if ((e = cudaMemcpy(d, host, sizeof host, cudaMemcpyHostToDevice)) != cudaSuccess) return (int)e;
    add_one_kernel<<<4, 32>>>(d, 100);
    codes[6] = (int)cudaGetLastError();
    if ((e = cudaMemcpy(host, d, sizeof host, cudaMemcpyDeviceToHost)) != cudaSuccess) return (int)e;
    if ((e = cudaFree(d)) != cudaSuccess) return (int)e;
    codes[7] = 0;
    for (int i = 0; i < 100; ++i) codes[7] |= host[i] != i + 1;
    return 0;
}

// The same from a host program: 0 when both kinds of endless launch were stopped as above.
extern "C" int timeout_selfcheck(void) {
    for (int kind = 0; kind < 2; ++kind) {
        int codes[8];
        const int rc = timeout_run(kind, 4, codes);
        if (rc != 0) return 100 + rc;
        const int want[8] = {702, 702, 702, 702, 702, 0, 0, 0};
        for (int i = 0; i < 8; ++i) {
            if (codes[i] != want[i]) return 10 * (kind + 1) + i;
        }
    }
    return 0;
}
