// The modelled device (simulator/docs/device.md: "The modelled device"): its properties, the device queries
// (cudaGetDeviceProperties, cudaDeviceGetAttribute) and the occupancy model; how many devices
// there are and which one is current: devices.cpp; its free memory (cudaMemGetInfo): memory.cpp.
// Device queries never fail because of a sticky error; cudaMemGetInfo uses the device and does.
#include "sim_internal.h"

#include <sched.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace __sim {

namespace {
// The CPU limit of this process's cgroup (cgroup v2's cpu.max, else v1's CFS quota), or 0 when
// unlimited or unreadable.
double cgroup_cpu_quota() {
    double quota = 0, period = 0;
    if (FILE* f = std::fopen("/sys/fs/cgroup/cpu.max", "r")) {
        char first[32] = {0};
        const bool read = std::fscanf(f, "%31s %lf", first, &period) == 2;
        std::fclose(f);
        if (!read || std::strcmp(first, "max") == 0) return 0;
        quota = std::atof(first);
        return quota > 0 && period > 0 ? quota / period : 0;
    }
    for (const char* dir : {"/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct"}) {
        char path[96];
        std::snprintf(path, sizeof path, "%s/cpu.cfs_quota_us", dir);
        FILE* q = std::fopen(path, "r");
        if (q == nullptr) continue;
        std::snprintf(path, sizeof path, "%s/cpu.cfs_period_us", dir);
        FILE* p = std::fopen(path, "r");
        const bool read = p != nullptr && std::fscanf(q, "%lf", &quota) == 1 && std::fscanf(p, "%lf", &period) == 1;
        std::fclose(q);
        if (p != nullptr) std::fclose(p);
        return read && quota > 0 && period > 0 ? quota / period : 0;
    }
    return 0;
}
// The modelled device: an sm_80 GPU's limits (those the launch checks enforce), the host's
// memory and core count where a program sizes its work by them (simulator/docs/device.md: "The modelled device").
// Every device of the machine is the same but for where it sits: its UUID and PCI location.
void model_device(cudaDeviceProp* p, int device = 0) {
    std::memset(p, 0, sizeof(*p));
    std::snprintf(p->name, sizeof(p->name), "CUDA CPU simulator (sm_80 model)");
    char uuid[17];
    std::snprintf(uuid, sizeof uuid, "cuda-cpu-sim-%03d", device);
    std::memcpy(p->uuid.bytes, uuid, 16);
    // Device 0 keeps the one-GPU machine's location (bus 0); each further device has its own bus.
    p->pciBusID = device;
    p->pciDeviceID = device;
    p->multiGpuBoardGroupID = device;
    p->totalGlobalMem = device_memory_total();
    p->sharedMemPerBlock = kDefaultSmemLimit;
    p->sharedMemPerBlockOptin = kOptinSmemLimit;
    p->sharedMemPerMultiprocessor = 228 * 1024;
    p->reservedSharedMemPerBlock = 1024;
    p->regsPerBlock = 65536;
    p->regsPerMultiprocessor = 65536;
    p->warpSize = 32;
    p->memPitch = 2147483647;
    p->maxThreadsPerBlock = 1024;
    p->maxThreadsDim[0] = 1024;
    p->maxThreadsDim[1] = 1024;
    p->maxThreadsDim[2] = 64;
    p->maxGridSize[0] = 2147483647;
    p->maxGridSize[1] = 65535;
    p->maxGridSize[2] = 65535;
    p->totalConstMem = 65536;
    p->major = 8;
    p->minor = 0;
    p->textureAlignment = 512;
    p->texturePitchAlignment = 32;
    p->multiProcessorCount = (int)host_cpu_count();
    p->canMapHostMemory = 1;
    p->concurrentKernels = 1;
    // Copies may overlap kernels, as on every GPU since Fermi (an A100 has 3 copy engines):
    // programs that test this before they use streams take their stream path.
    p->asyncEngineCount = 3;
    p->unifiedAddressing = 1;
    p->memoryBusWidth = 5120;
    p->l2CacheSize = 40 * 1024 * 1024;
    // An A100's persisting-L2 limits: access policy windows are accepted and have no effect.
    p->persistingL2CacheMaxSize = 30 * 1024 * 1024;
    p->accessPolicyMaxWindowSize = 128 * 1024 * 1024 - 4096;
    p->memoryPoolsSupported = 1;
    p->maxThreadsPerMultiProcessor = 2048;
    p->maxBlocksPerMultiProcessor = 32;
    p->streamPrioritiesSupported = 1;
    p->globalL1CacheSupported = 1;
    p->localL1CacheSupported = 1;
    p->managedMemory = 1;
    p->concurrentManagedAccess = 1;
    p->pageableMemoryAccess = 1;
    p->directManagedMemAccessFromHost = 1;
    p->canUseHostPointerForRegisteredMem = 1;
    p->hostRegisterSupported = 1;
    p->unifiedFunctionPointers = 1;
    p->cooperativeLaunch = 1;  // run_cooperative keeps every block of the grid resident
}
// Device attributes that CUDA 13's cudaDeviceProp no longer carries (an A100's values).
constexpr int kClockRateKHz = 1410000;
constexpr int kMemoryClockRateKHz = 1215000;
constexpr int kSingleToDoublePerfRatio = 2;
}  // namespace

unsigned host_cpu_count() {
    static const unsigned count = [] {
        long n = (long)std::max(1u, std::thread::hardware_concurrency());
        cpu_set_t set;
        if (sched_getaffinity(0, sizeof set, &set) == 0) n = std::max(1, CPU_COUNT(&set));
        const double quota = cgroup_cpu_quota();
        if (quota > 0) n = std::min(n, std::max(1L, (long)std::ceil(quota)));
        return (unsigned)n;
    }();
    return count;
}

int occupancy_blocks_per_sm(int block_size, size_t dynamic_smem) {
    cudaDeviceProp p;
    model_device(&p);
    if (block_size <= 0 || block_size > p.maxThreadsPerBlock || dynamic_smem > p.sharedMemPerBlockOptin) return 0;
    const int warps = (block_size + 31) / 32;
    int blocks = std::min(p.maxBlocksPerMultiProcessor, p.maxThreadsPerMultiProcessor / (warps * 32));
    const size_t smem = dynamic_smem + p.reservedSharedMemPerBlock;
    blocks = std::min(blocks, (int)(p.sharedMemPerMultiprocessor / smem));
    return blocks;
}

int occupancy_sm_count() {
    cudaDeviceProp p;
    model_device(&p);
    return p.multiProcessorCount;
}

bool device_attribute(int* value, cudaDeviceAttr attr, int device) {
    cudaDeviceProp p;
    model_device(&p, device);
    switch (attr) {
        case cudaDevAttrMaxThreadsPerBlock: *value = p.maxThreadsPerBlock; break;
        case cudaDevAttrMaxBlockDimX:
        case cudaDevAttrMaxBlockDimY:
        case cudaDevAttrMaxBlockDimZ: *value = p.maxThreadsDim[attr - cudaDevAttrMaxBlockDimX]; break;
        case cudaDevAttrMaxGridDimX:
        case cudaDevAttrMaxGridDimY:
        case cudaDevAttrMaxGridDimZ: *value = p.maxGridSize[attr - cudaDevAttrMaxGridDimX]; break;
        case cudaDevAttrMaxSharedMemoryPerBlock: *value = (int)p.sharedMemPerBlock; break;
        case cudaDevAttrTotalConstantMemory: *value = (int)p.totalConstMem; break;
        case cudaDevAttrWarpSize: *value = p.warpSize; break;
        case cudaDevAttrMaxPitch: *value = (int)p.memPitch; break;
        case cudaDevAttrMaxRegistersPerBlock: *value = p.regsPerBlock; break;
        case cudaDevAttrClockRate: *value = kClockRateKHz; break;
        case cudaDevAttrTextureAlignment: *value = (int)p.textureAlignment; break;
        case cudaDevAttrGpuOverlap: *value = 1; break;
        case cudaDevAttrMultiProcessorCount: *value = p.multiProcessorCount; break;
        case cudaDevAttrKernelExecTimeout: *value = 0; break;
        case cudaDevAttrIntegrated: *value = p.integrated; break;
        case cudaDevAttrCanMapHostMemory: *value = p.canMapHostMemory; break;
        case cudaDevAttrComputeMode: *value = cudaComputeModeDefault; break;
        case cudaDevAttrConcurrentKernels: *value = p.concurrentKernels; break;
        case cudaDevAttrEccEnabled: *value = p.ECCEnabled; break;
        case cudaDevAttrPciBusId: *value = p.pciBusID; break;
        case cudaDevAttrPciDeviceId: *value = p.pciDeviceID; break;
        case cudaDevAttrMemoryClockRate: *value = kMemoryClockRateKHz; break;
        case cudaDevAttrGlobalMemoryBusWidth: *value = p.memoryBusWidth; break;
        case cudaDevAttrL2CacheSize: *value = p.l2CacheSize; break;
        case cudaDevAttrMaxThreadsPerMultiProcessor: *value = p.maxThreadsPerMultiProcessor; break;
        case cudaDevAttrAsyncEngineCount: *value = p.asyncEngineCount; break;
        case cudaDevAttrUnifiedAddressing: *value = p.unifiedAddressing; break;
        case cudaDevAttrComputeCapabilityMajor: *value = p.major; break;
        case cudaDevAttrComputeCapabilityMinor: *value = p.minor; break;
        case cudaDevAttrStreamPrioritiesSupported: *value = p.streamPrioritiesSupported; break;
        case cudaDevAttrGlobalL1CacheSupported: *value = p.globalL1CacheSupported; break;
        case cudaDevAttrMaxSharedMemoryPerMultiprocessor: *value = (int)p.sharedMemPerMultiprocessor; break;
        case cudaDevAttrMaxRegistersPerMultiprocessor: *value = p.regsPerMultiprocessor; break;
        case cudaDevAttrManagedMemory: *value = p.managedMemory; break;
        case cudaDevAttrIsMultiGpuBoard: *value = p.isMultiGpuBoard; break;
        case cudaDevAttrHostNativeAtomicSupported: *value = 1; break;  // atomics are host atomics
        case cudaDevAttrPageableMemoryAccess: *value = p.pageableMemoryAccess; break;
        case cudaDevAttrConcurrentManagedAccess: *value = p.concurrentManagedAccess; break;
        case cudaDevAttrCooperativeLaunch: *value = p.cooperativeLaunch; break;
        case cudaDevAttrMaxSharedMemoryPerBlockOptin: *value = (int)p.sharedMemPerBlockOptin; break;
        case cudaDevAttrMaxBlocksPerMultiprocessor: *value = p.maxBlocksPerMultiProcessor; break;
        case cudaDevAttrReservedSharedMemoryPerBlock: *value = (int)p.reservedSharedMemPerBlock; break;
        case cudaDevAttrMaxPersistingL2CacheSize: *value = p.persistingL2CacheMaxSize; break;
        case cudaDevAttrMaxAccessPolicyWindowSize: *value = p.accessPolicyMaxWindowSize; break;
        case cudaDevAttrSparseCudaArraySupported: *value = p.sparseCudaArraySupported; break;
        case cudaDevAttrHostRegisterReadOnlySupported: *value = p.hostRegisterReadOnlySupported; break;
        case cudaDevAttrTimelineSemaphoreInteropSupported: *value = p.timelineSemaphoreInteropSupported; break;
        case cudaDevAttrMemoryPoolsSupported: *value = p.memoryPoolsSupported; break;
        case cudaDevAttrGPUDirectRDMASupported: *value = p.gpuDirectRDMASupported; break;
        case cudaDevAttrMemoryPoolSupportedHandleTypes: *value = 0; break;  // no IPC handles
        case cudaDevAttrClusterLaunch: *value = p.clusterLaunch; break;
        case cudaDevAttrSingleToDoublePrecisionPerfRatio: *value = kSingleToDoublePerfRatio; break;
        default:
            return false;
    }
    return true;
}

}  // namespace __sim

using __sim::sticky_error;

extern "C" {

cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp* prop, int device) {
    if (prop == nullptr) return __sim::set_error(cudaErrorInvalidValue);
    if (!__sim::valid_device(device)) return __sim::set_error(cudaErrorInvalidDevice);
    __sim::model_device(prop, device);
    return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int* value, enum cudaDeviceAttr attr, int device) {
    if (value == nullptr) return __sim::set_error(cudaErrorInvalidValue);
    if (!__sim::valid_device(device)) return __sim::set_error(cudaErrorInvalidDevice);
    return __sim::device_attribute(value, attr, device) ? cudaSuccess : __sim::set_error(cudaErrorInvalidValue);
}

}  // extern "C"
// sim-runtime: cold
