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

// ---- error codes and host types --------------------------------------------------------------
// Every error code the runtime knows: name, value and cudaGetErrorString's text (errors.cpp).
// Some (cudaErrorAddressOfConstant, cudaErrorTextureFetchFailed, cudaErrorTextureNotBound,
// cudaErrorSynchronizationError, cudaErrorMixedDeviceExecution, cudaErrorNotYetImplemented,
// cudaErrorMemoryValueTooLarge, cudaErrorPriorLaunchFailure, cudaErrorInvalidHostPointer) are
// gone from CUDA 12/13; older programs still name them, and the simulator never returns them.
#include "cuda_errors.h"

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
// Peer access between the modelled devices (devices.cpp): any two distinct devices are peers,
// no device is a peer of itself, and a peer copy is a device-to-device copy.
SIM_API cudaError_t cudaDeviceCanAccessPeer(int* can_access, int device, int peer_device);
SIM_API cudaError_t cudaDeviceEnablePeerAccess(int peer_device, unsigned int flags);
SIM_API cudaError_t cudaDeviceDisablePeerAccess(int peer_device);
SIM_API cudaError_t cudaMemcpyPeer(void* dst, int dst_device, const void* src, int src_device, size_t count);
SIM_API cudaError_t cudaMemcpyPeerAsync(void* dst, int dst_device, const void* src, int src_device, size_t count,
                                        cudaStream_t stream);
SIM_API const char* cudaGetErrorString(cudaError_t error);
SIM_API const char* cudaGetErrorName(cudaError_t error);
}

// Which device an allocation belongs to (devices.cpp): device memory (cudaMalloc and the
// stream-ordered and pool allocations), managed memory and pinned host memory are known.
enum cudaMemoryType {
    cudaMemoryTypeUnregistered = 0,
    cudaMemoryTypeHost = 1,
    cudaMemoryTypeDevice = 2,
    cudaMemoryTypeManaged = 3,
};
struct cudaPointerAttributes {
    enum cudaMemoryType type;
    int device;
    void* devicePointer;
    void* hostPointer;
};
#define cudaInvalidDeviceId ((int)-2)
enum cudaDeviceP2PAttr {
    cudaDevP2PAttrPerformanceRank = 1,
    cudaDevP2PAttrAccessSupported = 2,
    cudaDevP2PAttrNativeAtomicSupported = 3,
    cudaDevP2PAttrCudaArrayAccessSupported = 4,
};
extern "C" {
SIM_API cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes* attributes, const void* ptr);
SIM_API cudaError_t cudaDeviceGetP2PAttribute(int* value, enum cudaDeviceP2PAttr attr, int src_device,
                                              int dst_device);
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
// A __device__/__constant__ variable's device address is its address (device memory is host
// memory here); CCCL's cuda::get_device_address calls this from host code.
template <class T>
static inline cudaError_t cudaGetSymbolAddress(void** dev_ptr, const T& symbol) {
    if (dev_ptr == nullptr) return cudaErrorInvalidValue;
    *dev_ptr = const_cast<void*>(static_cast<const void*>(&symbol));
    return cudaSuccess;
}
template <class T>
static inline cudaError_t cudaGetSymbolSize(size_t* size, const T& symbol) {
    (void)symbol;
    if (size == nullptr) return cudaErrorInvalidValue;
    *size = sizeof(T);
    return cudaSuccess;
}

// A symbol named by a string (removed in CUDA 5, still in older code such as Rodinia's kmeans):
// the build registers each file-scope __device__/__constant__ variable under its name
// (runtime/legacy_api.cpp). An unknown name is cudaErrorInvalidSymbol.
namespace sim {
SIM_API bool register_symbol_name(const char* name, const void* address, size_t size);
}  // namespace sim
SIM_API cudaError_t cudaMemcpyToSymbol(const char* symbol, const void* src, size_t count, size_t offset = 0,
                                       enum cudaMemcpyKind kind = cudaMemcpyHostToDevice);
SIM_API cudaError_t cudaMemcpyFromSymbol(void* dst, const char* symbol, size_t count, size_t offset = 0,
                                         enum cudaMemcpyKind kind = cudaMemcpyDeviceToHost);

// ---- events --------------------------------------------------------------------------------
// Launches and copies are synchronous, so an event records the host clock when it is recorded
// and cudaEventElapsedTime is the host time between two records.
struct CUevent_st;
typedef struct CUevent_st* cudaEvent_t;

#define cudaEventDefault 0x00u
#define cudaEventBlockingSync 0x01u
#define cudaEventDisableTiming 0x02u
#define cudaEventInterprocess 0x04u
// cudaEventRecordWithFlags / cudaStreamWaitEvent: during a stream capture, a graph event node.
#define cudaEventRecordDefault 0x00u
#define cudaEventRecordExternal 0x01u
#define cudaEventWaitDefault 0x00u
#define cudaEventWaitExternal 0x01u

// ---- streams -------------------------------------------------------------------------------
#define CUDART_CB
typedef void (*cudaHostFn_t)(void* user_data);
typedef void (*cudaStreamCallback_t)(cudaStream_t stream, cudaError_t status, void* user_data);
#define cudaStreamDefault 0x00u
#define cudaStreamNonBlocking 0x01u
#define cudaStreamLegacy ((cudaStream_t)0x1)
#define cudaStreamPerThread ((cudaStream_t)0x2)
// Device-side launch streams (dynamic parallelism): a tail launch runs after the launching grid
// and all its other work; a fire-and-forget launch runs independently of it.
#define cudaStreamTailLaunch ((cudaStream_t)0x3)
#define cudaStreamFireAndForget ((cudaStream_t)0x4)

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

// ---- the modelled device and occupancy (device_props.h) ---------------------------------
#include "device_props.h"

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

// ---- launches (launch.h) ------------------------------------------------------------------
#include "launch.h"

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
// in the registry (launch.h): every <<<>>> launch and every typed form below registers its
// kernel, and the front end registers every kernel definition; an address never registered
// is refused with cudaErrorInvalidDeviceFunction and a one-line note. CUDA graphs and stream
// capture: host_graphs.h.
#include "host_graphs.h"

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
// A launch by address from FILE:LINE (the call site of the launch form); a cooperative one keeps
// every block resident at once (grid.sync()) and fails with cudaErrorCooperativeLaunchTooLarge
// when the modelled device cannot hold its grid.
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

#endif  // CUDA_CPU_SIMULATOR_HOST_API_H
