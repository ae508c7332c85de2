// sim-runtime: per mode
// Blocks that wait for blocks not yet started. A GPU keeps many blocks of a launch resident at
// once, so a block may spin on a flag that a later block sets (HeCBench's pad, a decoupled
// look-back scan, persistent blocks taking work from a queue); CUDA does not promise it for an
// ordinary launch, but every GPU gives it to a small grid. A worker (scheduler.cpp) runs one block
// at a time, to its end. When its block's threads have done nothing but spin (spin_wait,
// __nanosleep) for kStallPasses passes and kStallNs, take_turns starts the next block not yet
// started beside it, with storage of its own (a Worker: stacks, fibers, shared memory), and the
// blocks take turns pass by pass, as a cooperative launch's do; while every block it holds only
// spins it starts one more, up to the blocks the modelled device holds at once for the launch
// (occupancy: blocks per multiprocessor for its block size and dynamic shared memory, times the
// multiprocessors) less one per worker. A launch whose blocks never spin never gets here.
#include "sim_internal.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

namespace __sim {

namespace {

// Passes that spun with no barrier released and no thread exited mark a block as waiting for
// another block once there are this many in a row over this much host time: a wait for a block
// that runs on another worker (a look-back scan's predecessor) mostly ends sooner, even under a
// sanitizer; a wait for a block not yet started never ends.
constexpr int kStallPasses = 64;
constexpr long long kStallNs = 2'000'000;

long long host_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

}  // namespace

// Only spun: for kStallPasses passes and kStallNs.
bool stalled(const Block& b, BlockProgress& p) {
    const bool only_spun = b.bar_gen == p.bar_gen && b.live == p.live;
    p.idle = only_spun ? p.idle + 1 : 0;
    p.spins = b.spins;
    p.bar_gen = b.bar_gen;
    p.live = b.live;
    if (p.idle == 1) p.idle_since_ns = host_ns();
    if (p.idle < kStallPasses) return false;
    // What it waits for may be a block on another worker that the OS has paused on a busy
    // machine: this thread gives it the CPU rather than spin through its time slice.
    std::this_thread::yield();
    return host_ns() - p.idle_since_ns >= kStallNs;
}

namespace {

// A block started beside a spinning one, with the storage it runs on; kept for the next.
struct Resident {
    Worker wk;
    Block b;
    BlockProgress progress;
    bool running = false;
    bool in_launch = false;  // started a block of the current take_turns (released at its end)
    bool guarded = false;    // its stacks have guard pages (counted in g_guarded_resident_slots)
};

// Guard pages split a mapping into one kernel memory area per stack (see kCoopGuardedSlots): the
// stacks of the resident blocks of all workers have them up to this many.
constexpr long long kResidentGuardedSlots = 8192;
std::atomic<long long> g_guarded_resident_slots{0};

std::vector<std::unique_ptr<Resident>>& resident_pool() {
    static thread_local std::vector<std::unique_ptr<Resident>> pool;
    return pool;
}

// How many blocks of ``L`` may run beside the workers' own: what the modelled device holds at
// once, less one block per worker running the launch.
long long extra_blocks_most(const Launch* L) {
    const LaunchSpec& s = L->spec;
    const int threads = (int)(s.block.x * s.block.y * s.block.z);
    const long long most = (long long)occupancy_blocks_per_sm(threads, s.smem) * occupancy_sm_count();
    const unsigned long long workers = tl_launches_inline ? 1 : std::min<unsigned long long>(worker_threads(), L->nblocks);
    return most - (long long)workers;
}

// Whether the stacks of ``r``'s next block of ``L`` get guard pages: those it has keep theirs;
// new ones get them while the budget allows.
bool guard_resident_stacks(Resident& r, const Launch* L) {
    const LaunchSpec& s = L->spec;
    const int count = (int)(s.block.x * s.block.y * s.block.z);
    if (count <= r.wk.stack_slots) return r.guarded;
    if (r.guarded) g_guarded_resident_slots.fetch_sub(r.wk.stack_slots);
    const long long slots = std::max(count, 32);
    r.guarded = g_guarded_resident_slots.fetch_add(slots) + slots <= kResidentGuardedSlots;
    if (!r.guarded) g_guarded_resident_slots.fetch_sub(slots);
    return r.guarded;
}

// Starts the next block of ``L`` not yet started beside the spinning ones; null when none is left,
// the device would hold no more, or the launch failed.
Resident* start_resident(Launch* L) {
    if (L->failed.load() || L->next.load() >= L->nblocks) return nullptr;
    const long long held = L->extra_resident.fetch_add(1);
    if (held >= extra_blocks_most(L)) {
        L->extra_resident.fetch_sub(1);
        return nullptr;
    }
    const unsigned long long id = L->next.fetch_add(1);
    if (id >= L->nblocks) {
        L->extra_resident.fetch_sub(1);
        return nullptr;
    }
    L->extra_started.fetch_add(1);
    long long peak = L->extra_peak.load();
    while (peak < held + 1 && !L->extra_peak.compare_exchange_weak(peak, held + 1)) {
    }
    auto& pool = resident_pool();
    Resident* r = nullptr;
    for (auto& slot : pool) {
        if (!slot->running) {
            r = slot.get();
            break;
        }
    }
    if (r == nullptr) {
        pool.emplace_back(new Resident);
        r = pool.back().get();
    }
    r->b = Block{};
    r->progress = BlockProgress{};
    const bool fresh = !r->in_launch;
    r->in_launch = true;
    if (!start_resident_block(L, id, r->b, &r->wk, fresh, guard_resident_stacks(*r, L))) {
        L->extra_resident.fetch_sub(1);
        return nullptr;
    }
    r->running = true;
    return r;
}

void end_resident(Launch* L, Resident& r) {
    end_resident_block(r.b);
    r.running = false;
    L->extra_resident.fetch_sub(1);
}

// One pass of ``b``; true when it has only spun long enough to be waiting for another block.
bool resident_pass(Block& b, BlockProgress& p) {
    resident_block_pass(b);
    return b.spins != p.spins && stalled(b, p);
}

// How recently another worker must have found its blocks only spinning to count as stalled: a
// worker the OS has paused says nothing, and its block may be what the others wait for.
constexpr long long kStalledFreshNs = 1'000'000;

// Whether every worker running ``L``'s blocks has just found that its blocks only spin.
bool all_workers_stalled(const Launch* L, long long now) {
    const int n = std::min(L->workers_seen.load(), Launch::kMaxWorkers);
    for (int i = 0; i < n; ++i) {
        const long long at = L->stalled_at[i].load(std::memory_order_relaxed);
        if (at == -1) continue;  // done with the launch
        if (at == 0 || now - at > kStalledFreshNs) return false;
    }
    return true;
}

}  // namespace

// A block not yet started runs only while every worker's blocks only spin: while one still does
// other work, the spinning ones may be waiting for it (a look-back scan's predecessor).
void take_turns(Launch* L, Block& first, BlockProgress& first_progress) {
    Worker* own = tl_run.worker;
    std::atomic<long long>& mine = L->stalled_at[own->launch_slot];
    std::vector<Resident*> running;
    bool first_done = false;
    bool stalled_here = true;
    for (;;) {
        if (stalled_here) {
            const long long now = host_ns();
            mine.store(now, std::memory_order_relaxed);
            if (all_workers_stalled(L, now)) {
                if (Resident* r = start_resident(L)) running.push_back(r);
            }
        } else {
            mine.store(0, std::memory_order_relaxed);
        }
        bool all_stalled = true;
        if (!first_done) {
            all_stalled = resident_pass(first, first_progress) && all_stalled;
            first_done = first.live == 0 || first.failed;
        }
        for (size_t k = 0; k < running.size();) {
            Resident* r = running[k];
            all_stalled = resident_pass(r->b, r->progress) && all_stalled;
            if (r->b.live == 0 || r->b.failed) {
                end_resident(L, *r);
                running.erase(running.begin() + (long)k);
            } else {
                ++k;
            }
        }
        if (L->timed_out.load(std::memory_order_relaxed) || L->failed.load()) {
            // Stopped (a timeout) or failed elsewhere: the blocks held here may be waiting on one
            // that will never run, so they stop too.
            if (!first_done) fail_block(&first);
            for (Resident* r : running) {
                fail_block(&r->b);
                end_resident(L, *r);
            }
            running.clear();
            break;
        }
        if (first_done && running.empty()) break;
        stalled_here = all_stalled;
    }
    mine.store(0, std::memory_order_relaxed);
    for (auto& slot : resident_pool()) {
        if (!slot->in_launch) continue;
        release_resident_worker(&slot->wk);
        slot->in_launch = false;
    }
    tl_run.worker = own;
    tl_run.block = &first;
}

}  // namespace __sim
