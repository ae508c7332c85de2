// The simulator's scheduler and CUDA runtime. Compiled once per mode (without sanitizer
// instrumentation: its bookkeeping is shared by fibers on purpose) and linked into every
// simulated library or check executable.
//
// A launch runs its blocks on a small pool of worker threads. A worker runs one block at a
// time: every CUDA thread of the block is a fiber with its own stack, and fibers switch only
// at __syncthreads, warp shuffles/votes/__syncwarp and thread exit, so barriers and shuffles
// mean what they mean on a GPU. When no fiber of a block can make progress the scheduler
// reports a deadlock instead of hanging; in synccheck mode it also reports threads of a block
// waiting at different barriers and warp operations whose lanes disagree.
//
// Modes (set by the build): SIM_MEMCHECK (AddressSanitizer fiber annotations, every device
// and shared allocation is its own heap block), SIM_RACECHECK (ThreadSanitizer fibers, a
// release/acquire pair per barrier and __syncwarp), SIM_SYNCCHECK (barrier site checks).
#include "cuda_sim.h"

#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdarg>
#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#if !defined(__x86_64__)
#include <ucontext.h>
#endif

#if defined(SIM_MEMCHECK)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif
#if defined(SIM_RACECHECK)
extern "C" {
void* __tsan_get_current_fiber(void);
void* __tsan_create_fiber(unsigned flags);
void __tsan_destroy_fiber(void* fiber);
void __tsan_switch_to_fiber(void* fiber, unsigned flags);
void __tsan_set_fiber_name(void* fiber, const char* name);
void __tsan_acquire(void* addr);
void __tsan_release(void* addr);
}
#endif

#if defined(SIM_SYNCCHECK)
static const bool kSyncCheck = true;
#else
static const bool kSyncCheck = false;
#endif

namespace sim {

__thread ThreadState* tl_thread = nullptr;

namespace {

const char* mode_name() {
#if defined(SIM_MEMCHECK)
    return "memcheck";
#elif defined(SIM_RACECHECK)
    return "racecheck";
#elif defined(SIM_SYNCCHECK)
    return "synccheck";
#else
    return "fast";
#endif
}

// ---- context switching ---------------------------------------------------------------------
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
    subq $8, %rsp
    stmxcsr (%rsp)
    fnstcw 4(%rsp)
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    ldmxcsr (%rsp)
    fldcw 4(%rsp)
    addq $8, %rsp
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

enum class FState : unsigned char { kReady, kBarrier, kWarp, kDone };

struct Block;

struct Fiber : ThreadState {
#if defined(__x86_64__)
    void* sp = nullptr;
#else
    ucontext_t uc;
#endif
    char* stack = nullptr;
    size_t stack_size = 0;
    int linear = 0;
    int warp = 0;
    int lane = 0;
    FState state = FState::kReady;
    const char* wfile = nullptr;  // where it waits
    int wline = 0;
    int wkind = 0;
    unsigned int wmask = 0;
    unsigned long long wvalue = 0;
    int wparam = 0;
    int wwidth = 32;
    unsigned long long wresult = 0;
    void* asan_fake = nullptr;
    void* tsan_fiber = nullptr;
    std::string name;
};

struct Launch {
    LaunchSpec spec;
    const char* name;
    const char* file;
    int line;
    void (*invoke)(void*);
    void* pack;
    size_t smem_limit;
    unsigned long long nblocks;
    std::atomic<unsigned long long> next{0};
    std::atomic<bool> failed{false};
};

struct Block {
    Launch* launch = nullptr;
    uint3 idx{0, 0, 0};
    Fiber* fibers = nullptr;
    int nthreads = 0;
    int nwarps = 0;
    int live = 0;
    int bar_arrived = 0;
    int bar_pred = 0;
    int bar_result[2] = {0, 0};
    int bar_kind = -1;
    const char* bar_file = nullptr;
    int bar_line = 0;
    unsigned long long bar_gen = 0;
    std::vector<unsigned int> warp_present;  // lanes that exist in each warp
    std::vector<unsigned int> warp_exited;
    std::vector<unsigned int> warp_arrived;
    std::vector<std::pair<const void*, void*>> statics;
    size_t static_bytes = 0;
    char* dyn = nullptr;
    bool failed = false;
    char tsan_sync[2][64];  // addresses for barrier release/acquire (per generation parity)
    char tsan_done[64];
};

// Per worker thread: the fiber stacks and shared-memory arena are kept between blocks.
struct Worker {
    char* stacks = nullptr;
    size_t stacks_bytes = 0;
    int stack_slots = 0;
    char* arena = nullptr;  // shared memory in fast/synccheck mode
    size_t arena_used = 0;
    std::vector<Fiber> fibers;
    std::vector<void*> tsan_fibers;  // reused between blocks: creating one per thread per block is slow
    char tsan_start[64];             // released by the scheduler before a block's fibers start
    ~Worker() {
        if (stacks != nullptr) munmap(stacks, stacks_bytes);
        std::free(arena);
    }
};

#if defined(SIM_MEMCHECK) || defined(SIM_RACECHECK)
const size_t kDefaultStackKiB = 256;
#else
const size_t kDefaultStackKiB = 128;
#endif

// Per-CUDA-thread stack: SIMULATOR_STACK_KB (16..65536) or the mode's default.
size_t stack_size() {
    static const size_t size = [] {
        const char* env = std::getenv("SIMULATOR_STACK_KB");
        long kib = env != nullptr ? std::atol(env) : 0;
        if (kib < 16 || kib > 65536) kib = (long)kDefaultStackKiB;
        return (size_t)kib * 1024;
    }();
    return size;
}
const size_t kGuard = 4096;
const size_t kArenaBytes = 256 * 1024;
const size_t kDefaultSmemLimit = 48 * 1024;
const size_t kOptinSmemLimit = 227 * 1024;

__thread Block* tl_block = nullptr;
__thread Fiber* tl_fiber = nullptr;
__thread Worker* tl_worker = nullptr;
#if defined(__x86_64__)
__thread void* tl_sched_sp = nullptr;
#else
__thread ucontext_t* tl_sched_uc = nullptr;
#endif
#if defined(SIM_MEMCHECK)
__thread const void* tl_sched_stack_bottom = nullptr;
__thread size_t tl_sched_stack_size = 0;
#endif
#if defined(SIM_RACECHECK)
__thread void* tl_sched_tsan = nullptr;
#endif

std::mutex g_report_mu;
std::mutex g_state_mu;
std::map<uintptr_t, size_t> g_allocs;  // device allocations: start -> size
std::map<uintptr_t, const void*> g_alloc_sites;  // memcheck: who called cudaMalloc
std::map<const void*, int> g_smem_optin;
cudaError_t g_last_error = cudaSuccess;
cudaError_t g_sticky_error = cudaSuccess;

bool quiet() {
    const char* q = std::getenv("SIMULATOR_QUIET");
    return q != nullptr && q[0] == '1';
}

void report(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void report(const char* fmt, ...) {
    if (quiet()) return;
    std::lock_guard<std::mutex> lock(g_report_mu);
    va_list ap;
    va_start(ap, fmt);
    std::fputs("simulator: ", stderr);
    std::vfprintf(stderr, fmt, ap);
    std::fputc('\n', stderr);
    std::fflush(stderr);
    va_end(ap);
}

std::string where(const Block* b) {
    char buf[256];
    std::snprintf(buf, sizeof buf, "kernel '%s' block (%u,%u,%u) (launched at %s:%d)", b->launch->name, b->idx.x,
                  b->idx.y, b->idx.z, b->launch->file, b->launch->line);
    return buf;
}

std::string tid_str(const Fiber& f) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "(%u,%u,%u)", f.thread_idx.x, f.thread_idx.y, f.thread_idx.z);
    return buf;
}

// ---- fiber switching -----------------------------------------------------------------------
void fiber_main();

#if defined(__x86_64__)
extern "C" SIM_API void sim_fiber_entry() { fiber_main(); }
#endif

void switch_to_fiber(Fiber* f) {
    tl_fiber = f;
    tl_thread = f;
#if defined(SIM_RACECHECK)
    __tsan_switch_to_fiber(f->tsan_fiber, 1);
#endif
#if defined(SIM_MEMCHECK)
    void* fake = nullptr;
    __sanitizer_start_switch_fiber(&fake, f->stack, f->stack_size);
#endif
#if defined(__x86_64__)
    sim_ctx_swap(&tl_sched_sp, f->sp);
#else
    swapcontext(tl_sched_uc, &f->uc);
#endif
#if defined(SIM_MEMCHECK)
    __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#endif
    tl_fiber = nullptr;
    tl_thread = nullptr;
}

// Back to the scheduler; returns when the scheduler resumes this fiber.
void yield_to_scheduler(bool final_exit) {
    Fiber* f = tl_fiber;
#if defined(SIM_RACECHECK)
    __tsan_switch_to_fiber(tl_sched_tsan, 1);
#endif
#if defined(SIM_MEMCHECK)
    __sanitizer_start_switch_fiber(final_exit ? nullptr : &f->asan_fake, tl_sched_stack_bottom,
                                   tl_sched_stack_size);
#else
    (void)final_exit;
#endif
#if defined(__x86_64__)
    sim_ctx_swap(&f->sp, tl_sched_sp);
#else
    swapcontext(&f->uc, tl_sched_uc);
#endif
#if defined(SIM_MEMCHECK)
    __sanitizer_finish_switch_fiber(f->asan_fake, nullptr, nullptr);
#endif
}

void release_barrier(Block* b) {
    b->bar_result[b->bar_gen & 1] = b->bar_pred;
    b->bar_arrived = 0;
    b->bar_gen++;
    for (int i = 0; i < b->nthreads; ++i) {
        if (b->fibers[i].state == FState::kBarrier) b->fibers[i].state = FState::kReady;
    }
}

void fail_block(Block* b) {
    b->failed = true;
    b->launch->failed.store(true);
}

const char* warp_kind_name(int kind) {
    switch (kind) {
        case kShflIdx:
            return "__shfl_sync";
        case kShflUp:
            return "__shfl_up_sync";
        case kShflDown:
            return "__shfl_down_sync";
        case kShflXor:
            return "__shfl_xor_sync";
        case kBallot:
            return "__ballot_sync";
        case kAny:
            return "__any_sync";
        case kAll:
            return "__all_sync";
        default:
            return "__syncwarp";
    }
}

// Completes the warp operation of the lanes in ``mask`` (all of them arrived or exited).
void complete_warp(Block* b, int w, unsigned int mask) {
    Fiber* lanes = b->fibers + w * 32;
    const int n = std::min(32, b->nthreads - w * 32);
    unsigned int waiting = b->warp_arrived[w] & mask;
    unsigned long long ballot = 0;
    for (int l = 0; l < n; ++l) {
        if ((waiting >> l) & 1u) ballot |= (lanes[l].wvalue != 0 ? 1ull : 0ull) << l;
    }
    for (int l = 0; l < n; ++l) {
        if (!((waiting >> l) & 1u)) continue;
        Fiber& f = lanes[l];
        const int width = (f.wwidth >= 1 && f.wwidth <= 32 && (f.wwidth & (f.wwidth - 1)) == 0) ? f.wwidth : 32;
        const int base = l & ~(width - 1);
        int src = l;
        switch (f.wkind) {
            case kShflIdx:
                src = base + (f.wparam & (width - 1));
                break;
            case kShflUp:
                src = ((l - base) >= f.wparam && f.wparam >= 0) ? l - f.wparam : l;
                break;
            case kShflDown:
                src = ((l - base) + f.wparam < width && f.wparam >= 0) ? l + f.wparam : l;
                break;
            case kShflXor: {
                const int s = l ^ (f.wparam & 31);
                src = s <= base + width - 1 ? s : l;
                break;
            }
            default:
                break;
        }
        if (f.wkind <= kShflXor) {
            f.wresult = (src < n && ((waiting >> src) & 1u)) ? lanes[src].wvalue : f.wvalue;
        } else if (f.wkind == kBallot) {
            f.wresult = ballot & f.wmask;
        } else if (f.wkind == kAny) {
            f.wresult = (ballot & f.wmask) != 0 ? 1 : 0;
        } else if (f.wkind == kAll) {
            f.wresult = (ballot & f.wmask) == (waiting & f.wmask) ? 1 : 0;
        }
        if (&f != tl_fiber) f.state = FState::kReady;
    }
    b->warp_arrived[w] &= ~mask;
}

// True when every lane of ``mask`` that exists has arrived or exited.
bool warp_ready(Block* b, int w, unsigned int mask) {
    const unsigned int need = mask & b->warp_present[w];
    return ((b->warp_arrived[w] | b->warp_exited[w]) & need) == need;
}

void check_pending_warps(Block* b, int w) {
    Fiber* lanes = b->fibers + w * 32;
    const int n = std::min(32, b->nthreads - w * 32);
    for (int l = 0; l < n; ++l) {
        if (lanes[l].state == FState::kWarp && ((b->warp_arrived[w] >> l) & 1u) &&
            warp_ready(b, w, lanes[l].wmask)) {
            if (kSyncCheck && (lanes[l].wmask & b->warp_exited[w] & b->warp_present[w])) {
                report("synccheck: %s at %s:%d in %s: thread %s waits with a mask that names lanes that have "
                       "exited (mask 0x%08x, exited 0x%08x, warp %d)",
                       warp_kind_name(lanes[l].wkind), lanes[l].wfile, lanes[l].wline, where(b).c_str(),
                       tid_str(lanes[l]).c_str(), lanes[l].wmask, b->warp_exited[w], w);
                fail_block(b);
                return;
            }
            complete_warp(b, w, lanes[l].wmask);
        }
    }
}

void fiber_main() {
    Fiber* f = tl_fiber;
    Block* b = tl_block;
#if defined(SIM_MEMCHECK)
    __sanitizer_finish_switch_fiber(nullptr, &tl_sched_stack_bottom, &tl_sched_stack_size);
#endif
#if defined(SIM_RACECHECK)
    // Everything before this block on this worker (earlier blocks, the host) happens before it.
    __tsan_acquire(tl_worker->tsan_start);
#endif
    b->launch->invoke(b->launch->pack);
    f->state = FState::kDone;
    b->live--;
    b->warp_exited[f->warp] |= 1u << f->lane;
#if defined(SIM_RACECHECK)
    __tsan_release(b->tsan_done);
#endif
    if (!b->failed) {
        if (b->bar_arrived > 0 && b->bar_arrived == b->live) release_barrier(b);
        check_pending_warps(b, f->warp);
    }
    yield_to_scheduler(true);
    std::abort();  // a finished fiber is never resumed
}

Worker* worker() {
    if (tl_worker == nullptr) {
        static thread_local Worker w;
        tl_worker = &w;
    }
    return tl_worker;
}

// Makes room for ``count`` stacks (all remapped at once, before any fiber of a block starts).
bool reserve_stacks(Worker* wk, int count) {
    if (count > wk->stack_slots) {
        if (wk->stacks != nullptr) munmap(wk->stacks, wk->stacks_bytes);
        wk->stacks = nullptr;
        wk->stack_slots = 0;
        const int slots = std::max(count, 32);
        const size_t bytes = (stack_size() + kGuard) * (size_t)slots;
        void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED) return false;
        wk->stacks = static_cast<char*>(p);
        wk->stacks_bytes = bytes;
        wk->stack_slots = slots;
        // A guard page under each stack turns an overflow into a fault instead of corruption.
        for (int i = 0; i < slots; ++i) mprotect(wk->stacks + (stack_size() + kGuard) * i, kGuard, PROT_NONE);
    }
    return true;
}

char* fiber_stack(Worker* wk, int slot) { return wk->stacks + (stack_size() + kGuard) * (size_t)slot + kGuard; }

void init_fiber(Fiber* f) {
#if defined(__x86_64__)
    uintptr_t top = (reinterpret_cast<uintptr_t>(f->stack) + f->stack_size) & ~uintptr_t(15);
    void** sp = reinterpret_cast<void**>(top);
    *--sp = nullptr;  // keeps the entry's stack 16-byte aligned, as after a call
    *--sp = reinterpret_cast<void*>(&sim_fiber_entry);
    for (int i = 0; i < 6; ++i) *--sp = nullptr;  // rbp rbx r12 r13 r14 r15
    --sp;
    unsigned int csr;
    unsigned short cw;
    asm volatile("stmxcsr %0" : "=m"(csr));
    asm volatile("fnstcw %0" : "=m"(cw));
    std::memcpy(reinterpret_cast<char*>(sp), &csr, 4);
    std::memcpy(reinterpret_cast<char*>(sp) + 4, &cw, 2);
    f->sp = sp;
#else
    getcontext(&f->uc);
    f->uc.uc_stack.ss_sp = f->stack;
    f->uc.uc_stack.ss_size = f->stack_size;
    f->uc.uc_link = nullptr;
    makecontext(&f->uc, fiber_main, 0);
#endif
}

void report_deadlock(Block* b) {
    std::string at_bar, at_warp;
    int nbar = 0, nwarp = 0;
    for (int i = 0; i < b->nthreads; ++i) {
        Fiber& f = b->fibers[i];
        char buf[256];
        if (f.state == FState::kBarrier && nbar++ < 4) {
            std::snprintf(buf, sizeof buf, " %s at %s:%d;", tid_str(f).c_str(), f.wfile, f.wline);
            at_bar += buf;
        } else if (f.state == FState::kWarp && nwarp++ < 4) {
            std::snprintf(buf, sizeof buf, " %s in %s(mask 0x%08x) at %s:%d;", tid_str(f).c_str(),
                          warp_kind_name(f.wkind), f.wmask, f.wfile, f.wline);
            at_warp += buf;
        }
    }
    report("%s: deadlock in %s: %d live thread(s) can never proceed. %d wait at __syncthreads:%s %d "
           "wait in warp operations whose lanes are elsewhere:%s",
           mode_name(), where(b).c_str(), b->live, nbar, at_bar.c_str(), nwarp, at_warp.c_str());
    fail_block(b);
}

void free_block_memory(Block* b) {
#if defined(SIM_MEMCHECK) || defined(SIM_RACECHECK)
    for (auto& s : b->statics) std::free(s.second);
    std::free(b->dyn);
#endif
    b->statics.clear();
    b->dyn = nullptr;
}

void run_block(Launch* L, unsigned long long id) {
    Worker* wk = worker();
    const LaunchSpec& s = L->spec;
    Block b;
    b.launch = L;
    b.idx = uint3{(unsigned)(id % s.grid.x), (unsigned)((id / s.grid.x) % s.grid.y),
                  (unsigned)(id / ((unsigned long long)s.grid.x * s.grid.y))};
    b.nthreads = (int)(s.block.x * s.block.y * s.block.z);
    b.nwarps = (b.nthreads + 31) / 32;
    b.warp_present.assign(b.nwarps, 0);
    b.warp_exited.assign(b.nwarps, 0);
    b.warp_arrived.assign(b.nwarps, 0);
    wk->arena_used = 0;
#if defined(SIM_MEMCHECK) || defined(SIM_RACECHECK)
    b.dyn = static_cast<char*>(std::malloc(s.smem == 0 ? 1 : s.smem));
    if (s.smem == 0) {
        // Zero bytes of dynamic shared memory: any access is out of bounds.
        std::free(b.dyn);
        b.dyn = static_cast<char*>(std::malloc(0));
    }
#else
    if (wk->arena == nullptr) wk->arena = static_cast<char*>(std::aligned_alloc(256, kArenaBytes));
    b.dyn = wk->arena;
    wk->arena_used = (s.smem + 255) & ~size_t(255);
#endif
    if (s.smem > 0) std::memset(b.dyn, 0xff, s.smem);  // shared memory starts as garbage, as on a GPU
    if ((int)wk->fibers.size() < b.nthreads) wk->fibers.resize(b.nthreads);
    b.fibers = wk->fibers.data();
    if (!reserve_stacks(wk, b.nthreads)) {
        report("cannot map %d fiber stacks for %s", b.nthreads, where(&b).c_str());
        fail_block(&b);
        free_block_memory(&b);
        return;
    }
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
        f.stack_size = stack_size();
        f.asan_fake = nullptr;
        b.warp_present[f.warp] |= 1u << f.lane;
#if defined(SIM_MEMCHECK)
        // Frames of fibers that never returned leave poisoned redzones behind.
        __asan_unpoison_memory_region(f.stack, f.stack_size);
#endif
#if defined(SIM_RACECHECK)
        if ((int)wk->tsan_fibers.size() <= i) wk->tsan_fibers.push_back(__tsan_create_fiber(0));
        f.tsan_fiber = wk->tsan_fibers[i];
        char nb[160];
        std::snprintf(nb, sizeof nb, "kernel %s block (%u,%u,%u) thread (%u,%u,%u)", L->name, b.idx.x, b.idx.y,
                      b.idx.z, f.thread_idx.x, f.thread_idx.y, f.thread_idx.z);
        f.name = nb;
        __tsan_set_fiber_name(f.tsan_fiber, f.name.c_str());
#endif
        init_fiber(&f);
    }
    b.live = b.nthreads;
    tl_block = &b;
#if defined(SIM_RACECHECK)
    tl_sched_tsan = __tsan_get_current_fiber();
    __tsan_release(wk->tsan_start);
#endif
#if !defined(__x86_64__)
    ucontext_t sched;
    tl_sched_uc = &sched;
#endif
    while (b.live > 0 && !b.failed) {
        bool ran = false;
        for (int i = 0; i < b.nthreads && !b.failed; ++i) {
            if (b.fibers[i].state == FState::kReady) {
                switch_to_fiber(&b.fibers[i]);
                ran = true;
            }
        }
        if (!ran && b.live > 0 && !b.failed) report_deadlock(&b);
    }
#if defined(SIM_RACECHECK)
    __tsan_acquire(b.tsan_done);
#endif
    tl_block = nullptr;
    free_block_memory(&b);
}

void run_blocks(Launch* L) {
    for (;;) {
        const unsigned long long id = L->next.fetch_add(1);
        if (id >= L->nblocks || L->failed.load()) return;
        run_block(L, id);
    }
}

// Workers beyond the calling thread; blocks of one launch are shared out between them.
class Pool {
public:
    ~Pool() {
        if (pid_ != getpid()) return;  // a forked child does not own its parent's workers
        {
            std::lock_guard<std::mutex> lock(mu_);
            stop_ = true;
        }
        cv_.notify_all();
        for (auto* t : threads_) {
            t->join();
            delete t;
        }
    }
    void run(Launch* L) {
        unsigned want = workers_for(L->nblocks);
        if (want <= 1) {
            run_blocks(L);
            return;
        }
        std::unique_lock<std::mutex> lock(mu_);
        if (pid_ != getpid()) {
            // After fork() the workers did not come along: forget them (their objects leak).
            threads_.clear();
            pid_ = getpid();
        }
        while (threads_.size() + 1 < want) threads_.push_back(new std::thread([this] { loop(); }));
        job_ = L;
        ++generation_;
        pending_ = (int)threads_.size();
        lock.unlock();
        cv_.notify_all();
        run_blocks(L);
        lock.lock();
        done_cv_.wait(lock, [this] { return pending_ == 0; });
        job_ = nullptr;
    }

private:
    static unsigned workers_for(unsigned long long nblocks) {
        unsigned n = std::thread::hardware_concurrency();
        const char* env = std::getenv("SIMULATOR_THREADS");
        if (env != nullptr && std::atoi(env) > 0) n = (unsigned)std::atoi(env);
        if (n == 0) n = 1;
        if (n > 64) n = 64;
        if (nblocks < n) n = (unsigned)nblocks;
        return n;
    }
    void loop() {
        unsigned long long seen = 0;
        std::unique_lock<std::mutex> lock(mu_);
        for (;;) {
            cv_.wait(lock, [&] { return stop_ || generation_ != seen; });
            if (stop_) return;
            seen = generation_;
            Launch* L = job_;
            lock.unlock();
            run_blocks(L);
            lock.lock();
            if (--pending_ == 0) done_cv_.notify_all();
        }
    }
    std::mutex mu_;
    std::condition_variable cv_, done_cv_;
    std::vector<std::thread*> threads_;
    pid_t pid_ = getpid();
    Launch* job_ = nullptr;
    unsigned long long generation_ = 0;
    int pending_ = 0;
    bool stop_ = false;
};

Pool& pool() {
    static Pool p;
    return p;
}

std::mutex g_launch_mu;

bool find_alloc(const void* p, size_t n, bool* known_start) {
    const uintptr_t a = reinterpret_cast<uintptr_t>(p);
    auto it = g_allocs.upper_bound(a);
    if (it == g_allocs.begin()) return false;
    --it;
    if (known_start != nullptr) *known_start = it->first == a;
    return a >= it->first && a - it->first <= it->second && n <= it->second - (a - it->first);
}

cudaError_t set_error(cudaError_t e) {
    if (e != cudaSuccess) g_last_error = e;
    return e;
}

#if defined(SIM_MEMCHECK)
void on_death() {
    Block* b = tl_block;
    Fiber* f = tl_fiber;
    if (b != nullptr && f != nullptr) {
        report("memcheck: the fault above happened in %s thread %s", where(b).c_str(), tid_str(*f).c_str());
    }
}
// UBSan is a separate runtime library under GCC, with its own death callback.
struct DeathHook {
    DeathHook() {
        __sanitizer_set_death_callback(on_death);
        void* ubsan = dlopen("libubsan.so.1", RTLD_NOW | RTLD_NOLOAD);
        if (ubsan != nullptr) {
            typedef void (*SetCallback)(void (*)(void));
            SetCallback set = reinterpret_cast<SetCallback>(dlsym(ubsan, "__sanitizer_set_death_callback"));
            if (set != nullptr) set(on_death);
        }
    }
} g_death_hook;
#endif

#if defined(SIM_MEMCHECK)
// Device buffers still allocated at exit: a launcher that misses a cudaFree on some path.
struct LeakReport {
    ~LeakReport() {
        std::lock_guard<std::mutex> lock(g_state_mu);
        for (const auto& a : g_allocs) {
            char where_buf[512] = "unknown caller";
            auto site = g_alloc_sites.find(a.first);
            if (site != g_alloc_sites.end()) {
                __sanitizer_symbolize_pc(const_cast<void*>(site->second), "%f at %s:%l", where_buf,
                                         sizeof where_buf);
            }
            report("memcheck: device memory leak: %zu bytes from cudaMalloc in %s were never freed with cudaFree",
                   a.second, where_buf);
        }
    }
} g_leak_report;
#endif

}  // namespace

// ---- device-side entry points -------------------------------------------------------------
void syncthreads(const char* file, int line) { (void)syncthreads_reduce(-1, 0, file, line); }

// Device-only runtime calls made outside a kernel: say so instead of dereferencing nothing.
static void require_device(const char* what, const char* file, int line) {
    if (tl_block == nullptr || tl_fiber == nullptr) {
        report("%s called outside a kernel at %s:%d", what, file, line);
        std::abort();
    }
}

int syncthreads_reduce(int kind, int predicate, const char* file, int line) {
    require_device("__syncthreads", file, line);
    Block* b = tl_block;
    Fiber* f = tl_fiber;
    if (b->bar_arrived == 0) {
        b->bar_file = file;
        b->bar_line = line;
        b->bar_kind = kind;
        b->bar_pred = 0;
    } else if (kSyncCheck && (b->bar_line != line || std::strcmp(b->bar_file, file) != 0)) {
        const Fiber* other = nullptr;
        for (int i = 0; i < b->nthreads; ++i) {
            if (b->fibers[i].state == FState::kBarrier) {
                other = &b->fibers[i];
                break;
            }
        }
        report("synccheck: divergent __syncthreads in %s: thread %s reached the barrier at %s:%d while %d "
               "thread(s) (e.g. thread %s) wait at the barrier at %s:%d; every live thread of a block must "
               "reach the same __syncthreads",
               where(b).c_str(), tid_str(*f).c_str(), file, line, b->bar_arrived,
               other ? tid_str(*other).c_str() : "?", b->bar_file, b->bar_line);
        fail_block(b);
        yield_to_scheduler(true);
    }
#if defined(SIM_RACECHECK)
    __tsan_release(b->tsan_sync[b->bar_gen & 1]);
#endif
    if (kind == 0) {
        b->bar_pred += predicate;
    } else if (kind == 1) {
        b->bar_pred += predicate ? 0 : 1;
    } else if (kind == 2) {
        b->bar_pred += predicate ? 1 : 0;
    }
    f->wfile = file;
    f->wline = line;
    b->bar_arrived++;
    const unsigned long long gen = b->bar_gen;
    if (b->bar_arrived == b->live) {
        release_barrier(b);
    } else {
        f->state = FState::kBarrier;
        yield_to_scheduler(false);
        if (b->failed) yield_to_scheduler(true);
    }
    // The releasing thread may run on into the next barrier before the others resume, so the
    // result is kept per generation parity (generation + 2 needs every thread to have left).
    const int total = b->bar_result[gen & 1];
#if defined(SIM_RACECHECK)
    __tsan_acquire(b->tsan_sync[gen & 1]);
#endif
    if (kind == 1) return total == 0 ? 1 : 0;
    if (kind == 2) return total > 0 ? 1 : 0;
    return total;
}

unsigned long long warp_op(int kind, unsigned int mask, unsigned long long value, int param, int width,
                           const char* file, int line) {
    require_device(warp_kind_name(kind), file, line);
    Block* b = tl_block;
    Fiber* f = tl_fiber;
    const int w = f->warp;
    const unsigned int me = 1u << f->lane;
    if (!(mask & me)) {
        report("%s: %s at %s:%d in %s: thread %s calls it with mask 0x%08x that does not include its "
               "own lane %d",
               mode_name(), warp_kind_name(kind), file, line, where(b).c_str(), tid_str(*f).c_str(), mask, f->lane);
        fail_block(b);
        yield_to_scheduler(true);
    }
    if (kSyncCheck) {
        Fiber* lanes = b->fibers + w * 32;
        const int n = std::min(32, b->nthreads - w * 32);
        for (int l = 0; l < n; ++l) {
            if (!((b->warp_arrived[w] >> l) & 1u) || !((mask >> l) & 1u)) continue;
            const Fiber& o = lanes[l];
            if (o.wkind != kind || o.wmask != mask || o.wline != line || std::strcmp(o.wfile, file) != 0) {
                report("synccheck: divergent warp operation in %s: thread %s is at %s(mask 0x%08x) at %s:%d "
                       "while lane %d (thread %s) waits at %s(mask 0x%08x) at %s:%d",
                       where(b).c_str(), tid_str(*f).c_str(), warp_kind_name(kind), mask, file, line, l,
                       tid_str(o).c_str(), warp_kind_name(o.wkind), o.wmask, o.wfile, o.wline);
                fail_block(b);
                yield_to_scheduler(true);
            }
        }
        if (mask & b->warp_exited[w] & b->warp_present[w]) {
            report("synccheck: %s at %s:%d in %s: thread %s names lanes that have exited (mask 0x%08x, exited "
                   "0x%08x)",
                   warp_kind_name(kind), file, line, where(b).c_str(), tid_str(*f).c_str(), mask,
                   b->warp_exited[w]);
            fail_block(b);
            yield_to_scheduler(true);
        }
    }
    f->wkind = kind;
    f->wmask = mask;
    f->wvalue = value;
    f->wparam = param;
    f->wwidth = width;
    f->wfile = file;
    f->wline = line;
#if defined(SIM_RACECHECK)
    if (kind == kSyncWarp) __tsan_release(&b->warp_arrived[w]);
#endif
    b->warp_arrived[w] |= me;
    if (warp_ready(b, w, mask)) {
        complete_warp(b, w, mask);
    } else {
        f->state = FState::kWarp;
        yield_to_scheduler(false);
        if (b->failed) yield_to_scheduler(true);
    }
#if defined(SIM_RACECHECK)
    if (kind == kSyncWarp) __tsan_acquire(&b->warp_arrived[w]);
#endif
    return f->wresult;
}

unsigned int active_mask() {
    Block* b = tl_block;
    const int w = tl_fiber->warp;
    return b->warp_present[w] & ~b->warp_exited[w];
}

void* shared_static(const void* site, size_t size, size_t align) {
    require_device("a __shared__ variable", "?", 0);
    Block* b = tl_block;
    for (auto& s : b->statics) {
        if (s.first == site) {
#if defined(SIM_RACECHECK)
            __tsan_acquire(const_cast<void*>(site));
#endif
            return s.second;
        }
    }
    b->static_bytes += size;
    if (b->static_bytes + b->launch->spec.smem > b->launch->smem_limit) {
        report("shared memory of %s exceeds the per-block limit: %zu bytes static + %zu dynamic > %zu",
               where(b).c_str(), b->static_bytes, b->launch->spec.smem, b->launch->smem_limit);
        fail_block(b);
        yield_to_scheduler(true);
    }
    void* p;
#if defined(SIM_RACECHECK)
    // Allocate as the worker, not as this CUDA thread, and publish the allocation through the
    // site: every thread acquires it, so the allocation is not mistaken for this thread's write.
    __tsan_switch_to_fiber(tl_sched_tsan, 1);
    if (posix_memalign(&p, align < 16 ? 16 : align, size == 0 ? 1 : size) != 0) {
        report("out of host memory for shared memory of %s", where(b).c_str());
        std::abort();
    }
    std::memset(p, 0xff, size);
    __tsan_release(const_cast<void*>(site));
    __tsan_switch_to_fiber(tl_fiber->tsan_fiber, 1);
#elif defined(SIM_MEMCHECK)
    if (align > 16) {
        if (posix_memalign(&p, align, size) != 0) p = nullptr;
    } else {
        p = std::malloc(size);
    }
    if (p == nullptr) {
        report("out of host memory for shared memory of %s", where(b).c_str());
        std::abort();
    }
#else
    Worker* wk = worker();
    size_t off = (wk->arena_used + (align < 16 ? 16 : align) - 1) & ~((align < 16 ? 16 : align) - 1);
    p = wk->arena + off;
    wk->arena_used = off + size;
#endif
#if !defined(SIM_RACECHECK)
    std::memset(p, 0xff, size);
#else
    __tsan_acquire(const_cast<void*>(site));
#endif
    b->statics.emplace_back(site, p);
    return p;
}

void* dynamic_shared() {
    require_device("extern __shared__ memory", "?", 0);
    return tl_block->dyn;
}

void thread_fence() { std::atomic_thread_fence(std::memory_order_seq_cst); }

void launch_raw(const LaunchSpec& spec, const char* name, const char* file, int line, const void* kernel,
                void (*invoke)(void*), void* pack) {
    std::lock_guard<std::mutex> launch_lock(g_launch_mu);
    if (g_sticky_error != cudaSuccess) return;
    const dim3 g = spec.grid, bl = spec.block;
    const unsigned long long threads = (unsigned long long)bl.x * bl.y * bl.z;
    if (g.x == 0 || g.y == 0 || g.z == 0 || bl.x == 0 || bl.y == 0 || bl.z == 0 || bl.x > 1024 || bl.y > 1024 ||
        bl.z > 64 || threads > 1024 || g.x > 2147483647u || g.y > 65535 || g.z > 65535) {
        g_last_error = cudaErrorInvalidConfiguration;
        return;
    }
    size_t limit = kDefaultSmemLimit;
    {
        std::lock_guard<std::mutex> lock(g_state_mu);
        if (kernel != nullptr) {
            auto it = g_smem_optin.find(kernel);
            if (it != g_smem_optin.end()) limit = std::max(limit, (size_t)it->second);
        } else {
            // A kernel template launched with deduced arguments has no address here: any
            // opt-in made for a kernel of this process counts.
            for (const auto& o : g_smem_optin) limit = std::max(limit, (size_t)o.second);
        }
    }
    if (spec.smem > limit) {
        g_last_error = cudaErrorInvalidValue;
        return;
    }
    Launch L;
    L.spec = spec;
    L.name = name;
    L.file = file;
    L.line = line;
    L.invoke = invoke;
    L.pack = pack;
    L.smem_limit = limit;
    L.nblocks = (unsigned long long)g.x * g.y * g.z;
    pool().run(&L);
    if (L.failed.load()) {
        g_sticky_error = cudaErrorLaunchFailure;
        g_last_error = cudaErrorLaunchFailure;
    }
}

cudaError_t func_set_attribute(const void* kernel, int attr, int value) {
    if (attr == cudaFuncAttributeMaxDynamicSharedMemorySize) {
        if (value < 0 || (size_t)value > kOptinSmemLimit) return set_error(cudaErrorInvalidValue);
        std::lock_guard<std::mutex> lock(g_state_mu);
        g_smem_optin[kernel] = value;
    }
    return cudaSuccess;
}

cudaError_t symbol_copy(void* dst, const void* src, size_t count) {
    if (count > 0 && (dst == nullptr || src == nullptr)) return set_error(cudaErrorInvalidValue);
    if (count > 0) std::memcpy(dst, src, count);
    return cudaSuccess;
}

}  // namespace sim

// ---- host API ------------------------------------------------------------------------------
using sim::g_allocs;
using sim::g_state_mu;
using sim::g_sticky_error;

extern "C" {

cudaError_t cudaMalloc(void** ptr, size_t size) {
    if (ptr == nullptr) return sim::set_error(cudaErrorInvalidValue);
    if (g_sticky_error != cudaSuccess) return g_sticky_error;
    *ptr = nullptr;
    if (size == 0) return cudaSuccess;
    if (size > ((size_t)1 << 40)) return sim::set_error(cudaErrorMemoryAllocation);
#if defined(SIM_MEMCHECK) || defined(SIM_RACECHECK)
    void* p = std::malloc(size);  // exact size, so the byte after the buffer is a redzone
#else
    void* p = std::aligned_alloc(256, (size + 255) & ~size_t(255));
#endif
    if (p == nullptr) return sim::set_error(cudaErrorMemoryAllocation);
    {
        std::lock_guard<std::mutex> lock(g_state_mu);
        g_allocs[reinterpret_cast<uintptr_t>(p)] = size;
#if defined(SIM_MEMCHECK)
        // The return address points after the call; step back into it for the source line.
        sim::g_alloc_sites[reinterpret_cast<uintptr_t>(p)] =
            static_cast<const char*>(__builtin_extract_return_addr(__builtin_return_address(0))) - 1;
#endif
    }
    *ptr = p;
    return cudaSuccess;
}

cudaError_t cudaMallocManaged(void** ptr, size_t size, unsigned int flags) {
    (void)flags;
    return cudaMalloc(ptr, size);
}

cudaError_t cudaMallocHost(void** ptr, size_t size) {
    if (ptr == nullptr) return sim::set_error(cudaErrorInvalidValue);
    *ptr = std::malloc(size == 0 ? 1 : size);
    return *ptr == nullptr ? sim::set_error(cudaErrorMemoryAllocation) : cudaSuccess;
}

cudaError_t cudaFreeHost(void* ptr) {
    std::free(ptr);
    return cudaSuccess;
}

cudaError_t cudaFree(void* ptr) {
    if (ptr == nullptr) return cudaSuccess;
    {
        std::lock_guard<std::mutex> lock(g_state_mu);
        auto it = g_allocs.find(reinterpret_cast<uintptr_t>(ptr));
        if (it == g_allocs.end()) {
            sim::report("%s: cudaFree(%p): not a live device allocation (double free, or a pointer cudaMalloc "
                        "did not return)",
                        sim::mode_name(), ptr);
            return sim::set_error(cudaErrorInvalidValue);
        }
        g_allocs.erase(it);
#if defined(SIM_MEMCHECK)
        sim::g_alloc_sites.erase(reinterpret_cast<uintptr_t>(ptr));
#endif
    }
    std::free(ptr);
    return g_sticky_error;
}

cudaError_t cudaMemcpy(void* dst, const void* src, size_t count, enum cudaMemcpyKind kind) {
    if (g_sticky_error != cudaSuccess) return g_sticky_error;
    if (count == 0) return cudaSuccess;
    if (dst == nullptr || src == nullptr) return sim::set_error(cudaErrorInvalidValue);
    bool dst_dev, src_dev;
    {
        std::lock_guard<std::mutex> lock(g_state_mu);
        dst_dev = sim::find_alloc(dst, count, nullptr);
        src_dev = sim::find_alloc(src, count, nullptr);
    }
    const bool need_dst = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
    const bool need_src = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
    if (kind < cudaMemcpyHostToHost || kind > cudaMemcpyDefault) return sim::set_error(cudaErrorInvalidMemcpyDirection);
    if ((need_dst && !dst_dev) || (need_src && !src_dev)) {
        sim::report("%s: cudaMemcpy(%p, %p, %zu, kind %d): the %s range is not inside one live device "
                    "allocation",
                    sim::mode_name(), dst, src, count, (int)kind, (need_dst && !dst_dev) ? "destination" : "source");
        return sim::set_error(cudaErrorInvalidValue);
    }
    std::memmove(dst, src, count);
    return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t count, enum cudaMemcpyKind kind,
                            cudaStream_t stream) {
    (void)stream;
    return cudaMemcpy(dst, src, count, kind);
}

cudaError_t cudaMemset(void* ptr, int value, size_t count) {
    if (g_sticky_error != cudaSuccess) return g_sticky_error;
    if (count == 0) return cudaSuccess;
    bool ok;
    {
        std::lock_guard<std::mutex> lock(g_state_mu);
        ok = sim::find_alloc(ptr, count, nullptr);
    }
    if (!ok) {
        sim::report("%s: cudaMemset(%p, %d, %zu): the range is not inside one live device allocation",
                    sim::mode_name(), ptr, value, count);
        return sim::set_error(cudaErrorInvalidValue);
    }
    std::memset(ptr, value, count);
    return cudaSuccess;
}

cudaError_t cudaMemsetAsync(void* ptr, int value, size_t count, cudaStream_t stream) {
    (void)stream;
    return cudaMemset(ptr, value, count);
}

cudaError_t cudaGetLastError(void) {
    std::lock_guard<std::mutex> lock(sim::g_launch_mu);
    cudaError_t e = sim::g_last_error;
    sim::g_last_error = g_sticky_error;
    return e;
}

cudaError_t cudaPeekAtLastError(void) {
    std::lock_guard<std::mutex> lock(sim::g_launch_mu);
    return sim::g_last_error;
}

cudaError_t cudaDeviceSynchronize(void) { return g_sticky_error; }

cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
    (void)stream;
    return g_sticky_error;
}

cudaError_t cudaDeviceReset(void) {
    std::lock_guard<std::mutex> lock(sim::g_launch_mu);
    g_sticky_error = cudaSuccess;
    sim::g_last_error = cudaSuccess;
    return cudaSuccess;
}

cudaError_t cudaStreamCreate(cudaStream_t* stream) {
    if (stream == nullptr) return sim::set_error(cudaErrorInvalidValue);
    *stream = nullptr;
    return g_sticky_error;
}

cudaError_t cudaStreamDestroy(cudaStream_t stream) {
    (void)stream;
    return g_sticky_error;
}

cudaError_t cudaGetDeviceCount(int* count) {
    if (count == nullptr) return sim::set_error(cudaErrorInvalidValue);
    *count = 1;
    return cudaSuccess;
}

cudaError_t cudaGetDevice(int* device) {
    if (device == nullptr) return sim::set_error(cudaErrorInvalidValue);
    *device = 0;
    return cudaSuccess;
}

cudaError_t cudaSetDevice(int device) { return device == 0 ? cudaSuccess : sim::set_error(cudaErrorInvalidDevice); }

cudaError_t cudaDeviceGetAttribute(int* value, enum cudaDeviceAttr attr, int device) {
    if (value == nullptr || device != 0) return sim::set_error(cudaErrorInvalidValue);
    switch (attr) {
        case cudaDevAttrMaxThreadsPerBlock:
        case cudaDevAttrMaxBlockDimX:
        case cudaDevAttrMaxBlockDimY:
            *value = 1024;
            break;
        case cudaDevAttrMaxBlockDimZ:
            *value = 64;
            break;
        case cudaDevAttrMaxGridDimX:
            *value = 2147483647;
            break;
        case cudaDevAttrMaxGridDimY:
        case cudaDevAttrMaxGridDimZ:
            *value = 65535;
            break;
        case cudaDevAttrMaxSharedMemoryPerBlock:
            *value = (int)sim::kDefaultSmemLimit;
            break;
        case cudaDevAttrMaxSharedMemoryPerBlockOptin:
            *value = (int)sim::kOptinSmemLimit;
            break;
        case cudaDevAttrWarpSize:
            *value = 32;
            break;
        case cudaDevAttrMultiProcessorCount:
            *value = (int)std::max(1u, std::thread::hardware_concurrency());
            break;
        case cudaDevAttrComputeCapabilityMajor:
            *value = 8;
            break;
        case cudaDevAttrComputeCapabilityMinor:
            *value = 0;
            break;
        default:
            return sim::set_error(cudaErrorInvalidValue);
    }
    return cudaSuccess;
}

const char* cudaGetErrorName(cudaError_t error) {
    switch (error) {
        case cudaSuccess:
            return "cudaSuccess";
        case cudaErrorInvalidValue:
            return "cudaErrorInvalidValue";
        case cudaErrorMemoryAllocation:
            return "cudaErrorMemoryAllocation";
        case cudaErrorInitializationError:
            return "cudaErrorInitializationError";
        case cudaErrorInvalidConfiguration:
            return "cudaErrorInvalidConfiguration";
        case cudaErrorInvalidDevicePointer:
            return "cudaErrorInvalidDevicePointer";
        case cudaErrorInvalidMemcpyDirection:
            return "cudaErrorInvalidMemcpyDirection";
        case cudaErrorInsufficientDriver:
            return "cudaErrorInsufficientDriver";
        case cudaErrorNoDevice:
            return "cudaErrorNoDevice";
        case cudaErrorInvalidDevice:
            return "cudaErrorInvalidDevice";
        case cudaErrorInvalidDeviceFunction:
            return "cudaErrorInvalidDeviceFunction";
        case cudaErrorIllegalAddress:
            return "cudaErrorIllegalAddress";
        case cudaErrorLaunchOutOfResources:
            return "cudaErrorLaunchOutOfResources";
        case cudaErrorAssert:
            return "cudaErrorAssert";
        case cudaErrorLaunchFailure:
            return "cudaErrorLaunchFailure";
        case cudaErrorNotSupported:
            return "cudaErrorNotSupported";
        default:
            return "cudaErrorUnknown";
    }
}

const char* cudaGetErrorString(cudaError_t error) {
    switch (error) {
        case cudaSuccess:
            return "no error";
        case cudaErrorInvalidValue:
            return "invalid argument";
        case cudaErrorMemoryAllocation:
            return "out of memory";
        case cudaErrorInvalidConfiguration:
            return "invalid configuration argument";
        case cudaErrorLaunchFailure:
            return "unspecified launch failure (the simulator reported the kernel fault on stderr)";
        default:
            return cudaGetErrorName(error);
    }
}

}  // extern "C"
