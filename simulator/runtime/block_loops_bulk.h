// The shared-memory race check's regions judged once per block (included by block_loops.h): the
// judgement of a region's accesses from their ranges that the front end writes before its loop
// (simulator/block_loops_bulk.py: bulk_clean, bulk_judge) and the loop that runs the region
// unjudged where it finds no two threads meeting (for_each_bulk_thread).
#ifndef CUDA_CPU_SIMULATOR_BLOCK_LOOPS_BULK_H
#define CUDA_CPU_SIMULATOR_BLOCK_LOOPS_BULK_H

#include <cstddef>
#include <cstdint>
#include <type_traits>

#if !defined(SIM_MODE_FREE)
#if defined(SIM_SHARED_RACES)
namespace __sim {

// SIMULATOR_LAUNCH_LOG=1 (shared_races.cpp): each run of such a region counted, clean or not.
extern bool g_bulk_counting SIM_API;
SIM_API void bulk_counted(bool clean);

// An integer of a region's subscript over the threads its loop runs: ``base + step * x`` for the
// thread's threadIdx.x; ``ok``: no operation on the way overflowed, and each value stayed within
// the type the program computes it in (then the program's value is this one, for every thread).
struct bulk_index {
    long long base, step;
    bool ok;
};

// The accesses of one region to shared memory over the threads x = 0 .. last of a block's row (the
// front end adds each: simulator/block_loops_bulk.py), and whether any byte one thread writes is
// read or written by another thread (clean: none).
class bulk_judge {
   public:
    static constexpr int kMaxAccesses = 16;  // block_loops_bulk.MAX_ACCESSES

    __attribute__((no_sanitize_thread)) bulk_judge(const PlainBlock& b, int below) {
        const long long width = b.dim.x, end = below < width ? (below < 0 ? 0 : below) : width;
        last_ = end - 1;
        rows_ = (long long)b.dim.y * b.dim.z;
    }

    __attribute__((no_sanitize_thread)) bulk_index x() const { return {0, 1, true}; }
    __attribute__((no_sanitize_thread)) static bulk_index of(long long v) { return {v, 0, true}; }
    __attribute__((no_sanitize_thread)) static bulk_index add(bulk_index a, bulk_index b) {
        bulk_index s{0, 0, a.ok && b.ok};
        s.ok = !__builtin_add_overflow(a.base, b.base, &s.base) && !__builtin_add_overflow(a.step, b.step, &s.step) &&
               s.ok;
        return s;
    }
    __attribute__((no_sanitize_thread)) static bulk_index sub(bulk_index a, bulk_index b) {
        bulk_index s{0, 0, a.ok && b.ok};
        s.ok = !__builtin_sub_overflow(a.base, b.base, &s.base) && !__builtin_sub_overflow(a.step, b.step, &s.step) &&
               s.ok;
        return s;
    }
    // A product of which one side is the same for every thread (else not affine: not ok).
    __attribute__((no_sanitize_thread)) static bulk_index mul(bulk_index a, bulk_index b) {
        if (a.step != 0 && b.step != 0) return {0, 0, false};
        if (a.step != 0) return mul(b, a);
        bulk_index s{0, 0, a.ok && b.ok};
        s.ok = !__builtin_mul_overflow(a.base, b.base, &s.base) && !__builtin_mul_overflow(a.base, b.step, &s.step) &&
               s.ok;
        return s;
    }
    // ``v`` as a value of a type holding ``lo`` .. ``hi``: its values for x = 0 .. last lie between
    // those for the first and the last thread, which must lie within.
    __attribute__((no_sanitize_thread)) bulk_index in(bulk_index v, long long lo, long long hi) const {
        if (!v.ok || last_ < 0) return v;
        long long end = 0;
        v.ok = !__builtin_mul_overflow(v.step, last_, &end) && !__builtin_add_overflow(v.base, end, &end) &&
               v.base >= lo && v.base <= hi && end >= lo && end <= hi;
        return v;
    }
    // An access of ``size`` bytes at element ``i`` of the array at ``at``, a write or a read.
    __attribute__((no_sanitize_thread)) void access(const volatile void* at, size_t size, bulk_index i, bool write) {
        if (count_ == kMaxAccesses) {
            ok_ = false;
            return;
        }
        Access& a = accesses_[count_++];
        const long long base = (long long)reinterpret_cast<uintptr_t>(at), bytes = (long long)size;
        long long end = 0;
        a.ok = i.ok && !__builtin_mul_overflow(i.base, bytes, &a.start) && !__builtin_add_overflow(a.start, base, &a.start) &&
               !__builtin_mul_overflow(i.step, bytes, &a.step) &&
               !__builtin_mul_overflow(a.step, last_ < 0 ? 0 : last_, &end) && !__builtin_add_overflow(a.start, end, &end);
        // Far from the ends of a long long, so that the differences below cannot overflow.
        constexpr long long kFar = 1LL << 60;
        a.ok = a.ok && a.start > -kFar && a.start < kFar && end > -kFar && end < kFar;
        a.size = bytes;
        a.write = write;
    }

    // Whether no byte that a thread writes is read or written by another of the threads x = 0 ..
    // last of the block (exact for two accesses of one stride; for two of different strides, whether
    // the bytes all threads touch by one lie apart from those of the other).
    __attribute__((no_sanitize_thread)) bool clean() const {
        if ((last_ + 1) * rows_ <= 1) return true;  // one thread, or none: no two threads meet
        if (!ok_) return false;
        bool writes = false;
        for (int i = 0; i < count_; ++i) {
            if (!accesses_[i].ok) return false;
            writes = writes || accesses_[i].write;
        }
        if (!writes) return true;
        if (rows_ > 1) return false;  // threads apart in y or z only touch the same bytes
        for (int w = 0; w < count_; ++w) {
            if (!accesses_[w].write) continue;
            for (int a = 0; a < count_; ++a) {
                if (meet(accesses_[w], accesses_[a])) return false;
            }
        }
        return true;
    }

   private:
    struct Access {
        long long start, step, size;  // thread x's bytes: [start + step * x, + size)
        bool write, ok;
    };

    static long long floor_div(long long a, long long b) {  // b > 0
        return a >= 0 ? a / b : -((-a + b - 1) / b);
    }

    // Whether a byte of ``w`` for one thread is a byte of ``a`` for another thread.
    __attribute__((no_sanitize_thread)) bool meet(const Access& w, const Access& a) const {
        const long long d = w.start - a.start;
        if (w.step == a.step) {
            // Threads x and x + k meet where step * k lies in (d - a.size, d + w.size), k != 0 and
            // |k| <= last (the same set of k for -step).
            const long long step = w.step < 0 ? -w.step : w.step;
            if (step == 0) return d - a.size < 0 && 0 < d + w.size;
            const long long lo_k = floor_div(d - a.size, step) + 1, hi_k = -floor_div(-(d + w.size), step) - 1;
            const long long lo = lo_k > -last_ ? lo_k : -last_, hi = hi_k < last_ ? hi_k : last_;
            return lo <= hi && !(lo == 0 && hi == 0);
        }
        long long w_lo = w.start, w_hi = w.start + w.step * last_, a_lo = a.start, a_hi = a.start + a.step * last_;
        if (w_lo > w_hi) w_lo = w_hi, w_hi = w.start;
        if (a_lo > a_hi) a_lo = a_hi, a_hi = a.start;
        return w_lo < a_hi + a.size && a_lo < w_hi + w.size;
    }

    Access accesses_[kMaxAccesses];
    int count_ = 0;
    bool ok_ = true;
    long long last_ = -1, rows_ = 1;
};

// Whether the region whose accesses ``add`` gives a bulk_judge meets no two threads of ``b`` below
// ``below`` (the region's loop's prefix bound) at a byte one of them writes (see bulk_judge). Not
// inlined into the kernel, whose code ThreadSanitizer instruments: the judge's work, inlined here,
// stays without its calls.
template <class Add>
static inline __attribute__((no_sanitize_thread)) bool bulk_clean(const PlainBlock& b, int below, Add&& add) {
    bulk_judge j(b, below);
    add(j);
    const bool clean = j.clean();
    if (__builtin_expect(g_bulk_counting, false)) bulk_counted(clean);
    return clean;
}

// A region bulk_clean found clean: no thread reads or writes a byte another writes, so no access of
// its epoch can be half of a hazard, and it runs as an unjudged region does (for_each_unjudged_thread
// in block_loops_thread_loops.h: this loop and the body, which the front end marks no_sanitize_thread, without
// ThreadSanitizer's calls), in thread order (no order gives another result), over the threads of a
// row below ``below``. ``kTaken``: the region is one ``if (X < S)`` whose bound ``below`` is S
// (block_loops_simd.below), so the body's fast form, which takes the condition as true, is exact for
// those threads and vectorises as a fast build's loop does.
template <bool kTaken, class Body>
SIM_DEVICE_FMA_TARGET static inline __attribute__((no_sanitize_thread)) void for_each_bulk_thread(
    const PlainBlock& b, int below, Body&& body) {
    if constexpr (kFastForm<Body>) {
        indexed_rows<kTaken ? 2 : 1>(b, body, below);
    } else {
        plain_thread_loop<true>(b, static_cast<Body&&>(body), below);
    }
}

}  // namespace __sim
#endif  // SIM_SHARED_RACES
#endif  // !SIM_MODE_FREE

#endif  // CUDA_CPU_SIMULATOR_BLOCK_LOOPS_BULK_H
