// sim-runtime: per mode
// The device API: what a CUDA thread calls that needs the scheduler. __syncthreads (and its
// count/and/or forms) is a block-wide barrier that releases when every live thread arrived;
// warp shuffles, votes and __syncwarp complete when every lane of their mask has arrived or
// exited; __shared__ variables and the launch's dynamic shared memory are per-block storage
// that starts filled with 0xff bytes. In synccheck mode the barrier and warp calls also check
// that all threads are at the same call site with the same mask.
#include "sim_internal.h"

#include <chrono>

#include <algorithm>
#include <unordered_set>

namespace __sim {

void release_barrier(Block* b) {
    b->bar_result[b->bar_gen & 1] = b->bar_pred;
    b->bar_arrived = 0;
    b->bar_gen++;
#if defined(SIM_SHARED_RACES)
    new_epoch(b->worker);
#endif
    for (int i = 0; i < b->nthreads; ++i) {
        if (b->fibers[i].state == FState::kBarrier) b->fibers[i].state = FState::kReady;
    }
}

namespace {

// The result of a __match_*_sync or __reduce_*_sync for lane ``f`` over the lanes ``group``.
unsigned long long combine_lanes(const Fiber* lanes, int n, unsigned int group, const Fiber& f) {
    unsigned int same = 0;
    bool first = true;
    unsigned int acc = 0;
    for (int l = 0; l < n; ++l) {
        if (!((group >> l) & 1u)) continue;
        const unsigned long long v = lanes[l].wvalue;
        if (v == f.wvalue) same |= 1u << l;
        const unsigned int u = (unsigned int)v;
        if (first) {
            acc = u;
            first = false;
            continue;
        }
        const bool is_signed = f.wparam != 0;
        switch (f.wkind) {
            case kReduceAdd: acc += u; break;
            case kReduceMin: acc = is_signed ? (unsigned int)std::min((int)acc, (int)u) : std::min(acc, u); break;
            case kReduceMax: acc = is_signed ? (unsigned int)std::max((int)acc, (int)u) : std::max(acc, u); break;
            case kReduceAnd: acc &= u; break;
            case kReduceOr: acc |= u; break;
            case kReduceXor: acc ^= u; break;
            default: break;
        }
    }
    if (f.wkind == kMatchAny) return same;
    if (f.wkind == kMatchAll) return same == group ? (1ull << 32) | group : 0;
    return acc;
}

// Completes the warp operation of the lanes in ``mask`` (all of them arrived or exited).
void complete_warp(Block* b, int w, unsigned int mask) {
    Fiber* lanes = b->fibers + w * 32;
    const int n = std::min(32, b->nthreads - w * 32);
    unsigned int waiting = b->warp_arrived[w] & mask;
#if defined(SIM_SHARED_RACES)
    if (waiting != 0 && lanes[__builtin_ctz(waiting)].wkind == kSyncWarp) warp_synced(b->worker, w);
#endif
    unsigned long long ballot = 0;
    for (int l = 0; l < n; ++l) {
        if ((waiting >> l) & 1u) ballot |= (lanes[l].wvalue != 0 ? 1ull : 0ull) << l;
    }
    for (int l = 0; l < n; ++l) {
        if (!((waiting >> l) & 1u)) continue;
        Fiber& f = lanes[l];
        const int src = shuffle_source(f.wkind, l, f.wparam, f.wwidth);
        if (f.wkind >= kMatchAny) {
            f.wresult = combine_lanes(lanes, n, waiting & f.wmask, f);
        } else if (f.wkind <= kShflXor) {
            f.wresult = (src < n && ((waiting >> src) & 1u)) ? lanes[src].wvalue : f.wvalue;
        } else if (f.wkind == kBallot) {
            f.wresult = ballot & f.wmask;
        } else if (f.wkind == kAny) {
            f.wresult = (ballot & f.wmask) != 0 ? 1 : 0;
        } else if (f.wkind == kAll) {
            f.wresult = (ballot & f.wmask) == (waiting & f.wmask) ? 1 : 0;
        }
        if (&f != tl_run.fiber) f.state = FState::kReady;
    }
    b->warp_arrived[w] &= ~mask;
}

// True when every lane of ``mask`` that exists has arrived or exited.
bool warp_ready(Block* b, int w, unsigned int mask) {
    const unsigned int need = mask & b->warp_present[w];
    return ((b->warp_arrived[w] | b->warp_exited[w]) & need) == need;
}

}  // namespace

void check_pending_warps(Block* b, int w) {
    Fiber* lanes = b->fibers + w * 32;
    const int n = std::min(32, b->nthreads - w * 32);
    for (int l = 0; l < n; ++l) {
        if (lanes[l].state == FState::kWarp && ((b->warp_arrived[w] >> l) & 1u) &&
            warp_ready(b, w, lanes[l].wmask)) {
            if (sync_checked(b) && (lanes[l].wmask & b->warp_exited[w] & b->warp_present[w])) {
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

// A barrier is its call site and its place in the block's sequence of barriers (the n-th one
// each thread reaches): one source line can be several barriers (a __device__ helper called
// twice, two calls on one line), and threads that took different numbers of them show up here
// even when every call is on the same line. A thread that leaves before any barrier (an early
// return for out-of-range indices) is not waited for, as on a GPU since Volta.
void thread_exited(Block* b, Fiber* f) {
    if (!sync_checked(b) || b->failed || b->bar_gen == 0 || b->left_thread >= 0) return;
    b->left_thread = f->linear;
    b->left_after = b->bar_gen;
    if (b->bar_arrived == 0) return;  // reported if another barrier is reached after this exit
    const Fiber* waiting = nullptr;
    for (int i = 0; i < b->nthreads && waiting == nullptr; ++i) {
        if (b->fibers[i].state == FState::kBarrier) waiting = &b->fibers[i];
    }
    report("synccheck: divergent __syncthreads in %s: thread %s exited after %llu barrier(s) while %d thread(s) "
           "(e.g. thread %s) wait at barrier %llu of the block at %s:%d; every thread that takes part in a "
           "block's barriers must reach the same ones (the same number of them, wherever they are written)",
           where(b).c_str(), tid_str(*f).c_str(), b->bar_gen, b->bar_arrived,
           waiting ? tid_str(*waiting).c_str() : "?", b->bar_gen + 1, b->bar_file, b->bar_line);
    fail_block(b);
}

// ---- device-side entry points -------------------------------------------------------------
void syncthreads(const char* file, int line) { (void)syncthreads_reduce(-1, 0, file, line); }

void require_device(const RunState& run, const char* what, const char* file, int line) {
    if (run.block == nullptr || run.fiber == nullptr) {
        report("%s called outside a kernel at %s:%d", what, file, line);
        std::abort();
    }
}

[[noreturn]] void refuse_wait(Block* b, const char* what, const char* file, int line) {
    report("%s: kernel '%s' block (%u,%u,%u) thread %s reached %s at %s:%d, but the launch (at %s:%d) was marked "
           "barrier-free and runs its threads as a plain loop, where nothing can wait; the launch returns "
           "cudaErrorLaunchFailure (SIMULATOR_FIBERS=1 runs it with fibers)",
           mode_name(), b->launch->name, b->idx.x, b->idx.y, b->idx.z, tid_str(*tl_run.fiber).c_str(), what, file, line,
           b->launch->file, b->launch->line);
    fail_block(b);
    yield_to_scheduler(true);
    std::abort();  // a plain-loop thread that stops never comes back
}

int syncthreads_reduce(int kind, int predicate, const char* file, int line) {
    RuntimeCall in_runtime;
    require_device(in_runtime.run, "__syncthreads", file, line);
    Block* b = in_runtime.run.block;
    Fiber* f = in_runtime.run.fiber;
    if (b->plain) refuse_wait(b, "__syncthreads", file, line);
    if (sync_checked(b) && b->left_thread >= 0) {
        report("synccheck: divergent __syncthreads in %s: thread %s reached barrier %llu of the block at %s:%d "
               "but thread %s exited after %llu barrier(s); every thread that takes part in a block's barriers "
               "must reach the same ones (the same number of them, wherever they are written)",
               where(b).c_str(), tid_str(*f).c_str(), b->bar_gen + 1, file, line,
               tid_str(b->fibers[b->left_thread]).c_str(), b->left_after);
        fail_block(b);
        yield_to_scheduler(true);
    }
    if (b->bar_arrived == 0) {
        b->bar_file = file;
        b->bar_line = line;
        b->bar_kind = kind;
        b->bar_pred = 0;
    } else if (sync_checked(b) && (b->bar_line != line || std::strcmp(b->bar_file, file) != 0)) {
        const Fiber* other = nullptr;
        for (int i = 0; i < b->nthreads; ++i) {
            if (b->fibers[i].state == FState::kBarrier) {
                other = &b->fibers[i];
                break;
            }
        }
        report("synccheck: divergent __syncthreads in %s: thread %s reached the barrier at %s:%d while %d "
               "thread(s) (e.g. thread %s) wait at the barrier at %s:%d (barrier %llu of the block); every live "
               "thread of a block must reach the same __syncthreads",
               where(b).c_str(), tid_str(*f).c_str(), file, line, b->bar_arrived,
               other ? tid_str(*other).c_str() : "?", b->bar_file, b->bar_line, b->bar_gen + 1);
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
    if (b->bar_arrived == b->live && !stopping(b)) {  // after a fault no thread passes it
        release_barrier(b);
    } else {
        f->state = FState::kBarrier;
        yield_from(in_runtime.run, false);
        if (b->failed) yield_from(in_runtime.run, true);
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
    RuntimeCall in_runtime;
    require_device(in_runtime.run, warp_kind_name(kind), file, line);
    Block* b = in_runtime.run.block;
    Fiber* f = in_runtime.run.fiber;
    if (b->plain) refuse_wait(b, warp_kind_name(kind), file, line);
    const int w = f->warp;
    const unsigned int me = 1u << f->lane;
    if (!(mask & me)) {
        report("%s: %s at %s:%d in %s: thread %s calls it with mask 0x%08x that does not include its "
               "own lane %d",
               mode_name(), warp_kind_name(kind), file, line, where(b).c_str(), tid_str(*f).c_str(), mask, f->lane);
        fail_block(b);
        yield_to_scheduler(true);
    }
    if (sync_checked(b)) {
        Fiber* lanes = b->fibers + w * 32;
        const int n = std::min(32, b->nthreads - w * 32);
        for (int l = 0; l < n; ++l) {
            if (!((b->warp_arrived[w] >> l) & 1u) || !((mask >> l) & 1u)) continue;
            const Fiber& o = lanes[l];
            // A lane whose own operation does not wait for this one (disjoint groups, e.g. two
            // tiles or labeled partitions) will still come here after it: not a divergence.
            if (!((o.wmask >> f->lane) & 1u)) continue;
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

namespace {

// A turn of a thread that waits on memory another thread writes (__nanosleep, spin_wait): the
// block's other threads run before it looks again, and the turn counts as a spin (Block::spins).
void hand_over_spin(Block* b, Fiber* f) {
    b->spins++;
    f->state = FState::kReady;
    yield_to_scheduler(false);
    if (b->failed) yield_to_scheduler(true);
}

}  // namespace

void nanosleep_thread(unsigned int ns, const char* file, int line) {
    // A GPU sleeps up to ns (at most about 1 ms); here the other threads of the block run
    // meanwhile, which is what a spin-wait with __nanosleep waits for.
    (void)ns;
    RuntimeCall in_runtime;
    Block* b = in_runtime.run.block;
    Fiber* f = in_runtime.run.fiber;
    if (f == nullptr || b == nullptr) return;
    if (b->plain) refuse_wait(b, "__nanosleep", file, line);
    hand_over_spin(b, f);
}

void spin_wait() {
    RunState& run = run_state();
    Block* b = run.block;
    Fiber* f = run.fiber;
    // Host code (a __host__ __device__ function) and a plain loop have no other thread to hand
    // over to (the front end keeps a kernel that spins on fibers): the spin goes on as written.
    if (f == nullptr || b == nullptr || b->plain || !run.in_kernel) return;
    RuntimeCall in_runtime;
    hand_over_spin(b, f);
}

namespace {

// A GPU runs thousands of threads at once, so a kernel in which every thread spins for n cycles
// takes n cycles; here the threads of a worker run one after another and would take n cycles
// each. So this worker's clock (an SM's, as on a GPU) runs ahead of the host's while one CUDA
// thread reads it again and again: each read within kSpinGapCycles of that thread's previous
// read adds a step that doubles (32, 64, 128, ... cycles, at most kMaxSpinStep), so a spin of n
// cycles ends after about log2(n / 32) reads (a host clock read costs ~25 ns) and has then seen
// between n and 2n cycles. Work between two reads resets the step, so the cycles such a stretch
// reads are the host's time scaled.
constexpr long long kSpinGapCycles = 1410;     // 1 us of host time
constexpr long long kFirstSpinStep = 32;       // about one iteration of a spin loop on a GPU
constexpr long long kMaxSpinStep = 1LL << 30;  // a 32-bit clock() difference stays exact
struct SpinClock {
    long long ahead = 0;  // cycles this worker's clock runs ahead of the host's, never less
    long long step = 0;
    long long last = -1;  // host time of the previous read, in cycles
    const ThreadState* reader = nullptr;
    uint3 thread_idx{}, block_idx{};
};
thread_local SpinClock tl_spin_clock;

bool same_thread(const SpinClock& c, const ThreadState* t) {
    return t != nullptr && c.reader == t && same_index(c.thread_idx, t->thread_idx) && same_index(c.block_idx, t->block_idx);
}

}  // namespace

long long clock_cycles() {
    const auto now = std::chrono::steady_clock::now().time_since_epoch();
    const long long ns = std::chrono::duration_cast<std::chrono::nanoseconds>(now).count();
    const long long host = ns + ns * 41 / 100;  // 1.41 cycles per ns: the modelled clockRate of 1410000 kHz
    SpinClock& c = tl_spin_clock;
    const ThreadState* t = tl_thread;
    if (same_thread(c, t) && host - c.last < kSpinGapCycles) {
        c.step = c.step == 0 ? kFirstSpinStep : std::min(2 * c.step, kMaxSpinStep);
        c.ahead += c.step;
    } else {
        c.step = 0;
    }
    c.last = host;
    c.reader = t;
    if (t != nullptr) {
        c.thread_idx = t->thread_idx;
        c.block_idx = t->block_idx;
    }
    return host + c.ahead;
}

unsigned int active_mask() {
    Block* b = tl_run.block;
    if (b->plain) {
        // Threads run in order here, as fibers without barriers do: the earlier lanes have exited.
        const int lane = tl_run.fiber->linear & 31;
        return b->warp_present[tl_run.fiber->linear >> 5] & ~((1u << lane) - 1);
    }
    const int w = tl_run.fiber->warp;
    return b->warp_present[w] & ~b->warp_exited[w];
}

// A GPU's coalesced group is the lanes that execute the call together. Lanes here run one at a
// time, so each lane waits at the call until no thread of the block can run any more; the lanes
// of a warp then waiting at this call site form the group (lanes that went another way are
// waiting elsewhere or have exited).
unsigned int coalesced_mask(const char* file, int line) {
    RuntimeCall in_runtime;
    require_device(tl_run, "cooperative_groups::coalesced_threads()", file, line);
    Block* b = tl_run.block;
    Fiber* f = tl_run.fiber;
    if (b->plain) refuse_wait(b, "cooperative_groups::coalesced_threads()", file, line);
    f->wkind = -1;
    f->wfile = file;
    f->wline = line;
    f->wresult = 1u << f->lane;
    f->state = FState::kCoalesce;
    yield_to_scheduler(false);
    if (b->failed) yield_to_scheduler(true);
    return (unsigned int)f->wresult;
}

// A lockstep point is a coalesced wait whose group nobody reads: the lanes that reach one wait
// until no thread of the block can run, and go on together.
void lockstep_point() {
    RuntimeCall in_runtime;
    Block* b = tl_run.block;
    Fiber* f = tl_run.fiber;
    if (b == nullptr || b->plain || f == nullptr || b->failed) return;
    f->wkind = -1;
    f->wfile = "lockstep";
    f->wline = 0;
    f->wresult = 1u << f->lane;
    f->state = FState::kCoalesce;
    yield_to_scheduler(false);
    if (b->failed) yield_to_scheduler(true);
}

bool release_coalesced(Block* b) {
    bool any = false;
    for (int w = 0; w < b->nwarps; ++w) {
        Fiber* lanes = b->fibers + w * 32;
        const int n = std::min(32, b->nthreads - w * 32);
        for (int l = 0; l < n; ++l) {
            if (lanes[l].state != FState::kCoalesce) continue;
            unsigned int mask = 0;
            for (int k = l; k < n; ++k) {
                if (lanes[k].state == FState::kCoalesce && lanes[k].wline == lanes[l].wline &&
                    std::strcmp(lanes[k].wfile, lanes[l].wfile) == 0) {
                    mask |= 1u << k;
                }
            }
            for (int k = l; k < n; ++k) {
                if ((mask >> k) & 1u) {
                    lanes[k].wresult = mask;
                    lanes[k].state = FState::kReady;
                }
            }
            any = true;
        }
    }
    return any;
}

#if defined(SIM_MEMCHECK)
// memcheck: a heap block of its own for the __shared__ variable at ``site`` (``size`` bytes), exactly
// as large, so that AddressSanitizer's redzones around it find an access past either end. A block
// of a launch that is not cooperative gets the one an earlier block of the launch had on this
// worker (the shared memory of blocks one after another, as on a GPU's multiprocessor), where
// allocating and freeing it for every block cost most of a short block's time (the allocator
// records a stack trace each time, and its quarantine hands out fresh pages); shared_static fills
// it with 0xff as a new one. Freed by release_kept_shared at the end of the worker's part of the
// launch, or with the block (mode_hooks.h, free_shared) where not kept.
void* keep_shared(Block* b, const void* site, size_t size, size_t align) {
    Worker* wk = b->worker;
    const bool keep = !b->launch->spec.cooperative && wk != nullptr;
    if (keep) {
        for (const Worker::KeptShared& k : wk->kept_shared) {
            if (k.site == site && k.size == size && k.align == align) return k.p;
        }
    }
    void* p = nullptr;
    if (align > 16) {
        if (posix_memalign(&p, align, size) != 0) p = nullptr;
    } else {
        p = std::malloc(size);
    }
    if (keep && p != nullptr) wk->kept_shared.push_back({site, size, align, p});
    return p;
}

// memcheck: raw storage of ``bytes`` for the per-thread slots of one local of a block-loop kernel
// (per_thread in block_loops.h): the n-th that a block asks for is the one the worker's earlier
// block had (as large and as aligned), or a new one. A slot's value is always stored (at the end
// of the region that declares the local) before a later region reads it, so what an earlier block
// left there is never seen. Not a heap block of the program's: the runtime reads and writes it
// unchecked, and release_kept_shared frees it.
void* kept_slots(size_t bytes, size_t align) {
    Block* b = tl_run.block;
    Worker* wk = b != nullptr ? b->worker : nullptr;
    if (wk == nullptr || b->launch->spec.cooperative) return nullptr;  // per_thread allocates its own
    const size_t n = wk->slots_asked++;
    if (n < wk->kept_slots.size()) {
        Worker::KeptShared& k = wk->kept_slots[n];
        if (k.size >= bytes && k.align >= align) return k.p;
        std::free(k.p);
        wk->kept_slots.erase(wk->kept_slots.begin() + (long)n);
    }
    void* p = nullptr;
    if (posix_memalign(&p, align < sizeof(void*) ? sizeof(void*) : align, bytes == 0 ? 1 : bytes) != 0) {
        report("out of host memory for the per-thread slots of %s", where(b).c_str());
        std::abort();
    }
    wk->kept_slots.insert(wk->kept_slots.begin() + (long)n, {nullptr, bytes, align, p});
    return p;
}

void release_kept_shared(Worker* wk) {
    for (const Worker::KeptShared& k : wk->kept_shared) std::free(k.p);
    wk->kept_shared.clear();
    for (const Worker::KeptShared& k : wk->kept_slots) std::free(k.p);
    wk->kept_slots.clear();
    std::free(wk->kept_dyn);
    wk->kept_dyn = nullptr;
}
#endif

void* shared_static(const void* site, size_t size, size_t align) {
    RuntimeCall in_runtime;
    require_device(in_runtime.run, "a __shared__ variable", "?", 0);
    Block* b = in_runtime.run.block;
    for (auto& s : *b->statics) {
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
    const bool own_fiber = b->launch->checked;  // an unchecked launch's threads run as the worker
    if (own_fiber) __tsan_switch_to_fiber(tl_sched_tsan, 1);
    if (posix_memalign(&p, align < 16 ? 16 : align, size == 0 ? 1 : size) != 0) {
        report("out of host memory for shared memory of %s", where(b).c_str());
        std::abort();
    }
    std::memset(p, 0xff, size);
    __tsan_release(const_cast<void*>(site));
    if (own_fiber) __tsan_switch_to_fiber(tl_run.fiber->tsan_fiber, 1);
#elif defined(SIM_MEMCHECK)
    p = keep_shared(b, site, size, align);
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
    b->statics->emplace_back(site, p);
    return p;
}

void* dynamic_shared() {
    require_device(tl_run, "extern __shared__ memory", "?", 0);
    return tl_run.block->dyn;
}

void thread_fence() {
#if defined(SIM_RACECHECK) || defined(SIM_SHARED_RACES)
    if (tl_run.fiber != nullptr) tl_run.fiber->fenced = true;  // see atomic_orders
#endif
    std::atomic_thread_fence(std::memory_order_seq_cst);
}

#if defined(SIM_RACECHECK) || defined(SIM_SHARED_RACES)
namespace {
// Addresses that an atomic after a __threadfence() used: their atomics order memory from then on.
std::mutex g_ordering_mu;
std::unordered_set<const void*> g_ordering;
std::atomic<bool> g_any_ordering{false};
}  // namespace

// racecheck: whether the atomic at ``p`` the running thread is about to make orders memory
// (seq_cst) or is relaxed (cuda_sim.h, SIM_WITH_ORDER says why).
bool atomic_orders(const void* p) {
    Fiber* f = tl_run.fiber;
    if (f != nullptr && !tl_run.block->launch->checked) return false;  // ignored: see UncheckedScope
    if (f != nullptr && f->fenced) {
        f->fenced = false;
        std::lock_guard<std::mutex> lock(g_ordering_mu);
        g_ordering.insert(p);
        g_any_ordering.store(true, std::memory_order_relaxed);
        return true;
    }
    if (!g_any_ordering.load(std::memory_order_relaxed)) return false;
    std::lock_guard<std::mutex> lock(g_ordering_mu);
    return g_ordering.count(p) != 0;
}
#endif

// __trap() in kernel code: as on a GPU the kernel stops and the launch (and every later call)
// fails with cudaErrorLaunchFailure; the first trapping thread of the launch is reported.
void trap(const char* file, int line) {
    Fiber* f = tl_run.fiber;
    Block* b = tl_run.block;
    if (f == nullptr || b == nullptr) {
        report("__trap() called outside a kernel at %s:%d", file, line);
        std::abort();
    }
    tl_run.in_kernel = false;
    if (!b->launch->trapped.exchange(true)) {
        report("device trap: %s:%d: block: [%u,%u,%u], thread: [%u,%u,%u] called __trap() (kernel '%s'); the "
               "launch returns cudaErrorLaunchFailure, which is sticky",
               file, line, b->idx.x, b->idx.y, b->idx.z, f->thread_idx.x, f->thread_idx.y, f->thread_idx.z,
               b->launch->name);
    }
    stop_thread(b, f);
}

void trap_with(const char* what) {
    Fiber* f = tl_run.fiber;
    Block* b = tl_run.block;
    if (f == nullptr || b == nullptr) {
        report("%s", what);
        std::abort();
    }
    tl_run.in_kernel = false;
    if (!b->launch->trapped.exchange(true)) {
        report("device trap: block: [%u,%u,%u], thread: [%u,%u,%u] (kernel '%s'): %s; the launch returns "
               "cudaErrorLaunchFailure, which is sticky",
               b->idx.x, b->idx.y, b->idx.z, f->thread_idx.x, f->thread_idx.y, f->thread_idx.z, b->launch->name,
               what);
    }
    stop_thread(b, f);
}

}  // namespace __sim

// A failed assert() in kernel code is a device-side assert, as on a GPU: the message names the
// block and thread, the kernel stops and the launch returns cudaErrorAssert (sticky). This
// definition takes the place of the C library's for the code linked with the runtime; an
// assert() in host code prints the usual message and aborts.
// __syncthreads(), declared by NVIDIA's headers: barrier 0 of the block, at the call site the
// front end recorded (sim_intrinsics.h says why it is defined here).
extern "C" void __syncthreads(void) {
    const __sim::Site s = __sim::take_site();
    __sim::syncthreads(s.file, s.line);
}

extern "C" __attribute__((noreturn, visibility("hidden"))) void __assert_fail(const char* expr, const char* file,
                                                                             unsigned int line, const char* func) {
    using namespace __sim;
    Fiber* f = tl_run.fiber;
    Block* b = tl_run.block;
    if (f != nullptr && b != nullptr) {
        tl_run.in_kernel = false;
        report("device assert: %s:%u: %s: block: [%u,%u,%u], thread: [%u,%u,%u] Assertion `%s` failed (kernel '%s'); "
               "the launch returns cudaErrorAssert, which is sticky",
               file, line, func, b->idx.x, b->idx.y, b->idx.z, f->thread_idx.x, f->thread_idx.y, f->thread_idx.z,
               expr, b->launch->name);
        b->launch->asserted.store(true);
        stop_thread(b, f);
    }
    std::fprintf(stderr, "%s:%u: %s: Assertion `%s' failed.\n", file, line, func, expr);
    std::fflush(stderr);
    std::abort();
}
