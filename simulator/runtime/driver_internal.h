// What the driver API's sources share: whether cuInit ran, and the driver status for a runtime
// error (the driver's calls are built on the runtime's).
#ifndef SIM_DRIVER_INTERNAL_H
#define SIM_DRIVER_INTERNAL_H

#include <cuda.h>
#include <cuda_runtime_api.h>

#pragma GCC visibility push(hidden)
namespace __sim {

// True once cuInit(0) has succeeded; every driver call but the device queries asks first.
bool driver_initialised();

// The driver status for ``e``: the two share their values from 100 on; below, the few the
// runtime's calls used here return are mapped by name.
CUresult driver_status(cudaError_t e);

// True when [p, p + n) lies inside one module variable that cuModuleGetGlobal handed out: host
// memory the runtime's copies do not know as a device allocation (driver_modules.cpp).
bool module_global(const void* p, size_t n);

}  // namespace __sim
#pragma GCC visibility pop

// The driver's "not initialised" answer, first thing in each call that needs cuInit.
#define SIM_DRIVER_READY()                                                \
    do {                                                                  \
        if (!::__sim::driver_initialised()) return CUDA_ERROR_NOT_INITIALIZED; \
    } while (0)

#endif  // SIM_DRIVER_INTERNAL_H
