// Warp shuffles and votes in a block-loop kernel (simulator/block_loops_warps.py). The rewritten
// body runs such a call as two rounds of the block's thread loop: in the first every thread's call
// puts its operand in the worker's exchange, one entry per thread of the block; in the second each
// thread's call reads its result from its warp's entries, as complete_warp (device_api.cpp)
// computes it for fibers, from the operands of the first round (the second evaluates the
// arguments again, but what they then read may have been written by an earlier thread's round).
#include "sim_internal.h"

namespace __sim {

void warp_loop_round(int round) {
    Block* b = tl_run.block;
    if (round == 1) {
        Worker* wk = tl_run.worker;
        if (wk->warp_exchange.size() < (size_t)b->nthreads) wk->warp_exchange.resize((size_t)b->nthreads);
        ++b->exchange_gen;
    }
    b->warp_round = round;
}

unsigned long long exchange_op(Block* b, int linear, int kind, unsigned int mask, unsigned long long value, int param,
                               int width) {
    WarpOperand* lanes = tl_run.worker->warp_exchange.data() + (linear & ~31);
    const int l = linear & 31;
    if (b->warp_round == 1) {
        lanes[l] = WarpOperand{value, b->exchange_gen, kind, mask, param, width};
        return 0;  // the first round's statement is the call alone: its result is not used
    }
    const WarpOperand& me = lanes[l];
    const int n = std::min(32, b->nthreads - (linear & ~31));
    // The lanes that put an operand in this exchange: every thread of the block reaches it (the
    // front end shows that), the warp's wait at a full mask.
    unsigned int waiting = 0;
    unsigned long long ballot = 0;
    for (int i = 0; i < n; ++i) {
        if (lanes[i].gen != b->exchange_gen) continue;
        waiting |= 1u << i;
        ballot |= (lanes[i].value != 0 ? 1ull : 0ull) << i;
    }
    waiting &= me.mask;
    ballot &= waiting;
    if (me.kind <= kShflXor) {
        const int src = shuffle_source(me.kind, l, me.param, me.width);
        return (src < n && ((waiting >> src) & 1u)) ? lanes[src].value : me.value;
    }
    if (me.kind == kBallot) return ballot & me.mask;
    if (me.kind == kAny) return (ballot & me.mask) != 0 ? 1 : 0;
    return (ballot & me.mask) == (waiting & me.mask) ? 1 : 0;  // kAll: the front end passes no other kind
}

}  // namespace __sim
