// cg::memcpy_async into shared memory by a whole block (bytes, and cuda::aligned_size_t), by warp
// tiles (the element-count form, two batches with cg::wait_prior<1> then cg::wait) and by a tile
// of 128 threads; each group reads what the others copied only after the wait. Prints each result.
#include <cooperative_groups.h>
#include <cooperative_groups/memcpy_async.h>
#include <cstdio>
#include <cuda_runtime.h>
#include <cuda/barrier>  // cuda::aligned_size_t

namespace cg = cooperative_groups;

constexpr int T = 256;   // threads per block
constexpr int M = 1000;  // ints copied by the block (not a multiple of T)

__global__ void staged(const int* in, int* out) {
    __shared__ int buf[M];
    __shared__ alignas(16) int vec[T];
    __shared__ int pair[2][T];
    __shared__ cg::block_tile_memory<T> scratch;
    cg::thread_block block = cg::this_thread_block(scratch);
    const int i = block.thread_rank();
    const int* src = in + blockIdx.x * M;
    cg::memcpy_async(block, buf, src, sizeof(int) * M);
    cg::memcpy_async(block, vec, src, cuda::aligned_size_t<16>(sizeof(int) * T));
    cg::wait(block);
    // The reversed sums read what other threads of the block copied.
    out[blockIdx.x * 4 * T + i] = buf[M - 1 - i] + buf[(i * 7) % M] + vec[T - 1 - i];

    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    const int base = warp.meta_group_rank() * 32;
    cg::memcpy_async(warp, pair[0] + base, (size_t)32, src + 500 + base, (size_t)40);  // min(32, 40) elements
    cg::memcpy_async(warp, pair[1] + base, src + 700 + base, 32 * sizeof(int));
    cg::wait_prior<1>(warp);
    const int first = pair[0][base + 31 - warp.thread_rank()];
    cg::wait(warp);
    out[blockIdx.x * 4 * T + T + i] = first * 1000 + pair[1][base + 31 - warp.thread_rank()];

    block.sync();  // every warp has read pair before the big tiles overwrite it
    cg::thread_block_tile<128> quarter = cg::tiled_partition<128>(block);
    const int qbase = quarter.meta_group_rank() * 128;
    cg::memcpy_async(quarter, pair[0] + qbase, src + 100 + qbase, 128 * sizeof(int));
    cg::wait(quarter);
    out[blockIdx.x * 4 * T + 2 * T + i] = pair[0][qbase + 127 - quarter.thread_rank()];
    out[blockIdx.x * 4 * T + 3 * T + i] = buf[i] - src[i];  // 0: the block's copy is complete
}

int main() {
    const int blocks = 2;
    int* h = new int[blocks * M];
    for (int k = 0; k < blocks * M; ++k) h[k] = (k * 53 + 17) % 997;
    int *in, *out;
    cudaMalloc(&in, blocks * M * sizeof(int));
    cudaMalloc(&out, blocks * 4 * T * sizeof(int));
    cudaMemcpy(in, h, blocks * M * sizeof(int), cudaMemcpyHostToDevice);
    staged<<<blocks, T>>>(in, out);
    int* r = new int[blocks * 4 * T];
    cudaMemcpy(r, out, blocks * 4 * T * sizeof(int), cudaMemcpyDeviceToHost);
    const char* names[4] = {"block", "warps", "quarter", "complete"};
    for (int b = 0; b < blocks; ++b) {
        for (int k = 0; k < 4; ++k) {
            printf("%s_%d=", names[k], b);
            for (int i = 0; i < T; ++i) printf("%d%s", r[b * 4 * T + k * T + i], i + 1 < T ? "," : "\n");
        }
    }
    printf("error=%s\n", cudaGetErrorName(cudaGetLastError()));
    cudaFree(in);
    cudaFree(out);
    delete[] h;
    delete[] r;
    return 0;
}
