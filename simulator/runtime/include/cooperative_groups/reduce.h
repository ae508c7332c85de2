// Simulator stand-in for <cooperative_groups/reduce.h>: cg::reduce over a tile (1..1024 threads) with
// cg::plus, cg::less (the minimum), cg::greater (the maximum), cg::bit_and, cg::bit_or,
// cg::bit_xor or any callable taking two values. Every thread of the tile gets the result.
//
// The values of a warp tile are combined by a butterfly of shfl_xor steps (tile size / 2, ..., 1),
// those of a bigger tile in rank order; a GPU may combine floating-point values in another order,
// so a float sum can differ in its last bits.
#ifndef CUDA_SIM_COOPERATIVE_GROUPS_REDUCE_H
#define CUDA_SIM_COOPERATIVE_GROUPS_REDUCE_H

#include "../cooperative_groups.h"

namespace cooperative_groups {

template <class T>
struct plus {
    T operator()(const T& a, const T& b) const { return a + b; }
};
template <class T>
struct less {
    T operator()(const T& a, const T& b) const { return (b < a) ? b : a; }
};
template <class T>
struct greater {
    T operator()(const T& a, const T& b) const { return (a < b) ? b : a; }
};
template <class T>
struct bit_and {
    T operator()(const T& a, const T& b) const { return a & b; }
};
template <class T>
struct bit_or {
    T operator()(const T& a, const T& b) const { return a | b; }
};
template <class T>
struct bit_xor {
    T operator()(const T& a, const T& b) const { return a ^ b; }
};

template <unsigned int Size, class ParentT, class T, class Op>
static inline T reduce(const thread_block_tile<Size, ParentT>& tile, T value, Op op,
                       const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    if constexpr (Size > 32) {
        // A tile of whole warps: every thread folds the tile's values in rank order.
        return details::tile_exchange(
            Size, value,
            [&op](const unsigned long long* slots) {
                T acc = details::slot_value<T>(&slots[0]);
                for (unsigned int r = 1; r < Size; ++r) acc = op(acc, details::slot_value<T>(&slots[r]));
                return acc;
            },
            file, line);
    } else {
        for (unsigned int offset = Size / 2; offset > 0; offset /= 2) {
            value = op(value, tile.shfl_xor(value, offset, file, line));
        }
        return value;
    }
}

// Over a coalesced group (any set of lanes): every thread folds the values in rank order.
template <class T, class Op>
static inline T reduce(const coalesced_group& g, T value, Op op, const char* file = __builtin_FILE(),
                       int line = __builtin_LINE()) {
    T acc = g.shfl(value, 0, file, line);
    for (unsigned int r = 1; r < g.size(); ++r) acc = op(acc, g.shfl(value, (int)r, file, line));
    return acc;
}

}  // namespace cooperative_groups

#endif  // CUDA_SIM_COOPERATIVE_GROUPS_REDUCE_H
