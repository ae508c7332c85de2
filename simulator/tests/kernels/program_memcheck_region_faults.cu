// memcheck in a block-loop region (test_memcheck_region_faults.py): one planted fault at thread
// BAD of a 256-thread block, in the region after the kernel's barrier, where block loops run the
// threads in the fibers' order (the thread that released the barrier first) and read ``t`` from
// its per-thread slot. Arguments: the kind ("global", "shared" or "overflow") and BAD.
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>

constexpr int THREADS = 256;

__global__ void planted(const int* a, int* out, int bad, int kind) {
    __shared__ int s[THREADS];
    const int t = threadIdx.x;
    s[t] = a[t];
    __syncthreads();
    const int i = t == bad ? THREADS : t;
    if (kind == 0) out[t] = s[t] + a[i];  // PLANT-GLOBAL
    if (kind == 1) s[i] = out[t];  // PLANT-SHARED
    if (kind == 2) out[t] = s[t] + (t == bad ? INT_MAX : 0);  // PLANT-OVERFLOW
}

int main(int argc, char** argv) {
    const char* what = argc > 1 ? argv[1] : "";
    const int bad = argc > 2 ? std::atoi(argv[2]) : -1;
    const int kind = std::strcmp(what, "global") == 0 ? 0 : std::strcmp(what, "shared") == 0 ? 1 : 2;
    int host[THREADS];
    for (int k = 0; k < THREADS; ++k) host[k] = 1;
    int *a, *out;
    cudaMalloc(&a, THREADS * sizeof(int));
    cudaMalloc(&out, THREADS * sizeof(int));
    cudaMemcpy(a, host, sizeof(host), cudaMemcpyHostToDevice);
    cudaMemset(out, 0, THREADS * sizeof(int));
    planted<<<1, THREADS>>>(a, out, bad, kind);
    cudaError_t e = cudaDeviceSynchronize();
    std::printf("%s %d: %s\n", what, bad, cudaGetErrorName(e));
    return 0;
}
