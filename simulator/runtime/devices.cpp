// The modelled machine's devices (simulator/docs/device.md: "Several devices"): SIMULATOR_DEVICES identical
// devices (default 1), the current device of each host thread (cudaGetDevice, cudaSetDevice),
// the device each allocation belongs to (cudaPointerGetAttributes) and peer access between
// devices (cudaDeviceCanAccessPeer, Enable/DisablePeerAccess, cudaMemcpyPeer). Every device's
// memory is the host's heap, so one address space holds them all (unified addressing) and a
// kernel can read any device's memory; a peer copy is a plain copy.
#include "sim_internal.h"

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

}  // extern "C"
