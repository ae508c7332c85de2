// Host API of the simulator (included by cuda_sim.h after the vector types): the error codes,
// the host types and every cuda* call, the launch machinery that the build's transform emits
// for `kernel<<<...>>>(args)`, events, the modelled device's properties, streams, memory pools,
// graphs and (through sim_textures.h) CUDA arrays and textures. Definitions are in host_api.cpp
// and the files each section names.
#ifndef CUDA_CPU_SIMULATOR_HOST_API_H
#define CUDA_CPU_SIMULATOR_HOST_API_H

// The include guards of CUDA's own <cuda_runtime.h> and <driver_types.h>: programs (and the
// CUDA samples' helper_cuda.h) test them to see whether the runtime API is available.
#define __CUDA_RUNTIME_H__
#define __DRIVER_TYPES_H__

// ---- error codes and host types ------------------------------------------------------------------------
// Every error code the runtime knows: name, value and cudaGetErrorString's text (errors.cpp).
// Some (cudaErrorAddressOfConstant, cudaErrorTextureFetchFailed, cudaErrorTextureNotBound,
// cudaErrorSynchronizationError, cudaErrorMixedDeviceExecution, cudaErrorNotYetImplemented,
// cudaErrorMemoryValueTooLarge, cudaErrorPriorLaunchFailure, cudaErrorInvalidHostPointer) are
// gone from CUDA 12/13; older programs still name them, and the simulator never returns them.
#define SIM_CUDA_ERRORS(X)                                                                                    \
    X(cudaSuccess, 0, "no error")                                                                             \
    X(cudaErrorInvalidValue, 1, "invalid argument")                                                           \
    X(cudaErrorMemoryAllocation, 2, "out of memory")                                                          \
    X(cudaErrorInitializationError, 3, "initialization error (a SIMULATOR_ variable is not "                  \
                                       "valid: see stderr)")                                                  \
    X(cudaErrorCudartUnloading, 4, "driver shutting down")                                                    \
    X(cudaErrorProfilerDisabled, 5, "profiler disabled while using external profiling tool")                  \
    X(cudaErrorInvalidConfiguration, 9, "invalid configuration argument")                                     \
    X(cudaErrorInvalidPitchValue, 12, "invalid pitch argument")                                               \
    X(cudaErrorInvalidSymbol, 13, "invalid device symbol")                                                    \
    X(cudaErrorInvalidHostPointer, 16, "invalid host pointer")                                                \
    X(cudaErrorInvalidDevicePointer, 17, "invalid device pointer")                                            \
    X(cudaErrorInvalidTexture, 18, "invalid texture reference")                                               \
    X(cudaErrorInvalidTextureBinding, 19, "texture is not bound to a pointer")                                \
    X(cudaErrorInvalidChannelDescriptor, 20, "invalid channel descriptor")                                    \
    X(cudaErrorInvalidMemcpyDirection, 21, "invalid copy direction for memcpy")                               \
    X(cudaErrorAddressOfConstant, 22, "invalid address of constant")                                          \
    X(cudaErrorTextureFetchFailed, 23, "fetch from texture failed")                                           \
    X(cudaErrorTextureNotBound, 24, "cannot fetch from a texture that is not bound")                          \
    X(cudaErrorSynchronizationError, 25, "incorrect use of __syncthreads()")                                  \
    X(cudaErrorInvalidFilterSetting, 26, "linear filtering not supported for non-float type")                 \
    X(cudaErrorInvalidNormSetting, 27, "read as normalized float not supported for 32-bit non float type")    \
    X(cudaErrorMixedDeviceExecution, 28, "device emulation mode and device execution mode cannot be mixed")   \
    X(cudaErrorNotYetImplemented, 31, "function not yet implemented")                                         \
    X(cudaErrorMemoryValueTooLarge, 32, "memory size or pointer value too large")                             \
    X(cudaErrorInsufficientDriver, 35, "CUDA driver version is insufficient for CUDA runtime version")        \
    X(cudaErrorInvalidSurface, 37, "invalid surface reference")                                               \
    X(cudaErrorMissingConfiguration, 52, "__global__ function call is not configured")                        \
    X(cudaErrorPriorLaunchFailure, 53, "unspecified launch failure in prior launch")                          \
    X(cudaErrorInvalidDeviceFunction, 98, "invalid device function")                                          \
    X(cudaErrorNoDevice, 100, "no CUDA-capable device is detected")                                           \
    X(cudaErrorInvalidDevice, 101, "invalid device ordinal")                                                  \
    X(cudaErrorStartupFailure, 127, "startup failure in cuda runtime")                                        \
    X(cudaErrorInvalidKernelImage, 200, "device kernel image is invalid")                                     \
    X(cudaErrorInvalidResourceHandle, 400, "invalid resource handle")                                         \
    X(cudaErrorNotReady, 600, "device not ready")                                                             \
    X(cudaErrorIllegalAddress, 700, "an illegal memory access was encountered")                               \
    X(cudaErrorLaunchOutOfResources, 701, "too many resources requested for launch")                          \
    X(cudaErrorLaunchTimeout, 702, "the launch timed out and was terminated (SIMULATOR_TIMEOUT)")             \
    X(cudaErrorAssert, 710, "device-side assert triggered")                                                   \
    X(cudaErrorLaunchFailure, 719, "unspecified launch failure (the simulator reported the kernel fault on "  \
                                   "stderr)")                                                                 \
    X(cudaErrorCooperativeLaunchTooLarge, 720, "too many blocks in cooperative launch")                       \
    X(cudaErrorIllegalState, 401, "the operation cannot be performed in the present state")                   \
    X(cudaErrorNotSupported, 801, "operation not supported")                                                  \
    X(cudaErrorStreamCaptureUnsupported, 900, "operation not permitted when stream is capturing")             \
    X(cudaErrorStreamCaptureUnmatched, 903, "capture was not initiated in this stream")                       \
    X(cudaErrorStreamCaptureWrongThread, 908, "attempt to terminate a thread-local capture sequence from "     \
                                              "another thread")                                               \
    X(cudaErrorGraphExecUpdateFailure, 910, "the graph update was not performed because it included changes " \
                                            "which violated constraints specific to instantiated graph update")\
    X(cudaErrorUnknown, 999, "unknown error")

#define SIM_CUDA_ERROR_ENUM(name, value, text) name = value,
enum cudaError { SIM_CUDA_ERRORS(SIM_CUDA_ERROR_ENUM) };
#undef SIM_CUDA_ERROR_ENUM
typedef enum cudaError cudaError_t;

enum cudaMemcpyKind {
    cudaMemcpyHostToHost = 0,
    cudaMemcpyHostToDevice = 1,
    cudaMemcpyDeviceToHost = 2,
    cudaMemcpyDeviceToDevice = 3,
    cudaMemcpyDefault = 4,
};

enum cudaFuncAttribute {
    cudaFuncAttributeMaxDynamicSharedMemorySize = 8,
    cudaFuncAttributePreferredSharedMemoryCarveout = 9,
};

enum cudaDeviceAttr {
    cudaDevAttrMaxThreadsPerBlock = 1,
    cudaDevAttrMaxBlockDimX = 2,
    cudaDevAttrMaxBlockDimY = 3,
    cudaDevAttrMaxBlockDimZ = 4,
    cudaDevAttrMaxGridDimX = 5,
    cudaDevAttrMaxGridDimY = 6,
    cudaDevAttrMaxGridDimZ = 7,
    cudaDevAttrMaxSharedMemoryPerBlock = 8,
    cudaDevAttrTotalConstantMemory = 9,
    cudaDevAttrWarpSize = 10,
    cudaDevAttrMaxPitch = 11,
    cudaDevAttrMaxRegistersPerBlock = 12,
    cudaDevAttrClockRate = 13,
    cudaDevAttrTextureAlignment = 14,
    cudaDevAttrGpuOverlap = 15,
    cudaDevAttrMultiProcessorCount = 16,
    cudaDevAttrKernelExecTimeout = 17,
    cudaDevAttrIntegrated = 18,
    cudaDevAttrCanMapHostMemory = 19,
    cudaDevAttrComputeMode = 20,
    cudaDevAttrConcurrentKernels = 31,
    cudaDevAttrEccEnabled = 32,
    cudaDevAttrPciBusId = 33,
    cudaDevAttrPciDeviceId = 34,
    cudaDevAttrMemoryClockRate = 36,
    cudaDevAttrGlobalMemoryBusWidth = 37,
    cudaDevAttrL2CacheSize = 38,
    cudaDevAttrMaxThreadsPerMultiProcessor = 39,
    cudaDevAttrAsyncEngineCount = 40,
    cudaDevAttrUnifiedAddressing = 41,
    cudaDevAttrComputeCapabilityMajor = 75,
    cudaDevAttrComputeCapabilityMinor = 76,
    cudaDevAttrStreamPrioritiesSupported = 78,
    cudaDevAttrGlobalL1CacheSupported = 79,
    cudaDevAttrMaxSharedMemoryPerMultiprocessor = 81,
    cudaDevAttrMaxRegistersPerMultiprocessor = 82,
    cudaDevAttrManagedMemory = 83,
    cudaDevAttrIsMultiGpuBoard = 84,
    cudaDevAttrHostNativeAtomicSupported = 86,
    cudaDevAttrPageableMemoryAccess = 88,
    cudaDevAttrConcurrentManagedAccess = 89,
    cudaDevAttrCooperativeLaunch = 95,
    cudaDevAttrMaxSharedMemoryPerBlockOptin = 97,
    cudaDevAttrMaxBlocksPerMultiprocessor = 106,
    cudaDevAttrMaxPersistingL2CacheSize = 108,
    cudaDevAttrMaxAccessPolicyWindowSize = 109,
    cudaDevAttrReservedSharedMemoryPerBlock = 111,
    cudaDevAttrSparseCudaArraySupported = 112,
    cudaDevAttrHostRegisterReadOnlySupported = 113,
    cudaDevAttrTimelineSemaphoreInteropSupported = 114,
    cudaDevAttrMemoryPoolsSupported = 115,
    cudaDevAttrGPUDirectRDMASupported = 116,
    cudaDevAttrMemoryPoolSupportedHandleTypes = 119,
    cudaDevAttrClusterLaunch = 120,
};

struct CUstream_st;
typedef struct CUstream_st* cudaStream_t;

extern "C" {
SIM_API cudaError_t cudaMalloc(void** ptr, size_t size);
SIM_API cudaError_t cudaMallocManaged(void** ptr, size_t size, unsigned int flags = 1);
SIM_API cudaError_t cudaMallocHost(void** ptr, size_t size);
SIM_API cudaError_t cudaFree(void* ptr);
SIM_API cudaError_t cudaFreeHost(void* ptr);
SIM_API cudaError_t cudaMemcpy(void* dst, const void* src, size_t count, enum cudaMemcpyKind kind);
SIM_API cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t count, enum cudaMemcpyKind kind,
                                    cudaStream_t stream = 0);
SIM_API cudaError_t cudaMemset(void* ptr, int value, size_t count);
SIM_API cudaError_t cudaMemsetAsync(void* ptr, int value, size_t count, cudaStream_t stream = 0);
SIM_API cudaError_t cudaGetLastError(void);
SIM_API cudaError_t cudaPeekAtLastError(void);
SIM_API cudaError_t cudaDeviceSynchronize(void);
SIM_API cudaError_t cudaDeviceReset(void);
SIM_API cudaError_t cudaStreamCreate(cudaStream_t* stream);
SIM_API cudaError_t cudaStreamDestroy(cudaStream_t stream);
SIM_API cudaError_t cudaStreamSynchronize(cudaStream_t stream);
SIM_API cudaError_t cudaGetDeviceCount(int* count);
SIM_API cudaError_t cudaGetDevice(int* device);
SIM_API cudaError_t cudaSetDevice(int device);
SIM_API cudaError_t cudaDeviceGetAttribute(int* value, enum cudaDeviceAttr attr, int device);
SIM_API const char* cudaGetErrorString(cudaError_t error);
SIM_API const char* cudaGetErrorName(cudaError_t error);
}

template <class T>
__attribute__((always_inline)) static inline cudaError_t cudaMalloc(T** ptr, size_t size) {
    return cudaMalloc(reinterpret_cast<void**>(ptr), size);
}
template <class T>
__attribute__((always_inline)) static inline cudaError_t cudaMallocHost(T** ptr, size_t size) {
    return cudaMallocHost(reinterpret_cast<void**>(ptr), size);
}
template <class T>
__attribute__((always_inline)) static inline cudaError_t cudaMallocManaged(T** ptr, size_t size, unsigned int flags = 1) {
    return cudaMallocManaged(reinterpret_cast<void**>(ptr), size, flags);
}

namespace sim {
SIM_API cudaError_t func_set_attribute(const void* kernel, int attr, int value);
SIM_API cudaError_t symbol_copy(void* dst, const void* src, size_t count);
}  // namespace sim

template <class K>
static inline cudaError_t cudaFuncSetAttribute(K* kernel, enum cudaFuncAttribute attr, int value) {
    return sim::func_set_attribute(reinterpret_cast<const void*>(kernel), (int)attr, value);
}
template <class T>
static inline cudaError_t cudaMemcpyToSymbol(T& symbol, const void* src, size_t count, size_t offset = 0,
                                             enum cudaMemcpyKind kind = cudaMemcpyHostToDevice) {
    (void)kind;
    if (offset + count > sizeof(T)) return cudaErrorInvalidValue;
    return sim::symbol_copy(reinterpret_cast<char*>(&symbol) + offset, src, count);
}
template <class T>
static inline cudaError_t cudaMemcpyFromSymbol(void* dst, const T& symbol, size_t count, size_t offset = 0,
                                               enum cudaMemcpyKind kind = cudaMemcpyDeviceToHost) {
    (void)kind;
    if (offset + count > sizeof(T)) return cudaErrorInvalidValue;
    return sim::symbol_copy(dst, reinterpret_cast<const char*>(&symbol) + offset, count);
}

// ---- events --------------------------------------------------------------------------------
// Launches and copies are synchronous, so an event records the host clock when it is recorded
// and cudaEventElapsedTime is the host time between two records.
struct CUevent_st;
typedef struct CUevent_st* cudaEvent_t;

#define cudaEventDefault 0x00u
#define cudaEventBlockingSync 0x01u
#define cudaEventDisableTiming 0x02u
#define cudaEventInterprocess 0x04u

// ---- streams -------------------------------------------------------------------------------
#define CUDART_CB
typedef void (*cudaHostFn_t)(void* user_data);
typedef void (*cudaStreamCallback_t)(cudaStream_t stream, cudaError_t status, void* user_data);
#define cudaStreamDefault 0x00u
#define cudaStreamNonBlocking 0x01u
#define cudaStreamLegacy ((cudaStream_t)0x1)
#define cudaStreamPerThread ((cudaStream_t)0x2)

// ---- host allocation flags -------------------------------------------------------------------
#define cudaHostAllocDefault 0x00u
#define cudaHostAllocPortable 0x01u
#define cudaHostAllocMapped 0x02u
#define cudaHostAllocWriteCombined 0x04u
#define cudaHostRegisterDefault 0x00u
#define cudaHostRegisterPortable 0x01u
#define cudaHostRegisterMapped 0x02u
#define cudaMemAttachGlobal 0x01u
#define cudaMemAttachHost 0x02u
#define cudaDeviceScheduleAuto 0x00u
#define cudaDeviceScheduleSpin 0x01u
#define cudaDeviceScheduleYield 0x02u
#define cudaDeviceScheduleBlockingSync 0x04u
#define cudaDeviceMapHost 0x08u
#define cudaDeviceBlockingSync 0x04u
#define cudaDeviceLmemResizeToMax 0x10u

enum cudaLimit {
    cudaLimitStackSize = 0x00,
    cudaLimitPrintfFifoSize = 0x01,
    cudaLimitMallocHeapSize = 0x02,
    cudaLimitDevRuntimeSyncDepth = 0x03,
    cudaLimitDevRuntimePendingLaunchCount = 0x04,
    cudaLimitMaxL2FetchGranularity = 0x05,
    cudaLimitPersistingL2CacheSize = 0x06,
};

// ---- the modelled device ---------------------------------------------------------------------
// One device, modelled on an sm_80 GPU wherever a value is a launch limit the simulator
// enforces; see simulator/README.md ("The modelled device") for every value and where it
// comes from. Member names are CUDA's.
struct cudaDeviceProp {
    char name[256];
    char uuid[16];
    size_t totalGlobalMem;
    size_t sharedMemPerBlock;
    int regsPerBlock;
    int warpSize;
    size_t memPitch;
    int maxThreadsPerBlock;
    int maxThreadsDim[3];
    int maxGridSize[3];
    int clockRate;
    size_t totalConstMem;
    int major;
    int minor;
    size_t textureAlignment;
    size_t texturePitchAlignment;
    int deviceOverlap;
    int multiProcessorCount;
    int kernelExecTimeoutEnabled;
    int integrated;
    int canMapHostMemory;
    int computeMode;
    int concurrentKernels;
    int ECCEnabled;
    int pciBusID;
    int pciDeviceID;
    int pciDomainID;
    int tccDriver;
    int asyncEngineCount;
    int unifiedAddressing;
    int memoryClockRate;
    int memoryBusWidth;
    int l2CacheSize;
    int persistingL2CacheMaxSize;
    int maxThreadsPerMultiProcessor;
    int streamPrioritiesSupported;
    int globalL1CacheSupported;
    int localL1CacheSupported;
    size_t sharedMemPerMultiprocessor;
    int regsPerMultiprocessor;
    int managedMemory;
    int isMultiGpuBoard;
    int multiGpuBoardGroupID;
    int singleToDoublePrecisionPerfRatio;
    int pageableMemoryAccess;
    int concurrentManagedAccess;
    int computePreemptionSupported;
    int canUseHostPointerForRegisteredMem;
    int cooperativeLaunch;
    int cooperativeMultiDeviceLaunch;
    size_t sharedMemPerBlockOptin;
    int pageableMemoryAccessUsesHostPageTables;
    int directManagedMemAccessFromHost;
    int maxBlocksPerMultiProcessor;
    int accessPolicyMaxWindowSize;
    size_t reservedSharedMemPerBlock;
    int hostRegisterSupported;
    int sparseCudaArraySupported;
    int hostRegisterReadOnlySupported;
    int timelineSemaphoreInteropSupported;
    int memoryPoolsSupported;
    int gpuDirectRDMASupported;
    int clusterLaunch;
    int unifiedFunctionPointers;
};

enum cudaComputeMode {
    cudaComputeModeDefault = 0,
    cudaComputeModeExclusive = 1,
    cudaComputeModeProhibited = 2,
    cudaComputeModeExclusiveProcess = 3,
};

#define cudaOccupancyDefault 0x00u
#define cudaOccupancyDisableCachingOverride 0x01u

enum cudaFuncCache {
    cudaFuncCachePreferNone = 0,
    cudaFuncCachePreferShared = 1,
    cudaFuncCachePreferL1 = 2,
    cudaFuncCachePreferEqual = 3,
};

enum cudaSharedMemConfig {
    cudaSharedMemBankSizeDefault = 0,
    cudaSharedMemBankSizeFourByte = 1,
    cudaSharedMemBankSizeEightByte = 2,
};

extern "C" {
SIM_API cudaError_t cudaEventCreate(cudaEvent_t* event);
SIM_API cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int flags);
SIM_API cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream = 0);
SIM_API cudaError_t cudaEventRecordWithFlags(cudaEvent_t event, cudaStream_t stream = 0, unsigned int flags = 0);
SIM_API cudaError_t cudaEventQuery(cudaEvent_t event);
SIM_API cudaError_t cudaEventSynchronize(cudaEvent_t event);
SIM_API cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end);
SIM_API cudaError_t cudaEventDestroy(cudaEvent_t event);
SIM_API cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags = 0);
SIM_API cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned int flags);
SIM_API cudaError_t cudaStreamCreateWithPriority(cudaStream_t* stream, unsigned int flags, int priority);
SIM_API cudaError_t cudaStreamQuery(cudaStream_t stream);
SIM_API cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void* user_data);
SIM_API cudaError_t cudaStreamAddCallback(cudaStream_t stream, cudaStreamCallback_t callback, void* user_data,
                                          unsigned int flags);
SIM_API cudaError_t cudaDeviceGetStreamPriorityRange(int* least, int* greatest);
SIM_API cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp* prop, int device);
SIM_API cudaError_t cudaMemGetInfo(size_t* free_bytes, size_t* total_bytes);
SIM_API cudaError_t cudaHostAlloc(void** ptr, size_t size, unsigned int flags);
SIM_API cudaError_t cudaHostGetDevicePointer(void** device_ptr, void* host_ptr, unsigned int flags);
SIM_API cudaError_t cudaHostRegister(void* ptr, size_t size, unsigned int flags);
SIM_API cudaError_t cudaHostUnregister(void* ptr);
SIM_API cudaError_t cudaSetDeviceFlags(unsigned int flags);
SIM_API cudaError_t cudaGetDeviceFlags(unsigned int* flags);
SIM_API cudaError_t cudaDeviceSetCacheConfig(enum cudaFuncCache config);
SIM_API cudaError_t cudaDeviceSetSharedMemConfig(enum cudaSharedMemConfig config);
SIM_API cudaError_t cudaDriverGetVersion(int* version);
SIM_API cudaError_t cudaRuntimeGetVersion(int* version);
SIM_API cudaError_t cudaMallocPitch(void** ptr, size_t* pitch, size_t width, size_t height);
SIM_API cudaError_t cudaMemcpy2D(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                                 size_t height, enum cudaMemcpyKind kind);
SIM_API cudaError_t cudaMemcpy2DAsync(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                                      size_t height, enum cudaMemcpyKind kind, cudaStream_t stream = 0);
SIM_API cudaError_t cudaMemset2D(void* ptr, size_t pitch, int value, size_t width, size_t height);
SIM_API cudaError_t cudaMemset2DAsync(void* ptr, size_t pitch, int value, size_t width, size_t height,
                                      cudaStream_t stream = 0);
SIM_API cudaError_t cudaDeviceSetLimit(enum cudaLimit limit, size_t value);
SIM_API cudaError_t cudaDeviceGetLimit(size_t* value, enum cudaLimit limit);
SIM_API cudaError_t cudaProfilerStart(void);
SIM_API cudaError_t cudaProfilerStop(void);
}

// ---- occupancy ---------------------------------------------------------------------------------
// Modelled on the device above from the block size and the dynamic shared memory only: the
// simulator does not know a kernel's registers or static shared memory (README, "Occupancy").
namespace sim {
SIM_API int occupancy_blocks_per_sm(int block_size, size_t dynamic_smem);
SIM_API int occupancy_sm_count();
}  // namespace sim

template <class K>
static inline cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int* num_blocks, K* kernel,
                                                                               int block_size, size_t dynamic_smem,
                                                                               unsigned int flags) {
    (void)kernel;
    if (num_blocks == nullptr || block_size <= 0 || flags > 1) return cudaErrorInvalidValue;
    *num_blocks = sim::occupancy_blocks_per_sm(block_size, dynamic_smem);
    return cudaSuccess;
}
template <class K>
static inline cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* num_blocks, K* kernel, int block_size,
                                                                        size_t dynamic_smem) {
    return cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(num_blocks, kernel, block_size, dynamic_smem, 0);
}
// The block size (a multiple of 32, at most block_size_limit) that keeps the most threads
// resident per multiprocessor, the larger on a tie; min_grid_size fills every multiprocessor.
template <class K, class SmemOf>
static inline cudaError_t cudaOccupancyMaxPotentialBlockSizeVariableSMemWithFlags(
    int* min_grid_size, int* block_size, K* kernel, SmemOf smem_of_block_size, int block_size_limit = 0,
    unsigned int flags = 0) {
    (void)kernel;
    if (min_grid_size == nullptr || block_size == nullptr || flags > 1) return cudaErrorInvalidValue;
    int limit = block_size_limit <= 0 || block_size_limit > 1024 ? 1024 : block_size_limit;
    int best = 0, best_blocks = 0;
    for (int b = (limit + 31) / 32 * 32; b >= 32; b -= 32) {
        const int size = b > limit ? limit : b;
        const int blocks = sim::occupancy_blocks_per_sm(size, (size_t)smem_of_block_size(size));
        if ((long)blocks * size > (long)best_blocks * best) {
            best = size;
            best_blocks = blocks;
        }
    }
    *block_size = best;
    *min_grid_size = best_blocks * sim::occupancy_sm_count();
    return cudaSuccess;
}
template <class K, class SmemOf>
static inline cudaError_t cudaOccupancyMaxPotentialBlockSizeVariableSMem(int* min_grid_size, int* block_size,
                                                                         K* kernel, SmemOf smem_of_block_size,
                                                                         int block_size_limit = 0) {
    return cudaOccupancyMaxPotentialBlockSizeVariableSMemWithFlags(min_grid_size, block_size, kernel,
                                                                   smem_of_block_size, block_size_limit, 0);
}
template <class K>
static inline cudaError_t cudaOccupancyMaxPotentialBlockSizeWithFlags(int* min_grid_size, int* block_size,
                                                                      K* kernel, size_t dynamic_smem = 0,
                                                                      int block_size_limit = 0,
                                                                      unsigned int flags = 0) {
    return cudaOccupancyMaxPotentialBlockSizeVariableSMemWithFlags(
        min_grid_size, block_size, kernel, [dynamic_smem](int) { return dynamic_smem; }, block_size_limit, flags);
}
template <class K>
static inline cudaError_t cudaOccupancyMaxPotentialBlockSize(int* min_grid_size, int* block_size, K* kernel,
                                                             size_t dynamic_smem = 0, int block_size_limit = 0) {
    return cudaOccupancyMaxPotentialBlockSizeWithFlags(min_grid_size, block_size, kernel, dynamic_smem,
                                                       block_size_limit, 0);
}
template <class K>
static inline cudaError_t cudaOccupancyAvailableDynamicSMemPerBlock(size_t* smem, K* kernel, int num_blocks,
                                                                    int block_size) {
    (void)kernel;
    if (smem == nullptr || num_blocks <= 0 || block_size <= 0 || block_size > 1024) return cudaErrorInvalidValue;
    const size_t per_block = (228u * 1024u) / (size_t)num_blocks;
    *smem = per_block > 1024 ? per_block - 1024 : 0;
    if (*smem > 227u * 1024u) *smem = 227u * 1024u;
    return cudaSuccess;
}

template <class T>
static inline cudaError_t cudaHostAlloc(T** ptr, size_t size, unsigned int flags) {
    return cudaHostAlloc(reinterpret_cast<void**>(ptr), size, flags);
}
template <class T>
static inline cudaError_t cudaHostGetDevicePointer(T** device_ptr, void* host_ptr, unsigned int flags) {
    return cudaHostGetDevicePointer(reinterpret_cast<void**>(device_ptr), host_ptr, flags);
}
template <class T>
static inline cudaError_t cudaMallocPitch(T** ptr, size_t* pitch, size_t width, size_t height) {
    return cudaMallocPitch(reinterpret_cast<void**>(ptr), pitch, width, height);
}
template <class K>
static inline cudaError_t cudaFuncSetCacheConfig(K* kernel, enum cudaFuncCache config) {
    (void)kernel;
    return (int)config >= 0 && (int)config <= 3 ? cudaSuccess : cudaErrorInvalidValue;
}

// ---- launch machinery ------------------------------------------------------------------
namespace sim {

template <class T>
struct nondeduced {
    using type = T;
};

struct LaunchSpec {
    dim3 grid;
    dim3 block;
    size_t smem;
    cudaStream_t stream;
    bool barrier_free = false;  // reaches no barrier, warp operation or other wait: threads may run as a plain loop
};

SIM_API void launch_raw(const LaunchSpec& spec, const char* name, const char* file, int line, const void* kernel,
                        void (*invoke)(void*), void* pack);

// A kernel and its converted arguments. A launch runs it from the caller's stack; a launch
// made while a stream capture is active copies it to the heap and the graph node owns it.
template <class F, class Tuple>
struct Packed {
    F fn;
    Tuple args;
    static void invoke(void* p) {
        Packed* pk = static_cast<Packed*>(p);
        std::apply(pk->fn, pk->args);
    }
    static void destroy(void* p) { delete static_cast<Packed*>(p); }
};

// Stream capture (graphs.cpp): true while a capture is active (every stream is one stream).
SIM_API bool capturing(cudaStream_t stream);
// Records a launch in the capturing graph; the node takes ownership of ``pack``.
SIM_API void capture_kernel(const LaunchSpec& spec, const char* name, const char* file, int line, const void* kernel,
                            void (*invoke)(void*), void (*destroy)(void*), void* pack);

// Runs a launch, or records it when a capture is active. Every launch template goes through here.
template <class F, class Tuple>
static inline void dispatch(const LaunchSpec& spec, const char* name, const char* file, int line,
                            const void* kernel, F fn, Tuple&& args) {
    using Pk = Packed<F, std::decay_t<Tuple>>;
    if (capturing(spec.stream)) {
        capture_kernel(spec, name, file, line, kernel, &Pk::invoke, &Pk::destroy,
                       new Pk{fn, std::forward<Tuple>(args)});
        return;
    }
    Pk pack{fn, std::forward<Tuple>(args)};
    launch_raw(spec, name, file, line, kernel, &Pk::invoke, &pack);
}

// ---- the kernel registry (kernel_registry.cpp) -----------------------------------------------
// A launch by address (cudaLaunchKernel, cudaLaunchKernelExC, a graph's kernel node) passes
// the arguments as `void** args`; the registry knows, per kernel address, how to copy them
// into the kernel's parameter types. Every <<<>>> launch and every typed launch form
// registers its kernel on first use; the front end registers every kernel definition.
// make_pack returns a heap Packed that ``destroy`` frees.
using MakePack = void* (*)(const void* kernel, void** args);
SIM_API bool register_kernel_raw(const void* kernel, const char* name, int nparams, MakePack make,
                                 void (*invoke)(void*), void (*destroy)(void*));

template <class... P>
struct KernelPacker {
    using Fn = void (*)(P...);
    using Pk = Packed<Fn, std::tuple<std::decay_t<P>...>>;
    template <size_t... I>
    static void* make_at(const void* kernel, void** args, std::index_sequence<I...>) {
        (void)args;
        return new Pk{reinterpret_cast<Fn>(const_cast<void*>(kernel)),
                      std::tuple<std::decay_t<P>...>(*static_cast<std::decay_t<P>*>(args[I])...)};
    }
    static void* make(const void* kernel, void** args) {
        return make_at(kernel, args, std::index_sequence_for<P...>{});
    }
};

// Records ``k`` (with its name for reports; may be null) so that it can be launched by
// address. Cheap after the first call for a kernel; true when ``k`` is (now) registered.
template <class... P>
static inline bool register_kernel(void (*k)(P...), const char* name) {
    if (k == nullptr) return false;
    return register_kernel_raw(reinterpret_cast<const void*>(k), name, (int)sizeof...(P),
                               &KernelPacker<P...>::make, &KernelPacker<P...>::Pk::invoke,
                               &KernelPacker<P...>::Pk::destroy);
}

// A <<<grid, block, smem, stream>>> launch, as the build rewrites it: the arguments convert
// to the kernel's parameter types once, on the host, like a real launch. ``spec`` carries the
// launch configuration and whether the kernel is barrier-free (then a fast build runs each
// block's threads as a plain loop instead of fibers).
template <class... P>
static inline void launch(const LaunchSpec& spec, const char* name, const char* file, int line,
                          void (*kernel)(P...), typename nondeduced<std::decay_t<P>>::type... args) {
    register_kernel(kernel, name);
    dispatch(spec, name, file, line, reinterpret_cast<const void*>(kernel), kernel,
             std::tuple<std::decay_t<P>...>(args...));
}

template <class... P>
static inline void launch(const char* name, const char* file, int line, dim3 grid, dim3 block, size_t smem,
                          cudaStream_t stream, void (*kernel)(P...),
                          typename nondeduced<std::decay_t<P>>::type... args) {
    launch<P...>(LaunchSpec{grid, block, smem, stream}, name, file, line, kernel, args...);
}

// A launch of a kernel template whose arguments are deduced from the call, as the build
// rewrites it: ``call`` is a generic lambda that calls the kernel by name.
template <class F, class... A>
static inline void launch_deduced(const LaunchSpec& spec, const char* name, const char* file, int line, F call,
                                  A&&... args) {
    dispatch(spec, name, file, line, nullptr, call, std::tuple<std::decay_t<A>...>(std::forward<A>(args)...));
}

// The form the front end emits: barrier_free is its finding that the kernel reaches no barrier
// or other wait.
template <class F, class... A>
static inline void launch_deduced(const char* name, const char* file, int line, dim3 grid, dim3 block, size_t smem,
                                  cudaStream_t stream, bool barrier_free, F call, A&&... args) {
    launch_deduced(LaunchSpec{grid, block, smem, stream, barrier_free}, name, file, line, call,
                   std::forward<A>(args)...);
}

}  // namespace sim

// ---- launches --------------------------------------------------------------------------------
namespace sim {

// Passed instead of a call-by-name function when the launched kernel is an expression (a
// pointer through a table, a conditional, ...): C++ applies no default arguments through a
// pointer, so every argument must be given.
struct no_default_args {};

template <size_t N, class Tuple, class Seq = std::make_index_sequence<N>>
struct tuple_prefix;
template <size_t N, class Tuple, size_t... I>
struct tuple_prefix<N, Tuple, std::index_sequence<I...>> {
    using type = std::tuple<std::tuple_element_t<I, Tuple>...>;
};

// One call operator per accepted argument count: its parameters are the kernel's first
// sizeof...(T) parameter types, so arguments convert at the call site as in a real launch
// (a literal 0 or NULL becomes a null pointer, a double a float, ...).
template <class Self, class Prefix>
struct launch_with;
template <class Self, class... T>
struct launch_with<Self, std::tuple<T...>> {
    void operator()(T... args) const {
        static_cast<const Self&>(*this).run(std::tuple<T...>(std::move(args)...));
    }
};

template <class F>
struct by_name_counts {
    template <size_t M>
    using type = std::make_index_sequence<M + 1>;  // every prefix: defaults fill the rest
};
template <>
struct by_name_counts<no_default_args> {
    template <size_t M>
    using type = std::index_sequence<M>;  // all arguments
};

template <class F, class Seq, class... P>
struct Launcher;
template <class F, size_t... N, class... P>
struct Launcher<F, std::index_sequence<N...>, P...>
    : launch_with<Launcher<F, std::index_sequence<N...>, P...>,
                  typename tuple_prefix<N, std::tuple<std::decay_t<P>...>>::type>... {
    using launch_with<Launcher, typename tuple_prefix<N, std::tuple<std::decay_t<P>...>>::type>::operator()...;

    const char* name;
    const char* file;
    int line;
    LaunchSpec spec;
    void (*kernel)(P...);
    F by_name;

    Launcher(const char* n, const char* f, int l, const LaunchSpec& s, void (*k)(P...), F b)
        : name(n), file(f), line(l), spec(s), kernel(k), by_name(b) {}

    template <class... T>
    void run(std::tuple<T...>&& args) const {
        const void* address = reinterpret_cast<const void*>(kernel);
        if (kernel == nullptr) {
            // Launching a null kernel pointer: a GPU refuses it with cudaErrorInvalidDeviceFunction.
            launch_raw(spec, name, file, line, nullptr, nullptr, nullptr);
            return;
        }
        register_kernel(kernel, name);
        if constexpr (sizeof...(T) == sizeof...(P)) {
            dispatch(spec, name, file, line, address, kernel, std::move(args));
        } else {
            // Fewer arguments than parameters: call the kernel by name so its defaults apply.
            dispatch(spec, name, file, line, address, by_name, std::move(args));
        }
    }
};

// `kernel<<<grid, block, smem, stream>>>(args)` becomes
// `::sim::launcher(name, __FILE__, __LINE__, grid, block, smem, stream, kernel, by_name, barrier_free)(args)`,
// where barrier_free is the front end's finding that the kernel reaches no barrier or other wait;
// or, with the whole configuration in a LaunchSpec, `::sim::launcher(spec, name, __FILE__,
// __LINE__, kernel, by_name)(args)`.
template <class F, class... P>
static inline auto launcher(const LaunchSpec& spec, const char* name, const char* file, int line,
                            void (*kernel)(P...), F by_name) {
    using Counts = typename by_name_counts<F>::template type<sizeof...(P)>;
    return Launcher<F, Counts, P...>(name, file, line, spec, kernel, by_name);
}

template <class F, class... P>
static inline auto launcher(const char* name, const char* file, int line, dim3 grid, dim3 block, size_t smem,
                            cudaStream_t stream, void (*kernel)(P...), F by_name, bool barrier_free = false) {
    return launcher(LaunchSpec{grid, block, smem, stream, barrier_free}, name, file, line, kernel, by_name);
}

}  // namespace sim

// ---- stream-ordered memory and memory pools (mem_pools.cpp) ----------------------------------
// Streams run in order, so an allocation on a stream is ready when the call returns and a
// stream-ordered free is a free. Pools keep their attributes and usage counters; memory is
// never cached between frees (a release threshold is kept, and has no effect).
struct CUmemPoolHandle_st;
typedef struct CUmemPoolHandle_st* cudaMemPool_t;

enum cudaMemPoolAttr {
    cudaMemPoolReuseFollowEventDependencies = 0x1,
    cudaMemPoolReuseAllowOpportunistic = 0x2,
    cudaMemPoolReuseAllowInternalDependencies = 0x3,
    cudaMemPoolAttrReleaseThreshold = 0x4,
    cudaMemPoolAttrReservedMemCurrent = 0x5,
    cudaMemPoolAttrReservedMemHigh = 0x6,
    cudaMemPoolAttrUsedMemCurrent = 0x7,
    cudaMemPoolAttrUsedMemHigh = 0x8,
};
enum cudaMemAllocationType { cudaMemAllocationTypeInvalid = 0x0, cudaMemAllocationTypePinned = 0x1 };
enum cudaMemAllocationHandleType {
    cudaMemHandleTypeNone = 0x0,
    cudaMemHandleTypePosixFileDescriptor = 0x1,
    cudaMemHandleTypeWin32 = 0x2,
    cudaMemHandleTypeWin32Kmt = 0x4,
    cudaMemHandleTypeFabric = 0x8,
};
enum cudaMemLocationType { cudaMemLocationTypeInvalid = 0, cudaMemLocationTypeDevice = 1 };
enum cudaMemAccessFlags {
    cudaMemAccessFlagsProtNone = 0,
    cudaMemAccessFlagsProtRead = 1,
    cudaMemAccessFlagsProtReadWrite = 3,
};
struct cudaMemLocation {
    enum cudaMemLocationType type;
    int id;
};
struct cudaMemPoolProps {
    enum cudaMemAllocationType allocType;
    enum cudaMemAllocationHandleType handleTypes;
    struct cudaMemLocation location;
    void* win32SecurityAttributes;
    size_t maxSize;
    unsigned short usage;
    unsigned char reserved[54];
};
struct cudaMemAccessDesc {
    struct cudaMemLocation location;
    enum cudaMemAccessFlags flags;
};

extern "C" {
SIM_API cudaError_t cudaMallocAsync(void** ptr, size_t size, cudaStream_t stream);
SIM_API cudaError_t cudaFreeAsync(void* ptr, cudaStream_t stream);
SIM_API cudaError_t cudaMallocFromPoolAsync(void** ptr, size_t size, cudaMemPool_t pool, cudaStream_t stream);
SIM_API cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t* pool, int device);
SIM_API cudaError_t cudaDeviceGetMemPool(cudaMemPool_t* pool, int device);
SIM_API cudaError_t cudaDeviceSetMemPool(int device, cudaMemPool_t pool);
SIM_API cudaError_t cudaMemPoolCreate(cudaMemPool_t* pool, const struct cudaMemPoolProps* props);
SIM_API cudaError_t cudaMemPoolDestroy(cudaMemPool_t pool);
SIM_API cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t pool, enum cudaMemPoolAttr attr, void* value);
SIM_API cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t pool, enum cudaMemPoolAttr attr, void* value);
SIM_API cudaError_t cudaMemPoolTrimTo(cudaMemPool_t pool, size_t min_bytes_to_keep);
SIM_API cudaError_t cudaMemPoolSetAccess(cudaMemPool_t pool, const struct cudaMemAccessDesc* descs, size_t count);
SIM_API cudaError_t cudaMemPoolGetAccess(enum cudaMemAccessFlags* flags, cudaMemPool_t pool,
                                         struct cudaMemLocation* location);
}

template <class T>
static inline cudaError_t cudaMallocAsync(T** ptr, size_t size, cudaStream_t stream) {
    return cudaMallocAsync(reinterpret_cast<void**>(ptr), size, stream);
}
template <class T>
static inline cudaError_t cudaMallocAsync(T** ptr, size_t size, cudaMemPool_t pool, cudaStream_t stream) {
    return cudaMallocFromPoolAsync(reinterpret_cast<void**>(ptr), size, pool, stream);
}
template <class T>
static inline cudaError_t cudaMallocFromPoolAsync(T** ptr, size_t size, cudaMemPool_t pool, cudaStream_t stream) {
    return cudaMallocFromPoolAsync(reinterpret_cast<void**>(ptr), size, pool, stream);
}

// ---- stream and launch attributes (mem_pools.cpp) ----------------------------------------------
// Accepted and kept per stream; an access policy window is checked against the modelled
// device's limits (cudaDeviceProp::accessPolicyMaxWindowSize) and has no other effect.
enum cudaAccessProperty {
    cudaAccessPropertyNormal = 0,
    cudaAccessPropertyStreaming = 1,
    cudaAccessPropertyPersisting = 2,
};
struct cudaAccessPolicyWindow {
    void* base_ptr;
    size_t num_bytes;
    float hitRatio;
    enum cudaAccessProperty hitProp;
    enum cudaAccessProperty missProp;
};
enum cudaSynchronizationPolicy {
    cudaSyncPolicyAuto = 1,
    cudaSyncPolicySpin = 2,
    cudaSyncPolicyYield = 3,
    cudaSyncPolicyBlockingSync = 4,
};
enum cudaLaunchAttributeID {
    cudaLaunchAttributeIgnore = 0,
    cudaLaunchAttributeAccessPolicyWindow = 1,
    cudaLaunchAttributeCooperative = 2,
    cudaLaunchAttributeSynchronizationPolicy = 3,
    cudaLaunchAttributeClusterDimension = 4,
    cudaLaunchAttributeClusterSchedulingPolicyPreference = 5,
    cudaLaunchAttributeProgrammaticStreamSerialization = 6,
    cudaLaunchAttributeProgrammaticEvent = 7,
    cudaLaunchAttributePriority = 8,
};
union cudaLaunchAttributeValue {
    char pad[64];
    struct cudaAccessPolicyWindow accessPolicyWindow;
    int cooperative;
    enum cudaSynchronizationPolicy syncPolicy;
    struct {
        unsigned int x, y, z;
    } clusterDim;
    int priority;
};
typedef enum cudaLaunchAttributeID cudaStreamAttrID;
typedef union cudaLaunchAttributeValue cudaStreamAttrValue;
#define cudaStreamAttributeAccessPolicyWindow cudaLaunchAttributeAccessPolicyWindow
#define cudaStreamAttributeSynchronizationPolicy cudaLaunchAttributeSynchronizationPolicy
#define cudaStreamAttributePriority cudaLaunchAttributePriority

extern "C" {
SIM_API cudaError_t cudaStreamSetAttribute(cudaStream_t stream, cudaStreamAttrID attr,
                                           const cudaStreamAttrValue* value);
SIM_API cudaError_t cudaStreamGetAttribute(cudaStream_t stream, cudaStreamAttrID attr, cudaStreamAttrValue* value);
SIM_API cudaError_t cudaCtxResetPersistingL2Cache(void);
SIM_API cudaError_t cudaDeviceResetPersistingL2Cache(void);
}

// ---- names gone from current CUDA (legacy_api.cpp) -------------------------------------------
// Removed from the CUDA 12/13 toolkits but common in older code (suites, textbooks): each runs
// as its current equivalent and prints a one-line note, once, naming that equivalent.
extern "C" {
SIM_API cudaError_t cudaThreadSynchronize(void);
SIM_API cudaError_t cudaThreadExit(void);
SIM_API cudaError_t cudaThreadSetLimit(enum cudaLimit limit, size_t value);
SIM_API cudaError_t cudaThreadGetLimit(size_t* value, enum cudaLimit limit);
SIM_API cudaError_t cudaThreadSetCacheConfig(enum cudaFuncCache config);
SIM_API cudaError_t cudaThreadGetCacheConfig(enum cudaFuncCache* config);
SIM_API cudaError_t cudaDeviceGetCacheConfig(enum cudaFuncCache* config);
}

// ---- launches by address, CUDA graphs and stream capture (kernel_registry.cpp, graphs.cpp) -----
// A graph memcpy node takes the 3-D copy descriptors that sim_textures.h defines with CUDA arrays.
#include "sim_textures.h"

// A launch by address (cudaLaunchKernel, cudaLaunchKernelExC, a kernel node) needs the kernel
// in the registry (above): every <<<>>> launch and every typed form below registers its
// kernel, and the front end registers every kernel definition; an address never registered
// is refused with cudaErrorInvalidDeviceFunction and a one-line note. Graphs replay their
// nodes synchronously, in a topological order (creation order among ready nodes). Capture
// covers every stream (streams are one stream here): work issued on another stream during a
// capture is captured too. Captured: launches, cudaMemcpyAsync, cudaMemsetAsync,
// cudaLaunchHostFunc; every other call runs at once, as outside a capture.
struct CUgraph_st;
typedef struct CUgraph_st* cudaGraph_t;
struct CUgraphNode_st;
typedef struct CUgraphNode_st* cudaGraphNode_t;
struct CUgraphExec_st;
typedef struct CUgraphExec_st* cudaGraphExec_t;
struct cudaMemcpy3DParms;

enum cudaStreamCaptureStatus {
    cudaStreamCaptureStatusNone = 0,
    cudaStreamCaptureStatusActive = 1,
    cudaStreamCaptureStatusInvalidated = 2,
};
enum cudaStreamCaptureMode {
    cudaStreamCaptureModeGlobal = 0,
    cudaStreamCaptureModeThreadLocal = 1,
    cudaStreamCaptureModeRelaxed = 2,
};
enum cudaGraphNodeType {
    cudaGraphNodeTypeKernel = 0x00,
    cudaGraphNodeTypeMemcpy = 0x01,
    cudaGraphNodeTypeMemset = 0x02,
    cudaGraphNodeTypeHost = 0x03,
    cudaGraphNodeTypeGraph = 0x04,
    cudaGraphNodeTypeEmpty = 0x05,
    cudaGraphNodeTypeWaitEvent = 0x06,
    cudaGraphNodeTypeEventRecord = 0x07,
    cudaGraphNodeTypeExtSemaphoreSignal = 0x08,
    cudaGraphNodeTypeExtSemaphoreWait = 0x09,
    cudaGraphNodeTypeMemAlloc = 0x0a,
    cudaGraphNodeTypeMemFree = 0x0b,
    cudaGraphNodeTypeConditional = 0x0d,
    cudaGraphNodeTypeCount,
};
enum cudaGraphExecUpdateResult {
    cudaGraphExecUpdateSuccess = 0x0,
    cudaGraphExecUpdateError = 0x1,
    cudaGraphExecUpdateErrorTopologyChanged = 0x2,
    cudaGraphExecUpdateErrorNodeTypeChanged = 0x3,
    cudaGraphExecUpdateErrorFunctionChanged = 0x4,
    cudaGraphExecUpdateErrorParametersChanged = 0x5,
    cudaGraphExecUpdateErrorNotSupported = 0x6,
    cudaGraphExecUpdateErrorUnsupportedFunctionChange = 0x7,
    cudaGraphExecUpdateErrorAttributesChanged = 0x8,
};
typedef struct cudaGraphExecUpdateResultInfo_st {
    enum cudaGraphExecUpdateResult result;
    cudaGraphNode_t errorNode;
    cudaGraphNode_t errorFromNode;
} cudaGraphExecUpdateResultInfo;
enum cudaGraphInstantiateFlags {
    cudaGraphInstantiateFlagAutoFreeOnLaunch = 1,
    cudaGraphInstantiateFlagUpload = 2,
    cudaGraphInstantiateFlagDeviceLaunch = 4,
    cudaGraphInstantiateFlagUseNodePriority = 8,
};
typedef struct cudaGraphEdgeData_st {
    unsigned char from_port;
    unsigned char to_port;
    unsigned char type;
    unsigned char reserved[5];
} cudaGraphEdgeData;

struct cudaKernelNodeParams {
    void* func;
    dim3 gridDim;
    dim3 blockDim;
    unsigned int sharedMemBytes;
    void** kernelParams;
    void** extra;
};
struct cudaMemsetParams {
    void* dst;
    size_t pitch;
    unsigned int value;
    unsigned int elementSize;
    size_t width;
    size_t height;
};
struct cudaHostNodeParams {
    cudaHostFn_t fn;
    void* userData;
};

typedef struct cudaLaunchAttribute_st {
    enum cudaLaunchAttributeID id;
    char pad[8 - sizeof(enum cudaLaunchAttributeID)];
    union cudaLaunchAttributeValue val;
} cudaLaunchAttribute;
typedef struct cudaLaunchConfig_st {
    dim3 gridDim;
    dim3 blockDim;
    size_t dynamicSmemBytes;
    cudaStream_t stream;
    cudaLaunchAttribute* attrs;
    unsigned int numAttrs;
} cudaLaunchConfig_t;

// What the simulator knows of a kernel: its block limit and the dynamic shared memory it may
// ask for; registers and static shared/local memory are not known and read 0.
struct cudaFuncAttributes {
    size_t sharedSizeBytes;
    size_t constSizeBytes;
    size_t localSizeBytes;
    int maxThreadsPerBlock;
    int numRegs;
    int ptxVersion;
    int binaryVersion;
    int cacheModeCA;
    int maxDynamicSharedSizeBytes;
    int preferredShmemCarveout;
    int clusterDimMustBeSet;
    int requiredClusterWidth;
    int requiredClusterHeight;
    int requiredClusterDepth;
    int clusterSchedulingPolicyPreference;
    int nonPortableClusterSizeAllowed;
    int reserved[16];
};

namespace sim {
// A launch by address from FILE:LINE (the call site of the launch form); cooperative launches
// are refused with cudaErrorNotSupported.
SIM_API cudaError_t launch_by_address(const void* func, const LaunchSpec& spec, void** args, bool cooperative,
                                      const char* file, int line);
SIM_API cudaError_t launch_ex(const cudaLaunchConfig_t* config, const void* func, void** args, const char* file,
                              int line);
SIM_API cudaError_t func_get_attributes(struct cudaFuncAttributes* attr, const void* func);

// The call site of a cudaLaunchKernelEx: a conversion from the config pointer, so that the
// caller's file and line travel with it through the variadic template.
struct ConfigAt {
    const cudaLaunchConfig_t* config;
    const char* file;
    int line;
    ConfigAt(const cudaLaunchConfig_t* c, const char* f = __builtin_FILE(), int l = __builtin_LINE())
        : config(c), file(f), line(l) {}
};

template <class T>
static inline void register_if_kernel(T* func) {
    if constexpr (std::is_function<T>::value) register_kernel(func, nullptr);
}
}  // namespace sim

template <class T>
static inline cudaError_t cudaLaunchKernel(T* func, dim3 grid, dim3 block, void** args, size_t smem = 0,
                                           cudaStream_t stream = 0, const char* file = __builtin_FILE(),
                                           int line = __builtin_LINE()) {
    sim::register_if_kernel(func);
    return sim::launch_by_address(reinterpret_cast<const void*>(func), sim::LaunchSpec{grid, block, smem, stream},
                                  args, false, file, line);
}
static inline cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t* config, const void* func, void** args,
                                              const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    return sim::launch_ex(config, func, args, file, line);
}
template <class... P, class... A>
static inline cudaError_t cudaLaunchKernelEx(sim::ConfigAt at, void (*kernel)(P...), A&&... args) {
    sim::register_kernel(kernel, nullptr);
    return [&](P... converted) {
        void* arg_ptrs[sizeof...(P) + 1] = {&converted..., nullptr};
        return sim::launch_ex(at.config, reinterpret_cast<const void*>(kernel), arg_ptrs, at.file, at.line);
    }(std::forward<A>(args)...);
}
template <class T>
static inline cudaError_t cudaLaunchCooperativeKernel(T* func, dim3 grid, dim3 block, void** args, size_t smem = 0,
                                                      cudaStream_t stream = 0, const char* file = __builtin_FILE(),
                                                      int line = __builtin_LINE()) {
    sim::register_if_kernel(func);
    return sim::launch_by_address(reinterpret_cast<const void*>(func), sim::LaunchSpec{grid, block, smem, stream},
                                  args, true, file, line);
}
template <class T>
static inline cudaError_t cudaFuncGetAttributes(struct cudaFuncAttributes* attr, T* func) {
    sim::register_if_kernel(func);
    return sim::func_get_attributes(attr, reinterpret_cast<const void*>(func));
}

extern "C" {
SIM_API cudaError_t cudaStreamBeginCapture(cudaStream_t stream, enum cudaStreamCaptureMode mode);
SIM_API cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t* graph);
SIM_API cudaError_t cudaStreamIsCapturing(cudaStream_t stream, enum cudaStreamCaptureStatus* status);
SIM_API cudaError_t cudaStreamGetCaptureInfo(cudaStream_t stream, enum cudaStreamCaptureStatus* status,
                                             unsigned long long* id = 0, cudaGraph_t* graph = 0,
                                             const cudaGraphNode_t** dependencies = 0,
                                             const cudaGraphEdgeData** edge_data = 0, size_t* num_dependencies = 0);
SIM_API cudaError_t cudaThreadExchangeStreamCaptureMode(enum cudaStreamCaptureMode* mode);
SIM_API cudaError_t cudaGraphCreate(cudaGraph_t* graph, unsigned int flags);
// The two trailing parameters (the caller's file and line, for reports) are the simulator's.
SIM_API cudaError_t cudaGraphAddKernelNode(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* deps,
                                           size_t num_deps, const struct cudaKernelNodeParams* params,
                                           const char* file = __builtin_FILE(), int line = __builtin_LINE());
SIM_API cudaError_t cudaGraphAddMemcpyNode(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* deps,
                                           size_t num_deps, const struct cudaMemcpy3DParms* params);
SIM_API cudaError_t cudaGraphAddMemcpyNode1D(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* deps,
                                             size_t num_deps, void* dst, const void* src, size_t count,
                                             enum cudaMemcpyKind kind);
SIM_API cudaError_t cudaGraphAddMemsetNode(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* deps,
                                           size_t num_deps, const struct cudaMemsetParams* params);
SIM_API cudaError_t cudaGraphAddHostNode(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* deps,
                                         size_t num_deps, const struct cudaHostNodeParams* params);
SIM_API cudaError_t cudaGraphAddEmptyNode(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* deps,
                                          size_t num_deps);
SIM_API cudaError_t cudaGraphAddDependencies(cudaGraph_t graph, const cudaGraphNode_t* from, const cudaGraphNode_t* to,
                                             const cudaGraphEdgeData* edge_data, size_t count);
SIM_API cudaError_t cudaGraphGetNodes(cudaGraph_t graph, cudaGraphNode_t* nodes, size_t* num_nodes);
SIM_API cudaError_t cudaGraphGetRootNodes(cudaGraph_t graph, cudaGraphNode_t* nodes, size_t* num_nodes);
SIM_API cudaError_t cudaGraphNodeGetType(cudaGraphNode_t node, enum cudaGraphNodeType* type);
SIM_API cudaError_t cudaGraphDestroy(cudaGraph_t graph);
SIM_API cudaError_t cudaGraphInstantiate(cudaGraphExec_t* exec, cudaGraph_t graph, unsigned long long flags = 0);
SIM_API cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t* exec, cudaGraph_t graph,
                                                  unsigned long long flags = 0);
SIM_API cudaError_t cudaGraphUpload(cudaGraphExec_t exec, cudaStream_t stream);
SIM_API cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream);
SIM_API cudaError_t cudaGraphExecUpdate(cudaGraphExec_t exec, cudaGraph_t graph,
                                        cudaGraphExecUpdateResultInfo* result_info);
SIM_API cudaError_t cudaGraphExecKernelNodeSetParams(cudaGraphExec_t exec, cudaGraphNode_t node,
                                                     const struct cudaKernelNodeParams* params);
SIM_API cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec);
}

// CUDA 12's forms, still in programs: instantiate with an error node and log buffer, and
// dependencies without edge data.
static inline cudaError_t cudaGraphInstantiate(cudaGraphExec_t* exec, cudaGraph_t graph, cudaGraphNode_t* error_node,
                                               char* log, size_t log_size) {
    (void)error_node;
    if (log != nullptr && log_size > 0) log[0] = '\0';
    return cudaGraphInstantiate(exec, graph, 0ull);
}
static inline cudaError_t cudaGraphAddDependencies(cudaGraph_t graph, const cudaGraphNode_t* from,
                                                   const cudaGraphNode_t* to, size_t count) {
    return cudaGraphAddDependencies(graph, from, to, nullptr, count);
}

#endif  // CUDA_CPU_SIMULATOR_HOST_API_H
