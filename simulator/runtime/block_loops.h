// Block loops (included by launch.h): the runtime side of a kernel whose body the build rewrote
// into one loop over the block's threads per region between barriers (simulator/block_loops.py):
// the block being run (PlainBlock), the barrier between regions, the build's flags for the loops,
// and the per-thread slots that keep a local across a barrier. The thread loops a region runs in
// (plain, unjudged by the race check, and flagged for a grid-stride loop's rounds) are in
// block_loops_thread_loops.h.
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
// memcheck: undoes the faulting writes of the CUDA thread that just ran (memcheck_reports.cpp);
// called where a thread's turn ends, before another thread's access can be reported.
SIM_API void undo_fault_writes();
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
    // Every thread's slot set to ``v``: a parameter the kernel writes, each thread's copy of it
    // starting as the launch's value (block_loops.py). By value: a restrict pointer converts.
    void fill(const U v) {
        for (size_t t = 0; t < count; ++t) keep((int)t, v);
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

#endif  // !SIM_MODE_FREE

}  // namespace __sim

// The thread loops a region runs in: plain, unjudged by the race check, and flagged.
#include "block_loops_thread_loops.h"
// memcheck's regions whose checks are made once per block: their loop and the test before it.
#include "block_loops_hoist.h"
// The shared-memory race check's regions judged once per block: the judgement and their loop.
#include "block_loops_bulk.h"
// Warp shuffles and votes as two rounds of the thread loop: the locals their calls name.
#include "block_loops_warps.h"

#endif  // CUDA_CPU_SIMULATOR_BLOCK_LOOPS_H
