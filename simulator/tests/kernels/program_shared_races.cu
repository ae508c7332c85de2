// racecheck --racecheck-memory shared (test_shared_races.py): argv[1] picks a kernel. The clean
// ones order every pair of shared-memory accesses (a barrier, a __syncwarp of the same warp, one
// thread, atomics, different bytes); the others leave one pair unordered at the PLANT lines.
#include <cstdio>
#include <cstring>
#include <cooperative_groups.h>
#include <cooperative_groups/memcpy_async.h>
#include <cuda_runtime.h>

namespace cg = cooperative_groups;

__global__ void tree_sum(const int* in, int* out) {
    __shared__ int part[1024];
    part[threadIdx.x] = in[threadIdx.x];
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if ((int)threadIdx.x < stride) part[threadIdx.x] += part[threadIdx.x + stride];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = part[0];
}

__global__ void no_barrier(int* out) {
    __shared__ int s[1024];
    s[threadIdx.x] = (int)threadIdx.x;  // PLANT: write
    out[threadIdx.x] = s[(threadIdx.x + 1) % blockDim.x];  // PLANT: read
}

__global__ void read_then_write(int* out) {
    __shared__ int flag;
    if (threadIdx.x == 0) flag = 1;
    __syncthreads();
    if (threadIdx.x == 900) out[0] = flag;  // PLANT: late read
    if (threadIdx.x == 5) flag = 2;  // PLANT: early write (thread 5 runs before thread 900)
}

__global__ void warp_exchange(int* out, bool sync) {
    __shared__ int s[64];
    s[threadIdx.x] = (int)threadIdx.x * 3;  // PLANT: lane write
    if (sync) __syncwarp();
    out[threadIdx.x] = s[threadIdx.x ^ 1];  // PLANT: lane read
}

__global__ void across_warps_after_syncwarp(int* out) {
    __shared__ int s[64];
    s[threadIdx.x] = (int)threadIdx.x;  // PLANT: cross write
    __syncwarp();
    out[threadIdx.x] = s[(threadIdx.x + 32) % 64];  // PLANT: cross read
}

__global__ void bytes_and_atomics(int* out) {
    __shared__ char bytes[256];
    __shared__ int count;
    if (threadIdx.x == 0) count = 0;
    bytes[threadIdx.x] = (char)(threadIdx.x & 0x7f);
    __syncthreads();
    atomicAdd(&count, (int)bytes[threadIdx.x]);
    __syncthreads();
    if (threadIdx.x == 0) out[0] = count;
}

__global__ void shared_readers_then_writer(int* out) {
    __shared__ int v;
    if (threadIdx.x == 0) v = 7;
    __syncthreads();
    int mine = v;  // PLANT: many readers
    if (threadIdx.x == 40) v = mine + 1;  // PLANT: one writer
    out[threadIdx.x] = mine;
}

__global__ void global_race(int* out) {
    out[0] = (int)threadIdx.x;  // PLANT: global write
}

__global__ void copy_then_read(const int* in, int* out, bool wait_first) {
    __shared__ int buf[64];
    cg::thread_block block = cg::this_thread_block();
    cg::memcpy_async(block, buf, in, sizeof buf);  // PLANT: async copy
    if (wait_first) cg::wait(block);
    out[threadIdx.x] = buf[(threadIdx.x + 1) % 64];  // PLANT: early read
    if (!wait_first) cg::wait(block);
}

// One statement of one warp whose lanes store different values to one address (a kernel of its
// own: g++ would merge the store with warp_sums' into one instruction).
__global__ void lane_values(const int* in, int* out) {
    __shared__ int shared_sum[2];
    const int warp_id = (int)threadIdx.x / 32;
    shared_sum[warp_id] = in[threadIdx.x];  // PLANT: a value per lane
    __syncthreads();
    if (threadIdx.x == 0) out[0] = shared_sum[0] + shared_sum[1];
}

// A block reduction's last step: each warp's sum into shared memory. Every lane of a warp stores
// its warp's (one) sum in one statement: no hazard. Lanes storing different values, or warps
// storing to one address, race.
__global__ void warp_sums(const int* in, int* out, int kind) {
    __shared__ int shared_sum[2];
    int warp_sum = in[threadIdx.x];
    for (int offset = 16; offset > 0; offset /= 2) warp_sum += __shfl_xor_sync(0xffffffffu, warp_sum, offset);
    const int warp_id = (int)threadIdx.x / 32;
    if (kind == 0) shared_sum[warp_id] = warp_sum;  // PLANT: one value per warp
    if (kind == 1) shared_sum[0] = 7;  // PLANT: every warp to one address
    __syncthreads();
    if (threadIdx.x == 0) {
        out[0] = shared_sum[0];
        out[1] = shared_sum[1];
        out[2] = 0;
    }
}

// A read of two words, the first of which every earlier thread read (its hint lets a read of it
// through) and the second of which thread 40 wrote in the same epoch: the wide read still races
// with that write. After the barrier thread 63 (the last to arrive) runs first, then 0, 1, ...
__global__ void wide_read_after_word_write(int* out) {
    __shared__ union {
        long long wide;
        int word[2];
    } u;
    if (threadIdx.x == 0) u.wide = 0;
    __syncthreads();
    out[threadIdx.x] = u.word[0];
    if (threadIdx.x == 40) u.word[1] = 5;  // PLANT: high word write
    if (threadIdx.x == 50) out[1] = (int)(u.wide >> 32);  // PLANT: wide read
}

int main(int argc, char** argv) {
    const char* what = argc > 1 ? argv[1] : "sum";
    int* d_in;
    int* d_out;
    cudaMalloc(&d_in, 1024 * sizeof(int));
    cudaMalloc(&d_out, 1024 * sizeof(int));
    int h[1024];
    for (int i = 0; i < 1024; ++i) h[i] = i % 97;
    cudaMemcpy(d_in, h, sizeof h, cudaMemcpyHostToDevice);
    if (std::strcmp(what, "sum") == 0) {
        tree_sum<<<3, 1024>>>(d_in, d_out);
    } else if (std::strcmp(what, "no_barrier") == 0) {
        no_barrier<<<2, 1024>>>(d_out);
    } else if (std::strcmp(what, "raw") == 0) {
        read_then_write<<<1, 1024>>>(d_out);
    } else if (std::strcmp(what, "warp_sync") == 0 || std::strcmp(what, "warp_nosync") == 0) {
        warp_exchange<<<1, 64>>>(d_out, std::strcmp(what, "warp_sync") == 0);
    } else if (std::strcmp(what, "cross_warp") == 0) {
        across_warps_after_syncwarp<<<1, 64>>>(d_out);
    } else if (std::strcmp(what, "bytes") == 0) {
        bytes_and_atomics<<<1, 256>>>(d_out);
    } else if (std::strcmp(what, "readers") == 0) {
        shared_readers_then_writer<<<1, 64>>>(d_out);
    } else if (std::strcmp(what, "copy_wait") == 0 || std::strcmp(what, "copy_early") == 0) {
        copy_then_read<<<1, 64>>>(d_in, d_out, std::strcmp(what, "copy_wait") == 0);
    } else if (std::strcmp(what, "warp_same") == 0) {
        warp_sums<<<1, 64>>>(d_in, d_out, 0);
    } else if (std::strcmp(what, "warp_lanes_differ") == 0) {
        lane_values<<<1, 64>>>(d_in, d_out);
    } else if (std::strcmp(what, "warps_one_address") == 0) {
        warp_sums<<<1, 64>>>(d_in, d_out, 1);
    } else if (std::strcmp(what, "wide_read") == 0) {
        wide_read_after_word_write<<<1, 64>>>(d_out);
    } else if (std::strcmp(what, "global") == 0) {
        global_race<<<1, 64>>>(d_out);
    }
    cudaMemcpy(h, d_out, sizeof h, cudaMemcpyDeviceToHost);
    std::printf("%s %d %d %d\n", what, h[0], h[1], h[2]);
    cudaFree(d_in);
    cudaFree(d_out);
    return 0;
}
