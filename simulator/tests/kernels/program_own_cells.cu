// Block-loop regions whose only shared-memory accesses are stores to the thread's own elements
// (simulator/block_loops_cells.py): the shared-memory race check leaves them unjudged while the
// block's shape keeps each thread to its own elements, and judges them for any other shape. Each
// case is one run (argv[1]); prints the results.
#include <cstdio>
#include <cstring>

#define TILE 8

// Each thread stores its own element of two tiles, then reads other threads' after a barrier.
// Launched 8x8 (its own elements, clean) and 16x4 (a row of the tile past its end, into the next
// row: threads (8..15, y) and (0..7, y + 1) store to the same elements).
__global__ void tiles(const int* a, int* out) {
    __shared__ int as[TILE][TILE];
    __shared__ int bs[TILE][TILE];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int t = ty * blockDim.x + tx;
    as[ty][tx] = a[t] + t;  // PLANT: tile store
    bs[threadIdx.y][threadIdx.x] = 2 * a[t];
    __syncthreads();
    int sum = 0;
    for (int k = 0; k < TILE; ++k) sum += as[ty % TILE][k] * bs[k][tx % TILE];
    __syncthreads();
    out[t] = sum;
}

// A one-dimensional tile stored by a two-dimensional block: threads (x, 0) and (x, 1) store to the
// same element.
__global__ void rows_share(int* out) {
    __shared__ int s[64];
    const int t = threadIdx.y * blockDim.x + threadIdx.x;
    s[threadIdx.x] = t;  // PLANT: row store
    __syncthreads();
    out[t] = s[threadIdx.x];
}

// A store to the neighbour's element beside the own one: judged, a race with the neighbour's store.
__global__ void neighbour_store(int* out) {
    __shared__ int s[64];
    const int t = threadIdx.x;
    s[t] = t;  // PLANT: own store
    s[(t + 1) % 64] = -t;  // PLANT: neighbour store
    __syncthreads();
    out[t] = s[t];
}

// The own element stored and the neighbour's read in one region: judged, a race with the
// neighbour's store.
__global__ void store_and_read(int* out) {
    __shared__ int s[64];
    const int t = threadIdx.x;
    s[t] = t;  // PLANT: store beside a read
    const int v = s[(t + 1) % 64];  // PLANT: read of the neighbour's
    __syncthreads();
    out[t] = v;
}

int main(int argc, char** argv) {
    const char* what = argc > 1 ? argv[1] : "tiles";
    const int n = 64;
    int ha[n], hc[n];
    for (int i = 0; i < n; ++i) ha[i] = i % 7 - 3;
    int *a, *c;
    cudaMalloc(&a, sizeof ha);
    cudaMalloc(&c, sizeof hc);
    cudaMemcpy(a, ha, sizeof ha, cudaMemcpyHostToDevice);
    cudaMemset(c, 0, sizeof hc);
    if (std::strcmp(what, "tiles") == 0) {
        tiles<<<1, dim3(TILE, TILE)>>>(a, c);
    } else if (std::strcmp(what, "tiles_wide") == 0) {
        tiles<<<1, dim3(2 * TILE, TILE / 2)>>>(a, c);
    } else if (std::strcmp(what, "rows_share") == 0) {
        rows_share<<<1, dim3(32, 2)>>>(c);
    } else if (std::strcmp(what, "neighbour_store") == 0) {
        neighbour_store<<<1, 64>>>(c);
    } else if (std::strcmp(what, "store_and_read") == 0) {
        store_and_read<<<1, 64>>>(c);
    }
    const cudaError_t err = cudaDeviceSynchronize();
    cudaMemcpy(hc, c, sizeof hc, cudaMemcpyDeviceToHost);
    long long total = 0;
    for (int i = 0; i < n; ++i) total += (long long)hc[i] * (i % 11 + 1);
    std::printf("%s %s %d %d %lld\n", what, cudaGetErrorName(err), hc[0], hc[9], total);
    cudaFree(a);
    cudaFree(c);
    return 0;
}
