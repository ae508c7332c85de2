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

#ifndef SIM_CUDA_ALIGNED_SIZE_T
#define SIM_CUDA_ALIGNED_SIZE_T
namespace cuda {
// A byte count that promises the alignment ``Align`` of both pointers (libcu++'s <cuda/barrier>).
template <size_t Align>
struct aligned_size_t {
    static constexpr size_t align = Align;
    size_t value;
    explicit aligned_size_t(size_t size) : value(size) {}
    operator size_t() const { return value; }
};
}  // namespace cuda
#endif

namespace cooperative_groups {
namespace details {

// The calling thread's share of a copy of ``bytes`` bytes by the threads of ``g``.
template <class Group>
static inline void copy_share(const Group& g, void* dst, const void* src, size_t bytes) {
    const size_t n = (size_t)g.num_threads();
    const size_t rank = (size_t)g.thread_rank();
    const size_t part = (bytes + n - 1) / n;
    const size_t begin = rank * part < bytes ? rank * part : bytes;
    const size_t end = begin + part < bytes ? begin + part : bytes;
    // Word and byte stores rather than one memcpy call: racecheck sees each store as this thread's
    // write (a range copy through memcpy is not checked against other threads' reads).
    char* d = static_cast<char*>(dst);
    const char* s = static_cast<const char*>(src);
    size_t k = begin;
    for (; k < end && (((uintptr_t)(d + k) | (uintptr_t)(s + k)) & 7u) != 0; ++k) d[k] = s[k];
    for (; k + 8 <= end; k += 8) {
        unsigned long long w;
        std::memcpy(&w, s + k, 8);
        std::memcpy(d + k, &w, 8);
    }
    for (; k < end; ++k) d[k] = s[k];
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
