// The warp-wide exchange behind nvcuda::wmma::mma_sync (include/mma.h). Each lane holds only its
// share of a fragment, as on a GPU; a multiply needs all of A and B, so the lanes put their
// shares in their warp's buffer and wait for each other there. The copies are made here, in the
// uninstrumented runtime: the buffer models the tensor core's operand path, not memory a program
// can touch, so racecheck must not see its writes (the lanes' reads follow a warp barrier).
#include "sim_internal.h"

#include <cstring>

namespace __sim {

// A warp's two buffers, used in turn: a lane can fill one for its next multiply while a slower
// lane still reads the other, and a lane reaches the turn after next only once every lane has
// arrived at the next one's barrier, that is, has finished reading this turn's buffer.
void init_wmma_buffers(Worker* wk, Block* b) {
    const size_t need = (size_t)b->nwarps * 2 * kWmmaBufferBytes / sizeof(unsigned long long);
    if (wk->wmma_buffers.size() < need) wk->wmma_buffers.resize(need);
}

const void* wmma_gather(const void* a_share, size_t a_bytes, const void* b_share, size_t b_bytes,
                        const char* file, int line) {
    const char* buf;
    {
        RuntimeCall in_runtime;
        require_device(in_runtime.run, "wmma::mma_sync", file, line);
        Block* b = in_runtime.run.block;
        Fiber* f = in_runtime.run.fiber;
        if (b->plain) refuse_wait(b, "wmma::mma_sync", file, line);
        if (b->warp_present[f->warp] != ~0u) {
            report("%s: wmma::mma_sync at %s:%d in %s: warp %d has %d threads; a warp matrix operation needs "
                   "all 32 lanes of the warp (make the block size a multiple of 32)",
                   mode_name(), file, line, where(b).c_str(), f->warp, __builtin_popcount(b->warp_present[f->warp]));
            fail_block(b);
            yield_to_scheduler(true);
        }
        char* mine = reinterpret_cast<char*>(in_runtime.run.worker->wmma_buffers.data()) +
                     ((size_t)f->warp * 2 + (f->wmma_turn++ & 1u)) * kWmmaBufferBytes;
        std::memcpy(mine + (size_t)f->lane * a_bytes, a_share, a_bytes);
        std::memcpy(mine + 32 * a_bytes + (size_t)f->lane * b_bytes, b_share, b_bytes);
        buf = mine;
    }
    (void)warp_op(kSyncWarp, ~0u, 0, 0, 32, file, line);
    return buf;
}

// Block loops (simulator/block_loops_wmma.py): the first buffer of each warp, which a round of the
// block's thread loop fills with every lane's shares and the next reads. A partial warp is
// reported as wmma_gather reports it, before any lane's multiply.
char* wmma_loop_buffer(const char* file, int line) {
    RuntimeCall in_runtime;
    require_device(in_runtime.run, "wmma::mma_sync", file, line);
    Block* b = in_runtime.run.block;
    const int last = b->nwarps - 1;
    if (b->warp_present[last] != ~0u) {
        report("%s: wmma::mma_sync at %s:%d in %s: warp %d has %d threads; a warp matrix operation needs "
               "all 32 lanes of the warp (make the block size a multiple of 32)",
               mode_name(), file, line, where(b).c_str(), last, __builtin_popcount(b->warp_present[last]));
        fail_block(b);
        yield_to_scheduler(true);
    }
    init_wmma_buffers(in_runtime.run.worker, b);  // a fiber block's are made before it starts; this one's here
    return reinterpret_cast<char*>(in_runtime.run.worker->wmma_buffers.data());
}

}  // namespace __sim
