// Simulator stand-in for <cooperative_groups/memcpy_async.h>: cg::memcpy_async(group, dst, src,
// bytes) (bytes also as cuda::aligned_size_t<N>), the element-count form cg::memcpy_async(group,
// dst, dst_count, src, src_count), cg::wait(group) and cg::wait_prior<N>(group).
//
// The copy is made at once: the thread of rank r copies the r-th of group-size contiguous parts
// of the range, so the whole range is in place only when every thread of the group has called
// memcpy_async; wait and wait_prior are the group's barrier, after which the group sees all of
// it, as CUDA specifies. Reading the destination before the wait is a race that racecheck
// reports, as compute-sanitizer would.
#ifndef CUDA_SIM_COOPERATIVE_GROUPS_MEMCPY_ASYNC_H
#define CUDA_SIM_COOPERATIVE_GROUPS_MEMCPY_ASYNC_H

#include "../cooperative_groups.h"

#include <type_traits>

#include "../sim_async_copy.h"

namespace cooperative_groups {
namespace details {

// The calling thread's share of a copy of ``bytes`` bytes by the threads of ``g``.
template <class Group>
static inline void copy_share(const Group& g, void* dst, const void* src, size_t bytes) {
    ::sim_async::copy_part((size_t)g.thread_rank(), (size_t)g.num_threads(), dst, src, bytes);
}

template <class S>
static inline size_t byte_count(const S& count) {
    static_assert(std::is_integral<S>::value || std::is_convertible<S, size_t>::value,
                  "cooperative_groups::memcpy_async: the size is a byte count or cuda::aligned_size_t");
    return (size_t)count;
}

}  // namespace details

// Copies ``bytes`` bytes from ``src`` to ``dst``, shared out between the threads of ``group``.
template <class Group, class T, class S>
static inline void memcpy_async(const Group& group, T* dst, const T* src, const S& bytes) {
    details::copy_share(group, (void*)dst, (const void*)src, details::byte_count(bytes));
}

// Copies min(dst_count, src_count) elements of T.
template <class Group, class T, class DstCount, class SrcCount>
static inline void memcpy_async(const Group& group, T* dst, const DstCount& dst_count, const T* src,
                                const SrcCount& src_count) {
    const size_t d = details::byte_count(dst_count), s = details::byte_count(src_count);
    details::copy_share(group, (void*)dst, (const void*)src, (d < s ? d : s) * sizeof(T));
}

// Every copy the group started is complete and visible to the whole group.
template <class Group>
static inline void wait(const Group& group, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    group.sync(file, line);
}

// All but the last ``Stage`` batches are complete: here every copy already is.
template <unsigned int Stage, class Group>
static inline void wait_prior(const Group& group, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    group.sync(file, line);
}

}  // namespace cooperative_groups

#endif  // CUDA_SIM_COOPERATIVE_GROUPS_MEMCPY_ASYNC_H
