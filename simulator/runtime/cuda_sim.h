// Runtime header of the CPU simulator: the CUDA device API that the simulator's build
// force-includes into every translated .cu source, with the host API from host_api.h (every
// cuda* call and host type is declared there). Each CUDA thread runs as a fiber;
// everything that needs scheduler state (barriers, shuffles, votes, shared memory, the
// cuda* memory calls) lives in the runtime's .cpp files (see sim_internal.h), compiled once per
// mode.
#ifndef CUDA_CPU_SIMULATOR_H
#define CUDA_CPU_SIMULATOR_H

// The C and C++ headers NVIDIA's <cuda_runtime.h> brings into every .cu (nvcc force-includes
// it), so programs that call time(), memcpy() or placement new without including them build.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <new>

#include <cfloat>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <tuple>
#include <type_traits>
#include <utility>

#define CUDA_CPU_SIMULATOR 1
// With NVIDIA's CCCL on the include path (the build adds it, with SIM_WITH_CCCL, only for a
// program that includes a Thrust/CUB header), CCCL reads its configuration here, before
// __CUDACC__ is defined and with __CUDA_ARCH__ hidden: it then sees the host compiler it runs
// on (g++, no CUDA compiler), so Thrust's host back ends compile as plain C++.
#ifdef SIM_WITH_CCCL
#pragma push_macro("__CUDA_ARCH__")
#undef __CUDA_ARCH__
#include <cuda/std/__cccl/compiler.h>
#pragma pop_macro("__CUDA_ARCH__")
#endif
#ifndef __CUDACC__
#define __CUDACC__ 1
#endif
#define CUDART_VERSION 12000

#define SIM_API __attribute__((visibility("hidden")))

// ---- qualifiers ----------------------------------------------------------------------------
// The build preprocesses every .cu source with SIM_FRONTEND defined: the qualifiers then reach
// the front end (simulator/transform.py) as clang's CUDA attributes, and it removes them from
// the C++ that g++ compiles. Without SIM_FRONTEND (the runtime's own sources, host .cpp files)
// they are empty, as for a host compiler.
#ifdef SIM_FRONTEND
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __host__ __attribute__((host))
#define __constant__ __attribute__((constant))
#define __managed__ __attribute__((managed))
#else
#define __global__
#define __device__
#define __host__
#define __constant__
#define __managed__
#endif
#define __grid_constant__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))
#define __builtin_align__(n) __attribute__((aligned(n)))
// The front end rewrites every function-scope __shared__ variable into per-block storage; one at
// file scope stays per-OS-thread storage (per block, as one worker runs one block at a time).
#ifdef SIM_FRONTEND
#define __shared__ __attribute__((shared))
#else
#define __shared__ static thread_local
#endif

// ---- vector types ------------------------------------------------------------------------------
struct uint3 {
    unsigned int x, y, z;
};
struct dim3 {
    unsigned int x, y, z;
    constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1) : x(vx), y(vy), z(vz) {}
    constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
    constexpr operator uint3() const { return uint3{x, y, z}; }
};

#define SIM_VEC1(T, N, A)                                                           \
    struct __attribute__((aligned(A))) N##1 {                                       \
        T x;                                                                        \
    };                                                                              \
    static inline N##1 make_##N##1(T x) { return N##1{x}; }
#define SIM_VEC2(T, N, A)                                                           \
    struct __attribute__((aligned(A))) N##2 {                                          \
        T x, y;                                                                     \
    };                                                                              \
    static inline N##2 make_##N##2(T x, T y) { return N##2{x, y}; }
#define SIM_VEC3(T, N)                                                              \
    struct N##3 {                                                                   \
        T x, y, z;                                                                  \
    };                                                                              \
    static inline N##3 make_##N##3(T x, T y, T z) { return N##3{x, y, z}; }
#define SIM_VEC4(T, N, A)                                                           \
    struct __attribute__((aligned(A))) N##4 {                                          \
        T x, y, z, w;                                                               \
    };                                                                              \
    static inline N##4 make_##N##4(T x, T y, T z, T w) { return N##4{x, y, z, w}; }
// CUDA's vector types with their sizes and alignments (uint3 is defined above).
#define SIM_VEC_ALL(T, N, A1, A2, A4) SIM_VEC1(T, N, A1) SIM_VEC2(T, N, A2) SIM_VEC3(T, N) SIM_VEC4(T, N, A4)
SIM_VEC_ALL(signed char, char, 1, 2, 4)
SIM_VEC_ALL(unsigned char, uchar, 1, 2, 4)
SIM_VEC_ALL(short, short, 2, 4, 8)
SIM_VEC_ALL(unsigned short, ushort, 2, 4, 8)
SIM_VEC_ALL(int, int, 4, 8, 16)
SIM_VEC_ALL(long, long, sizeof(long), 2 * sizeof(long), 2 * sizeof(long))
SIM_VEC_ALL(unsigned long, ulong, sizeof(long), 2 * sizeof(long), 2 * sizeof(long))
SIM_VEC_ALL(float, float, 4, 8, 16)
SIM_VEC_ALL(long long, longlong, 8, 16, 16)
SIM_VEC_ALL(unsigned long long, ulonglong, 8, 16, 16)
SIM_VEC_ALL(double, double, 8, 16, 16)
SIM_VEC1(unsigned int, uint, 4)
SIM_VEC2(unsigned int, uint, 8)
SIM_VEC4(unsigned int, uint, 16)
static inline uint3 make_uint3(unsigned int x, unsigned int y, unsigned int z) { return uint3{x, y, z}; }
#undef SIM_VEC_ALL
#undef SIM_VEC1
#undef SIM_VEC2
#undef SIM_VEC3
#undef SIM_VEC4

// ---- host API ----------------------------------------------------------------------------
// Every cuda* call and host type (host_api.h; launches, events, devices, graphs, textures).
#include "host_api.h"  // (with sim_textures.h)

// ---- device-side state -------------------------------------------------------------------
namespace sim {

// What a CUDA thread sees; the scheduler points tl_thread at the running fiber's copy.
struct ThreadState {
    uint3 thread_idx;
    uint3 block_idx;
    dim3 block_dim;
    dim3 grid_dim;
};
extern __thread ThreadState* tl_thread SIM_API;

// The calling CUDA thread's linear index in its block (x fastest, as on a GPU).
static inline unsigned int block_rank() {
    const ThreadState& t = *tl_thread;
    return t.thread_idx.x + t.block_dim.x * (t.thread_idx.y + t.block_dim.y * t.thread_idx.z);
}

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

SIM_API void syncthreads(const char* file, int line);
SIM_API int syncthreads_reduce(int kind, int predicate, const char* file, int line);
SIM_API unsigned long long warp_op(int kind, unsigned int mask, unsigned long long value, int param, int width,
                                   const char* file, int line);
SIM_API unsigned int active_mask();
// __nanosleep: lets the block's other threads run (a spin-wait on them then makes progress).
SIM_API void nanosleep_thread(unsigned int ns, const char* file, int line);
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

}  // namespace sim


// The device built-in variables, declared as nvcc declares them: the front end rewrites each
// device-code use into a read of the running thread's state and refuses host-code uses, while
// host code's own variables and members with these names (prop.warpSize) stay what they are.
#ifdef SIM_FRONTEND
extern const uint3 threadIdx;
extern const uint3 blockIdx;
extern const dim3 blockDim;
extern const dim3 gridDim;
extern const int warpSize;
#endif

namespace sim {
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
}  // namespace sim

// ---- synchronisation, shuffles, votes ------------------------------------------------------
#define __syncthreads() ::sim::syncthreads(__FILE__, __LINE__)
#define __syncthreads_count(p) ::sim::syncthreads_reduce(0, (p) ? 1 : 0, __FILE__, __LINE__)
#define __syncthreads_and(p) ::sim::syncthreads_reduce(1, (p) ? 1 : 0, __FILE__, __LINE__)
#define __syncthreads_or(p) ::sim::syncthreads_reduce(2, (p) ? 1 : 0, __FILE__, __LINE__)
#define __syncwarp(...) ::sim::syncwarp_at(__FILE__, __LINE__, ##__VA_ARGS__)
#define __shfl_sync(...) ::sim::shfl(::sim::kShflIdx, __FILE__, __LINE__, __VA_ARGS__)
#define __shfl_up_sync(...) ::sim::shfl(::sim::kShflUp, __FILE__, __LINE__, __VA_ARGS__)
#define __shfl_down_sync(...) ::sim::shfl(::sim::kShflDown, __FILE__, __LINE__, __VA_ARGS__)
#define __shfl_xor_sync(...) ::sim::shfl(::sim::kShflXor, __FILE__, __LINE__, __VA_ARGS__)
#define __ballot_sync(mask, p) \
    ((unsigned int)::sim::warp_op(::sim::kBallot, (mask), (p) ? 1 : 0, 0, 32, __FILE__, __LINE__))
#define __any_sync(mask, p) ((int)::sim::warp_op(::sim::kAny, (mask), (p) ? 1 : 0, 0, 32, __FILE__, __LINE__))
#define __all_sync(mask, p) ((int)::sim::warp_op(::sim::kAll, (mask), (p) ? 1 : 0, 0, 32, __FILE__, __LINE__))
#define __activemask() ::sim::active_mask()
#define __match_any_sync(mask, v) ::sim::match_any((mask), (v), __FILE__, __LINE__)
#define __match_all_sync(mask, v, pred) ::sim::match_all((mask), (v), (pred), __FILE__, __LINE__)
#define __reduce_add_sync(mask, v) ::sim::warp_reduce(::sim::kReduceAdd, (mask), (v), __FILE__, __LINE__)
#define __reduce_min_sync(mask, v) ::sim::warp_reduce(::sim::kReduceMin, (mask), (v), __FILE__, __LINE__)
#define __reduce_max_sync(mask, v) ::sim::warp_reduce(::sim::kReduceMax, (mask), (v), __FILE__, __LINE__)
#define __reduce_and_sync(mask, v) ::sim::warp_reduce(::sim::kReduceAnd, (mask), (v), __FILE__, __LINE__)
#define __reduce_or_sync(mask, v) ::sim::warp_reduce(::sim::kReduceOr, (mask), (v), __FILE__, __LINE__)
#define __reduce_xor_sync(mask, v) ::sim::warp_reduce(::sim::kReduceXor, (mask), (v), __FILE__, __LINE__)
#define __nanosleep(ns) ::sim::nanosleep_thread((ns), __FILE__, __LINE__)
#define clock64() ::sim::clock_cycles()
#define __trap() ::sim::trap(__FILE__, __LINE__)
#define __threadfence() ::sim::thread_fence()
#define __threadfence_block() ::sim::thread_fence()
#define __threadfence_system() ::sim::thread_fence()

namespace sim {
// __match_any_sync/__match_all_sync take 32- and 64-bit integers and floats by their bits.
template <class T>
static inline unsigned int match_any(unsigned int mask, T value, const char* file, int line) {
    static_assert(std::is_arithmetic<T>::value && (sizeof(T) == 4 || sizeof(T) == 8),
                  "__match_any_sync takes a 32- or 64-bit int, unsigned or floating-point value");
    unsigned long long bits = 0;
    std::memcpy(&bits, &value, sizeof(T));
    return (unsigned int)warp_op(kMatchAny, mask, bits, 0, 32, file, line);
}
template <class T>
static inline unsigned int match_all(unsigned int mask, T value, int* pred, const char* file, int line) {
    static_assert(std::is_arithmetic<T>::value && (sizeof(T) == 4 || sizeof(T) == 8),
                  "__match_all_sync takes a 32- or 64-bit int, unsigned or floating-point value");
    unsigned long long bits = 0;
    std::memcpy(&bits, &value, sizeof(T));
    const unsigned long long r = warp_op(kMatchAll, mask, bits, 0, 32, file, line);
    *pred = (int)(r >> 32);
    return (unsigned int)r;
}
// __reduce_*_sync: add/min/max take int or unsigned (as on sm_80); and/or/xor take unsigned.
static inline unsigned int warp_reduce(int kind, unsigned int mask, unsigned int value, const char* file, int line) {
    return (unsigned int)warp_op(kind, mask, value, 0, 32, file, line);
}
static inline int warp_reduce(int kind, unsigned int mask, int value, const char* file, int line) {
    return (int)(unsigned int)warp_op(kind, mask, (unsigned int)value, 1, 32, file, line);
}
static inline void syncwarp_at(const char* file, int line, unsigned int mask = 0xffffffffu) {
    (void)warp_op(kSyncWarp, mask, 0, 0, 32, file, line);
}
}  // namespace sim

// ---- atomics (GCC builtins: safe across blocks running on parallel workers) -----------------
// Each body below runs with MO, its memory order. A GPU's atomics are relaxed and programs that
// publish data through one put __threadfence() before it; here they are sequentially consistent,
// except under racecheck, where ThreadSanitizer makes every such atomic a pass over all threads'
// vector clocks (16 M atomicAdds of a histogram took minutes). There an atomic orders memory
// (MO is seq_cst) when its thread called __threadfence() since its last atomic, or when its
// address was used that way before (the other side of the publication, e.g. the last block's
// atomicInc of a threadfence reduction, or the lock after a fenced unlock); else it is relaxed,
// which ThreadSanitizer still sees as an atomic access (never a race with another atomic).
#if defined(__SANITIZE_THREAD__)
#define SIM_WITH_ORDER(p, ...)                                                                             \
    if (::sim::atomic_orders(p)) {                                                                         \
        constexpr int MO = __ATOMIC_SEQ_CST;                                                               \
        __VA_ARGS__                                                                                        \
    } else {                                                                                               \
        constexpr int MO = __ATOMIC_RELAXED;                                                               \
        __VA_ARGS__                                                                                        \
    }
namespace sim {
SIM_API bool atomic_orders(const void* p);
}
#else
#define SIM_WITH_ORDER(p, ...)                                                                             \
    {                                                                                                      \
        constexpr int MO = __ATOMIC_SEQ_CST;                                                               \
        __VA_ARGS__                                                                                        \
    }
#endif
#define SIM_ATOMIC_INT(T)                                                                                  \
    static inline T atomicAdd(T* p, T v) { SIM_WITH_ORDER(p, return __atomic_fetch_add(p, v, MO);) }        \
    static inline T atomicSub(T* p, T v) { SIM_WITH_ORDER(p, return __atomic_fetch_sub(p, v, MO);) }        \
    static inline T atomicAnd(T* p, T v) { SIM_WITH_ORDER(p, return __atomic_fetch_and(p, v, MO);) }        \
    static inline T atomicOr(T* p, T v) { SIM_WITH_ORDER(p, return __atomic_fetch_or(p, v, MO);) }          \
    static inline T atomicXor(T* p, T v) { SIM_WITH_ORDER(p, return __atomic_fetch_xor(p, v, MO);) }        \
    static inline T atomicExch(T* p, T v) { SIM_WITH_ORDER(p, return __atomic_exchange_n(p, v, MO);) }      \
    static inline T atomicCAS(T* p, T expected, T desired) {                                               \
        SIM_WITH_ORDER(p, __atomic_compare_exchange_n(p, &expected, desired, false, MO, MO); return expected;) \
    }                                                                                                      \
    static inline T atomicMax(T* p, T v) {                                                                 \
        SIM_WITH_ORDER(p, T old = __atomic_load_n(p, MO);                                                  \
                       while (old < v && !__atomic_compare_exchange_n(p, &old, v, true, MO, MO)){} return old;) \
    }                                                                                                      \
    static inline T atomicMin(T* p, T v) {                                                                 \
        SIM_WITH_ORDER(p, T old = __atomic_load_n(p, MO);                                                  \
                       while (old > v && !__atomic_compare_exchange_n(p, &old, v, true, MO, MO)){} return old;) \
    }
SIM_ATOMIC_INT(int)
SIM_ATOMIC_INT(unsigned int)
SIM_ATOMIC_INT(unsigned long long)
SIM_ATOMIC_INT(long long)
#undef SIM_ATOMIC_INT

namespace sim {
// ``*p += v`` for a floating-point T through its integer bits I; returns the old value.
template <class T, class I, int MO>
static inline T atomic_add_float(T* p, T v) {
    I* ip = reinterpret_cast<I*>(p);
    I old = __atomic_load_n(ip, MO);
    for (;;) {
        T cur;
        std::memcpy(&cur, &old, sizeof(T));
        T next = cur + v;
        I nbits;
        std::memcpy(&nbits, &next, sizeof(T));
        if (__atomic_compare_exchange_n(ip, &old, nbits, true, MO, MO)) return cur;
    }
}
template <class T, class I, int MO>
static inline T atomic_exch_float(T* p, T v) {
    I bits;
    std::memcpy(&bits, &v, sizeof(T));
    I old = __atomic_exchange_n(reinterpret_cast<I*>(p), bits, MO);
    T out;
    std::memcpy(&out, &old, sizeof(T));
    return out;
}
template <int MO>
static inline unsigned int atomic_inc(unsigned int* p, unsigned int limit) {
    unsigned int old = __atomic_load_n(p, MO);
    while (!__atomic_compare_exchange_n(p, &old, old >= limit ? 0u : old + 1u, true, MO, MO)) {
    }
    return old;
}
template <int MO>
static inline unsigned int atomic_dec(unsigned int* p, unsigned int limit) {
    unsigned int old = __atomic_load_n(p, MO);
    while (!__atomic_compare_exchange_n(p, &old, (old == 0u || old > limit) ? limit : old - 1u, true, MO, MO)) {
    }
    return old;
}
}  // namespace sim

static inline float atomicAdd(float* p, float v) {
    SIM_WITH_ORDER(p, return ::sim::atomic_add_float<float, unsigned int, MO>(p, v);)
}
static inline double atomicAdd(double* p, double v) {
    SIM_WITH_ORDER(p, return ::sim::atomic_add_float<double, unsigned long long, MO>(p, v);)
}
static inline float atomicExch(float* p, float v) {
    SIM_WITH_ORDER(p, return ::sim::atomic_exch_float<float, unsigned int, MO>(p, v);)
}
static inline double atomicExch(double* p, double v) {
    SIM_WITH_ORDER(p, return ::sim::atomic_exch_float<double, unsigned long long, MO>(p, v);)
}
static inline unsigned int atomicInc(unsigned int* p, unsigned int limit) {
    SIM_WITH_ORDER(p, return ::sim::atomic_inc<MO>(p, limit);)
}
static inline unsigned int atomicDec(unsigned int* p, unsigned int limit) {
    SIM_WITH_ORDER(p, return ::sim::atomic_dec<MO>(p, limit);)
}
#undef SIM_WITH_ORDER

// Scoped atomics (_block, _system): one address space and one memory order here.
#define atomicAdd_block atomicAdd
#define atomicAdd_system atomicAdd
#define atomicSub_block atomicSub
#define atomicSub_system atomicSub
#define atomicExch_block atomicExch
#define atomicExch_system atomicExch
#define atomicMin_block atomicMin
#define atomicMin_system atomicMin
#define atomicMax_block atomicMax
#define atomicMax_system atomicMax
#define atomicInc_block atomicInc
#define atomicInc_system atomicInc
#define atomicDec_block atomicDec
#define atomicDec_system atomicDec
#define atomicCAS_block atomicCAS
#define atomicCAS_system atomicCAS
#define atomicAnd_block atomicAnd
#define atomicAnd_system atomicAnd
#define atomicOr_block atomicOr
#define atomicOr_system atomicOr
#define atomicXor_block atomicXor
#define atomicXor_system atomicXor

// ---- math and bit intrinsics ---------------------------------------------------------------
// glibc declares some of these names itself, so they map to sim-prefixed functions.
#define __expf sim__expf
#define __exp10f sim__exp10f
#define __logf sim__logf
#define __log2f sim__log2f
#define __log10f sim__log10f
#define __powf sim__powf
#define __sinf sim__sinf
#define __cosf sim__cosf
#define __tanf sim__tanf
#define __sincosf sim__sincosf
static inline float sim__expf(float x) { return expf(x); }
static inline float sim__exp10f(float x) { return powf(10.0f, x); }
static inline float sim__logf(float x) { return logf(x); }
static inline float sim__log2f(float x) { return log2f(x); }
static inline float sim__log10f(float x) { return log10f(x); }
static inline float sim__powf(float x, float y) { return powf(x, y); }
static inline float sim__sinf(float x) { return sinf(x); }
static inline float sim__cosf(float x) { return cosf(x); }
static inline float sim__tanf(float x) { return tanf(x); }
static inline void sim__sincosf(float x, float* s, float* c) {
    *s = sinf(x);
    *c = cosf(x);
}
static inline float __fdividef(float a, float b) { return a / b; }
static inline float fdividef(float a, float b) { return a / b; }
static inline float __frcp_rn(float x) { return 1.0f / x; }
static inline float __fsqrt_rn(float x) { return sqrtf(x); }
static inline float __frsqrt_rn(float x) { return 1.0f / sqrtf(x); }
static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
static inline double rsqrt(double x) { return 1.0 / sqrt(x); }
static inline float rcbrtf(float x) { return 1.0f / cbrtf(x); }
static inline float __saturatef(float x) { return x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x); }
static inline float __fmaf_rn(float a, float b, float c) { return fmaf(a, b, c); }
static inline float __fadd_rn(float a, float b) { return a + b; }
static inline float __fsub_rn(float a, float b) { return a - b; }
static inline float __fmul_rn(float a, float b) { return a * b; }
static inline float __fdiv_rn(float a, float b) { return a / b; }
static inline double __fma_rn(double a, double b, double c) { return fma(a, b, c); }
static inline int __float2int_rn(float x) { return (int)nearbyintf(x); }
static inline int __float2int_rz(float x) { return (int)x; }
static inline int __float2int_rd(float x) { return (int)floorf(x); }
static inline int __float2int_ru(float x) { return (int)ceilf(x); }
static inline float __int2float_rn(int x) { return (float)x; }
static inline float __uint2float_rn(unsigned int x) { return (float)x; }
static inline int __float_as_int(float x) {
    int i;
    std::memcpy(&i, &x, 4);
    return i;
}
static inline unsigned int __float_as_uint(float x) {
    unsigned int i;
    std::memcpy(&i, &x, 4);
    return i;
}
static inline float __int_as_float(int i) {
    float x;
    std::memcpy(&x, &i, 4);
    return x;
}
static inline float __uint_as_float(unsigned int i) {
    float x;
    std::memcpy(&x, &i, 4);
    return x;
}
static inline long long __double_as_longlong(double x) {
    long long i;
    std::memcpy(&i, &x, 8);
    return i;
}
static inline double __longlong_as_double(long long i) {
    double x;
    std::memcpy(&x, &i, 8);
    return x;
}
static inline int __popc(unsigned int x) { return __builtin_popcount(x); }
static inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
static inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz((unsigned int)x); }
static inline int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll((unsigned long long)x); }
static inline int __ffs(int x) { return __builtin_ffs(x); }
static inline int __ffsll(long long x) { return __builtin_ffsll(x); }
static inline unsigned int __brev(unsigned int x) {
    x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
    x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
    x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
    x = ((x >> 8) & 0x00ff00ffu) | ((x & 0x00ff00ffu) << 8);
    return (x >> 16) | (x << 16);
}
static inline int __mul24(int a, int b) { return a * b; }
static inline unsigned int __umul24(unsigned int a, unsigned int b) { return a * b; }
static inline int __mulhi(int a, int b) { return (int)(((long long)a * (long long)b) >> 32); }
static inline unsigned int __umulhi(unsigned int a, unsigned int b) {
    return (unsigned int)(((unsigned long long)a * (unsigned long long)b) >> 32);
}
#include "sim_dot_products.h"  // __dp4a, __dp2a_lo, __dp2a_hi
// Loads and stores with cache hints: the hint means nothing to a CPU, the access is plain.
template <class T>
static inline T __ldg(const T* p) {
    return *p;
}
#define SIM_CACHE_LOAD(NAME)            \
    template <class T>                  \
    static inline T NAME(const T* p) {  \
        return *p;                      \
    }
SIM_CACHE_LOAD(__ldcg)
SIM_CACHE_LOAD(__ldca)
SIM_CACHE_LOAD(__ldcs)
SIM_CACHE_LOAD(__ldlu)
SIM_CACHE_LOAD(__ldcv)
#undef SIM_CACHE_LOAD
#define SIM_CACHE_STORE(NAME)                                                        \
    template <class T>                                                               \
    static inline void NAME(T* p, typename ::sim::nondeduced<T>::type value) {       \
        *p = value;                                                                  \
    }
SIM_CACHE_STORE(__stcg)
SIM_CACHE_STORE(__stcs)
SIM_CACHE_STORE(__stwb)
SIM_CACHE_STORE(__stwt)
#undef SIM_CACHE_STORE

static inline unsigned int umin(unsigned int a, unsigned int b) { return a < b ? a : b; }
static inline unsigned int umax(unsigned int a, unsigned int b) { return a > b ? a : b; }
static inline long long llmin(long long a, long long b) { return a < b ? a : b; }
static inline long long llmax(long long a, long long b) { return a > b ? a : b; }
static inline unsigned long long ullmin(unsigned long long a, unsigned long long b) { return a < b ? a : b; }
static inline unsigned long long ullmax(unsigned long long a, unsigned long long b) { return a > b ? a : b; }

// CUDA's global min/max accept any mix of arithmetic types.
template <class A, class B>
static inline typename std::enable_if<std::is_arithmetic<A>::value && std::is_arithmetic<B>::value,
                                      typename std::common_type<A, B>::type>::type
min(A a, B b) {
    typedef typename std::common_type<A, B>::type C;
    return (C)a < (C)b ? (C)a : (C)b;
}
template <class A, class B>
static inline typename std::enable_if<std::is_arithmetic<A>::value && std::is_arithmetic<B>::value,
                                      typename std::common_type<A, B>::type>::type
max(A a, B b) {
    typedef typename std::common_type<A, B>::type C;
    return (C)a > (C)b ? (C)a : (C)b;
}

// Inline PTX: the helpers the front end's translation of an asm statement calls.
#include "sim_ptx.h"

#endif  // CUDA_CPU_SIMULATOR_H
