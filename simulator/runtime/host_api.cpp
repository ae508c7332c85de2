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
// Device queries (cudaGetDeviceCount, cudaGetDevice, cudaSetDevice, cudaDeviceGetAttribute; in
// device_props.cpp) and the error-string calls never fail because of a sticky error.
#include "sim_internal.h"

#include <link.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <set>
#include <thread>

// An event: when it was last recorded (host clock; launches are synchronous).
struct CUevent_st {
    unsigned int flags = 0;
    bool recorded = false;
    std::chrono::steady_clock::time_point when;
};

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

// ---- environment knobs ------------------------------------------------------------------------
// SIMULATOR_THREADS and SIMULATOR_STACK_KB must be whole numbers in their ranges (the scheduler
// reads them with these bounds; simulator/limits.py has the same table for the front end). A
// bad value is refused once, when the runtime is loaded: a program stops with status 2 and
// the one line; in a library loaded into another process (ctypes) every call that uses the
// device returns cudaErrorInitializationError, as CUDA's calls do when it cannot start.
namespace {

struct Knob {
    const char* name;
    long lo, hi;
    const char* what;
    const char* unset;
};

constexpr Knob kKnobs[] = {
    {"SIMULATOR_THREADS", 1, 64, "worker threads for blocks", "the CPU count, at most 64"},
    {"SIMULATOR_STACK_KB", 16, 65536, "KiB of stack per CUDA thread", "128; 256 in memcheck and racecheck"},
};

// The first bad knob as one line, or "" when every knob is valid or unset.
std::string knob_error() {
    for (const Knob& k : kKnobs) {
        const char* v = std::getenv(k.name);
        if (v == nullptr || *v == '\0') continue;
        const size_t n = std::strlen(v);
        const bool digits = n <= 9 && std::strspn(v, "0123456789") == n;
        const long value = digits ? std::strtol(v, nullptr, 10) : -1;
        if (!digits || value < k.lo || value > k.hi) {
            char buf[512];
            std::snprintf(buf, sizeof buf,
                          "%s='%.80s' is not valid: give a whole number of %s from %ld to %ld, or leave it unset "
                          "(default: %s)",
                          k.name, v, k.what, k.lo, k.hi, k.unset);
            return buf;
        }
    }
    return "";
}

// True when this copy of the runtime is part of the program itself, not of a loaded library.
bool in_main_program() {
    struct Query {
        uintptr_t addr;
        bool found;
    } q{reinterpret_cast<uintptr_t>(&in_main_program), false};
    dl_iterate_phdr(
        [](struct dl_phdr_info* info, size_t, void* data) -> int {
            Query* q = static_cast<Query*>(data);
            for (int i = 0; i < info->dlpi_phnum; ++i) {
                const ElfW(Phdr)& ph = info->dlpi_phdr[i];
                const uintptr_t start = info->dlpi_addr + ph.p_vaddr;
                if (ph.p_type == PT_LOAD && q->addr >= start && q->addr < start + ph.p_memsz) q->found = true;
            }
            return 1;  // the first object listed is the program
        },
        &q);
    return q.found;
}

bool g_knob_error = false;  // set at load: every device call fails

struct KnobCheckAtLoad {
    KnobCheckAtLoad() {
        const std::string e = knob_error();
        if (e.empty()) return;
        // Not report(): SIMULATOR_QUIET silences kernel reports, not a refused configuration.
        std::fprintf(stderr, "simulator: %s\n", e.c_str());
        std::fflush(stderr);
        if (in_main_program()) std::_Exit(2);
        g_knob_error = true;
        g_sticky_error.store(cudaErrorInitializationError);
    }
} g_knob_check;

}  // namespace

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
    if (invoke == nullptr) {  // a null kernel pointer
        set_error(cudaErrorInvalidDeviceFunction);
        return;
    }
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
    // fast, memcheck and synccheck run barrier-free kernels as plain loops (what memcheck and
    // synccheck find does not depend on it); racecheck keeps a fiber per CUDA thread.
    L.plain = runs_plain(spec.barrier_free);
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

namespace {
std::set<const CUevent_st*> g_events;  // live events (guarded by g_state_mu)
unsigned int g_device_flags = 0;
constexpr size_t kPitchAlignment = 512;  // cudaMallocPitch's row alignment (texturePitchAlignment is 32)
// cudaLimit values, CUDA's defaults on an sm_80 GPU (guarded by g_state_mu).
size_t g_limits[7] = {1024, 1 << 20, 8 << 20, 2, 2048, 64, 0};

bool live_event(const CUevent_st* e) { return e != nullptr && g_events.count(e) != 0; }
}  // namespace

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
    bool need_dst = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
    bool need_src = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
    if (kind == cudaMemcpyDefault) {
        // The direction follows from the pointers (unified addressing): a pointer into a live
        // device allocation is a device pointer, and then the whole range must lie inside it.
        std::lock_guard<std::mutex> lock(g_state_mu);
        need_dst = sim::find_alloc(dst, 1, nullptr);
        need_src = sim::find_alloc(src, 1, nullptr);
    }
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
    // A refused environment knob is not cleared by a reset: the configuration is still wrong.
    sim::g_sticky_error.store(sim::g_knob_error ? cudaErrorInitializationError : cudaSuccess);
    sim::tl_last_error = cudaSuccess;
    return sim::sticky_error();
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

// ---- events --------------------------------------------------------------------------------
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int flags) {
    if (event == nullptr) return sim::set_error(cudaErrorInvalidValue);
    const unsigned int known = cudaEventBlockingSync | cudaEventDisableTiming | cudaEventInterprocess;
    if ((flags & ~known) != 0) return sim::set_error(cudaErrorInvalidValue);
    if ((flags & cudaEventInterprocess) && !(flags & cudaEventDisableTiming)) {
        return sim::set_error(cudaErrorInvalidValue);  // CUDA's rule for interprocess events
    }
    if (cudaError_t e = sticky_error()) return e;
    CUevent_st* e = new CUevent_st();
    e->flags = flags;
    std::lock_guard<std::mutex> lock(g_state_mu);
    sim::g_events.insert(e);
    *event = e;
    return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t* event) { return cudaEventCreateWithFlags(event, cudaEventDefault); }

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
    (void)stream;  // launches and copies are synchronous: everything before is done
    std::lock_guard<std::mutex> lock(g_state_mu);
    if (!sim::live_event(event)) return sim::set_error(cudaErrorInvalidResourceHandle);
    event->recorded = true;
    event->when = std::chrono::steady_clock::now();
    return sticky_error();
}

cudaError_t cudaEventRecordWithFlags(cudaEvent_t event, cudaStream_t stream, unsigned int flags) {
    if (flags > 1) return sim::set_error(cudaErrorInvalidValue);
    return cudaEventRecord(event, stream);
}

cudaError_t cudaEventQuery(cudaEvent_t event) {
    std::lock_guard<std::mutex> lock(g_state_mu);
    if (!sim::live_event(event)) return sim::set_error(cudaErrorInvalidResourceHandle);
    return sticky_error();
}

cudaError_t cudaEventSynchronize(cudaEvent_t event) { return cudaEventQuery(event); }

cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
    if (ms == nullptr) return sim::set_error(cudaErrorInvalidValue);
    std::lock_guard<std::mutex> lock(g_state_mu);
    if (!sim::live_event(start) || !sim::live_event(end)) return sim::set_error(cudaErrorInvalidResourceHandle);
    if (cudaError_t e = sticky_error()) return e;
    // As on a GPU: both events must have been recorded, and both with timing enabled.
    if (!start->recorded || !end->recorded || ((start->flags | end->flags) & cudaEventDisableTiming)) {
        return sim::set_error(cudaErrorInvalidResourceHandle);
    }
    *ms = std::chrono::duration<float, std::milli>(end->when - start->when).count();
    return cudaSuccess;
}

cudaError_t cudaEventDestroy(cudaEvent_t event) {
    std::lock_guard<std::mutex> lock(g_state_mu);
    if (!sim::live_event(event)) return sim::set_error(cudaErrorInvalidResourceHandle);
    sim::g_events.erase(event);
    delete event;
    return cudaSuccess;
}

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags) {
    (void)stream;
    if (flags != 0) return sim::set_error(cudaErrorInvalidValue);
    std::lock_guard<std::mutex> lock(g_state_mu);
    if (!sim::live_event(event)) return sim::set_error(cudaErrorInvalidResourceHandle);
    return sticky_error();
}

// ---- streams, host memory and device flags ---------------------------------------------------
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned int flags) {
    if (flags != cudaStreamDefault && flags != cudaStreamNonBlocking) return sim::set_error(cudaErrorInvalidValue);
    return cudaStreamCreate(stream);  // every stream runs in order with the host
}

cudaError_t cudaStreamCreateWithPriority(cudaStream_t* stream, unsigned int flags, int priority) {
    (void)priority;  // clamped to the range on a GPU; one order here
    return cudaStreamCreateWithFlags(stream, flags);
}

cudaError_t cudaStreamQuery(cudaStream_t stream) {
    (void)stream;
    return sticky_error();
}

cudaError_t cudaStreamAddCallback(cudaStream_t stream, cudaStreamCallback_t callback, void* user_data,
                                  unsigned int flags) {
    if (callback == nullptr || flags != 0) return sim::set_error(cudaErrorInvalidValue);
    callback(stream, sticky_error(), user_data);  // a callback also runs after a fault, told of it
    return cudaSuccess;
}

cudaError_t cudaDeviceGetStreamPriorityRange(int* least, int* greatest) {
    if (least != nullptr) *least = 0;
    if (greatest != nullptr) *greatest = -5;
    return cudaSuccess;
}

cudaError_t cudaHostAlloc(void** ptr, size_t size, unsigned int flags) {
    const unsigned int known = cudaHostAllocPortable | cudaHostAllocMapped | cudaHostAllocWriteCombined;
    if ((flags & ~known) != 0) return sim::set_error(cudaErrorInvalidValue);
    return cudaMallocHost(ptr, size);
}

cudaError_t cudaHostGetDevicePointer(void** device_ptr, void* host_ptr, unsigned int flags) {
    if (device_ptr == nullptr || host_ptr == nullptr || flags != 0) return sim::set_error(cudaErrorInvalidValue);
    *device_ptr = host_ptr;  // kernels read host memory directly here
    return cudaSuccess;
}

cudaError_t cudaHostRegister(void* ptr, size_t size, unsigned int flags) {
    if (ptr == nullptr || size == 0 || flags > 0x0fu) return sim::set_error(cudaErrorInvalidValue);
    return cudaSuccess;
}

cudaError_t cudaHostUnregister(void* ptr) {
    return ptr == nullptr ? sim::set_error(cudaErrorInvalidValue) : cudaSuccess;
}

cudaError_t cudaSetDeviceFlags(unsigned int flags) {
    if (flags > 0x1fu) return sim::set_error(cudaErrorInvalidValue);
    sim::g_device_flags = flags;
    return cudaSuccess;
}

cudaError_t cudaGetDeviceFlags(unsigned int* flags) {
    if (flags == nullptr) return sim::set_error(cudaErrorInvalidValue);
    *flags = sim::g_device_flags;
    return cudaSuccess;
}

cudaError_t cudaDeviceSetCacheConfig(enum cudaFuncCache config) {
    return (int)config >= 0 && (int)config <= 3 ? cudaSuccess : sim::set_error(cudaErrorInvalidValue);
}

cudaError_t cudaDeviceSetSharedMemConfig(enum cudaSharedMemConfig config) {
    return (int)config >= 0 && (int)config <= 2 ? cudaSuccess : sim::set_error(cudaErrorInvalidValue);
}

cudaError_t cudaDriverGetVersion(int* version) {
    if (version == nullptr) return sim::set_error(cudaErrorInvalidValue);
    *version = CUDART_VERSION;
    return cudaSuccess;
}

cudaError_t cudaRuntimeGetVersion(int* version) { return cudaDriverGetVersion(version); }

// ---- pitched (2-D) memory: rows of `width` bytes, `pitch` bytes apart -----------------------
cudaError_t cudaMallocPitch(void** ptr, size_t* pitch, size_t width, size_t height) {
    if (ptr == nullptr || pitch == nullptr) return sim::set_error(cudaErrorInvalidValue);
    const size_t p = width == 0 ? 0 : (width + sim::kPitchAlignment - 1) / sim::kPitchAlignment * sim::kPitchAlignment;
    *pitch = p;
    return cudaMalloc(ptr, p * height);
}

cudaError_t cudaMemcpy2D(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                         enum cudaMemcpyKind kind) {
    if (cudaError_t e = sticky_error()) return e;
    if (width == 0 || height == 0) return cudaSuccess;
    if (width > dpitch || width > spitch) return sim::set_error(cudaErrorInvalidPitchValue);
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
    if (width > pitch) return sim::set_error(cudaErrorInvalidPitchValue);
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

// Limits are kept and read back; none constrains a kernel here (stacks: SIMULATOR_STACK_KB; the
// device heap and printf buffer are the host's).
cudaError_t cudaDeviceSetLimit(enum cudaLimit limit, size_t value) {
    if ((int)limit < 0 || (int)limit >= (int)(sizeof(sim::g_limits) / sizeof(sim::g_limits[0]))) {
        return sim::set_error(cudaErrorInvalidValue);
    }
    std::lock_guard<std::mutex> lock(g_state_mu);
    sim::g_limits[limit] = value;
    return cudaSuccess;
}

cudaError_t cudaDeviceGetLimit(size_t* value, enum cudaLimit limit) {
    if (value == nullptr || (int)limit < 0 || (int)limit >= (int)(sizeof(sim::g_limits) / sizeof(sim::g_limits[0]))) {
        return sim::set_error(cudaErrorInvalidValue);
    }
    std::lock_guard<std::mutex> lock(g_state_mu);
    *value = sim::g_limits[limit];
    return cudaSuccess;
}

cudaError_t cudaProfilerStart(void) { return cudaSuccess; }  // no profiler: nothing to start

cudaError_t cudaProfilerStop(void) { return cudaSuccess; }

}  // extern "C"
