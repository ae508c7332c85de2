// memcheck's block-loop regions whose checks are made once per block (included by block_loops.h):
// the test of a block's values that the front end writes before such a region's loop
// (simulator/block_loops_hoist.py: index_span and its operations, global_within) and the loop that
// runs the region's copy without ASan's and UBSan's checks where it passes (for_each_unchecked_thread).
#ifndef CUDA_CPU_SIMULATOR_BLOCK_LOOPS_HOIST_H
#define CUDA_CPU_SIMULATOR_BLOCK_LOOPS_HOIST_H

#include <cstdint>
#include <type_traits>

#if !defined(SIM_MODE_FREE)
namespace __sim {

#if defined(SIM_HOIST_CHECKS)
// memcheck: a block-loop region whose every check the block's values keep from firing
// (simulator/block_loops_hoist.py: for every thread the loop runs, each subscript of its shared
// arrays within its extent, each element of global memory addressable, no integer operation
// overflowing or wrapping): the loop and the region's body (which the front end marks no_sanitize
// in this copy) run without ASan's and UBSan's checks, in the same order as the instrumented loop,
// which runs instead for a block whose values do not pass.
//
// No thread of it can fault, and a block that faulted in an earlier region stopped at that region's
// end, so the loop need not look for a fault between threads: it runs the fibers' order (threads
// first .. n-1, then 0 .. first-1) as runs of a row's threads, those with x below ``below`` alone.
// Each run is one inner loop over x in thread order, the running thread's index stored once a run
// (nothing of such a region reads it), so that g++ may vectorise it as a fast build's loop: the
// copy reads and writes the per-thread slots with plain accesses (per_thread::load, store) and
// computes again the thread-index locals whose initializers the block's test showed to fit their
// types (kRecomputeUnchecked), and a body with a fast form gets it (std::true_type) where the
// block's column check ``fast`` passed (block_loops_simd.py: the same values). Vectorising keeps
// the result of the run's sequential order, so every thread computes what it does in the fibers'.
#define SIM_UNCHECKED __attribute__((always_inline, no_sanitize("address", "undefined")))
// The launch's time-out flag, read as the builtin: std::atomic's own load, an instrumented inline
// function, would be a call in this loop (g++ inlines no function whose sanitizer flags differ).
static inline SIM_UNCHECKED bool timed_out(const PlainBlock& b) {
    static_assert(sizeof(std::atomic<bool>) == sizeof(bool), "an atomic bool is a bool");
    return __atomic_load_n(reinterpret_cast<const bool*>(b.timed_out), __ATOMIC_RELAXED);
}
template <class Fast, class Body>
SIM_DEVICE_FMA_TARGET static inline SIM_UNCHECKED bool unchecked_rows(
    const PlainBlock& b, Body& body, unsigned from, unsigned to, unsigned end_x) {
    constexpr bool fast_form = kFastForm<Body>;
    constexpr bool indexed = kIndexed<Body>;
    uint3* const idx = b.thread_idx;
    uint3* const running = running_thread_idx();
    int* const linear = b.linear;
    const unsigned nx = b.dim.x, ny = b.dim.y;
    for (unsigned row = from / nx; row * nx < to; ++row) {
        const unsigned start = row * nx;
        const unsigned lo = from > start ? from - start : 0u;
        unsigned hi = to - start < nx ? to - start : nx;
        hi = hi < end_x ? hi : end_x;
        const unsigned y = row % ny, z = row / ny;
        if (lo < hi) set_running_thread(idx, running, linear, uint3{lo, y, z}, (int)(start + lo));
        if constexpr (indexed) {
            // A signed counter and index, as in indexed_rows: the compiler takes them not to wrap.
            const int base = (int)start;
            for (int x = (int)lo; x < (int)hi; ++x) {
                if constexpr (fast_form) {
                    body(uint3{(unsigned)x, y, z}, Fast{}, base + x);
                } else {
                    body(uint3{(unsigned)x, y, z}, base + x);
                }
            }
        } else {
            for (unsigned x = lo; x < hi; ++x) {
                set_running_thread(idx, running, linear, uint3{x, y, z}, (int)(start + x));
                body();
            }
        }
        if (timed_out(b)) return false;
    }
    return true;
}
template <class Fast, class Body>
SIM_DEVICE_FMA_TARGET static inline SIM_UNCHECKED void unchecked_order(const PlainBlock& b, Body& body, int below) {
    const unsigned n = b.dim.x * b.dim.y * b.dim.z;
    const unsigned first = b.first != nullptr ? (unsigned)*b.first : 0u;
    const unsigned end_x = below < 0 ? 0u : (unsigned)below;
    if (unchecked_rows<Fast>(b, body, first, n, end_x)) unchecked_rows<Fast>(b, body, 0u, first, end_x);
}
// ``fast``: the block's check for a body's fast form (false for any other body); only then does
// the loop take ``below``, as a fast build's does (for_each_plain_thread in
// block_loops_thread_loops.h): a bound computed from a column index is exact only where the check
// passed. Without it every thread runs and evaluates the region's condition itself.
template <class Body>
SIM_DEVICE_FMA_TARGET static inline __attribute__((no_sanitize("address", "undefined"))) void
for_each_unchecked_thread(const PlainBlock& b, bool fast, int below, Body&& body) {
    if constexpr (kFastForm<Body>) {
        if (fast) {
            unchecked_order<std::true_type>(b, body, below);
            return;
        }
    }
    unchecked_order<std::false_type>(b, body, 2147483647);
}
template <class Body>
SIM_DEVICE_FMA_TARGET static inline __attribute__((no_sanitize("address", "undefined"))) void
for_each_unchecked_thread(const PlainBlock& b, Body&& body) {
    for_each_unchecked_thread(b, false, 2147483647, static_cast<Body&&>(body));
}
inline constexpr bool kHoistChecks = true;
inline constexpr bool kRecomputeUnchecked = true;
#else
// Never called (kHoistChecks): the front end writes one text for every build.
template <class... Args>
static inline void for_each_unchecked_thread(Args&&...) {}
inline constexpr bool kHoistChecks = false;
inline constexpr bool kRecomputeUnchecked = false;
#endif

// The values an integer expression takes over the threads a region's loop runs, as 64-bit bounds;
// ``ok``: no operation on the way overflowed or wrapped, and no conversion changed a value (see
// simulator/block_loops_hoist.py). A span whose ``lo`` passes its ``hi`` is empty: no thread (or no
// step of a loop) evaluates it.
struct index_span {
    long long lo, hi;
    bool ok;
};
// The operations compute with overflow-checking builtins and compare 64-bit values, where no
// check can fire: in memcheck's build they go without UBSan's checks, inlined into the block's
// test (always_inline: g++ inlines no other function whose sanitizer flags differ), which costs a
// short block most of its time otherwise.
#define SIM_SPAN __attribute__((always_inline, no_sanitize("address", "undefined")))
static inline SIM_SPAN index_span span_of(long long v) { return {v, v, true}; }
// A member of threadIdx over the threads a loop runs: 0 to the block's extent less one, or to the
// prefix bound less one.
static inline SIM_SPAN index_span thread_span(unsigned int extent, int below) {
    const long long n = below < (long long)extent ? below : (long long)extent;
    return {0, n - 1, true};
}
// ``s`` as a value of a type holding ``lo`` .. ``hi``: unchanged only where it lies within.
static inline SIM_SPAN index_span span_in(index_span s, long long lo, long long hi) {
    return {s.lo, s.hi, s.ok && (s.lo > s.hi || (s.lo >= lo && s.hi <= hi))};
}
static inline SIM_SPAN index_span span_add(index_span a, index_span b) {
    index_span s{0, 0, a.ok && b.ok};
    s.ok = !__builtin_add_overflow(a.lo, b.lo, &s.lo) && !__builtin_add_overflow(a.hi, b.hi, &s.hi) && s.ok;
    return s;
}
static inline SIM_SPAN index_span span_sub(index_span a, index_span b) {
    index_span s{0, 0, a.ok && b.ok};
    s.ok = !__builtin_sub_overflow(a.lo, b.hi, &s.lo) && !__builtin_sub_overflow(a.hi, b.lo, &s.hi) && s.ok;
    return s;
}
static inline SIM_SPAN index_span span_mul(index_span a, index_span b) {
    long long p[4];
    bool ok = a.ok && b.ok;
    ok = !__builtin_mul_overflow(a.lo, b.lo, &p[0]) && ok;
    ok = !__builtin_mul_overflow(a.lo, b.hi, &p[1]) && ok;
    ok = !__builtin_mul_overflow(a.hi, b.lo, &p[2]) && ok;
    ok = !__builtin_mul_overflow(a.hi, b.hi, &p[3]) && ok;
    index_span s{p[0], p[0], ok && a.lo <= a.hi && b.lo <= b.hi};
    for (long long v : p) {
        s.lo = v < s.lo ? v : s.lo;
        s.hi = v > s.hi ? v : s.hi;
    }
    if (a.lo > a.hi || b.lo > b.hi) return {1, 0, true};  // empty: no thread evaluates it
    return s;
}
// Whether no operation of an integer expression of the region overflows or wraps for any thread.
static inline SIM_SPAN bool span_fits(index_span s) { return s.lo > s.hi || s.ok; }
// Whether every value of ``s`` is a subscript within ``extent`` (or no thread makes the access).
static inline SIM_SPAN bool span_within(index_span s, long long extent) {
    return s.lo > s.hi || (s.ok && s.lo >= 0 && s.hi < extent);
}
// Whether every element ``p[i]``, ``i`` in ``s``, is addressable memory to AddressSanitizer (a live
// allocation's) and ``p`` aligned for ``T`` (so is then each element), or no thread makes the
// access: then no check of such an access can fire. Never true outside memcheck's build.
template <class T>
static inline bool global_within([[maybe_unused]] const T* p, index_span s) {
    if (s.lo > s.hi) return true;
#if defined(SIM_HOIST_CHECKS)
    long long from = 0, to = 0;
    if (!s.ok || p == nullptr || reinterpret_cast<uintptr_t>(p) % alignof(T) != 0 ||
        __builtin_mul_overflow(s.lo, (long long)sizeof(T), &from) ||
        __builtin_mul_overflow(s.hi, (long long)sizeof(T), &to) ||
        __builtin_add_overflow(to, (long long)sizeof(T), &to)) {
        return false;
    }
    const uintptr_t base = reinterpret_cast<uintptr_t>(p);
    uintptr_t first = 0, end = 0;
    // The bytes' addresses may not wrap (UBSan's pointer-overflow check).
    if (__builtin_add_overflow(base, (uintptr_t)from, &first) != (from < 0) ||
        __builtin_add_overflow(base, (uintptr_t)to, &end) != (to < 0) || end <= first) {
        return false;
    }
    return __asan_region_is_poisoned(reinterpret_cast<void*>(first), end - first) == nullptr;
#else
    return false;
#endif
}

}  // namespace __sim
#endif  // !SIM_MODE_FREE

#endif  // CUDA_CPU_SIMULATOR_BLOCK_LOOPS_HOIST_H
