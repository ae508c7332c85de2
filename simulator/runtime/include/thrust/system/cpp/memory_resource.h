// Simulator stand-in for Thrust's <thrust/system/cpp/memory_resource.h>: the cpp system is the
// device system of a simulated program (simulator/toolchain.py sets THRUST_DEVICE_SYSTEM), so its
// memory resources allocate device memory with cudaMalloc (sim_thrust_device_memory.h) instead
// of operator new. The names and pointer types are those of NVIDIA's header.
#ifndef CUDA_SIM_THRUST_CPP_MEMORY_RESOURCE_H
#define CUDA_SIM_THRUST_CPP_MEMORY_RESOURCE_H

#include <thrust/detail/config.h>
#include <thrust/mr/memory_resource.h>
#include <thrust/system/cpp/pointer.h>

#include "../../../sim_thrust_device_memory.h"

namespace sim_thrust {

// A Thrust memory resource over the simulator's device allocator, handing out ``Pointer``.
template <class Pointer, bool Managed>
class device_resource final : public THRUST_NS_QUALIFIER::mr::memory_resource<Pointer> {
  public:
    Pointer do_allocate(std::size_t bytes, std::size_t alignment) override {
        if (alignment > 256) {  // cudaMalloc aligns to 256 bytes, never more
            throw THRUST_NS_QUALIFIER::system::detail::bad_alloc("alignment over 256 bytes for device memory");
        }
        return Pointer(device_allocate(bytes, Managed));
    }
    void do_deallocate(Pointer p, std::size_t, std::size_t) override {
        device_deallocate(THRUST_NS_QUALIFIER::raw_pointer_cast(p));
    }
};

}  // namespace sim_thrust

THRUST_NAMESPACE_BEGIN
namespace system {
namespace cpp {
using memory_resource = ::sim_thrust::device_resource<thrust::cpp::pointer<void>, false>;
using universal_memory_resource = ::sim_thrust::device_resource<thrust::cpp::universal_pointer<void>, true>;
using universal_host_pinned_memory_resource = universal_memory_resource;
}  // namespace cpp
}  // namespace system
THRUST_NAMESPACE_END

#endif  // CUDA_SIM_THRUST_CPP_MEMORY_RESOURCE_H
