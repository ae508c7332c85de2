// The driver API's device queries that older programs make before they use the runtime API
// (cuInit, cuDeviceGetCount, cuDeviceGetAttribute, cuDeviceComputeCapability, cuMemGetInfo;
// Rodinia's mummergpu, cuda-samples' helper_cuda_drvapi.h):
// each answers from the runtime's modelled device. <cuda.h> (runtime/include) declares them.
// Contexts, memory, streams and events are in driver_contexts.cpp; modules and launches in
// driver_modules.cpp.
#include "sim_internal.h"
#include "driver_internal.h"

#include <atomic>
#include <cstdio>
#include <cstring>

#include <cuda.h>

namespace {

std::atomic<bool> g_driver_initialised{false};

using __sim::driver_status;

}  // namespace

bool __sim::driver_initialised() { return g_driver_initialised.load(std::memory_order_acquire); }

void __sim::runtime_initialises_driver() { g_driver_initialised.store(true, std::memory_order_release); }

CUresult __sim::driver_status(cudaError_t e) {
    switch (e) {
        case cudaSuccess: return CUDA_SUCCESS;
        case cudaErrorInvalidValue: return CUDA_ERROR_INVALID_VALUE;
        case cudaErrorMemoryAllocation: return CUDA_ERROR_OUT_OF_MEMORY;
        case cudaErrorInitializationError: return CUDA_ERROR_NOT_INITIALIZED;
        case cudaErrorCudartUnloading: return CUDA_ERROR_DEINITIALIZED;
        case cudaErrorInvalidConfiguration: return CUDA_ERROR_INVALID_VALUE;
        case cudaErrorInvalidDeviceFunction: return CUDA_ERROR_INVALID_HANDLE;
        default: return (int)e >= 100 ? (CUresult)e : CUDA_ERROR_UNKNOWN;
    }
}

extern "C" {

CUresult cuInit(unsigned int flags) {
    if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
    g_driver_initialised.store(true, std::memory_order_release);
    return CUDA_SUCCESS;
}

CUresult cuDriverGetVersion(int* version) {
    if (version == nullptr) return CUDA_ERROR_INVALID_VALUE;
    return driver_status(cudaDriverGetVersion(version));
}

CUresult cuDeviceGetCount(int* count) {
    if (count == nullptr) return CUDA_ERROR_INVALID_VALUE;
    return driver_status(cudaGetDeviceCount(count));
}

CUresult cuDeviceGet(CUdevice* device, int ordinal) {
    if (device == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (!__sim::valid_device(ordinal)) return CUDA_ERROR_INVALID_DEVICE;
    *device = ordinal;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetName(char* name, int length, CUdevice device) {
    if (name == nullptr || length <= 0) return CUDA_ERROR_INVALID_VALUE;
    if (!__sim::valid_device(device)) return CUDA_ERROR_INVALID_DEVICE;
    cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, device);
    std::snprintf(name, (size_t)length, "%s", prop.name);
    return CUDA_SUCCESS;
}

CUresult cuDeviceTotalMem(size_t* bytes, CUdevice device) {
    if (bytes == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (!__sim::valid_device(device)) return CUDA_ERROR_INVALID_DEVICE;
    cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, device);
    *bytes = prop.totalGlobalMem;
    return CUDA_SUCCESS;
}

// CUdevice_attribute numbers its attributes as cudaDeviceAttr does; the runtime answers them.
static_assert((int)CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK == (int)cudaDevAttrMaxThreadsPerBlock);
static_assert((int)CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT == (int)cudaDevAttrMultiProcessorCount);
static_assert((int)CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR == (int)cudaDevAttrComputeCapabilityMajor);
static_assert((int)CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR == (int)cudaDevAttrComputeCapabilityMinor);
static_assert((int)CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN ==
              (int)cudaDevAttrMaxSharedMemoryPerBlockOptin);
static_assert((int)CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH == (int)cudaDevAttrClusterLaunch);

CUresult cuDeviceGetAttribute(int* value, CUdevice_attribute attrib, CUdevice device) {
    if (value == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (!__sim::valid_device(device)) return CUDA_ERROR_INVALID_DEVICE;
    switch (attrib) {
        case CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED:  // cuMemCreate/cuMemMap: driver_vmm.cpp
            *value = 1;
            return CUDA_SUCCESS;
        // Driver-only features the runtime does not offer (host VMM, compressible memory):
        // answered 0, as a device without them answers, so that a program that checks first
        // (cuda-samples' cudaCompressibleMemory) waives instead of failing on the query itself.
        case CU_DEVICE_ATTRIBUTE_HOST_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED:
        case CU_DEVICE_ATTRIBUTE_HOST_NUMA_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED:
        case CU_DEVICE_ATTRIBUTE_GENERIC_COMPRESSION_SUPPORTED:
            *value = 0;
            return CUDA_SUCCESS;
        default:
            break;
    }
    return __sim::device_attribute(value, (cudaDeviceAttr)attrib, device) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

// Removed in CUDA 12 (cuDeviceGetAttribute with the compute-capability attributes instead).
CUresult cuDeviceComputeCapability(int* major, int* minor, CUdevice device) {
    SIM_NOTE_GONE("cuDeviceComputeCapability", "the modelled device's major.minor");
    if (major == nullptr || minor == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (!__sim::valid_device(device)) return CUDA_ERROR_INVALID_DEVICE;
    cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, device);
    *major = prop.major;
    *minor = prop.minor;
    return CUDA_SUCCESS;
}

CUresult cuMemGetInfo(size_t* free_bytes, size_t* total_bytes) {
    if (free_bytes == nullptr || total_bytes == nullptr) return CUDA_ERROR_INVALID_VALUE;
    return driver_status(cudaMemGetInfo(free_bytes, total_bytes));
}

}  // extern "C"
// sim-runtime: cold
