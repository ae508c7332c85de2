// Simulator stand-in for <cooperative_groups/scan.h>: cg::inclusive_scan and cg::exclusive_scan
// over a tile (1..1024 threads) or a coalesced group, with cg::plus (the default) or any operator of
// <cooperative_groups/reduce.h>, or any callable taking two values.
//
// A warp tile's scan runs log2(size) shfl_up steps (Hillis-Steele), a bigger tile's folds in rank
// order; a GPU may combine floating-point values in another order, so a float prefix sum can
// differ in its last bits.
#ifndef CUDA_SIM_COOPERATIVE_GROUPS_SCAN_H
#define CUDA_SIM_COOPERATIVE_GROUPS_SCAN_H

#include "reduce.h"

namespace cooperative_groups {
namespace details {

// Thread of rank r gets op(v_0, ..., v_r) of its group's values.
template <class Group, class T, class Op>
static inline T inclusive_scan_steps(const Group& g, T value, Op op, const char* file, int line) {
    const unsigned int rank = g.thread_rank();
    const unsigned int n = (unsigned int)g.num_threads();
    for (unsigned int offset = 1; offset < n; offset *= 2) {
        const T up = g.shfl_up(value, offset, file, line);
        if (rank >= offset) value = op(up, value);
    }
    return value;
}

// Thread of rank r gets op(v_0, ..., v_{r-1}); rank 0 gets T() here.
template <class Group, class T, class Op>
static inline T exclusive_scan_group(const Group& g, T value, Op op, const char* file, int line) {
    const T inclusive = details::inclusive_scan_steps(g, value, op, file, line);
    const T before = g.shfl_up(inclusive, 1, file, line);
    return g.thread_rank() == 0 ? T() : before;
}

}  // namespace details

namespace details {
// A tile of whole warps: thread of rank r folds the values of ranks 0..r-1 (exclusive) or 0..r.
template <unsigned int Size, class T, class Op>
static inline T big_tile_scan(T value, Op op, bool inclusive, const char* file, int line) {
    const unsigned int rank = block_rank() & (Size - 1u);
    const unsigned int end = inclusive ? rank + 1 : rank;
    return tile_exchange(
        Size, value,
        [&op, end](const unsigned long long* slots) {
            if (end == 0) return T();
            T acc = slot_value<T>(&slots[0]);
            for (unsigned int r = 1; r < end; ++r) acc = op(acc, slot_value<T>(&slots[r]));
            return acc;
        },
        file, line);
}
}  // namespace details

template <unsigned int Size, class ParentT, class T, class Op>
static inline T inclusive_scan(const thread_block_tile<Size, ParentT>& tile, T value, Op op,
                               const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    if constexpr (Size > 32) {
        return details::big_tile_scan<Size>(value, op, true, file, line);
    } else {
        return details::inclusive_scan_steps(tile, value, op, file, line);
    }
}
template <unsigned int Size, class ParentT, class T>
static inline T inclusive_scan(const thread_block_tile<Size, ParentT>& tile, T value,
                               const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    return inclusive_scan(tile, value, plus<T>(), file, line);
}
template <class T, class Op>
static inline T inclusive_scan(const coalesced_group& g, T value, Op op, const char* file = __builtin_FILE(),
                               int line = __builtin_LINE()) {
    return details::inclusive_scan_steps(g, value, op, file, line);
}
template <class T>
static inline T inclusive_scan(const coalesced_group& g, T value, const char* file = __builtin_FILE(),
                               int line = __builtin_LINE()) {
    return details::inclusive_scan_steps(g, value, plus<T>(), file, line);
}

template <unsigned int Size, class ParentT, class T, class Op>
static inline T exclusive_scan(const thread_block_tile<Size, ParentT>& tile, T value, Op op,
                               const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    if constexpr (Size > 32) {
        return details::big_tile_scan<Size>(value, op, false, file, line);
    } else {
        return details::exclusive_scan_group(tile, value, op, file, line);
    }
}
template <unsigned int Size, class ParentT, class T>
static inline T exclusive_scan(const thread_block_tile<Size, ParentT>& tile, T value,
                               const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    return exclusive_scan(tile, value, plus<T>(), file, line);
}
template <class T, class Op>
static inline T exclusive_scan(const coalesced_group& g, T value, Op op, const char* file = __builtin_FILE(),
                               int line = __builtin_LINE()) {
    return details::exclusive_scan_group(g, value, op, file, line);
}
template <class T>
static inline T exclusive_scan(const coalesced_group& g, T value, const char* file = __builtin_FILE(),
                               int line = __builtin_LINE()) {
    return details::exclusive_scan_group(g, value, plus<T>(), file, line);
}

}  // namespace cooperative_groups

#endif  // CUDA_SIM_COOPERATIVE_GROUPS_SCAN_H
