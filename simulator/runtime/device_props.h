// The modelled device (included by host_api.h): cudaDeviceProp, the device queries and the
// occupancy calculator, modelled on an sm_80 GPU. Definitions are in device_props.cpp.
#ifndef CUDA_CPU_SIMULATOR_DEVICE_PROPS_H
#define CUDA_CPU_SIMULATOR_DEVICE_PROPS_H

// ---- the modelled device ---------------------------------------------------------------------
// One device, modelled on an sm_80 GPU wherever a value is a launch limit the simulator
// enforces; see simulator/docs/supported.md ("The modelled device") for every value and where it
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
// simulator does not know a kernel's registers or static shared memory (simulator/docs/supported.md, "Occupancy").
namespace sim {
SIM_API int occupancy_blocks_per_sm(int block_size, size_t dynamic_smem);
SIM_API int occupancy_sm_count();
// Registers a kernel named by a typed call (host_api.h), so that a kernel template's instance
// that a program names only here can then be launched by address (cudaLaunchCooperativeKernel).
template <class T>
static inline void register_if_kernel(T* func);
}  // namespace sim

template <class K>
static inline cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int* num_blocks, K* kernel,
                                                                               int block_size, size_t dynamic_smem,
                                                                               unsigned int flags) {
    if (kernel != nullptr) sim::register_if_kernel(kernel);
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
    if (kernel != nullptr) sim::register_if_kernel(kernel);
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

#endif  // CUDA_CPU_SIMULATOR_DEVICE_PROPS_H
