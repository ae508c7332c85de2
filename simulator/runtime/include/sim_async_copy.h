// Pieces shared by the asynchronous-copy headers (<cooperative_groups/memcpy_async.h>,
// <cuda/barrier>, <cuda/pipeline>, <cuda_pipeline_primitives.h>): cuda::aligned_size_t<N>, and the
// element-wise copy every one of them does at once when the copy is issued.
#ifndef CUDA_SIM_ASYNC_COPY_H
#define CUDA_SIM_ASYNC_COPY_H

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace cuda {
// A byte count that promises the alignment ``Align`` of both pointers of the copy.
template <::std::size_t Align>
struct aligned_size_t {
    static constexpr ::std::size_t align = Align;
    ::std::size_t value;
    explicit aligned_size_t(::std::size_t size) : value(size) {}
    operator ::std::size_t() const { return value; }
};
}  // namespace cuda

namespace sim_async {

// Copies bytes [begin, end) of ``src`` to ``dst``. Word and byte stores rather than one memcpy
// call: racecheck sees each store as this thread's write (a range copy through memcpy is not
// checked against other threads' reads).
static inline void copy_range(void* dst, const void* src, ::std::size_t begin, ::std::size_t end) {
    char* d = static_cast<char*>(dst);
    const char* s = static_cast<const char*>(src);
    ::std::size_t k = begin;
    for (; k < end && (((::std::uintptr_t)(d + k) | (::std::uintptr_t)(s + k)) & 7u) != 0; ++k) d[k] = s[k];
    for (; k + 8 <= end; k += 8) {
        unsigned long long w;
        ::std::memcpy(&w, s + k, 8);
        ::std::memcpy(d + k, &w, 8);
    }
    for (; k < end; ++k) d[k] = s[k];
}

// The share of thread ``rank`` of ``count`` threads in a copy of ``bytes`` bytes: the rank-th of
// ``count`` contiguous parts.
static inline void copy_part(::std::size_t rank, ::std::size_t count, void* dst, const void* src,
                             ::std::size_t bytes) {
    const ::std::size_t part = (bytes + count - 1) / count;
    const ::std::size_t begin = rank * part < bytes ? rank * part : bytes;
    const ::std::size_t end = begin + part < bytes ? begin + part : bytes;
    copy_range(dst, src, begin, end);
}

}  // namespace sim_async

#endif  // CUDA_SIM_ASYNC_COPY_H
