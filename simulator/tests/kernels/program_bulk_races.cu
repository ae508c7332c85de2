// Block-loop regions alone in their epoch whose shared accesses are affine in threadIdx.x
// (simulator/block_loops_bulk.py): the shared-memory race check judges each once per block from
// the ranges, runs it unjudged where no two threads meet at a byte one of them writes, and judges
// it access by access otherwise. Tree-sum-shaped reductions, clean and with planted races (each
// read of another thread's element is a statement of its own: one that stored to the array it
// reads from would run with fibers, in a warp's lockstep). Each case is one run (argv[1]); prints
// the results.
#include <cstdio>
#include <cstring>

#define BLOCK 64

// The bench's tree-sum (two blocks): writes [0, s), reads [s, 2s) at each level. Clean; racy in a
// block of two rows, whose threads (x, 0) and (x, 1) store to one element.
__global__ void tree(const int* x, int* out) {
    __shared__ int sm[BLOCK];
    const int t = threadIdx.x;
    sm[t] = x[blockIdx.x * BLOCK + t];
    __syncthreads();
    for (int s = BLOCK / 2; s > 0; s >>= 1) {
        if (t < s) sm[t] += sm[t + s];  // PLANT: tree level
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = sm[0];
}

// The bound off by one: thread s writes sm[s], which thread 0 reads at the same level.
__global__ void bound_off(const int* x, int* out) {
    __shared__ int sm[2 * BLOCK];
    const int t = threadIdx.x;
    sm[t] = x[t];
    sm[t + BLOCK] = 0;
    __syncthreads();
    for (int s = BLOCK / 2; s > 0; s >>= 1) {
        if (t <= s) { const int v = sm[t + s]; sm[t] += v; }  // PLANT: bound off by one
        __syncthreads();
    }
    out[t] = sm[t];
}

// A read one element too low: thread 0 reads sm[s - 1], which thread s - 1 writes (from s = 2 on).
__global__ void read_low(const int* x, int* out) {
    __shared__ int sm[BLOCK];
    const int t = threadIdx.x;
    sm[t] = x[t];
    __syncthreads();
    for (int s = BLOCK / 2; s > 0; s >>= 1) {
        if (t < s) { const int v = sm[t + s - 1]; sm[t] += v; }  // PLANT: read one too low
        __syncthreads();
    }
    out[t] = sm[t];
}

// Elements `stride` apart: 1 and 2 clean, 0 every thread's write to element 0 (a race between
// warps), -1 from the top down (clean).
__global__ void strided(const int* x, int* out, int stride, int top) {
    __shared__ int sm[4 * BLOCK];
    const int t = threadIdx.x;
    for (int i = t; i < 4 * BLOCK; i += BLOCK) sm[i] = x[i % BLOCK];
    __syncthreads();
    for (int s = BLOCK / 2; s > 0; s >>= 1) {
        if (t < s) { const int v = sm[top + (t + s) * stride]; sm[top + t * stride] += v; }  // PLANT: strided level
        __syncthreads();
    }
    out[t] = sm[t] + sm[4 * BLOCK - 1 - t];
}

// Two-byte elements, two to a 4-byte word of the detector: threads t and t + 1 write halves of one
// word, which is no race (bytes race, not words); `shift` 1 reads the neighbour's half, a race.
__global__ void halves(const short* x, int* out, int shift) {
    __shared__ short h[2 * BLOCK];
    const int t = threadIdx.x;
    h[t] = x[t];
    h[t + BLOCK] = 0;
    __syncthreads();
    for (int s = BLOCK / 2; s > 0; s >>= 1) {
        if (t < s) { const short v = h[t + s * (1 - shift) + shift]; h[t] += v; }  // PLANT: half level
        __syncthreads();
    }
    out[t] = h[t];
}

// An unsigned subscript that wraps: (unsigned)t + 0xffffffff is t - 1 for t > 0, the element the
// thread below writes; exact in 64 bits it would lie far apart from every write.
__global__ void wraps(const int* x, int* out, unsigned back) {
    __shared__ int sm[BLOCK];
    const int t = threadIdx.x;
    sm[t] = x[t];
    __syncthreads();
    if (t > 0) { const int v = sm[t + back]; sm[t] += v; }  // PLANT: wrapped read
    __syncthreads();
    out[t] = sm[t];
}

// One warp's threads store one value to one element (a warning, not a hazard), or two warps' do
// (a race).
__global__ void same_value(int* out, int s) {
    __shared__ int sm[BLOCK];
    const int t = threadIdx.x;
    sm[t] = t;
    __syncthreads();
    if (t < s) sm[0] = 7;  // PLANT: same value
    __syncthreads();
    out[t] = sm[t];
}

static int* c;
static int hc[BLOCK];

// Prints what the last launch left (its error, two elements and a weighted sum of all of them).
static void report(const char* what) {
    const cudaError_t err = cudaDeviceSynchronize();
    cudaMemcpy(hc, c, sizeof hc, cudaMemcpyDeviceToHost);
    long long total = 0;
    for (int i = 0; i < BLOCK; ++i) total += (long long)hc[i] * (i % 11 + 1);
    std::printf("%s %s %d %d %lld\n", what, cudaGetErrorName(err), hc[0], hc[1], total);
    cudaMemset(c, 0, sizeof hc);
}

int main(int argc, char** argv) {
    const char* what = argc > 1 ? argv[1] : "tree";
    int ha[2 * BLOCK];
    short hs[BLOCK];
    for (int i = 0; i < 2 * BLOCK; ++i) ha[i] = i % 13 - 6 + i / 64;
    for (int i = 0; i < BLOCK; ++i) hs[i] = (short)(i % 5 - 2);
    int* a;
    short* as;
    cudaMalloc(&a, sizeof ha);
    cudaMalloc(&as, sizeof hs);
    cudaMalloc(&c, sizeof hc);
    cudaMemcpy(a, ha, sizeof ha, cudaMemcpyHostToDevice);
    cudaMemcpy(as, hs, sizeof hs, cudaMemcpyHostToDevice);
    cudaMemset(c, 0, sizeof hc);
    if (std::strcmp(what, "tree") == 0) {
        tree<<<2, BLOCK>>>(a, c);
        report("tree");
    } else if (std::strcmp(what, "tree_rows") == 0) {
        tree<<<1, dim3(BLOCK / 2, 2)>>>(a, c);  // rows (x, 0) and (x, 1) share every element
        report("tree_rows");
    } else if (std::strcmp(what, "bound_off") == 0) {
        bound_off<<<1, BLOCK>>>(a, c);
        report("bound_off");
    } else if (std::strcmp(what, "read_low") == 0) {
        read_low<<<1, BLOCK>>>(a, c);
        report("read_low");
    } else if (std::strcmp(what, "strided") == 0) {
        strided<<<1, BLOCK>>>(a, c, 1, 0);
        report("strided 1");
        strided<<<1, BLOCK>>>(a, c, 2, 0);
        report("strided 2");
        strided<<<1, BLOCK>>>(a, c, -1, 4 * BLOCK - 1);
        report("strided -1");
    } else if (std::strcmp(what, "strided_zero") == 0) {
        strided<<<1, BLOCK>>>(a, c, 0, 5);
        report("strided 0");
    } else if (std::strcmp(what, "halves") == 0) {
        halves<<<1, BLOCK>>>(as, c, 0);
        report("halves");
    } else if (std::strcmp(what, "halves_shifted") == 0) {
        halves<<<1, BLOCK>>>(as, c, 1);
        report("halves shifted");
    } else if (std::strcmp(what, "wraps") == 0) {
        wraps<<<1, BLOCK>>>(a, c, 0xffffffffu);
        report("wraps");
    } else if (std::strcmp(what, "same_value_warp") == 0) {
        same_value<<<1, BLOCK>>>(c, 32);
        report("same value, one warp");
    } else if (std::strcmp(what, "same_value_warps") == 0) {
        same_value<<<1, BLOCK>>>(c, 64);
        report("same value, two warps");
    }
    cudaFree(a);
    cudaFree(as);
    cudaFree(c);
    return 0;
}
