// Simulator stand-in for <cuda_fp16.h>: __half and __half2 with CUDA's conversions,
// operators and intrinsics. Arithmetic is done exactly and rounded once to nearest even (see
// sim_float16.h), so results match the GPU's half arithmetic bit for bit; the transcendental
// functions (hexp, hlog, ...) are the float function rounded to half.
#ifndef CUDA_SIM_FP16_H
#define CUDA_SIM_FP16_H

#include "../cuda_sim.h"
#include "sim_float16.h"

struct __half_raw {
    unsigned short x;
};
struct __half2_raw {
    unsigned short x, y;
};

struct __attribute__((aligned(2))) __half {
    unsigned short __x;

    __half() = default;
    __half(const __half_raw& r) : __x(r.x) {}
    __half(float f) : __x(::sim::f16::Half::from_double(f)) {}
    __half(double d) : __x(::sim::f16::Half::from_double(d)) {}
    __half(int v) : __x(::sim::f16::Half::from_double(v)) {}
    __half(unsigned int v) : __x(::sim::f16::Half::from_double(v)) {}
    __half(short v) : __x(::sim::f16::Half::from_double(v)) {}
    __half(unsigned short v) : __x(::sim::f16::Half::from_double(v)) {}
    __half(long long v) : __x(::sim::f16::Half::from_double((double)v)) {}
    __half(unsigned long long v) : __x(::sim::f16::Half::from_double((double)v)) {}
    __half& operator=(const __half_raw& r) {
        __x = r.x;
        return *this;
    }
    operator float() const { return ::sim::f16::Half::to_float(__x); }
    operator __half_raw() const { return __half_raw{__x}; }
};

struct __attribute__((aligned(4))) __half2 {
    __half x, y;

    __half2() = default;
    __half2(const __half& a, const __half& b) : x(a), y(b) {}
    __half2(const __half2_raw& r) : x(__half_raw{r.x}), y(__half_raw{r.y}) {}
    operator __half2_raw() const { return __half2_raw{x.__x, y.__x}; }
};

typedef __half half;
typedef __half2 half2;

namespace sim {
namespace f16 {
static inline __half half_bits(unsigned short b) { return __half(__half_raw{b}); }
static inline double hd(__half h) { return Half::to_double(h.__x); }
}  // namespace f16
}  // namespace sim

// ---- conversions ----------------------------------------------------------------------------
static inline __half __float2half(float f) { return __half(f); }
static inline __half __float2half_rn(float f) { return __half(f); }
static inline __half __float2half_rz(float f) {
    return ::sim::f16::half_bits(::sim::f16::Half::from_double(f, ::sim::f16::kTowardZero));
}
static inline __half __float2half_rd(float f) {
    return ::sim::f16::half_bits(::sim::f16::Half::from_double(f, ::sim::f16::kDown));
}
static inline __half __float2half_ru(float f) {
    return ::sim::f16::half_bits(::sim::f16::Half::from_double(f, ::sim::f16::kUp));
}
static inline __half __double2half(double d) { return __half(d); }
static inline float __half2float(__half h) { return ::sim::f16::Half::to_float(h.__x); }
static inline __half __int2half_rn(int v) { return __half(v); }
static inline __half __uint2half_rn(unsigned int v) { return __half(v); }
static inline __half __short2half_rn(short v) { return __half(v); }
static inline __half __ll2half_rn(long long v) { return __half(v); }
static inline int __half2int_rn(__half h) { return (int)std::nearbyint(::sim::f16::hd(h)); }
static inline int __half2int_rz(__half h) { return (int)std::trunc(::sim::f16::hd(h)); }
static inline int __half2int_rd(__half h) { return (int)std::floor(::sim::f16::hd(h)); }
static inline int __half2int_ru(__half h) { return (int)std::ceil(::sim::f16::hd(h)); }
static inline unsigned short __half_as_ushort(__half h) { return h.__x; }
static inline short __half_as_short(__half h) { return (short)h.__x; }
static inline __half __ushort_as_half(unsigned short b) { return ::sim::f16::half_bits(b); }
static inline __half __short_as_half(short b) { return ::sim::f16::half_bits((unsigned short)b); }

static inline __half2 make_half2(__half x, __half y) { return __half2(x, y); }
static inline __half2 __halves2half2(__half x, __half y) { return __half2(x, y); }
static inline __half2 __half2half2(__half x) { return __half2(x, x); }
static inline __half2 __float2half2_rn(float f) { return __half2(__half(f), __half(f)); }
static inline __half2 __floats2half2_rn(float a, float b) { return __half2(__half(a), __half(b)); }
static inline __half2 __float22half2_rn(float2 f) { return __half2(__half(f.x), __half(f.y)); }
static inline float2 __half22float2(__half2 h) { return make_float2(__half2float(h.x), __half2float(h.y)); }
static inline __half __low2half(__half2 h) { return h.x; }
static inline __half __high2half(__half2 h) { return h.y; }
static inline float __low2float(__half2 h) { return __half2float(h.x); }
static inline float __high2float(__half2 h) { return __half2float(h.y); }
static inline __half2 __lows2half2(__half2 a, __half2 b) { return __half2(a.x, b.x); }
static inline __half2 __highs2half2(__half2 a, __half2 b) { return __half2(a.y, b.y); }
static inline __half2 __low2half2(__half2 h) { return __half2(h.x, h.x); }
static inline __half2 __high2half2(__half2 h) { return __half2(h.y, h.y); }
static inline __half2 __lowhigh2highlow(__half2 h) { return __half2(h.y, h.x); }

// ---- arithmetic, comparisons and math, shared with <cuda_bf16.h> ------------------------------
// SIM_F16_OPS(T, T2, FORMAT, BITS): the intrinsics CUDA overloads for both 16-bit types.
#define SIM_F16_OPS(T, T2, FORMAT, BITS)                                                                \
    static inline T __hadd(T a, T b) { return BITS(FORMAT::add(FORMAT::to_double(a.__x), FORMAT::to_double(b.__x))); } \
    static inline T __hsub(T a, T b) { return BITS(FORMAT::add(FORMAT::to_double(a.__x), -FORMAT::to_double(b.__x))); } \
    static inline T __hmul(T a, T b) { return BITS(FORMAT::mul(FORMAT::to_double(a.__x), FORMAT::to_double(b.__x))); } \
    static inline T __hdiv(T a, T b) { return BITS(FORMAT::div(FORMAT::to_double(a.__x), FORMAT::to_double(b.__x))); } \
    static inline T __hfma(T a, T b, T c) {                                                                \
        return BITS(FORMAT::fma(FORMAT::to_double(a.__x), FORMAT::to_double(b.__x), FORMAT::to_double(c.__x))); \
    }                                                                                                      \
    static inline T __hadd_rn(T a, T b) { return __hadd(a, b); }                                           \
    static inline T __hsub_rn(T a, T b) { return __hsub(a, b); }                                           \
    static inline T __hmul_rn(T a, T b) { return __hmul(a, b); }                                           \
    static inline T __hneg(T a) { return BITS((unsigned short)(a.__x ^ 0x8000u)); }                      \
    static inline T __habs(T a) { return BITS((unsigned short)(a.__x & 0x7fffu)); }                      \
    static inline bool __hisnan(T a) { return (a.__x & 0x7fffu) > FORMAT::kInf; }                         \
    static inline int __hisinf(T a) {                                                                      \
        return (a.__x & 0x7fffu) == FORMAT::kInf ? ((a.__x & 0x8000u) ? -1 : 1) : 0;                        \
    }                                                                                                      \
    static inline bool __heq(T a, T b) { return FORMAT::to_double(a.__x) == FORMAT::to_double(b.__x); }   \
    static inline bool __hne(T a, T b) { return FORMAT::to_double(a.__x) != FORMAT::to_double(b.__x) && !__hisnan(a) && !__hisnan(b); } \
    static inline bool __hlt(T a, T b) { return FORMAT::to_double(a.__x) < FORMAT::to_double(b.__x); }    \
    static inline bool __hle(T a, T b) { return FORMAT::to_double(a.__x) <= FORMAT::to_double(b.__x); }   \
    static inline bool __hgt(T a, T b) { return FORMAT::to_double(a.__x) > FORMAT::to_double(b.__x); }    \
    static inline bool __hge(T a, T b) { return FORMAT::to_double(a.__x) >= FORMAT::to_double(b.__x); }   \
    static inline bool __hequ(T a, T b) { return __hisnan(a) || __hisnan(b) || __heq(a, b); }             \
    static inline bool __hneu(T a, T b) { return !__heq(a, b); }                                           \
    static inline bool __hltu(T a, T b) { return __hisnan(a) || __hisnan(b) || __hlt(a, b); }             \
    static inline bool __hgtu(T a, T b) { return __hisnan(a) || __hisnan(b) || __hgt(a, b); }             \
    /* max/min: a NaN operand loses to a number (fmax); the _nan forms propagate it */                     \
    static inline T __hmax(T a, T b) {                                                                     \
        if (__hisnan(a)) return __hisnan(b) ? BITS(FORMAT::kNaN) : b;                                      \
        if (__hisnan(b)) return a;                                                                         \
        return FORMAT::to_double(a.__x) < FORMAT::to_double(b.__x) || ((a.__x & 0x8000u) && b.__x == 0u) ? b : a; \
    }                                                                                                      \
    static inline T __hmin(T a, T b) {                                                                     \
        if (__hisnan(a)) return __hisnan(b) ? BITS(FORMAT::kNaN) : b;                                      \
        if (__hisnan(b)) return a;                                                                         \
        return FORMAT::to_double(b.__x) < FORMAT::to_double(a.__x) || (a.__x == 0u && b.__x == 0x8000u) ? b : a; \
    }                                                                                                      \
    static inline T __hmax_nan(T a, T b) { return (__hisnan(a) || __hisnan(b)) ? BITS(FORMAT::kNaN) : __hmax(a, b); } \
    static inline T __hmin_nan(T a, T b) { return (__hisnan(a) || __hisnan(b)) ? BITS(FORMAT::kNaN) : __hmin(a, b); } \
    static inline T __hadd_sat(T a, T b) { return __hmin(__hmax(__hadd(a, b), T(0.0f)), T(1.0f)); }        \
    static inline T __hfma_relu(T a, T b, T c) {                                                           \
        T r = __hfma(a, b, c);                                                                             \
        return __hisnan(r) ? r : (FORMAT::to_double(r.__x) < 0.0 ? T(0.0f) : r);                           \
    }                                                                                                      \
    static inline T operator+(const T& a, const T& b) { return __hadd(a, b); }                             \
    static inline T operator-(const T& a, const T& b) { return __hsub(a, b); }                             \
    static inline T operator*(const T& a, const T& b) { return __hmul(a, b); }                             \
    static inline T operator/(const T& a, const T& b) { return __hdiv(a, b); }                             \
    static inline T& operator+=(T& a, const T& b) { return a = __hadd(a, b); }                             \
    static inline T& operator-=(T& a, const T& b) { return a = __hsub(a, b); }                             \
    static inline T& operator*=(T& a, const T& b) { return a = __hmul(a, b); }                             \
    static inline T& operator/=(T& a, const T& b) { return a = __hdiv(a, b); }                             \
    static inline T& operator++(T& a) { return a = __hadd(a, T(1.0f)); }                                   \
    static inline T& operator--(T& a) { return a = __hsub(a, T(1.0f)); }                                   \
    static inline T operator++(T& a, int) {                                                                \
        T old = a;                                                                                         \
        a = __hadd(a, T(1.0f));                                                                            \
        return old;                                                                                        \
    }                                                                                                      \
    static inline T operator--(T& a, int) {                                                                \
        T old = a;                                                                                         \
        a = __hsub(a, T(1.0f));                                                                            \
        return old;                                                                                        \
    }                                                                                                      \
    static inline T operator+(const T& a) { return a; }                                                    \
    static inline T operator-(const T& a) { return __hneg(a); }                                            \
    static inline bool operator==(const T& a, const T& b) { return __heq(a, b); }                          \
    static inline bool operator!=(const T& a, const T& b) { return __hneu(a, b); }                         \
    static inline bool operator<(const T& a, const T& b) { return __hlt(a, b); }                           \
    static inline bool operator<=(const T& a, const T& b) { return __hle(a, b); }                          \
    static inline bool operator>(const T& a, const T& b) { return __hgt(a, b); }                           \
    static inline bool operator>=(const T& a, const T& b) { return __hge(a, b); }                          \
    static inline T2 __hadd2(T2 a, T2 b) { return T2(__hadd(a.x, b.x), __hadd(a.y, b.y)); }               \
    static inline T2 __hsub2(T2 a, T2 b) { return T2(__hsub(a.x, b.x), __hsub(a.y, b.y)); }               \
    static inline T2 __hmul2(T2 a, T2 b) { return T2(__hmul(a.x, b.x), __hmul(a.y, b.y)); }               \
    static inline T2 __h2div(T2 a, T2 b) { return T2(__hdiv(a.x, b.x), __hdiv(a.y, b.y)); }               \
    static inline T2 __hfma2(T2 a, T2 b, T2 c) { return T2(__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y)); } \
    static inline T2 __hneg2(T2 a) { return T2(__hneg(a.x), __hneg(a.y)); }                               \
    static inline T2 __habs2(T2 a) { return T2(__habs(a.x), __habs(a.y)); }                               \
    static inline T2 __hmax2(T2 a, T2 b) { return T2(__hmax(a.x, b.x), __hmax(a.y, b.y)); }               \
    static inline T2 __hmin2(T2 a, T2 b) { return T2(__hmin(a.x, b.x), __hmin(a.y, b.y)); }               \
    static inline bool __hbeq2(T2 a, T2 b) { return __heq(a.x, b.x) && __heq(a.y, b.y); }                 \
    static inline T2 operator+(const T2& a, const T2& b) { return __hadd2(a, b); }                         \
    static inline T2 operator-(const T2& a, const T2& b) { return __hsub2(a, b); }                         \
    static inline T2 operator*(const T2& a, const T2& b) { return __hmul2(a, b); }                         \
    static inline T2 operator/(const T2& a, const T2& b) { return __h2div(a, b); }                         \
    static inline T2& operator+=(T2& a, const T2& b) { return a = __hadd2(a, b); }                         \
    static inline T2& operator-=(T2& a, const T2& b) { return a = __hsub2(a, b); }                         \
    static inline T2& operator*=(T2& a, const T2& b) { return a = __hmul2(a, b); }                         \
    static inline T2& operator/=(T2& a, const T2& b) { return a = __h2div(a, b); }                         \
    static inline T2 operator-(const T2& a) { return __hneg2(a); }                                         \
    static inline bool operator==(const T2& a, const T2& b) { return __hbeq2(a, b); }                      \
    static inline bool operator!=(const T2& a, const T2& b) { return !__hbeq2(a, b); }                     \
    static inline T hsqrt(T a) { return BITS(FORMAT::from_double(std::sqrt(FORMAT::to_double(a.__x)))); } \
    static inline T hrsqrt(T a) { return T(1.0f / std::sqrt((float)FORMAT::to_double(a.__x))); }          \
    static inline T hrcp(T a) { return BITS(FORMAT::div(1.0, FORMAT::to_double(a.__x))); }               \
    static inline T hexp(T a) { return T(std::exp((float)FORMAT::to_double(a.__x))); }                    \
    static inline T hexp2(T a) { return T(std::exp2((float)FORMAT::to_double(a.__x))); }                  \
    static inline T hexp10(T a) { return T(std::pow(10.0f, (float)FORMAT::to_double(a.__x))); }          \
    static inline T hlog(T a) { return T(std::log((float)FORMAT::to_double(a.__x))); }                    \
    static inline T hlog2(T a) { return T(std::log2((float)FORMAT::to_double(a.__x))); }                  \
    static inline T hlog10(T a) { return T(std::log10((float)FORMAT::to_double(a.__x))); }                \
    static inline T hsin(T a) { return T(std::sin((float)FORMAT::to_double(a.__x))); }                    \
    static inline T hcos(T a) { return T(std::cos((float)FORMAT::to_double(a.__x))); }                    \
    static inline T htanh(T a) { return T(std::tanh((float)FORMAT::to_double(a.__x))); }                  \
    static inline T hfloor(T a) { return BITS(FORMAT::from_double(std::floor(FORMAT::to_double(a.__x)))); } \
    static inline T hceil(T a) { return BITS(FORMAT::from_double(std::ceil(FORMAT::to_double(a.__x)))); }  \
    static inline T htrunc(T a) { return BITS(FORMAT::from_double(std::trunc(FORMAT::to_double(a.__x)))); } \
    static inline T hrint(T a) { return BITS(FORMAT::from_double(std::nearbyint(FORMAT::to_double(a.__x)))); } \
    static inline T atomicAdd(T* p, T v) {                                                                 \
        unsigned short* bits = reinterpret_cast<unsigned short*>(p);                                       \
        unsigned short old = __atomic_load_n(bits, __ATOMIC_SEQ_CST);                                      \
        while (!__atomic_compare_exchange_n(bits, &old, __hadd(BITS(old), v).__x, true, __ATOMIC_SEQ_CST,  \
                                            __ATOMIC_SEQ_CST)) {                                           \
        }                                                                                                  \
        return BITS(old);                                                                                  \
    }                                                                                                      \
    static inline T2 atomicAdd(T2* p, T2 v) {                                                              \
        unsigned int* word = reinterpret_cast<unsigned int*>(p);                                           \
        unsigned int old = __atomic_load_n(word, __ATOMIC_SEQ_CST);                                        \
        for (;;) {                                                                                         \
            T2 cur;                                                                                        \
            std::memcpy(&cur, &old, 4);                                                                    \
            T2 next = __hadd2(cur, v);                                                                     \
            unsigned int nbits;                                                                            \
            std::memcpy(&nbits, &next, 4);                                                                 \
            if (__atomic_compare_exchange_n(word, &old, nbits, true, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) { \
                return cur;                                                                                \
            }                                                                                              \
        }                                                                                                  \
    }

SIM_F16_OPS(__half, __half2, ::sim::f16::Half, ::sim::f16::half_bits)

#define CUDART_INF_FP16 ::sim::f16::half_bits(0x7c00u)
#define CUDART_NAN_FP16 ::sim::f16::half_bits(0x7fffu)
#define CUDART_MIN_DENORM_FP16 ::sim::f16::half_bits(0x0001u)
#define CUDART_MAX_NORMAL_FP16 ::sim::f16::half_bits(0x7bffu)
#define CUDART_NEG_ZERO_FP16 ::sim::f16::half_bits(0x8000u)
#define CUDART_ZERO_FP16 ::sim::f16::half_bits(0x0000u)
#define CUDART_ONE_FP16 ::sim::f16::half_bits(0x3c00u)

#endif  // CUDA_SIM_FP16_H
