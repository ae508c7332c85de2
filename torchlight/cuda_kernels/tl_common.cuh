// Shared pieces of the torchlight CUDA C kernels: block reductions built from warp
// shuffles, the launcher error codes, and the host-side buffer bookkeeping that lets every
// launcher free what it allocated and return a code instead of exiting or throwing.
//
// Reductions assume blockDim.x is a multiple of 32 (every warp full, so full shuffle masks
// are valid) and at most 1024 (at most 32 warps). Every thread of the block must call them.
//
// Launcher return codes: 0 on success; a cudaError_t value (1..999, see driver_types.h)
// when a CUDA call fails; or one of the TL_ERR_* values below (20001..20099) when the
// arguments are refused before any CUDA call is made.
//
// Error hygiene: the CUDA runtime keeps a per-thread "last error" that a failed call sets and
// only cudaGetLastError clears. A launcher therefore (1) clears a pending error at entry
// (tl_begin), so an error left by an earlier call is never reported by this one's launch
// check; (2) checks every CUDA call and stops at the first failure, returning that code;
// (3) frees every buffer on every exit path; (4) clears the pending error again before it
// returns (tl_finish), so a failed call leaves nothing behind for the next caller.
// A sticky error (a kernel fault: cudaErrorIllegalAddress, cudaErrorLaunchFailure, ...)
// cannot be cleared: the context is unusable until the process exits, and every launcher
// returns that code at entry without touching the device.
#ifndef TORCHLIGHT_TL_COMMON_CUH
#define TORCHLIGHT_TL_COMMON_CUH

#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

// 2: tl_attn_softmax_fw_strided (a mask broadcast to [batch, heads, q_len, k_len] by strides).
#define TL_ABI_VERSION 2

// Launchers are the only exported symbols: the build hides everything else (-fvisibility=hidden).
#define TL_EXPORT extern "C" __attribute__((visibility("default")))

#define TL_ERR_NEGATIVE_SIZE 20001  // a size argument was < 0
#define TL_ERR_NULL_POINTER 20002   // a required pointer was NULL while its size was > 0
#define TL_ERR_SIZE_OVERFLOW 20003  // element or byte count does not fit in int64 / size_t
#define TL_ERR_BAD_ARGUMENT 20004   // a non-size argument is invalid (eps <= 0, empty row)

#define TL_FULL_MASK 0xffffffffu
#define TL_MAX_BLOCK 256
// A test build may define a smaller cap (e.g. -DTL_MAX_GRID=2, or #define before including the
// kernels), so that every grid-stride loop wraps at shapes small enough for a simulator.
#ifndef TL_MAX_GRID
#define TL_MAX_GRID 4096
#endif

// Row-per-block kernels: enough threads to cover a short row once, capped for long rows
// (those loop over the row in strides of blockDim.x).
static inline int tl_row_block(int64_t len) {
    int64_t threads = ((len + 31) / 32) * 32;
    if (threads < 32) threads = 32;
    if (threads > TL_MAX_BLOCK) threads = TL_MAX_BLOCK;
    return (int)threads;
}

// Blocks grid-stride over work items, so a grid never needs more than TL_MAX_GRID blocks.
static inline unsigned int tl_grid(int64_t items) {
    return (unsigned int)(items < TL_MAX_GRID ? items : TL_MAX_GRID);
}

// a * b with an overflow check against INT64_MAX (both operands are >= 0).
static inline int tl_mul(int64_t a, int64_t b, int64_t* out) {
    if (a != 0 && b > INT64_MAX / a) return TL_ERR_SIZE_OVERFLOW;
    *out = a * b;
    return 0;
}

// Element count to byte count; refuses counts whose byte size overflows.
static inline int tl_bytes(int64_t count, size_t* out) {
    if (count > (int64_t)(SIZE_MAX / sizeof(float)) || count > INT64_MAX / (int64_t)sizeof(float)) {
        return TL_ERR_SIZE_OVERFLOW;
    }
    *out = (size_t)count * sizeof(float);
    return 0;
}

// ---- device side --------------------------------------------------------------------------

static __device__ __forceinline__ float tl_warp_sum(float v) {
    for (int offset = 16; offset > 0; offset >>= 1) {
        v += __shfl_xor_sync(TL_FULL_MASK, v, offset);
    }
    return v;
}

// Sum of ``a`` and of ``b`` over the block, returned to every thread. ``scratch`` holds at
// least 2 * (32 + 1) floats of shared memory. Two barriers suffice for back-to-back calls:
// the broadcast slots are only rewritten after the next call's first barrier, which every
// thread reaches after reading them.
static __device__ __forceinline__ void tl_block_sum2(float* a, float* b, float* scratch) {
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    const int nwarps = blockDim.x >> 5;
    float va = tl_warp_sum(*a);
    float vb = tl_warp_sum(*b);
    if (lane == 0) {
        scratch[warp] = va;
        scratch[33 + warp] = vb;
    }
    __syncthreads();
    if (warp == 0) {
        va = lane < nwarps ? scratch[lane] : 0.0f;
        vb = lane < nwarps ? scratch[33 + lane] : 0.0f;
        va = tl_warp_sum(va);
        vb = tl_warp_sum(vb);
        if (lane == 0) {
            scratch[32] = va;
            scratch[65] = vb;
        }
    }
    __syncthreads();
    *a = scratch[32];
    *b = scratch[65];
}

static __device__ __forceinline__ float tl_block_sum(float v, float* scratch) {
    float unused = 0.0f;
    tl_block_sum2(&v, &unused, scratch);
    return v;
}

// Shared floats the block reductions need (the launch passes this as the dynamic size).
#define TL_REDUCE_SMEM_FLOATS 66

// ---- host side: device buffers freed on every exit path ------------------------------------

#define TL_MAX_BUFFERS 12

typedef struct {
    void* ptr[TL_MAX_BUFFERS];
    int count;
} tl_buffers;

static inline void tl_buffers_init(tl_buffers* bufs) {
    bufs->count = 0;
    for (int i = 0; i < TL_MAX_BUFFERS; ++i) bufs->ptr[i] = NULL;
}

// Frees every buffer; returns the first cudaFree failure (0 when all succeeded).
static inline int tl_buffers_release(tl_buffers* bufs) {
    int first = 0;
    for (int i = 0; i < bufs->count; ++i) {
        cudaError_t err = cudaFree(bufs->ptr[i]);
        if (err != cudaSuccess && first == 0) first = (int)err;
        bufs->ptr[i] = NULL;
    }
    bufs->count = 0;
    return first;
}

// First thing a launcher does once its arguments are accepted: read (and so clear) an error
// an earlier call left pending. A non-sticky error is gone after the read and 0 is returned;
// a sticky one is still pending after it, and is returned so the launcher stops at once.
static inline int tl_begin(void) {
    (void)cudaGetLastError();
    return (int)cudaPeekAtLastError();
}

// Every exit of a launcher after tl_begin: free the buffers, clear the error this call may
// have left pending, and return ``first`` (the first failure of the call) or, when the call
// succeeded, the first cudaFree failure.
static inline int tl_finish(tl_buffers* bufs, int first) {
    const int released = tl_buffers_release(bufs);
    (void)cudaGetLastError();
    return first != 0 ? first : released;
}

// On a failed CUDA call: free what was allocated (a failure while freeing is dropped, the
// original error is the one worth reporting) and return the failing call's code.
#define TL_CHECK(bufs, call)                            \
    do {                                                \
        cudaError_t tl_err_ = (call);                   \
        if (tl_err_ != cudaSuccess) {                   \
            return tl_finish((bufs), (int)tl_err_);     \
        }                                               \
    } while (0)

// cudaMalloc of ``bytes`` recorded in ``bufs`` so TL_CHECK and the final release free it.
static inline cudaError_t tl_alloc(tl_buffers* bufs, float** out, size_t bytes) {
    if (bufs->count >= TL_MAX_BUFFERS) return cudaErrorInvalidValue;  // a launcher bug, not a CUDA one
    void* p = NULL;
    cudaError_t err = cudaMalloc(&p, bytes == 0 ? sizeof(float) : bytes);
    if (err != cudaSuccess) return err;
    bufs->ptr[bufs->count++] = p;
    *out = (float*)p;
    return cudaSuccess;
}

static inline cudaError_t tl_upload(tl_buffers* bufs, float** dev, const float* host, size_t bytes) {
    cudaError_t err = tl_alloc(bufs, dev, bytes);
    if (err != cudaSuccess) return err;
    return cudaMemcpy(*dev, host, bytes, cudaMemcpyHostToDevice);
}

#endif  // TORCHLIGHT_TL_COMMON_CUH
