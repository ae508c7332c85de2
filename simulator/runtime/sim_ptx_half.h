// Inline PTX's 16-bit and packed forms: arithmetic, min/max, abs/neg, comparisons, the .approx
// functions and atomic additions on .f16 and .bf16 values and their .f16x2/.bf16x2 pairs (held as
// their bit patterns, element 0 in the low half), and the .s16x2/.u16x2 integer pairs, each as
// the PTX ISA defines it: one rounding to nearest even, a NaN result the canonical 0x7fff, .ftz
// flushing subnormal inputs and results to a zero of their sign, .sat clamping to [0, 1] (a NaN to
// +0), .relu clamping a negative result to +0 (a NaN stays the canonical NaN).
// Included by sim_ptx.h, whose helpers (half_value, half_from_double, fcompare) it uses.
#ifndef SIM_PTX_HALF_H
#define SIM_PTX_HALF_H

namespace __sim {
namespace ptx {

// op 0 add, 1 sub, 2 mul, 3 fma of halves, rounded once to nearest even (ptx_support.cpp).
SIM_API u16 half_arith(int fmt, int op, u16 a, u16 b, u16 c);

constexpr u16 kHalfNaN = 0x7fff;
static inline bool half_is_nan(int fmt, u16 h) { return (h & 0x7fffu) > half_inf(fmt); }
// .ftz: a subnormal (exponent field zero) to the zero of its sign.
static inline u16 half_flush(int fmt, u16 h) { return (h & half_inf(fmt)) == 0 ? static_cast<u16>(h & 0x8000u) : h; }
static inline u16 half_in(int fmt, u16 h, bool flush) { return flush ? half_flush(fmt, h) : h; }
static inline u16 half_lo(u32 x) { return static_cast<u16>(x); }
static inline u16 half_hi(u32 x) { return static_cast<u16>(x >> 16); }
static inline u32 half_pair(u16 lo, u16 hi) { return static_cast<u32>(lo) | (static_cast<u32>(hi) << 16); }

// add, sub, mul, fma with .ftz (f16 only), .sat and .relu (fma).
static inline u16 half_op(int fmt, int op, u16 a, u16 b, u16 c, bool flush, bool saturate, bool relu) {
    u16 r = half_arith(fmt, op, half_in(fmt, a, flush), half_in(fmt, b, flush), half_in(fmt, c, flush));
    if (flush) r = half_flush(fmt, r);
    if (saturate) r = half_sat(fmt, r);
    if (relu) r = half_relu(fmt, r);
    return r;
}
static inline u32 half2_op(int fmt, int op, u32 a, u32 b, u32 c, bool flush, bool saturate, bool relu) {
    return half_pair(half_op(fmt, op, half_lo(a), half_lo(b), half_lo(c), flush, saturate, relu),
                     half_op(fmt, op, half_hi(a), half_hi(b), half_hi(c), flush, saturate, relu));
}

// min and max: a NaN loses to a number (.NaN: any NaN wins, as the canonical NaN); -0 < +0.
static inline u16 half_minmax(int fmt, u16 a, u16 b, bool is_max, bool flush, bool nan_wins) {
    a = half_in(fmt, a, flush), b = half_in(fmt, b, flush);
    const bool na = half_is_nan(fmt, a), nb = half_is_nan(fmt, b);
    if (na || nb) return (nan_wins || (na && nb)) ? kHalfNaN : (na ? b : a);
    const f64 x = half_value(fmt, a), y = half_value(fmt, b);
    const bool a_first = x == y ? (is_max ? !(a & 0x8000u) : (a & 0x8000u) != 0) : (is_max ? x > y : x < y);
    return a_first ? a : b;
}
static inline u32 half2_minmax(int fmt, u32 a, u32 b, bool is_max, bool flush, bool nan_wins) {
    return half_pair(half_minmax(fmt, half_lo(a), half_lo(b), is_max, flush, nan_wins),
                     half_minmax(fmt, half_hi(a), half_hi(b), is_max, flush, nan_wins));
}

// abs and neg clear or flip the sign bit (a NaN keeps its payload).
static inline u16 half_abs(int fmt, u16 a, bool flush) { return static_cast<u16>(half_in(fmt, a, flush) & 0x7fffu); }
static inline u16 half_neg(int fmt, u16 a, bool flush) { return static_cast<u16>(half_in(fmt, a, flush) ^ 0x8000u); }
static inline u32 half2_abs(int fmt, u32 a, bool flush) {
    return half_pair(half_abs(fmt, half_lo(a), flush), half_abs(fmt, half_hi(a), flush));
}
static inline u32 half2_neg(int fmt, u32 a, bool flush) {
    return half_pair(half_neg(fmt, half_lo(a), flush), half_neg(fmt, half_hi(a), flush));
}

// ex2.approx (fn 0) and tanh.approx (fn 1): the C library's value rounded to the format, within
// the ISA's error bounds.
static inline u16 half_approx(int fmt, int fn, u16 a, bool flush) {
    a = half_in(fmt, a, flush);
    if (half_is_nan(fmt, a)) return kHalfNaN;
    const f64 x = half_value(fmt, a);
    const u16 r = half_from_double(fmt, fn == 0 ? std::exp2(x) : std::tanh(x), kRn);
    return flush ? half_flush(fmt, r) : r;
}
static inline u32 half2_approx(int fmt, int fn, u32 a, bool flush) {
    return half_pair(half_approx(fmt, fn, half_lo(a), flush), half_approx(fmt, fn, half_hi(a), flush));
}

// setp/set comparisons of halves (op as fcompare's).
static inline bool half_compare(int fmt, int op, u16 a, u16 b, bool flush) {
    return fcompare<f64>(op, half_value(fmt, half_in(fmt, a, flush)), half_value(fmt, half_in(fmt, b, flush)), false);
}

// atom.add.noftz of a half or a pair of halves: a compare-and-swap loop over the bits.
static inline u16 atom_half_add(int fmt, u64 a, u16 b, int order) {
    u16* p = address<u16>(a);
    const int mo = atom_order(p, order);
    u16 old = __atomic_load_n(p, __ATOMIC_RELAXED);
    while (!__atomic_compare_exchange_n(p, &old, half_arith(fmt, 0, old, b, 0), true, mo, fail_order(mo))) {
    }
    return old;
}
static inline u32 atom_half2_add(int fmt, u64 a, u32 b, int order) {
    u32* p = address<u32>(a);
    const int mo = atom_order(p, order);
    u32 old = __atomic_load_n(p, __ATOMIC_RELAXED);
    for (;;) {
        const u32 next = half_pair(half_arith(fmt, 0, half_lo(old), half_lo(b), 0), half_arith(fmt, 0, half_hi(old), half_hi(b), 0));
        if (__atomic_compare_exchange_n(p, &old, next, true, mo, fail_order(mo))) return old;
    }
}

// The .s16x2/.u16x2 integer pairs: op 0 add (wrapping), 2 min, 3 max (.relu: then at least 0).
static inline u16 int16_op(int op, u16 a, u16 b, bool is_signed, bool relu) {
    const int x = is_signed ? static_cast<s16>(a) : a, y = is_signed ? static_cast<s16>(b) : b;
    int r = op == 0 ? x + y : op == 2 ? (x < y ? x : y) : (x > y ? x : y);
    if (relu && r < 0) r = 0;
    return static_cast<u16>(r);
}
static inline u32 int16x2_op(int op, u32 a, u32 b, bool is_signed, bool relu) {
    return half_pair(int16_op(op, half_lo(a), half_lo(b), is_signed, relu), int16_op(op, half_hi(a), half_hi(b), is_signed, relu));
}

}  // namespace ptx
}  // namespace __sim

#endif  // SIM_PTX_HALF_H
