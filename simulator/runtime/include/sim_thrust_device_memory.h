// Thrust's device memory in a simulated program: Thrust runs its sequential C++ (cpp) system as
// the device system, and every allocation that system makes (device_vector storage,
// device_malloc, the temporary buffers of sort, scan, ...) is a cudaMalloc, so the runtime and
// its checkers know it as device memory: cudaMemcpy to and from it works, and memcheck reports
// a kernel that reads past the end of a device_vector as it does for any device allocation.
// Included by the stand-ins for <thrust/system/cpp/memory_resource.h> and
// <thrust/system/cpp/detail/malloc_and_free.h>, after NVIDIA's own Thrust headers.
#ifndef CUDA_SIM_THRUST_DEVICE_MEMORY_H
#define CUDA_SIM_THRUST_DEVICE_MEMORY_H

#include <thrust/detail/config.h>
#include <thrust/detail/raw_pointer_cast.h>
#include <thrust/system/detail/bad_alloc.h>
// Thrust's CUDA back end brings in thrust::system_error with every container, and programs catch
// it without including <thrust/system_error.h> (NVIDIA's segmentationTreeThrust sample).
#include <thrust/system_error.h>

#include <cstddef>

#include <cuda_runtime_api.h>

namespace sim_thrust {

// ``bytes`` of device memory (managed memory for Thrust's universal vectors); Thrust's
// bad_alloc, with the CUDA error, when the runtime refuses.
inline void* device_allocate(std::size_t bytes, bool managed = false) {
    if (bytes == 0) return nullptr;
    void* p = nullptr;
    const cudaError_t e = managed ? cudaMallocManaged(&p, bytes) : cudaMalloc(&p, bytes);
    if (e != cudaSuccess) throw THRUST_NS_QUALIFIER::system::detail::bad_alloc(cudaGetErrorString(e));
    return p;
}

inline void device_deallocate(void* p) {
    if (p != nullptr) cudaFree(p);
}

}  // namespace sim_thrust

#endif  // CUDA_SIM_THRUST_DEVICE_MEMORY_H
