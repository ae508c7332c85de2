// The thread loops a block-loop region runs in (included by block_loops.h): a body called for each
// thread of a block, with its threadIdx set (simulator/block_loops.py writes the calls): the plain
// loop in a fast build's order or the fibers', its fast form (a column index's signed sums, a prefix
// region's bound), the race check's unjudged loop, and a grid-stride loop's flagged rounds.
#ifndef CUDA_CPU_SIMULATOR_BLOCK_LOOPS_THREAD_LOOPS_H
#define CUDA_CPU_SIMULATOR_BLOCK_LOOPS_THREAD_LOOPS_H

#include <atomic>
#include <type_traits>

#if !defined(SIM_MODE_FREE)
namespace __sim {

// Where a thread loop writes the running thread's threadIdx: through the declaration kernel code
// reads (NVIDIA's, const), as g++ takes a const object for unchanging and would otherwise keep one
// thread's threadIdx for all of them in a body inlined into the loop. (The runtime's own loop calls
// kernels through a pointer and has no such declaration.)
static inline SIM_UNJUDGED_INLINE uint3* running_thread_idx() {
#if defined(CUDA_CPU_SIMULATOR)
    return const_cast<uint3*>(&::threadIdx);
#else
    return &tls_thread_idx;
#endif
}

// The forms of a region's body (simulator/block_loops.py writes them): ``(threadIdx, fast, linear)``
// (kFastForm), ``(threadIdx, linear)`` (kTakesIndex: threadIdx is the loop's own index) or ``()``
// (the body reads the running thread's index the loop stores). Every loop tells them apart by these.
template <class Body>
inline constexpr bool kFastForm = std::is_invocable<Body&, uint3, std::false_type, int>::value;
template <class Body>
inline constexpr bool kTakesIndex = std::is_invocable<Body&, uint3, int>::value;
template <class Body>
inline constexpr bool kIndexed = kFastForm<Body> || kTakesIndex<Body>;

// The rows of ``b`` for a body taking ``(threadIdx, linear)`` (``kFast`` 0), or ``(threadIdx,
// fast, linear)`` with ``fast`` std::false_type (1) or std::true_type (2), in a fast build's order:
// threads adjacent in x are adjacent iterations of the inner loop, and the index is stored once a
// row (as in for_each_plain_thread, below). Only the threads of a row with x below ``below`` run.
template <int kFast, class Body>
SIM_DEVICE_FMA_TARGET static inline SIM_UNJUDGED_INLINE void indexed_rows(
    const PlainBlock& b, Body& body, const int below = 2147483647) {
    uint3* const idx = b.thread_idx;
    uint3* const running = running_thread_idx();
    int* const linear = b.linear;
    const dim3 dim = b.dim;
    const std::atomic<bool>* const timed_out = b.timed_out;
    int i = 0;
    for (unsigned int z = 0; z < dim.z; ++z) {
        for (unsigned int y = 0; y < dim.y; ++y) {
            *idx = uint3{0, y, z};
            *running = uint3{0, y, z};
            *linear = i;
            // A signed counter: the compiler may take it not to wrap, so indices the kernel
            // computes from it (``threadIdx.x`` converted to int, plus an offset) step by one.
            const int nx = (int)dim.x;
            const int end = below < nx ? (below < 0 ? 0 : below) : nx;
            for (int x = 0; x < end; ++x) {
                if constexpr (kFast == 0) {
                    body(uint3{(unsigned int)x, y, z}, i + x);
                } else {
                    body(uint3{(unsigned int)x, y, z}, std::bool_constant<kFast == 2>{}, i + x);
                }
            }
            i += nx;
            if (timed_out->load(std::memory_order_relaxed)) return;
        }
    }
}

// Calls ``body`` once per thread of ``b`` in order, with threadIdx and the linear index set;
// stops early when the launch runs past its time limit. Only what changes from thread to
// thread is stored (warp, lane and __activemask() follow from the linear index). The block's
// shape is copied into locals first: the body's stores could alias ``b``, which would otherwise
// be read again for every thread.
// Under the shared-memory race check this loop is instrumented as the kernel is: g++ inlines no
// function into one with other sanitizer attributes, and a region's body inlined here has its
// loads of the block's captured variables hoisted out of the loop before ThreadSanitizer's pass
// puts a call at each (one call per thread per load otherwise). The loop's own stores of the
// running thread's index (never shared memory) are made by unchecked_store, unseen by the pass.
#if defined(SIM_SHARED_RACES) && defined(__x86_64__)
template <class T>
static inline __attribute__((always_inline)) void unchecked_store(T& dst, T v) {
    static_assert(sizeof(T) == 4, "a 4-byte store");
    asm volatile("movl %1, %0" : "=m"(dst) : "r"(v));
}
#else
template <class T>
static inline void unchecked_store(T& dst, T v) {
    dst = v;
}
#endif

// The running thread's index where reports and the thread's code read it (its fiber record,
// threadIdx, its linear index): the runtime's own stores (runtime_store), made once per thread.
static inline SIM_RUNTIME_ACCESS void set_running_thread(uint3* idx, uint3* running, int* linear, uint3 at, int t) {
#if defined(SIM_SHARED_RACES)
    unchecked_store(idx->x, at.x);
    unchecked_store(idx->y, at.y);
    unchecked_store(idx->z, at.z);
    *running = at;  // not instrumented where it is NVIDIA's const threadIdx
    unchecked_store(*linear, t);
#else
    runtime_store(&idx->x, at.x);
    runtime_store(&idx->y, at.y);
    runtime_store(&idx->z, at.z);
    runtime_store(&running->x, at.x);
    runtime_store(&running->y, at.y);
    runtime_store(&running->z, at.z);
    runtime_store(linear, t);
#endif
}

#if defined(SIM_LOOP_FAULTS)
// Whether thread ``t`` must not run after a fault: one of another warp than the faulting one.
static inline SIM_RUNTIME_ACCESS bool stop_after_fault(const int* fault_warp, int t) {
    const int warp = runtime_load(fault_warp);
    if (warp < 0) return false;
    undo_fault_writes();  // the thread before t, which may have faulted, has had its turn
    return t / 32 != warp;
}
#endif
//
// A body that takes ``(threadIdx, linear)`` is a block-loop region that calls nothing and reads
// threadIdx only through that parameter (simulator/block_loops.py): a fast build then stores
// nothing per thread, and threads adjacent in x are adjacent iterations of an inner loop the
// compiler can vectorise. The index is stored once a row instead, so a fault in such a region
// names the first thread of the row that faulted (a SIMD access is several threads' at once).
// memcheck and racecheck builds run it in the fibers' order as any other body. (One function
// for both: the checkers' reports name a region by the kernel when this loop calls it.)
// In the shared-memory race check's build, SIM_THREAD_LOOP is plain_thread_loop, always inlined into
// for_each_plain_thread and for_each_unjudged_thread (below): each compiles it with its own
// sanitizer flags. Every other build: this is for_each_plain_thread itself. ``kThreadOrder``: thread
// order even where the build follows the fibers' (for_each_unjudged_thread).
// ``below``: only the threads with x below it run the body (a prefix region, kPrefixBelow); the
// others still count in the order, and still stop the block after another warp's fault.
template <bool kThreadOrder = false, class Body>
SIM_DEVICE_FMA_TARGET static inline SIM_UNJUDGED_INLINE void SIM_THREAD_LOOP(
    const PlainBlock& b, Body&& body, [[maybe_unused]] const int below = 2147483647) {
    constexpr bool fast_form = kFastForm<Body>;
    constexpr bool indexed = kIndexed<Body>;
    uint3* const idx = b.thread_idx;
    uint3* const running = running_thread_idx();
    int* const linear = b.linear;
    const dim3 dim = b.dim;
    const std::atomic<bool>* const timed_out = b.timed_out;
#if defined(SIM_LOOPS_AS_FIBERS)
    if constexpr (!kThreadOrder) {
        // Threads first .. n-1, then 0 .. first-1 (see SIM_LOOPS_AS_FIBERS; first is 0 outside block
        // loops). One loop, so one copy of the inlined body: a second would double the checker
        // build's code of every kernel (and its compile time, which a large program feels).
        // ``below`` (a prefix region's bound, for_each_plain_thread below): only the threads of a row
        // with x below it run, in that order; none past it would touch memory, and the loop steps
        // over the rest of such a row at once.
        const int n = (int)(dim.x * dim.y * dim.z);
        const unsigned first = b.first != nullptr ? (unsigned)*b.first : 0u;
#if defined(SIM_LOOP_FAULTS)
        const int* const fault_warp = b.fault_warp;
#endif
        // The index and the shape as scalars, which stay in registers (a struct whose address the
        // body's instrumentation takes would be read and checked in memory for every thread).
        const unsigned nx = dim.x, ny = dim.y, nz = dim.z;
        const unsigned width = below <= 0 ? 0u : (unsigned)below < nx ? (unsigned)below : nx;
        unsigned x = first % nx, y = (first / nx) % ny, z = first / (nx * ny);
        for (int k = 0, t = (int)first; k < n; ++k) {
#if defined(SIM_LOOP_FAULTS)
            // After a memory fault (memcheck_reports.cpp) only the rest of the faulting warp runs, as
            // with fibers: its lanes make the access in lockstep on a GPU; the block's other threads
            // do not, so that a wild write is not repeated by each of them. A thread past a prefix
            // bound still counts here, so that the block stops at the same thread as with fibers.
            if (fault_warp != nullptr && stop_after_fault(fault_warp, t)) block_loop_stop();
#endif
            if (x < width) {
                set_running_thread(idx, running, linear, uint3{x, y, z}, t);
                if constexpr (fast_form) {
                    body(uint3{x, y, z}, std::false_type{}, t);
                } else if constexpr (indexed) {
                    body(uint3{x, y, z}, t);
                } else {
                    body();
                }
            } else if constexpr (!kLoopFaults) {
                // On to the row's last thread (or the loop's, in first's row after the wrap): the
                // threads between do nothing. The row ends within the block, so t does not wrap.
                const unsigned rest = nx - 1 - x, left = (unsigned)(n - 1 - k);
                const unsigned skip = rest < left ? rest : left;
                k += (int)skip;
                t += (int)skip;
                x += skip;
            }
            t = t + 1 == n ? 0 : t + 1;
            if (++x < nx) continue;  // the index counts on without a division per thread
            x = 0;
            // Once a row, as below.
            if (timed_out->load(std::memory_order_relaxed)) return;
            if (++y < ny) continue;
            y = 0;
            if (++z == nz) z = 0;
        }
#if defined(SIM_LOOP_FAULTS)
        if (b.fault_warp != nullptr && *b.fault_warp >= 0) block_loop_stop();  // no further round
#endif
    } else
#endif
    {
        int i = 0;
        if constexpr (indexed) {
            indexed_rows<fast_form ? 1 : 0>(b, body, below);
        } else {
            for (unsigned int z = 0; z < dim.z; ++z) {
                for (unsigned int y = 0; y < dim.y; ++y) {
                    *idx = uint3{0, y, z};
                    *running = uint3{0, y, z};
                    for (unsigned int x = 0; x < dim.x; ++x) {
                        idx->x = x;
                        running->x = x;
                        *linear = i++;
                        body();
                    }
                    // Once a row (at most 1,024 threads): the watchdog's signal stops a thread that
                    // runs on, and this stops the block soon after the flag is set between threads.
                    if (timed_out->load(std::memory_order_relaxed)) return;
                }
            }
        }
    }
}

#if defined(SIM_SHARED_RACES) || defined(SIM_HOIST_CHECKS)
template <class Body>
SIM_DEVICE_FMA_TARGET static inline void for_each_plain_thread(
    const PlainBlock& b, Body&& body, const int below = 2147483647) {
    plain_thread_loop(b, static_cast<Body&&>(body), below);
}
#endif

#if defined(SIM_SHARED_RACES)

// A block-loop region that has a barrier epoch to itself and writes no shared memory
// (simulator/block_loops_epochs.py): no access of it can be half of a shared-memory hazard, since
// every other access of its epoch is its own threads' reads. The shared-memory race check leaves
// its accesses unjudged: this loop and the region's body (the front end marks it no_sanitize_thread
// in that build alone) are compiled without ThreadSanitizer's calls, so that the region runs as
// fast mode's code does. (The loop is inlined here and the body into it: g++ inlines no function
// into one whose sanitizer flags differ, except an always_inline one.) Its threads run in thread
// order, as in a fast build, not the fibers' (kThreadOrder): the region writes nothing but each
// thread's own locals, so no order gives another result, and the compiler may vectorise the loop.
// That build alone calls it.
template <class Body>
SIM_DEVICE_FMA_TARGET static inline __attribute__((no_sanitize_thread)) void for_each_unjudged_thread(
    const PlainBlock& b, Body&& body) {
    plain_thread_loop<true>(b, static_cast<Body&&>(body));
}
#endif

// ``below`` for a region that is one ``if (V < s)`` after the declaration of a column index V that
// its fast form computes as ``u + x`` (simulator/block_loops_simd.py, below_index): the threads of
// a row with ``u + x < s``, exact in 64 bits, as a bound on x.
static inline int index_below(long long s, int u) {
    const long long d = s - u;
    return d < 0 ? 0 : d > 2147483647 ? 2147483647 : (int)d;
}

// A region whose body takes ``(threadIdx, fast, linear)`` (simulator/block_loops_simd.py), in its
// fast form where ``fast`` is std::true_type: a column index ``(int)(U + threadIdx.x)`` computed
// as ``(int)U + (int)threadIdx.x``, which ``fast`` (the front end's check of U for this block)
// says gives the same value for each of the block's threads, and, for a region that is one
// ``if (X < S)``, the condition taken as true, which it is for the threads of a row with x below
// ``below`` (S), the only ones the loop then runs (the others would do nothing). A fast build runs
// that form, whose loop g++ can vectorise, and the other where ``fast`` is false; the checkers'
// builds always run the other (their thread loop passes std::false_type): the kernel's own code,
// judged as fibers judge it. The shared-memory race check's loop runs only the threads below
// ``below`` too (kPrefixBound), in the fibers' order: a thread past it makes no access there, so
// nothing it would have judged is left out. memcheck's runs every thread.
template <class Body>
SIM_DEVICE_FMA_TARGET static inline void for_each_plain_thread(const PlainBlock& b, bool fast, int below, Body&& body) {
#if defined(SIM_LOOPS_AS_FIBERS)
    (void)fast;
    for_each_plain_thread(b, body, below);
#else
    if (fast) {
        indexed_rows<2>(b, body, below);
    } else {
        indexed_rows<1>(b, body);
    }
#endif
}

// The most threads a block has (launch.cpp refuses a larger one): a grid-stride loop run in
// lockstep rounds keeps a flag per thread on the stack (simulator/block_loops_interchange.py).
inline constexpr int kMaxBlockThreads = 1024;

// A round of a grid-stride loop in lockstep order (simulator/block_loops_interchange.py): calls
// ``body`` as for_each_plain_thread does, for every thread of ``b`` where ``flags`` is null (a
// round all of the block's threads are in), else only for those whose flag is set. The threads of
// a row whose flags are set run as runs of adjacent ones, each through the same inner loop as a
// round without flags: the body is inlined (and vectorised) once for both kinds of round, where a
// flag tested inside the loop would keep it scalar. Only fast and synccheck builds run it
// (kInterchangedFast); the checkers that follow the fibers' order get the plain loop, flag tested.
#if defined(SIM_LOOPS_AS_FIBERS) || defined(SIM_SHARED_RACES)
template <class Body>
SIM_DEVICE_FMA_TARGET static inline void for_each_flagged_thread(
    const PlainBlock& b, const unsigned char* flags, Body&& body) {
    if constexpr (kTakesIndex<Body>) {
        for_each_plain_thread(b, [&](uint3 at, int t) {
            if (flags == nullptr || flags[t]) body(at, t);
        });
    } else {
        for_each_plain_thread(b, [&] {
            if (flags == nullptr || flags[*b.linear]) body();
        });
    }
}
#else
template <class Body>
SIM_DEVICE_FMA_TARGET static inline void for_each_flagged_thread(
    const PlainBlock& b, const unsigned char* flags, Body&& body) {
    constexpr bool indexed = kTakesIndex<Body>;
    uint3* const idx = b.thread_idx;
    uint3* const running = running_thread_idx();
    int* const linear = b.linear;
    const dim3 dim = b.dim;
    const std::atomic<bool>* const timed_out = b.timed_out;
    const int nx = (int)dim.x;
    int i = 0;
    for (unsigned int z = 0; z < dim.z; ++z) {
        for (unsigned int y = 0; y < dim.y; ++y) {
            for (int x = 0; x < nx;) {
                int end = nx;
                if (flags != nullptr) {
                    while (x < nx && !flags[i + x]) ++x;
                    for (end = x; end < nx && flags[i + end];) ++end;
                }
                // The run's first thread, once a run (a SIMD access is several threads' at once).
                *idx = uint3{(unsigned int)x, y, z};
                *running = uint3{(unsigned int)x, y, z};
                *linear = i + x;
                if constexpr (indexed) {
                    for (int r = x; r < end; ++r) body(uint3{(unsigned int)r, y, z}, i + r);
                } else {
                    for (int r = x; r < end; ++r) {
                        idx->x = (unsigned int)r;
                        running->x = (unsigned int)r;
                        *linear = i + r;
                        body();
                    }
                }
                x = end;
            }
            i += nx;
            if (timed_out->load(std::memory_order_relaxed)) return;
        }
    }
}
#endif

}  // namespace __sim
#endif  // !SIM_MODE_FREE

#endif  // CUDA_CPU_SIMULATOR_BLOCK_LOOPS_THREAD_LOOPS_H
