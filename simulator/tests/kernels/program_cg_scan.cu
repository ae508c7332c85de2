// cg::inclusive_scan and cg::exclusive_scan over tiles of 32 and 8 threads and a coalesced group,
// with the default plus and with cg::greater (a running maximum). Prints each result array.
// With the argument shfl_values: tiles' shuffles of values over 8 bytes (CUDA's tile shfl takes
// any trivially copyable type, as NVIDIA's shfl_scan sample does with uint4); each lane's line
// is what it received (test_cg_scan.py works out what it must be).
#include <cooperative_groups.h>
#include <cooperative_groups/scan.h>
#include <cstdio>
#include <cstring>
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

struct Mixed {
    int a;
    float b;
    double c;
    short d;
};

__global__ void exchange(uint4* quads, Mixed* mixed, int* ups) {
    cg::thread_block_tile<32> tile = cg::tiled_partition<32>(cg::this_thread_block());
    cg::thread_block_tile<8> eight = cg::tiled_partition<8>(cg::this_thread_block());
    const unsigned int i = threadIdx.x;
    uint4 q = make_uint4(i, 100 + i, 200 + i, 300 + i);
    quads[i] = tile.shfl_xor(q, 3);
    Mixed m{(int)i, 0.5f * (float)i, 0.25 * (double)i, (short)(-(int)i)};
    mixed[i] = eight.shfl_down(m, 2);
    uint4 up = eight.shfl_up(q, 1);
    ups[i] = (int)up.w;
    uint4 from = tile.shfl(q, 5);
    ups[64 + i] = (int)from.z;
}

static int shfl_values() {
    uint4* quads;
    Mixed* mixed;
    int* ups;
    cudaMalloc(&quads, 64 * sizeof(uint4));
    cudaMalloc(&mixed, 64 * sizeof(Mixed));
    cudaMalloc(&ups, 128 * sizeof(int));
    exchange<<<1, 64>>>(quads, mixed, ups);
    uint4 hq[64];
    Mixed hm[64];
    int hu[128];
    cudaMemcpy(hq, quads, sizeof hq, cudaMemcpyDeviceToHost);
    cudaMemcpy(hm, mixed, sizeof hm, cudaMemcpyDeviceToHost);
    cudaMemcpy(hu, ups, sizeof hu, cudaMemcpyDeviceToHost);
    for (int i = 0; i < 64; ++i) {
        std::printf("%d %u %u %u %u %d %g %g %d %d %d\n", i, hq[i].x, hq[i].y, hq[i].z, hq[i].w, hm[i].a, hm[i].b,
                    hm[i].c, hm[i].d, hu[i], hu[64 + i]);
    }
    cudaFree(quads);
    cudaFree(mixed);
    cudaFree(ups);
    return 0;
}

static void print(const char* name, const int* a) {
    printf("%s=", name);
    for (int i = 0; i < N; ++i) printf("%d%s", a[i], i + 1 < N ? "," : "\n");
}

int main(int argc, char** argv) {
    if (argc > 1 && std::strcmp(argv[1], "shfl_values") == 0) return shfl_values();
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
