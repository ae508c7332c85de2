// The host API: the cuda* calls a program makes outside kernels. Device memory is host heap
// memory, bookkept so that copies, memsets and frees outside a live allocation are refused
// with cudaErrorInvalidValue; launches are checked against an sm_80 GPU's limits and run
// synchronously; streams are accepted and run in order. The error state lives here: the
// last error (what cudaGetLastError returns and clears) and the sticky error a kernel fault
// leaves (every later call returns it until cudaDeviceReset).
#include "sim_internal.h"

#include <algorithm>
#include <thread>

namespace sim {

std::mutex g_launch_mu;
std::mutex g_state_mu;
std::map<uintptr_t, size_t> g_allocs;
std::map<uintptr_t, const void*> g_alloc_sites;
std::map<const void*, int> g_smem_optin;
cudaError_t g_last_error = cudaSuccess;
cudaError_t g_sticky_error = cudaSuccess;

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

cudaError_t set_error(cudaError_t e) {
    if (e != cudaSuccess) g_last_error = e;
    return e;
}

void launch_raw(const LaunchSpec& spec, const char* name, const char* file, int line, const void* kernel,
                void (*invoke)(void*), void* pack) {
    std::lock_guard<std::mutex> launch_lock(g_launch_mu);
    if (g_sticky_error != cudaSuccess) return;
    const dim3 g = spec.grid, bl = spec.block;
    const unsigned long long threads = (unsigned long long)bl.x * bl.y * bl.z;
    if (g.x == 0 || g.y == 0 || g.z == 0 || bl.x == 0 || bl.y == 0 || bl.z == 0 || bl.x > 1024 || bl.y > 1024 ||
        bl.z > 64 || threads > 1024 || g.x > 2147483647u || g.y > 65535 || g.z > 65535) {
        g_last_error = cudaErrorInvalidConfiguration;
        return;
    }
    size_t limit = kDefaultSmemLimit;
    {
        std::lock_guard<std::mutex> lock(g_state_mu);
        if (kernel != nullptr) {
            auto it = g_smem_optin.find(kernel);
            if (it != g_smem_optin.end()) limit = std::max(limit, (size_t)it->second);
        } else {
            // A kernel template launched with deduced arguments has no address here: any
            // opt-in made for a kernel of this process counts.
            for (const auto& o : g_smem_optin) limit = std::max(limit, (size_t)o.second);
        }
    }
    if (spec.smem > limit) {
        g_last_error = cudaErrorInvalidValue;
        return;
    }
    Launch L;
    L.spec = spec;
    L.name = name;
    L.file = file;
    L.line = line;
    L.invoke = invoke;
    L.pack = pack;
    L.smem_limit = limit;
    L.nblocks = (unsigned long long)g.x * g.y * g.z;
    run_launch(&L);
    if (L.failed.load()) {
        g_sticky_error = cudaErrorLaunchFailure;
        g_last_error = cudaErrorLaunchFailure;
    }
}

cudaError_t func_set_attribute(const void* kernel, int attr, int value) {
    if (attr == cudaFuncAttributeMaxDynamicSharedMemorySize) {
        if (value < 0 || (size_t)value > kOptinSmemLimit) return set_error(cudaErrorInvalidValue);
        std::lock_guard<std::mutex> lock(g_state_mu);
        g_smem_optin[kernel] = value;
    }
    return cudaSuccess;
}

cudaError_t symbol_copy(void* dst, const void* src, size_t count) {
    if (count > 0 && (dst == nullptr || src == nullptr)) return set_error(cudaErrorInvalidValue);
    if (count > 0) std::memcpy(dst, src, count);
    return cudaSuccess;
}

}  // namespace sim

// ---- host API ------------------------------------------------------------------------------
using sim::g_allocs;
using sim::g_state_mu;
using sim::g_sticky_error;

extern "C" {

cudaError_t cudaMalloc(void** ptr, size_t size) {
    if (ptr == nullptr) return sim::set_error(cudaErrorInvalidValue);
    if (g_sticky_error != cudaSuccess) return g_sticky_error;
    *ptr = nullptr;
    if (size == 0) return cudaSuccess;
    if (size > ((size_t)1 << 40)) return sim::set_error(cudaErrorMemoryAllocation);
#if defined(SIM_MEMCHECK) || defined(SIM_RACECHECK)
    void* p = std::malloc(size);  // exact size, so the byte after the buffer is a redzone
#else
    void* p = std::aligned_alloc(256, (size + 255) & ~size_t(255));
#endif
    if (p == nullptr) return sim::set_error(cudaErrorMemoryAllocation);
    {
        std::lock_guard<std::mutex> lock(g_state_mu);
        g_allocs[reinterpret_cast<uintptr_t>(p)] = size;
#if defined(SIM_MEMCHECK)
        // The return address points after the call; step back into it for the source line.
        sim::g_alloc_sites[reinterpret_cast<uintptr_t>(p)] =
            static_cast<const char*>(__builtin_extract_return_addr(__builtin_return_address(0))) - 1;
#endif
    }
    *ptr = p;
    return cudaSuccess;
}

cudaError_t cudaMallocManaged(void** ptr, size_t size, unsigned int flags) {
    (void)flags;
    return cudaMalloc(ptr, size);
}

cudaError_t cudaMallocHost(void** ptr, size_t size) {
    if (ptr == nullptr) return sim::set_error(cudaErrorInvalidValue);
    *ptr = std::malloc(size == 0 ? 1 : size);
    return *ptr == nullptr ? sim::set_error(cudaErrorMemoryAllocation) : cudaSuccess;
}

cudaError_t cudaFreeHost(void* ptr) {
    std::free(ptr);
    return cudaSuccess;
}

cudaError_t cudaFree(void* ptr) {
    if (ptr == nullptr) return cudaSuccess;
    {
        std::lock_guard<std::mutex> lock(g_state_mu);
        auto it = g_allocs.find(reinterpret_cast<uintptr_t>(ptr));
        if (it == g_allocs.end()) {
            sim::report("%s: cudaFree(%p): not a live device allocation (double free, or a pointer cudaMalloc "
                        "did not return)",
                        sim::mode_name(), ptr);
            return sim::set_error(cudaErrorInvalidValue);
        }
        g_allocs.erase(it);
#if defined(SIM_MEMCHECK)
        sim::g_alloc_sites.erase(reinterpret_cast<uintptr_t>(ptr));
#endif
    }
    std::free(ptr);
    return g_sticky_error;
}

cudaError_t cudaMemcpy(void* dst, const void* src, size_t count, enum cudaMemcpyKind kind) {
    if (g_sticky_error != cudaSuccess) return g_sticky_error;
    if (count == 0) return cudaSuccess;
    if (dst == nullptr || src == nullptr) return sim::set_error(cudaErrorInvalidValue);
    bool dst_dev, src_dev;
    {
        std::lock_guard<std::mutex> lock(g_state_mu);
        dst_dev = sim::find_alloc(dst, count, nullptr);
        src_dev = sim::find_alloc(src, count, nullptr);
    }
    const bool need_dst = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
    const bool need_src = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
    if (kind < cudaMemcpyHostToHost || kind > cudaMemcpyDefault) return sim::set_error(cudaErrorInvalidMemcpyDirection);
    if ((need_dst && !dst_dev) || (need_src && !src_dev)) {
        sim::report("%s: cudaMemcpy(%p, %p, %zu, kind %d): the %s range is not inside one live device "
                    "allocation",
                    sim::mode_name(), dst, src, count, (int)kind, (need_dst && !dst_dev) ? "destination" : "source");
        return sim::set_error(cudaErrorInvalidValue);
    }
    std::memmove(dst, src, count);
    return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t count, enum cudaMemcpyKind kind,
                            cudaStream_t stream) {
    (void)stream;
    return cudaMemcpy(dst, src, count, kind);
}

cudaError_t cudaMemset(void* ptr, int value, size_t count) {
    if (g_sticky_error != cudaSuccess) return g_sticky_error;
    if (count == 0) return cudaSuccess;
    bool ok;
    {
        std::lock_guard<std::mutex> lock(g_state_mu);
        ok = sim::find_alloc(ptr, count, nullptr);
    }
    if (!ok) {
        sim::report("%s: cudaMemset(%p, %d, %zu): the range is not inside one live device allocation",
                    sim::mode_name(), ptr, value, count);
        return sim::set_error(cudaErrorInvalidValue);
    }
    std::memset(ptr, value, count);
    return cudaSuccess;
}

cudaError_t cudaMemsetAsync(void* ptr, int value, size_t count, cudaStream_t stream) {
    (void)stream;
    return cudaMemset(ptr, value, count);
}

cudaError_t cudaGetLastError(void) {
    std::lock_guard<std::mutex> lock(sim::g_launch_mu);
    cudaError_t e = sim::g_last_error;
    sim::g_last_error = g_sticky_error;
    return e;
}

cudaError_t cudaPeekAtLastError(void) {
    std::lock_guard<std::mutex> lock(sim::g_launch_mu);
    return sim::g_last_error;
}

cudaError_t cudaDeviceSynchronize(void) { return g_sticky_error; }

cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
    (void)stream;
    return g_sticky_error;
}

cudaError_t cudaDeviceReset(void) {
    std::lock_guard<std::mutex> lock(sim::g_launch_mu);
    g_sticky_error = cudaSuccess;
    sim::g_last_error = cudaSuccess;
    return cudaSuccess;
}

cudaError_t cudaStreamCreate(cudaStream_t* stream) {
    if (stream == nullptr) return sim::set_error(cudaErrorInvalidValue);
    *stream = nullptr;
    return g_sticky_error;
}

cudaError_t cudaStreamDestroy(cudaStream_t stream) {
    (void)stream;
    return g_sticky_error;
}

cudaError_t cudaGetDeviceCount(int* count) {
    if (count == nullptr) return sim::set_error(cudaErrorInvalidValue);
    *count = 1;
    return cudaSuccess;
}

cudaError_t cudaGetDevice(int* device) {
    if (device == nullptr) return sim::set_error(cudaErrorInvalidValue);
    *device = 0;
    return cudaSuccess;
}

cudaError_t cudaSetDevice(int device) { return device == 0 ? cudaSuccess : sim::set_error(cudaErrorInvalidDevice); }

cudaError_t cudaDeviceGetAttribute(int* value, enum cudaDeviceAttr attr, int device) {
    if (value == nullptr || device != 0) return sim::set_error(cudaErrorInvalidValue);
    switch (attr) {
        case cudaDevAttrMaxThreadsPerBlock:
        case cudaDevAttrMaxBlockDimX:
        case cudaDevAttrMaxBlockDimY:
            *value = 1024;
            break;
        case cudaDevAttrMaxBlockDimZ:
            *value = 64;
            break;
        case cudaDevAttrMaxGridDimX:
            *value = 2147483647;
            break;
        case cudaDevAttrMaxGridDimY:
        case cudaDevAttrMaxGridDimZ:
            *value = 65535;
            break;
        case cudaDevAttrMaxSharedMemoryPerBlock:
            *value = (int)sim::kDefaultSmemLimit;
            break;
        case cudaDevAttrMaxSharedMemoryPerBlockOptin:
            *value = (int)sim::kOptinSmemLimit;
            break;
        case cudaDevAttrWarpSize:
            *value = 32;
            break;
        case cudaDevAttrMultiProcessorCount:
            *value = (int)std::max(1u, std::thread::hardware_concurrency());
            break;
        case cudaDevAttrComputeCapabilityMajor:
            *value = 8;
            break;
        case cudaDevAttrComputeCapabilityMinor:
            *value = 0;
            break;
        default:
            return sim::set_error(cudaErrorInvalidValue);
    }
    return cudaSuccess;
}

const char* cudaGetErrorName(cudaError_t error) {
    switch (error) {
        case cudaSuccess:
            return "cudaSuccess";
        case cudaErrorInvalidValue:
            return "cudaErrorInvalidValue";
        case cudaErrorMemoryAllocation:
            return "cudaErrorMemoryAllocation";
        case cudaErrorInitializationError:
            return "cudaErrorInitializationError";
        case cudaErrorInvalidConfiguration:
            return "cudaErrorInvalidConfiguration";
        case cudaErrorInvalidDevicePointer:
            return "cudaErrorInvalidDevicePointer";
        case cudaErrorInvalidMemcpyDirection:
            return "cudaErrorInvalidMemcpyDirection";
        case cudaErrorInsufficientDriver:
            return "cudaErrorInsufficientDriver";
        case cudaErrorNoDevice:
            return "cudaErrorNoDevice";
        case cudaErrorInvalidDevice:
            return "cudaErrorInvalidDevice";
        case cudaErrorInvalidDeviceFunction:
            return "cudaErrorInvalidDeviceFunction";
        case cudaErrorIllegalAddress:
            return "cudaErrorIllegalAddress";
        case cudaErrorLaunchOutOfResources:
            return "cudaErrorLaunchOutOfResources";
        case cudaErrorAssert:
            return "cudaErrorAssert";
        case cudaErrorLaunchFailure:
            return "cudaErrorLaunchFailure";
        case cudaErrorNotSupported:
            return "cudaErrorNotSupported";
        default:
            return "cudaErrorUnknown";
    }
}

const char* cudaGetErrorString(cudaError_t error) {
    switch (error) {
        case cudaSuccess:
            return "no error";
        case cudaErrorInvalidValue:
            return "invalid argument";
        case cudaErrorMemoryAllocation:
            return "out of memory";
        case cudaErrorInvalidConfiguration:
            return "invalid configuration argument";
        case cudaErrorLaunchFailure:
            return "unspecified launch failure (the simulator reported the kernel fault on stderr)";
        default:
            return cudaGetErrorName(error);
    }
}

}  // extern "C"
