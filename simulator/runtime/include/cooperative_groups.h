// Simulator stand-in for <cooperative_groups.h>: thread blocks, tiles of a block (1..32
// threads, and 64..1024 threads: powers of two), coalesced groups and the grid, built on the
// runtime's barriers and warp operations. A warp tile's sync and shuffles are
// __syncwarp/__shfl_*_sync with the mask of the tile's lanes, so synccheck and racecheck treat
// them like those calls; a bigger tile's sync is a barrier of its own threads (tile_sync) and
// its shfl/any/all exchange values through per-block scratch between two such barriers. call
// sites (for synccheck and deadlock reports) are the caller's file and line. grid.sync() works
// in a cooperative launch (every block is resident, see run_cooperative in the runtime).
//
// Not provided: multi-grid groups and cluster groups.
#ifndef CUDA_SIM_COOPERATIVE_GROUPS_H
#define CUDA_SIM_COOPERATIVE_GROUPS_H

#include "../cuda_sim.h"

namespace cooperative_groups {

namespace details {

using ::__sim::block_rank;

static inline unsigned int block_threads() {
    const ::__sim::ThreadState& t = *::__sim::tl_thread;
    return t.block_dim.x * t.block_dim.y * t.block_dim.z;
}

// The lanes of the calling thread's tile of ``size`` threads (size a power of two, <= 32; a
// bigger tile covers whole warps).
static inline unsigned int tile_mask(unsigned int size) {
    const unsigned int lane = block_rank() & 31u;
    if (size >= 32) return 0xffffffffu;
    const unsigned int base = lane & ~(size - 1u);
    return ((1u << size) - 1u) << base;
}

static inline constexpr bool valid_tile_size(unsigned int size) {
    return size >= 1 && size <= 1024 && (size & (size - 1)) == 0;
}

// The barrier of a tile of ``size`` threads: a warp operation up to 32, else the tile's own barrier.
static inline void tile_barrier(unsigned int size, const char* file, int line) {
    if (size <= 32) {
        (void)::__sim::warp_op(::__sim::kSyncWarp, tile_mask(size), 0, 0, 32, file, line);
    } else {
        ::__sim::tile_sync(size, file, line);
    }
}

// Every thread of the calling thread's tile of ``size`` (> 32) threads gets the values the tile's
// threads passed, through per-block scratch between two tile barriers; ``read(first_slot)``
// computes the result from the slots of the tile (slot i: the tile's thread of rank i).
template <class T, class Read>
static inline auto tile_exchange(unsigned int size, T value, Read read, const char* file, int line) {
    static_assert(sizeof(T) <= 8, "collectives of tiles larger than 32 threads take values of at most 8 bytes");
    unsigned long long* slots = ::__sim::tile_scratch();
    const unsigned int rank = block_rank();
    std::memcpy(&slots[rank], &value, sizeof(T));
    ::__sim::tile_sync(size, file, line);
    auto out = read(&slots[rank & ~(size - 1u)]);
    ::__sim::tile_sync(size, file, line);  // nobody overwrites a slot before every thread has read it
    return out;
}

template <class T>
static inline T slot_value(const unsigned long long* slot) {
    T v;
    std::memcpy(&v, slot, sizeof(T));
    return v;
}

template <class T>
struct dependent_false : std::false_type {};

}  // namespace details

// ---- any group: the block, or a tile whose size is known only at run time ---------------------
class thread_group {
public:
    // A tile of ``size`` threads (cg::tiled_partition(parent, n)).
    explicit thread_group(unsigned int size) : size_(size), block_(false) {
        if (!details::valid_tile_size(size)) {
            std::fprintf(stderr,
                         "simulator: cooperative_groups::tiled_partition(parent, %u): tiles have 1, 2, 4, ..., "
                         "512 or 1024 threads (a power of two)\n",
                         size);
            std::abort();
        }
    }
    unsigned int thread_rank() const {
        return block_ ? details::block_rank() : details::block_rank() & (size_ - 1u);
    }
    unsigned int size() const { return block_ ? details::block_threads() : size_; }
    unsigned int num_threads() const { return size(); }
    unsigned int meta_group_rank() const { return block_ ? 0u : details::block_rank() / size_; }
    unsigned int meta_group_size() const {
        return block_ ? 1u : (details::block_threads() + size_ - 1u) / size_;
    }
    void sync(const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
        if (block_) {
            ::__sim::syncthreads(file, line);
        } else {
            details::tile_barrier(size_, file, line);
        }
    }

protected:
    struct block_tag {};
    explicit thread_group(block_tag) : size_(0), block_(true) {}
    unsigned int size_;
    bool block_;
};

// ---- the block ----------------------------------------------------------------------------
class thread_block : public thread_group {
public:
    thread_block() : thread_group(block_tag{}) {}
    void sync(const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
        ::__sim::syncthreads(file, line);
    }
    unsigned int thread_rank() const { return details::block_rank(); }
    unsigned int size() const { return details::block_threads(); }
    unsigned int num_threads() const { return details::block_threads(); }
    dim3 group_index() const { return dim3(::__sim::tl_thread->block_idx); }
    dim3 thread_index() const { return dim3(::__sim::tl_thread->thread_idx); }
    dim3 group_dim() const { return ::__sim::tl_thread->block_dim; }
    dim3 dim_threads() const { return ::__sim::tl_thread->block_dim; }
};

static inline thread_block this_thread_block() { return thread_block(); }

// Scratch memory through which a GPU's tiles larger than a warp communicate; here the runtime
// keeps that scratch per block, so this holds nothing.
template <unsigned int MaxBlockSize = 1024>
struct block_tile_memory {};
template <unsigned int MaxBlockSize>
static inline thread_block this_thread_block(block_tile_memory<MaxBlockSize>&) {
    return thread_block();
}

// ---- the grid ------------------------------------------------------------------------------
class grid_group {
public:
    unsigned long long thread_rank() const { return block_rank() * details::block_threads() + details::block_rank(); }
    unsigned long long size() const { return num_threads(); }
    unsigned long long num_threads() const {
        const ::__sim::ThreadState& t = *::__sim::tl_thread;
        return (unsigned long long)t.grid_dim.x * t.grid_dim.y * t.grid_dim.z * details::block_threads();
    }
    unsigned long long num_blocks() const {
        const ::__sim::ThreadState& t = *::__sim::tl_thread;
        return (unsigned long long)t.grid_dim.x * t.grid_dim.y * t.grid_dim.z;
    }
    unsigned long long block_rank() const {
        const ::__sim::ThreadState& t = *::__sim::tl_thread;
        return t.block_idx.x + (unsigned long long)t.grid_dim.x * (t.block_idx.y + (unsigned long long)t.grid_dim.y * t.block_idx.z);
    }
    dim3 group_dim() const { return ::__sim::tl_thread->grid_dim; }
    dim3 dim_blocks() const { return ::__sim::tl_thread->grid_dim; }
    dim3 block_index() const { return dim3(::__sim::tl_thread->block_idx); }
    // True in a cooperative launch (cudaLaunchCooperativeKernel), where sync() may be called.
    bool is_valid() const { return ::__sim::grid_launch_cooperative(); }
    // Every live thread of the grid meets here; outside a cooperative launch the launch fails
    // with a report (a GPU's behaviour is undefined there).
    void sync(const char* file = __builtin_FILE(), int line = __builtin_LINE()) const { ::__sim::grid_sync(file, line); }
};

static inline grid_group this_grid() { return grid_group(); }

// ---- tiles: 1..32 threads (within a warp) and 64..1024 threads (whole warps) -------------------
template <unsigned int Size, class ParentT = void>
class thread_block_tile {
    static_assert(details::valid_tile_size(Size),
                  "thread_block_tile sizes are powers of two from 1 to 1024");
    static constexpr bool kWarp = Size <= 32;

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
        details::tile_barrier(Size, file, line);
    }
    template <class T>
    T shfl(T value, int src_rank, const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
        if constexpr (kWarp) {
            return ::__sim::shfl_value(::__sim::kShflIdx, file, line, mask(), value, src_rank, (int)Size);
        } else {
            const unsigned int src = (unsigned int)src_rank & (Size - 1u);
            return details::tile_exchange(
                Size, value, [src](const unsigned long long* slots) { return details::slot_value<T>(&slots[src]); },
                file, line);
        }
    }
    template <class T>
    T shfl_down(T value, unsigned int delta, const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
        static_assert(kWarp, "thread_block_tile::shfl_down is for tiles of at most 32 threads (as in CUDA)");
        return ::__sim::shfl_value(::__sim::kShflDown, file, line, mask(), value, (int)delta, (int)Size);
    }
    template <class T>
    T shfl_up(T value, unsigned int delta, const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
        static_assert(kWarp, "thread_block_tile::shfl_up is for tiles of at most 32 threads (as in CUDA)");
        return ::__sim::shfl_value(::__sim::kShflUp, file, line, mask(), value, (int)delta, (int)Size);
    }
    template <class T>
    T shfl_xor(T value, unsigned int lane_mask, const char* file = __builtin_FILE(),
               int line = __builtin_LINE()) const {
        static_assert(kWarp, "thread_block_tile::shfl_xor is for tiles of at most 32 threads (as in CUDA)");
        return ::__sim::shfl_value(::__sim::kShflXor, file, line, mask(), value, (int)lane_mask, (int)Size);
    }
    int any(int predicate, const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
        if constexpr (kWarp) {
            return (int)::__sim::warp_op(::__sim::kAny, mask(), predicate ? 1 : 0, 0, 32, file, line);
        } else {
            return count(predicate, file, line) > 0 ? 1 : 0;
        }
    }
    int all(int predicate, const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
        if constexpr (kWarp) {
            return (int)::__sim::warp_op(::__sim::kAll, mask(), predicate ? 1 : 0, 0, 32, file, line);
        } else {
            return count(predicate, file, line) == (int)live_threads() ? 1 : 0;
        }
    }
    // Bit i is set when the tile's thread of rank i passed a true predicate.
    unsigned int ballot(int predicate, const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
        static_assert(kWarp, "thread_block_tile::ballot is for tiles of at most 32 threads (as in CUDA)");
        const unsigned int m = mask();
        const unsigned int bits = (unsigned int)::__sim::warp_op(::__sim::kBallot, m, predicate ? 1 : 0, 0, 32, file, line);
        return bits >> __builtin_ctz(m);
    }

private:
    static unsigned int mask() { return details::tile_mask(Size); }
    // Threads of a big tile that passed a true predicate (-1 in a slot: not in the block).
    int count(int predicate, const char* file, int line) const {
        const unsigned int n = live_threads();
        return details::tile_exchange(
            Size, predicate ? 1 : 0,
            [n](const unsigned long long* slots) {
                int c = 0;
                for (unsigned int i = 0; i < n; ++i) c += details::slot_value<int>(&slots[i]);
                return c;
            },
            file, line);
    }
    // The tile's threads that exist in the block (a last tile may be cut short).
    unsigned int live_threads() const {
        const unsigned int first = details::block_rank() & ~(Size - 1u);
        const unsigned int left = details::block_threads() - first;
        return left < Size ? left : Size;
    }
};

template <unsigned int Size, class ParentT>
static inline thread_block_tile<Size, ParentT> tiled_partition(const ParentT&) {
    return thread_block_tile<Size, ParentT>();
}

static inline thread_group tiled_partition(const thread_block&, unsigned int size) { return thread_group(size); }
static inline thread_group tiled_partition(const thread_group&, unsigned int size) { return thread_group(size); }

// CUDA 11's spelling of tiles larger than a warp, still accepted by CUDA 12 and 13.
namespace experimental {
template <unsigned int TileCommunicationSize = 8, unsigned int MaxBlockSize = 1024>
struct block_tile_memory {};
template <unsigned int C, unsigned int M>
static inline thread_block this_thread_block(block_tile_memory<C, M>&) {
    return thread_block();
}
template <unsigned int Size, class ParentT>
static inline thread_block_tile<Size, ParentT> tiled_partition(const ParentT&) {
    return thread_block_tile<Size, ParentT>();
}
}  // namespace experimental

// ---- the threads of a warp that are active together ------------------------------------------
class coalesced_group {
public:
    coalesced_group(const char* file = __builtin_FILE(), int line = __builtin_LINE())
        : mask_(::__sim::coalesced_mask(file, line)) {}
    explicit coalesced_group(unsigned int lanes) : mask_(lanes) {}
    unsigned int get_mask() const { return mask_; }
    unsigned int meta_group_rank() const { return 0; }
    unsigned int meta_group_size() const { return 1; }
    unsigned int size() const { return (unsigned int)__builtin_popcount(mask_); }
    unsigned int num_threads() const { return size(); }
    unsigned int thread_rank() const {
        const unsigned int lane = details::block_rank() & 31u;
        return (unsigned int)__builtin_popcount(mask_ & ((1u << lane) - 1u));
    }
    void sync(const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
        (void)::__sim::warp_op(::__sim::kSyncWarp, mask_, 0, 0, 32, file, line);
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
        return ::__sim::shfl_value(::__sim::kShflIdx, file, line, mask_, value, lane, 32);
    }
    // The value of the thread ``delta`` ranks up (or down); its own past the group's end.
    template <class T>
    T shfl_down(T value, unsigned int delta, const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
        const unsigned int r = thread_rank() + delta;
        return ::__sim::shfl_value(::__sim::kShflIdx, file, line, mask_, value, r < size() ? lane_of(r) : own_lane(), 32);
    }
    template <class T>
    T shfl_up(T value, unsigned int delta, const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
        const unsigned int r = thread_rank();
        return ::__sim::shfl_value(::__sim::kShflIdx, file, line, mask_, value, r >= delta ? lane_of(r - delta) : own_lane(), 32);
    }
    unsigned int ballot(int predicate, const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
        const unsigned int bits = (unsigned int)::__sim::warp_op(::__sim::kBallot, mask_, predicate ? 1 : 0, 0, 32, file, line);
        unsigned int out = 0, rank = 0;  // bit i: the group's thread of rank i
        for (unsigned int m = mask_; m != 0; m &= m - 1, ++rank) {
            if (bits & (m & (0u - m))) out |= 1u << rank;
        }
        return out;
    }
    int any(int predicate, const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
        return (int)::__sim::warp_op(::__sim::kAny, mask_, predicate ? 1 : 0, 0, 32, file, line);
    }
    int all(int predicate, const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
        return (int)::__sim::warp_op(::__sim::kAll, mask_, predicate ? 1 : 0, 0, 32, file, line);
    }

private:
    static int own_lane() { return (int)(details::block_rank() & 31u); }
    int lane_of(unsigned int rank) const {
        unsigned int m = mask_;
        for (unsigned int i = 0; i < rank; ++i) m &= m - 1;
        return m != 0 ? __builtin_ctz(m) : own_lane();
    }
    unsigned int mask_;
};

static inline coalesced_group coalesced_threads(const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    return coalesced_group(file, line);
}

namespace details {
template <unsigned int Size, class P>
static inline unsigned int group_lanes(const thread_block_tile<Size, P>&) {
    return tile_mask(Size);
}
static inline unsigned int group_lanes(const coalesced_group& g) { return g.get_mask(); }
}  // namespace details

// The threads of ``g`` that pass the same ``label``, as a coalesced group of their own.
template <class Group>
static inline coalesced_group labeled_partition(const Group& g, int label, const char* file = __builtin_FILE(),
                                                int line = __builtin_LINE()) {
    const unsigned int lanes = details::group_lanes(g);
    unsigned int same = 0;
    for (unsigned int m = lanes; m != 0; m &= m - 1) {
        const int lane = __builtin_ctz(m);
        if (::__sim::shfl(::__sim::kShflIdx, file, line, lanes, label, lane, 32) == label) same |= 1u << lane;
    }
    return coalesced_group(same);
}

template <class Group>
static inline coalesced_group binary_partition(const Group& g, bool predicate, const char* file = __builtin_FILE(),
                                               int line = __builtin_LINE()) {
    return labeled_partition(g, predicate ? 1 : 0, file, line);
}

// cg::sync(group) for any group above.
template <class Group>
static inline void sync(const Group& g, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    g.sync(file, line);
}

}  // namespace cooperative_groups

#endif  // CUDA_SIM_COOPERATIVE_GROUPS_H
