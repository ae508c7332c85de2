// sim-runtime: per mode
// What inline PTX needs from the runtime beyond the device API (sim_ptx.h declares these): the
// special registers that read launch or worker state (%dynamic_smem_size, %smid, %nsmid,
// %globaltimer), PTX exit, bar.sync / bar.red with their operands checked, and the floating-point
// work kept out of line (explicit rounding modifiers, half-precision and integer conversions), so
// that a kernel with many asm statements compiles quickly.
#include "sim_internal.h"
#include "sim_ptx.h"

#include <time.h>

#include <atomic>
#include <cfenv>

#if defined(SIM_MEMCHECK)
#include <sanitizer/asan_interface.h>
#endif

namespace __sim {
#if defined(SIM_RACECHECK) || defined(SIM_SHARED_RACES)
bool atomic_orders(const void* p);  // device_api.cpp
#endif

namespace ptx {

namespace {
// The number a worker thread takes as its SM id (one per OS thread that runs blocks).
std::atomic<unsigned int> g_ptx_next_sm{0};
thread_local unsigned int tl_ptx_sm = ~0u;

// Stops the running CUDA thread with one line naming what it reached: the launch fails.
[[noreturn]] void ptx_refuse(const char* what, const char* file, int line) {
    RunState& run = run_state();
    require_device(run, what, file, line);
    run.in_kernel = false;
    report("%s: %s at %s:%d in %s thread %s: the simulator runs barrier 0 of the whole block only; the launch "
           "fails with cudaErrorLaunchFailure",
           mode_name(), what, file, line, where(run.block).c_str(), tid_str(*run.fiber).c_str());
    stop_thread(run.block, run.fiber);
}
}  // namespace

unsigned int dynamic_smem_size() {
    const RunState& run = run_state();
    return run.block != nullptr ? static_cast<unsigned int>(run.block->launch->spec.smem) : 0u;
}

unsigned int nsmid() { return static_cast<unsigned int>(occupancy_sm_count()); }

// The workers stand for the modelled device's SMs: each OS thread that runs blocks keeps one id.
unsigned int smid() {
    if (tl_ptx_sm == ~0u) tl_ptx_sm = g_ptx_next_sm.fetch_add(1, std::memory_order_relaxed);
    return tl_ptx_sm % nsmid();
}

// A nanosecond timer, as %globaltimer is on a GPU: the host's real-time clock.
unsigned long long globaltimer() {
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<unsigned long long>(ts.tv_sec) * 1000000000ull + static_cast<unsigned long long>(ts.tv_nsec);
}

void exit_thread(const char* file, int line) {
    RunState& run = run_state();
    require_device(run, "PTX exit", file, line);
    // The front end runs a kernel that can reach exit on fibers; a plain loop has no thread to end.
    if (run.block->plain) refuse_wait(run.block, "PTX exit", file, line);
#if defined(SIM_MEMCHECK)
    // The thread leaves in the middle of its frames: their redzones must not outlive it on the
    // stack the worker gives the next block's thread.
    __asan_unpoison_memory_region(run.fiber->stack, run.fiber->stack_size);
#endif
    run.in_kernel = false;
    finish_thread(run);
}

void unsupported(const char* what, const char* file, int line) {
    char text[1024];
    std::snprintf(text, sizeof text, "%s (reached at %s:%d)", what, file, line);
    trap_with(text);
}

// Barrier 0 with every thread of the block (a thread count, when given, must be the block's,
// rounded up to whole warps): named barriers and partial counts are refused when reached.
void barrier(unsigned int id, unsigned int count, bool has_count, const char* file, int line) {
    const RunState& run = run_state();
    require_device(run, "bar.sync", file, line);
    const unsigned int threads = static_cast<unsigned int>(run.block->nthreads);
    if (id != 0 || (has_count && count != (threads + 31u) / 32u * 32u)) {
        ptx_refuse("bar.sync with a named barrier or a thread count other than the block's", file, line);
    }
    syncthreads(file, line);
}

unsigned int barrier_reduce(int kind, unsigned int id, bool predicate, const char* file, int line) {
    if (id != 0) ptx_refuse("bar.red (a named barrier)", file, line);
    return static_cast<unsigned int>(syncthreads_reduce(kind, predicate ? 1 : 0, file, line));
}

// ---- floating point -------------------------------------------------------------------------------
namespace {
// While alive, the calling thread rounds as ``rnd`` asks (a worker's fibers share the control
// word, and no fiber switch happens inside these functions).
struct PtxRoundingScope {
    int saved;
    explicit PtxRoundingScope(int rnd) : saved(std::fegetround()) {
        std::fesetround(rnd == kRz ? FE_TOWARDZERO : rnd == kRm ? FE_DOWNWARD : rnd == kRp ? FE_UPWARD : FE_TONEAREST);
    }
    ~PtxRoundingScope() { std::fesetround(saved); }
    PtxRoundingScope(const PtxRoundingScope&) = delete;
    PtxRoundingScope& operator=(const PtxRoundingScope&) = delete;
};
// A value the compiler may neither fold nor move across the rounding scope.
template <class T>
T ptx_opaque(T v) {
    asm volatile("" : "+m"(v));
    return v;
}
template <class F>
F ptx_rounded(int op, int rnd, F a, F b, F c) {
    const PtxRoundingScope scope(rnd);
    a = ptx_opaque(a), b = ptx_opaque(b), c = ptx_opaque(c);
    F r;
    switch (op) {
        case 0: r = a + b; break;
        case 1: r = a - b; break;
        case 2: r = a * b; break;
        case 3: r = std::fma(a, b, c); break;
        case 4: r = a / b; break;
        case 5: r = F(1) / a; break;
        default: r = std::sqrt(a); break;
    }
    return ptx_opaque(r);
}
}  // namespace

f32 rounded_f32(int op, int rnd, f32 a, f32 b, f32 c) { return ptx_rounded(op, rnd, a, b, c); }
f64 rounded_f64(int op, int rnd, f64 a, f64 b, f64 c) { return ptx_rounded(op, rnd, a, b, c); }

f32 int_to_f32(long long x, bool is_unsigned, int rnd) {
    const PtxRoundingScope scope(rnd);
    return ptx_opaque(is_unsigned ? static_cast<f32>(ptx_opaque(static_cast<unsigned long long>(x)))
                                  : static_cast<f32>(ptx_opaque(x)));
}
f64 int_to_f64(long long x, bool is_unsigned, int rnd) {
    const PtxRoundingScope scope(rnd);
    return ptx_opaque(is_unsigned ? static_cast<f64>(ptx_opaque(static_cast<unsigned long long>(x)))
                                  : static_cast<f64>(ptx_opaque(x)));
}
f32 f64_to_f32(f64 x, int rnd) {
    const PtxRoundingScope scope(rnd);
    return ptx_opaque(static_cast<f32>(ptx_opaque(x)));
}

namespace {
template <class I>
I ptx_float_to_int(f64 x, int irnd, bool source_f64, int bits) {
    const bool is_signed = std::is_signed<I>::value;
    const I hi = is_signed ? static_cast<I>((I(1) << (bits - 2)) - 1 + (I(1) << (bits - 2)))
                           : static_cast<I>(bits == 64 ? ~0ull : (1ull << bits) - 1);
    const I lo = is_signed ? static_cast<I>(-hi - 1) : I(0);
    if (x != x) {
        if (!source_f64 && bits < 64) return I(0);
        return is_signed ? lo : static_cast<I>(1ull << (bits - 1));
    }
    const f64 r = round_integral(x, irnd);
    if (r <= static_cast<f64>(lo)) return lo;
    if (r >= std::ldexp(1.0, is_signed ? bits - 1 : bits)) return hi;  // above the largest value
    return static_cast<I>(r);
}
}  // namespace

long long float_to_s64(f64 x, int irnd, bool source_f64, int bits) {
    return ptx_float_to_int<long long>(x, irnd, source_f64, bits);
}
unsigned long long float_to_u64(f64 x, int irnd, bool source_f64, int bits) {
    return ptx_float_to_int<unsigned long long>(x, irnd, source_f64, bits);
}

// ---- half precision ---------------------------------------------------------------------------------
namespace {
struct PtxHalfFormat {
    int precision;  // significand bits with the hidden bit
    int emin, emax, bias, exponent_bits;
    u16 inf;
};
constexpr PtxHalfFormat kPtxHalf[2] = {{11, -14, 15, 15, 5, 0x7c00}, {8, -126, 127, 127, 8, 0x7f80}};

// (-1)^sign * m * 2^e (exact) rounded to the format as ``rnd`` says.
u16 ptx_encode_half(const PtxHalfFormat& f, bool sign, u64 m, int e, int rnd) {
    const u16 s = sign ? 0x8000u : 0u;
    if (m == 0) return s;
    const int top = e + 63 - __builtin_clzll(m);  // the exponent of m's leading bit
    int q = (top > f.emin ? top : f.emin) - (f.precision - 1);  // the exponent of the result's last bit
    const int drop = q - e;
    u64 r;
    if (drop <= 0) {
        r = m << -drop;
    } else {
        u64 rest;
        bool above, half;
        if (drop >= 64) {
            r = 0;
            rest = m;
            above = drop == 64 && m > (u64(1) << 63);
            half = drop == 64 && m == (u64(1) << 63);
        } else {
            r = m >> drop;
            rest = m & ((u64(1) << drop) - 1);
            above = rest > (u64(1) << (drop - 1));
            half = rest == (u64(1) << (drop - 1));
        }
        bool up = false;
        if (rnd == kRn) up = above || (half && (r & 1u));
        if (rnd == kRm) up = sign && rest != 0;
        if (rnd == kRp) up = !sign && rest != 0;
        if (up) ++r;
    }
    if (r >> f.precision) {  // the rounding carried into a new bit
        r >>= 1;
        ++q;
    }
    const u64 hidden = u64(1) << (f.precision - 1);
    if (r < hidden) return static_cast<u16>(s | r);  // subnormal
    const int exponent = q + f.precision - 1;
    if (exponent > f.emax) {
        const bool to_inf = rnd == kRn || (rnd == kRm && sign) || (rnd == kRp && !sign);
        return static_cast<u16>(s | (to_inf ? f.inf : f.inf - 1u));
    }
    return static_cast<u16>(s | (static_cast<u64>(exponent + f.bias) << (f.precision - 1)) | (r - hidden));
}
}  // namespace

u16 half_from_f64(int fmt, f64 x, int rnd) {
    const PtxHalfFormat& f = kPtxHalf[fmt];
    if (x != x) return 0x7fff;
    const bool sign = std::signbit(x);
    if (std::isinf(x)) return static_cast<u16>((sign ? 0x8000u : 0u) | f.inf);
    int e = 0;
    const f64 frac = std::frexp(std::fabs(x), &e);  // |x| = frac * 2^e, frac in [0.5, 1)
    return ptx_encode_half(f, sign, static_cast<u64>(std::ldexp(frac, 53)), e - 53, rnd);
}
u16 half_from_s64(int fmt, long long x, int rnd) {
    const u64 m = x < 0 ? u64(0) - static_cast<u64>(x) : static_cast<u64>(x);
    return ptx_encode_half(kPtxHalf[fmt], x < 0, m, 0, rnd);
}
u16 half_from_u64(int fmt, unsigned long long x, int rnd) { return ptx_encode_half(kPtxHalf[fmt], false, x, 0, rnd); }

f64 half_value(int fmt, u16 h) {
    const PtxHalfFormat& f = kPtxHalf[fmt];
    const int exponent = (h >> (f.precision - 1)) & ((1 << f.exponent_bits) - 1);
    const u64 mant = h & ((1u << (f.precision - 1)) - 1u);
    const f64 sign = (h & 0x8000u) ? -1.0 : 1.0;
    if (exponent == (1 << f.exponent_bits) - 1) return mant ? std::numeric_limits<f64>::quiet_NaN() : sign * INFINITY;
    if (exponent == 0) return sign * std::ldexp(static_cast<f64>(mant), f.emin - (f.precision - 1));
    return sign * std::ldexp(static_cast<f64>(mant | (u64(1) << (f.precision - 1))), exponent - f.bias - (f.precision - 1));
}

namespace {
// a + b rounded to odd: the exact sum's neighbour whose last bit is set, unless the sum is exact
// (TwoSum gives the rounding error exactly). One more rounding of it to a format of 51 or fewer
// significand bits is then the exact sum's correct rounding: no double rounding.
f64 ptx_sum_to_odd(f64 a, f64 b) {
    const f64 s = ptx_opaque(a + b);
    if (!std::isfinite(s)) return s;
    const f64 bb = ptx_opaque(s - a);
    const f64 err = (a - (s - bb)) + (b - bb);
    if (err == 0 || (to_bits(s) & 1u)) return s;
    return std::nextafter(s, err > 0 ? INFINITY : -INFINITY);
}
}  // namespace

// Halves are exact as doubles, and so are their products (at most 22 significand bits, exponents
// far inside a double's): every op is one exact product and one sum rounded to odd, then rounded
// to the format.
u16 half_arith(int fmt, int op, u16 a, u16 b, u16 c) {
    const f64 x = half_value(fmt, a), y = half_value(fmt, b);
    f64 r;
    switch (op) {
        case 0: r = ptx_sum_to_odd(x, y); break;
        case 1: r = ptx_sum_to_odd(x, -y); break;
        case 2: r = ptx_opaque(x * y); break;
        default: r = ptx_sum_to_odd(ptx_opaque(x * y), half_value(fmt, c)); break;
    }
    return half_from_f64(fmt, r, kRn);
}

int atomic_order(const void* p, int requested) {
#if defined(SIM_RACECHECK) || defined(SIM_SHARED_RACES)
    if (requested == __ATOMIC_RELAXED && atomic_orders(p)) return __ATOMIC_SEQ_CST;
#else
    (void)p;
#endif
    return requested;
}

}  // namespace ptx
}  // namespace __sim
