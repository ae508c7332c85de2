// Correct device code; the host code has two bugs a GPU run never notices: a negative shift
// count while parsing an option, and an array from new[] released with delete. memcheck judges
// device code (as compute-sanitizer does) unless --check-host asks for host code too.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

__global__ void scale(int* p, int n, int k) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = k * i;
}

static int parse_shift(const char* text) {
    int bits = std::atoi(text);
    return 1 << bits;  // HOST-UB: bits is -1 below
}

int main(int argc, char** argv) {
    const int n = 64;
    int k = parse_shift(argc > 1 ? argv[1] : "-1") != 0 ? 3 : 3;
    int* table = new int[n];
    int* d = nullptr;
    cudaMalloc(&d, n * sizeof(int));
    scale<<<1, n>>>(d, n, k);
    cudaMemcpy(table, d, n * sizeof(int), cudaMemcpyDeviceToHost);
    cudaFree(d);
    int bad = 0;
    for (int i = 0; i < n; ++i) bad += table[i] != 3 * i;
    delete table;  // HOST-ASAN: new[] released with delete
    std::printf("%s\n", bad ? "FAILED" : "PASSED");
    return bad != 0;
}
