// The host API: the cuda* calls a program makes outside kernels. Device memory is host heap
// memory, bookkept so that copies, memsets and frees outside a live allocation are refused
// with cudaErrorInvalidValue; launches are checked against an sm_80 GPU's limits, run
// synchronously and are stopped past SIMULATOR_TIMEOUT; streams run in order (streams.cpp).
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
#include "graphs_internal.h"

#include <link.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <set>
#include <thread>

namespace __sim {

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
    if (e == cudaSuccess) return e;
    if (Fiber* f = tl_run.fiber) {
        // Called from device code: the CUDA thread's own last error (device_launch.cpp).
        f->dev_error = e;
        f->dev_error_launch = tl_run.block->launch->serial;
        f->dev_error_block = f->block_idx;
        f->dev_error_thread = f->linear;
        return e;
    }
    tl_last_error = e;
    return e;
}

namespace {
// The running CUDA thread's last error (cudaSuccess when it set none); ``clear`` resets it.
cudaError_t device_last_error(Fiber* f, bool clear) {
    const Block* b = tl_run.block;
    const bool mine = b != nullptr && f->dev_error_launch == b->launch->serial && f->dev_error_thread == f->linear &&
                      same_index(f->dev_error_block, f->block_idx);
    const cudaError_t e = mine ? f->dev_error : cudaSuccess;
    if (clear) f->dev_error = cudaSuccess;
    return e;
}
}  // namespace

cudaError_t sticky_error() { return (cudaError_t)g_sticky_error.load(); }

cudaError_t set_sticky_error(cudaError_t e) {
    int none = cudaSuccess;
    g_sticky_error.compare_exchange_strong(none, (int)e);  // the first one stays
    tl_last_error = sticky_error();
    return tl_last_error;
}

// ---- environment knobs ------------------------------------------------------------------------
// SIMULATOR_THREADS, SIMULATOR_STACK_KB and SIMULATOR_DEVICES must be whole numbers in their
// ranges (the scheduler and devices.cpp read them through knob_value; simulator/limits.py has the
// same table for the front end). A bad value is refused once, when the runtime is loaded: a
// program stops with status 2 and the one line; in a library loaded into another process (ctypes) every call that uses the
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
    {"SIMULATOR_DEVICES", 1, kMaxDevices, "modelled GPUs", "1"},
    {"SIMULATOR_DEVICE_MEMORY_MIB", 1, 16L << 20, "MiB of memory per modelled GPU", "the host's physical memory"},
};

enum class KnobState { kUnset, kValid, kInvalid };

// ``k``'s value from the environment into *value when it is a whole number in its range.
KnobState read_knob(const Knob& k, const char* v, long* value) {
    if (v == nullptr || *v == '\0') return KnobState::kUnset;
    const size_t n = std::strlen(v);
    if (n > 9 || std::strspn(v, "0123456789") != n) return KnobState::kInvalid;
    *value = std::strtol(v, nullptr, 10);
    return *value >= k.lo && *value <= k.hi ? KnobState::kValid : KnobState::kInvalid;
}

// The first bad knob as one line, or "" when every knob is valid or unset.
std::string knob_error() {
    for (const Knob& k : kKnobs) {
        const char* v = std::getenv(k.name);
        long value;
        if (read_knob(k, v, &value) == KnobState::kInvalid) {
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

}  // namespace

long knob_value(const char* name, long fallback) {
    for (const Knob& k : kKnobs) {
        long value;
        if (std::strcmp(k.name, name) == 0 && read_knob(k, std::getenv(name), &value) == KnobState::kValid)
            return value;
    }
    return fallback;
}

namespace {

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

// A program's stdout is fully buffered when it is a pipe, as it is under `run` (whose pumps
// copy it on): `run` sets SIMULATOR_LINE_BUFFERED=1 where the program would have written to a
// terminal, or when asked, so that each line shows when it is printed. Runs before every other
// static constructor, since setvbuf must come before the stream's first output. A library loaded
// into another process leaves that process's stdout alone.
__attribute__((constructor(101))) void line_buffer_stdout_when_asked() {
    const char* v = std::getenv("SIMULATOR_LINE_BUFFERED");
    if (v == nullptr || *v == '\0' || std::strcmp(v, "0") == 0 || !in_main_program()) return;
    if (std::strcmp(v, "1") == 0) {
        std::setvbuf(stdout, nullptr, _IOLBF, BUFSIZ);
        return;
    }
    std::fprintf(stderr,
                 "simulator: SIMULATOR_LINE_BUFFERED='%.80s' is not 0 or 1 (1 line-buffers the program's stdout); "
                 "stdout keeps its usual buffering\n",
                 v);
}

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

cudaError_t check_launch_config(const LaunchSpec& spec, const void* kernel, size_t* smem_limit) {
    const dim3 g = spec.grid, bl = spec.block;
    const unsigned long long threads = (unsigned long long)bl.x * bl.y * bl.z;
    if (g.x == 0 || g.y == 0 || g.z == 0 || bl.x == 0 || bl.y == 0 || bl.z == 0 || bl.x > 1024 || bl.y > 1024 ||
        bl.z > 64 || threads > 1024 || g.x > 2147483647u || g.y > 65535 || g.z > 65535) {
        return cudaErrorInvalidConfiguration;
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
    if (spec.smem > limit) return cudaErrorInvalidValue;
    *smem_limit = limit;
    return cudaSuccess;
}

// As on a GPU, every block of a cooperative launch must be resident at once: true (with a note)
// when the grid is larger than the modelled device holds.
static bool cooperative_too_large(const LaunchSpec& spec, const char* name, const char* file, int line) {
    const dim3 g = spec.grid, bl = spec.block;
    const unsigned long long threads = (unsigned long long)bl.x * bl.y * bl.z;
    const int per_sm = occupancy_blocks_per_sm((int)threads, spec.smem);
    const unsigned long long most = (unsigned long long)per_sm * (unsigned long long)occupancy_sm_count();
    const unsigned long long blocks = (unsigned long long)g.x * g.y * g.z;
    if (blocks <= most) return false;
    std::fprintf(stderr,
                 "note (simulator): cooperative launch of kernel '%s' at %s:%d: %llu blocks, but the modelled "
                 "device holds at most %llu at once (%d per multiprocessor for %llu threads and %zu bytes of "
                 "dynamic shared memory, times %d multiprocessors); returns "
                 "cudaErrorCooperativeLaunchTooLarge\n",
                 name, file, line, blocks, most, per_sm, threads, spec.smem, occupancy_sm_count());
    std::fflush(stderr);
    return true;
}

unsigned long long next_launch_serial() {
    static std::atomic<unsigned long long> serial{0};
    return ++serial;
}

void launch_raw(const KernelCall& call) {
    const LaunchSpec& spec = call.spec;
    if (device_launch_running() != nullptr) {
        // From device code only a null kernel pointer gets here (device_launch takes the rest), or
        // a launch by address, which CUDA's device runtime does not provide either.
        if (call.invoke != nullptr)
            report("%s:%d: a launch by address from device code is not provided", call.file, call.line);
        set_error(call.invoke == nullptr ? cudaErrorInvalidDeviceFunction : cudaErrorNotSupported);
        return;
    }
    std::lock_guard<std::mutex> launch_lock(g_launch_mu);
    if (sticky_error() != cudaSuccess) return;  // cudaGetLastError returns it
    if (!known_stream(spec.stream)) {
        set_error(cudaErrorInvalidResourceHandle);
        return;
    }
    if (call.invoke == nullptr) {  // a null kernel pointer
        set_error(cudaErrorInvalidDeviceFunction);
        return;
    }
    size_t limit = 0;
    if (cudaError_t e = check_launch_config(spec, call.kernel, &limit)) {
        set_error(e);
        return;
    }
    if (spec.cooperative && cooperative_too_large(spec, call.name, call.file, call.line)) {
        set_error(cudaErrorCooperativeLaunchTooLarge);
        return;
    }
    Launch L(call, limit);
    execute_launch(&L);
}

void execute_launch(Launch* L) {
    const dim3 g = L->spec.grid;
    L->nblocks = (unsigned long long)g.x * g.y * g.z;
    L->timeout_s = launch_timeout_s();
    L->serial = next_launch_serial();
    L->checked = launch_checked(L->name);
    // fast, memcheck and synccheck run barrier-free kernels as plain loops (what memcheck and
    // synccheck find does not depend on it); racecheck keeps a fiber per CUDA thread of a launch
    // it checks, and a cooperative launch keeps every block resident on fibers.
    L->plain = runs_plain(L->spec.barrier_free, L->checked) && !L->spec.cooperative;
    // A kernel with barriers that the front end also wrote as loops over the block's threads
    // (fast builds; simulator/block_loops.py) runs on the same path, the kernel called per block.
    L->block_loops = !L->plain && runs_block_loops(L->spec.block_loops) && !L->spec.cooperative;
    L->plain = L->plain || L->block_loops;
    if (launch_log()) {
        // Not a report (reports are findings the run counts): a line on stderr.
        std::fprintf(stderr, "launch log (%s): kernel '%s' (launched at %s:%d) runs %s\n", mode_name(), L->name, L->file,
                     L->line, L->block_loops ? "as block loops" : L->plain ? "as a plain loop" : "with fibers");
        std::fflush(stderr);
    }
    run_launch(L);
    if (L->timed_out.load()) {
        report("%s: launch timeout: kernel '%s' (launched at %s:%d) ran longer than SIMULATOR_TIMEOUT=%g s and was "
               "stopped; the launch returns cudaErrorLaunchTimeout, which is sticky",
               mode_name(), L->name, L->file, L->line, L->timeout_s);
        if (size_t n = queued_children(L)) {
            report("%s: kernel '%s' had launched %zu child grid(s) from device code, which run only after it "
                   "ends here: a parent that waits for its children's results (a spin on a flag a child "
                   "sets) can finish on a GPU, where a child may run alongside its parent (CUDA does not "
                   "promise it), but never in the simulator",
                   mode_name(), L->name, n);
        }
        set_sticky_error(cudaErrorLaunchTimeout);
    } else if (L->faulted.load()) {
        set_sticky_error(cudaErrorIllegalAddress);
    } else if (L->asserted.load()) {
        set_sticky_error(cudaErrorAssert);
    } else if (L->failed.load()) {
        set_sticky_error(cudaErrorLaunchFailure);
    }
    // A grid completes when its child grids do: they run now (a failed grid's are dropped).
    if (sticky_error() == cudaSuccess) {
        run_children(L);
    } else {
        drop_children(L);
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
unsigned int g_device_flags = 0;
constexpr size_t kPitchAlignment = 512;  // cudaMallocPitch's row alignment (texturePitchAlignment is 32)
// cudaLimit values, CUDA's defaults on an sm_80 GPU (guarded by g_state_mu).
size_t g_limits[7] = {1024, 1 << 20, 8 << 20, 2, 2048, 64, 0};

}  // namespace

}  // namespace __sim

// ---- host API ------------------------------------------------------------------------------
using __sim::g_allocs;
using __sim::g_state_mu;
using __sim::sticky_error;

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

cudaError_t cudaGetLastError(void) {
    if (__sim::Fiber* f = __sim::tl_run.fiber) return __sim::device_last_error(f, true);
    const cudaError_t e = __sim::tl_last_error;
    __sim::tl_last_error = cudaSuccess;
    if (cudaError_t sticky = sticky_error()) return sticky;
    return e;
}

cudaError_t cudaPeekAtLastError(void) {
    if (__sim::Fiber* f = __sim::tl_run.fiber) return __sim::device_last_error(f, false);
    if (cudaError_t sticky = sticky_error()) return sticky;
    return __sim::tl_last_error;
}

cudaError_t cudaDeviceSynchronize(void) {
    if (__sim::Launch* parent = __sim::device_launch_running()) return __sim::device_synchronize(parent);  // device code
    return sticky_error();
}

// A reset destroys the current device's context: its device allocations and its peer access go;
// function attributes and the sticky error are the process's here, not per device, and go too
// (see the top of this file for how this differs from CUDA's promise).
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

// ---- streams, host memory and device flags ---------------------------------------------------
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

}  // extern "C"
