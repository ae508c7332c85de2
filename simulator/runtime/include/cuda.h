// Simulator stand-in for <cuda.h>: the runtime header is force-included by the build.
#include "../cuda_sim.h"

#ifndef SIM_CUDA_DRIVER_TYPES_H
#define SIM_CUDA_DRIVER_TYPES_H
// The driver API's status type, so that code which includes <cuda.h> and compares a runtime
// call's result with CUDA_SUCCESS (as Rodinia's kmeans does) builds; the values are the driver
// API's own. Of the driver API's calls only the device queries older programs make before they
// use the runtime API are provided (runtime/driver_api.cpp; Rodinia's mummergpu).
typedef enum cudaError_enum {
    CUDA_SUCCESS = 0,
    CUDA_ERROR_INVALID_VALUE = 1,
    CUDA_ERROR_OUT_OF_MEMORY = 2,
    CUDA_ERROR_NOT_INITIALIZED = 3,
    CUDA_ERROR_DEINITIALIZED = 4,
    CUDA_ERROR_NO_DEVICE = 100,
    CUDA_ERROR_INVALID_DEVICE = 101,
    CUDA_ERROR_INVALID_CONTEXT = 201,
    CUDA_ERROR_NOT_FOUND = 500,
    CUDA_ERROR_NOT_READY = 600,
    CUDA_ERROR_ILLEGAL_ADDRESS = 700,
    CUDA_ERROR_LAUNCH_TIMEOUT = 702,
    CUDA_ERROR_LAUNCH_FAILED = 719,
    CUDA_ERROR_NOT_SUPPORTED = 801,
    CUDA_ERROR_UNKNOWN = 999
} CUresult;

typedef int CUdevice;

extern "C" {
SIM_API CUresult cuInit(unsigned int flags);
SIM_API CUresult cuDriverGetVersion(int* version);
SIM_API CUresult cuDeviceGetCount(int* count);
SIM_API CUresult cuDeviceGet(CUdevice* device, int ordinal);
SIM_API CUresult cuDeviceGetName(char* name, int length, CUdevice device);
SIM_API CUresult cuDeviceTotalMem(size_t* bytes, CUdevice device);
SIM_API CUresult cuDeviceComputeCapability(int* major, int* minor, CUdevice device);
SIM_API CUresult cuMemGetInfo(size_t* free_bytes, size_t* total_bytes);
}
#endif
