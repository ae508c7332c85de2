// Simulator stand-in for Thrust's <thrust/system/detail/sequential/sort.h>: NVIDIA's header, and
// int keys sorted by comparison (merge sort) instead of Thrust's sequential radix sort. That radix
// sort encodes an int key as an unsigned long (RadixEncoder<int> in stable_radix_sort.inl): where
// long is wider than int (Linux, macOS), a negative key then sorts after every non-negative one,
// so thrust::sort of {3, -5, 0} on the host back end gives {0, 3, -5}. Other key types are right
// and keep the radix sort.
#ifndef CUDA_SIM_THRUST_SEQUENTIAL_SORT_H
#define CUDA_SIM_THRUST_SEQUENTIAL_SORT_H

#include_next <thrust/system/detail/sequential/sort.h>

// Only Thrust 3.0 (CCCL 3.0, CUDA 13.0's) has the defect: from 3.1 the encoder keeps an int
// unsigned int wide, and use_primitive_sort is a variable template there, not a class.
#if __SIZEOF_LONG__ > __SIZEOF_INT__ && THRUST_VERSION < 300100
THRUST_NAMESPACE_BEGIN
namespace system {
namespace detail {
namespace sequential {
namespace sort_detail {
template <>
struct use_primitive_sort<int, thrust::less<int>> : ::cuda::std::false_type {};
template <>
struct use_primitive_sort<int, thrust::greater<int>> : ::cuda::std::false_type {};
}  // namespace sort_detail
}  // namespace sequential
}  // namespace detail
}  // namespace system
THRUST_NAMESPACE_END
#endif

#endif  // CUDA_SIM_THRUST_SEQUENTIAL_SORT_H
