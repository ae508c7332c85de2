// Tiles of 64, 128, 256, 512 and 1024 threads (cg::tiled_partition<N> with block_tile_memory, and
// CUDA 11's cg::experimental spelling): ranks, sizes, sync() around a shared-memory exchange, shfl,
// any/all, cg::reduce and the scans. One block of 1024 threads; prints each result.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cooperative_groups/scan.h>
#include <cstdio>
#include <cuda_runtime.h>

namespace cg = cooperative_groups;

constexpr int N = 1024;
constexpr int kSizes[] = {64, 128, 256, 512, 1024};
constexpr int kOut = 9;  // results per tile size

template <int S>
__device__ void one_size(const int* in, int* out, int* exchange) {
    __shared__ cg::block_tile_memory<N> scratch;
    cg::thread_block block = cg::this_thread_block(scratch);
    cg::thread_block_tile<S> tile = cg::tiled_partition<S>(block);
    const int i = block.thread_rank();
    const int v = in[i];
    int* o = out + kOut * N * (__builtin_ctz(S) - 6);
    o[i] = tile.thread_rank() * 100000 + tile.meta_group_rank() * 100 + tile.meta_group_size();
    o[N + i] = (int)tile.size() * 10 + (tile.num_threads() == S ? 1 : 0);
    exchange[i] = v;
    tile.sync();
    const int base = i - (int)tile.thread_rank();
    o[2 * N + i] = exchange[base + (tile.thread_rank() + 1) % S];  // the next thread of the tile, wrapping
    tile.sync();
    o[3 * N + i] = tile.shfl(v, 5);
    o[4 * N + i] = tile.any(v == 42) * 10 + tile.all(v > -100);
    o[5 * N + i] = cg::reduce(tile, v, cg::plus<int>());
    o[6 * N + i] = cg::reduce(tile, v, cg::greater<int>());
    o[7 * N + i] = cg::inclusive_scan(tile, v);
    o[8 * N + i] = cg::exclusive_scan(tile, v, cg::plus<int>());
}

__global__ void tiles(const int* in, int* out) {
    __shared__ int exchange[N];
    one_size<64>(in, out, exchange);
    __syncthreads();
    one_size<128>(in, out, exchange);
    __syncthreads();
    one_size<256>(in, out, exchange);
    __syncthreads();
    one_size<512>(in, out, exchange);
    __syncthreads();
    one_size<1024>(in, out, exchange);
}

// CUDA 11's spelling (gone from CUDA 12's headers; the simulator still accepts it), with a
// runtime-sized tile of 128 threads as a thread_group.
#if defined(CUDA_CPU_SIMULATOR) || CUDART_VERSION < 12000
#define HAVE_EXPERIMENTAL_TILES 1
__global__ void experimental_tiles(const int* in, int* out) {
    __shared__ cg::experimental::block_tile_memory<4, N> scratch;
    cg::thread_block block = cg::experimental::this_thread_block(scratch);
    auto tile = cg::experimental::tiled_partition<256>(block);
    cg::thread_group group = cg::tiled_partition(block, 128);
    const int i = block.thread_rank();
    out[i] = cg::reduce(tile, in[i], cg::plus<int>());
    group.sync();
    out[N + i] = (int)group.thread_rank() * 1000 + (int)group.size();
}
#endif

static void print(const char* name, int size, const int* a) {
    printf("%s_%d=", name, size);
    for (int i = 0; i < N; ++i) printf("%d%s", a[i], i + 1 < N ? "," : "\n");
}

int main() {
    int* h = new int[N];
    for (int i = 0; i < N; ++i) h[i] = (i * 37 + 11) % 82 - 40;  // 42 never appears...
    h[700] = 42;                                                  // ...except here
    int *in, *out;
    const int nout = kOut * N * 5;
    cudaMalloc(&in, N * sizeof(int));
    cudaMalloc(&out, nout * sizeof(int));
    cudaMemcpy(in, h, N * sizeof(int), cudaMemcpyHostToDevice);
    tiles<<<1, N>>>(in, out);
    int* r = new int[nout];
    cudaMemcpy(r, out, nout * sizeof(int), cudaMemcpyDeviceToHost);
    const char* names[kOut] = {"ranks", "sizes", "next", "shfl5", "anyall", "sum", "max", "inc", "exc"};
    for (int s = 0; s < 5; ++s) {
        for (int k = 0; k < kOut; ++k) print(names[k], kSizes[s], r + kOut * N * s + k * N);
    }
#if defined(HAVE_EXPERIMENTAL_TILES)
    experimental_tiles<<<1, N>>>(in, out);
    cudaMemcpy(r, out, 2 * N * sizeof(int), cudaMemcpyDeviceToHost);
    print("xsum", 256, r);
    print("group", 128, r + N);
#endif
    printf("error=%s\n", cudaGetErrorName(cudaGetLastError()));
    cudaFree(in);
    cudaFree(out);
    delete[] h;
    delete[] r;
    return 0;
}
