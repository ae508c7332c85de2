// Simulator stand-in for <cooperative_groups.h>: thread blocks, tiles of a block of 1..32
// threads (power of two), coalesced groups and the grid's ranks, built on the runtime's
// barriers and warp operations. A tile's sync and shuffles are __syncwarp/__shfl_*_sync with
// the mask of the tile's lanes, so synccheck and racecheck treat them like those calls; call
// sites (for synccheck and deadlock reports) are the caller's file and line.
//
// Not provided: grid.sync() (needs a cooperative launch, which the simulator does not do) and
// multi-grid groups; tiles larger than a warp.
#ifndef CUDA_SIM_COOPERATIVE_GROUPS_H
#define CUDA_SIM_COOPERATIVE_GROUPS_H

#include "../cuda_sim.h"

namespace cooperative_groups {

namespace details {

// Linear index of the calling thread in its block (x fastest, as on a GPU).
static inline unsigned int block_rank() {
    const ::sim::ThreadState& t = *::sim::tl_thread;
    return t.thread_idx.x + t.block_dim.x * (t.thread_idx.y + t.block_dim.y * t.thread_idx.z);
}

static inline unsigned int block_threads() {
    const ::sim::ThreadState& t = *::sim::tl_thread;
    return t.block_dim.x * t.block_dim.y * t.block_dim.z;
}

// The lanes of the calling thread's tile of ``size`` threads (size a power of two, <= 32).
static inline unsigned int tile_mask(unsigned int size) {
    const unsigned int lane = block_rank() & 31u;
    if (size >= 32) return 0xffffffffu;
    const unsigned int base = lane & ~(size - 1u);
    return ((1u << size) - 1u) << base;
}

static inline bool valid_tile_size(unsigned int size) { return size >= 1 && size <= 32 && (size & (size - 1)) == 0; }

template <class T>
struct dependent_false : std::false_type {};

}  // namespace details

// ---- the block ----------------------------------------------------------------------------
class thread_block {
public:
    void sync(const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
        ::sim::syncthreads(file, line);
    }
    unsigned int thread_rank() const { return details::block_rank(); }
    unsigned int size() const { return details::block_threads(); }
    unsigned int num_threads() const { return details::block_threads(); }
    dim3 group_index() const { return dim3(::sim::tl_thread->block_idx); }
    dim3 thread_index() const { return dim3(::sim::tl_thread->thread_idx); }
    dim3 group_dim() const { return ::sim::tl_thread->block_dim; }
    dim3 dim_threads() const { return ::sim::tl_thread->block_dim; }
};

static inline thread_block this_thread_block() { return thread_block(); }

// ---- the grid (ranks only) ------------------------------------------------------------------
class grid_group {
public:
    unsigned long long thread_rank() const {
        const ::sim::ThreadState& t = *::sim::tl_thread;
        const unsigned long long block =
            t.block_idx.x + (unsigned long long)t.grid_dim.x * (t.block_idx.y + (unsigned long long)t.grid_dim.y * t.block_idx.z);
        return block * details::block_threads() + details::block_rank();
    }
    unsigned long long size() const { return num_threads(); }
    unsigned long long num_threads() const {
        const ::sim::ThreadState& t = *::sim::tl_thread;
        return (unsigned long long)t.grid_dim.x * t.grid_dim.y * t.grid_dim.z * details::block_threads();
    }
    unsigned long long num_blocks() const {
        const ::sim::ThreadState& t = *::sim::tl_thread;
        return (unsigned long long)t.grid_dim.x * t.grid_dim.y * t.grid_dim.z;
    }
    dim3 group_dim() const { return ::sim::tl_thread->grid_dim; }
    dim3 dim_blocks() const { return ::sim::tl_thread->grid_dim; }
    dim3 block_index() const { return dim3(::sim::tl_thread->block_idx); }
    bool is_valid() const { return true; }
    template <class T = void>
    void sync() const {
        static_assert(details::dependent_false<T>::value,
                      "grid_group::sync() is not provided by the simulator (it needs a cooperative launch)");
    }
};

static inline grid_group this_grid() { return grid_group(); }

// ---- tiles of a warp ----------------------------------------------------------------------
// A tile whose size is known only at run time (cg::tiled_partition(parent, n)).
class thread_group {
public:
    explicit thread_group(unsigned int size) : size_(size) {
        if (!details::valid_tile_size(size)) {
            std::fprintf(stderr,
                         "simulator: cooperative_groups::tiled_partition(parent, %u): the simulator provides tiles "
                         "of 1, 2, 4, 8, 16 or 32 threads\n",
                         size);
            std::abort();
        }
    }
    unsigned int thread_rank() const { return details::block_rank() & (size_ - 1u); }
    unsigned int size() const { return size_; }
    unsigned int num_threads() const { return size_; }
    unsigned int meta_group_rank() const { return details::block_rank() / size_; }
    unsigned int meta_group_size() const { return (details::block_threads() + size_ - 1u) / size_; }
    void sync(const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
        (void)::sim::warp_op(::sim::kSyncWarp, details::tile_mask(size_), 0, 0, 32, file, line);
    }

protected:
    unsigned int size_;
};

template <unsigned int Size, class ParentT = void>
class thread_block_tile {
    static_assert(Size >= 1 && Size <= 32 && (Size & (Size - 1)) == 0,
                  "the simulator provides thread_block_tile sizes 1, 2, 4, 8, 16 and 32");

public:
    thread_block_tile() = default;
    template <class P>
    thread_block_tile(const thread_block_tile<Size, P>&) {}
    operator thread_group() const { return thread_group(Size); }

    static constexpr unsigned int num_threads() { return Size; }
    static constexpr unsigned int size() { return Size; }
    unsigned int thread_rank() const { return details::block_rank() & (Size - 1u); }
    unsigned int meta_group_rank() const { return details::block_rank() / Size; }
    unsigned int meta_group_size() const { return (details::block_threads() + Size - 1u) / Size; }
    void sync(const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
        (void)::sim::warp_op(::sim::kSyncWarp, mask(), 0, 0, 32, file, line);
    }
    template <class T>
    T shfl(T value, int src_rank, const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
        return ::sim::shfl(::sim::kShflIdx, file, line, mask(), value, src_rank, (int)Size);
    }
    template <class T>
    T shfl_down(T value, unsigned int delta, const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
        return ::sim::shfl(::sim::kShflDown, file, line, mask(), value, (int)delta, (int)Size);
    }
    template <class T>
    T shfl_up(T value, unsigned int delta, const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
        return ::sim::shfl(::sim::kShflUp, file, line, mask(), value, (int)delta, (int)Size);
    }
    template <class T>
    T shfl_xor(T value, unsigned int lane_mask, const char* file = __builtin_FILE(),
               int line = __builtin_LINE()) const {
        return ::sim::shfl(::sim::kShflXor, file, line, mask(), value, (int)lane_mask, (int)Size);
    }
    int any(int predicate, const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
        return (int)::sim::warp_op(::sim::kAny, mask(), predicate ? 1 : 0, 0, 32, file, line);
    }
    int all(int predicate, const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
        return (int)::sim::warp_op(::sim::kAll, mask(), predicate ? 1 : 0, 0, 32, file, line);
    }
    // Bit i is set when the tile's thread of rank i passed a true predicate.
    unsigned int ballot(int predicate, const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
        const unsigned int m = mask();
        const unsigned int bits = (unsigned int)::sim::warp_op(::sim::kBallot, m, predicate ? 1 : 0, 0, 32, file, line);
        return bits >> __builtin_ctz(m);
    }

private:
    static unsigned int mask() { return details::tile_mask(Size); }
};

template <unsigned int Size, class ParentT>
static inline thread_block_tile<Size, ParentT> tiled_partition(const ParentT&) {
    return thread_block_tile<Size, ParentT>();
}

static inline thread_group tiled_partition(const thread_block&, unsigned int size) { return thread_group(size); }
static inline thread_group tiled_partition(const thread_group&, unsigned int size) { return thread_group(size); }

// ---- the threads of a warp that are active together ------------------------------------------
class coalesced_group {
public:
    coalesced_group() : mask_(::sim::active_mask()) {}
    unsigned int size() const { return (unsigned int)__builtin_popcount(mask_); }
    unsigned int num_threads() const { return size(); }
    unsigned int thread_rank() const {
        const unsigned int lane = details::block_rank() & 31u;
        return (unsigned int)__builtin_popcount(mask_ & ((1u << lane) - 1u));
    }
    void sync(const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
        (void)::sim::warp_op(::sim::kSyncWarp, mask_, 0, 0, 32, file, line);
    }
    // The value of the group's thread of rank ``src_rank``.
    template <class T>
    T shfl(T value, int src_rank, const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
        unsigned int m = mask_;
        const int n = (int)size();
        int want = n > 0 ? ((src_rank % n) + n) % n : 0;
        int lane = 0;
        for (; m != 0; m &= m - 1) {
            lane = __builtin_ctz(m);
            if (want-- == 0) break;
        }
        return ::sim::shfl(::sim::kShflIdx, file, line, mask_, value, lane, 32);
    }
    int any(int predicate, const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
        return (int)::sim::warp_op(::sim::kAny, mask_, predicate ? 1 : 0, 0, 32, file, line);
    }
    int all(int predicate, const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
        return (int)::sim::warp_op(::sim::kAll, mask_, predicate ? 1 : 0, 0, 32, file, line);
    }

private:
    unsigned int mask_;
};

static inline coalesced_group coalesced_threads() { return coalesced_group(); }

// cg::sync(group) for any group above.
template <class Group>
static inline void sync(const Group& g, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    g.sync(file, line);
}

}  // namespace cooperative_groups

#endif  // CUDA_SIM_COOPERATIVE_GROUPS_H
