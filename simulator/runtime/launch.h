// Launches (included by host_api.h): the machinery every `kernel<<<...>>>(args)` that the
// build rewrites goes through (__sim::launch, __sim::launcher, __sim::launch_deduced), stream
// capture's hook and the kernel registry that launches by address use, and the one record of a
// launch (KernelCall). Definitions are in launch.cpp (launch_raw), device_launch.cpp
// (device_launch), graphs.cpp (capturing, capture_kernel) and kernel_registry.cpp.
#ifndef CUDA_CPU_SIMULATOR_LAUNCH_H
#define CUDA_CPU_SIMULATOR_LAUNCH_H

#include <atomic>
#include <cstring>
#include <memory>
#include <new>
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif
#include <optional>
#include <type_traits>

// A build whose device code contracts into fused multiply-adds marks the program's kernels with the
// FMA target (simulator/transform.py, DEVICE_FMA), and the plain loop that calls a kernel by name
// with it too, so that the kernel is inlined into the loop.
#if defined(SIM_DEVICE_FMA)
#define SIM_DEVICE_FMA_TARGET __attribute__((target("fma")))
#else
#define SIM_DEVICE_FMA_TARGET
#endif

// ---- launch machinery ------------------------------------------------------------------
namespace __sim {

template <class T>
struct nondeduced {
    using type = T;
};

struct LaunchSpec {
    dim3 grid;
    dim3 block;
    size_t smem;
    cudaStream_t stream;
    bool barrier_free = false;  // reaches no barrier, warp operation or other wait: threads may run as a plain loop
    bool cooperative = false;   // cudaLaunchCooperativeKernel: every block co-resident, grid.sync() allowed
    bool block_loops = false;   // the kernel's barriers split it into regions run as loops over the threads
    const char* fibers_why = nullptr;  // the front end's reason the kernel keeps fibers (the launch log's)
};

// The front end's finding for a launched kernel: barrier-free (true), or a kernel whose
// __syncthreads are all block-uniform and whose body it also wrote as loops over the block's
// threads, one per region between barriers (kBlockLoops; simulator/block_loops.py).
// A kernel it keeps on fibers carries the first reason it found, with the source line
// (``LoopKind{false, false, "a warp shuffle (__shfl_down_sync) (k.cu:17)"}``): read only by
// SIMULATOR_LAUNCH_LOG=1.
struct LoopKind {
    bool barrier_free = false;
    bool block_loops = false;
    const char* fibers_why = nullptr;
    constexpr LoopKind(bool free) : barrier_free(free) {}
    constexpr LoopKind(bool free, bool loops) : barrier_free(free), block_loops(loops) {}
    constexpr LoopKind(bool free, bool loops, const char* why)
        : barrier_free(free), block_loops(loops), fibers_why(why) {}
};
inline constexpr LoopKind kBlockLoops{false, true};
// A kernel whose block loops would order some accesses otherwise than its fibers do (two regions
// that may report between the same two barriers, simulator/block_loops_order.py): loops in a
// fast build, fibers under memcheck, racecheck and synccheck, whose findings depend on that order.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__) || defined(SIM_SHARED_RACES) || \
    defined(SIM_SYNCCHECK)
inline constexpr LoopKind kBlockLoopsFast{
    false, false, "its block loops run in fast builds only: they differ from fibers in what this checker sees"};
#else
inline constexpr LoopKind kBlockLoopsFast{false, true};
#endif

// A barrier-free kernel whose loop the front end also wrote to run one step for all the block's
// threads at a time (simulator/block_loops_interchange.py): that order in a fast build, and the
// plain loop through a pointer launch that knows only "barrier-free"; the plain loop's order under
// memcheck, racecheck and synccheck, whose findings stay as they were.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__) || defined(SIM_SHARED_RACES) || \
    defined(SIM_SYNCCHECK)
inline constexpr LoopKind kInterchangedFast{true, false};
#else
inline constexpr LoopKind kInterchangedFast{true, true};
#endif

#if defined(SIM_SHARED_RACES)
SIM_API void block_loop_epoch();  // shared_races.cpp: a barrier released, a new epoch
#endif

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

// memcheck: the program's kernels (instrumented) and the runtime's own thread loop (SIM_MEMCHECK).
#if defined(__SANITIZE_ADDRESS__) || defined(SIM_MEMCHECK)
#define SIM_LOOP_FAULTS 1
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
using RunPlain = void (*)(void* pack, const PlainBlock& block);

// Set while a block of a block-loop launch runs: the kernel is called once for the whole block
// and its rewritten body (simulator/block_loops.py) loops over the threads itself.
extern __thread const PlainBlock* tl_block_loop SIM_API;
static inline const PlainBlock* block_loop() { return tl_block_loop; }

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

// The shared-memory race check's build: what a region's body compiled without ThreadSanitizer's
// calls (for_each_unjudged_thread, below) uses is always inlined into it, as g++ inlines nothing
// else into a function whose sanitizer flags differ. Every other build: as any inline function.
#if defined(SIM_SHARED_RACES)
#define SIM_UNJUDGED_INLINE __attribute__((always_inline))
#define SIM_THREAD_LOOP plain_thread_loop
#else
#define SIM_UNJUDGED_INLINE
#define SIM_THREAD_LOOP for_each_plain_thread
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
// barrier. Allocated once per block; not at all where ``used`` is false (a local every region
// computes again, kRecompute). A trivially copyable and trivially destructible type (scalars,
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
    explicit per_thread(const dim3& d, bool used = true) {
        if (!used) return;
        count = (size_t)d.x * d.y * d.z;
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
    // Thread ``t``'s local ``v`` into its slot at the end of a region.
    SIM_UNJUDGED_INLINE void keep(int t, const U& v) {
        if constexpr (kInPlace && !std::is_copy_assignable_v<U>) {
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
};

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
template <bool kThreadOrder = false, class Body>
SIM_DEVICE_FMA_TARGET static inline SIM_UNJUDGED_INLINE void SIM_THREAD_LOOP(const PlainBlock& b, Body&& body) {
    constexpr bool indexed = std::is_invocable<Body&, uint3, int>::value;
    uint3* const idx = b.thread_idx;
    // What the thread's threadIdx reads, written through the declaration kernel code reads
    // (NVIDIA's, const): g++ takes a const object for unchanging and would otherwise keep one
    // thread's threadIdx for all of them in a body inlined here.
    // (The runtime's own loop calls kernels through a pointer and has no such declaration.)
#if defined(CUDA_CPU_SIMULATOR)
    uint3* const running = const_cast<uint3*>(&::threadIdx);
#else
    uint3* const running = &tls_thread_idx;
#endif
    int* const linear = b.linear;
    const dim3 dim = b.dim;
    const std::atomic<bool>* const timed_out = b.timed_out;
#if defined(SIM_LOOPS_AS_FIBERS)
    if constexpr (!kThreadOrder) {
        // Threads first .. n-1, then 0 .. first-1 (see SIM_LOOPS_AS_FIBERS; first is 0 outside block
        // loops). One loop, so one copy of the inlined body: a second would double the checker
        // build's code of every kernel (and its compile time, which a large program feels).
        const int n = (int)(dim.x * dim.y * dim.z);
        const unsigned first = b.first != nullptr ? (unsigned)*b.first : 0u;
        uint3 at{first % dim.x, (first / dim.x) % dim.y, first / (dim.x * dim.y)};
        for (int k = 0, t = (int)first; k < n; ++k) {
#if defined(SIM_LOOP_FAULTS)
            // After a memory fault (memcheck_reports.cpp) only the rest of the faulting warp runs, as
            // with fibers: its lanes make the access in lockstep on a GPU; the block's other threads
            // do not, so that a wild write is not repeated by each of them.
            if (b.fault_warp != nullptr && *b.fault_warp >= 0 && t / 32 != *b.fault_warp) block_loop_stop();
#endif
            unchecked_store(idx->x, at.x);
            unchecked_store(idx->y, at.y);
            unchecked_store(idx->z, at.z);
            *running = at;  // not instrumented where it is NVIDIA's const threadIdx
            unchecked_store(*linear, t);
            if constexpr (indexed) {
                body(at, t);
            } else {
                body();
            }
            t = t + 1 == n ? 0 : t + 1;
            if (++at.x < dim.x) continue;  // the index counts on without a division per thread
            at.x = 0;
            // Once a row, as below.
            if (timed_out->load(std::memory_order_relaxed)) return;
            if (++at.y < dim.y) continue;
            at.y = 0;
            if (++at.z == dim.z) at.z = 0;
        }
#if defined(SIM_LOOP_FAULTS)
        if (b.fault_warp != nullptr && *b.fault_warp >= 0) block_loop_stop();  // no further round
#endif
    } else
#endif
    {
        int i = 0;
        if constexpr (indexed) {
            for (unsigned int z = 0; z < dim.z; ++z) {
                for (unsigned int y = 0; y < dim.y; ++y) {
                    *idx = uint3{0, y, z};
                    *running = uint3{0, y, z};
                    *linear = i;
                    // A signed counter: the compiler may take it not to wrap, so indices the kernel
                    // computes from it (``threadIdx.x`` converted to int, plus an offset) step by one.
                    const int nx = (int)dim.x;
                    for (int x = 0; x < nx; ++x) body(uint3{(unsigned int)x, y, z}, i + x);
                    i += nx;
                    if (timed_out->load(std::memory_order_relaxed)) return;
                }
            }
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

#if defined(SIM_SHARED_RACES)
template <class Body>
SIM_DEVICE_FMA_TARGET static inline void for_each_plain_thread(const PlainBlock& b, Body&& body) {
    plain_thread_loop(b, static_cast<Body&&>(body));
}

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
#if defined(CUDA_CPU_SIMULATOR)
    uint3* const running = const_cast<uint3*>(&::threadIdx);  // as in for_each_plain_thread
#else
    uint3* const running = &tls_thread_idx;
#endif
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

// One kernel launch as the runtime records it, however it was made (<<<>>>, a launch by address, a
// graph's kernel node, a capture, a launch from device code): what runs, with which arguments, and
// where the program launched it. A running launch (Launch), a graph's kernel node (KernelOp) and a
// launch queued by device code (ChildWork) each are one, so a launch's fields are set in one place.
struct KernelCall {
    LaunchSpec spec{};
    const char* name = nullptr;        // the kernel's name, for reports
    const char* file = nullptr;        // where the program launched it
    int line = 0;
    const void* kernel = nullptr;      // its address (null: a launch through a null kernel pointer)
    void (*invoke)(void*) = nullptr;   // calls the kernel with *pack's arguments for the running thread
    RunPlain run_plain = nullptr;      // its own loop over a plain block's threads (null: the runtime's)
    void* pack = nullptr;              // the converted arguments
    void (*destroy)(void*) = nullptr;  // frees pack where the record owns it (queued, recorded); else null
};

// Runs a launch now; ``call.pack`` stays the caller's.
SIM_API void launch_raw(const KernelCall& call);

// A kernel and its converted arguments. A launch runs it from the caller's stack; a launch
// made while a stream capture is active copies it to the heap and the graph node owns it.
template <class F, class Tuple>
struct Packed {
    F fn;
    Tuple args;
    static void invoke(void* p) {
        Packed* pk = static_cast<Packed*>(p);
        std::apply(pk->fn, pk->args);
    }
    // Every thread of a barrier-free block in turn. The loop is instantiated with the kernel
    // call, so that a kernel named at the launch is a direct call (often inlined) instead of
    // two indirect calls per thread through the runtime.
    __attribute__((flatten)) SIM_DEVICE_FMA_TARGET static void run_plain(void* p, const PlainBlock& b) {
        Packed* pk = static_cast<Packed*>(p);
        // The block's own copy: the kernel's stores could alias the pack, which would then be
        // read again for every thread. Each call still copies the arguments into parameters.
        F fn = pk->fn;
        Tuple args = pk->args;
        for_each_plain_thread(b, [&fn, &args] { std::apply(fn, args); });
    }
    static void destroy(void* p) { delete static_cast<Packed*>(p); }
};

// Dynamic parallelism (device_launch.cpp): a launch made by a CUDA thread is queued with its
// converted arguments (``pack``, heap, freed by ``destroy``) and runs after the launching grid's
// blocks finish, before the grid counts as complete.
// Returns the launch's error (also the CUDA thread's last error).
SIM_API cudaError_t device_launch(const KernelCall& call);
struct ThreadState;
extern __thread ThreadState* tl_thread SIM_API;  // (cuda_sim.h) non-null while a CUDA thread runs

// Stream capture (graphs.cpp): true while a capture is active (every stream is one stream).
SIM_API bool capturing(cudaStream_t stream);
// Records a launch in the capturing graph; the node takes ownership of ``pack``.
SIM_API void capture_kernel(const KernelCall& call);

// Runs a launch, or records it when a capture is active. Every launch template goes through here.
template <class F, class Tuple>
static inline void dispatch(const LaunchSpec& spec, const char* name, const char* file, int line,
                            const void* kernel, F fn, Tuple&& args) {
    using Pk = Packed<F, std::decay_t<Tuple>>;
    KernelCall call{spec, name, file, line, kernel, &Pk::invoke, &Pk::run_plain};
    const bool from_device = tl_thread != nullptr;  // launched by a CUDA thread
    if (from_device || capturing(spec.stream)) {
        call.pack = new Pk{fn, std::forward<Tuple>(args)};
        call.destroy = &Pk::destroy;
        if (from_device) {
            device_launch(call);
        } else {
            capture_kernel(call);
        }
        return;
    }
    Pk pack{fn, std::forward<Tuple>(args)};
    call.pack = &pack;
    launch_raw(call);
}

// ---- the kernel registry (kernel_registry.cpp) -----------------------------------------------
// A launch by address (cudaLaunchKernel, cudaLaunchKernelExC, a graph's kernel node) passes
// the arguments as `void** args`; the registry knows, per kernel address, how to copy them
// into the kernel's parameter types. Every <<<>>> launch and every typed launch form
// registers its kernel on first use; the front end registers every kernel definition, with a
// call by name and whether the kernel is barrier-free, so that a launch by address runs as its
// <<<>>> launch would (that registration wins over the others).
// make_pack returns a heap Packed that ``destroy`` frees.
using MakePack = void* (*)(const void* kernel, void** args);
SIM_API bool register_kernel_raw(const void* kernel, const char* name, int nparams, MakePack make,
                                 void (*invoke)(void*), RunPlain run_plain, void (*destroy)(void*),
                                 bool by_name = false, bool barrier_free = false, bool block_loops = false,
                                 const char* fibers_why = nullptr);

template <class... P>
struct KernelPacker {
    using Fn = void (*)(P...);
    using Pk = Packed<Fn, std::tuple<std::decay_t<P>...>>;
    template <size_t... I>
    static void* make_at(const void* kernel, void** args, std::index_sequence<I...>) {
        (void)args;
        return new Pk{reinterpret_cast<Fn>(const_cast<void*>(kernel)),
                      std::tuple<std::decay_t<P>...>(*static_cast<std::decay_t<P>*>(args[I])...)};
    }
    static void* make(const void* kernel, void** args) {
        return make_at(kernel, args, std::index_sequence_for<P...>{});
    }
};

// Records the parameter layout of the kernel at ``kernel`` (its definition's registration);
// kernel_params answers it (false for a kernel no definition registered).
SIM_API void register_kernel_params(const void* kernel, int n, const size_t* sizes, const size_t* aligns);
SIM_API bool kernel_params(const void* kernel, int* n, const size_t** sizes, const size_t** aligns);

// Whether the front end found the kernel at ``kernel`` barrier-free (false when unknown).
SIM_API bool registered_barrier_free(const void* kernel);
// The front end's reason the kernel at ``kernel`` keeps fibers (null when none or unknown).
SIM_API const char* registered_fibers_why(const void* kernel);

// The same for a kernel called by name through ``F``, a lambda that captures nothing (one type
// per kernel definition, so the stored copy is that kernel's).
template <class F, class... P>
struct ByNamePacker {
    using Pk = Packed<F, std::tuple<std::decay_t<P>...>>;
    static inline std::optional<F> call;
    template <size_t... I>
    static void* make_at(void** args, std::index_sequence<I...>) {
        (void)args;
        return new Pk{*call, std::tuple<std::decay_t<P>...>(*static_cast<std::decay_t<P>*>(args[I])...)};
    }
    static void* make(const void*, void** args) { return make_at(args, std::index_sequence_for<P...>{}); }
};

// Records ``k`` (with its name for reports; may be null) so that it can be launched by
// address. Cheap after the first call for a kernel; true when ``k`` is (now) registered.
template <class... P>
static inline bool register_kernel(void (*k)(P...), const char* name) {
    if (k == nullptr) return false;
    return register_kernel_raw(reinterpret_cast<const void*>(k), name, (int)sizeof...(P),
                               &KernelPacker<P...>::make, &KernelPacker<P...>::Pk::invoke,
                               &KernelPacker<P...>::Pk::run_plain,
                               &KernelPacker<P...>::Pk::destroy);
}

// What the front end writes after a kernel's definition: ``by_name`` calls the kernel by its
// name (so the launch's loop may inline it) and ``barrier_free`` is the front end's finding for
// it, which launches by address then use as <<<>>> launches do.
template <class F, class... P>
static inline bool register_kernel(void (*k)(P...), const char* name, LoopKind loops, F by_name) {
    static_assert(std::is_empty<F>::value, "a kernel's call by name captures nothing");
    using Packer = ByNamePacker<F, P...>;
    if (!Packer::call) Packer::call.emplace(by_name);
    // The parameters' sizes and alignments (a trailing 0 keeps the arrays non-empty), for a
    // driver API launch that passes them packed in one buffer (cuLaunchKernel's ``extra``).
    static constexpr size_t sizes[] = {sizeof(std::decay_t<P>)..., 0};
    static constexpr size_t aligns[] = {alignof(std::decay_t<P>)..., 0};
    register_kernel_params(reinterpret_cast<const void*>(k), (int)sizeof...(P), sizes, aligns);
    return register_kernel_raw(reinterpret_cast<const void*>(k), name, (int)sizeof...(P), &Packer::make,
                               &Packer::Pk::invoke, &Packer::Pk::run_plain, &Packer::Pk::destroy, true,
                               loops.barrier_free, loops.block_loops, loops.fibers_why);
}

// A kernel called through a pointer that is a constant, which the compiler can inline as it can
// a call written by name (the front end's lambdas do that where a lambda may appear).
template <auto K>
struct call_by_name {
    template <class... A>
    void operator()(A... a) const {
        K(a...);
    }
};

// What the front end makes of host code naming a kernel template's instance (``k<float>``):
// registers it as a definition's registration would and is the function itself, so that
// ``(void*)k<float>``, ``&k<float>``, calls and ``decltype`` keep their meaning (no lambda:
// one may not appear in an unevaluated operand before C++20).
template <auto K>
static inline auto registered_kernel(const char* name, LoopKind loops) -> decltype(*K) {
    register_kernel(K, name, loops, call_by_name<K>{});
    return *K;
}

// A <<<grid, block, smem, stream>>> launch, as the build rewrites it: the arguments convert
// to the kernel's parameter types once, on the host, like a real launch. ``spec`` carries the
// launch configuration and whether the kernel is barrier-free (then a fast build runs each
// block's threads as a plain loop instead of fibers).
template <class... P>
static inline void launch(const LaunchSpec& spec, const char* name, const char* file, int line,
                          void (*kernel)(P...), typename nondeduced<std::decay_t<P>>::type... args) {
    register_kernel(kernel, name);
    dispatch(spec, name, file, line, reinterpret_cast<const void*>(kernel), kernel,
             std::tuple<std::decay_t<P>...>(args...));
}

template <class... P>
static inline void launch(const char* name, const char* file, int line, dim3 grid, dim3 block, size_t smem,
                          cudaStream_t stream, void (*kernel)(P...),
                          typename nondeduced<std::decay_t<P>>::type... args) {
    launch<P...>(LaunchSpec{grid, block, smem, stream}, name, file, line, kernel, args...);
}

// A launch of a kernel template whose arguments are deduced from the call, as the build
// rewrites it: ``call`` is a generic lambda that calls the kernel by name.
template <class F, class... A>
static inline void launch_deduced(const LaunchSpec& spec, const char* name, const char* file, int line, F call,
                                  A&&... args) {
    dispatch(spec, name, file, line, nullptr, call, std::tuple<std::decay_t<A>...>(std::forward<A>(args)...));
}

// The form the front end emits: barrier_free is its finding that the kernel reaches no barrier
// or other wait.
template <class F, class... A>
static inline void launch_deduced(const char* name, const char* file, int line, dim3 grid, dim3 block, size_t smem,
                                  cudaStream_t stream, LoopKind loops, F call, A&&... args) {
    launch_deduced(LaunchSpec{grid, block, smem, stream, loops.barrier_free, false, loops.block_loops, loops.fibers_why},
                   name, file, line, call, std::forward<A>(args)...);
}

}  // namespace __sim

// ---- launches --------------------------------------------------------------------------------
namespace __sim {

// Passed instead of a call-by-name function when the launched kernel is an expression (a
// pointer through a table, a conditional, ...): C++ applies no default arguments through a
// pointer, so every argument must be given.
struct no_default_args {};

template <size_t N, class Tuple, class Seq = std::make_index_sequence<N>>
struct tuple_prefix;
template <size_t N, class Tuple, size_t... I>
struct tuple_prefix<N, Tuple, std::index_sequence<I...>> {
    using type = std::tuple<std::tuple_element_t<I, Tuple>...>;
};

// One call operator per accepted argument count: its parameters are the kernel's first
// sizeof...(T) parameter types, so arguments convert at the call site as in a real launch
// (a literal 0 or NULL becomes a null pointer, a double a float, ...).
template <class Self, class Prefix>
struct launch_with;
template <class Self, class... T>
struct launch_with<Self, std::tuple<T...>> {
    void operator()(T... args) const {
        static_cast<const Self&>(*this).run(std::tuple<T...>(std::move(args)...));
    }
};

template <class F>
struct by_name_counts {
    template <size_t M>
    using type = std::make_index_sequence<M + 1>;  // every prefix: defaults fill the rest
};
template <>
struct by_name_counts<no_default_args> {
    template <size_t M>
    using type = std::index_sequence<M>;  // all arguments
};

template <class F, class Seq, class... P>
struct Launcher;
template <class F, size_t... N, class... P>
struct Launcher<F, std::index_sequence<N...>, P...>
    : launch_with<Launcher<F, std::index_sequence<N...>, P...>,
                  typename tuple_prefix<N, std::tuple<std::decay_t<P>...>>::type>... {
    using launch_with<Launcher, typename tuple_prefix<N, std::tuple<std::decay_t<P>...>>::type>::operator()...;

    const char* name;
    const char* file;
    int line;
    LaunchSpec spec;
    void (*kernel)(P...);
    F by_name;

    Launcher(const char* n, const char* f, int l, const LaunchSpec& s, void (*k)(P...), F b)
        : name(n), file(f), line(l), spec(s), kernel(k), by_name(b) {}

    template <class... T>
    void run(std::tuple<T...>&& args) const {
        const void* address = reinterpret_cast<const void*>(kernel);
        if (kernel == nullptr) {
            // Launching a null kernel pointer: a GPU refuses it with cudaErrorInvalidDeviceFunction.
            launch_raw(KernelCall{spec, name, file, line});
            return;
        }
        register_kernel(kernel, name);
        if constexpr (sizeof...(T) == sizeof...(P) && std::is_same<F, no_default_args>::value) {
            // Launched through a pointer: the front end could not tell which kernel (and passed
            // false), but the kernel's definition registered whether it is barrier-free.
            LaunchSpec through_pointer = spec;
            through_pointer.barrier_free = spec.barrier_free || registered_barrier_free(address);
            dispatch(through_pointer, name, file, line, address, kernel, std::move(args));
        } else if constexpr (sizeof...(T) == sizeof...(P)) {
            // Called by name for a barrier-free kernel: the plain loop then calls the kernel
            // directly. The arguments have the parameters' types, so the same kernel is chosen.
            // A call that captured nothing may also outlive this statement (a graph node replays
            // it, a device launch runs it later); one that captured a reference may not.
            constexpr bool outlives = std::is_empty<F>::value;
            if (spec.barrier_free && (outlives || (!capturing(spec.stream) && tl_thread == nullptr))) {
                dispatch(spec, name, file, line, address, by_name, std::move(args));
            } else {
                dispatch(spec, name, file, line, address, kernel, std::move(args));
            }
        } else {
            // Fewer arguments than parameters: call the kernel by name so its defaults apply.
            dispatch(spec, name, file, line, address, by_name, std::move(args));
        }
    }
};

// `kernel<<<grid, block, smem, stream>>>(args)` becomes
// `::__sim::launcher(name, __FILE__, __LINE__, grid, block, smem, stream, kernel, by_name, barrier_free)(args)`,
// where barrier_free is the front end's finding that the kernel reaches no barrier or other wait;
// or, with the whole configuration in a LaunchSpec, `::__sim::launcher(spec, name, __FILE__,
// __LINE__, kernel, by_name)(args)`.
template <class F, class... P>
static inline auto launcher(const LaunchSpec& spec, const char* name, const char* file, int line,
                            void (*kernel)(P...), F by_name) {
    using Counts = typename by_name_counts<F>::template type<sizeof...(P)>;
    return Launcher<F, Counts, P...>(name, file, line, spec, kernel, by_name);
}

template <class F, class... P>
static inline auto launcher(const char* name, const char* file, int line, dim3 grid, dim3 block, size_t smem,
                            cudaStream_t stream, void (*kernel)(P...), F by_name, LoopKind loops = false) {
    return launcher(LaunchSpec{grid, block, smem, stream, loops.barrier_free, false, loops.block_loops, loops.fibers_why},
                    name, file, line, kernel, by_name);
}

}  // namespace __sim

#endif  // CUDA_CPU_SIMULATOR_LAUNCH_H
