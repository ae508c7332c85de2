// sim-runtime: per mode
// Device and pinned host memory: cudaMalloc and cudaFree, copies and sets (pitched and
// stream-ordered forms too), pinned and registered host memory. Device memory is host heap memory
// (device_heap.cpp), bookkept so that copies, memsets and frees outside a live allocation are
// refused with cudaErrorInvalidValue. Work on a stream is done when its call returns; on a
// capturing stream a copy or set becomes a graph node (graphs.cpp), and one issued from device
// code waits for the grids the issuing grid launched before it (device_launch.cpp).
#include "graph_state.h"

#include <cstring>

namespace __sim {

std::mutex g_state_mu;
std::map<uintptr_t, size_t> g_allocs;
std::map<uintptr_t, const void*> g_alloc_sites;

#if defined(SIM_MEMCHECK)
namespace {
// Defined after the allocation table in this file, so it runs before the table is destroyed.
struct LeakReportAtExit {
    ~LeakReportAtExit() { report_leaks(); }
} g_leak_report;
}  // namespace
#endif

bool find_alloc(const void* p, size_t n, bool* known_start) {
    const uintptr_t a = reinterpret_cast<uintptr_t>(p);
    auto it = g_allocs.upper_bound(a);
    if (it == g_allocs.begin()) return false;
    --it;
    if (known_start != nullptr) *known_start = it->first == a;
    return a >= it->first && a - it->first <= it->second && n <= it->second - (a - it->first);
}

// Where a managed memory hint may point (cudaMemPrefetchAsync, cudaMemAdvise): cudaSuccess or why not.
static cudaError_t check_location(const cudaMemLocation& where) {
    switch (where.type) {
        case cudaMemLocationTypeDevice:
            return __sim::valid_device(where.id) ? cudaSuccess : cudaErrorInvalidDevice;
        case cudaMemLocationTypeHost:
        case cudaMemLocationTypeHostNuma:
        case cudaMemLocationTypeHostNumaCurrent:
            return cudaSuccess;
        default:
            return cudaErrorInvalidValue;
    }
}

namespace {
constexpr size_t kPitchAlignment = 512;  // cudaMallocPitch's row alignment (texturePitchAlignment is 32)
}  // namespace

}  // namespace __sim

using __sim::g_allocs;
using __sim::g_state_mu;
using __sim::sticky_error;

using __sim::NodeOp;
using __sim::g_graph_mu;
using __sim::set_error;

extern "C" {

cudaError_t cudaMalloc(void** ptr, size_t size) {
    if (ptr == nullptr) return __sim::set_error(cudaErrorInvalidValue);
    if (cudaError_t e = sticky_error()) return e;
    *ptr = nullptr;
    if (size == 0) return cudaSuccess;
    void* p = __sim::device_alloc(size);  // nullptr past the device's memory
    if (p == nullptr) return __sim::set_error(cudaErrorMemoryAllocation);
    {
        std::lock_guard<std::mutex> lock(g_state_mu);
        g_allocs[reinterpret_cast<uintptr_t>(p)] = size;
        __sim::record_alloc(reinterpret_cast<uintptr_t>(p), __sim::current_device(), false);
#if defined(SIM_MEMCHECK)
        // The return address points after the call; step back into it for the source line.
        __sim::g_alloc_sites[reinterpret_cast<uintptr_t>(p)] =
            static_cast<const char*>(__builtin_extract_return_addr(__builtin_return_address(0))) - 1;
#endif
    }
    *ptr = p;
    return cudaSuccess;
}

cudaError_t cudaMallocManaged(void** ptr, size_t size, unsigned int flags) {
    (void)flags;
    const cudaError_t e = cudaMalloc(ptr, size);
    if (e == cudaSuccess && *ptr != nullptr) {
        std::lock_guard<std::mutex> lock(g_state_mu);
        __sim::record_alloc(reinterpret_cast<uintptr_t>(*ptr), __sim::current_device(), true);
    }
    return e;
}

cudaError_t cudaMallocHost(void** ptr, size_t size) {
    if (ptr == nullptr) return __sim::set_error(cudaErrorInvalidValue);
    if (cudaError_t e = sticky_error()) return e;
    *ptr = std::malloc(size == 0 ? 1 : size);
    if (*ptr == nullptr) return __sim::set_error(cudaErrorMemoryAllocation);
    __sim::record_host_alloc(*ptr, size == 0 ? 1 : size);
    return cudaSuccess;
}

cudaError_t cudaFreeHost(void* ptr) {
    if (ptr != nullptr) __sim::forget_host_alloc(ptr);
    std::free(ptr);
    return sticky_error();
}

cudaError_t cudaFree(void* ptr) {
    if (ptr == nullptr) return cudaSuccess;
    if (__sim::free_graph_allocation(ptr)) return sticky_error();  // its block stays the graph's
    __sim::forget_pool_allocation(ptr);
    {
        std::lock_guard<std::mutex> lock(g_state_mu);
        auto it = g_allocs.find(reinterpret_cast<uintptr_t>(ptr));
        if (it == g_allocs.end()) {
            __sim::report("%s: cudaFree(%p): not a live device allocation (double free, or a pointer cudaMalloc "
                        "did not return)",
                        __sim::mode_name(), ptr);
            return __sim::set_error(cudaErrorInvalidValue);
        }
        if (__sim::vmm_range(it->first)) {  // driver_vmm.cpp's: only cuMemUnmap takes it away
            __sim::report("%s: cudaFree(%p): the range is mapped with cuMemMap; cuMemUnmap it instead",
                          __sim::mode_name(), ptr);
            return __sim::set_error(cudaErrorInvalidValue);
        }
        g_allocs.erase(it);
        __sim::forget_alloc(reinterpret_cast<uintptr_t>(ptr));
#if defined(SIM_MEMCHECK)
        __sim::g_alloc_sites.erase(reinterpret_cast<uintptr_t>(ptr));
#endif
    }
    __sim::device_free(ptr);
    return sticky_error();  // freed, but a corrupt context still says so
}

cudaError_t cudaMemcpy(void* dst, const void* src, size_t count, enum cudaMemcpyKind kind) {
    if (cudaError_t e = sticky_error()) return e;
    if (count == 0) return cudaSuccess;
    if (dst == nullptr || src == nullptr) return __sim::set_error(cudaErrorInvalidValue);
    bool dst_dev, src_dev;
    {
        std::lock_guard<std::mutex> lock(g_state_mu);
        dst_dev = __sim::find_alloc(dst, count, nullptr);
        src_dev = __sim::find_alloc(src, count, nullptr);
    }
    bool need_dst = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
    bool need_src = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
    if (kind == cudaMemcpyDefault) {
        // The direction follows from the pointers (unified addressing): a pointer into a live
        // device allocation is a device pointer, and then the whole range must lie inside it.
        std::lock_guard<std::mutex> lock(g_state_mu);
        need_dst = __sim::find_alloc(dst, 1, nullptr);
        need_src = __sim::find_alloc(src, 1, nullptr);
    }
    if (kind < cudaMemcpyHostToHost || kind > cudaMemcpyDefault) return __sim::set_error(cudaErrorInvalidMemcpyDirection);
    if ((need_dst && !dst_dev) || (need_src && !src_dev)) {
        __sim::report("%s: cudaMemcpy(%p, %p, %zu, kind %d): the %s range is not inside one live device "
                    "allocation",
                    __sim::mode_name(), dst, src, count, (int)kind, (need_dst && !dst_dev) ? "destination" : "source");
        return __sim::set_error(cudaErrorInvalidValue);
    }
    std::memmove(dst, src, count);
    return cudaSuccess;
}

cudaError_t cudaMemset(void* ptr, int value, size_t count) {
    if (cudaError_t e = sticky_error()) return e;
    if (count == 0) return cudaSuccess;
    bool ok;
    {
        std::lock_guard<std::mutex> lock(g_state_mu);
        ok = __sim::find_alloc(ptr, count, nullptr);
    }
    if (!ok) {
        __sim::report("%s: cudaMemset(%p, %d, %zu): the range is not inside one live device allocation",
                    __sim::mode_name(), ptr, value, count);
        return __sim::set_error(cudaErrorInvalidValue);
    }
    std::memset(ptr, value, count);
    return cudaSuccess;
}

cudaError_t cudaHostAlloc(void** ptr, size_t size, unsigned int flags) {
    const unsigned int known = cudaHostAllocPortable | cudaHostAllocMapped | cudaHostAllocWriteCombined;
    if ((flags & ~known) != 0) return __sim::set_error(cudaErrorInvalidValue);
    return cudaMallocHost(ptr, size);
}

cudaError_t cudaHostGetDevicePointer(void** device_ptr, void* host_ptr, unsigned int flags) {
    if (device_ptr == nullptr || host_ptr == nullptr || flags != 0) return __sim::set_error(cudaErrorInvalidValue);
    *device_ptr = host_ptr;  // kernels read host memory directly here
    return cudaSuccess;
}

cudaError_t cudaHostRegister(void* ptr, size_t size, unsigned int flags) {
    if (ptr == nullptr || size == 0 || flags > 0x0fu) return __sim::set_error(cudaErrorInvalidValue);
    __sim::record_host_alloc(ptr, size);
    return cudaSuccess;
}

cudaError_t cudaHostUnregister(void* ptr) {
    if (ptr == nullptr) return __sim::set_error(cudaErrorInvalidValue);
    __sim::forget_host_alloc(ptr);
    return cudaSuccess;
}

// ---- pitched (2-D) memory: rows of `width` bytes, `pitch` bytes apart -----------------------
cudaError_t cudaMallocPitch(void** ptr, size_t* pitch, size_t width, size_t height) {
    if (ptr == nullptr || pitch == nullptr) return __sim::set_error(cudaErrorInvalidValue);
    const size_t p = width == 0 ? 0 : (width + __sim::kPitchAlignment - 1) / __sim::kPitchAlignment * __sim::kPitchAlignment;
    *pitch = p;
    return cudaMalloc(ptr, p * height);
}

cudaError_t cudaMemcpy2D(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                         enum cudaMemcpyKind kind) {
    if (cudaError_t e = sticky_error()) return e;
    if (width == 0 || height == 0) return cudaSuccess;
    if (width > dpitch || width > spitch) return __sim::set_error(cudaErrorInvalidPitchValue);
    for (size_t r = 0; r < height; r++) {  // each row is checked like a cudaMemcpy of its own
        cudaError_t e = cudaMemcpy(static_cast<char*>(dst) + r * dpitch, static_cast<const char*>(src) + r * spitch,
                                   width, kind);
        if (e != cudaSuccess) return e;
    }
    return cudaSuccess;
}

cudaError_t cudaMemcpy2DAsync(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                              size_t height, enum cudaMemcpyKind kind, cudaStream_t stream) {
    (void)stream;
    return cudaMemcpy2D(dst, dpitch, src, spitch, width, height, kind);
}

cudaError_t cudaMemset2D(void* ptr, size_t pitch, int value, size_t width, size_t height) {
    if (cudaError_t e = sticky_error()) return e;
    if (width == 0 || height == 0) return cudaSuccess;
    if (width > pitch) return __sim::set_error(cudaErrorInvalidPitchValue);
    for (size_t r = 0; r < height; r++) {
        cudaError_t e = cudaMemset(static_cast<char*>(ptr) + r * pitch, value, width);
        if (e != cudaSuccess) return e;
    }
    return cudaSuccess;
}

cudaError_t cudaMemset2DAsync(void* ptr, size_t pitch, int value, size_t width, size_t height,
                              cudaStream_t stream) {
    (void)stream;
    return cudaMemset2D(ptr, pitch, value, width, height);
}

cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t count, enum cudaMemcpyKind kind, cudaStream_t stream) {
    if (!__sim::known_stream(stream)) return set_error(cudaErrorInvalidResourceHandle);
    if (__sim::capturing(stream)) {
        if (cudaError_t e = __sim::sticky_error()) return e;
        NodeOp n = __sim::memcpy_node(dst, src, count, kind);
        std::lock_guard<std::mutex> lock(g_graph_mu);
        if (__sim::g_capture_active.load()) return __sim::capture_node(std::move(n));
    }
    if (__sim::device_defer("cudaMemcpyAsync", stream, [=] { return cudaMemcpy(dst, src, count, kind); })) {
        return cudaSuccess;
    }
    return cudaMemcpy(dst, src, count, kind);
}

cudaError_t cudaMemsetAsync(void* ptr, int value, size_t count, cudaStream_t stream) {
    if (!__sim::known_stream(stream)) return set_error(cudaErrorInvalidResourceHandle);
    if (__sim::capturing(stream)) {
        if (cudaError_t e = __sim::sticky_error()) return e;
        NodeOp n = __sim::memset_node(ptr, (unsigned char)value, 1, count);
        std::lock_guard<std::mutex> lock(g_graph_mu);
        if (__sim::g_capture_active.load()) return __sim::capture_node(std::move(n));
    }
    if (__sim::device_defer("cudaMemsetAsync", stream, [=] { return cudaMemset(ptr, value, count); })) {
        return cudaSuccess;
    }
    return cudaMemset(ptr, value, count);
}

cudaError_t cudaMemGetInfo(size_t* free_bytes, size_t* total_bytes) {
    if (free_bytes == nullptr || total_bytes == nullptr) return __sim::set_error(cudaErrorInvalidValue);
    if (cudaError_t e = sticky_error()) return e;
    *total_bytes = __sim::device_memory_total();
    *free_bytes = *total_bytes - __sim::device_memory_used(__sim::current_device());
    return cudaSuccess;
}

// Managed memory's placement hints. Every device's memory and the host's are one memory here
// (pageableMemoryAccess is 1, so any pointer may be named, as on a system with HMM): a prefetch
// or an advice moves nothing and changes nothing but is checked as CUDA checks it.
cudaError_t cudaMemPrefetchAsync(const void* ptr, size_t count, struct cudaMemLocation location, unsigned int flags,
                                 cudaStream_t stream) {
    if (cudaError_t e = sticky_error()) return e;
    if ((ptr == nullptr && count != 0) || flags != 0) return set_error(cudaErrorInvalidValue);
    if (cudaError_t e = __sim::check_location(location)) return set_error(e);
    if (!__sim::known_stream(stream)) return set_error(cudaErrorInvalidResourceHandle);
    return cudaSuccess;
}

cudaError_t cudaMemAdvise(const void* ptr, size_t count, enum cudaMemoryAdvise advice, struct cudaMemLocation location) {
    if (cudaError_t e = sticky_error()) return e;
    if ((ptr == nullptr && count != 0) || advice < cudaMemAdviseSetReadMostly || advice > cudaMemAdviseUnsetAccessedBy) {
        return set_error(cudaErrorInvalidValue);
    }
    // Read-mostly and unsetting a preferred location name no location; the others need a valid one.
    const bool named = advice != cudaMemAdviseSetReadMostly && advice != cudaMemAdviseUnsetReadMostly &&
                       advice != cudaMemAdviseUnsetPreferredLocation;
    if (named) {
        if (cudaError_t e = __sim::check_location(location)) return set_error(e);
    }
    return cudaSuccess;
}
}  // extern "C"
