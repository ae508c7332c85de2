// The storage of a block-loop kernel's warp exchanges (block_loops_warps.h,
// simulator/block_loops_warps.py): one operand entry per thread of the block, kept by the worker
// between blocks. A worker runs one block at a time, and block-loop blocks never migrate.
#include "sim_internal.h"

#include <vector>

namespace __sim {

WarpOperand* warp_exchange_buffer(int threads) {
    thread_local std::vector<WarpOperand> operands;
    if (operands.size() < (size_t)threads) operands.resize((size_t)threads);
    return operands.data();
}

}  // namespace __sim
