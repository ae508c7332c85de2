// Inline PTX on a CPU: what the C++ that the front end writes for an `asm(...)` statement in
// device code calls (simulator/ptx.py translates the statement; one helper per instruction
// family, each following the definition in NVIDIA's PTX ISA). A PTX register is an unsigned
// integer of its width here (a predicate a bool); an instruction reads it as its type (the low
// bits; a float type reads the bit pattern) and writes its result sign-extended for a signed
// integer type and zero-extended otherwise, as the ISA's relaxed type-checking rules say.
// Self-contained: it includes the device header whose entry points it calls (cuda_sim.h includes
// it before NVIDIA's headers, whose inline functions hold asm statements).
#ifndef SIM_PTX_H
#define SIM_PTX_H

#include "sim_device.h"

#include <cfloat>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

namespace __sim {
namespace ptx {

// ---- what ptx_support.cpp provides (runtime state these helpers cannot reach otherwise) ---------
SIM_API unsigned int dynamic_smem_size();
SIM_API unsigned int smid();
SIM_API unsigned int nsmid();
SIM_API unsigned long long globaltimer();
// PTX exit: the calling CUDA thread ends here, as if its kernel had returned.
[[noreturn]] SIM_API void exit_thread(const char* file, int line);
// An asm statement of a library header outside the translated subset, reached: the kernel stops as
// at a trap, with ``what`` (the instruction) and the header's line in the report.
[[noreturn]] SIM_API void unsupported(const char* what, const char* file, int line);
// bar.sync / barrier.sync a{, b}: barrier 0 of the whole block (b: its thread count).
SIM_API void barrier(unsigned int id, unsigned int count, bool has_count, const char* file, int line);
// bar.red: kind 0 popc, 1 and, 2 or (as syncthreads_reduce).
SIM_API unsigned int barrier_reduce(int kind, unsigned int id, bool predicate, const char* file, int line);
// The memory order an atomic at ``p`` takes (racecheck orders a fenced publication, as cuda_sim.h's
// atomics do); ``requested`` elsewhere.
SIM_API int atomic_order(const void* p, int requested);

// ---- registers and operands -------------------------------------------------------------------
using u8 = std::uint8_t;
using u16 = std::uint16_t;
using u32 = std::uint32_t;
using u64 = std::uint64_t;
using s8 = std::int8_t;
using s16 = std::int16_t;
using s32 = std::int32_t;
using s64 = std::int64_t;
using f32 = float;
using f64 = double;

template <size_t N>
struct uint_of;
template <>
struct uint_of<1> {
    using type = u8;
};
template <>
struct uint_of<2> {
    using type = u16;
};
template <>
struct uint_of<4> {
    using type = u32;
};
template <>
struct uint_of<8> {
    using type = u64;
};
template <class T>
using bits_t = typename uint_of<sizeof(T)>::type;

template <class T>
static inline bits_t<T> to_bits(T v) {
    bits_t<T> b;
    std::memcpy(&b, &v, sizeof b);
    return b;
}
template <class T>
static inline T from_bits(bits_t<T> b) {
    T v;
    std::memcpy(&v, &b, sizeof v);
    return v;
}
static inline f32 f32_of(u32 b) { return from_bits<f32>(b); }
static inline f64 f64_of(u64 b) { return from_bits<f64>(b); }

// Register ``r`` read as instruction type T: its low bits ("chopped"), a float by its pattern.
template <class T, class R>
static inline T get(R r) {
    if constexpr (std::is_floating_point<T>::value) {
        return from_bits<T>(static_cast<bits_t<T>>(r));
    } else {
        return static_cast<T>(r);
    }
}
// A result of instruction type T into a register of type R: sign-extended when T is a signed
// integer, zero-extended otherwise (a float by its pattern).
template <class R, class T>
static inline R put(T v) {
    if constexpr (std::is_floating_point<T>::value) {
        return static_cast<R>(to_bits(v));
    } else {
        return static_cast<R>(v);
    }
}
// An input operand's C++ value into a register R of constraint value type V ("r": u32, "f":
// float, ...): numbers convert as an assignment would, pointers give their address, other
// trivially copyable values of V's size (a __half) give their bytes. By value: an array decays to
// its address, as in nvcc.
template <class R, class V, class E>
static inline R bind(E e) {
    if constexpr (std::is_pointer<E>::value || std::is_null_pointer<E>::value) {
        return static_cast<R>(reinterpret_cast<std::uintptr_t>(e));
    } else if constexpr (std::is_arithmetic<E>::value || std::is_enum<E>::value) {
        return put<R>(static_cast<V>(e));
    } else {
        static_assert(sizeof(E) == sizeof(V) && std::is_trivially_copyable<E>::value,
                      "an inline PTX operand must be a number, a pointer or a value of the constraint's size");
        V v;
        std::memcpy(&v, &e, sizeof v);
        return put<R>(v);
    }
}
// An output register back into its C++ lvalue (the inverse of bind).
template <class V, class R, class D>
static inline void store(D& d, R r) {
    const V v = get<V>(r);
    if constexpr (std::is_pointer<D>::value) {
        d = reinterpret_cast<D>(static_cast<std::uintptr_t>(v));
    } else if constexpr (std::is_arithmetic<D>::value || std::is_enum<D>::value) {
        d = static_cast<D>(v);
    } else {
        static_assert(sizeof(D) == sizeof(V) && std::is_trivially_copyable<D>::value,
                      "an inline PTX output must be a number, a pointer or a value of the constraint's size");
        std::memcpy(static_cast<void*>(&d), &v, sizeof v);
    }
}
template <class T>
static inline T* address(u64 a) {
    return reinterpret_cast<T*>(static_cast<std::uintptr_t>(a));
}

// ---- special registers ------------------------------------------------------------------------
static inline u32 laneid() { return block_rank() & 31u; }
static inline u32 warpid() { return block_rank() >> 5; }
static inline u32 lanemask_eq() { return 1u << laneid(); }
static inline u32 lanemask_lt() { return (1u << laneid()) - 1u; }
static inline u32 lanemask_le() { return lanemask_lt() | lanemask_eq(); }
static inline u32 lanemask_ge() { return ~lanemask_lt(); }
static inline u32 lanemask_gt() { return ~lanemask_le(); }
static inline u64 clock_64() { return static_cast<u64>(clock_cycles()); }
static inline u32 clock_32() { return static_cast<u32>(clock_64()); }
static inline u32 clock_hi() { return static_cast<u32>(clock_64() >> 32); }
static inline u32 component(const uint3& v, int c) { return c == 0 ? v.x : c == 1 ? v.y : v.z; }
static inline u32 component(const dim3& v, int c) { return c == 0 ? v.x : c == 1 ? v.y : v.z; }
static inline u32 tid(int c) { return component(tl_thread->thread_idx, c); }
static inline u32 ntid(int c) { return component(tl_thread->block_dim, c); }
static inline u32 ctaid(int c) { return component(tl_thread->block_idx, c); }
static inline u32 nctaid(int c) { return component(tl_thread->grid_dim, c); }

// ---- warp-level instructions ---------------------------------------------------------------------
// shfl.sync.mode.b32 d[|p], a, b, c, membermask (mode 0 up, 1 down, 2 bfly, 3 idx): the source
// lane j from b and c's clamp (c[4:0]) and segment mask (c[12:8]) as the ISA defines it; a lane
// out of range reads its own a and gets p false.
static inline u32 shfl(int mode, u32 a, u32 b, u32 c, u32 mask, bool* p, const char* file, int line) {
    const int lane = static_cast<int>(laneid());
    const int bval = static_cast<int>(b & 31u);
    const int cval = static_cast<int>(c & 31u);
    const int seg = static_cast<int>((c >> 8) & 31u);
    const int max_lane = (lane & seg) | (cval & ~seg);
    const int min_lane = lane & seg;
    int j = lane;
    bool in = false;
    switch (mode) {
        case 0: j = lane - bval; in = j >= max_lane; break;
        case 1: j = lane + bval; in = j <= max_lane; break;
        case 2: j = lane ^ bval; in = j <= max_lane; break;
        default: j = min_lane | (bval & ~seg); in = j <= max_lane; break;
    }
    if (!in) j = lane;
    const u32 d = static_cast<u32>(warp_op(kShflIdx, mask, a, j, 32, file, line));
    if (p != nullptr) *p = in;
    return d;
}
static inline u32 vote_ballot(bool a, u32 mask, const char* file, int line) {
    return static_cast<u32>(warp_op(kBallot, mask, a ? 1 : 0, 0, 32, file, line));
}
static inline bool vote_any(bool a, u32 mask, const char* file, int line) {
    return warp_op(kAny, mask, a ? 1 : 0, 0, 32, file, line) != 0;
}
static inline bool vote_all(bool a, u32 mask, const char* file, int line) {
    return warp_op(kAll, mask, a ? 1 : 0, 0, 32, file, line) != 0;
}
// vote.uni: the predicate is the same in every non-exited lane of the mask (all or none).
static inline bool vote_uni(bool a, u32 mask, const char* file, int line) {
    const bool all = vote_all(a, mask, file, line);
    return all || !vote_any(a, mask, file, line);
}
static inline u32 match_any(u64 a, u32 mask, const char* file, int line) {
    return static_cast<u32>(warp_op(kMatchAny, mask, a, 0, 32, file, line));
}
static inline u32 match_all(u64 a, u32 mask, bool* p, const char* file, int line) {
    const unsigned long long r = warp_op(kMatchAll, mask, a, 0, 32, file, line);
    if (p != nullptr) *p = (r >> 32) != 0;
    return static_cast<u32>(r);
}
// redux.sync.op: kind is a WarpKind reduction, signed for .s32 min/max.
static inline u32 redux(int kind, u32 a, bool is_signed, u32 mask, const char* file, int line) {
    return static_cast<u32>(warp_op(kind, mask, a, is_signed ? 1 : 0, 32, file, line));
}
static inline void warp_sync(u32 mask, const char* file, int line) {
    (void)warp_op(kSyncWarp, mask, 0, 0, 32, file, line);
}

// ---- bit-field and bit instructions ------------------------------------------------------------
template <class T>
using unsigned_t = std::make_unsigned_t<T>;
template <class T>
constexpr unsigned kBits = sizeof(T) * CHAR_BIT;
// The low n bits set (n from 0 to the width of U).
template <class U>
static inline U low_mask(unsigned n) {
    return n >= kBits<U> ? static_cast<U>(~U(0)) : static_cast<U>((U(1) << n) - 1u);
}
// bfe.type d, a, b, c: c bits of a from bit b, zero- or (signed types) sign-extended.
template <class T>
static inline T bfe(T a, u32 b, u32 c) {
    using U = unsigned_t<T>;
    constexpr unsigned msb = kBits<T> - 1;
    const unsigned pos = b & 0xffu, len = c & 0xffu;
    const U ua = static_cast<U>(a);
    if (len == 0) return T(0);
    if (pos > msb) {
        const bool sign = std::is_signed<T>::value && ((ua >> msb) & 1u);
        return static_cast<T>(sign ? ~U(0) : U(0));
    }
    const unsigned n = len < msb + 1 - pos ? len : msb + 1 - pos;  // bits that exist
    U d = static_cast<U>(ua >> pos) & low_mask<U>(n);
    if (std::is_signed<T>::value && ((d >> (n - 1)) & 1u)) d |= static_cast<U>(~low_mask<U>(n));
    return static_cast<T>(d);
}
// bfi.type f, a, b, c, d: the low d bits of a into b at bit c.
template <class T>
static inline T bfi(T a, T b, u32 c, u32 d) {
    constexpr unsigned msb = kBits<T> - 1;
    const unsigned pos = c & 0xffu, len = d & 0xffu;
    if (len == 0 || pos > msb) return b;
    const unsigned n = len < msb + 1 - pos ? len : msb + 1 - pos;
    const T field = static_cast<T>(low_mask<T>(n) << pos);
    return static_cast<T>((b & static_cast<T>(~field)) | (static_cast<T>(a << pos) & field));
}
// prmt.b32{.mode} d, a, b, c: mode 0 is the generic form (four selectors in c[15:0], bit 3 of
// each replicating the byte's sign), 1-6 .f4e .b4e .rc8 .ecl .ecr .rc16 (c[1:0] picks a row).
static inline u32 prmt(u32 a, u32 b, u32 c, int mode) {
    static const u16 kRows[6][4] = {
        {0x3210, 0x4321, 0x5432, 0x6543}, {0x5670, 0x6701, 0x7012, 0x0123}, {0x0000, 0x1111, 0x2222, 0x3333},
        {0x3210, 0x3211, 0x3222, 0x3333}, {0x0000, 0x1110, 0x2210, 0x3210}, {0x1010, 0x3232, 0x1010, 0x3232},
    };
    const u64 source = (static_cast<u64>(b) << 32) | a;
    const u32 selectors = mode == 0 ? c : kRows[mode - 1][c & 3u];
    u32 d = 0;
    for (int i = 0; i < 4; ++i) {
        const u32 sel = (selectors >> (4 * i)) & 0xfu;
        u32 byte = static_cast<u32>(source >> (8 * (sel & 7u))) & 0xffu;
        if (sel & 8u) byte = (byte & 0x80u) ? 0xffu : 0u;
        d |= byte << (8 * i);
    }
    return d;
}
// lop3.b32 d, a, b, c, immLut: bit i of d is bit (a_i b_i c_i) of immLut.
static inline u32 lop3(u32 a, u32 b, u32 c, u32 lut) {
    u32 d = 0;
    for (u32 k = 0; k < 8; ++k) {
        if ((lut >> k) & 1u) d |= ((k & 4u) ? a : ~a) & ((k & 2u) ? b : ~b) & ((k & 1u) ? c : ~c);
    }
    return d;
}
template <class T>
static inline T brev(T a) {
    using U = unsigned_t<T>;
    U x = static_cast<U>(a), r = 0;
    for (unsigned i = 0; i < kBits<T>; ++i, x >>= 1) r = static_cast<U>((r << 1) | (x & 1u));
    return static_cast<T>(r);
}
template <class T>
static inline u32 popc(T a) {
    return static_cast<u32>(__builtin_popcountll(static_cast<unsigned long long>(static_cast<unsigned_t<T>>(a))));
}
template <class T>
static inline u32 clz(T a) {
    const unsigned long long x = static_cast<unsigned_t<T>>(a);
    return x == 0 ? kBits<T> : static_cast<u32>(__builtin_clzll(x) - (64 - kBits<T>));
}
// bfind{.shiftamt}.type d, a: the most significant non-sign bit, 0xffffffff when there is none.
template <class T>
static inline u32 bfind(T a, bool shiftamt) {
    using U = unsigned_t<T>;
    U x = static_cast<U>(a);
    if (std::is_signed<T>::value && (x >> (kBits<T> - 1))) x = static_cast<U>(~x);
    if (x == 0) return 0xffffffffu;
    const u32 d = kBits<T> - 1 - clz(x);
    return shiftamt ? kBits<T> - 1 - d : d;
}
// shf.{l,r}.{wrap,clamp}.b32 d, a, b, c: the funnel {b, a} shifted by c (c mod 32 or at most 32).
static inline u32 shf(bool left, bool wrap, u32 a, u32 b, u32 c) {
    const u32 n = wrap ? (c & 31u) : (c < 32u ? c : 32u);
    const u64 funnel = (static_cast<u64>(b) << 32) | a;
    return left ? static_cast<u32>((funnel << n) >> 32) : static_cast<u32>(funnel >> n);
}

// vadd4 vsub4 vavrg4 vabsdiff4 vmin4 vmax4 (op 0..5) with the default byte selectors and mask:
// the four byte lanes of a and b (signed or not, per atype and btype), each result clamped to a
// byte with .sat (dtype's signedness), then summed into c (.add) or packed into d.
static inline u32 video4(int op, u32 a, u32 b, u32 c, bool sa, bool sb, bool sd, bool saturate, bool add) {
    long long sum = 0;
    u32 packed = 0;
    for (int i = 0; i < 4; ++i) {
        const u32 ba = (a >> (8 * i)) & 0xffu, bb = (b >> (8 * i)) & 0xffu;
        const long long x = sa ? static_cast<long long>(static_cast<s8>(ba)) : static_cast<long long>(ba);
        const long long y = sb ? static_cast<long long>(static_cast<s8>(bb)) : static_cast<long long>(bb);
        long long t;
        switch (op) {
            case 0: t = x + y; break;
            case 1: t = x - y; break;
            case 2: t = (x + y) >= 0 ? (x + y + 1) / 2 : (x + y - 1) / 2; break;  // rounded up, or floor
            case 3: t = x > y ? x - y : y - x; break;
            case 4: t = x < y ? x : y; break;
            default: t = x > y ? x : y; break;
        }
        if (saturate) t = sd ? (t < -128 ? -128 : t > 127 ? 127 : t) : (t < 0 ? 0 : t > 255 ? 255 : t);
        sum += t;
        packed |= (static_cast<u32>(t) & 0xffu) << (8 * i);
    }
    return add ? static_cast<u32>(static_cast<unsigned long long>(c) + static_cast<unsigned long long>(sum)) : packed;
}

// ---- integer arithmetic (wrapping, as the GPU's: computed unsigned) ----------------------------------
template <class T>
using wide_unsigned_t = std::conditional_t<(sizeof(T) > 4), unsigned long long, unsigned int>;
template <class T>
static inline T add(T a, T b) {
    using U = wide_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
}
template <class T>
static inline T sub(T a, T b) {
    using U = wide_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
}
template <class T>
static inline T mul_lo(T a, T b) {
    using U = wide_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
}
template <class T>
static inline T neg(T a) {
    return sub(T(0), a);
}
template <class T>
static inline T abs(T a) {
    return a < 0 ? neg(a) : a;
}
// The full product of two n-bit values as a 2n-bit one (__int128 for 64-bit operands).
template <class T>
using wide_t = std::conditional_t<
    sizeof(T) == 8, std::conditional_t<std::is_signed<T>::value, __int128, unsigned __int128>,
    std::conditional_t<std::is_signed<T>::value, long long, unsigned long long>>;
template <class T>
static inline wide_t<T> mul_full(T a, T b) {
    using W = wide_t<T>;
    using UW = std::make_unsigned_t<W>;
    return static_cast<W>(static_cast<UW>(static_cast<W>(a)) * static_cast<UW>(static_cast<W>(b)));
}
template <class T>
static inline T mul_hi(T a, T b) {
    using UW = std::make_unsigned_t<wide_t<T>>;
    return static_cast<T>(static_cast<UW>(mul_full(a, b)) >> kBits<T>);
}
// .wide: the 2n-bit product of two n-bit operands (16 and 32 bits).
template <class T>
using twice_t = std::conditional_t<
    sizeof(T) == 2, std::conditional_t<std::is_signed<T>::value, s32, u32>,
    std::conditional_t<std::is_signed<T>::value, s64, u64>>;
template <class T>
static inline twice_t<T> mul_wide(T a, T b) {
    return static_cast<twice_t<T>>(mul_full(a, b));
}
template <class T>
static inline T saturate_s(long long v) {
    const long long lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
    return static_cast<T>(v < lo ? lo : v > hi ? hi : v);
}
static inline s32 add_sat(s32 a, s32 b) { return saturate_s<s32>(static_cast<long long>(a) + b); }
static inline s32 sub_sat(s32 a, s32 b) { return saturate_s<s32>(static_cast<long long>(a) - b); }
static inline s32 mad_hi_sat(s32 a, s32 b, s32 c) {
    return saturate_s<s32>(static_cast<long long>(mul_hi(a, b)) + c);
}
// add.cc/addc and sub.cc/subc: a + b + carry and a - (b + borrow), the carry (borrow) out in *cf
// when cf is not null. Signed and unsigned types behave the same.
template <class T>
static inline T add_carry(T a, T b, u32 carry_in, u32* cf) {
    using U = unsigned_t<T>;
    const U ua = static_cast<U>(a), s = static_cast<U>(ua + static_cast<U>(b));
    const U r = static_cast<U>(s + (carry_in & 1u));
    if (cf != nullptr) *cf = (s < ua || r < s) ? 1u : 0u;
    return static_cast<T>(r);
}
template <class T>
static inline T sub_borrow(T a, T b, u32 borrow_in, u32* cf) {
    using U = unsigned_t<T>;
    const U ua = static_cast<U>(a), ub = static_cast<U>(b), t = static_cast<U>(ua - ub);
    const U r = static_cast<U>(t - (borrow_in & 1u));
    if (cf != nullptr) *cf = (ua < ub || t < (borrow_in & 1u)) ? 1u : 0u;
    return static_cast<T>(r);
}
// div and rem: a GPU's result for a zero divisor is unspecified (here: all ones, and a for rem),
// and MININT / -1 wraps; neither traps as a CPU's division would.
template <class T>
static inline T div(T a, T b) {
    if (b == 0) return static_cast<T>(~unsigned_t<T>(0));
    if (std::is_signed<T>::value && b == T(-1)) return neg(a);
    return static_cast<T>(a / b);
}
template <class T>
static inline T rem(T a, T b) {
    if (b == 0) return a;
    if (std::is_signed<T>::value && b == T(-1)) return T(0);
    return static_cast<T>(a % b);
}
template <class T>
static inline T shl(T a, u32 n) {
    using U = unsigned_t<T>;
    return n >= kBits<T> ? T(0) : static_cast<T>(static_cast<U>(static_cast<U>(a) << n));
}
template <class T>
static inline T shr(T a, u32 n) {
    if (n >= kBits<T>) return std::is_signed<T>::value && a < 0 ? T(-1) : T(0);
    return static_cast<T>(a >> n);
}
template <class T>
static inline T imin(T a, T b) {
    return a < b ? a : b;
}
template <class T>
static inline T imax(T a, T b) {
    return a > b ? a : b;
}
// ---- floating point ------------------------------------------------------------------------------
// Rounding modifiers: 0 .rn (also the default), 1 .rz, 2 .rm, 3 .rp.
enum Rounding { kRn = 0, kRz = 1, kRm = 2, kRp = 3 };
// Operations with an explicit rounding modifier (ptx_support.cpp: out of line, so never contracted
// into a fused multiply-add, as the ISA says): op 0 add, 1 sub, 2 mul, 3 fma, 4 div, 5 rcp, 6 sqrt.
SIM_API f32 rounded_f32(int op, int rnd, f32 a, f32 b, f32 c);
SIM_API f64 rounded_f64(int op, int rnd, f64 a, f64 b, f64 c);
static inline f32 rounded(int op, int rnd, f32 a, f32 b, f32 c) { return rounded_f32(op, rnd, a, b, c); }
static inline f64 rounded(int op, int rnd, f64 a, f64 b, f64 c) { return rounded_f64(op, rnd, a, b, c); }
// A single-precision NaN result is the canonical 0x7fffffff on a GPU.
static inline f32 canon(f32 x) { return x != x ? f32_of(0x7fffffffu) : x; }
static inline f64 canon(f64 x) { return x; }
static inline f32 ftz(f32 x) { return std::fpclassify(x) == FP_SUBNORMAL ? std::copysign(0.0f, x) : x; }
// .sat: clamped to [0.0, 1.0], NaN to +0.0.
template <class F>
static inline F sat(F x) {
    return x > F(0) ? (x < F(1) ? x : F(1)) : F(0);
}
static inline f64 ftz_if(f64 x) { return x; }
static inline f32 ftz_if(f32 x) { return ftz(x); }
// Flushes an input when ``flush`` (.ftz), which applies to .f32 only.
template <class F>
static inline F in(F x, bool flush) {
    return flush ? ftz_if(x) : x;
}
// A result with the instruction's .ftz and .sat applied, a NaN canonical.
template <class F>
static inline F finish(F r, bool flush, bool saturate) {
    if (flush) r = ftz_if(r);
    if (saturate) r = sat(r);
    return canon(r);
}
// add, sub, mul and fma with their modifiers: rnd (-1 when the instruction names none), .ftz, .sat.
template <class F>
static inline F fadd(F a, F b, int rnd, bool flush, bool saturate) {
    a = in(a, flush), b = in(b, flush);
    return finish(rnd < 0 ? a + b : rounded(0, rnd, a, b, F(0)), flush, saturate);
}
template <class F>
static inline F fsub(F a, F b, int rnd, bool flush, bool saturate) {
    a = in(a, flush), b = in(b, flush);
    return finish(rnd < 0 ? a - b : rounded(1, rnd, a, b, F(0)), flush, saturate);
}
template <class F>
static inline F fmul(F a, F b, int rnd, bool flush, bool saturate) {
    a = in(a, flush), b = in(b, flush);
    return finish(rnd < 0 ? a * b : rounded(2, rnd, a, b, F(0)), flush, saturate);
}
template <class F>
static inline F ffma(F a, F b, F c, int rnd, bool flush, bool saturate) {
    return finish(rounded(3, rnd, in(a, flush), in(b, flush), in(c, flush)), flush, saturate);
}
// div.rn/rz/rm/rp and div.full (IEEE division rounds within div.full's 2 ulp), rcp and sqrt.
template <class F>
static inline F fdiv(F a, F b, int rnd, bool flush) {
    return finish(rounded(4, rnd, in(a, flush), in(b, flush), F(0)), flush, false);
}
template <class F>
static inline F frcp(F a, int rnd, bool flush) {
    return finish(rounded(5, rnd, in(a, flush), F(0), F(0)), flush, false);
}
template <class F>
static inline F fsqrt(F a, int rnd, bool flush) {
    return finish(rounded(6, rnd, in(a, flush), F(0), F(0)), flush, false);
}
// div.approx.f32: a * (1 / b); for 2^126 < |b| < 2^128 the ISA gives a sign-preserving zero (NaN
// for an infinite a).
static inline f32 fdiv_approx(f32 a, f32 b, bool flush) {
    a = in(a, flush), b = in(b, flush);
    if (std::fabs(b) > 0x1p126f && std::isfinite(b) && a == a) {
        return std::isinf(a) ? canon(NAN) : std::copysign(0.0f, std::copysign(1.0f, a) * std::copysign(1.0f, b));
    }
    return finish(a / b, flush, false);
}
// The .approx functions, computed by the C library (closer than the ISA's bounds require).
static inline f32 frsqrt(f32 a, bool flush) { return finish(1.0f / std::sqrt(in(a, flush)), flush, false); }
static inline f64 frsqrt(f64 a, bool) { return 1.0 / std::sqrt(a); }
static inline f32 fex2(f32 a, bool flush) { return finish(std::exp2(in(a, flush)), flush, false); }
static inline f32 flg2(f32 a, bool flush) { return finish(std::log2(in(a, flush)), flush, false); }
static inline f32 fsin(f32 a, bool flush) { return finish(std::sin(in(a, flush)), flush, false); }
static inline f32 fcos(f32 a, bool flush) { return finish(std::cos(in(a, flush)), flush, false); }
static inline f32 ftanh(f32 a, bool flush) { return finish(std::tanh(in(a, flush)), flush, false); }
// neg and abs flip or clear the sign bit (a NaN keeps its payload).
static inline f32 fneg(f32 a, bool flush) { return f32_of(to_bits(in(a, flush)) ^ 0x80000000u); }
static inline f64 fneg(f64 a, bool) { return f64_of(to_bits(a) ^ 0x8000000000000000ull); }
static inline f32 fabs_(f32 a, bool flush) { return f32_of(to_bits(in(a, flush)) & 0x7fffffffu); }
static inline f64 fabs_(f64 a, bool) { return f64_of(to_bits(a) & 0x7fffffffffffffffull); }
// min and max: a NaN operand loses to a number (.NaN: wins, as the canonical NaN); -0.0 < +0.0.
template <class F>
static inline F fminmax(F a, F b, bool is_max, bool flush, bool nan_wins) {
    a = in(a, flush), b = in(b, flush);
    const bool na = a != a, nb = b != b;
    if (na || nb) return (nan_wins || (na && nb)) ? canon(std::numeric_limits<F>::quiet_NaN()) : (na ? b : a);
    const bool a_first = a == b ? (is_max ? !std::signbit(a) : std::signbit(a)) : (is_max ? a > b : a < b);
    return finish(a_first ? a : b, flush, false);
}
// setp comparisons (op: 0 eq, 1 ne, 2 lt, 3 le, 4 gt, 5 ge, 6 equ, 7 neu, 8 ltu, 9 leu, 10 gtu,
// 11 geu, 12 num, 13 nan): the plain ones are false with a NaN operand, the u ones true.
template <class F>
static inline bool fcompare(int op, F a, F b, bool flush) {
    a = in(a, flush), b = in(b, flush);
    const bool unordered = a != a || b != b;
    if (op >= 12) return (op == 13) == unordered;
    if (unordered) return op >= 6;
    switch (op % 6) {
        case 0: return a == b;
        case 1: return a != b;
        case 2: return a < b;
        case 3: return a <= b;
        case 4: return a > b;
        default: return a >= b;
    }
}

// ---- half precision (f16 and bf16 as their 16-bit patterns; ptx_support.cpp) ---------------------------
constexpr int kF16 = 0;
constexpr int kBF16 = 1;
// A double, a signed or an unsigned 64-bit integer (exactly) rounded to format ``fmt`` as ``rnd`` says;
// a NaN gives the canonical 0x7fff.
SIM_API u16 half_from_f64(int fmt, f64 x, int rnd);
SIM_API u16 half_from_s64(int fmt, long long x, int rnd);
SIM_API u16 half_from_u64(int fmt, unsigned long long x, int rnd);
// A half's value, exactly.
SIM_API f64 half_value(int fmt, u16 h);
static inline u16 half_from_double(int fmt, f64 x, int rnd) { return half_from_f64(fmt, x, rnd); }
template <class I>
static inline u16 half_from_int(int fmt, I x, int rnd) {
    if constexpr (std::is_signed<I>::value) {
        return half_from_s64(fmt, static_cast<long long>(x), rnd);
    } else {
        return half_from_u64(fmt, static_cast<unsigned long long>(x), rnd);
    }
}
// .relu: negative to +0, NaN to the canonical NaN; .satfinite: an infinity to the largest finite
// value of its sign; .sat: clamped to [0, 1].
static inline u16 half_inf(int fmt) { return fmt == kF16 ? u16(0x7c00) : u16(0x7f80); }
static inline u16 half_relu(int fmt, u16 h) {
    if ((h & 0x7fffu) > half_inf(fmt)) return 0x7fff;
    return (h & 0x8000u) ? u16(0) : h;
}
static inline u16 half_satfinite(int fmt, u16 h) {
    return (h & 0x7fffu) == half_inf(fmt) ? static_cast<u16>(h - 1u) : h;
}
static inline u16 half_sat(int fmt, u16 h) { return half_from_f64(fmt, sat(half_value(fmt, h)), kRn); }

// ---- cvt -----------------------------------------------------------------------------------------
// Integer rounding modifiers .rni .rzi .rmi .rpi (0..3) of a float to an integral float.
template <class F>
static inline F round_integral(F x, int irnd) {
    switch (irnd) {
        case 1: return std::trunc(x);
        case 2: return std::floor(x);
        case 3: return std::ceil(x);
        default: return std::nearbyint(x);
    }
}
// A float (exactly, as a double) to an integer of ``bits`` bits, rounded by ``irnd`` and clamped to
// its range; a NaN gives 0 unless the source is .f64 or the integer has 64 bits, which give
// 1 << (bits - 1) (ptx_support.cpp).
SIM_API long long float_to_s64(f64 x, int irnd, bool source_f64, int bits);
SIM_API unsigned long long float_to_u64(f64 x, int irnd, bool source_f64, int bits);
template <class I>
static inline I float_to_int(f64 x, int irnd, bool source_f64) {
    if constexpr (std::is_signed<I>::value) {
        return static_cast<I>(float_to_s64(x, irnd, source_f64, kBits<I>));
    } else {
        return static_cast<I>(float_to_u64(x, irnd, source_f64, kBits<I>));
    }
}
// An integer to f32/f64, and f64 to f32, rounded as ``rnd`` says (out of line unless .rn).
SIM_API f32 int_to_f32(long long x, bool is_unsigned, int rnd);
SIM_API f64 int_to_f64(long long x, bool is_unsigned, int rnd);
SIM_API f32 f64_to_f32(f64 x, int rnd);
template <class F, class I>
static inline F int_to_float(I x, int rnd) {
    if (rnd == kRn) return static_cast<F>(x);
    const long long bits = static_cast<long long>(x);
    return std::is_same<F, f32>::value ? static_cast<F>(int_to_f32(bits, !std::is_signed<I>::value, rnd))
                                       : static_cast<F>(int_to_f64(bits, !std::is_signed<I>::value, rnd));
}
static inline f32 narrow_f32(f64 x, int rnd) { return canon(rnd == kRn ? static_cast<f32>(x) : f64_to_f32(x, rnd)); }
// Integer to integer with .sat: clamped to D's range (S's value, exactly).
template <class D, class S>
static inline D int_saturate(S x) {
    if constexpr (std::is_signed<S>::value) {
        if (x < 0) {
            if (!std::is_signed<D>::value) return D(0);
            if (static_cast<long long>(x) < static_cast<long long>(std::numeric_limits<D>::min()))
                return std::numeric_limits<D>::min();
            return static_cast<D>(x);
        }
    }
    const unsigned long long ux = static_cast<unsigned long long>(x);
    if (ux > static_cast<unsigned long long>(std::numeric_limits<D>::max())) return std::numeric_limits<D>::max();
    return static_cast<D>(x);
}

}  // namespace ptx
}  // namespace __sim

// Last: the memory and half-precision parts of the translation use the helpers above.
#include "sim_ptx_memory.h"
#include "sim_ptx_half.h"

#endif  // SIM_PTX_H
