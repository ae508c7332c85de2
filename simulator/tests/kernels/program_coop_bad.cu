// Misuses of grid.sync(): `plain` calls it from an ordinary <<<>>> launch (undefined on a GPU; the
// simulator stops the launch with a report), `deadlock` has block 1's thread 0 wait at
// __syncthreads while every other thread waits at grid.sync() (never released on a GPU either),
// `exit` has block 1 return before the grid.sync() that block 0 reaches (a GPU waits there for
// every block and hangs; the simulator waits for live threads only, and synccheck reports it),
// `tile` has thread 0 wait at __syncthreads while the rest of its tile of 64 waits at the tile's
// sync() (a deadlock), `tile_lines` has the odd and even threads of a tile of 64 call sync() on
// two lines (synccheck reports it; the barrier itself completes, as on a GPU).
#include <cooperative_groups.h>
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>

namespace cg = cooperative_groups;

__global__ void needs_grid(int* out) {
    out[blockIdx.x] = 1;
    cg::this_grid().sync();
    out[blockIdx.x] = 2;
}

__global__ void stuck(int* out) {
    if (blockIdx.x == 1 && threadIdx.x == 0) {
        __syncthreads();
    } else {
        cg::this_grid().sync();
    }
    out[blockIdx.x] = 3;
}

__global__ void leaves(int* out) {
    if (blockIdx.x == 1) return;
    cg::this_grid().sync();
    out[blockIdx.x] = 4;
}

__global__ void tile_stuck(int* out) {
    cg::thread_block_tile<64> tile = cg::tiled_partition<64>(cg::this_thread_block());
    if (threadIdx.x == 0) {
        __syncthreads();
    } else {
        tile.sync();
    }
    out[0] = 5;
}

__global__ void tile_lines(int* out) {
    cg::thread_block_tile<64> tile = cg::tiled_partition<64>(cg::this_thread_block());
    if (threadIdx.x % 2 == 0) {
        tile.sync();
    } else {
        tile.sync();
    }
    if (threadIdx.x == 0) out[0] = 6;
}

int main(int argc, char** argv) {
    const char* what = argc > 1 ? argv[1] : "plain";
    int* out;
    cudaMalloc(&out, 4 * sizeof(int));
    if (std::strcmp(what, "plain") == 0) {
        needs_grid<<<2, 32>>>(out);
    } else if (std::strcmp(what, "tile") == 0) {
        tile_stuck<<<1, 128>>>(out);
    } else if (std::strcmp(what, "tile_lines") == 0) {
        tile_lines<<<1, 128>>>(out);
    } else {
        void* args[] = {&out};
        const bool exits = std::strcmp(what, "exit") == 0;
        cudaLaunchCooperativeKernel(exits ? (void*)leaves : (void*)stuck, dim3(2), dim3(32), args, 0, 0);
    }
    cudaDeviceSynchronize();
    printf("error=%s\n", cudaGetErrorName(cudaGetLastError()));
    return 0;
}
