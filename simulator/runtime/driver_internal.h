// What the driver API's sources share: whether cuInit ran, and the driver status for a runtime
// error (the driver's calls are built on the runtime's).
#ifndef SIM_DRIVER_INTERNAL_H
#define SIM_DRIVER_INTERNAL_H

#include <cuda.h>
#include <cuda_runtime_api.h>

#pragma GCC visibility push(hidden)
namespace __sim {

// True once cuInit(0) has succeeded, or the runtime has, which calls it (cudaSetDevice);
// every driver call but the device queries asks first.
bool driver_initialised();

// cudaSetDevice: the runtime initialises the driver and makes the device's primary context
// current on this thread, as CUDA 12's does (driver_contexts.cpp).
void runtime_binds_primary_context();
// Makes ``device`` (valid) this thread's current one, as a driver context's push does, with no
// context bound (devices.cpp).
void select_device(int device);
// Marks the driver initialised, as the runtime's own cuInit does (driver_api.cpp).
void runtime_initialises_driver();

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
