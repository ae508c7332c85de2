// sim-runtime: per mode
// racecheck of __shared__ memory (run --racecheck-memory shared): the simulator's own hazard
// detector, in the place of ThreadSanitizer's runtime. The program is compiled with g++'s
// -fsanitize=thread instrumentation, whose calls (__tsan_read4, __tsan_write8, the atomics, ...)
// land here: an access outside the running block's shared memory returns at once, and one inside
// it is judged against the last write and the reads of each byte.
//
// Two accesses of different threads of a block, at least one a write and neither atomic, are a
// hazard unless something orders them. The block's barriers split its run into epochs: accesses
// in different epochs are ordered, so a barrier costs one increment instead of a pass over every
// thread's vector clock. Within an epoch, a __syncwarp orders the lanes of a warp (a count per
// warp). What this detector cannot order exactly (a barrier of a tile of 64..1024 threads,
// grid.sync(), an atomic that acquires, e.g. cuda::barrier or a lock) starts a new epoch for the
// whole block: that can hide a hazard across it, never report one that is not there.
//
// Lanes of one warp that store to the same bytes in one statement (the same code address) race
// only if they store different values: `shared_sum[warp_id] = warp_sum;` after a warp reduction
// stores one value from every lane, which compute-sanitizer reports at most as a warning. Such a
// store is judged once it has been made (the instrumentation's call comes before it): at the
// block's next shared access, barrier, __syncwarp or end, its bytes are compared with the value
// the earlier lane stored; a different value is a hazard, the same one a warning only.
#if defined(SIM_SHARED_RACES)

#include "sim_internal.h"

#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <set>
#include <string>
#include <utility>

namespace __sim {
namespace {

constexpr uint32_t kManyReaders = 0xffffu;   // readers in several warps
constexpr uint32_t kWarpReaders = 0x8000u;   // | warp: several readers, all of that warp

// What one byte of shared memory, or each byte of a whole word (see RaceState), saw in the current
// epoch of its block: 16 bytes (the code addresses, read only for a report, are apart).
struct Cell {
    uint32_t write_epoch;
    uint32_t read_epoch;
    uint16_t writer;       // linear thread index in the block (at most 1024 threads)
    uint16_t reader;       // linear index, or kManyReaders, or kWarpReaders | warp
    uint16_t write_sync;   // the writer's warp's __syncwarp count at the write
    uint16_t read_sync;    // the largest such count among the readers
};
static_assert(sizeof(Cell) == 16, "a cell is a quarter of a cache line");

// Where the write and the reads a cell records were made (the first read of each kind of reader).
struct CellPcs {
    uintptr_t write_pc;
    uintptr_t read_pc;
};

// A store by a lane of the warp whose lane stored to the same bytes in the same statement before:
// judged once it has been made, by the value it left (see the top of the file).
struct SameStatementStore {
    Block* block = nullptr;  // nullptr: none waits
    uintptr_t off = 0;
    size_t size = 0;
    unsigned char before[16];  // what the earlier lane stored
    uint32_t thread = 0, then_thread = 0;
    uintptr_t pc = 0;
};

// What a read of an aligned 4-byte word could not change, once its four cells say so: every byte
// read in the current epoch by threads of several warps (or of warp w only, all with a __syncwarp
// count of at least ``sync``), none written in it. Such a read is no hazard and records nothing
// new, so access() drops it without judging each byte (most reads of a tile that many threads
// read). A write to the word, or a new epoch, ends it.
struct ReadHint {
    uint32_t epoch;     // 0: no hint
    uint16_t readers;   // kManyReaders, or kWarpReaders | w
    uint16_t sync;      // the smallest read_sync of the four bytes
};
static_assert(sizeof(ReadHint) == 8, "two a word of shared memory");

struct RaceState {
    uint32_t epoch = 1;
    uint16_t warp_syncs[32] = {};
    SameStatementStore waiting;
    // A word whose four bytes saw the same (the cells they would have are equal) is whole: one cell
    // and its pcs in ``words``/``word_pcs`` stand for the four, so an access of the aligned word
    // judges one cell. An access of part of a whole word splits it: the cell is copied to the four
    // bytes' own cells in ``cells``/``pcs``, which judge it byte by byte from then on; an access of
    // the whole word that leaves them equal again joins them. Bytes race, not words.
    // The shadow is part of the object, at fixed offsets from it: an access finds each array by
    // adding to the one pointer it loads (the worker's race_state), not by loading the array's.
    // new_state() makes it in zeroed pages, which only the bytes a program's blocks touch cost.
    ReadHint hints[kArenaBytes / 4];    // one per aligned 4-byte word of the worker's arena
    Cell words[kArenaBytes / 4];        // likewise
    CellPcs word_pcs[kArenaBytes / 4];  // likewise
    uint8_t split[kArenaBytes / 4];     // per word: 1 while its bytes have cells of their own
    Cell cells[kArenaBytes];            // one per byte of the arena (read while its word is split)
    CellPcs pcs[kArenaBytes];           // likewise
};

std::mutex g_race_report_mu;
// The hazards reported: by (earlier pc, later pc), and by the two program lines they name.
struct Reported {
    std::set<std::pair<uintptr_t, uintptr_t>> pcs;
    std::set<std::string> lines;
};
Reported* g_reported = nullptr;
std::atomic<bool> g_any_report{false};
std::set<uintptr_t>* g_warned = nullptr;  // statements warned of (same value from lanes of one warp)

// calloc of this size maps zero pages: only the bytes a program's blocks touch cost memory. The
// constructor sets the scalars at the object's head and leaves the arrays (no initializer) zero.
__attribute__((noinline)) RaceState& new_state(Worker* wk) {
    void* at = std::calloc(1, sizeof(RaceState));
    if (at == nullptr) {
        report("racecheck: out of host memory for the shadow of shared memory");
        std::abort();
    }
    auto* s = new (at) RaceState;
    wk->race_state = s;
    return *s;
}

inline RaceState& state_of(Worker* wk) {
    return wk->race_state != nullptr ? *static_cast<RaceState*>(wk->race_state) : new_state(wk);
}

std::string thread_name(const Block* b, uint32_t linear) {
    const dim3 d = b->launch->spec.block;
    const uint3 thread{linear % d.x, (linear / d.x) % d.y, linear / (d.x * d.y)};
    char s[256];
    fiber_name(s, sizeof s, b->launch->name, b->idx, thread);
    return s;
}

// ``at`` without the compiler's names of copies of a function (" [clone .localalias]",
// " [clone .isra.0]"): the function the program wrote, however the build placed its code.
std::string without_clones(std::string at) {
    for (size_t c; (c = at.find(" [clone .")) != std::string::npos;) {
        const size_t end = at.find(']', c);
        if (end == std::string::npos) break;
        at.erase(c, end + 1 - c);
    }
    return at;
}

// ``at`` (source_of's "func at file:line") as fibers name it: in a block-loop launch, a region's
// loop body is a lambda of the kernel (simulator/block_loops.py; the kernel has none of its own),
// named by the kernel alone.
std::string as_fibers_name(const Block* b, std::string at) {
    at = without_clones(std::move(at));
    if (!b->launch->block_loops) return at;
    const size_t lambda = at.find("::{lambda(");  // lambda() or lambda(uint3, int), launch.h
    const size_t name = std::strlen(b->launch->name);
    if (lambda == std::string::npos || at.compare(0, name, b->launch->name) != 0 || name >= lambda ||
        (at[name] != '(' && at[name] != '<'))
        return at;
    const size_t tail = at.find(" at ", lambda);
    return tail == std::string::npos ? at : at.substr(0, lambda) + at.substr(tail);
}

void report_hazard(const Block* b, const char* now_kind, uint32_t now_thread, uintptr_t now_pc,
                   const char* then_kind, uint32_t then_thread, uintptr_t then_pc) {
    {
        std::lock_guard<std::mutex> lock(g_race_report_mu);
        if (g_reported == nullptr) g_reported = new Reported;
        if (!g_reported->pcs.insert({then_pc, now_pc}).second) return;  // seen: no symbolizing again
    }
    const std::string now_at = as_fibers_name(b, source_of(now_pc)), then_at = as_fibers_name(b, source_of(then_pc));
    {
        std::lock_guard<std::mutex> lock(g_race_report_mu);
        // Once per pair of program lines (a line's copy loop has several stores, each its own pc).
        if (!g_reported->lines.insert(std::string(now_kind) + now_at + '|' + then_kind + then_at).second) return;
        g_any_report.store(true);
    }
    const std::string then_who =
        then_thread == kManyReaders || (then_thread & kWarpReaders) != 0 ? "several threads" : thread_name(b, then_thread);
    report("racecheck: data race (shared memory): %s by %s in %s; %s by %s in %s", now_kind,
           thread_name(b, now_thread).c_str(), now_at.c_str(), then_kind, then_who.c_str(), then_at.c_str());
}

// Judges the store that waits, if any, by the value it left in shared memory.
__attribute__((noinline)) void settle_waiting(RaceState& s) {
    SameStatementStore& w = s.waiting;
    Block* b = w.block;
    w.block = nullptr;
    if (std::memcmp(static_cast<const char*>(b->smem) + w.off, w.before, w.size) != 0) {
        report_hazard(b, "write", w.thread, w.pc, "write", w.then_thread, w.pc);
        return;
    }
    {
        std::lock_guard<std::mutex> lock(g_race_report_mu);
        if (g_warned == nullptr) g_warned = new std::set<uintptr_t>;
        if (!g_warned->insert(w.pc).second) return;
    }
    report("racecheck: warning (not a hazard): lanes of one warp store the same value to the same shared memory "
           "in %s, e.g. %s after %s",
           as_fibers_name(b, source_of(w.pc)).c_str(), thread_name(b, w.thread).c_str(),
           thread_name(b, w.then_thread).c_str());
}

inline void settle(RaceState& s) {
    if (s.waiting.block != nullptr) settle_waiting(s);
}

// The read hint of word ``w`` from its cell (whole) or its four bytes' cells, after a read in
// ``epoch`` (see ReadHint).
void note_read_hint(RaceState& s, uintptr_t w, uint32_t epoch) {
    const bool whole = s.split[w] == 0;
    const Cell* c = whole ? &s.words[w] : &s.cells[w * 4];
    ReadHint h{epoch, c[0].reader, c[0].read_sync};
    if (h.readers != kManyReaders && (h.readers & kWarpReaders) == 0) return;
    for (int i = 0; i < (whole ? 1 : 4); ++i) {
        if (c[i].read_epoch != epoch || c[i].write_epoch == epoch || c[i].reader != h.readers) return;
        if (c[i].read_sync < h.sync) h.sync = c[i].read_sync;
    }
    s.hints[w] = h;
}

// Whether the hint ``h`` lets a read of the running thread through (see ReadHint); ``warp`` and
// ``sync`` are looked up at the first word read by one warp only: a word read by several warps
// (most words of a tile) needs neither.
inline bool hint_allows(const RaceState& s, const RunState& run, const ReadHint& h, uint32_t& warp, uint16_t& sync) {
    if (h.epoch != s.epoch) return false;
    if (h.readers == kManyReaders) return true;
    if (warp == ~0u) {
        warp = (uint32_t)run.fiber->linear >> 5;
        sync = s.warp_syncs[warp & 31u];
    }
    return h.readers == (kWarpReaders | warp) && sync <= h.sync;
}

// The same over several words: a read that straddles words, or a range.
__attribute__((noinline)) bool words_known(const RaceState& s, const RunState& run, uintptr_t off, size_t size) {
    uint32_t warp = ~0u;
    uint16_t sync = 0;
    for (uintptr_t w = off >> 2, last = (off + size - 1) >> 2; w <= last; ++w)
        if (!hint_allows(s, run, s.hints[w], warp, sync)) return false;
    return true;
}

// Whether a read of [off, off + size) by the running thread would find nothing and record nothing
// new. Tried for every read of shared memory before judge(), so a read within one word (most
// reads) tests one hint without a loop.
inline bool read_known(const RaceState& s, const RunState& run, uintptr_t off, size_t size) {
    if (s.waiting.block != nullptr || off + size > kArenaBytes || size == 0) return false;
    if ((off & 3u) + size > 4) return words_known(s, run, off, size);
    uint32_t warp = ~0u;
    uint16_t sync = 0;
    return hint_allows(s, run, s.hints[off >> 2], warp, sync);
}

// Whether a write of ``thread`` now at ``pc`` over a write of ``then_thread`` is one statement's store
// of two lanes of one warp, to be judged by its value once made.
inline bool same_statement_of_warp(uint32_t thread, uint32_t then_thread, uintptr_t pc, uintptr_t then_pc,
                                   size_t size) {
    return (thread >> 5) == (then_thread >> 5) && pc == then_pc && size <= sizeof(SameStatementStore::before);
}

// Whether an access of ``thread`` (warp sync count ``sync``) follows one of ``other`` (count
// ``other_sync``) in the same epoch: the same thread, or a __syncwarp of their warp since.
inline bool ordered(uint32_t thread, uint32_t sync, uint32_t other, uint32_t other_sync) {
    if (other == thread) return true;
    return (other >> 5) == (thread >> 5) && sync > other_sync;
}

// The warp of the reads ``c`` records (one reader's, or several of one warp); -1 for several warps.
inline int readers_warp(const Cell& c) {
    if (c.reader == kManyReaders) return -1;
    return (int)((c.reader & kWarpReaders) != 0 ? (c.reader & 31u) : c.reader >> 5);
}

// The same as ``ordered`` against every read ``c`` records (read_sync is their largest count).
bool readers_ordered(const Cell& c, uint32_t thread, uint32_t sync) {
    return c.reader == thread || (readers_warp(c) == (int)(thread >> 5) && sync > c.read_sync);
}

// Records in ``c`` (and ``p``) a read of ``thread`` in ``epoch``: the first of the epoch, or one
// more reader (one warp's, or several warps').
inline void record_read(Cell& c, CellPcs& p, uint32_t epoch, uint32_t thread, uint32_t sync, uintptr_t pc) {
    if (c.read_epoch != epoch) {
        c.read_epoch = epoch;
        c.reader = (uint16_t)thread;
        c.read_sync = (uint16_t)sync;
        p.read_pc = pc;
        return;
    }
    if (c.reader != thread && c.reader != kManyReaders) {
        const uint32_t warp = thread >> 5;
        const uint16_t readers = readers_warp(c) == (int)warp ? (uint16_t)(kWarpReaders | warp) : kManyReaders;
        if (readers != c.reader) {
            c.reader = readers;
            p.read_pc = pc;
        }
    }
    if (sync > c.read_sync) c.read_sync = (uint16_t)sync;
}

// One access being judged, cell by cell.
struct Judging {
    RaceState& s;
    Block* b;
    uintptr_t off;
    size_t size;
    bool write;
    uintptr_t pc;
    uint32_t epoch, thread, sync;
    bool reported;  // one finding an access at most
};

// Judges the access against what cell ``c`` (a byte's, or a whole word's) records, and records it.
inline void judge_cell(Judging& j, Cell& c, CellPcs& p) {
    if (c.write_epoch == j.epoch && !j.reported && !ordered(j.thread, j.sync, c.writer, c.write_sync)) {
        const uintptr_t then_pc = p.write_pc;
        if (j.write && same_statement_of_warp(j.thread, c.writer, j.pc, then_pc, j.size)) {
            if (j.s.waiting.block == nullptr) {
                j.s.waiting = SameStatementStore{j.b, j.off, j.size, {}, j.thread, c.writer, j.pc};
                std::memcpy(j.s.waiting.before, static_cast<const char*>(j.b->smem) + j.off, j.size);
            }
        } else {
            j.reported = true;
            report_hazard(j.b, j.write ? "write" : "read", j.thread, j.pc, "write", c.writer, then_pc);
        }
    }
    if (j.write) {
        if (c.read_epoch == j.epoch && !j.reported && !readers_ordered(c, j.thread, j.sync)) {
            j.reported = true;
            report_hazard(j.b, "write", j.thread, j.pc, "read", c.reader, p.read_pc);
        }
        c.write_epoch = j.epoch;
        c.writer = (uint16_t)j.thread;
        c.write_sync = (uint16_t)j.sync;
        p.write_pc = j.pc;
    } else {
        record_read(c, p, j.epoch, j.thread, j.sync, j.pc);
    }
}

// Word ``w`` (whole) gets a cell per byte, each a copy of the word's: a part of it is accessed.
void split_word(RaceState& s, uintptr_t w) {
    for (int i = 0; i < 4; ++i) {
        s.cells[w * 4 + i] = s.words[w];
        s.pcs[w * 4 + i] = s.word_pcs[w];
    }
    s.split[w] = 1;
}

// Word ``w`` (split) is whole again if its bytes' cells and pcs are all equal: each byte would be
// judged as the first, so one cell judges the four as they would be judged (the first byte's pcs
// name a finding, as before).
void join_word(RaceState& s, uintptr_t w) {
    const Cell* c = &s.cells[w * 4];
    const CellPcs* p = &s.pcs[w * 4];
    if (std::memcmp(c + 1, c, 3 * sizeof(Cell)) != 0 || std::memcmp(p + 1, p, 3 * sizeof(CellPcs)) != 0) return;
    s.words[w] = c[0];
    s.word_pcs[w] = p[0];
    s.split[w] = 0;
}

// An aligned 4-byte access of a whole word that finds no hazard and leaves no store waiting (most
// accesses judge() sees): recorded as judge_cell() records it, without the general loop. False,
// recording nothing, where judge_cell() has more to decide.
inline bool quiet_word_access(RaceState& s, uintptr_t off, bool write, uintptr_t pc, uint32_t thread, uint32_t sync) {
    const uintptr_t w = off >> 2;
    const uint32_t epoch = s.epoch;
    Cell& c = s.words[w];
    if (c.write_epoch == epoch && !ordered(thread, sync, c.writer, c.write_sync)) return false;
    if (!write) {
        record_read(c, s.word_pcs[w], epoch, thread, sync, pc);
        note_read_hint(s, w, epoch);
        return true;
    }
    if (c.read_epoch == epoch && !readers_ordered(c, thread, sync)) return false;
    c.write_epoch = epoch;
    c.writer = (uint16_t)thread;
    c.write_sync = (uint16_t)sync;
    s.word_pcs[w].write_pc = pc;
    s.hints[w].epoch = 0;
    return true;
}

// A read of an aligned 4-byte whole word that judge() would find no hazard in and record at once,
// without its call: one the word's hint covers (read_known), or the first read of the word in the
// epoch, which no write of the epoch precedes (a tree reduction's reads, each word read by one
// thread). A single reader sets no hint (note_read_hint), so there is none to note. False,
// recording nothing, where judge() is needed.
inline __attribute__((always_inline)) bool quiet_read(RaceState& s, const RunState& run, const Block* b,
                                                      uintptr_t off, size_t size, uintptr_t pc) {
    if (size != 4 || (off & 3u) != 0) return read_known(s, run, off, size);
    if (s.waiting.block != nullptr) return false;
    const uintptr_t w = off >> 2;
    const uint32_t epoch = s.epoch;
    const ReadHint& h = s.hints[w];
    if (h.epoch == epoch) {
        uint32_t warp = ~0u;
        uint16_t sync = 0;
        return hint_allows(s, run, h, warp, sync);
    }
    Cell& c = s.words[w];
    if (c.read_epoch == epoch || c.write_epoch == epoch || s.split[w] != 0 || !b->launch->checked) return false;
    const uint32_t thread = (uint32_t)run.fiber->linear;
    c.read_epoch = epoch;
    c.reader = (uint16_t)thread;
    c.read_sync = s.warp_syncs[(thread >> 5) & 31u];
    s.word_pcs[w].read_pc = pc;
    return true;
}

// A write of an aligned 4-byte whole word that quiet_word_access() records at once (most writes):
// judge()'s first steps without its call. False, recording nothing, where judge() is needed.
inline __attribute__((always_inline)) bool quiet_write(RaceState& s, const RunState& run, const Block* b, uintptr_t off, uintptr_t pc) {
    if (!b->launch->checked || s.waiting.block != nullptr || (off & 3u) != 0 || s.split[off >> 2] != 0)
        return false;
    const uint32_t thread = (uint32_t)run.fiber->linear;
    return quiet_word_access(s, off, true, pc, thread, s.warp_syncs[(thread >> 5) & 31u]);
}

// An access to the running block's shared memory: judged and recorded, a whole word at a time
// where it covers one that is whole, byte by byte elsewhere (see RaceState).
__attribute__((noinline)) void judge(RunState& run, Block* b, uintptr_t off, size_t size, bool write,
                                     uintptr_t pc) {
    if (!b->launch->checked) return;
    if (off + size > kArenaBytes) size = kArenaBytes - off;
    RaceState& s = state_of(b->worker);
    const uint32_t thread = (uint32_t)run.fiber->linear;
    Judging j{s, b, off, size, write, pc, s.epoch, thread, s.warp_syncs[(thread >> 5) & 31u], false};
    settle(s);
    if (size == 0) return;
    const bool one_whole_word = size == 4 && (off & 3u) == 0 && s.split[off >> 2] == 0;
    if (one_whole_word && quiet_word_access(s, off, write, pc, j.thread, j.sync)) return;
    const uintptr_t end = off + size;
    for (uintptr_t w = off >> 2, last = (end - 1) >> 2; w <= last; ++w) {
        const uintptr_t lo = off > w * 4 ? off : w * 4, hi = end < w * 4 + 4 ? end : w * 4 + 4;
        if (s.split[w] == 0) {
            if (hi - lo == 4) {
                judge_cell(j, s.words[w], s.word_pcs[w]);
            } else {
                split_word(s, w);
            }
        }
        if (s.split[w] != 0) {
            for (uintptr_t i = lo; i < hi; ++i) judge_cell(j, s.cells[i], s.pcs[i]);
            if (hi - lo == 4) join_word(s, w);
        }
        if (write)
            s.hints[w].epoch = 0;
        else
            note_read_hint(s, w, s.epoch);
    }
}

// Every instrumented access comes here: one compare sends all but shared memory away.
inline __attribute__((always_inline)) void access(uintptr_t addr, size_t size, bool write, uintptr_t pc) {
    RunState& run = run_state();
    Block* b = run.block;
    if (b == nullptr) return;
    const uintptr_t off = addr - reinterpret_cast<uintptr_t>(b->smem);  // no arena: off is huge
    if (off >= kArenaBytes || !run.in_kernel) return;
    if (b->worker != nullptr && b->worker->race_state != nullptr) {
        auto& s = *static_cast<RaceState*>(b->worker->race_state);
        if (write ? size == 4 && quiet_write(s, run, b, off, pc) : quiet_read(s, run, b, off, size, pc)) return;
    }
    judge(run, b, off, size, write, pc);
}

// An atomic that acquires (a lock, cuda::barrier, a flag): a new epoch, see the file's comment.
inline void on_atomic(int mo) {
    if (mo == __ATOMIC_RELAXED || mo == __ATOMIC_RELEASE) return;
    RunState& run = run_state();
    if (run.in_kernel && run.block != nullptr && run.block->worker != nullptr) new_epoch(run.block->worker);
}

}  // namespace

void new_epoch(Worker* wk) {
    RaceState& s = state_of(wk);
    settle(s);
    if (++s.epoch == 0) {  // after 2^32 epochs: forget them all rather than mistake an old one for now
        std::memset(s.words, 0, sizeof s.words);
        std::memset(s.split, 0, sizeof s.split);
        std::memset(s.cells, 0, sizeof s.cells);
        std::memset(s.hints, 0, sizeof s.hints);
        s.epoch = 1;
    }
}

void warp_synced(Worker* wk, int warp) {
    RaceState& s = state_of(wk);
    settle(s);
    if (++s.warp_syncs[warp & 31] == 0) {  // the 16-bit count wrapped: a new epoch orders what came before
        new_epoch(wk);
        std::memset(s.warp_syncs, 0, sizeof s.warp_syncs);
    }
}

void block_started(Worker* wk) {
    RaceState& s = state_of(wk);
    s.waiting.block = nullptr;  // judged when its block ended (block_finished)
    ++s.epoch;
    std::memset(s.warp_syncs, 0, sizeof s.warp_syncs);
}

void block_finished(Worker* wk) { settle(state_of(wk)); }

void block_loop_epoch() {
    RunState& run = run_state();
    if (run.block != nullptr && run.block->worker != nullptr) new_epoch(run.block->worker);
}

// SIMULATOR_LAUNCH_LOG=1: how often a region judged in bulk (block_loops_bulk.h) ran unjudged and
// judged, printed as the program ends where any did (a count only that log asks for: nothing else
// pays for it).
bool g_bulk_counting SIM_API = false;
namespace {
std::atomic<unsigned long long> g_bulk_runs[2];  // [clean]
}  // namespace
void bulk_counted(bool clean) { g_bulk_runs[clean ? 1 : 0].fetch_add(1, std::memory_order_relaxed); }

namespace {
// As ThreadSanitizer's exitcode: a run that reported a hazard ends with status 66.
void exit_status_on_report() {
    if (g_bulk_counting && g_bulk_runs[0].load() + g_bulk_runs[1].load() != 0) {
        std::fprintf(stderr, "launch log (racecheck): regions judged in bulk ran %llu time(s) unjudged, %llu judged\n",
                     g_bulk_runs[1].load(), g_bulk_runs[0].load());
        std::fflush(stderr);
    }
    if (!g_any_report.load()) return;
    std::fflush(nullptr);
    _exit(66);
}
__attribute__((constructor)) void register_exit_status() {
    const char* log = std::getenv("SIMULATOR_LAUNCH_LOG");
    g_bulk_counting = log != nullptr && std::strcmp(log, "1") == 0;
    std::atexit(exit_status_on_report);
}
}  // namespace

}  // namespace __sim

// ---- the -fsanitize=thread instrumentation's entry points ---------------------------------------
#define SIM_PC reinterpret_cast<uintptr_t>(__builtin_return_address(0))
extern "C" {
SIM_API void __tsan_init() {}
SIM_API void __tsan_func_entry(void*) {}
SIM_API void __tsan_func_exit() {}
SIM_API void __tsan_vptr_update(void**, void*) {}
SIM_API void __tsan_vptr_read(void**) {}
SIM_API void __tsan_read_range(void* a, unsigned long n) { __sim::access((uintptr_t)a, n, false, SIM_PC); }
SIM_API void __tsan_write_range(void* a, unsigned long n) { __sim::access((uintptr_t)a, n, true, SIM_PC); }
// clang's instrumentation of memcpy/memmove/memset (g++ leaves those calls as they are).
SIM_API void* __tsan_memcpy(void* d, const void* s, unsigned long n) {
    __sim::access((uintptr_t)s, n, false, SIM_PC);
    __sim::access((uintptr_t)d, n, true, SIM_PC);
    return std::memcpy(d, s, n);
}
SIM_API void* __tsan_memmove(void* d, const void* s, unsigned long n) {
    __sim::access((uintptr_t)s, n, false, SIM_PC);
    __sim::access((uintptr_t)d, n, true, SIM_PC);
    return std::memmove(d, s, n);
}
SIM_API void* __tsan_memset(void* d, int c, unsigned long n) {
    __sim::access((uintptr_t)d, n, true, SIM_PC);
    return std::memset(d, c, n);
}

#define SIM_RW(N)                                                                                           \
    SIM_API void __tsan_read##N(void* a) { __sim::access((uintptr_t)a, N, false, SIM_PC); }                   \
    SIM_API void __tsan_write##N(void* a) { __sim::access((uintptr_t)a, N, true, SIM_PC); }                   \
    SIM_API void __tsan_unaligned_read##N(void* a) { __sim::access((uintptr_t)a, N, false, SIM_PC); }         \
    SIM_API void __tsan_unaligned_write##N(void* a) { __sim::access((uintptr_t)a, N, true, SIM_PC); }         \
    SIM_API void __tsan_volatile_read##N(void* a) { __sim::access((uintptr_t)a, N, false, SIM_PC); }          \
    SIM_API void __tsan_volatile_write##N(void* a) { __sim::access((uintptr_t)a, N, true, SIM_PC); }          \
    SIM_API void __tsan_read##N##_pc(void* a, void* pc) { __sim::access((uintptr_t)a, N, false, (uintptr_t)pc); } \
    SIM_API void __tsan_write##N##_pc(void* a, void* pc) { __sim::access((uintptr_t)a, N, true, (uintptr_t)pc); }
SIM_RW(1)
SIM_RW(2)
SIM_RW(4)
SIM_RW(8)
SIM_RW(16)

// Atomics are performed as asked and are not judged (an atomic never races with an atomic).
#define SIM_ATOMICS(N, T)                                                                                     \
    SIM_API T __tsan_atomic##N##_load(const volatile T* a, int mo) {                                          \
        __sim::on_atomic(mo);                                                                                   \
        return __atomic_load_n(a, __ATOMIC_SEQ_CST);                                                          \
    }                                                                                                         \
    SIM_API void __tsan_atomic##N##_store(volatile T* a, T v, int) { __atomic_store_n(a, v, __ATOMIC_SEQ_CST); } \
    SIM_API T __tsan_atomic##N##_exchange(volatile T* a, T v, int mo) {                                       \
        __sim::on_atomic(mo);                                                                                   \
        return __atomic_exchange_n(a, v, __ATOMIC_SEQ_CST);                                                   \
    }                                                                                                         \
    SIM_ATOMIC_RMW(N, T, fetch_add)                                                                           \
    SIM_ATOMIC_RMW(N, T, fetch_sub)                                                                           \
    SIM_ATOMIC_RMW(N, T, fetch_and)                                                                           \
    SIM_ATOMIC_RMW(N, T, fetch_or)                                                                            \
    SIM_ATOMIC_RMW(N, T, fetch_xor)                                                                           \
    SIM_ATOMIC_RMW(N, T, fetch_nand)                                                                          \
    SIM_API int __tsan_atomic##N##_compare_exchange_strong(volatile T* a, T* c, T v, int mo, int) {           \
        __sim::on_atomic(mo);                                                                                   \
        return __atomic_compare_exchange_n(a, c, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);               \
    }                                                                                                         \
    SIM_API int __tsan_atomic##N##_compare_exchange_weak(volatile T* a, T* c, T v, int mo, int fmo) {         \
        return __tsan_atomic##N##_compare_exchange_strong(a, c, v, mo, fmo); /* never fails spuriously */     \
    }                                                                                                         \
    SIM_API T __tsan_atomic##N##_compare_exchange_val(volatile T* a, T c, T v, int mo, int) {                 \
        __sim::on_atomic(mo);                                                                                   \
        __atomic_compare_exchange_n(a, &c, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);                     \
        return c;                                                                                             \
    }
#define SIM_ATOMIC_RMW(N, T, OP)                                                                              \
    SIM_API T __tsan_atomic##N##_##OP(volatile T* a, T v, int mo) {                                           \
        __sim::on_atomic(mo);                                                                                   \
        return __atomic_##OP(a, v, __ATOMIC_SEQ_CST);                                                         \
    }
SIM_ATOMICS(8, unsigned char)
SIM_ATOMICS(16, unsigned short)
SIM_ATOMICS(32, unsigned int)
SIM_ATOMICS(64, unsigned long long)

SIM_API void __tsan_atomic_thread_fence(int mo) {
    __sim::on_atomic(mo);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}
SIM_API void __tsan_atomic_signal_fence(int) { __atomic_signal_fence(__ATOMIC_SEQ_CST); }
}  // extern "C"

#endif  // SIM_SHARED_RACES
