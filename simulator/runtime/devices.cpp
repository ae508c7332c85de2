// The modelled machine's devices (simulator/docs/device.md: "Several devices"): SIMULATOR_DEVICES identical
// devices (default 1), the current device of each host thread (cudaGetDevice, cudaSetDevice),
// the device each allocation belongs to (cudaPointerGetAttributes) and peer access between
// devices (cudaDeviceCanAccessPeer, Enable/DisablePeerAccess, cudaMemcpyPeer). Every device's
// memory is the host's heap, so one address space holds them all (unified addressing) and a
// kernel can read any device's memory; a peer copy is a plain copy. And the calls that act on
// the current device as a whole: synchronize, reset, flags, cache and shared-memory preferences,
// limits, versions, the profiler's start and stop.
#include "graphs_internal.h"
#include "driver_internal.h"

namespace __sim {

namespace {
__thread int tl_device = 0;  // CUDA's current device is per host thread, 0 until set

// Who owns a device allocation (g_state_mu guards these tables).
struct Owner {
    int device;
    bool managed;
};
std::map<uintptr_t, Owner> g_owners;
std::map<uintptr_t, std::pair<size_t, int>> g_host_allocs;  // pinned host memory: size, device
bool g_peer[kMaxDevices][kMaxDevices];                      // [from][to]: from may access to

// The owner of the allocation starting at ``start``; one the table lacks is a graph
// allocation's, made on device 0.
Owner owner_of(uintptr_t start) {
    auto it = g_owners.find(start);
    return it == g_owners.end() ? Owner{0, false} : it->second;
}

}  // namespace

namespace {
unsigned int g_device_flags = 0;
// cudaLimit values, CUDA's defaults on an sm_80 GPU (guarded by g_state_mu).
size_t g_limits[7] = {1024, 1 << 20, 8 << 20, 2, 2048, 64, 0};
}  // namespace

int device_count() {
    static const int count = (int)knob_value("SIMULATOR_DEVICES", 1);  // read once
    return count;
}

bool valid_device(int device) { return device >= 0 && device < device_count(); }

int current_device() {
    // Device code (dynamic parallelism, cudaGetDevice in a kernel) runs on its launch's device.
    if (const Block* b = tl_run.block) return b->launch->device;
    return tl_device;
}

void record_alloc(uintptr_t start, int device, bool managed) { g_owners[start] = Owner{device, managed}; }

void forget_alloc(uintptr_t start) { g_owners.erase(start); }

int alloc_device(uintptr_t start) { return owner_of(start).device; }

void forget_peers(int device) {
    std::lock_guard<std::mutex> lock(g_state_mu);
    for (int d = 0; d < kMaxDevices; ++d) g_peer[device][d] = g_peer[d][device] = false;
}

void record_host_alloc(void* p, size_t size) {
    std::lock_guard<std::mutex> lock(g_state_mu);
    g_host_allocs[reinterpret_cast<uintptr_t>(p)] = {size, current_device()};
}

void forget_host_alloc(void* p) {
    std::lock_guard<std::mutex> lock(g_state_mu);
    g_host_allocs.erase(reinterpret_cast<uintptr_t>(p));
}

}  // namespace __sim

using __sim::g_allocs;
using __sim::g_state_mu;
using __sim::sticky_error;

void __sim::select_device(int device) { tl_device = device; }

extern "C" {

cudaError_t cudaGetDeviceCount(int* count) {
    if (count == nullptr) return __sim::set_error(cudaErrorInvalidValue);
    *count = __sim::device_count();
    return cudaSuccess;
}

cudaError_t cudaGetDevice(int* device) {
    if (device == nullptr) return __sim::set_error(cudaErrorInvalidValue);
    *device = __sim::current_device();
    return cudaSuccess;
}

cudaError_t cudaSetDevice(int device) {
    if (!__sim::valid_device(device)) return __sim::set_error(cudaErrorInvalidDevice);
    __sim::tl_device = device;
    __sim::runtime_binds_primary_context();
    return cudaSuccess;
}

cudaError_t cudaDeviceCanAccessPeer(int* can_access, int device, int peer_device) {
    if (can_access == nullptr) return __sim::set_error(cudaErrorInvalidValue);
    if (!__sim::valid_device(device) || !__sim::valid_device(peer_device)) return __sim::set_error(cudaErrorInvalidDevice);
    *can_access = device != peer_device;  // one address space; a device is not its own peer
    return cudaSuccess;
}

cudaError_t cudaDeviceEnablePeerAccess(int peer_device, unsigned int flags) {
    if (!__sim::valid_device(peer_device)) return __sim::set_error(cudaErrorInvalidDevice);
    if (flags != 0) return __sim::set_error(cudaErrorInvalidValue);
    const int self = __sim::current_device();
    // CUDA's documented answer when cudaDeviceCanAccessPeer says 0 (a device and itself).
    if (peer_device == self) return __sim::set_error(cudaErrorInvalidDevice);
    std::lock_guard<std::mutex> lock(__sim::g_state_mu);
    if (__sim::g_peer[self][peer_device]) return __sim::set_error(cudaErrorPeerAccessAlreadyEnabled);
    __sim::g_peer[self][peer_device] = true;
    return cudaSuccess;
}

cudaError_t cudaDeviceDisablePeerAccess(int peer_device) {
    if (!__sim::valid_device(peer_device)) return __sim::set_error(cudaErrorInvalidDevice);
    const int self = __sim::current_device();
    std::lock_guard<std::mutex> lock(__sim::g_state_mu);
    if (peer_device == self || !__sim::g_peer[self][peer_device]) return __sim::set_error(cudaErrorPeerAccessNotEnabled);
    __sim::g_peer[self][peer_device] = false;
    return cudaSuccess;
}

// As in CUDA, a peer copy needs no peer access: the driver stages it when access is off.
cudaError_t cudaMemcpyPeer(void* dst, int dst_device, const void* src, int src_device, size_t count) {
    if (!__sim::valid_device(dst_device) || !__sim::valid_device(src_device)) return __sim::set_error(cudaErrorInvalidDevice);
    return cudaMemcpy(dst, src, count, cudaMemcpyDeviceToDevice);
}

cudaError_t cudaMemcpyPeerAsync(void* dst, int dst_device, const void* src, int src_device, size_t count,
                                cudaStream_t stream) {
    if (!__sim::valid_device(dst_device) || !__sim::valid_device(src_device)) return __sim::set_error(cudaErrorInvalidDevice);
    return cudaMemcpyAsync(dst, src, count, cudaMemcpyDeviceToDevice, stream);
}

cudaError_t cudaDeviceGetP2PAttribute(int* value, enum cudaDeviceP2PAttr attr, int src_device, int dst_device) {
    if (value == nullptr) return __sim::set_error(cudaErrorInvalidValue);
    if (!__sim::valid_device(src_device) || !__sim::valid_device(dst_device) || src_device == dst_device)
        return __sim::set_error(cudaErrorInvalidDevice);
    switch (attr) {
        case cudaDevP2PAttrPerformanceRank: *value = 0; break;  // one link kind: every pair ranks the same
        case cudaDevP2PAttrAccessSupported:
        case cudaDevP2PAttrNativeAtomicSupported:
        case cudaDevP2PAttrCudaArrayAccessSupported: *value = 1; break;
        default: return __sim::set_error(cudaErrorInvalidValue);
    }
    return cudaSuccess;
}

cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes* attributes, const void* ptr) {
    if (attributes == nullptr) return __sim::set_error(cudaErrorInvalidValue);
    const uintptr_t a = reinterpret_cast<uintptr_t>(ptr);
    attributes->type = cudaMemoryTypeUnregistered;
    attributes->device = cudaInvalidDeviceId;
    attributes->devicePointer = nullptr;
    attributes->hostPointer = const_cast<void*>(ptr);
    std::lock_guard<std::mutex> lock(__sim::g_state_mu);
    bool start = false;
    if (ptr != nullptr && __sim::find_alloc(ptr, 1, &start)) {
        const uintptr_t base = std::prev(__sim::g_allocs.upper_bound(a))->first;
        const __sim::Owner owner = __sim::owner_of(base);
        attributes->type = owner.managed ? cudaMemoryTypeManaged : cudaMemoryTypeDevice;
        attributes->device = owner.device;
        attributes->devicePointer = const_cast<void*>(ptr);
        attributes->hostPointer = owner.managed ? const_cast<void*>(ptr) : nullptr;
        return cudaSuccess;
    }
    auto it = __sim::g_host_allocs.upper_bound(a);
    if (it != __sim::g_host_allocs.begin() && a - std::prev(it)->first < std::prev(it)->second.first) {
        --it;
        attributes->type = cudaMemoryTypeHost;
        attributes->device = it->second.second;
        attributes->devicePointer = const_cast<void*>(ptr);  // kernels read host memory directly
    }
    return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize(void) {
    if (__sim::Launch* parent = __sim::device_launch_running()) return __sim::device_synchronize(parent);  // device code
    return sticky_error();
}

// A reset destroys the current device's context: its device allocations and its peer access go;
// function attributes and the sticky error are the process's here, not per device, and go too
// (see errors.cpp's top for how this differs from CUDA's promise).
cudaError_t cudaDeviceReset(void) {
    std::lock_guard<std::mutex> launch_lock(__sim::g_launch_mu);
    const int device = __sim::current_device();
    __sim::reset_graph_allocations();  // graph allocations' blocks belong to their graphs, not to free() here
    __sim::forget_peers(device);
    __sim::reset_device_pools(device);
    {
        std::lock_guard<std::mutex> lock(g_state_mu);
        for (auto it = g_allocs.begin(); it != g_allocs.end();) {
            if (__sim::alloc_device(it->first) != device) {
                ++it;
                continue;
            }
            __sim::device_free(reinterpret_cast<void*>(it->first));
            __sim::forget_alloc(it->first);
            __sim::g_alloc_sites.erase(it->first);
            it = g_allocs.erase(it);
        }
        __sim::g_smem_optin.clear();
    }
    // A refused environment knob is not cleared by a reset: the configuration is still wrong.
    __sim::g_sticky_error.store(__sim::g_knob_error ? cudaErrorInitializationError : cudaSuccess);
    __sim::tl_last_error = cudaSuccess;
    return __sim::sticky_error();
}

cudaError_t cudaSetDeviceFlags(unsigned int flags) {
    if (flags > 0x1fu) return __sim::set_error(cudaErrorInvalidValue);
    __sim::g_device_flags = flags;
    return cudaSuccess;
}

cudaError_t cudaGetDeviceFlags(unsigned int* flags) {
    if (flags == nullptr) return __sim::set_error(cudaErrorInvalidValue);
    *flags = __sim::g_device_flags;
    return cudaSuccess;
}

cudaError_t cudaDeviceSetCacheConfig(enum cudaFuncCache config) {
    return (int)config >= 0 && (int)config <= 3 ? cudaSuccess : __sim::set_error(cudaErrorInvalidValue);
}

cudaError_t cudaDeviceSetSharedMemConfig(enum cudaSharedMemConfig config) {
    return (int)config >= 0 && (int)config <= 2 ? cudaSuccess : __sim::set_error(cudaErrorInvalidValue);
}

cudaError_t cudaDriverGetVersion(int* version) {
    if (version == nullptr) return __sim::set_error(cudaErrorInvalidValue);
    *version = CUDART_VERSION;
    return cudaSuccess;
}

cudaError_t cudaRuntimeGetVersion(int* version) { return cudaDriverGetVersion(version); }

// Limits are kept and read back; none constrains a kernel here (stacks: SIMULATOR_STACK_KB; the
// device heap and printf buffer are the host's).
cudaError_t cudaDeviceSetLimit(enum cudaLimit limit, size_t value) {
    if ((int)limit < 0 || (int)limit >= (int)(sizeof(__sim::g_limits) / sizeof(__sim::g_limits[0]))) {
        return __sim::set_error(cudaErrorInvalidValue);
    }
    std::lock_guard<std::mutex> lock(g_state_mu);
    __sim::g_limits[limit] = value;
    return cudaSuccess;
}

cudaError_t cudaDeviceGetLimit(size_t* value, enum cudaLimit limit) {
    if (value == nullptr || (int)limit < 0 || (int)limit >= (int)(sizeof(__sim::g_limits) / sizeof(__sim::g_limits[0]))) {
        return __sim::set_error(cudaErrorInvalidValue);
    }
    std::lock_guard<std::mutex> lock(g_state_mu);
    *value = __sim::g_limits[limit];
    return cudaSuccess;
}

cudaError_t cudaProfilerStart(void) { return cudaSuccess; }  // no profiler: nothing to start

cudaError_t cudaProfilerStop(void) { return cudaSuccess; }

// Not a legacy name, but the getter of cudaDeviceSetCacheConfig: the preference has no effect.
cudaError_t cudaDeviceGetCacheConfig(enum cudaFuncCache* config) {
    if (config == nullptr) return __sim::set_error(cudaErrorInvalidValue);
    *config = cudaFuncCachePreferNone;
    return cudaSuccess;
}

cudaError_t cudaCtxResetPersistingL2Cache(void) { return __sim::sticky_error(); }  // no cache: nothing persists

cudaError_t cudaDeviceResetPersistingL2Cache(void) { return __sim::sticky_error(); }

}  // extern "C"
