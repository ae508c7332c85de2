// Block-loop regions and the shared-memory race check (simulator/block_loops_epochs.py): a region
// alone between two barriers that writes no shared memory runs unjudged; every other region is
// judged, however it writes shared memory. One case per run (argv[1]); prints the results.
#include <cstdio>
#include <cstring>

#define TILE 8

// The tiled product: the inner product reads both tiles between two barriers (unjudged).
__global__ void tiled(const int* a, const int* b, int* c, int n) {
    __shared__ int as[TILE][TILE];
    __shared__ int bs[TILE][TILE];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
    int sum = 0;
    for (int m = 0; m < n / TILE; ++m) {
        as[ty][tx] = a[row * n + m * TILE + tx];  // PLANT: tile write
        bs[ty][tx] = b[(m * TILE + ty) * n + col];
        __syncthreads();
        for (int k = 0; k < TILE; ++k) sum += as[ty][k] * bs[k][tx];  // PLANT: tile read
        __syncthreads();
    }
    c[row * n + col] = sum;
}

// The same without the second barrier: the next tile's writes race with this tile's reads, so
// the reads share their epoch with writes and are judged.
__global__ void tiled_one_barrier(const int* a, const int* b, int* c, int n) {
    __shared__ int as[TILE][TILE];
    __shared__ int bs[TILE][TILE];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
    int sum = 0;
    for (int m = 0; m < n / TILE; ++m) {
        as[ty][tx] = a[row * n + m * TILE + tx];  // PLANT: early write
        bs[ty][tx] = b[(m * TILE + ty) * n + col];
        __syncthreads();
        for (int k = 0; k < TILE; ++k) sum += as[ty][k] * bs[k][tx];  // PLANT: late read
    }
    c[row * n + col] = sum;
}

// A region between barriers that writes shared memory through a pointer to it.
__global__ void through_pointer(int* out) {
    __shared__ int s[64];
    const int t = threadIdx.x;
    s[t] = t;
    __syncthreads();
    int* p = s;
    const int v = s[t];  // PLANT: read beside a pointer write
    p[(t + 1) % 64] = v + 1;  // PLANT: pointer write
    __syncthreads();
    out[t] = s[t];
}

__device__ void put(int* where, int v) { *where = v; }  // PLANT: callee write

// The same through a device function that gets a pointer to shared memory.
__global__ void through_callee(int* out) {
    __shared__ int s[64];
    const int t = threadIdx.x;
    s[t] = t;
    __syncthreads();
    const int v = s[t];  // PLANT: read beside a callee write
    put(&s[(t + 1) % 64], v + 1);
    __syncthreads();
    out[t] = s[t];
}

// Dynamic shared memory (extern __shared__), written by element between barriers.
__global__ void dynamic_shared(int* out) {
    extern __shared__ int d[];
    const int t = threadIdx.x;
    d[t] = t;
    __syncthreads();
    const int v = d[t];  // PLANT: read of dynamic shared memory
    d[(t + 1) % 64] = v + 1;  // PLANT: dynamic write
    __syncthreads();
    out[t] = d[t];
}

// An atomic on shared memory between barriers: judged (a call), and no race (atomics never race
// with atomics); the reads after the next barrier are alone in their epoch.
__global__ void shared_atomic(int* out) {
    __shared__ int count;
    const int t = threadIdx.x;
    if (t == 0) count = 0;
    __syncthreads();
    atomicAdd(&count, t);
    __syncthreads();
    const int v = count;
    __syncthreads();
    out[t] = v;
}

// Every block writes its shared memory at the same offsets, then reads it alone in an epoch:
// blocks have shared memory of their own, and nothing is a hazard. The threads' writes to g race
// (global memory): the full racecheck (--racecheck-memory all) reports them, the shared-memory
// one does not judge them; the unjudged region reads g after the barrier.
__global__ void blocks_and_global(int* g, int* out) {
    __shared__ int s[64];
    const int t = threadIdx.x;
    s[t] = t * (int)(blockIdx.x + 1);
    g[t % 2] = t;  // PLANT: global write
    __syncthreads();
    int sum = 0;
    for (int k = 0; k < 64; ++k) sum += s[k];
    const int seen = g[0];
    sum += seen - seen;
    __syncthreads();
    out[blockIdx.x * 64 + t] = sum;
}

int main(int argc, char** argv) {
    const char* what = argc > 1 ? argv[1] : "tiled";
    const int n = 16;
    int ha[n * n], hb[n * n], hc[n * n];
    for (int i = 0; i < n * n; ++i) {
        ha[i] = i % 7 - 3;
        hb[i] = i % 5 - 2;
    }
    int *a, *b, *c;
    cudaMalloc(&a, sizeof ha);
    cudaMalloc(&b, sizeof hb);
    cudaMalloc(&c, sizeof hc);
    cudaMemcpy(a, ha, sizeof ha, cudaMemcpyHostToDevice);
    cudaMemcpy(b, hb, sizeof hb, cudaMemcpyHostToDevice);
    cudaMemset(c, 0, sizeof hc);
    const dim3 grid(n / TILE, n / TILE), block(TILE, TILE);
    if (std::strcmp(what, "tiled") == 0) {
        tiled<<<grid, block>>>(a, b, c, n);
    } else if (std::strcmp(what, "tiled_one_barrier") == 0) {
        tiled_one_barrier<<<grid, block>>>(a, b, c, n);
    } else if (std::strcmp(what, "through_pointer") == 0) {
        through_pointer<<<1, 64>>>(c);
    } else if (std::strcmp(what, "through_callee") == 0) {
        through_callee<<<1, 64>>>(c);
    } else if (std::strcmp(what, "dynamic_shared") == 0) {
        dynamic_shared<<<1, 64, 64 * sizeof(int)>>>(c);
    } else if (std::strcmp(what, "shared_atomic") == 0) {
        shared_atomic<<<1, 64>>>(c);
    } else if (std::strcmp(what, "blocks_and_global") == 0) {
        blocks_and_global<<<3, 64>>>(a, c);
    }
    const cudaError_t err = cudaDeviceSynchronize();
    cudaMemcpy(hc, c, sizeof hc, cudaMemcpyDeviceToHost);
    long long total = 0;
    for (int i = 0; i < n * n; ++i) total += (long long)hc[i] * (i % 11 + 1);
    std::printf("%s %s %d %d %d %lld\n", what, cudaGetErrorName(err), hc[0], hc[1], hc[64 + 1], total);
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
    return 0;
}
