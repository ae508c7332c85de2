// Simulator stand-in for Thrust's <thrust/system/cpp/detail/malloc_and_free.h>: NVIDIA's header
// (the sequential system's malloc and free), plus malloc and free for the cpp system's own tag,
// which thrust::device_malloc, thrust::device_free and the temporary buffers of Thrust's
// algorithms call (found by argument-dependent lookup, an exact match for the tag): they
// allocate device memory with cudaMalloc (sim_thrust_device_memory.h).
#ifndef CUDA_SIM_THRUST_CPP_MALLOC_AND_FREE_H
#define CUDA_SIM_THRUST_CPP_MALLOC_AND_FREE_H

#include_next <thrust/system/cpp/detail/malloc_and_free.h>

#include <thrust/system/cpp/detail/execution_policy.h>

#include "../../../../sim_thrust_device_memory.h"

THRUST_NAMESPACE_BEGIN
namespace system {
namespace cpp {
namespace detail {

inline void* malloc(tag&, std::size_t n) { return ::sim_thrust::device_allocate(n); }

template <typename Pointer>
inline void free(tag&, Pointer ptr) {
    ::sim_thrust::device_deallocate(thrust::raw_pointer_cast(ptr));
}

}  // namespace detail
}  // namespace cpp
}  // namespace system
THRUST_NAMESPACE_END

#endif  // CUDA_SIM_THRUST_CPP_MALLOC_AND_FREE_H
