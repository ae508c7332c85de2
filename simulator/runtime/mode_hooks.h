// What each mode adds to the scheduler (included by scheduler.cpp only), one definition of
// each hook per mode: memcheck tells AddressSanitizer about fiber switches and clears the
// shadow of reused stacks, racecheck gives every CUDA thread a ThreadSanitizer fiber and orders
// the host before a launch's threads and those threads before the host with release/acquire
// pairs; both give each block's shared memory its own heap block
// and fibers bigger stacks. fast and synccheck builds run the plain versions, which do nothing.
// kPlainLoops says which modes may run barrier-free launches without fibers.
#ifndef SIM_MODE_HOOKS_H
#define SIM_MODE_HOOKS_H

#include "sim_internal.h"

#include <cstdio>
#include <cstdlib>

#if defined(SIM_MEMCHECK)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

// Inlined, so that each mode compiles to what it would with the code written in place.
#define SIM_HOOK static inline __attribute__((always_inline))

namespace __sim {
namespace mode {

#if defined(SIM_MEMCHECK) || defined(SIM_RACECHECK)
// A sanitizer sees each shared-memory allocation as its own heap block, and its frames need room.
constexpr bool kSanitized = true;
constexpr size_t kDefaultStackKiB = 256;
#else
constexpr bool kSanitized = false;
constexpr size_t kDefaultStackKiB = 128;
#endif
// Barrier-free launches may run each block's threads as a plain loop on the worker's stack
// (run_block_plain) unless the mode needs a context per CUDA thread. memcheck does not: its
// AddressSanitizer checks every access wherever it runs, and a thread's report names its
// kernel, block and thread through the same RunState. synccheck does not either: a barrier-free
// kernel reaches no barrier or warp operation, so it has nothing to check there. racecheck
// does: each CUDA thread is a ThreadSanitizer fiber with a stack of its own.
#if defined(SIM_RACECHECK)
constexpr bool kPlainLoops = false;
#else
constexpr bool kPlainLoops = true;
#endif
// A kernel whose barriers are all block-uniform may run each block as loops over its threads,
// one per region between barriers (run_block_plain with Launch::block_loops). memcheck and the
// shared-memory race check do so only for kernels the front end marks kBlockLoops (launch.h):
// those whose loops make the same accesses in the same order as fibers and keep no array in a
// per-thread slot (memcheck would see all threads' copies as one heap block); the others are
// marked kBlockLoopsFast, which those builds read as "fibers". synccheck follows each thread
// from barrier to barrier, and racecheck needs a ThreadSanitizer fiber per thread.
#if defined(SIM_RACECHECK) || defined(SIM_SYNCCHECK)
constexpr bool kBlockLoops = false;
#else
constexpr bool kBlockLoops = true;
#endif
// A waiting fiber may hand over straight to the next ready one (x86-64 only) unless a sanitizer
// must see every switch go through the scheduler.
constexpr bool kDirectHandoff = !kSanitized;

// The dynamic shared memory of a block of ``wk`` (``smem`` bytes) of launch ``L``: a heap block of
// its own for a sanitizer, else the worker's arena. memcheck keeps one for the blocks of a launch
// that is not cooperative on a worker (keep_shared in device_api.cpp says why); prepare_block
// fills it as a new one.
SIM_HOOK char* dynamic_shared(Worker* wk, const Launch* L, size_t smem) {
#if defined(SIM_MEMCHECK)
    if (!L->spec.cooperative && wk->kept_dyn != nullptr) return wk->kept_dyn;
#else
    (void)L;
#endif
    if constexpr (kSanitized) {
        char* dyn = static_cast<char*>(std::malloc(smem == 0 ? 1 : smem));
        if (smem == 0) {
            // Zero bytes of dynamic shared memory: any access is out of bounds.
            std::free(dyn);
            dyn = static_cast<char*>(std::malloc(0));
        }
#if defined(SIM_MEMCHECK)
        if (!L->spec.cooperative) wk->kept_dyn = dyn;
#endif
        return dyn;
    }
    if (wk->arena == nullptr) wk->arena = static_cast<char*>(std::aligned_alloc(256, kArenaBytes));
    wk->arena_used = (smem + 255) & ~size_t(255);
    return wk->arena;
}

// Frees what dynamic_shared and the __shared__ variables of block ``b`` took from the heap (but
// what memcheck's worker keeps for the launch's next block: release_launch frees it).
SIM_HOOK void free_shared(Block* b) {
    if constexpr (!kSanitized) return;
#if defined(SIM_MEMCHECK)
    if (!b->launch->spec.cooperative) return;
#endif
    for (auto& s : *b->statics) std::free(s.second);
    std::free(b->dyn);
}

// The end of worker ``wk``'s part of a launch that is not cooperative (run_blocks).
SIM_HOOK void release_launch(Worker* wk) {
#if defined(SIM_MEMCHECK)
    release_kept_shared(wk);
#else
    (void)wk;
#endif
}

#if defined(SIM_MEMCHECK)
// The scheduler's own stack, as AddressSanitizer reported it when the first fiber started.
static __thread const void* tl_sched_stack_bottom = nullptr;
static __thread size_t tl_sched_stack_size = 0;
// Fibers that return unpoison their own frames on the way out; only a block abandoned mid-frame
// (failed, timed out) or fresh stack memory needs the whole stacks' shadow cleared.
static thread_local bool tl_stacks_dirty = true;

SIM_HOOK void on_stacks_mapped() { tl_stacks_dirty = true; }
SIM_HOOK void on_fiber_init(Worker*, const Block&, Fiber& f, int, const char*) {
    // Frames of fibers that never returned leave poisoned redzones behind.
    if (tl_stacks_dirty) __asan_unpoison_memory_region(f.stack, f.stack_size);
}
SIM_HOOK void on_launch_start(Worker*) {}
SIM_HOOK void on_block_start(Worker*, const Block&) { tl_stacks_dirty = false; }
SIM_HOOK void on_block_end(Block& b) {
    if (b.failed || b.live > 0) tl_stacks_dirty = true;
}
// The scheduler switches to fiber ``f``; after_enter runs when it is back.
SIM_HOOK void before_enter(Fiber* f, void** token) { __sanitizer_start_switch_fiber(token, f->stack, f->stack_size); }
SIM_HOOK void after_enter(void* token) { __sanitizer_finish_switch_fiber(token, nullptr, nullptr); }
// Fiber ``f`` switches back to the scheduler (for good when final_exit); after_leave runs when
// the scheduler resumes it.
SIM_HOOK void before_leave(Fiber* f, bool final_exit) {
    __sanitizer_start_switch_fiber(final_exit ? nullptr : &f->asan_fake, tl_sched_stack_bottom, tl_sched_stack_size);
}
SIM_HOOK void after_leave(Fiber* f) { __sanitizer_finish_switch_fiber(f->asan_fake, nullptr, nullptr); }
// First and last thing a fiber does.
SIM_HOOK void on_fiber_start(Worker*) {
    __sanitizer_finish_switch_fiber(nullptr, &tl_sched_stack_bottom, &tl_sched_stack_size);
}
SIM_HOOK void on_thread_exit(Block*) {}

#elif defined(SIM_RACECHECK)
SIM_HOOK void on_stacks_mapped() {}
SIM_HOOK void on_fiber_init(Worker* wk, const Block& b, Fiber& f, int i, const char* kernel) {
    f.fenced = false;
    if (!b.launch->checked) {
        f.tsan_fiber = nullptr;  // runs as the worker, which ignores it (UncheckedScope)
        return;
    }
    if ((int)wk->tsan_fibers.size() <= i) wk->tsan_fibers.push_back(__tsan_create_fiber(0));
    f.tsan_fiber = wk->tsan_fibers[i];
    char nb[160];
    fiber_name(nb, sizeof nb, kernel, b.idx, f.thread_idx);
    __tsan_set_fiber_name(f.tsan_fiber, nb);
}
// Whether this worker released tsan_start since its launch began.
static thread_local bool tl_start_released = false;
SIM_HOOK void on_launch_start(Worker*) { tl_start_released = false; }
SIM_HOOK void on_block_start(Worker* wk, const Block& b) {
    tl_sched_tsan = __tsan_get_current_fiber();
    if (!b.launch->checked) return;
    // What the host did before the launch happens before every thread of it: released once per
    // launch and worker, so that a fiber slot acquires it once (a release would make every
    // thread's acquire, and its release at exit, cost a pass over all threads' clocks).
    // The dynamic shared memory the worker allocated and filled for this block must be seen
    // as written before the block's threads run, so it is released again then. Blocks of a
    // launch are otherwise unordered, as on a GPU (a thread follows the one that ran in its
    // fiber slot before it).
    if (!tl_start_released || b.launch->spec.smem > 0) {
        __tsan_release(wk->tsan_start);
        tl_start_released = true;
    }
}
SIM_HOOK void on_block_end(Block& b) {
    if (!b.launch->checked) return;
    if (b.failed) {
        // A failed block's threads stop where they are and never exit: what they did still
        // happens before what follows the launch (the host frees the memory they read).
        for (int i = 0; i < b.nthreads; ++i) {
            __tsan_switch_to_fiber(b.fibers[i].tsan_fiber, 1);
            __tsan_release(b.tsan_done);
        }
        __tsan_switch_to_fiber(tl_sched_tsan, 1);
    }
    __tsan_acquire(b.tsan_done);
}
SIM_HOOK void before_enter(Fiber* f, void**) {
    if (f->tsan_fiber != nullptr) __tsan_switch_to_fiber(f->tsan_fiber, 1);
}
SIM_HOOK void after_enter(void*) {}
SIM_HOOK void before_leave(Fiber* f, bool) {
    if (f->tsan_fiber != nullptr) __tsan_switch_to_fiber(tl_sched_tsan, 1);
}
SIM_HOOK void after_leave(Fiber*) {}
SIM_HOOK void on_fiber_start(Worker* wk) {
    // Everything before this block on this worker (earlier blocks, the host) happens before it.
    __tsan_acquire(wk->tsan_start);
}
SIM_HOOK void on_thread_exit(Block* b) { __tsan_release(b->tsan_done); }
// A block of a launch racecheck does not check (run --launch-count, --kernel-name, ...) runs as
// the worker itself, no fiber of ThreadSanitizer's per CUDA thread, with the worker's accesses
// and synchronisation ignored while it runs.
struct UncheckedScope {
    const bool on;
    explicit UncheckedScope(bool checked) : on(!checked) {
        if (!on) return;
        __tsan_ignore_thread_begin();
        AnnotateIgnoreSyncBegin(__FILE__, __LINE__);
    }
    ~UncheckedScope() {
        if (!on) return;
        AnnotateIgnoreSyncEnd(__FILE__, __LINE__);
        __tsan_ignore_thread_end();
    }
    UncheckedScope(const UncheckedScope&) = delete;
    UncheckedScope& operator=(const UncheckedScope&) = delete;
};

#else
SIM_HOOK void on_stacks_mapped() {}
SIM_HOOK void on_fiber_init(Worker*, const Block&, Fiber&, int, const char*) {}
SIM_HOOK void on_launch_start(Worker*) {}
SIM_HOOK void on_block_start(Worker*, const Block&) {}
SIM_HOOK void on_block_end(Block&) {}
SIM_HOOK void before_enter(Fiber*, void**) {}
SIM_HOOK void after_enter(void*) {}
SIM_HOOK void before_leave(Fiber*, bool) {}
SIM_HOOK void after_leave(Fiber*) {}
SIM_HOOK void on_fiber_start(Worker*) {}
SIM_HOOK void on_thread_exit(Block*) {}
#endif

#if !defined(SIM_RACECHECK)
// memcheck tells a launch it does not check by its reports (memcheck_reports.cpp), synccheck by its
// checks (sync_checked): the launch runs as it would otherwise.
struct UncheckedScope {
    explicit UncheckedScope(bool) {}
};
#endif

}  // namespace mode
}  // namespace __sim

#undef SIM_HOOK

#endif  // SIM_MODE_HOOKS_H
