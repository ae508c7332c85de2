// The device functions CUDA declares (NVIDIA's <cuda_runtime.h> and the headers it includes),
// defined for a CPU: included by cuda_sim.h after NVIDIA's declarations, with the same names,
// parameter types, linkage and exception specifications, so each definition is the declared
// function. Whatever NVIDIA declares and this file does not define links to a stub that stops
// the kernel with one line naming it (simulator/link_stubs.py).
//
// A call that waits for other threads or reports where it happened (barriers, warp operations,
// __nanosleep, __trap) reads the call site the front end records in front of it in the
// program's own code (__sim::call_site); a call from a library's code has none.
#ifndef CUDA_CPU_SIMULATOR_INTRINSICS_H
#define CUDA_CPU_SIMULATOR_INTRINSICS_H

#include <cfenv>
#include <cmath>
#include <cstring>
#include <limits>

#define SIM_DEVICE __device__ inline __attribute__((always_inline))

#include "sim_dot_products.h"  // __dp4a, __dp2a_lo, __dp2a_hi (after SIM_DEVICE, which it uses)

// ---- synchronisation, shuffles, votes ------------------------------------------------------
extern "C" {
// __syncthreads is defined by the runtime (device_api.cpp), not here: clang, whose parse the
// front end reads, takes the name for a builtin of its own and refuses a definition of it.
SIM_DEVICE void __threadfence(void) { ::__sim::thread_fence(); }
SIM_DEVICE void __threadfence_block(void) { ::__sim::thread_fence(); }
SIM_DEVICE void __threadfence_system(void) { ::__sim::thread_fence(); }
[[noreturn]] SIM_DEVICE void __trap(void) {
    const ::__sim::Site s = ::__sim::take_site();
    ::__sim::trap(s.file, s.line);
}
SIM_DEVICE void __brkpt(void) {
    const ::__sim::Site s = ::__sim::take_site();
    ::__sim::trap(s.file, s.line);
}
SIM_DEVICE void __prof_trigger(int) {}
}

namespace __sim {
static inline int barrier_reduce(int kind, int predicate) {
    const Site s = take_site();
    return syncthreads_reduce(kind, predicate ? 1 : 0, s.file, s.line);
}
static inline unsigned long long warp_at(int kind, unsigned int mask, unsigned long long value, int param,
                                          int width) {
    const Site s = take_site();
    return warp_op(kind, mask, value, param, width, s.file, s.line);
}
template <class T>
static inline T shfl_at(int kind, unsigned int mask, T value, int param, int width) {
    const Site s = take_site();
    return shfl(kind, s.file, s.line, mask, value, param, width);
}
}  // namespace __sim

SIM_DEVICE int __syncthreads_count(int predicate) { return ::__sim::barrier_reduce(0, predicate); }
SIM_DEVICE int __syncthreads_and(int predicate) { return ::__sim::barrier_reduce(1, predicate); }
SIM_DEVICE int __syncthreads_or(int predicate) { return ::__sim::barrier_reduce(2, predicate); }
SIM_DEVICE void __syncwarp(unsigned int mask) { (void)::__sim::warp_at(::__sim::kSyncWarp, mask, 0, 0, 32); }
SIM_DEVICE unsigned int __activemask() { return ::__sim::active_mask(); }
SIM_DEVICE unsigned int __ballot_sync(unsigned int mask, int pred) {
    return (unsigned int)::__sim::warp_at(::__sim::kBallot, mask, pred ? 1 : 0, 0, 32);
}
SIM_DEVICE int __any_sync(unsigned int mask, int pred) {
    return (int)::__sim::warp_at(::__sim::kAny, mask, pred ? 1 : 0, 0, 32);
}
SIM_DEVICE int __all_sync(unsigned int mask, int pred) {
    return (int)::__sim::warp_at(::__sim::kAll, mask, pred ? 1 : 0, 0, 32);
}
SIM_DEVICE int __uni_sync(unsigned int mask, int pred) {
    const unsigned int voted = (unsigned int)::__sim::warp_at(::__sim::kBallot, mask, pred ? 1 : 0, 0, 32);
    return voted == 0u || voted == (mask & ::__sim::active_mask());
}

// Every type CUDA's shuffles take, in its four forms.
#define SIM_SHUFFLES(T)                                                                                   \
    SIM_DEVICE T __shfl_sync(unsigned int mask, T var, int src, int width) {                              \
        return ::__sim::shfl_at(::__sim::kShflIdx, mask, var, src, width);                                    \
    }                                                                                                     \
    SIM_DEVICE T __shfl_up_sync(unsigned int mask, T var, unsigned int delta, int width) {                \
        return ::__sim::shfl_at(::__sim::kShflUp, mask, var, (int)delta, width);                              \
    }                                                                                                     \
    SIM_DEVICE T __shfl_down_sync(unsigned int mask, T var, unsigned int delta, int width) {              \
        return ::__sim::shfl_at(::__sim::kShflDown, mask, var, (int)delta, width);                            \
    }                                                                                                     \
    SIM_DEVICE T __shfl_xor_sync(unsigned int mask, T var, int lane_mask, int width) {                    \
        return ::__sim::shfl_at(::__sim::kShflXor, mask, var, lane_mask, width);                              \
    }
SIM_SHUFFLES(int)
SIM_SHUFFLES(unsigned int)
SIM_SHUFFLES(long)
SIM_SHUFFLES(unsigned long)
SIM_SHUFFLES(long long)
SIM_SHUFFLES(unsigned long long)
SIM_SHUFFLES(float)
SIM_SHUFFLES(double)
#undef SIM_SHUFFLES

namespace __sim {
// __match_*_sync take 32- and 64-bit integers and floats by their bits.
template <class T>
static inline unsigned int match_any_at(unsigned int mask, T value) {
    unsigned long long bits = 0;
    std::memcpy(&bits, &value, sizeof(T));
    return (unsigned int)warp_at(kMatchAny, mask, bits, 0, 32);
}
template <class T>
static inline unsigned int match_all_at(unsigned int mask, T value, int* pred) {
    unsigned long long bits = 0;
    std::memcpy(&bits, &value, sizeof(T));
    const unsigned long long r = warp_at(kMatchAll, mask, bits, 0, 32);
    *pred = (int)(r >> 32);
    return (unsigned int)r;
}
}  // namespace __sim

#define SIM_MATCHES(T)                                                                                    \
    SIM_DEVICE unsigned int __match_any_sync(unsigned int mask, T value) {                                \
        return ::__sim::match_any_at(mask, value);                                                          \
    }                                                                                                     \
    SIM_DEVICE unsigned int __match_all_sync(unsigned int mask, T value, int* pred) {                     \
        return ::__sim::match_all_at(mask, value, pred);                                                    \
    }
SIM_MATCHES(int)
SIM_MATCHES(unsigned int)
SIM_MATCHES(long)
SIM_MATCHES(unsigned long)
SIM_MATCHES(long long)
SIM_MATCHES(unsigned long long)
SIM_MATCHES(float)
SIM_MATCHES(double)
#undef SIM_MATCHES

// __reduce_*_sync: add/min/max take int or unsigned (as on sm_80); and/or/xor take unsigned.
SIM_DEVICE unsigned int __reduce_add_sync(unsigned int mask, unsigned int v) {
    return (unsigned int)::__sim::warp_at(::__sim::kReduceAdd, mask, v, 0, 32);
}
SIM_DEVICE unsigned int __reduce_min_sync(unsigned int mask, unsigned int v) {
    return (unsigned int)::__sim::warp_at(::__sim::kReduceMin, mask, v, 0, 32);
}
SIM_DEVICE unsigned int __reduce_max_sync(unsigned int mask, unsigned int v) {
    return (unsigned int)::__sim::warp_at(::__sim::kReduceMax, mask, v, 0, 32);
}
SIM_DEVICE int __reduce_add_sync(unsigned int mask, int v) {
    return (int)(unsigned int)::__sim::warp_at(::__sim::kReduceAdd, mask, (unsigned int)v, 1, 32);
}
SIM_DEVICE int __reduce_min_sync(unsigned int mask, int v) {
    return (int)(unsigned int)::__sim::warp_at(::__sim::kReduceMin, mask, (unsigned int)v, 1, 32);
}
SIM_DEVICE int __reduce_max_sync(unsigned int mask, int v) {
    return (int)(unsigned int)::__sim::warp_at(::__sim::kReduceMax, mask, (unsigned int)v, 1, 32);
}
SIM_DEVICE unsigned int __reduce_and_sync(unsigned int mask, unsigned int v) {
    return (unsigned int)::__sim::warp_at(::__sim::kReduceAnd, mask, v, 0, 32);
}
SIM_DEVICE unsigned int __reduce_or_sync(unsigned int mask, unsigned int v) {
    return (unsigned int)::__sim::warp_at(::__sim::kReduceOr, mask, v, 0, 32);
}
SIM_DEVICE unsigned int __reduce_xor_sync(unsigned int mask, unsigned int v) {
    return (unsigned int)::__sim::warp_at(::__sim::kReduceXor, mask, v, 0, 32);
}

SIM_DEVICE void __nanosleep(unsigned int ns) {
    const ::__sim::Site s = ::__sim::take_site();
    ::__sim::nanosleep_thread(ns, s.file, s.line);
}
SIM_DEVICE long long int clock64() { return ::__sim::clock_cycles(); }

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
    if (::__sim::atomic_orders(p)) {                                                                         \
        constexpr int MO = __ATOMIC_SEQ_CST;                                                               \
        __VA_ARGS__                                                                                        \
    } else {                                                                                               \
        constexpr int MO = __ATOMIC_RELAXED;                                                               \
        __VA_ARGS__                                                                                        \
    }
namespace __sim {
SIM_API bool atomic_orders(const void* p);
}
#else
#define SIM_WITH_ORDER(p, ...)                                                                             \
    {                                                                                                      \
        constexpr int MO = __ATOMIC_SEQ_CST;                                                               \
        __VA_ARGS__                                                                                        \
    }
#endif

namespace __sim {
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
template <class T, int MO>
static inline T atomic_max(T* p, T v) {
    T old = __atomic_load_n(p, MO);
    while (old < v && !__atomic_compare_exchange_n(p, &old, v, true, MO, MO)) {
    }
    return old;
}
template <class T, int MO>
static inline T atomic_min(T* p, T v) {
    T old = __atomic_load_n(p, MO);
    while (old > v && !__atomic_compare_exchange_n(p, &old, v, true, MO, MO)) {
    }
    return old;
}
// A 16-bit compare-and-swap (atomicCAS on unsigned short).
template <int MO>
static inline unsigned short atomic_cas16(unsigned short* p, unsigned short expected, unsigned short desired) {
    __atomic_compare_exchange_n(p, &expected, desired, false, MO, MO);
    return expected;
}
}  // namespace __sim

// One atomic in its three scopes (a CPU has one address space and one memory order here).
#define SIM_ATOMIC_SCOPES(R, NAME, PARAMS, ...) \
    SIM_DEVICE R NAME PARAMS __VA_ARGS__ SIM_DEVICE R NAME##_block PARAMS __VA_ARGS__ SIM_DEVICE R NAME##_system PARAMS __VA_ARGS__
#define SIM_ATOMIC_BINARY(T, NAME, BODY) SIM_ATOMIC_SCOPES(T, NAME, (T * p, T v), {SIM_WITH_ORDER(p, BODY)})
#define SIM_ATOMIC_INTS(T)                                                                                   \
    SIM_ATOMIC_BINARY(T, atomicAdd, return __atomic_fetch_add(p, v, MO);)                                    \
    SIM_ATOMIC_BINARY(T, atomicAnd, return __atomic_fetch_and(p, v, MO);)                                    \
    SIM_ATOMIC_BINARY(T, atomicOr, return __atomic_fetch_or(p, v, MO);)                                      \
    SIM_ATOMIC_BINARY(T, atomicXor, return __atomic_fetch_xor(p, v, MO);)                                    \
    SIM_ATOMIC_BINARY(T, atomicExch, return __atomic_exchange_n(p, v, MO);)                                  \
    SIM_ATOMIC_BINARY(T, atomicMax, return (::__sim::atomic_max<T, MO>(p, v));)                                \
    SIM_ATOMIC_BINARY(T, atomicMin, return (::__sim::atomic_min<T, MO>(p, v));)                                \
    SIM_ATOMIC_SCOPES(T, atomicCAS, (T * p, T expected, T desired), {                                        \
        SIM_WITH_ORDER(p, __atomic_compare_exchange_n(p, &expected, desired, false, MO, MO); return expected;) \
    })
SIM_ATOMIC_INTS(int)
SIM_ATOMIC_INTS(unsigned int)
SIM_ATOMIC_INTS(unsigned long long)
SIM_ATOMIC_BINARY(int, atomicSub, return __atomic_fetch_sub(p, v, MO);)
SIM_ATOMIC_BINARY(unsigned int, atomicSub, return __atomic_fetch_sub(p, v, MO);)
SIM_ATOMIC_BINARY(long long, atomicMax, return (::__sim::atomic_max<long long, MO>(p, v));)
SIM_ATOMIC_BINARY(long long, atomicMin, return (::__sim::atomic_min<long long, MO>(p, v));)
SIM_ATOMIC_BINARY(long long, atomicAnd, return __atomic_fetch_and(p, v, MO);)
SIM_ATOMIC_BINARY(long long, atomicOr, return __atomic_fetch_or(p, v, MO);)
SIM_ATOMIC_BINARY(long long, atomicXor, return __atomic_fetch_xor(p, v, MO);)
SIM_ATOMIC_BINARY(float, atomicAdd, return (::__sim::atomic_add_float<float, unsigned int, MO>(p, v));)
SIM_ATOMIC_BINARY(double, atomicAdd, return (::__sim::atomic_add_float<double, unsigned long long, MO>(p, v));)
SIM_ATOMIC_BINARY(float, atomicExch, return (::__sim::atomic_exch_float<float, unsigned int, MO>(p, v));)
SIM_ATOMIC_SCOPES(unsigned int, atomicInc, (unsigned int* p, unsigned int limit),
                  {SIM_WITH_ORDER(p, return ::__sim::atomic_inc<MO>(p, limit);)})
SIM_ATOMIC_SCOPES(unsigned int, atomicDec, (unsigned int* p, unsigned int limit),
                  {SIM_WITH_ORDER(p, return ::__sim::atomic_dec<MO>(p, limit);)})
SIM_ATOMIC_SCOPES(unsigned short, atomicCAS, (unsigned short* p, unsigned short expected, unsigned short desired),
                  {SIM_WITH_ORDER(p, return ::__sim::atomic_cas16<MO>(p, expected, desired);)})
#include "sim_nv_atomic.h"  // __nv_atomic_* (uses SIM_WITH_ORDER, undefined below)

#undef SIM_ATOMIC_INTS
#undef SIM_ATOMIC_BINARY
#undef SIM_ATOMIC_SCOPES
#undef SIM_WITH_ORDER

// ---- arithmetic and bit intrinsics -----------------------------------------------------------
namespace __sim {
template <class To, class From>
static inline To bits_as(From x) {
    static_assert(sizeof(To) == sizeof(From), "a reinterpretation keeps the size");
    To out;
    std::memcpy(&out, &x, sizeof out);
    return out;
}
// ``op()`` evaluated with the C rounding mode ``mode`` (FE_TOWARDZERO, FE_UPWARD, FE_DOWNWARD):
// the _rz/_ru/_rd forms. The operands pass through volatile so the compiler cannot fold the
// operation under the default mode.
template <class Op>
static inline auto rounded(int mode, Op op) -> decltype(op()) {
    const int saved = std::fegetround();
    std::fesetround(mode);
    const decltype(op()) r = op();
    std::fesetround(saved);
    return r;
}
template <class T>
static inline T volatile_value(T x) {
    volatile T v = x;
    return v;
}
// Float to integer conversions as the GPU's cvt does: NaN gives 0, out of range saturates.
template <class I, class F>
static inline I to_int(F x) {
    if (std::isnan(x)) return 0;
    constexpr F lo = (F)std::numeric_limits<I>::min();
    constexpr F hi = (F)std::numeric_limits<I>::max();
    if (x <= lo) return std::numeric_limits<I>::min();
    if (x >= hi) return std::numeric_limits<I>::max();
    return (I)x;
}
}  // namespace __sim

#define SIM_VOL(x) ::__sim::volatile_value(x)
// A binary float operation in its four roundings: _rn (nearest, never contracted), _rz, _ru, _rd.
// The result passes through a volatile too: a _rn product is never contracted with an add into
// a fused multiply-add, as nvcc never contracts these intrinsics.
#define SIM_ROUNDINGS(R, NAME, PARAMS, EXPR)                                                             \
    SIM_DEVICE R NAME##_rn PARAMS {                                                                      \
        volatile R r = EXPR;                                                                             \
        return r;                                                                                        \
    }                                                                                                    \
    SIM_DEVICE R NAME##_rz PARAMS { return ::__sim::rounded(FE_TOWARDZERO, [&] { return EXPR; }); }        \
    SIM_DEVICE R NAME##_ru PARAMS { return ::__sim::rounded(FE_UPWARD, [&] { return EXPR; }); }            \
    SIM_DEVICE R NAME##_rd PARAMS { return ::__sim::rounded(FE_DOWNWARD, [&] { return EXPR; }); }
// A conversion to an integer in its four roundings (the C library's rounding functions).
#define SIM_TO_INT(R, NAME, F)                                                                           \
    SIM_DEVICE R NAME##_rn(F x) { return ::__sim::to_int<R>(std::nearbyint(x)); }                         \
    SIM_DEVICE R NAME##_rz(F x) { return ::__sim::to_int<R>(std::trunc(x)); }                              \
    SIM_DEVICE R NAME##_ru(F x) { return ::__sim::to_int<R>(std::ceil(x)); }                               \
    SIM_DEVICE R NAME##_rd(F x) { return ::__sim::to_int<R>(std::floor(x)); }

extern "C" {
SIM_ROUNDINGS(float, __fadd, (float a, float b), SIM_VOL(a) + SIM_VOL(b))
SIM_ROUNDINGS(float, __fsub, (float a, float b), SIM_VOL(a) - SIM_VOL(b))
SIM_ROUNDINGS(float, __fmul, (float a, float b), SIM_VOL(a) * SIM_VOL(b))
SIM_ROUNDINGS(float, __fdiv, (float a, float b), SIM_VOL(a) / SIM_VOL(b))
SIM_ROUNDINGS(float, __fmaf, (float a, float b, float c), std::fma(SIM_VOL(a), SIM_VOL(b), SIM_VOL(c)))
SIM_ROUNDINGS(float, __frcp, (float a), 1.0f / SIM_VOL(a))
SIM_ROUNDINGS(float, __fsqrt, (float a), std::sqrt(SIM_VOL(a)))
SIM_ROUNDINGS(double, __dadd, (double a, double b), SIM_VOL(a) + SIM_VOL(b))
SIM_ROUNDINGS(double, __dsub, (double a, double b), SIM_VOL(a) - SIM_VOL(b))
SIM_ROUNDINGS(double, __dmul, (double a, double b), SIM_VOL(a) * SIM_VOL(b))
SIM_ROUNDINGS(double, __ddiv, (double a, double b), SIM_VOL(a) / SIM_VOL(b))
SIM_ROUNDINGS(double, __fma, (double a, double b, double c), std::fma(SIM_VOL(a), SIM_VOL(b), SIM_VOL(c)))
SIM_ROUNDINGS(double, __drcp, (double a), 1.0 / SIM_VOL(a))
SIM_ROUNDINGS(double, __dsqrt, (double a), std::sqrt(SIM_VOL(a)))
SIM_ROUNDINGS(float, __double2float, (double a), (float)SIM_VOL(a))
SIM_ROUNDINGS(float, __int2float, (int a), (float)SIM_VOL(a))
SIM_ROUNDINGS(float, __uint2float, (unsigned int a), (float)SIM_VOL(a))
SIM_ROUNDINGS(float, __ll2float, (long long a), (float)SIM_VOL(a))
SIM_ROUNDINGS(float, __ull2float, (unsigned long long a), (float)SIM_VOL(a))
SIM_ROUNDINGS(double, __ll2double, (long long a), (double)SIM_VOL(a))
SIM_ROUNDINGS(double, __ull2double, (unsigned long long a), (double)SIM_VOL(a))
SIM_DEVICE float __fmaf_ieee_rn(float a, float b, float c) { return __fmaf_rn(a, b, c); }
SIM_DEVICE float __fmaf_ieee_rz(float a, float b, float c) { return __fmaf_rz(a, b, c); }
SIM_DEVICE float __fmaf_ieee_ru(float a, float b, float c) { return __fmaf_ru(a, b, c); }
SIM_DEVICE float __fmaf_ieee_rd(float a, float b, float c) { return __fmaf_rd(a, b, c); }
SIM_DEVICE float __frsqrt_rn(float a) { return (float)(1.0 / std::sqrt((double)a)); }
SIM_DEVICE double __int2double_rn(int a) { return (double)a; }
SIM_DEVICE double __uint2double_rn(unsigned int a) { return (double)a; }
SIM_TO_INT(int, __float2int, float)
SIM_TO_INT(unsigned int, __float2uint, float)
SIM_TO_INT(long long, __float2ll, float)
SIM_TO_INT(unsigned long long, __float2ull, float)
SIM_TO_INT(int, __double2int, double)
SIM_TO_INT(unsigned int, __double2uint, double)
SIM_TO_INT(long long, __double2ll, double)
SIM_TO_INT(unsigned long long, __double2ull, double)

SIM_DEVICE int __float_as_int(float x) { return ::__sim::bits_as<int>(x); }
SIM_DEVICE unsigned int __float_as_uint(float x) { return ::__sim::bits_as<unsigned int>(x); }
SIM_DEVICE float __int_as_float(int x) { return ::__sim::bits_as<float>(x); }
SIM_DEVICE float __uint_as_float(unsigned int x) { return ::__sim::bits_as<float>(x); }
SIM_DEVICE long long __double_as_longlong(double x) { return ::__sim::bits_as<long long>(x); }
SIM_DEVICE double __longlong_as_double(long long x) { return ::__sim::bits_as<double>(x); }
SIM_DEVICE int __double2hiint(double x) { return (int)(::__sim::bits_as<unsigned long long>(x) >> 32); }
SIM_DEVICE int __double2loint(double x) { return (int)(unsigned int)::__sim::bits_as<unsigned long long>(x); }
SIM_DEVICE double __hiloint2double(int hi, int lo) {
    return ::__sim::bits_as<double>(((unsigned long long)(unsigned int)hi << 32) | (unsigned int)lo);
}

// The fast-math intrinsics: the GPU computes them approximately; here they are the C library's
// functions, within the GPU's documented error bounds.
SIM_DEVICE float __expf(float x) noexcept { return ::expf(x); }
SIM_DEVICE float __exp10f(float x) noexcept { return ::exp10f(x); }
SIM_DEVICE float __logf(float x) noexcept { return ::logf(x); }
SIM_DEVICE float __log2f(float x) noexcept { return ::log2f(x); }
SIM_DEVICE float __log10f(float x) noexcept { return ::log10f(x); }
SIM_DEVICE float __powf(float x, float y) noexcept { return ::powf(x, y); }
SIM_DEVICE float __sinf(float x) noexcept { return ::sinf(x); }
SIM_DEVICE float __cosf(float x) noexcept { return ::cosf(x); }
SIM_DEVICE float __tanf(float x) noexcept { return ::tanf(x); }
SIM_DEVICE float __tanhf(float x) noexcept { return ::tanhf(x); }
SIM_DEVICE void __sincosf(float x, float* s, float* c) noexcept {
    *s = ::sinf(x);
    *c = ::cosf(x);
}
SIM_DEVICE float __fdividef(float a, float b) { return a / b; }
SIM_DEVICE float fdividef(float a, float b) { return a / b; }
SIM_DEVICE double fdivide(double a, double b) { return a / b; }
SIM_DEVICE float __saturatef(float x) { return x > 0.0f ? (x < 1.0f ? x : 1.0f) : 0.0f; }

SIM_DEVICE int __popc(unsigned int x) { return __builtin_popcount(x); }
SIM_DEVICE int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
SIM_DEVICE int __clz(int x) { return x == 0 ? 32 : __builtin_clz((unsigned int)x); }
SIM_DEVICE int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll((unsigned long long)x); }
SIM_DEVICE int __ffs(int x) { return __builtin_ffs(x); }
SIM_DEVICE int __ffsll(long long x) { return __builtin_ffsll(x); }
SIM_DEVICE unsigned int __brev(unsigned int x) {
    x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
    x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
    x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
    x = ((x >> 8) & 0x00ff00ffu) | ((x & 0x00ff00ffu) << 8);
    return (x >> 16) | (x << 16);
}
SIM_DEVICE unsigned long long __brevll(unsigned long long x) {
    return ((unsigned long long)__brev((unsigned int)x) << 32) | __brev((unsigned int)(x >> 32));
}
// Byte i of the result is byte s[i] (each 3 bits of s) of the eight bytes y:x.
SIM_DEVICE unsigned int __byte_perm(unsigned int x, unsigned int y, unsigned int s) {
    const unsigned long long both = ((unsigned long long)y << 32) | x;
    unsigned int r = 0;
    for (int i = 0; i < 4; ++i) r |= (unsigned int)((both >> (8 * ((s >> (4 * i)) & 7))) & 0xff) << (8 * i);
    return r;
}
SIM_DEVICE int __mul24(int a, int b) {
    return (int)((long long)(a << 8 >> 8) * (long long)(b << 8 >> 8));
}
SIM_DEVICE unsigned int __umul24(unsigned int a, unsigned int b) { return (a & 0xffffffu) * (b & 0xffffffu); }
SIM_DEVICE int __mulhi(int a, int b) { return (int)(((long long)a * (long long)b) >> 32); }
SIM_DEVICE unsigned int __umulhi(unsigned int a, unsigned int b) {
    return (unsigned int)(((unsigned long long)a * (unsigned long long)b) >> 32);
}
SIM_DEVICE long long __mul64hi(long long a, long long b) { return (long long)(((__int128)a * (__int128)b) >> 64); }
SIM_DEVICE unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
    return (unsigned long long)(((unsigned __int128)a * (unsigned __int128)b) >> 64);
}
SIM_DEVICE int __hadd(int a, int b) { return (int)(((long long)a + (long long)b) >> 1); }
SIM_DEVICE int __rhadd(int a, int b) { return (int)(((long long)a + (long long)b + 1) >> 1); }
SIM_DEVICE unsigned int __uhadd(unsigned int a, unsigned int b) {
    return (unsigned int)(((unsigned long long)a + b) >> 1);
}
SIM_DEVICE unsigned int __urhadd(unsigned int a, unsigned int b) {
    return (unsigned int)(((unsigned long long)a + b + 1) >> 1);
}
SIM_DEVICE unsigned int __sad(int a, int b, unsigned int c) {
    return c + (unsigned int)(a > b ? (long long)a - b : (long long)b - a);
}
SIM_DEVICE unsigned int __usad(unsigned int a, unsigned int b, unsigned int c) {
    return c + (a > b ? a - b : b - a);
}
}  // extern "C"

SIM_DEVICE unsigned int __funnelshift_l(unsigned int lo, unsigned int hi, unsigned int shift) {
    const unsigned long long both = ((unsigned long long)hi << 32) | lo;
    return (unsigned int)((both << (shift & 31)) >> 32);
}
SIM_DEVICE unsigned int __funnelshift_lc(unsigned int lo, unsigned int hi, unsigned int shift) {
    const unsigned long long both = ((unsigned long long)hi << 32) | lo;
    return (unsigned int)((both << (shift > 32 ? 32 : shift)) >> 32);
}
SIM_DEVICE unsigned int __funnelshift_r(unsigned int lo, unsigned int hi, unsigned int shift) {
    const unsigned long long both = ((unsigned long long)hi << 32) | lo;
    return (unsigned int)(both >> (shift & 31));
}
SIM_DEVICE unsigned int __funnelshift_rc(unsigned int lo, unsigned int hi, unsigned int shift) {
    const unsigned long long both = ((unsigned long long)hi << 32) | lo;
    return (unsigned int)(both >> (shift > 32 ? 32 : shift));
}

// The device-only math functions of <math_functions.h> (those of the C library the host provides).
extern "C" {
SIM_DEVICE float rhypotf(float x, float y) noexcept { return 1.0f / ::hypotf(x, y); }
SIM_DEVICE double rhypot(double x, double y) noexcept { return 1.0 / ::hypot(x, y); }
SIM_DEVICE double norm3d(double a, double b, double c) noexcept { return std::sqrt(a * a + b * b + c * c); }
SIM_DEVICE float norm3df(float a, float b, float c) noexcept { return std::sqrt(a * a + b * b + c * c); }
SIM_DEVICE double rnorm3d(double a, double b, double c) noexcept { return 1.0 / norm3d(a, b, c); }
SIM_DEVICE float rnorm3df(float a, float b, float c) noexcept { return 1.0f / norm3df(a, b, c); }
SIM_DEVICE double norm4d(double a, double b, double c, double d) noexcept {
    return std::sqrt(a * a + b * b + c * c + d * d);
}
SIM_DEVICE float norm4df(float a, float b, float c, float d) noexcept {
    return std::sqrt(a * a + b * b + c * c + d * d);
}
SIM_DEVICE double rnorm4d(double a, double b, double c, double d) noexcept { return 1.0 / norm4d(a, b, c, d); }
SIM_DEVICE float rnorm4df(float a, float b, float c, float d) noexcept { return 1.0f / norm4df(a, b, c, d); }
SIM_DEVICE double norm(int n, const double* a) noexcept {
    double s = 0.0;
    for (int i = 0; i < n; ++i) s += a[i] * a[i];
    return std::sqrt(s);
}
SIM_DEVICE float normf(int n, const float* a) noexcept {
    float s = 0.0f;
    for (int i = 0; i < n; ++i) s += a[i] * a[i];
    return std::sqrt(s);
}
SIM_DEVICE double rnorm(int n, const double* a) noexcept { return 1.0 / norm(n, a); }
SIM_DEVICE float rnormf(int n, const float* a) noexcept { return 1.0f / normf(n, a); }
SIM_DEVICE double cyl_bessel_i0(double x) noexcept { return std::cyl_bessel_i(0.0, x); }
SIM_DEVICE float cyl_bessel_i0f(float x) noexcept { return std::cyl_bessel_if(0.0f, x); }
SIM_DEVICE double cyl_bessel_i1(double x) noexcept { return std::cyl_bessel_i(1.0, x); }
SIM_DEVICE float cyl_bessel_i1f(float x) noexcept { return std::cyl_bessel_if(1.0f, x); }
}

// ---- CUDA's math functions the C library does not have ------------------------------------------
// Declared __host__ __device__ by <crt/math_functions.h>; host code may call them too.
namespace __sim {
namespace math {
// x reduced modulo 2 (exactly), in [-1, 1]: sin(pi x) and cos(pi x) of the result are those of x.
static inline double half_turns(double x) { return std::remainder(x, 2.0); }
static inline double sinpi(double x) {
    if (!std::isfinite(x)) return std::numeric_limits<double>::quiet_NaN();
    const double r = half_turns(x);
    if (r == 0.0 || r == 1.0 || r == -1.0) return std::copysign(0.0, x);
    if (r == 0.5) return 1.0;
    if (r == -0.5) return -1.0;
    return std::sin(M_PI * r);
}
static inline double cospi(double x) {
    if (!std::isfinite(x)) return std::numeric_limits<double>::quiet_NaN();
    const double r = std::fabs(half_turns(x));
    if (r == 0.5) return 0.0;
    if (r == 0.0) return 1.0;
    if (r == 1.0) return -1.0;
    return std::cos(M_PI * r);
}
// The inverse error function by Newton's method on erf (from an approximation good to ~1e-3).
static inline double erfinv(double y) {
    if (std::isnan(y) || y < -1.0 || y > 1.0) return std::numeric_limits<double>::quiet_NaN();
    if (y == 1.0) return std::numeric_limits<double>::infinity();
    if (y == -1.0) return -std::numeric_limits<double>::infinity();
    if (y == 0.0) return y;
    // Winitzki's approximation: with w = -log(1 - y^2) and a = 0.147,
    // x = sqrt(sqrt(t^2 + w / a) - t) where t = 2 / (pi a) - w / 2.
    const double a = 0.147, w = -std::log((1.0 - y) * (1.0 + y)), t = 2.0 / (M_PI * a) - w / 2.0;
    double x = std::copysign(std::sqrt(std::sqrt(t * t + w / a) - t), y);
    for (int i = 0; i < 4; ++i) x -= (std::erf(x) - y) / (2.0 / std::sqrt(M_PI) * std::exp(-x * x));
    return x;
}
// The inverse complementary error function by Newton's method on erfc (accurate where erfc is tiny).
static inline double erfcinv(double y) {
    if (std::isnan(y) || y < 0.0 || y > 2.0) return std::numeric_limits<double>::quiet_NaN();
    if (y == 0.0) return std::numeric_limits<double>::infinity();
    if (y == 2.0) return -std::numeric_limits<double>::infinity();
    if (y > 0.0625 && y < 1.9375) return erfinv(1.0 - y);
    const bool upper = y < 1.0;
    const double t = upper ? y : 2.0 - y;
    double x = std::sqrt(-std::log(t * std::sqrt(M_PI) * std::sqrt(-std::log(t))));
    for (int i = 0; i < 8; ++i) x += (std::erfc(x) - t) / (2.0 / std::sqrt(M_PI) * std::exp(-x * x));
    return upper ? x : -x;
}
// exp(x^2) erfc(x), by its asymptotic series where erfc underflows.
static inline double erfcx(double x) {
    if (x < 25.0) return std::exp(x * x) * std::erfc(x);
    // 1 / (x sqrt(pi)) * sum over n of (-1)^n (2n - 1)!! / (2 x^2)^n; at x >= 25 eight terms reach
    // double precision.
    double term = 1.0, sum = 1.0;
    for (int n = 1; n < 8; ++n) {
        term *= -(2.0 * n - 1.0) / (2.0 * x * x);
        sum += term;
    }
    return sum / (x * std::sqrt(M_PI));
}
}  // namespace math
}  // namespace __sim

#define SIM_HD __host__ __device__ inline
extern "C" {
SIM_HD double rsqrt(double x) noexcept { return 1.0 / std::sqrt(x); }
SIM_HD float rsqrtf(float x) noexcept { return (float)(1.0 / std::sqrt((double)x)); }
SIM_HD double rcbrt(double x) noexcept { return 1.0 / std::cbrt(x); }
SIM_HD float rcbrtf(float x) noexcept { return (float)(1.0 / std::cbrt((double)x)); }
SIM_HD double sinpi(double x) noexcept { return ::__sim::math::sinpi(x); }
SIM_HD float sinpif(float x) noexcept { return (float)::__sim::math::sinpi(x); }
SIM_HD double cospi(double x) noexcept { return ::__sim::math::cospi(x); }
SIM_HD float cospif(float x) noexcept { return (float)::__sim::math::cospi(x); }
SIM_HD void sincospi(double x, double* s, double* c) noexcept {
    *s = ::__sim::math::sinpi(x);
    *c = ::__sim::math::cospi(x);
}
SIM_HD void sincospif(float x, float* s, float* c) noexcept {
    *s = (float)::__sim::math::sinpi(x);
    *c = (float)::__sim::math::cospi(x);
}
SIM_HD double erfinv(double y) noexcept { return ::__sim::math::erfinv(y); }
SIM_HD float erfinvf(float y) noexcept { return (float)::__sim::math::erfinv(y); }
SIM_HD double erfcinv(double y) noexcept { return ::__sim::math::erfcinv(y); }
SIM_HD float erfcinvf(float y) noexcept { return (float)::__sim::math::erfcinv(y); }
SIM_HD double erfcx(double x) noexcept { return ::__sim::math::erfcx(x); }
SIM_HD float erfcxf(float x) noexcept { return (float)::__sim::math::erfcx(x); }
SIM_HD double normcdf(double x) noexcept { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }
SIM_HD float normcdff(float x) noexcept { return (float)(0.5 * std::erfc(-(double)x / std::sqrt(2.0))); }
SIM_HD double normcdfinv(double p) noexcept { return -std::sqrt(2.0) * ::__sim::math::erfcinv(2.0 * p); }
SIM_HD float normcdfinvf(float p) noexcept { return (float)(-std::sqrt(2.0) * ::__sim::math::erfcinv(2.0 * p)); }
}
#undef SIM_HD

// ---- loads and stores with cache hints: the hint means nothing to a CPU ------------------------
#define SIM_CACHE_LOADS(T)                                   \
    SIM_DEVICE T __ldg(const T* p) { return *p; }            \
    SIM_DEVICE T __ldcg(const T* p) { return *p; }           \
    SIM_DEVICE T __ldca(const T* p) { return *p; }           \
    SIM_DEVICE T __ldcs(const T* p) { return *p; }           \
    SIM_DEVICE T __ldlu(const T* p) { return *p; }           \
    SIM_DEVICE T __ldcv(const T* p) { return *p; }           \
    SIM_DEVICE void __stwb(T* p, T v) { *p = v; }            \
    SIM_DEVICE void __stcg(T* p, T v) { *p = v; }            \
    SIM_DEVICE void __stcs(T* p, T v) { *p = v; }            \
    SIM_DEVICE void __stwt(T* p, T v) { *p = v; }
#define SIM_CACHE_LOADS_VEC(S) SIM_CACHE_LOADS(S##2) SIM_CACHE_LOADS(S##4)
SIM_CACHE_LOADS(char)
SIM_CACHE_LOADS(signed char)
SIM_CACHE_LOADS(short)
SIM_CACHE_LOADS(int)
SIM_CACHE_LOADS(long)
SIM_CACHE_LOADS(long long)
SIM_CACHE_LOADS(unsigned char)
SIM_CACHE_LOADS(unsigned short)
SIM_CACHE_LOADS(unsigned int)
SIM_CACHE_LOADS(unsigned long)
SIM_CACHE_LOADS(unsigned long long)
SIM_CACHE_LOADS(float)
SIM_CACHE_LOADS(double)
SIM_CACHE_LOADS_VEC(char)
SIM_CACHE_LOADS_VEC(short)
SIM_CACHE_LOADS_VEC(int)
SIM_CACHE_LOADS_VEC(uchar)
SIM_CACHE_LOADS_VEC(ushort)
SIM_CACHE_LOADS_VEC(uint)
SIM_CACHE_LOADS_VEC(float)
SIM_CACHE_LOADS(longlong2)
SIM_CACHE_LOADS(ulonglong2)
SIM_CACHE_LOADS(double2)
#undef SIM_CACHE_LOADS_VEC
#undef SIM_CACHE_LOADS

// ---- address spaces: one here, so every pointer is "global" and converts to itself ---------
SIM_DEVICE unsigned int __isGlobal(const void*) { return 1; }
SIM_DEVICE unsigned int __isConstant(const void*) { return 0; }
SIM_DEVICE unsigned int __isLocal(const void*) { return 0; }
SIM_DEVICE unsigned int __isGridConstant(const void*) { return 0; }

#undef SIM_VOL
#undef SIM_ROUNDINGS
#undef SIM_TO_INT

#endif  // CUDA_CPU_SIMULATOR_INTRINSICS_H
