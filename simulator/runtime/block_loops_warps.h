// Warp shuffles and votes of a block-loop kernel (simulator/block_loops_warps.py): each such call
// is two rounds of the block's thread loop. In each round's region the front end declares a local
// of the call's name (``__shfl_down_sync``), which the statement's unqualified call then names: an
// ExchangePut in the first round, whose call keeps the thread's operands in the worker's exchange
// (one WarpOperand per thread, warp_exchange.cpp) and returns a value nobody reads; an
// ExchangeTake in the second, whose call returns the thread's result, computed from its warp's
// entries as complete_warp (device_api.cpp) computes it for fibers. Every thread of the block
// reaches both rounds (the front end shows that), so each lane of a warp that exists took part.
// Their overloads are the intrinsics' (sim_intrinsics.h), so a call picks the same type.
#ifndef CUDA_CPU_SIMULATOR_BLOCK_LOOPS_WARPS_H
#define CUDA_CPU_SIMULATOR_BLOCK_LOOPS_WARPS_H

#include <cstring>

namespace __sim {

// The exchange as one round's local sees it: the block's entries and the running thread's index.
struct ExchangeRound {
    WarpOperand* operands;
    const PlainBlock& block;
    int linear() const { return *block.linear; }
};

// The first round's shuffle: the thread's operands kept.
template <int Kind>
struct ExchangePut : ExchangeRound {
    template <class T>
    T put(unsigned int mask, T var, int param, int width) const {
        unsigned long long bits = 0;
        std::memcpy(&bits, &var, sizeof(T));
        operands[linear()] = WarpOperand{bits, mask, param, width};
        return var;
    }
#define SIM_EXCHANGE_PUT(T) \
    T operator()(unsigned int mask, T var, int param, int width = 32) const { return put(mask, var, param, width); }
    SIM_EXCHANGE_PUT(int)
    SIM_EXCHANGE_PUT(unsigned int)
    SIM_EXCHANGE_PUT(long)
    SIM_EXCHANGE_PUT(unsigned long)
    SIM_EXCHANGE_PUT(long long)
    SIM_EXCHANGE_PUT(unsigned long long)
    SIM_EXCHANGE_PUT(float)
    SIM_EXCHANGE_PUT(double)
#undef SIM_EXCHANGE_PUT
};

// The first round's vote: the predicate kept as a ballot's bit.
template <int Kind>
struct ExchangeVotePut : ExchangeRound {
    int operator()(unsigned int mask, int pred) const {
        operands[linear()] = WarpOperand{pred ? 1ull : 0ull, mask, 0, 32};
        return 0;
    }
};

// The second round's result bits for the running thread, from its warp's operands.
template <int Kind>
inline unsigned long long exchange_result(const ExchangeRound& x) {
    const int linear = x.linear();
    const int first = linear & ~31;
    const WarpOperand* lanes = x.operands + first;
    const int l = linear & 31;
    const int nthreads = (int)(x.block.dim.x * x.block.dim.y * x.block.dim.z);
    const int n = nthreads - first < 32 ? nthreads - first : 32;
    const WarpOperand& me = lanes[l];
    if constexpr (Kind <= kShflXor) {
        const int src = shuffle_source(Kind, l, me.param, me.width);
        return (src < n && ((me.mask >> src) & 1u)) ? lanes[src].value : me.value;
    } else {
        unsigned long long ballot = 0;
        unsigned int waiting = 0;
        for (int i = 0; i < n; ++i) {
            if (!((me.mask >> i) & 1u)) continue;
            waiting |= 1u << i;
            ballot |= (lanes[i].value != 0 ? 1ull : 0ull) << i;
        }
        if constexpr (Kind == kBallot) return ballot;
        if constexpr (Kind == kAny) return ballot != 0 ? 1 : 0;
        return ballot == waiting ? 1 : 0;
    }
}

// The second round's shuffle: the thread's result, its arguments evaluated again and unused.
template <int Kind>
struct ExchangeTake : ExchangeRound {
    template <class T>
    T take() const {
        const unsigned long long bits = exchange_result<Kind>(*this);
        T out;
        std::memcpy(&out, &bits, sizeof(T));
        return out;
    }
#define SIM_EXCHANGE_TAKE(T) \
    T operator()(unsigned int, T, int, int = 32) const { return take<T>(); }
    SIM_EXCHANGE_TAKE(int)
    SIM_EXCHANGE_TAKE(unsigned int)
    SIM_EXCHANGE_TAKE(long)
    SIM_EXCHANGE_TAKE(unsigned long)
    SIM_EXCHANGE_TAKE(long long)
    SIM_EXCHANGE_TAKE(unsigned long long)
    SIM_EXCHANGE_TAKE(float)
    SIM_EXCHANGE_TAKE(double)
#undef SIM_EXCHANGE_TAKE
};

// The second round's vote: __ballot_sync's unsigned mask, __any_sync's and __all_sync's int.
template <int Kind>
struct ExchangeVote : ExchangeRound {
    auto operator()(unsigned int, int) const {
        if constexpr (Kind == kBallot) {
            return (unsigned int)exchange_result<Kind>(*this);
        } else {
            return (int)exchange_result<Kind>(*this);
        }
    }
};

}  // namespace __sim

#endif  // CUDA_CPU_SIMULATOR_BLOCK_LOOPS_WARPS_H
