// Cooperative launches: cudaLaunchCooperativeKernel with the largest grid the device holds
// (grid.sync() between phases that read other blocks' writes), cudaLaunchKernelEx with
// cudaLaunchAttributeCooperative (a stencil iterated with grid.sync() between steps), one block
// too many (cudaErrorCooperativeLaunchTooLarge) and the grid group's ranks. Prints each result.
// With "bad CASE" it runs only that misuse of grid.sync() below instead: one program for all, so
// that each mode builds it once.
#include <cooperative_groups.h>
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>

namespace cg = cooperative_groups;

constexpr int B = 64;  // threads per block of `phases`

// extern "C", as NVIDIA's samples write cooperative kernels: registered for the launch by address.
extern "C" __global__ void phases(const int* in, int* a, int* b, long long* sums, unsigned long long* ranks, int n) {
    cg::grid_group grid = cg::this_grid();
    __shared__ int tile[B];
    const unsigned long long t = grid.thread_rank();
    tile[threadIdx.x] = in[t];
    __syncthreads();
    a[t] = tile[B - 1 - threadIdx.x] * 3 + 1;  // each block's slice, reversed
    grid.sync();
    b[t] = a[(t + 7 * B + 3) % n] - a[t];  // written by another block before the barrier
    cg::sync(grid);
    const unsigned long long k = grid.block_rank();
    if (threadIdx.x == 0) {
        const unsigned long long next = (k + 1) % grid.num_blocks();
        long long s = 0;
        for (int i = 0; i < B; ++i) s += b[next * B + i];
        sums[k] = s;
    }
    ranks[2 * t] = t;
    ranks[2 * t + 1] = k;
    if (t == 0) {
        ranks[2 * n] = grid.size();
        ranks[2 * n + 1] = grid.num_blocks();
        ranks[2 * n + 2] = grid.is_valid() ? 1 : 0;
        ranks[2 * n + 3] = grid.num_threads();
    }
}

// steps rounds of x[i] <- (x[i-1] + 2 x[i] + x[i+1]) % 1000 over a ring, double-buffered.
__global__ void stencil(int* x, int* y, int n, int steps) {
    cg::grid_group grid = cg::this_grid();
    const int i = (int)grid.thread_rank();
    for (int s = 0; s < steps; ++s) {
        const int* from = s % 2 == 0 ? x : y;
        int* to = s % 2 == 0 ? y : x;
        to[i] = (from[(i + n - 1) % n] + 2 * from[i] + from[(i + 1) % n]) % 1000;
        grid.sync();
    }
}

// Block 0 (which runs first) spins with __nanosleep until block 1 has published a value: the
// blocks of a cooperative launch are co-resident, so this ends.
__global__ void handshake(volatile int* flag, int* data) {
    if (threadIdx.x != 0) return;
    if (blockIdx.x == 1) {
        data[0] = 1234;
        __threadfence();
        atomicExch((int*)flag, 1);
    } else {
        while (atomicAdd((int*)flag, 0) == 0) __nanosleep(100);
        __threadfence();
        data[1] = data[0] + 1;
    }
}

__global__ void not_cooperative(int* flag) {
    if (blockIdx.x == 0 && threadIdx.x == 0) flag[0] = cg::this_grid().is_valid() ? 1 : 0;
}

static void print_ints(const char* name, const int* v, int n) {
    printf("%s=", name);
    for (int i = 0; i < n; ++i) printf("%d%s", v[i], i + 1 < n ? "," : "\n");
}

// ---- "bad CASE": misuses of grid.sync(). `plain` calls it from an ordinary <<<>>> launch
// (undefined on a GPU; the simulator stops the launch with a report), `deadlock` has block 1's
// thread 0 wait at __syncthreads while every other thread waits at grid.sync() (never released on a
// GPU either), `exit` has block 1 return before the grid.sync() that block 0 reaches (a GPU waits
// there for every block and hangs; the simulator waits for live threads only, and synccheck reports
// it), `tile` has thread 0 wait at __syncthreads while the rest of its tile of 64 waits at the
// tile's sync() (a deadlock), `tile_lines` has the odd and even threads of a tile of 64 call sync()
// on two lines (synccheck reports it; the barrier itself completes, as on a GPU).
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

static int bad_main(int argc, char** argv) {
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

int main(int argc, char** argv) {
    if (argc > 1 && std::strcmp(argv[1], "bad") == 0) return bad_main(argc - 1, argv + 1);
    int coop = -1, sms = 0, per_sm = 0;
    cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, 0);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, phases, B, 0);
    printf("coop_attr=%d\nsms=%d\nper_sm=%d\n", coop, sms, per_sm);
    const int G = sms * per_sm, n = G * B;
    int* h = new int[n];
    for (int i = 0; i < n; ++i) h[i] = (i * 37 + 11) % 101 - 50;
    int *in, *a, *b;
    long long* sums;
    unsigned long long* ranks;
    cudaMalloc(&in, n * sizeof(int));
    cudaMalloc(&a, n * sizeof(int));
    cudaMalloc(&b, n * sizeof(int));
    cudaMalloc(&sums, G * sizeof(long long));
    cudaMalloc(&ranks, (2 * n + 4) * sizeof(unsigned long long));
    cudaMemcpy(in, h, n * sizeof(int), cudaMemcpyHostToDevice);
    int nn = n;
    void* args[] = {&in, &a, &b, &sums, &ranks, &nn};
    cudaError_t e = cudaLaunchCooperativeKernel((void*)phases, dim3(G), dim3(B), args, 0, 0);
    printf("launch=%s\n", cudaGetErrorName(e));
    int* hb = new int[n];
    long long* hs = new long long[G];
    unsigned long long* hr = new unsigned long long[2 * n + 4];
    cudaMemcpy(hb, b, n * sizeof(int), cudaMemcpyDeviceToHost);
    cudaMemcpy(hs, sums, G * sizeof(long long), cudaMemcpyDeviceToHost);
    cudaMemcpy(hr, ranks, (2 * n + 4) * sizeof(unsigned long long), cudaMemcpyDeviceToHost);
    print_ints("b", hb, n);
    printf("sums=");
    for (int k = 0; k < G; ++k) printf("%lld%s", hs[k], k + 1 < G ? "," : "\n");
    bool ranks_ok = true;
    for (int t = 0; t < n; ++t) ranks_ok = ranks_ok && hr[2 * t] == (unsigned long long)t && hr[2 * t + 1] == (unsigned long long)(t / B);
    printf("ranks_ok=%d\ngrid=%llu,%llu,%llu,%llu\n", ranks_ok ? 1 : 0, hr[2 * n], hr[2 * n + 1], hr[2 * n + 2],
           hr[2 * n + 3]);

    e = cudaLaunchCooperativeKernel((void*)phases, dim3(G + 1), dim3(B), args, 0, 0);
    printf("too_large=%s\nlast=%s\n", cudaGetErrorName(e), cudaGetErrorName(cudaGetLastError()));

    const int SN = 96, STEPS = 5;
    int hx[SN];
    for (int i = 0; i < SN; ++i) hx[i] = (i * i * 7 + 3) % 1000;
    int *x, *y;
    cudaMalloc(&x, SN * sizeof(int));
    cudaMalloc(&y, SN * sizeof(int));
    cudaMemcpy(x, hx, sizeof(hx), cudaMemcpyHostToDevice);
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeCooperative;
    attr[0].val.cooperative = 1;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(3);
    cfg.blockDim = dim3(32);
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    e = cudaLaunchKernelEx(&cfg, stencil, x, y, SN, STEPS);
    printf("launch_ex=%s\n", cudaGetErrorName(e));
    cudaMemcpy(hx, STEPS % 2 == 0 ? x : y, sizeof(hx), cudaMemcpyDeviceToHost);
    print_ints("stencil", hx, SN);

    int *hs_flag, *hs_data;
    cudaMalloc(&hs_flag, sizeof(int));
    cudaMalloc(&hs_data, 2 * sizeof(int));
    cudaMemset(hs_flag, 0, sizeof(int));
    void* hs_args[] = {&hs_flag, &hs_data};
    e = cudaLaunchCooperativeKernel((void*)handshake, dim3(2), dim3(32), hs_args, 0, 0);
    int hd[2] = {0, 0};
    cudaMemcpy(hd, hs_data, sizeof(hd), cudaMemcpyDeviceToHost);
    printf("handshake=%s,%d\n", cudaGetErrorName(e), hd[1]);
    cudaFree(hs_flag);
    cudaFree(hs_data);

    int* flag;
    cudaMalloc(&flag, sizeof(int));
    not_cooperative<<<2, 32>>>(flag);
    int hf = -1;
    cudaMemcpy(&hf, flag, sizeof(int), cudaMemcpyDeviceToHost);
    printf("plain_is_valid=%d\nerror=%s\n", hf, cudaGetErrorName(cudaGetLastError()));
    cudaFree(in);
    cudaFree(a);
    cudaFree(b);
    cudaFree(sums);
    cudaFree(ranks);
    cudaFree(x);
    cudaFree(y);
    cudaFree(flag);
    delete[] h;
    delete[] hb;
    delete[] hs;
    delete[] hr;
    return 0;
}
