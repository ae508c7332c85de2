// cg::inclusive_scan and cg::exclusive_scan over tiles of 32 and 8 threads and a coalesced group,
// with the default plus and with cg::greater (a running maximum). Prints each result array.
#include <cooperative_groups.h>
#include <cooperative_groups/scan.h>
#include <cstdio>
#include <cuda_runtime.h>

namespace cg = cooperative_groups;

constexpr int N = 64;  // one block of two warps

__global__ void scans(const int* in, int* inc32, int* exc32, int* max8, int* exc8, int* odd_inc) {
    cg::thread_block block = cg::this_thread_block();
    const int i = block.thread_rank();
    const int v = in[i];
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    cg::thread_block_tile<8> eight = cg::tiled_partition<8>(block);
    inc32[i] = cg::inclusive_scan(warp, v);
    exc32[i] = cg::exclusive_scan(warp, v, cg::plus<int>());
    max8[i] = cg::inclusive_scan(eight, v, cg::greater<int>());
    exc8[i] = cg::exclusive_scan(eight, v);
    odd_inc[i] = -1;
    if (i % 2 == 1) {
        cg::coalesced_group odd = cg::coalesced_threads();
        odd_inc[i] = cg::inclusive_scan(odd, v);
    }
}

static void print(const char* name, const int* a) {
    printf("%s=", name);
    for (int i = 0; i < N; ++i) printf("%d%s", a[i], i + 1 < N ? "," : "\n");
}

int main() {
    int h[N];
    for (int i = 0; i < N; ++i) h[i] = (i * 37 + 11) % 23 - 7;  // mixed signs, not monotone
    int* d;
    cudaMalloc(&d, 6 * N * sizeof(int));
    cudaMemcpy(d, h, N * sizeof(int), cudaMemcpyHostToDevice);
    scans<<<1, N>>>(d, d + N, d + 2 * N, d + 3 * N, d + 4 * N, d + 5 * N);
    int out[6 * N];
    cudaMemcpy(out, d, sizeof(out), cudaMemcpyDeviceToHost);
    print("in", out);
    print("inc32", out + N);
    print("exc32", out + 2 * N);
    print("max8", out + 3 * N);
    print("exc8", out + 4 * N);
    print("odd_inc", out + 5 * N);
    printf("error=%s\n", cudaGetErrorName(cudaGetLastError()));
    cudaFree(d);
    return 0;
}
