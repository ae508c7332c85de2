// Launches: the checks every launch passes (an sm_80 GPU's limits, a cooperative grid that fits
// the device), the run of one launch and of what its threads launched (execute_launch), and the
// launch calls of the host API. Launches run synchronously and are stopped past SIMULATOR_TIMEOUT
// (watchdog.cpp); a launch by address finds its kernel in the registry (kernel_registry.cpp).
#include "graphs_internal.h"

#include <algorithm>
#include <cstdio>

namespace __sim {

std::mutex g_launch_mu;
std::map<const void*, int> g_smem_optin;

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

namespace {

// SIMULATOR_LAUNCH_LOG=1's line for launch ``L``: how its blocks run and, with fibers, why (the
// run's reason first, then the front end's, which a launch through a pointer finds registered).
// Not a report (reports are findings the run counts): a line on stderr.
void log_launch(const Launch& L) {
    const char* way = L.block_loops ? "as block loops" : L.plain ? "as a plain loop" : "with fibers";
    const char* why = nullptr;
    if (!L.plain) {
        why = runtime_fibers_why(L.spec, L.checked);
        if (why == nullptr) why = L.spec.fibers_why;
        if (why == nullptr && L.kernel != nullptr) why = registered_fibers_why(L.kernel);
        if (why == nullptr) why = "the build found no loop form for this kernel";
    }
    std::fprintf(stderr, "launch log (%s): kernel '%s' (launched at %s:%d) runs %s%s%s\n", mode_name(), L.name, L.file,
                 L.line, way, why != nullptr ? ": " : "", why != nullptr ? why : "");
    std::fflush(stderr);
}

// SIMULATOR_LAUNCH_LOG=1's line for a launch whose spinning blocks let blocks not yet started
// run beside them (resident_blocks.cpp, take_turns).
void log_extra_blocks(const Launch& L) {
    std::fprintf(stderr,
                 "launch log (%s): kernel '%s' (launched at %s:%d) started %lld block(s) beside blocks that "
                 "spin, at most %lld at once\n",
                 mode_name(), L.name, L.file, L.line, L.extra_started.load(), L.extra_peak.load());
    std::fflush(stderr);
}

}  // namespace

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
    // (fast builds; simulator/block_loops.py) runs on the same path, the kernel called per block;
    // so does a barrier-free one it wrote in lockstep order (block_loops_interchange.py).
    L->block_loops = runs_block_loops(L->spec.block_loops) && !L->spec.cooperative;
    L->plain = L->plain || L->block_loops;
    if (launch_log()) log_launch(*L);
    run_launch(L);
    if (launch_log() && L->extra_started.load() > 0) log_extra_blocks(*L);
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

}  // namespace __sim

extern "C" {

// ---- launches by address -----------------------------------------------------------------------
// The call site is the one the front end records in front of the call (or that of the typed form
// of <cuda_runtime.h> that calls it).
cudaError_t cudaLaunchKernel(const void* func, dim3 grid, dim3 block, void** args, size_t smem, cudaStream_t stream) {
    const __sim::Site site = __sim::take_site();
    return __sim::launch_by_address(func, __sim::LaunchSpec{grid, block, smem, stream}, args, false, site.file, site.line);
}

cudaError_t cudaLaunchCooperativeKernel(const void* func, dim3 grid, dim3 block, void** args, size_t smem,
                                        cudaStream_t stream) {
    const __sim::Site site = __sim::take_site();
    return __sim::launch_by_address(func, __sim::LaunchSpec{grid, block, smem, stream}, args, true, site.file, site.line);
}

cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t* config, const void* func, void** args) {
    const __sim::Site site = __sim::take_site();
    return __sim::launch_ex(config, func, args, site.file, site.line);
}

// ---- a kernel's attributes -----------------------------------------------------------------------
cudaError_t cudaFuncGetAttributes(struct cudaFuncAttributes* attr, const void* func) {
    return __sim::func_get_attributes(attr, func);
}

cudaError_t cudaFuncSetAttribute(const void* func, enum cudaFuncAttribute attr, int value) {
    return __sim::func_set_attribute(func, (int)attr, value);
}

// The cache preference has no effect on a CPU; the value is checked as CUDA checks it.
cudaError_t cudaFuncSetCacheConfig(const void* func, enum cudaFuncCache config) {
    (void)func;
    return (int)config >= 0 && (int)config <= 3 ? cudaSuccess : __sim::set_error(cudaErrorInvalidValue);
}

// ---- occupancy, modelled on the device from the block size and the dynamic shared memory ----
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int* num_blocks, const void* func, int block_size,
                                                                   size_t dynamic_smem, unsigned int flags) {
    (void)func;
    if (num_blocks == nullptr || block_size <= 0 || flags > 1) return __sim::set_error(cudaErrorInvalidValue);
    *num_blocks = __sim::occupancy_blocks_per_sm(block_size, dynamic_smem);
    return cudaSuccess;
}

cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* num_blocks, const void* func, int block_size,
                                                          size_t dynamic_smem) {
    return cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(num_blocks, func, block_size, dynamic_smem, 0);
}

cudaError_t cudaOccupancyAvailableDynamicSMemPerBlock(size_t* smem, const void* func, int num_blocks, int block_size) {
    (void)func;
    if (smem == nullptr || num_blocks <= 0 || block_size <= 0 || block_size > 1024)
        return __sim::set_error(cudaErrorInvalidValue);
    const size_t per_block = (228u * 1024u) / (size_t)num_blocks;
    *smem = per_block > 1024 ? per_block - 1024 : 0;
    if (*smem > 227u * 1024u) *smem = 227u * 1024u;
    return cudaSuccess;
}

}  // extern "C"
