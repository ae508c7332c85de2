// Block loops (included by launch.h): the runtime side of a kernel whose body the build rewrote
// into one loop over the block's threads per region between barriers (simulator/block_loops.py):
// the block being run (PlainBlock), the barrier between regions, the per-thread slots that keep
// a local across a barrier, and the thread loops a region runs in (plain, unjudged by the race
// check, and flagged for a grid-stride loop's rounds).
#ifndef CUDA_CPU_SIMULATOR_BLOCK_LOOPS_H
#define CUDA_CPU_SIMULATOR_BLOCK_LOOPS_H

#include <atomic>
#include <cstring>
#include <memory>
#include <new>
#include <type_traits>
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#include <sanitizer/lsan_interface.h>
#endif

namespace __sim {
#if !defined(SIM_MODE_FREE)
#if defined(SIM_SHARED_RACES)
SIM_API void block_loop_epoch();  // shared_races.cpp: a barrier released, a new epoch
#endif
// memcheck: storage for the per-thread slots of a block-loop local, kept by the worker between
// the blocks of a launch (device_api.cpp); null where the block allocates its own.
SIM_API void* kept_slots(size_t bytes, size_t align);
#endif  // !SIM_MODE_FREE

// The threads of one block of a barrier-free launch, run one after another by the launch's
// own code (Packed::run_plain) rather than by the scheduler: the scheduler fills it in.
struct PlainBlock {
    uint3* thread_idx;  // the running thread's index in its fiber record (reports name it)
    int* linear;        // the running thread's index within the block
    dim3 dim;           // blockDim
    const std::atomic<bool>* timed_out;  // set when the launch runs past its time limit
    int* first = nullptr;  // memcheck and racecheck: the thread each region's loop starts with
    // memcheck: the warp of the block's first faulting thread, or -1 (Block::fault_warp): only
    // the rest of that warp runs on, up to the end of the round.
    const int* fault_warp = nullptr;
};

using RunPlain = void (*)(void* pack, const PlainBlock& block);

// Set while a block of a block-loop launch runs: the kernel is called once for the whole block
// and its rewritten body (simulator/block_loops.py) loops over the threads itself.
extern __thread const PlainBlock* tl_block_loop SIM_API;

// The rest depends on the build's mode: none of it reaches the runtime's mode-free sources
// (mode_free.h), which run no kernel.
#if !defined(SIM_MODE_FREE)
// The block a kernel's block-loop body runs for (null: fibers run its original body). The runtime
// of synccheck and of racecheck of every access runs no kernel as block loops (mode_hooks.h's
// kBlockLoops), so there it is null at compile time and g++ drops each kernel's loop body, which
// no launch could reach, instead of compiling and instrumenting it. block_loop_fast() guards the
// body of a kernel that memcheck and the shared-memory race check run with fibers too (launch.h's
// kBlockLoopsFast and kInterchangedFast, under the same condition): null in their builds as well.
#if defined(SIM_SYNCCHECK) || defined(SIM_RACECHECK) || (defined(__SANITIZE_THREAD__) && !defined(SIM_SHARED_RACES))
static constexpr const PlainBlock* block_loop() { return nullptr; }
#else
static inline const PlainBlock* block_loop() { return tl_block_loop; }
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__) || defined(SIM_SHARED_RACES) || \
    defined(SIM_SYNCCHECK) || defined(SIM_MEMCHECK) || defined(SIM_RACECHECK)
static constexpr const PlainBlock* block_loop_fast() { return nullptr; }
#else
static inline const PlainBlock* block_loop_fast() { return block_loop(); }
#endif

// memcheck: the program's kernels (instrumented) and the runtime's own thread loop (SIM_MEMCHECK).
#if defined(__SANITIZE_ADDRESS__) || defined(SIM_MEMCHECK)
#define SIM_LOOP_FAULTS 1
inline constexpr bool kLoopFaults = true;
#else
inline constexpr bool kLoopFaults = false;
#endif

#if defined(SIM_LOOP_FAULTS)
// memcheck: ends a faulted block from its thread loop (scheduler.cpp): it fails, and a block-loop
// kernel does not go on to its next region. Never returns.
[[noreturn]] SIM_API void block_loop_stop();
#endif

// memcheck and the shared-memory race check run block loops in the order of fibers, which
// their findings depend on: after a barrier the thread that arrived last (and released it) runs
// on first, then the others from thread 0, so each round between barriers starts one thread
// earlier than the one before (scheduler.cpp, device_api.cpp). A fast build keeps thread order.
#if defined(__SANITIZE_ADDRESS__) || defined(SIM_MEMCHECK) || defined(SIM_SHARED_RACES)
#define SIM_LOOPS_AS_FIBERS 1
#endif

// A barrier between two regions of a block-loop kernel: in memcheck and racecheck builds the next
// round starts where fibers would start it, and the race check starts a new epoch, as the
// barrier's release does for fibers; nothing in other builds.
static inline void block_loop_barrier([[maybe_unused]] const PlainBlock& b) {
#if defined(SIM_LOOPS_AS_FIBERS)
    if (b.first != nullptr) {
        const int n = (int)(b.dim.x * b.dim.y * b.dim.z);
        *b.first = (*b.first + n - 1) % n;
    }
#endif
#if defined(SIM_SHARED_RACES)
    block_loop_epoch();
#endif
}

// Whether a block-loop region computes again, from threadIdx and values no thread writes, an
// integer or pointer local that an earlier region declared (simulator/block_loops.py), rather
// than reading it from its per-thread slot: then ``threadIdx.x + c`` stays an index the compiler
// sees step by one from thread to thread, and the region's loop can run as SIMD. memcheck and
// racecheck builds read the slots (kRecompute), since a computation repeated in a later region
// would be judged (UBSan's overflow checks) where fibers judge it once. kRecomputeIndexed is the
// same for a region whose threadIdx is its loop's own index (an indexed body, below): there the
// shared-memory race check computes again too, since such an initializer reads no memory but the
// kernel's parameters and built-ins, never shared memory, so the detector has nothing more to
// judge, while each read of a slot would be one more call to it. (Elsewhere threadIdx is NVIDIA's
// const object, which g++ may read once for a whole loop that the checker's build inlines.)
#if defined(SIM_LOOPS_AS_FIBERS)
inline constexpr bool kRecompute = false;
#else
inline constexpr bool kRecompute = true;
#endif
#if defined(SIM_LOOPS_AS_FIBERS) && !defined(SIM_SHARED_RACES)
inline constexpr bool kRecomputeIndexed = false;
#else
inline constexpr bool kRecomputeIndexed = true;
#endif

// memcheck's build (the program's kernels, instrumented): a block-loop region whose accesses the
// front end can bound over the block's threads runs, when the block's values keep them all in
// bounds, as a copy compiled without ASan's and UBSan's checks (simulator/block_loops_hoist.py,
// for_each_unchecked_thread below). Every other build compiles the instrumented loop alone.
#if defined(__SANITIZE_ADDRESS__) && defined(SIM_LOOPS_AS_FIBERS) && !defined(SIM_SHARED_RACES)
#define SIM_HOIST_CHECKS 1
#endif

// Whether a region that is one ``if (X < S)`` (simulator/block_loops_simd.py) gives its loop the
// bound S, which the loop evaluates once for the block, and runs only the threads of a row with x
// below it. kPrefixBound, any S: a fast build, and the shared-memory race check's, where a thread
// whose condition is false makes no access to judge (the condition reads only ints). kPrefixBelow,
// an S that is a name or a literal: those builds and memcheck's too, where a thread past the bound
// would evaluate the condition alone (a compare of two ints, which nothing checks) and do nothing,
// so that leaving it out changes no finding; memcheck's loop still counts it in the fibers' order.
// memcheck does not evaluate any other S (an overflow in it would be another thread's).
#if defined(SIM_LOOPS_AS_FIBERS) && !defined(SIM_SHARED_RACES)
inline constexpr bool kPrefixBound = false;
#else
inline constexpr bool kPrefixBound = true;
#endif
#if defined(SIM_LOOPS_AS_FIBERS) && !defined(SIM_SHARED_RACES) && !defined(SIM_HOIST_CHECKS)
inline constexpr bool kPrefixBelow = false;
#else
inline constexpr bool kPrefixBelow = true;
#endif

// The shared-memory race check's and memcheck's builds: what a region's body compiled without the
// sanitizer's calls (for_each_unjudged_thread, for_each_unchecked_thread, below) uses is always
// inlined into it, as g++ inlines nothing else into a function whose sanitizer flags differ. Every
// other build: as any inline function.
#if defined(SIM_SHARED_RACES) || defined(SIM_HOIST_CHECKS)
#define SIM_UNJUDGED_INLINE __attribute__((always_inline))
#define SIM_THREAD_LOOP plain_thread_loop
#else
#define SIM_UNJUDGED_INLINE
#define SIM_THREAD_LOOP for_each_plain_thread
#endif

// memcheck on x86-64: what the runtime's own code inlined into a kernel reads and writes for it
// (the running thread's index in its fiber record, a per-thread slot of a local, the block's
// fault flag) is memory the runtime allocated and indexes itself, which no program can reach
// amiss; these accesses go through an asm operand that AddressSanitizer does not see, in a
// function UBSan leaves alone, so a thread of a block-loop region pays for its own accesses only.
// Every other build: plain accesses (a fast build's loops must stay vectorisable).
#if defined(__SANITIZE_ADDRESS__) && defined(__x86_64__)
#define SIM_RUNTIME_ACCESS __attribute__((always_inline, no_sanitize("undefined")))
// A scalar's bits as another type of its size (GCC 10 has no __builtin_bit_cast).
template <class T, class F>
static inline SIM_RUNTIME_ACCESS T same_bits(F v) {
    static_assert(sizeof(T) == sizeof(F) && std::is_scalar_v<T> && std::is_scalar_v<F>, "two scalars of a size");
#if defined(__has_builtin)
#if __has_builtin(__builtin_bit_cast)
#define SIM_HAS_BIT_CAST 1
#endif
#endif
#if defined(SIM_HAS_BIT_CAST)
    return __builtin_bit_cast(T, v);
#else
    T out;
    std::memcpy(&out, &v, sizeof(T));
    return out;
#endif
}
template <class T>
static inline SIM_RUNTIME_ACCESS T runtime_load(const T* src) {
    if constexpr (std::is_scalar_v<T> && (sizeof(T) == 4 || sizeof(T) == 8)) {
        using Bits = std::conditional_t<sizeof(T) == 4, unsigned int, unsigned long long>;
        Bits bits;
        asm("mov %1, %0" : "=r"(bits) : "m"(*reinterpret_cast<const Bits*>(src)));
        return same_bits<T>(bits);
    } else {
        return *src;
    }
}
template <class T>
static inline SIM_RUNTIME_ACCESS void runtime_store(T* dst, T v) {
    if constexpr (std::is_scalar_v<T> && (sizeof(T) == 4 || sizeof(T) == 8)) {
        using Bits = std::conditional_t<sizeof(T) == 4, unsigned int, unsigned long long>;
        asm volatile("mov %1, %0" : "=m"(*reinterpret_cast<Bits*>(dst)) : "r"(same_bits<Bits>(v)));
    } else {
        *dst = v;
    }
}
#else
#define SIM_RUNTIME_ACCESS SIM_UNJUDGED_INLINE
template <class T>
static inline SIM_RUNTIME_ACCESS T runtime_load(const T* src) {
    return *src;
}
template <class T>
static inline SIM_RUNTIME_ACCESS void runtime_store(T* dst, T v) {
    *dst = v;
}
#endif

// Stores a region's local into its per-thread slot at the end of the region (arrays by element):
// by assignment, or, for a trivially copyable type that cannot be assigned (a const member, no
// default constructor to have made the slot's value with), by copying its bytes.
template <class T>
static inline SIM_UNJUDGED_INLINE void keep(T& dst, const T& src) {
    if constexpr (std::is_copy_assignable_v<T>) {
        dst = src;
    } else {
        static_assert(std::is_trivially_copyable_v<T>, "a per-thread slot is assigned or copied");
        std::memcpy(static_cast<void*>(&dst), static_cast<const void*>(&src), sizeof(T));
    }
}
template <class T, size_t N>
static inline SIM_UNJUDGED_INLINE void keep(T (&dst)[N], const T (&src)[N]) {
    for (size_t i = 0; i < N; ++i) keep(dst[i], src[i]);
}

// A copy of ``src`` made in the raw storage ``dst`` of a slot (arrays by element), and its end.
template <class T>
static inline SIM_UNJUDGED_INLINE void slot_copy(T& dst, const T& src) {
    ::new (static_cast<void*>(std::addressof(dst))) T(src);
}
template <class T, size_t N>
static inline SIM_UNJUDGED_INLINE void slot_copy(T (&dst)[N], const T (&src)[N]) {
    for (size_t i = 0; i < N; ++i) slot_copy(dst[i], src[i]);
}
template <class T>
static inline void slot_end(T& v) {
    v.~T();
}
template <class T, size_t N>
static inline void slot_end(T (&v)[N]) {
    for (size_t i = 0; i < N; ++i) slot_end(v[i]);
}

// One value per thread of a block-loop block: a local of the kernel that lives across a
// barrier. Allocated once per block (memcheck: raw storage the worker keeps for the launch's next
// block, kept_slots); not at all where ``used`` is false (a local every region computes again,
// kRecompute). A trivially copyable and trivially destructible type (scalars,
// arrays, plain structs, wmma fragments, a thread-scope cuda::pipeline, cuda::aligned_size_t)
// gets raw storage into which ``keep`` copies the region's local: it needs no default
// constructor, and neither the copy nor the end of the local it copies can be observed. Any other
// type is default-constructed for each thread, assigned by ``keep`` and destroyed with the slots;
// one without a default constructor (a class whose constructors take arguments) gets raw storage
// too, into which a thread's first ``keep`` copy-constructs its value (a later one assigns it, or
// ends the value and makes a new copy where it cannot be assigned), and the values made are
// destroyed with the slots.
template <class T>
struct per_thread {
    using U = std::remove_cv_t<T>;
    static constexpr bool kRaw = std::is_trivially_copyable_v<U> && std::is_trivially_destructible_v<U>;
    static constexpr bool kInPlace = !kRaw && !std::is_default_constructible_v<U>;
    U* data = nullptr;
    unsigned char* made = nullptr;  // kInPlace: whether each thread's slot holds a value
    size_t count = 0;
#if defined(SIM_HOIST_CHECKS)
    bool kept = false;  // the worker's storage (memcheck's kept_slots), not freed here
#else
    static constexpr bool kept = false;  // every other build's layout and code as they were
#endif
    explicit per_thread(const dim3& d, bool used = true) {
        if (!used) return;
        count = (size_t)d.x * d.y * d.z;
#if defined(SIM_HOIST_CHECKS)
        if constexpr (kRaw) {
            // memcheck: the worker's storage, kept between the blocks of the launch (device_api.cpp).
            data = static_cast<U*>(kept_slots(count * sizeof(U), alignof(U)));
            if (data != nullptr) {
                kept = true;
                return;
            }
        }
#endif
        if constexpr (kRaw || kInPlace) {
            data = static_cast<U*>(::operator new(count * sizeof(U), std::align_val_t(alignof(U))));
        } else {
            data = new U[count];
        }
        if constexpr (kInPlace) made = new unsigned char[count]();
#if defined(__SANITIZE_ADDRESS__)
        // A block that fails leaves its kernel by a jump, past this destructor: not the
        // program's leak (LeakSanitizer would name it under check --mode memcheck).
        __lsan_ignore_object(data);
        if (made != nullptr) __lsan_ignore_object(made);
#endif
    }
    per_thread(const per_thread&) = delete;
    per_thread& operator=(const per_thread&) = delete;
    ~per_thread() {
        if (kept) return;
        if constexpr (kInPlace) {
            for (size_t t = 0; made != nullptr && t < count; ++t) {
                if (made[t]) slot_end(data[t]);
            }
            delete[] made;
        }
        if constexpr (kRaw || kInPlace) {
            ::operator delete(data, std::align_val_t(alignof(U)));
        } else {
            delete[] data;
        }
    }
    SIM_UNJUDGED_INLINE U& operator[](int t) { return data[t]; }
    // Thread ``t``'s value of a scalar local (the runtime's own read: see runtime_load).
    template <class V = U>  // a template: no such member for an array
    SIM_RUNTIME_ACCESS V get(int t) const {
        return runtime_load(runtime_load(&data) + t);
    }
    // Thread ``t``'s local ``v`` into its slot at the end of a region.
    SIM_RUNTIME_ACCESS void keep(int t, const U& v) {
        if constexpr (kRaw && std::is_copy_assignable_v<U> && std::is_scalar_v<U>) {
            runtime_store(runtime_load(&data) + t, v);
        } else if constexpr (kInPlace && !std::is_copy_assignable_v<U>) {
            if (made[t]) slot_end(data[t]);
            slot_copy(data[t], v);
            made[t] = 1;
        } else {
            if constexpr (kInPlace) {
                if (!made[t]) {
                    slot_copy(data[t], v);
                    made[t] = 1;
                    return;
                }
            }
            ::__sim::keep(data[t], v);
        }
    }
    // get and keep in memcheck's region copies without checks (block_loops_hoist.h): a scalar by a
    // plain access, which g++ may vectorise with the loop (SIM_RUNTIME_ACCESS: UBSan instruments an
    // inlined function's body by its own attributes, AddressSanitizer by the caller's), any other
    // type as keep stores it.
    template <class V = U>
    SIM_RUNTIME_ACCESS V load(int t) const {
        return data[t];
    }
    SIM_RUNTIME_ACCESS void store(int t, const U& v) {
        if constexpr (kRaw && std::is_copy_assignable_v<U> && std::is_scalar_v<U>) {
            data[t] = v;
        } else {
            keep(t, v);
        }
    }
};

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
    return warp >= 0 && t / 32 != warp;
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
    constexpr bool fast_form = std::is_invocable<Body&, uint3, std::false_type, int>::value;
    constexpr bool indexed = fast_form || std::is_invocable<Body&, uint3, int>::value;
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
    if constexpr (std::is_invocable<Body&, uint3, int>::value) {
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
    constexpr bool indexed = std::is_invocable<Body&, uint3, int>::value;
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

#endif  // !SIM_MODE_FREE

}  // namespace __sim

// memcheck's regions whose checks are made once per block: their loop and the test before it.
#include "block_loops_hoist.h"
// The shared-memory race check's regions judged once per block: the judgement and their loop.
#include "block_loops_bulk.h"

#endif  // CUDA_CPU_SIMULATOR_BLOCK_LOOPS_H
