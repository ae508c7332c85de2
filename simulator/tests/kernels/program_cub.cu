// CUB from NVIDIA's CCCL headers, unmodified: block and warp algorithms on one input (the
// device-wide ones: program_cub_device.cu). Prints name=v0,v1,... lines that test_cub.py
// compares with numpy. With "sreg" it runs only the special-register case below instead: one
// program for both, so that each mode builds it once.
#include <cub/cub.cuh>
#include <cuda/ptx>

#include <cstdio>
#include <cstring>
#include <vector>

#include "cub_host.h"

constexpr int kThreads = 64;
constexpr int kItems = 4;
constexpr int kTile = kThreads * kItems;  // one block's tile
constexpr int kN = 2 * kTile;             // two blocks

// Each block loads its tile (transposed through shared memory), sorts it, and writes the sorted
// tile, its exclusive prefix sum and its total.
__global__ void block_kernel(const int* in, int* sorted, int* scanned, int* totals) {
    using Load = cub::BlockLoad<int, kThreads, kItems, cub::BLOCK_LOAD_TRANSPOSE>;
    using Store = cub::BlockStore<int, kThreads, kItems, cub::BLOCK_STORE_TRANSPOSE>;
    using Sort = cub::BlockRadixSort<int, kThreads, kItems>;
    using Scan = cub::BlockScan<int, kThreads>;
    using Reduce = cub::BlockReduce<int, kThreads>;
    __shared__ union {
        typename Load::TempStorage load;
        typename Store::TempStorage store;
        typename Sort::TempStorage sort;
        typename Scan::TempStorage scan;
        typename Reduce::TempStorage reduce;
    } temp;
    const int offset = blockIdx.x * kTile;
    int items[kItems];
    Load(temp.load).Load(in + offset, items);
    __syncthreads();
    int total = Reduce(temp.reduce).Sum(items);
    if (threadIdx.x == 0) totals[blockIdx.x] = total;
    __syncthreads();
    int prefix[kItems];
    Scan(temp.scan).ExclusiveSum(items, prefix);
    __syncthreads();
    Store(temp.store).Store(scanned + offset, prefix);
    __syncthreads();
    Sort(temp.sort).Sort(items);
    __syncthreads();
    Store(temp.store).Store(sorted + offset, items);
}

// Each warp reduces and scans its 32 values.
__global__ void warp_kernel(const int* in, int* sums, int* scans) {
    using Reduce = cub::WarpReduce<int>;
    using Scan = cub::WarpScan<int>;
    __shared__ typename Reduce::TempStorage reduce[kThreads / 32];
    __shared__ typename Scan::TempStorage scan[kThreads / 32];
    const int warp = threadIdx.x / 32;
    const int v = in[threadIdx.x];
    const int sum = Reduce(reduce[warp]).Sum(v);
    if (threadIdx.x % 32 == 0) sums[warp] = sum;
    int inclusive;
    Scan(scan[warp]).InclusiveSum(v, inclusive);
    scans[threadIdx.x] = inclusive;
}

// ---- "sreg": cuda::ptx's special-register reads, which CUB calls (get_sreg_lanemask_ge in
// DeviceScan's look-back, get_sreg_laneid in its warp algorithms): each thread of two warps prints
// what it reads.
constexpr int THREADS = 64;

__global__ void registers(unsigned* out) {
    unsigned* mine = out + 6 * threadIdx.x;
    mine[0] = cuda::ptx::get_sreg_laneid();
    mine[1] = cuda::ptx::get_sreg_lanemask_eq();
    mine[2] = cuda::ptx::get_sreg_lanemask_le();
    mine[3] = cuda::ptx::get_sreg_lanemask_lt();
    mine[4] = cuda::ptx::get_sreg_lanemask_ge();
    mine[5] = cuda::ptx::get_sreg_lanemask_gt();
}

static int sreg_main() {
    unsigned* d;
    cudaMalloc(&d, 6 * THREADS * sizeof(unsigned));
    registers<<<1, THREADS>>>(d);
    unsigned h[6 * THREADS];
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    const char* names[6] = {"laneid", "lanemask_eq", "lanemask_le", "lanemask_lt", "lanemask_ge", "lanemask_gt"};
    for (int r = 0; r < 6; ++r) {
        printf("%s=", names[r]);
        for (int t = 0; t < THREADS; ++t) printf(t ? ",%u" : "%u", h[6 * t + r]);
        printf("\n");
    }
    printf("error=%s\n", cudaGetErrorString(cudaGetLastError()));
    cudaFree(d);
    return 0;
}

int main(int argc, char** argv) {
    if (argc > 1 && std::strcmp(argv[1], "sreg") == 0) return sreg_main();
    std::vector<int> h(kN);
    for (int i = 0; i < kN; ++i) h[i] = (i * 7919 + 13) % 1000 - 500;
    int *in, *a, *b, *c;
    CHECK(cudaMalloc(&in, kN * sizeof(int)));
    CHECK(cudaMalloc(&a, kN * sizeof(int)));
    CHECK(cudaMalloc(&b, kN * sizeof(int)));
    CHECK(cudaMalloc(&c, kN * sizeof(int)));
    CHECK(cudaMemcpy(in, h.data(), kN * sizeof(int), cudaMemcpyHostToDevice));

    block_kernel<<<kN / kTile, kThreads>>>(in, a, b, c);
    CHECK(cudaDeviceSynchronize());
    print("block_sorted", fetch(a, kN));
    print("block_exclusive_sum", fetch(b, kN));
    print("block_sum", fetch(c, kN / kTile));

    warp_kernel<<<1, kThreads>>>(in, a, b);
    CHECK(cudaDeviceSynchronize());
    print("warp_sum", fetch(a, kThreads / 32));
    print("warp_inclusive_sum", fetch(b, kThreads));

    CHECK(cudaFree(in));
    CHECK(cudaFree(a));
    CHECK(cudaFree(b));
    CHECK(cudaFree(c));
    std::printf("error=%s\n", cudaGetErrorString(cudaGetLastError()));
    return 0;
}
