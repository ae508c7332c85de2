// sim-runtime: per mode
// Barriers of groups other than the block and the warp: cooperative groups' tiles of 64 to 1024
// threads (thread_block_tile<N>::sync() and the scratch their collectives use) and grid.sync()
// of a cooperative launch, and what a thread's exit releases of either. In synccheck mode both
// barriers also check that every live thread of the group reaches the same call site.
#include "sim_internal.h"

#include <algorithm>
#include <cstring>

namespace __sim {

// ---- tiles of 64..1024 threads ----------------------------------------------------------------
namespace {

int tile_size_index(unsigned int size) { return __builtin_ctz(size) - 6; }  // 64 -> 0, ..., 1024 -> 4

// The threads of the tile of ``size`` threads that starts at warp ``first`` and have not exited.
int tile_live(const Block* b, int first, unsigned int size) {
    int live = 0;
    for (int w = first; w < first + (int)(size / 32) && w < b->nwarps; ++w) {
        live += __builtin_popcount(b->warp_present[w] & ~b->warp_exited[w]);
    }
    return live;
}

void release_tile(Block* b, int first, unsigned int size) {
#if defined(SIM_SHARED_RACES)
    new_epoch(b->worker);  // the tile's threads only, but see shared_races.cpp
#endif
    b->tile_arrived[tile_size_index(size) * b->nwarps + first] = 0;
    const int end = std::min(b->nthreads, (first * 32) + (int)size);
    for (int i = first * 32; i < end; ++i) {
        Fiber& o = b->fibers[i];
        if (o.state == FState::kTile && (unsigned int)o.wparam == size) o.state = FState::kReady;
    }
}

}  // namespace

// The barrier of the calling thread's tile of ``size`` (64..1024) threads: releases when every
// thread of the tile that has not exited has arrived, like __syncthreads for the whole block.
void tile_sync(unsigned int size, const char* file, int line) {
    RuntimeCall in_runtime;
    require_device(in_runtime.run, "thread_block_tile::sync()", file, line);
    Block* b = in_runtime.run.block;
    Fiber* f = in_runtime.run.fiber;
    if (b->plain) refuse_wait(b, "thread_block_tile::sync()", file, line);
    const int first = (int)(((unsigned int)f->linear / size) * size / 32);
    int& arrived = b->tile_arrived[tile_size_index(size) * b->nwarps + first];
    b->tiles_used = true;
    if (sync_checked(b) && arrived > 0) {
        const int end = std::min(b->nthreads, first * 32 + (int)size);
        for (int i = first * 32; i < end; ++i) {
            const Fiber& o = b->fibers[i];
            if (o.state != FState::kTile || (unsigned int)o.wparam != size) continue;
            if (o.wline != line || std::strcmp(o.wfile, file) != 0) {
                report("synccheck: divergent thread_block_tile<%u>::sync() in %s: thread %s reached the tile "
                       "barrier at %s:%d while thread %s waits at the one at %s:%d; every live thread of a tile "
                       "must reach the same sync()",
                       size, where(b).c_str(), tid_str(*f).c_str(), file, line, tid_str(o).c_str(), o.wfile, o.wline);
                fail_block(b);
                yield_to_scheduler(true);
            }
            break;
        }
    }
#if defined(SIM_RACECHECK)
    __tsan_release(&arrived);
#endif
    f->wfile = file;
    f->wline = line;
    f->wparam = (int)size;
    ++arrived;
    if (arrived == tile_live(b, first, size) && !stopping(b)) {
        release_tile(b, first, size);
    } else {
        f->state = FState::kTile;
        yield_to_scheduler(false);
        if (b->failed) yield_to_scheduler(true);
    }
#if defined(SIM_RACECHECK)
    __tsan_acquire(&arrived);
#endif
}

unsigned long long* tile_scratch() {
    require_device(tl_run, "a collective of a thread_block_tile", "?", 0);
    Worker* wk = tl_run.worker;
    if (wk->tile_scratch.size() < 1024) wk->tile_scratch.resize(1024);  // a plain-loop block (then refused)
    return wk->tile_scratch.data();
}

// ---- grid.sync() ----------------------------------------------------------------------------
namespace {
// synccheck: a GPU's grid barrier waits for every block of the grid, so a block that has ended
// while other threads wait at (or later reach) grid.sync() hangs the launch there.
void report_block_left_grid(const Grid* g, const Block* gone, const char* file, int line) {
    report("synccheck: block (%u,%u,%u) of the cooperative launch of kernel '%s' (launched at %s:%d) ended while "
           "threads of other blocks wait at, or later reach, grid.sync() at %s:%d; on a GPU grid.sync() waits for "
           "every block of the grid, so the launch would hang there (the simulator waits only for live threads)",
           gone->idx.x, gone->idx.y, gone->idx.z, g->blocks[0].launch->name, g->blocks[0].launch->file,
           g->blocks[0].launch->line, file, line);
}
}  // namespace

void release_grid(Grid* g) {
    g->arrived = 0;
    g->gen++;
    for (unsigned long long k = 0; k < g->nblocks; ++k) {
        Block& b = g->blocks[k];
#if defined(SIM_SHARED_RACES)
        new_epoch(b.worker);
#endif
        for (int i = 0; i < b.nthreads; ++i) {
            if (b.fibers[i].state == FState::kGrid) b.fibers[i].state = FState::kReady;
        }
    }
}

bool grid_launch_cooperative() {
    const Block* b = tl_run.block;
    return b != nullptr && b->launch->grid != nullptr;
}

// Every live thread of every block of a cooperative launch meets here (the blocks are all
// resident, see run_cooperative). Outside a cooperative launch a GPU's behaviour is undefined:
// here the launch stops with a report.
void grid_sync(const char* file, int line) {
    RuntimeCall in_runtime;
    require_device(in_runtime.run, "cooperative_groups::grid_group::sync()", file, line);
    Block* b = in_runtime.run.block;
    Fiber* f = in_runtime.run.fiber;
    Grid* g = b->launch->grid;
    if (g == nullptr) {
        report("%s: grid.sync() at %s:%d in %s thread %s: the kernel was not launched cooperatively; grid-wide "
               "synchronisation needs cudaLaunchCooperativeKernel or cudaLaunchKernelEx with "
               "cudaLaunchAttributeCooperative (a GPU's behaviour is undefined here); the launch returns "
               "cudaErrorLaunchFailure",
               mode_name(), file, line, where(b).c_str(), tid_str(*f).c_str());
        stop_thread(b, f);
    }
    if (sync_checked(b) && g->exited != nullptr) {
        report_block_left_grid(g, g->exited, file, line);
        fail_block(b);
        yield_to_scheduler(true);
    }
    if (sync_checked(b) && g->arrived > 0 && (g->line != line || std::strcmp(g->file, file) != 0)) {
        report("synccheck: divergent grid.sync() in %s: thread %s reached the grid barrier at %s:%d while %lld "
               "thread(s) of the grid wait at the one at %s:%d (grid barrier %llu); every live thread of the grid "
               "must reach the same grid.sync()",
               where(b).c_str(), tid_str(*f).c_str(), file, line, g->arrived, g->file, g->line, g->gen + 1);
        fail_block(b);
        yield_to_scheduler(true);
    }
#if defined(SIM_RACECHECK)
    __tsan_release(g->tsan_sync[g->gen & 1]);
#endif
    if (g->arrived == 0) {
        g->file = file;
        g->line = line;
    }
    f->wfile = file;
    f->wline = line;
    const unsigned long long gen = g->gen;
    if (++g->arrived == g->live) {
        release_grid(g);
    } else {
        f->state = FState::kGrid;
        yield_to_scheduler(false);
        if (b->failed) yield_to_scheduler(true);
    }
#if defined(SIM_RACECHECK)
    __tsan_acquire(g->tsan_sync[gen & 1]);
#else
    (void)gen;
#endif
}

void release_after_exit(Block* b, Fiber* f) {
    if (b->tiles_used) {
        for (unsigned int size = 64; size <= 1024; size *= 2) {
            const int first = (int)(((unsigned int)f->linear / size) * size / 32);
            const int arrived = b->tile_arrived[tile_size_index(size) * b->nwarps + first];
            if (arrived > 0 && arrived == tile_live(b, first, size)) release_tile(b, first, size);
        }
    }
    if (Grid* g = b->launch->grid) {
        g->live--;
        if (sync_checked(b) && b->live == 0 && g->exited == nullptr) {
            g->exited = b;
            if (g->arrived > 0) {
                report_block_left_grid(g, b, g->file, g->line);
                fail_block(b);
                return;
            }
        }
        if (g->arrived > 0 && g->arrived == g->live) release_grid(g);
    }
}

}  // namespace __sim
