// Launches in a fixed order, each kernel with one kind of bug or none, for the kernel filters
// and launch counts of `run` (test_launch_filters.py): race_a, race_b (a write-write race on
// shared memory, racecheck's), sum (correct: a shared-memory reduction the host checks),
// oob (reads one int past its buffer, memcheck's), diverge (threads wait at two different
// __syncthreads, synccheck's), then sum again.
#include <cstdio>

__global__ void race_a(int* out) {
    __shared__ int s;
    s = threadIdx.x;  // RACE_A: every thread writes s before any barrier
    __syncthreads();
    if (threadIdx.x == 0) out[0] = s;
}

__global__ void race_b(int* out) {
    // Bigger than race_a's: a shared block of its own size, at another address than race_a's
    // (ThreadSanitizer reports one race per address).
    __shared__ int s[1024];
    s[7] = threadIdx.x + 1;  // RACE_B
    __syncthreads();
    if (threadIdx.x == 0) out[1] = s[7];
}

__global__ void sum(const int* in, int* out) {
    __shared__ int part[64];
    part[threadIdx.x] = in[threadIdx.x];
    __syncthreads();
    for (int half = 32; half > 0; half /= 2) {
        if (threadIdx.x < half) part[threadIdx.x] += part[threadIdx.x + half];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[2] = part[0];
}

__global__ void oob(const int* in, int* out, int n) {
    if (threadIdx.x == 0) out[3] = in[n];  // OOB: one past the end of in
}

__global__ void diverge(int* out) {
    if (threadIdx.x < 32) {
        __syncthreads();  // DIVERGE: the first warp waits here
    } else {
        __syncthreads();  // the second one here
    }
    if (threadIdx.x == 0) out[4] = 1;
}

static bool check_sum(const int* d_in, int* d_out, int launch) {
    sum<<<1, 64>>>(d_in, d_out);
    int got = 0;
    cudaMemcpy(&got, d_out + 2, sizeof got, cudaMemcpyDeviceToHost);
    const int want = 64 * 63 / 2;
    std::printf("sum %d: %d (want %d)\n", launch, got, want);
    return got == want;
}

int main() {
    const int n = 64;
    int host[n];
    for (int i = 0; i < n; ++i) host[i] = i;
    int *d_in = nullptr, *d_out = nullptr;
    cudaMalloc(&d_in, n * sizeof(int));
    cudaMalloc(&d_out, 8 * sizeof(int));
    cudaMemcpy(d_in, host, sizeof host, cudaMemcpyHostToDevice);
    race_a<<<1, 64>>>(d_out);
    race_b<<<1, 64>>>(d_out);
    bool ok = check_sum(d_in, d_out, 1);
    oob<<<1, 32>>>(d_in, d_out, n);
    diverge<<<1, 64>>>(d_out);
    ok = check_sum(d_in, d_out, 2) && ok;
    cudaError_t e = cudaDeviceSynchronize();
    cudaFree(d_in);
    cudaFree(d_out);
    std::printf("%s\n", ok && e == cudaSuccess ? "DONE" : "WRONG");
    return ok && e == cudaSuccess ? 0 : 1;
}
