// Simulator stand-in for <cuda_bf16.h>: __nv_bfloat16 and __nv_bfloat162 with CUDA's
// conversions, operators and intrinsics (the same names as for __half, overloaded). Arithmetic
// is exact and rounded once to nearest even (see sim_float16.h), like the GPU's.
#ifndef CUDA_SIM_BF16_H
#define CUDA_SIM_BF16_H

#include "cuda_fp16.h"

struct __nv_bfloat16_raw {
    unsigned short x;
};
struct __nv_bfloat162_raw {
    unsigned short x, y;
};

struct __attribute__((aligned(2))) __nv_bfloat16 {
    unsigned short __x;

    __nv_bfloat16() = default;
    __nv_bfloat16(const __nv_bfloat16_raw& r) : __x(r.x) {}
    __nv_bfloat16(float f) : __x(::sim::f16::BFloat16::from_double(f)) {}
    __nv_bfloat16(double d) : __x(::sim::f16::BFloat16::from_double(d)) {}
    __nv_bfloat16(int v) : __x(::sim::f16::BFloat16::from_double(v)) {}
    __nv_bfloat16(unsigned int v) : __x(::sim::f16::BFloat16::from_double(v)) {}
    __nv_bfloat16(short v) : __x(::sim::f16::BFloat16::from_double(v)) {}
    __nv_bfloat16(unsigned short v) : __x(::sim::f16::BFloat16::from_double(v)) {}
    __nv_bfloat16(long long v) : __x(::sim::f16::BFloat16::from_double((double)v)) {}
    __nv_bfloat16(unsigned long long v) : __x(::sim::f16::BFloat16::from_double((double)v)) {}
    __nv_bfloat16& operator=(const __nv_bfloat16_raw& r) {
        __x = r.x;
        return *this;
    }
    operator float() const { return ::sim::f16::BFloat16::to_float(__x); }
    operator __nv_bfloat16_raw() const { return __nv_bfloat16_raw{__x}; }
};

struct __attribute__((aligned(4))) __nv_bfloat162 {
    __nv_bfloat16 x, y;

    __nv_bfloat162() = default;
    __nv_bfloat162(const __nv_bfloat16& a, const __nv_bfloat16& b) : x(a), y(b) {}
    __nv_bfloat162(const __nv_bfloat162_raw& r) : x(__nv_bfloat16_raw{r.x}), y(__nv_bfloat16_raw{r.y}) {}
    operator __nv_bfloat162_raw() const { return __nv_bfloat162_raw{x.__x, y.__x}; }
};

typedef __nv_bfloat16 nv_bfloat16;
typedef __nv_bfloat162 nv_bfloat162;

namespace sim {
namespace f16 {
static inline __nv_bfloat16 bf16_bits(unsigned short b) { return __nv_bfloat16(__nv_bfloat16_raw{b}); }
static inline double bd(__nv_bfloat16 h) { return BFloat16::to_double(h.__x); }
}  // namespace f16
}  // namespace sim

// ---- conversions ----------------------------------------------------------------------------
static inline __nv_bfloat16 __float2bfloat16(float f) { return __nv_bfloat16(f); }
static inline __nv_bfloat16 __float2bfloat16_rn(float f) { return __nv_bfloat16(f); }
static inline __nv_bfloat16 __float2bfloat16_rz(float f) {
    return ::sim::f16::bf16_bits(::sim::f16::BFloat16::from_double(f, ::sim::f16::kTowardZero));
}
static inline __nv_bfloat16 __float2bfloat16_rd(float f) {
    return ::sim::f16::bf16_bits(::sim::f16::BFloat16::from_double(f, ::sim::f16::kDown));
}
static inline __nv_bfloat16 __float2bfloat16_ru(float f) {
    return ::sim::f16::bf16_bits(::sim::f16::BFloat16::from_double(f, ::sim::f16::kUp));
}
static inline __nv_bfloat16 __double2bfloat16(double d) { return __nv_bfloat16(d); }
static inline float __bfloat162float(__nv_bfloat16 h) { return ::sim::f16::BFloat16::to_float(h.__x); }
static inline __nv_bfloat16 __int2bfloat16_rn(int v) { return __nv_bfloat16(v); }
static inline int __bfloat162int_rn(__nv_bfloat16 h) { return (int)std::nearbyint(::sim::f16::bd(h)); }
static inline int __bfloat162int_rz(__nv_bfloat16 h) { return (int)std::trunc(::sim::f16::bd(h)); }
static inline unsigned short __bfloat16_as_ushort(__nv_bfloat16 h) { return h.__x; }
static inline short __bfloat16_as_short(__nv_bfloat16 h) { return (short)h.__x; }
static inline __nv_bfloat16 __ushort_as_bfloat16(unsigned short b) { return ::sim::f16::bf16_bits(b); }
static inline __nv_bfloat16 __short_as_bfloat16(short b) { return ::sim::f16::bf16_bits((unsigned short)b); }

static inline __nv_bfloat162 make_bfloat162(__nv_bfloat16 x, __nv_bfloat16 y) { return __nv_bfloat162(x, y); }
static inline __nv_bfloat162 __halves2bfloat162(__nv_bfloat16 x, __nv_bfloat16 y) { return __nv_bfloat162(x, y); }
static inline __nv_bfloat162 __bfloat162bfloat162(__nv_bfloat16 x) { return __nv_bfloat162(x, x); }
static inline __nv_bfloat162 __float2bfloat162_rn(float f) { return __nv_bfloat162(f, f); }
static inline __nv_bfloat162 __floats2bfloat162_rn(float a, float b) {
    return __nv_bfloat162(__nv_bfloat16(a), __nv_bfloat16(b));
}
static inline __nv_bfloat162 __float22bfloat162_rn(float2 f) {
    return __nv_bfloat162(__nv_bfloat16(f.x), __nv_bfloat16(f.y));
}
static inline float2 __bfloat1622float2(__nv_bfloat162 h) {
    return make_float2(__bfloat162float(h.x), __bfloat162float(h.y));
}
static inline __nv_bfloat16 __low2bfloat16(__nv_bfloat162 h) { return h.x; }
static inline __nv_bfloat16 __high2bfloat16(__nv_bfloat162 h) { return h.y; }
static inline float __low2float(__nv_bfloat162 h) { return __bfloat162float(h.x); }
static inline float __high2float(__nv_bfloat162 h) { return __bfloat162float(h.y); }
static inline __nv_bfloat162 __lows2bfloat162(__nv_bfloat162 a, __nv_bfloat162 b) { return __nv_bfloat162(a.x, b.x); }
static inline __nv_bfloat162 __highs2bfloat162(__nv_bfloat162 a, __nv_bfloat162 b) {
    return __nv_bfloat162(a.y, b.y);
}
static inline __nv_bfloat162 __low2bfloat162(__nv_bfloat162 h) { return __nv_bfloat162(h.x, h.x); }
static inline __nv_bfloat162 __high2bfloat162(__nv_bfloat162 h) { return __nv_bfloat162(h.y, h.y); }
static inline __nv_bfloat162 __lowhigh2highlow(__nv_bfloat162 h) { return __nv_bfloat162(h.y, h.x); }

SIM_F16_OPS(__nv_bfloat16, __nv_bfloat162, ::sim::f16::BFloat16, ::sim::f16::bf16_bits)

#define CUDART_INF_BF16 ::sim::f16::bf16_bits(0x7f80u)
#define CUDART_NAN_BF16 ::sim::f16::bf16_bits(0x7fffu)
#define CUDART_MIN_DENORM_BF16 ::sim::f16::bf16_bits(0x0001u)
#define CUDART_MAX_NORMAL_BF16 ::sim::f16::bf16_bits(0x7f7fu)
#define CUDART_NEG_ZERO_BF16 ::sim::f16::bf16_bits(0x8000u)
#define CUDART_ZERO_BF16 ::sim::f16::bf16_bits(0x0000u)
#define CUDART_ONE_BF16 ::sim::f16::bf16_bits(0x3f80u)

#endif  // CUDA_SIM_BF16_H
