// Cooperative groups: block sync and ranks, tiles of 32/16/8/4 threads with their shuffles,
// votes and cg::reduce. The same source builds with nvcc. Each launcher returns a cudaError_t.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cuda_runtime.h>

#include <climits>

namespace cg = cooperative_groups;

#include "entry_check.h"

// Per block: the sum (warp reduce, then the first warp reduces the warp sums), max and min.
__global__ void block_reduce_kernel(const int* in, int* out) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    __shared__ int sums[32];
    __shared__ int maxs[32];
    __shared__ int mins[32];
    const int v = in[blockIdx.x * block.size() + block.thread_rank()];
    const int s = cg::reduce(warp, v, cg::plus<int>());
    const int hi = cg::reduce(warp, v, cg::greater<int>());
    const int lo = cg::reduce(warp, v, cg::less<int>());
    if (warp.thread_rank() == 0) {
        sums[warp.meta_group_rank()] = s;
        maxs[warp.meta_group_rank()] = hi;
        mins[warp.meta_group_rank()] = lo;
    }
    block.sync();
    if (warp.meta_group_rank() == 0) {
        const bool have = warp.thread_rank() < warp.meta_group_size();
        const int total = cg::reduce(warp, have ? sums[warp.thread_rank()] : 0, cg::plus<int>());
        const int top = cg::reduce(warp, have ? maxs[warp.thread_rank()] : INT_MIN, cg::greater<int>());
        const int bottom = cg::reduce(warp, have ? mins[warp.thread_rank()] : INT_MAX, cg::less<int>());
        if (block.thread_rank() == 0) {
            out[blockIdx.x * 3 + 0] = total;
            out[blockIdx.x * 3 + 1] = top;
            out[blockIdx.x * 3 + 2] = bottom;
        }
    }
}

extern "C" int cg_block_reduce(const int* in, int* out, int blocks, int threads) {
    int *d_in, *d_out;
    CHECK(cudaMalloc(&d_in, sizeof(int) * blocks * threads));
    CHECK(cudaMalloc(&d_out, sizeof(int) * blocks * 3));
    CHECK(cudaMemcpy(d_in, in, sizeof(int) * blocks * threads, cudaMemcpyHostToDevice));
    block_reduce_kernel<<<blocks, threads>>>(d_in, d_out);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(out, d_out, sizeof(int) * blocks * 3, cudaMemcpyDeviceToHost));
    CHECK(cudaFree(d_in));
    CHECK(cudaFree(d_out));
    return 0;
}

// Per thread, for a tile of TILE threads (values are block rank * 10):
// [thread_rank, size, meta_group_rank, meta_group_size, shfl(rank 1), shfl_down(1), shfl_up(2),
//  shfl_xor(3 mod TILE), reduce plus, ballot(rank odd), any(rank == 0), all(value >= 0)]
template <unsigned int TILE>
__global__ void tile_kernel(int* out) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<TILE> tile = cg::tiled_partition<TILE>(block);
    const int v = (int)block.thread_rank() * 10;
    int* o = out + block.thread_rank() * 12;
    o[0] = (int)tile.thread_rank();
    o[1] = (int)tile.size();
    o[2] = (int)tile.meta_group_rank();
    o[3] = (int)tile.meta_group_size();
    o[4] = tile.shfl(v, 1 % TILE);
    o[5] = tile.shfl_down(v, 1);
    o[6] = tile.shfl_up(v, 2);
    o[7] = tile.shfl_xor(v, 3 % TILE);
    tile.sync();
    o[8] = cg::reduce(tile, v, cg::plus<int>());
    o[9] = (int)tile.ballot(tile.thread_rank() & 1);
    o[10] = tile.any(tile.thread_rank() == 0);
    o[11] = tile.all(v >= 0);
}

extern "C" int cg_tiles(int* out, int tile, int threads) {
    int* d_out;
    const size_t bytes = sizeof(int) * 12 * threads;
    CHECK(cudaMalloc(&d_out, bytes));
    switch (tile) {
        case 32:
            tile_kernel<32><<<1, threads>>>(d_out);
            break;
        case 16:
            tile_kernel<16><<<1, threads>>>(d_out);
            break;
        case 8:
            tile_kernel<8><<<1, threads>>>(d_out);
            break;
        case 4:
            tile_kernel<4><<<1, threads>>>(d_out);
            break;
        default:
            return (int)cudaErrorInvalidValue;
    }
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(out, d_out, bytes, cudaMemcpyDeviceToHost));
    CHECK(cudaFree(d_out));
    return 0;
}

// A float sum over a 2-D block with a dynamic tile (cg::tiled_partition(block, 16)) and the
// grid's ranks: out[grid rank] = block sum of in, written by every thread of the block.
__global__ void float_tile_kernel(const float* in, float* out, unsigned long long* ranks) {
    cg::thread_block block = cg::this_thread_block();
    cg::grid_group grid = cg::this_grid();
    cg::thread_block_tile<16> tile = cg::tiled_partition<16>(block);
    cg::thread_group dyn = cg::tiled_partition(block, 16);
    __shared__ float partial[64];
    const float v = in[grid.thread_rank()];
    const float s = cg::reduce(tile, v, cg::plus<float>());
    if (dyn.thread_rank() == 0) partial[tile.meta_group_rank()] = s;
    cg::sync(block);
    float total = 0.0f;
    for (unsigned int i = 0; i < tile.meta_group_size(); ++i) total += partial[i];
    out[grid.thread_rank()] = total;
    ranks[grid.thread_rank()] = grid.thread_rank() * 1000000ull + grid.size();
}

extern "C" int cg_float_tiles(const float* in, float* out, unsigned long long* ranks, int blocks) {
    const dim3 block(8, 4, 2);
    const int n = blocks * 64;
    float *d_in, *d_out;
    unsigned long long* d_ranks;
    CHECK(cudaMalloc(&d_in, sizeof(float) * n));
    CHECK(cudaMalloc(&d_out, sizeof(float) * n));
    CHECK(cudaMalloc(&d_ranks, sizeof(unsigned long long) * n));
    CHECK(cudaMemcpy(d_in, in, sizeof(float) * n, cudaMemcpyHostToDevice));
    float_tile_kernel<<<blocks, block>>>(d_in, d_out, d_ranks);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(out, d_out, sizeof(float) * n, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(ranks, d_ranks, sizeof(unsigned long long) * n, cudaMemcpyDeviceToHost));
    CHECK(cudaFree(d_in));
    CHECK(cudaFree(d_out));
    CHECK(cudaFree(d_ranks));
    return 0;
}
