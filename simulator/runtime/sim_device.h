// The simulator's device side: what a CUDA thread's code calls into the runtime for (barriers,
// warp operations, shared memory, clocks, faults) and the state the scheduler keeps per thread.
// Shared by the code the build generates (cuda_sim.h includes it before NVIDIA's <cuda_runtime.h>)
// and the runtime's own sources (sim_internal.h); the CUDA names device code calls are defined on
// top of it in sim_intrinsics.h.
#ifndef CUDA_CPU_SIMULATOR_DEVICE_H
#define CUDA_CPU_SIMULATOR_DEVICE_H

#include <climits>
#include <cstddef>
#include <cstring>
#include <ctime>
#include <type_traits>

#include <builtin_types.h>  // only types: NVIDIA's inline functions come after this header (cuda_sim.h)

// The runtime's own sources (compiled with SIM_RUNTIME_BUILD) define its internals hidden: they
// stay inside the program or library that links it. Code the build compiles (a program's, a
// module's) refers to them with default visibility, which binds as a hidden reference does (the
// same code: calls and thread-locals are resolved when the program is linked) but leaves the
// symbols of the runtime's exported copy exported: a driver-API module (nvcc -fatbin/-cubin,
// loaded by cuModuleLoad*) binds to the loading program's runtime (program_link.py,
// toolkit_exports.py), and a hidden reference would hide them, so that the linker would refuse the
// toolkit's libcuda.so's references to them.
#ifdef SIM_RUNTIME_BUILD
#define SIM_API __attribute__((visibility("hidden")))
#else
#define SIM_API __attribute__((visibility("default")))
#endif

// ---- device-side state -------------------------------------------------------------------
namespace __sim {

// Each fiber's own built-in values; the scheduler points tl_thread at the running one's and copies
// them into threadIdx, blockIdx, blockDim and gridDim, the thread-local objects CUDA's names
// denote here (kernel code sees NVIDIA's declarations of them, made thread-local by cuda_sim.h).
// A barrier-free block's plain loop sets threadIdx itself, thread after thread.
struct ThreadState {
    uint3 thread_idx;
    uint3 block_idx;
    dim3 block_dim;
    dim3 grid_dim;
};
extern __thread ThreadState* tl_thread SIM_API;

// The objects behind CUDA's threadIdx, blockIdx, blockDim and gridDim (thread-local: the values
// of the CUDA thread the OS thread runs), under the runtime's own names: kernel code reads them
// through NVIDIA's declarations, which cuda_sim.h makes thread-local (scheduler.cpp defines them).
extern __thread uint3 tls_thread_idx __asm__("threadIdx") SIM_API;
extern __thread uint3 tls_block_idx __asm__("blockIdx") SIM_API;
extern __thread dim3 tls_block_dim __asm__("blockDim") SIM_API;
extern __thread dim3 tls_grid_dim __asm__("gridDim") SIM_API;

// Makes ``t`` (a fiber's state, or null outside a kernel) the running CUDA thread of this OS thread.
static inline void enter_thread(ThreadState* t) {
    tl_thread = t;
    if (t != nullptr) {
        tls_thread_idx = t->thread_idx;
        tls_block_idx = t->block_idx;
        tls_block_dim = t->block_dim;
        tls_grid_dim = t->grid_dim;
    }
}

// The calling CUDA thread's linear index in its block (x fastest, as on a GPU).
static inline unsigned int block_rank() {
    const uint3 t = tls_thread_idx;
    const dim3 d = tls_block_dim;
    return t.x + d.x * (t.y + d.y * t.z);
}

// Where the running CUDA thread calls a barrier, a warp operation or another intrinsic that
// reports its call site: the front end puts `((void)::__sim::call_site("file", line), CALL)` around
// each such call in the program's own code; the intrinsic takes the site (and clears it). A call
// from a library's code (CUB, NVIDIA's own headers) has none.
struct Site {
    const char* file;
    int line;
};
// Out of line (scheduler.cpp): a CUDA thread's fiber may resume on another worker thread, and
// an inlined access could reuse the thread-local address of the worker it started on.
SIM_API int call_site(const char* file, int line);
SIM_API Site take_site();

enum WarpKind {
    kShflIdx = 0,
    kShflUp = 1,
    kShflDown = 2,
    kShflXor = 3,
    kBallot = 4,
    kAny = 5,
    kAll = 6,
    kSyncWarp = 7,
    // __match_*_sync and __reduce_*_sync: each lane's value goes in, the combined result comes out.
    kMatchAny = 8,
    kMatchAll = 9,  // result: the mask in the low 32 bits, the predicate in bit 32
    kReduceAdd = 10,
    kReduceMin = 11,  // param 1: the values are signed
    kReduceMax = 12,
    kReduceAnd = 13,
    kReduceOr = 14,
    kReduceXor = 15,
};

// The lane whose value lane ``l`` of a shuffle of ``kind`` (kShflIdx..kShflXor) reads: with
// ``width`` a power of two up to 32 (else 32), a source outside the lane's segment is ``l``
// itself, as CUDA defines. Fibers (complete_warp) and block loops (block_loops_warps.h) share it.
inline int shuffle_source(int kind, int l, int param, int width) {
    width = (width >= 1 && width <= 32 && (width & (width - 1)) == 0) ? width : 32;
    const int base = l & ~(width - 1);
    switch (kind) {
        case kShflIdx:
            return base + (param & (width - 1));
        case kShflUp:
            return ((l - base) >= param && param >= 0) ? l - param : l;
        case kShflDown:
            return ((l - base) + param < width && param >= 0) ? l + param : l;
        case kShflXor: {
            const int s = l ^ (param & 31);
            return s <= base + width - 1 ? s : l;
        }
        default:
            return l;
    }
}

// One thread's operands of a warp shuffle or vote in a block-loop kernel's exchange
// (block_loops_warps.h): what its call passed in the exchange's first round.
struct WarpOperand {
    unsigned long long value;
    unsigned int mask;
    int param;
    int width;
};
// The worker's exchange, one entry per thread of a block of ``threads`` (warp_exchange.cpp).
SIM_API WarpOperand* warp_exchange_buffer(int threads);

SIM_API void syncthreads(const char* file, int line);
SIM_API int syncthreads_reduce(int kind, int predicate, const char* file, int line);
SIM_API unsigned long long warp_op(int kind, unsigned int mask, unsigned long long value, int param, int width,
                                   const char* file, int line);
SIM_API unsigned int active_mask();
// __nanosleep: lets the block's other threads run (a spin-wait on them then makes progress).
SIM_API void nanosleep_thread(unsigned int ns, const char* file, int line);
// One more turn of a loop that spins on memory another thread writes (the front end wraps such a
// loop's condition: `while (::__sim::spinning(static_cast<bool>(cond)))`): the other threads of
// the block run before the next look, and a block whose threads only spin may let a block not yet
// started run beside it (resident_blocks.cpp, as a GPU keeps many blocks resident).
SIM_API void spin_wait();
inline bool spinning(bool again) {
    if (__builtin_expect(again, 0)) spin_wait();
    return again;
}
// clock64(): a steady host clock, scaled to the modelled 1.41 GHz SM clock; it runs ahead of the
// host's while a thread spins on it (device_api.cpp).
SIM_API long long clock_cycles();
// The lanes of the caller's warp that reach this call site together (cg::coalesced_threads()).
SIM_API unsigned int coalesced_mask(const char* file, int line);
// Lanes of a warp execute an instruction together on a GPU; here each runs until it waits. Code
// that leans on that lockstep without __syncwarp (a warp-synchronous reduction's
// `s[tid] += s[tid + 16]`) reads another lane's old value there and its new one here. The front
// end routes such a statement through lockstep_assign: every lane computes its value, the lanes
// wait for each other, then store, then wait again, as a converged warp would (fibers only: a
// plain loop has no other lane to wait for).
SIM_API void lockstep_point();
template <class Dst, class Value>
inline void lockstep_assign(Dst&& dst, Value&& value) {
    auto computed = value();
    lockstep_point();
    dst = computed;
    lockstep_point();
}
// cooperative_groups: grid.sync() (a cooperative launch only), whether the running launch is
// cooperative (grid.is_valid()), and the barrier of a tile of 64..1024 threads of a block.
SIM_API void grid_sync(const char* file, int line);
SIM_API bool grid_launch_cooperative();
SIM_API void tile_sync(unsigned int size, const char* file, int line);
// One 8-byte slot per thread of the block (1024), where a big tile's collectives exchange values.
SIM_API unsigned long long* tile_scratch();
// wmma::mma_sync (mma.h): each lane puts its shares of A and B (a_bytes, b_bytes) in its warp's
// buffer and waits like __syncwarp(); returned is the buffer, every lane's share of A in lane
// order, then every lane's share of B. It stays readable until the warp's next-but-one call.
constexpr size_t kWmmaBufferBytes = 2560;  // A and B of the largest shape, m32n8k16, in float
SIM_API const void* wmma_gather(const void* a_share, size_t a_bytes, const void* b_share, size_t b_bytes,
                                const char* file, int line);
// The same exchange in a block-loop kernel: warp w's buffer starts 2 * w * kWmmaBufferBytes in.
SIM_API char* wmma_loop_buffer(const char* file, int line);
SIM_API void* shared_static(const void* site, size_t size, size_t align);
SIM_API void* dynamic_shared();
SIM_API void thread_fence();
// A __global__ function entered outside a launch (called from host code without <<<...>>>).
SIM_API void unconfigured_call(const char* name);
// __trap(): stops the kernel; the launch fails with the sticky cudaErrorLaunchFailure.
[[noreturn]] SIM_API void trap(const char* file, int line);

template <class T>
static inline T shfl(int kind, const char* file, int line, unsigned int mask, T value, int param,
                     int width = 32) {
    static_assert(std::is_trivially_copyable<T>::value && sizeof(T) <= 8,
                  "warp shuffles take a value of at most 8 bytes");
    unsigned long long bits = 0;
    std::memcpy(&bits, &value, sizeof(T));
    bits = warp_op(kind, mask, bits, param, width, file, line);
    T out;
    std::memcpy(&out, &bits, sizeof(T));
    return out;
}

// A cooperative-groups shuffle: CUDA's tile and coalesced-group shfl take any trivially copyable
// value, so one over 8 bytes moves as 8-byte pieces, each a shuffle of the same lanes.
template <class T>
static inline T shfl_value(int kind, const char* file, int line, unsigned int mask, T value, int param,
                           int width = 32) {
    static_assert(std::is_trivially_copyable<T>::value, "a group's shfl takes a trivially copyable value (as in CUDA)");
    if constexpr (sizeof(T) <= 8) {
        return shfl(kind, file, line, mask, value, param, width);
    } else {
        unsigned char bytes[sizeof(T)];
        std::memcpy(bytes, &value, sizeof(T));
        for (size_t at = 0; at < sizeof(T); at += 8) {
            const size_t n = sizeof(T) - at < 8 ? sizeof(T) - at : 8;
            unsigned long long piece = 0;
            std::memcpy(&piece, bytes + at, n);
            piece = warp_op(kind, mask, piece, param, width, file, line);
            std::memcpy(bytes + at, &piece, n);
        }
        T out;
        std::memcpy(&out, bytes, sizeof(T));
        return out;
    }
}

template <class T>
static inline T& shared_var(const void* site) {
    return *static_cast<T*>(shared_static(site, sizeof(T), alignof(T)));
}

}  // namespace __sim


namespace __sim {
// True while a kernel thread runs on this OS thread: a __host__ __device__ function whose body
// differs under __CUDA_ARCH__ takes its device body then.
static inline bool on_device() { return tl_thread != nullptr; }
// Device code's clock() (the front end rewrites its calls to this): the GPU's 32-bit %clock,
// i.e. the low 32 bits of the modelled SM clock that clock64() reads, sign-extended to clock_t.
// Host code (a __host__ __device__ function run on the host) keeps the C library's clock().
static inline clock_t device_clock() {
    return on_device() ? (clock_t)(int)(unsigned int)clock_cycles() : ::clock();
}

// Shifts in device code, as PTX does them: the count is read as unsigned and a count of the
// operand's bit width or more gives 0 (or the sign for a signed right shift), where x86 masks
// the count. The result type is C++'s (the promoted left operand).
template <class A, class B>
constexpr auto shl(A a, B b) -> decltype(a << b) {
    using R = decltype(a << b);
    if constexpr (std::is_integral<R>::value && std::is_integral<decltype(+b)>::value) {
        using U = std::make_unsigned_t<R>;
        const unsigned long long n = static_cast<std::make_unsigned_t<decltype(+b)>>(+b);
        if (n >= sizeof(R) * CHAR_BIT) return R(0);
        return static_cast<R>(static_cast<U>(static_cast<R>(a)) << n);
    } else {
        return a << b;
    }
}
template <class A, class B>
constexpr auto shr(A a, B b) -> decltype(a >> b) {
    using R = decltype(a >> b);
    if constexpr (std::is_integral<R>::value && std::is_integral<decltype(+b)>::value) {
        const unsigned long long n = static_cast<std::make_unsigned_t<decltype(+b)>>(+b);
        if (n >= sizeof(R) * CHAR_BIT) return (std::is_signed<R>::value && static_cast<R>(a) < 0) ? R(-1) : R(0);
        return static_cast<R>(static_cast<R>(a) >> n);
    } else {
        return a >> b;
    }
}
template <class A, class B>
constexpr A& shl_assign(A& a, B b) {
    a = static_cast<A>(shl(a, b));
    return a;
}
template <class A, class B>
constexpr A& shr_assign(A& a, B b) {
    a = static_cast<A>(shr(a, b));
    return a;
}
}  // namespace __sim


#endif  // CUDA_CPU_SIMULATOR_DEVICE_H
