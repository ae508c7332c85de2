// sim-runtime: per mode
// The scheduler: every CUDA thread of a block is a fiber with its own stack, switched by hand
// (a small x86-64 context switch; ucontext elsewhere). A worker thread runs one block at a
// time; fibers switch only at __syncthreads, warp shuffles/votes/__syncwarp, __nanosleep, a turn
// of a spinning loop (spin_wait) and thread exit, so barriers and shuffles mean what they mean on
// a GPU. When no fiber of a block can make progress the block fails with a deadlock report
// instead of hanging. The blocks of a launch are shared out between SIMULATOR_THREADS workers
// (the calling thread is one of them; the others are worker_pool.cpp's); a block that only spins
// lets blocks not yet started run beside it on its worker (resident_blocks.cpp, take_turns). A
// barrier-free launch runs each block's threads as a plain loop instead (run_block_plain; every
// mode but racecheck, see mode::kPlainLoops): no fibers, since nothing in it ever waits.
#include "sim_internal.h"

#include "mode_hooks.h"

#include <link.h>
#include <signal.h>
#include <sys/mman.h>
#include <ucontext.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <thread>

namespace __sim {

// The running fiber's ThreadState, and the objects CUDA's built-in variables name (set from it by
// enter_thread, and thread after thread by a plain loop); warpSize is 32 for every thread.
__thread ThreadState* tl_thread = nullptr;
__thread uint3 tls_thread_idx = {0, 0, 0};
__thread uint3 tls_block_idx = {0, 0, 0};
__thread dim3 tls_block_dim;
__thread dim3 tls_grid_dim;
namespace {
__thread Site tl_site = {nullptr, 0};
}  // namespace

__attribute__((noinline)) int call_site(const char* file, int line) {
    tl_site = Site{file, line};
    return 0;
}

__attribute__((noinline)) Site take_site() {
    const Site s = tl_site;
    tl_site = Site{nullptr, 0};
    return s.file != nullptr ? s : Site{"(library code)", 0};
}

__thread const int tls_warp_size __asm__("warpSize") SIM_API = 32;
__thread RunState tl_run = {nullptr, nullptr, false, nullptr, nullptr};
__thread bool tl_launches_inline = false;
__thread const PlainBlock* tl_block_loop SIM_API = nullptr;
#if defined(SIM_RACECHECK)
__thread void* tl_sched_tsan = nullptr;

namespace {
// ThreadSanitizer starts the thread that holds it to memory_limit_mb (sanitizer_env.py) at the
// program's first pthread_create; the workers start at the first launch, after the host may
// have filled gigabytes of buffers (4 bytes of shadow per byte). One thread at load starts it.
struct StartSanitizerBackground {
    StartSanitizerBackground() { std::thread([] {}).join(); }
} g_start_sanitizer_background;
}  // namespace
#endif

namespace {

// ---- context switching ---------------------------------------------------------------------
// Only the callee-saved registers and the stack change hands. The SSE/x87 control words are
// left alone: every fiber of a worker shares them, as a GPU thread has no rounding-mode state
// of its own to keep (saving and restoring them cost most of a switch).
#if defined(__x86_64__)
extern "C" void sim_ctx_swap(void** save_sp, void* next_sp);
asm(R"(
.text
.p2align 4
.globl sim_ctx_swap
.hidden sim_ctx_swap
.type sim_ctx_swap,@function
sim_ctx_swap:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
.size sim_ctx_swap, .-sim_ctx_swap
)");
#endif

const size_t kDefaultStackKiB = mode::kDefaultStackKiB;

// Per-CUDA-thread stack: SIMULATOR_STACK_KB (16..65536) or the mode's default.
size_t stack_size() {
    static const size_t size = (size_t)knob_value("SIMULATOR_STACK_KB", (long)kDefaultStackKiB) * 1024;
    return size;
}
const size_t kGuard = 4096;
// Each stack slot has this much room beyond its size, so that the tops of the fibers' stacks
// can be staggered (stack_color): at the same offset in every slot they would all fall into
// the same few cache sets, and every barrier touches the top of each fiber's stack in turn.
const size_t kColorSpan = 32 * 1024;

size_t slot_bytes() { return stack_size() + kGuard + kColorSpan; }

// How far below the end of its slot a fiber's stack starts: 16 steps of 256 bytes (across the
// L1 sets of a page) times 8 pages (across more L2 sets); less than kColorSpan.
size_t stack_color(int slot) { return (size_t)(slot % 16) * 256 + (size_t)((slot / 16) % 8) * 4096; }

#if !defined(__x86_64__)
__thread ucontext_t* tl_sched_uc = nullptr;
#endif

// ---- fiber switching -----------------------------------------------------------------------
void fiber_main();

#if defined(__x86_64__)
extern "C" SIM_API void sim_fiber_entry() { fiber_main(); }
#endif

void switch_to_fiber(Fiber* f) {
    tl_run.fiber = f;
    enter_thread(f);
    void* token = nullptr;
    mode::before_enter(f, &token);
#if defined(__x86_64__)
    sim_ctx_swap(&tl_run.sched_sp, f->sp);
#else
    swapcontext(tl_sched_uc, &f->uc);
#endif
    mode::after_enter(token);
    tl_run.fiber = nullptr;
    enter_thread(nullptr);
}

}  // namespace

// Back to the scheduler; returns when the scheduler resumes this fiber.
void yield_to_scheduler(bool final_exit) { yield_from(run_state(), final_exit); }

void yield_from(RunState& run, bool final_exit) {
#if defined(SIM_MEMCHECK)
    undo_fault_writes();  // this thread's turn ends: another's access may be reported next
#endif
    Block* b = run.block;
    if (b != nullptr && b->plain) {
        // A plain-loop thread has no context of its own to leave: it stops, and so does its
        // block (every way here is a failure; a wait is refused before it gets here).
        if (!final_exit) fail_block(b);
        run.in_kernel = false;
        siglongjmp(run.worker->plain_exit, 1);
    }
    Fiber* f = run.fiber;
    b->cursor = f->linear;
#if defined(__x86_64__)
    // Straight to the next ready fiber of this pass, which the scheduler would run next anyway
    // (so the order of execution, and what synccheck sees, stays the same): one context switch
    // per wait instead of two. The scheduler resumes when no fiber after this one is ready.
    if (mode::kDirectHandoff && !b->failed) {
        for (int j = f->linear + 1; j < b->nthreads; ++j) {
            Fiber* next = &b->fibers[j];
            if (next->state != FState::kReady) continue;
            run.fiber = next;
            enter_thread(next);
            // The fibers after it are likely the next ones to run: start loading the top of the
            // next one's stack and the state of the one after (at 256+ fibers a block's stacks
            // and states outgrow L1).
            if (j + 2 < b->nthreads) __builtin_prefetch(next + 2);
            if (j + 1 < b->nthreads) {
                char* top = static_cast<char*>(next[1].sp);
                __builtin_prefetch(top);
                __builtin_prefetch(top + 64);
            }
            sim_ctx_swap(&f->sp, next->sp);
            return;  // whoever resumed this fiber set tl_run.fiber and tl_thread
        }
    }
#endif
    mode::before_leave(f, final_exit);
#if defined(__x86_64__)
    sim_ctx_swap(&f->sp, run.sched_sp);
#else
    swapcontext(&f->uc, tl_sched_uc);
#endif
    mode::after_leave(f);
}

void fail_block(Block* b) {
    b->failed = true;
    b->launch->failed.store(true);
}

void stop_thread(Block* b, Fiber* f) {
    fail_block(b);
    f->state = FState::kDone;
    yield_to_scheduler(true);
    std::abort();  // a stopped thread never comes back
}

Worker::~Worker() {
    if (stacks != nullptr) munmap(stacks, stacks_bytes);
    std::free(arena);
}

bool runs_plain(bool barrier_free, bool checked) {
    return barrier_free && (mode::kPlainLoops || !checked) && !fibers_forced();
}

bool runs_block_loops(bool block_loops) { return block_loops && mode::kBlockLoops && !fibers_forced(); }

const char* runtime_fibers_why(const LaunchSpec& spec, bool checked) {
    if (spec.cooperative) return "a cooperative launch (every block stays resident)";
    if (fibers_forced() && (spec.barrier_free || spec.block_loops)) return "SIMULATOR_FIBERS=1";
    if (spec.barrier_free && !mode::kPlainLoops && checked)
        return "racecheck of all memory keeps a ThreadSanitizer fiber per thread of a launch it checks";
    if (spec.block_loops && !mode::kBlockLoops) {
#if defined(SIM_SYNCCHECK)
        return "synccheck follows each thread from barrier to barrier";
#else
        return "racecheck of all memory keeps a ThreadSanitizer fiber per thread";
#endif
    }
    return nullptr;
}

Worker* worker() {
    if (tl_run.worker == nullptr) {
        // On the heap, not in thread-local storage: a loaded library whose thread-local block is
        // small gets the process's static TLS, which every barrier and every threadIdx read
        // reaches without a call into the dynamic linker. Freed when the thread ends.
        static thread_local std::unique_ptr<Worker> w;
        w.reset(new Worker);
        tl_run.worker = w.get();
    }
    return tl_run.worker;
}

// The running CUDA thread has finished (its kernel returned, or PTX exit): it leaves its block's
// barriers and warp operations, which may release the threads waiting for it, and never runs again.
void finish_thread(RunState& run) {
    Fiber* f = run.fiber;
    Block* b = run.block;
    f->state = FState::kDone;
    b->live--;
    b->warp_exited[f->warp] |= 1u << f->lane;
    thread_exited(b, f);
    mode::on_thread_exit(b);
    if (!stopping(b)) {
        if (b->bar_arrived > 0 && b->bar_arrived == b->live) release_barrier(b);
        if (b->warp_arrived[f->warp] != 0) check_pending_warps(b, f->warp);
        if (b->tiles_used || b->launch->grid != nullptr) release_after_exit(b, f);
    }
    yield_from(run, true);
    std::abort();  // a finished fiber is never resumed
}

namespace {

void fiber_main() {
    RunState& run = run_state();
    mode::on_fiber_start(run.worker);
    run.in_kernel = true;
    run.block->launch->invoke(run.block->launch->pack);
    run.in_kernel = false;
    finish_thread(run);
}

// Makes room for ``count`` stacks (all remapped at once, before any fiber of a block starts),
// each with a guard page under it unless ``guard`` is false.
bool reserve_stacks(Worker* wk, int count, bool guard = true) {
    if (count > wk->stack_slots) {
        mode::on_stacks_mapped();
        if (wk->stacks != nullptr) munmap(wk->stacks, wk->stacks_bytes);
        wk->stacks = nullptr;
        wk->stack_slots = 0;
        const int slots = std::max(count, 32);
        const size_t bytes = slot_bytes() * (size_t)slots;
        void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED) return false;
        wk->stacks = static_cast<char*>(p);
        wk->stacks_bytes = bytes;
        wk->stack_slots = slots;
        // A guard page under each stack turns an overflow into a fault instead of corruption.
        if (guard) {
            for (int i = 0; i < slots; ++i) mprotect(wk->stacks + slot_bytes() * i, kGuard, PROT_NONE);
        }
    }
    return true;
}

// A slot is [guard page][stack_size() + kColorSpan]: a fiber's stack starts above the guard and
// its top is stack_color(slot) below the end of the slot, so it is never below SIMULATOR_STACK_KB.
char* fiber_stack(Worker* wk, int slot) { return wk->stacks + slot_bytes() * (size_t)slot + kGuard; }

void init_fiber(Fiber* f) {
#if defined(__x86_64__)
    uintptr_t top = (reinterpret_cast<uintptr_t>(f->stack) + f->stack_size) & ~uintptr_t(15);
    void** sp = reinterpret_cast<void**>(top);
    *--sp = nullptr;  // keeps the entry's stack 16-byte aligned, as after a call
    *--sp = reinterpret_cast<void*>(&sim_fiber_entry);
    for (int i = 0; i < 6; ++i) *--sp = nullptr;  // rbp rbx r12 r13 r14 r15
    f->sp = sp;
#else
    getcontext(&f->uc);
    f->uc.uc_stack.ss_sp = f->stack;
    f->uc.uc_stack.ss_size = f->stack_size;
    f->uc.uc_link = nullptr;
    makecontext(&f->uc, fiber_main, 0);
#endif
}

// A fiber block's state for the collectives it may use, kept by the worker and reused between
// blocks: the barrier counters of its tiles of 64..1024 threads (one per tile size and first
// warp), the tiles' exchange scratch, and the wmma operand buffers of its warps.
void init_collective_state(Worker* wk, Block* b) {
    const size_t need = (size_t)kTileSizes * (size_t)b->nwarps;
    if (wk->tile_counts.size() < need) wk->tile_counts.resize(need);
    b->tile_arrived = wk->tile_counts.data();
    std::fill(b->tile_arrived, b->tile_arrived + need, 0);
    // Allocated here, by the worker before its fibers start, not by the first CUDA thread that
    // uses it (racecheck would take that thread's allocation for a write the others race with).
    if (wk->tile_scratch.size() < 1024) wk->tile_scratch.resize(1024);
    init_wmma_buffers(wk, b);
}

void free_block_memory(Block* b) {
#if defined(SIM_SHARED_RACES)
    block_finished(b->worker);
#endif
    mode::free_shared(b);
    b->statics->clear();
    b->dyn = nullptr;
}

// A thread that stops early (a failed assert, a memory fault, the launch timeout, a refused
// wait) leaves through yield_to_scheduler, which jumps back here: the block has failed and ends.
void run_block_plain(Block* b) {
    Worker* wk = tl_run.worker;
    Fiber* f = &b->fibers[0];
    f->block_idx = b->idx;
    f->block_dim = b->launch->spec.block;
    f->grid_dim = b->launch->spec.grid;
    f->state = FState::kReady;
    b->live = b->nthreads;
    tl_run.block = b;
    tl_run.fiber = f;
    enter_thread(f);
    // The threads run one after another on the worker's own stack: no fiber, no context switch.
    if (sigsetjmp(wk->plain_exit, 0) == 0) {
        Launch* L = b->launch;
        int first = 0;  // block loops: the thread each round starts with (launch.h)
        const PlainBlock pb{&f->thread_idx, &f->linear, L->spec.block, &L->timed_out, &first, &b->fault_warp};
        if (L->block_loops) {
            // The kernel once for the whole block: its rewritten body loops over the threads
            // between barriers (simulator/block_loops.py) and finds the block here.
            tl_block_loop = &pb;
            tl_run.in_kernel = true;
            L->invoke(L->pack);
            tl_run.in_kernel = false;
        } else if (L->run_plain != nullptr) {
            // The launch's own loop: in_kernel stays set for all of it (the loop is in the
            // kernel's object, so a timeout or fault stops it like the kernel's own code).
            tl_run.in_kernel = true;
            L->run_plain(L->pack, pb);
            tl_run.in_kernel = false;
        } else {
            // A launch by address or a graph replay: the runtime's loop, in_kernel per thread.
            bool* in_kernel = &tl_run.in_kernel;
            for_each_plain_thread(pb, [L, in_kernel] {
                *in_kernel = true;
                L->invoke(L->pack);
                *in_kernel = false;
            });
        }
        if (L->timed_out.load(std::memory_order_relaxed)) fail_block(b);
    }
    tl_block_loop = nullptr;
    tl_run.in_kernel = false;
    tl_run.fiber = nullptr;
    enter_thread(nullptr);
}

// Block ``id`` of ``L`` on worker ``wk``: its index, warp bookkeeping, shared memory and fiber
// records. Per-block bookkeeping lives in the worker and is reused: no heap allocation per block.
void prepare_block(Launch* L, unsigned long long id, Block& b, Worker* wk) {
    const LaunchSpec& s = L->spec;
    b.launch = L;
    b.worker = wk;
#if defined(SIM_SHARED_RACES)
    block_started(wk);
#endif
    b.idx = uint3{(unsigned)(id % s.grid.x), (unsigned)((id / s.grid.x) % s.grid.y),
                  (unsigned)(id / ((unsigned long long)s.grid.x * s.grid.y))};
    b.nthreads = (int)(s.block.x * s.block.y * s.block.z);
    b.nwarps = (b.nthreads + 31) / 32;
    if (wk->warp_bits.size() < 3 * (size_t)b.nwarps) wk->warp_bits.resize(3 * (size_t)b.nwarps);
    b.warp_present = wk->warp_bits.data();
    b.warp_exited = b.warp_present + b.nwarps;
    b.warp_arrived = b.warp_exited + b.nwarps;
    for (int w = 0; w < b.nwarps; ++w) {
        const int lanes = std::min(32, b.nthreads - 32 * w);
        b.warp_present[w] = lanes == 32 ? ~0u : (1u << lanes) - 1;
        b.warp_exited[w] = 0;
        b.warp_arrived[w] = 0;
    }
    wk->statics.clear();
    b.statics = &wk->statics;
#if defined(SIM_MEMCHECK)
    wk->slots_asked = 0;  // kept_slots (device_api.cpp)
#endif
    wk->arena_used = 0;
    b.dyn = mode::dynamic_shared(wk, L, s.smem);
    b.smem = wk->arena;
    if (s.smem > 0) std::memset(b.dyn, 0xff, s.smem);  // shared memory starts as garbage, as on a GPU
    if ((int)wk->fibers.size() < b.nthreads) wk->fibers.resize(b.nthreads);
    b.fibers = wk->fibers.data();
}

// Every thread of ``b`` as a fiber on ``wk``'s stacks, ready to start.
void init_block_fibers(Launch* L, Block& b, Worker* wk) {
    const LaunchSpec& s = L->spec;
    for (int i = 0; i < b.nthreads; ++i) {
        Fiber& f = b.fibers[i];
        f.thread_idx = uint3{(unsigned)(i % s.block.x), (unsigned)((i / s.block.x) % s.block.y),
                             (unsigned)(i / (s.block.x * s.block.y))};
        f.block_idx = b.idx;
        f.block_dim = s.block;
        f.grid_dim = s.grid;
        f.linear = i;
        f.warp = i / 32;
        f.lane = i % 32;
        f.state = FState::kReady;
        f.stack = fiber_stack(wk, i);
        f.stack_size = stack_size() + kColorSpan - stack_color(i);
        f.asan_fake = nullptr;
        f.wmma_turn = 0;
        mode::on_fiber_init(wk, b, f, i, L->name);
        init_fiber(&f);
    }
    b.live = b.nthreads;
}

void run_block(Launch* L, unsigned long long id) {
    const mode::UncheckedScope unchecked(L->checked);
    Worker* wk = worker();
    Block b;
    b.plain = L->plain;
    prepare_block(L, id, b, wk);
    if (b.plain) {
        run_block_plain(&b);
        tl_run.block = nullptr;
        free_block_memory(&b);
        return;
    }
    init_collective_state(wk, &b);
    if (!reserve_stacks(wk, b.nthreads)) {
        report("cannot map %d fiber stacks for %s", b.nthreads, where(&b).c_str());
        fail_block(&b);
        free_block_memory(&b);
        return;
    }
    init_block_fibers(L, b, wk);
    tl_run.block = &b;
    mode::on_block_start(wk, b);
#if !defined(__x86_64__)
    ucontext_t sched;
    tl_sched_uc = &sched;
#endif
    BlockProgress progress;
    while (b.live > 0 && !b.failed) {
        bool ran = false;
        for (int i = 0; i < b.nthreads && !b.failed; ++i) {
            if (b.fibers[i].state == FState::kReady && may_run(b, i)) {
                switch_to_fiber(&b.fibers[i]);
                i = b.cursor;  // the fibers up to here ran, one handing over to the next
                ran = true;
            }
        }
        if (kFaultWarps && b.fault_warp >= 0) b.failed = true;  // the faulting warp had its turn this round
        if (L->timed_out.load(std::memory_order_relaxed)) {
            fail_block(&b);  // a timeout stops even threads that keep reaching barriers
            break;
        }
        if (!ran && b.live > 0 && !b.failed && !release_coalesced(&b)) report_deadlock(&b);
        // Only a block whose threads spin gets here: it runs on with blocks not yet started.
        if (__builtin_expect(b.spins != progress.spins, 0) && b.live > 0 && !b.failed && stalled(b, progress))
            take_turns(L, b, progress);
    }
    mode::on_block_end(b);
    tl_run.block = nullptr;
    free_block_memory(&b);
}

// ---- cooperative launches ------------------------------------------------------------------
// Every block of a cooperative launch is resident at once, as a GPU guarantees: all of them run
// on the launching thread, each with a worker of its own (its stacks, fibers, per-warp state and
// shared memory), and the scheduler passes from block to block whenever one can go no further.
// The workers and one mapping for all their stacks are kept for the next cooperative launch.
struct CoopPool {
    std::vector<std::unique_ptr<Worker>> workers;
    char* stacks = nullptr;
    size_t slots = 0;
    ~CoopPool() {
        for (auto& w : workers) w->stacks = nullptr;  // borrowed from ``stacks``
        if (stacks != nullptr) munmap(stacks, slot_bytes() * slots);
    }
};

CoopPool& coop_pool() {
    static thread_local CoopPool pool;
    return pool;
}

// Guard pages split a mapping into one kernel memory area per stack; past this many stacks
// (a process may have about 65530 areas) a cooperative launch's stacks go without them.
constexpr size_t kCoopGuardedSlots = 16384;

bool reserve_coop_stacks(CoopPool& pool, size_t count) {
    if (count <= pool.slots) return true;
    mode::on_stacks_mapped();
    if (pool.stacks != nullptr) munmap(pool.stacks, slot_bytes() * pool.slots);
    pool.stacks = nullptr;
    pool.slots = 0;
    void* p = mmap(nullptr, slot_bytes() * count, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    if (p == MAP_FAILED) return false;
    pool.stacks = static_cast<char*>(p);
    pool.slots = count;
    if (count <= kCoopGuardedSlots) {
        for (size_t i = 0; i < count; ++i) mprotect(pool.stacks + slot_bytes() * i, kGuard, PROT_NONE);
    }
    return true;
}

// Block ``id`` of cooperative launch ``L``, on worker ``wk`` whose stacks start at ``stacks``.
void start_coop_block(Launch* L, unsigned long long id, Block& b, Worker* wk, char* stacks) {
    prepare_block(L, id, b, wk);
    init_collective_state(wk, &b);
    wk->stacks = stacks;
    wk->stack_slots = b.nthreads;
    wk->stacks_bytes = 0;
    mode::on_stacks_mapped();  // the stacks may hold an earlier launch's frames
    init_block_fibers(L, b, wk);
    tl_run.worker = wk;
    tl_run.block = &b;
    // Each block of a cooperative launch has a worker of its own: each releases the host's work.
    mode::on_launch_start(wk);
    mode::on_block_start(wk, b);
}

// One pass over the ready fibers of ``b`` (a fiber that waits hands over to the next ready one);
// true when any ran. Blocks take turns pass by pass, so a thread that spins with __nanosleep on
// what another block writes lets that block run.
bool run_coop_pass(Block& b) {
    bool ran = false;
    for (int i = 0; i < b.nthreads && !b.failed; ++i) {
        if (b.fibers[i].state == FState::kReady && may_run(b, i)) {
            switch_to_fiber(&b.fibers[i]);
            i = b.cursor;
            ran = true;
        }
    }
    if (kFaultWarps && b.fault_warp >= 0) b.failed = true;
    if (!ran && b.live > 0 && !b.failed) ran = release_coalesced(&b);
    return ran;
}

void end_coop_block(Block& b) {
    mode::on_block_end(b);
    free_block_memory(&b);
}

}  // namespace

bool start_resident_block(Launch* L, unsigned long long id, Block& b, Worker* wk, bool new_launch, bool guard) {
    prepare_block(L, id, b, wk);
    init_collective_state(wk, &b);
    tl_run.worker = wk;
    tl_run.block = &b;
    if (new_launch) mode::on_launch_start(wk);  // racecheck: the host's work happens before its blocks
    if (!reserve_stacks(wk, b.nthreads, guard)) {
        report("cannot map %d fiber stacks for %s", b.nthreads, where(&b).c_str());
        fail_block(&b);
        free_block_memory(&b);
        return false;
    }
    mode::on_stacks_mapped();  // the stacks may hold an abandoned block's frames
    init_block_fibers(L, b, wk);
    mode::on_block_start(wk, b);
    return true;
}

bool resident_block_pass(Block& b) {
    tl_run.worker = b.worker;
    tl_run.block = &b;
    const bool ran = run_coop_pass(b);
    if (!ran && b.live > 0 && !b.failed) report_deadlock(&b);
    return ran;
}

void end_resident_block(Block& b) {
    tl_run.worker = b.worker;
    tl_run.block = &b;
    end_coop_block(b);
}

void release_resident_worker(Worker* wk) { mode::release_launch(wk); }

void run_blocks(Launch* L) {
    ensure_signal_stack();
    mode::on_launch_start(worker());
    {
        std::lock_guard<std::mutex> lock(L->threads_mu);
        L->threads.push_back(pthread_self());
    }
    Worker* wk = worker();
    wk->launch_slot = std::min(L->workers_seen.fetch_add(1), Launch::kMaxWorkers - 1);
    for (;;) {
        const unsigned long long id = L->next.fetch_add(1);
        if (id >= L->nblocks || L->failed.load()) break;
        run_block(L, id);
    }
    L->stalled_at[wk->launch_slot].store(-1);
    mode::release_launch(worker());
    std::lock_guard<std::mutex> lock(L->threads_mu);
    L->threads.erase(std::find(L->threads.begin(), L->threads.end(), pthread_self()));
}

void run_cooperative(Launch* L) {
    ensure_signal_stack();
    const mode::UncheckedScope unchecked(L->checked);
    {
        std::lock_guard<std::mutex> lock(L->threads_mu);
        L->threads.push_back(pthread_self());
    }
    Worker* own = worker();
    CoopPool& pool = coop_pool();
    const unsigned long long n = L->nblocks;
    const size_t nthreads = (size_t)L->spec.block.x * L->spec.block.y * L->spec.block.z;
    std::vector<Block> blocks(n);
    Grid grid;
    grid.blocks = blocks.data();
    grid.nblocks = n;
    grid.live = (long long)(n * nthreads);
    if (!reserve_coop_stacks(pool, n * nthreads)) {
        report("cannot map %zu fiber stacks for the cooperative launch of kernel '%s' (launched at %s:%d)",
               n * nthreads, L->name, L->file, L->line);
        L->failed.store(true);
    } else {
        while (pool.workers.size() < n) pool.workers.emplace_back(new Worker);
        L->grid = &grid;
        for (unsigned long long k = 0; k < n; ++k) {
            start_coop_block(L, k, blocks[k], pool.workers[k].get(), pool.stacks + slot_bytes() * nthreads * k);
        }
    }
#if !defined(__x86_64__)
    ucontext_t sched;
    tl_sched_uc = &sched;
#endif
    std::vector<char> ended(n, 0);
    unsigned long long done = 0;
    while (L->grid != nullptr && done < n && !L->failed.load()) {
        bool ran = false;
        for (unsigned long long k = 0; k < n && !L->failed.load(); ++k) {
            if (ended[k]) continue;
            tl_run.worker = pool.workers[k].get();
            tl_run.block = &blocks[k];
            ran = run_coop_pass(blocks[k]) || ran;
            if (blocks[k].live == 0) {
                end_coop_block(blocks[k]);
                ended[k] = 1;
                ++done;
            }
        }
        if (L->timed_out.load(std::memory_order_relaxed)) {
            L->failed.store(true);
            break;
        }
        if (!ran && done < n && !L->failed.load()) report_grid_deadlock(&grid);
    }
    for (unsigned long long k = 0; k < n && L->grid != nullptr; ++k) {
        if (ended[k]) continue;
        tl_run.worker = pool.workers[k].get();
        blocks[k].failed = true;
        end_coop_block(blocks[k]);
    }
    tl_run.worker = own;
    tl_run.block = nullptr;
    L->grid = nullptr;
    std::lock_guard<std::mutex> lock(L->threads_mu);
    L->threads.erase(std::find(L->threads.begin(), L->threads.end(), pthread_self()));
}

void run_launch(Launch* L) {
    code_range(reinterpret_cast<const void*>(L->invoke), &L->code_lo, &L->code_hi);
    install_fault_handler();
    watch_launch(L);
    if (L->spec.cooperative) {
        run_cooperative(L);
    } else if (tl_launches_inline) {
        run_blocks(L);
    } else {
        run_on_pool(L);
    }
    unwatch_launch(L);
}

}  // namespace __sim
