// Cooperative-groups shuffles of values over 8 bytes (test_cg_shfl_values.py): CUDA's tile and
// coalesced-group shfl take any trivially copyable type, as NVIDIA's shfl_scan sample does with
// uint4. Each lane prints what it received; the test works out what it must be.
#include <cooperative_groups.h>
#include <cstdio>
#include <cuda_runtime.h>

namespace cg = cooperative_groups;

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

int main() {
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
