// Prefix regions (one `if (t < s)` between barriers, simulator/block_loops_simd.py) under the
// shared-memory race check, whose loop runs only the threads below the bound: a thread past it
// makes no access, so none is judged, while every thread below it is. Each case is one run
// (argv[1]); prints the results.
#include <cstdio>
#include <cstring>

// A tree reduction per row of a (w, h) block (w <= 32), with the first level's bound given (at most
// 32): clean for any bound (the threads below it add their partner's value).
__global__ void fold_rows(const int* a, int* out, int first) {
    __shared__ int sm[4][64];
    const int t = threadIdx.x, r = threadIdx.y;
    for (int i = t; i < 64; i += blockDim.x) sm[r][i] = 0;
    __syncthreads();
    sm[r][t] = a[r * blockDim.x + t];
    __syncthreads();
    for (int s = first; s > 0; s >>= 1) {
        if (t < s) sm[r][t] += sm[r][t + s];
        __syncthreads();
    }
    out[r * blockDim.x + t] = sm[r][t];
}

// Each thread below the bound adds its right neighbour's value: thread t reads what thread t + 1
// writes, a race between threads within the bound. (Two statements: one that read another
// thread's element of the array it stores to would run with fibers, in a warp's lockstep.)
__global__ void neighbours(const int* a, int* out, int s) {
    __shared__ int sm[65];
    const int t = threadIdx.x;
    sm[t] = a[t];
    if (t == 0) sm[64] = 0;
    __syncthreads();
    if (t < s) {
        const int right = sm[t + 1];  // PLANT: neighbour read
        sm[t] += right;  // PLANT: own sum
    }
    __syncthreads();
    out[t] = sm[t];
}

// Each thread below the bound copies element `at` over its own: the thread whose own element that
// is (t == at) writes what the others read, a race only when it is below the bound (at < s).
// `rounds` barriers first: after each, the checkers' loops start one thread earlier, as fibers do
// (runtime/block_loops.h), so that the region may start with a thread below the bound and wrap.
__global__ void copy_from(const int* a, int* out, int s, int at, int rounds) {
    __shared__ int sm[64];
    const int t = threadIdx.x;
    sm[t] = a[t];
    __syncthreads();
    for (int k = 0; k < rounds; ++k) __syncthreads();
    if (t < s) {
        const int v = sm[at];  // PLANT: copy read
        sm[t] = v;  // PLANT: copy store
    }
    __syncthreads();
    out[t] = sm[t];
}

static int* c;
static int hc[256];

// Prints what the last launch left (its error, two elements and a weighted sum of all of them).
static void report(const char* what) {
    const cudaError_t err = cudaDeviceSynchronize();
    cudaMemcpy(hc, c, sizeof hc, cudaMemcpyDeviceToHost);
    long long total = 0;
    for (int i = 0; i < 256; ++i) total += (long long)hc[i] * (i % 11 + 1);
    std::printf("%s %s %d %d %lld\n", what, cudaGetErrorName(err), hc[0], hc[33], total);
    cudaMemset(c, 0, sizeof hc);
}

int main(int argc, char** argv) {
    const char* what = argc > 1 ? argv[1] : "fold";
    int ha[256];
    for (int i = 0; i < 256; ++i) ha[i] = i % 13 - 6 + i / 64;
    int* a;
    cudaMalloc(&a, sizeof ha);
    cudaMalloc(&c, sizeof hc);
    cudaMemcpy(a, ha, sizeof ha, cudaMemcpyHostToDevice);
    cudaMemset(c, 0, sizeof hc);
    if (std::strcmp(what, "fold") == 0) {
        // Bounds at the block's width, within it, above it, and none.
        fold_rows<<<1, dim3(32, 4)>>>(a, c, 32);
        report("fold 32x4 from 32");
        fold_rows<<<1, dim3(32, 4)>>>(a, c, 16);
        report("fold 32x4 from 16");
        fold_rows<<<1, dim3(20, 3)>>>(a, c, 32);
        report("fold 20x3 from 32");
        fold_rows<<<1, dim3(24, 2)>>>(a, c, 5);
        report("fold 24x2 from 5");
        fold_rows<<<1, dim3(24, 2)>>>(a, c, 0);
        report("fold 24x2 from 0");
    } else {
        if (std::strcmp(what, "neighbours") == 0) {
            neighbours<<<1, 64>>>(a, c, 40);
        } else if (std::strcmp(what, "neighbours_one") == 0) {
            neighbours<<<1, 64>>>(a, c, 1);  // one thread below the bound: no race
        } else if (std::strcmp(what, "copy_past") == 0) {
            copy_from<<<1, 64>>>(a, c, 20, 20, 0);  // the writer of sm[20] is past the bound: no race
        } else if (std::strcmp(what, "copy_within") == 0) {
            copy_from<<<1, 64>>>(a, c, 20, 19, 0);  // the writer of sm[19] is the last thread below it
        } else if (std::strcmp(what, "copy_past_late") == 0) {
            copy_from<<<1, 64>>>(a, c, 20, 20, 54);  // the region starts at thread 9: 9..19, 0..8
        } else if (std::strcmp(what, "copy_within_late") == 0) {
            copy_from<<<1, 64>>>(a, c, 20, 19, 54);  // reads before and after the write of sm[19]
        }
        report(what);
    }
    cudaFree(a);
    cudaFree(c);
    return 0;
}
