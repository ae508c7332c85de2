// The host API: the cuda* calls a program makes outside kernels. Device memory is host heap
// memory, bookkept so that copies, memsets and frees outside a live allocation are refused
// with cudaErrorInvalidValue; launches are checked against an sm_80 GPU's limits, run
// synchronously and are stopped past SIMULATOR_TIMEOUT; streams are accepted and run in order.
//
// Errors follow CUDA's two kinds:
// * non-sticky (an invalid argument or launch configuration, a failed allocation): the call
//   returns it and it becomes the calling host thread's last error, which cudaPeekAtLastError
//   returns and cudaGetLastError returns once and clears. The device stays usable.
// * sticky (a deadlock or checker finding in a kernel: cudaErrorLaunchFailure; a wild pointer:
//   cudaErrorIllegalAddress; a failed device assert(): cudaErrorAssert; a launch past
//   SIMULATOR_TIMEOUT: cudaErrorLaunchTimeout): the context is corrupt. Every later call that
//   uses the device (memory, copies, launches, synchronisation, streams) returns it, in every
//   host thread, and cudaGetLastError/cudaPeekAtLastError return it without clearing it.
//   CUDA documents that only a new process recovers; the simulator also lets cudaDeviceReset
//   clear it, which frees every device allocation as a real reset does.
// Device queries (cudaGetDeviceCount, cudaGetDevice, cudaSetDevice, cudaDeviceGetAttribute)
// and the error-string calls never fail because of a sticky error.
#include "sim_internal.h"

#include <algorithm>
#include <thread>

namespace sim {

std::mutex g_launch_mu;
std::mutex g_state_mu;
std::map<uintptr_t, size_t> g_allocs;
std::map<uintptr_t, const void*> g_alloc_sites;
std::map<const void*, int> g_smem_optin;
__thread cudaError_t tl_last_error = cudaSuccess;
std::atomic<int> g_sticky_error{cudaSuccess};

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
    if (e != cudaSuccess) tl_last_error = e;
    return e;
}

cudaError_t sticky_error() { return (cudaError_t)g_sticky_error.load(); }

cudaError_t set_sticky_error(cudaError_t e) {
    int none = cudaSuccess;
    g_sticky_error.compare_exchange_strong(none, (int)e);  // the first one stays
    tl_last_error = sticky_error();
    return tl_last_error;
}

double launch_timeout_s() {
    const char* env = std::getenv("SIMULATOR_TIMEOUT");
    if (env == nullptr || *env == '\0') return kDefaultLaunchTimeoutS;
    char* end = nullptr;
    const double s = std::strtod(env, &end);
    if (end == env || *end != '\0' || !(s >= 0) || s > 1e9) {
        static std::atomic<bool> warned{false};
        if (!warned.exchange(true)) {
            report("SIMULATOR_TIMEOUT='%s' is not a number of seconds (0 turns the limit off); using %g", env,
                   kDefaultLaunchTimeoutS);
        }
        return kDefaultLaunchTimeoutS;
    }
    return s;
}

void launch_raw(const LaunchSpec& spec, const char* name, const char* file, int line, const void* kernel,
                void (*invoke)(void*), void* pack) {
    std::lock_guard<std::mutex> launch_lock(g_launch_mu);
    if (sticky_error() != cudaSuccess) return;  // cudaGetLastError returns it
    const dim3 g = spec.grid, bl = spec.block;
    const unsigned long long threads = (unsigned long long)bl.x * bl.y * bl.z;
    if (g.x == 0 || g.y == 0 || g.z == 0 || bl.x == 0 || bl.y == 0 || bl.z == 0 || bl.x > 1024 || bl.y > 1024 ||
        bl.z > 64 || threads > 1024 || g.x > 2147483647u || g.y > 65535 || g.z > 65535) {
        set_error(cudaErrorInvalidConfiguration);
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
        set_error(cudaErrorInvalidValue);
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
    L.timeout_s = launch_timeout_s();
    run_launch(&L);
    if (L.timed_out.load()) {
        report("%s: launch timeout: kernel '%s' (launched at %s:%d) ran longer than SIMULATOR_TIMEOUT=%g s and was "
               "stopped; the launch returns cudaErrorLaunchTimeout, which is sticky",
               mode_name(), name, file, line, L.timeout_s);
        set_sticky_error(cudaErrorLaunchTimeout);
    } else if (L.faulted.load()) {
        set_sticky_error(cudaErrorIllegalAddress);
    } else if (L.asserted.load()) {
        set_sticky_error(cudaErrorAssert);
    } else if (L.failed.load()) {
        set_sticky_error(cudaErrorLaunchFailure);
    }
}

cudaError_t func_set_attribute(const void* kernel, int attr, int value) {
    if (cudaError_t e = sticky_error()) return e;
    if (attr == cudaFuncAttributeMaxDynamicSharedMemorySize) {
        if (value < 0 || (size_t)value > kOptinSmemLimit) return set_error(cudaErrorInvalidValue);
        std::lock_guard<std::mutex> lock(g_state_mu);
        g_smem_optin[kernel] = value;
    }
    return cudaSuccess;
}

cudaError_t symbol_copy(void* dst, const void* src, size_t count) {
    if (cudaError_t e = sticky_error()) return e;
    if (count > 0 && (dst == nullptr || src == nullptr)) return set_error(cudaErrorInvalidValue);
    if (count > 0) std::memcpy(dst, src, count);
    return cudaSuccess;
}

}  // namespace sim

// ---- host API ------------------------------------------------------------------------------
using sim::g_allocs;
using sim::g_state_mu;
using sim::sticky_error;

extern "C" {

cudaError_t cudaMalloc(void** ptr, size_t size) {
    if (ptr == nullptr) return sim::set_error(cudaErrorInvalidValue);
    if (cudaError_t e = sticky_error()) return e;
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
    if (cudaError_t e = sticky_error()) return e;
    *ptr = std::malloc(size == 0 ? 1 : size);
    return *ptr == nullptr ? sim::set_error(cudaErrorMemoryAllocation) : cudaSuccess;
}

cudaError_t cudaFreeHost(void* ptr) {
    std::free(ptr);
    return sticky_error();
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
    return sticky_error();  // freed, but a corrupt context still says so
}

cudaError_t cudaMemcpy(void* dst, const void* src, size_t count, enum cudaMemcpyKind kind) {
    if (cudaError_t e = sticky_error()) return e;
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
    if (cudaError_t e = sticky_error()) return e;
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
    const cudaError_t e = sim::tl_last_error;
    sim::tl_last_error = cudaSuccess;
    if (cudaError_t sticky = sticky_error()) return sticky;
    return e;
}

cudaError_t cudaPeekAtLastError(void) {
    if (cudaError_t sticky = sticky_error()) return sticky;
    return sim::tl_last_error;
}

cudaError_t cudaDeviceSynchronize(void) { return sticky_error(); }

cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
    (void)stream;
    return sticky_error();
}

// A reset destroys the context: every device allocation and function attribute goes, and the
// sticky error with it (see the top of this file for how this differs from CUDA's promise).
cudaError_t cudaDeviceReset(void) {
    std::lock_guard<std::mutex> launch_lock(sim::g_launch_mu);
    {
        std::lock_guard<std::mutex> lock(g_state_mu);
        for (const auto& a : g_allocs) std::free(reinterpret_cast<void*>(a.first));
        g_allocs.clear();
        sim::g_alloc_sites.clear();
        sim::g_smem_optin.clear();
    }
    sim::g_sticky_error.store(cudaSuccess);
    sim::tl_last_error = cudaSuccess;
    return cudaSuccess;
}

cudaError_t cudaStreamCreate(cudaStream_t* stream) {
    if (stream == nullptr) return sim::set_error(cudaErrorInvalidValue);
    *stream = nullptr;
    return sticky_error();
}

cudaError_t cudaStreamDestroy(cudaStream_t stream) {
    (void)stream;
    return sticky_error();
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
        case cudaErrorLaunchTimeout:
            return "cudaErrorLaunchTimeout";
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
        case cudaErrorIllegalAddress:
            return "an illegal memory access was encountered";
        case cudaErrorLaunchTimeout:
            return "the launch timed out and was terminated (SIMULATOR_TIMEOUT)";
        case cudaErrorAssert:
            return "device-side assert triggered";
        case cudaErrorLaunchFailure:
            return "unspecified launch failure (the simulator reported the kernel fault on stderr)";
        default:
            return cudaGetErrorName(error);
    }
}

}  // extern "C"
