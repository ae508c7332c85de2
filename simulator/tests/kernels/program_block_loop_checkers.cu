// Kernels with block-uniform barriers, one case per argv[1], for memcheck and the shared-memory
// racecheck: those whose block loops make the same accesses in the same order as fibers run as
// loops there too, and find the same (test_block_loop_checkers.py compares with
// SIMULATOR_FIBERS=1); "split" has two regions that touch memory between the same barriers, so
// the checkers keep its fibers.
#include <cstdio>
#include <cstring>

// Four threads store to the four bytes of each word, a barrier, then read another thread's byte:
// no hazard.
__global__ void bytes_apart(int* out) {
    __shared__ unsigned char s[64];
    const int t = threadIdx.x;
    s[t] = (unsigned char)t;
    __syncthreads();
    out[t] = s[t ^ 1];
}

// After a barrier, each thread stores its byte and reads its neighbour's in the same word with no
// barrier between.
__global__ void bytes_race(int* out) {
    __shared__ unsigned char s[64];
    const int t = threadIdx.x;
    s[t] = 0;
    __syncthreads();
    s[t] = (unsigned char)t;
    out[t] = s[t ^ 1];  // PLANT-BYTE-RACE
}

// Every thread reads word 0 (threads of several warps: the reads of a word the detector then
// drops unjudged), and thread 62, the last to run after the barrier (fibers resume with thread
// 63, the one that released it), also stores one byte of it.
__global__ void read_then_byte_store(int* out) {
    __shared__ unsigned int w[8];
    const int t = threadIdx.x;
    if (t < 8) w[t] = 0x01020304u;
    __syncthreads();
    const unsigned int v = w[0];  // PLANT-MANY-READS
    if (t == 62) reinterpret_cast<unsigned char*>(w)[2] = 7;  // PLANT-BYTE-STORE
    __syncthreads();
    out[t] = (int)v;
}

// The lanes of one warp store to the same word in one statement: the same value is a warning
// only, different values a hazard.
__global__ void warp_stores(int* out, int differ) {
    __shared__ int s[2];
    const int t = threadIdx.x;
    if (t == 0) s[1] = 0;
    __syncthreads();
    s[0] = differ ? t : 5;  // PLANT-WARP-STORE
    __syncthreads();
    out[t] = s[0] + s[1];
}

// Stores, a barrier, loads of other threads' words: no hazard.
__global__ void across_barrier(int* out) {
    __shared__ int s[64];
    const int t = threadIdx.x;
    s[t] = t;
    __syncthreads();
    out[t] = s[63 - t];
}

// A shared array read just past its end by thread 9, in a kernel that runs as block loops.
__global__ void shared_past_end(int* out, int extra) {
    __shared__ int s[64];
    const int t = threadIdx.x;
    s[t] = t;
    __syncthreads();
    out[t] = s[t + (t == 9 ? extra : 0)];  // PLANT-SHARED-OOB
}

// A store before a loop with a barrier and a load at the top of the loop, between the same two
// barriers (a race): block loops would run every thread's store before any load.
__global__ void split(int* out, int rounds) {
    __shared__ int s[64];
    const int t = threadIdx.x;
    s[t] = t;
    for (int r = 0; r < rounds; ++r) {
        out[t] += s[(t + 1) % 64];  // PLANT-SPLIT
        __syncthreads();
    }
}

// A local array that lives across a barrier: memcheck keeps fibers (one heap block per thread
// would not be a stack frame it bounds the same way).
__global__ void array_slot(int* out) {
    __shared__ int s[64];
    const int t = threadIdx.x;
    int mine[2] = {t, 2 * t};
    s[t] = mine[0];
    __syncthreads();
    out[t] = s[63 - t] + mine[1];
}

// Parameters each thread offsets, as convolutionSeparable offsets its pointers: an int the
// checkers' loops keep in a slot as a local's, a pointer (with which they keep fibers). Thread 9
// reads past the end of the buffer through each when `extra` is 55.
__global__ void offset_index(const int* in, int* out, int at, int extra) {
    __shared__ int s[64];
    at += threadIdx.x + (threadIdx.x == 9 ? extra : 0);
    s[threadIdx.x] = (int)threadIdx.x;
    __syncthreads();
    out[threadIdx.x] = s[63 - threadIdx.x] + in[at];  // PLANT-PARAM-OOB
}
__global__ void offset_pointer(const int* in, int* out, int extra) {
    __shared__ int s[64];
    in += threadIdx.x + (threadIdx.x == 9 ? extra : 0);
    out += threadIdx.x;
    s[threadIdx.x] = in[0];  // PLANT-POINTER-OOB
    __syncthreads();
    *out = s[63 - threadIdx.x];
}

// The shared word each thread stores picked by its own offset parameter: its own word, or (share)
// the one its neighbour in the warp stores too, a different value.
__global__ void offset_store(int* out, int at, int share) {
    __shared__ int s[64];
    s[threadIdx.x] = 0;
    __syncthreads();
    at += share ? threadIdx.x / 2 : threadIdx.x;
    s[at] = (int)threadIdx.x;  // PLANT-PARAM-STORE
    __syncthreads();
    out[threadIdx.x] = s[threadIdx.x];
}

int main(int argc, char** argv) {
    const char* what = argc > 1 ? argv[1] : "across";
    int* d = nullptr;
    cudaMalloc(&d, 64 * sizeof(int));
    cudaMemset(d, 0, 64 * sizeof(int));
    if (std::strcmp(what, "bytes_apart") == 0) bytes_apart<<<2, 64>>>(d);
    if (std::strcmp(what, "bytes_race") == 0) bytes_race<<<2, 64>>>(d);
    if (std::strcmp(what, "read_then_byte_store") == 0) read_then_byte_store<<<2, 64>>>(d);
    if (std::strcmp(what, "same_value") == 0) warp_stores<<<1, 32>>>(d, 0);
    if (std::strcmp(what, "different_values") == 0) warp_stores<<<1, 32>>>(d, 1);
    if (std::strcmp(what, "across") == 0) across_barrier<<<2, 64>>>(d);
    if (std::strcmp(what, "shared_oob") == 0) shared_past_end<<<2, 64>>>(d, 55);
    if (std::strcmp(what, "split") == 0) split<<<1, 64>>>(d, 2);
    if (std::strcmp(what, "array_slot") == 0) array_slot<<<1, 64>>>(d);
    if (std::strcmp(what, "param_in_bounds") == 0) offset_index<<<2, 64>>>(d, d, 0, 0);
    if (std::strcmp(what, "param_oob") == 0) offset_index<<<2, 64>>>(d, d, 0, 55);
    if (std::strcmp(what, "pointer_in_bounds") == 0) offset_pointer<<<2, 64>>>(d, d, 0);
    if (std::strcmp(what, "pointer_oob") == 0) offset_pointer<<<2, 64>>>(d, d, 55);
    if (std::strcmp(what, "param_apart") == 0) offset_store<<<2, 64>>>(d, 0, 0);
    if (std::strcmp(what, "param_shared") == 0) offset_store<<<2, 64>>>(d, 0, 1);
    const cudaError_t err = cudaDeviceSynchronize();
    // Zeroed: after a launch that faulted (memcheck goes on, as compute-sanitizer does) the copy
    // returns the sticky error and copies nothing, and the sum must not read uninitialised memory.
    int h[64] = {};
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    long sum = 0;
    for (int i = 0; i < 64; ++i) sum += h[i];
    std::printf("%s: %s sum %ld\n", what, cudaGetErrorName(err), sum);
    cudaFree(d);
    return 0;
}
