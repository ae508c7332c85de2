// The kernel registry and what the launch forms that name a kernel by address do (their calls,
// cudaLaunchKernel, cudaLaunchKernelEx(C), cudaLaunchCooperativeKernel and cudaFuncGetAttributes,
// are in launch.cpp). A registry entry turns `void** args` into a copy of the arguments in the
// kernel's own parameter types (KernelPacker in launch.h), which a launch or a graph node then runs.
// Every <<<>>> launch and every launch template ends here too: launch_at_site chooses what a
// launch site runs, and dispatch_pack runs it, queues it (a launch by a CUDA thread) or records it
// (a capture), so that each of those choices is made in one place.
#include "graphs_internal.h"

#include <algorithm>
#include <unordered_map>

namespace __sim {
namespace {

std::mutex g_registry_mu;
std::unordered_map<const void*, KernelEntry>& registry() {
    static auto* table = new std::unordered_map<const void*, KernelEntry>();  // outlives exit-time launches
    return *table;
}

// Launch-by-address failures a program can recover from print one line each time, naming the
// rule, so that a wrong result is never silent.
cudaError_t refuse(cudaError_t e, const char* fmt, const void* func) {
    char buf[512];
    std::snprintf(buf, sizeof buf, fmt, func);
    std::fprintf(stderr, "note (simulator): %s\n", buf);
    std::fflush(stderr);
    return set_error(e);
}

}  // namespace

bool register_kernel_raw(const void* kernel, const char* name, int nparams, MakePack make, void (*invoke)(void*),
                         RunPlain run_plain, void (*destroy)(void*), bool by_name, bool barrier_free,
                         bool block_loops, const char* fibers_why) {
    std::lock_guard<std::mutex> lock(g_registry_mu);
    auto& table = registry();
    const KernelEntry entry{name,    nparams, make,         invoke,      run_plain,
                            destroy, by_name, barrier_free, block_loops, fibers_why};
    auto it = table.find(kernel);
    if (it == table.end()) {
        table.emplace(kernel, entry);
    } else if (by_name && !it->second.by_name) {
        // The definition's registration came after a typed form's or a launch's.
        it->second = entry;
    } else if (it->second.name == nullptr && name != nullptr) {
        it->second.name = name;  // a typed form registered it first, without a name
    }
    return true;
}

namespace {
struct ParamLayout {
    int n;
    const size_t* sizes;
    const size_t* aligns;
};
std::unordered_map<const void*, ParamLayout>& param_layouts() {
    static auto* table = new std::unordered_map<const void*, ParamLayout>();  // as registry()
    return *table;
}
}  // namespace

void register_kernel_params(const void* kernel, int n, const size_t* sizes, const size_t* aligns) {
    std::lock_guard<std::mutex> lock(g_registry_mu);
    param_layouts()[kernel] = ParamLayout{n, sizes, aligns};
}

bool kernel_params(const void* kernel, int* n, const size_t** sizes, const size_t** aligns) {
    std::lock_guard<std::mutex> lock(g_registry_mu);
    auto it = param_layouts().find(kernel);
    if (it == param_layouts().end()) return false;
    *n = it->second.n;
    *sizes = it->second.sizes;
    *aligns = it->second.aligns;
    return true;
}

bool registered_barrier_free(const void* kernel) {
    KernelEntry e;
    return find_kernel(kernel, &e) && e.barrier_free;
}

const char* registered_fibers_why(const void* kernel) {
    KernelEntry e;
    return find_kernel(kernel, &e) ? e.fibers_why : nullptr;
}

bool find_kernel(const void* kernel, KernelEntry* out) {
    std::lock_guard<std::mutex> lock(g_registry_mu);
    auto it = registry().find(kernel);
    if (it == registry().end()) return false;
    *out = it->second;
    return true;
}

void dispatch_pack(KernelCall call, MakePack make, const void* fn, void** args) {
    call.pack = make(fn, args);
    if (tl_thread != nullptr) {
        device_launch(call);
    } else if (capturing(call.spec.stream)) {
        capture_kernel(call);
    } else {
        void (*destroy)(void*) = call.destroy;
        call.destroy = nullptr;  // the pack stays this call's while the launch runs
        launch_raw(call);
        destroy(call.pack);
    }
}

bool launch_by_name(const KernelCall& site, void** args) {
    KernelEntry e;
    if (!find_kernel(site.kernel, &e) || !e.by_name || e.run_plain == nullptr) return false;
    KernelCall call = site;
    call.invoke = e.invoke;
    call.run_plain = e.run_plain;
    call.destroy = e.destroy;
    call.registered_call = true;
    dispatch_pack(call, e.make, call.kernel, args);
    return true;
}

void launch_at_site(const SiteLaunch& site, void** args) {
    const KernelCall& call = site.call;
    if (call.kernel == nullptr) {
        // Launching a null kernel pointer: a GPU refuses it with cudaErrorInvalidDeviceFunction.
        launch_raw(KernelCall{call.spec, call.name, call.file, call.line});
        return;
    }
    register_kernel_raw(call.kernel, call.name, site.nparams, site.make, call.invoke, call.run_plain, call.destroy);
    if (site.through_pointer) {
        // The front end could not tell which kernel (and passed false), but the kernel's
        // definition registered whether it is barrier-free.
        KernelCall through_pointer = call;
        through_pointer.spec.barrier_free = call.spec.barrier_free || registered_barrier_free(call.kernel);
        dispatch_pack(through_pointer, site.pack, call.kernel, args);
        return;
    }
    if (const SiteCall* own = site.by_name) {
        // The site's own call by name, where the defaults need it or the plain loop then calls the
        // kernel directly. A call that captured nothing may outlive this statement (a graph node
        // replays it, a device launch runs it later); one that captured a reference may not.
        if (own->only ||
            (call.spec.barrier_free && (own->outlives || (tl_thread == nullptr && !capturing(call.spec.stream))))) {
            KernelCall by_name = call;
            by_name.invoke = own->invoke;
            by_name.run_plain = own->run_plain;
            by_name.destroy = own->destroy;
            dispatch_pack(by_name, own->make, own->fn, args);
            return;
        }
    } else if (call.spec.barrier_free && launch_by_name(call, args)) {
        // Called by name for a barrier-free kernel: the loop of the kernel's definition's
        // registration, which calls it by name as this launch's own would.
        return;
    }
    dispatch_pack(call, site.pack, call.kernel, args);
}

cudaError_t unknown_kernel(const void* func, const char* call) {
    char fmt[256];
    std::snprintf(fmt, sizeof fmt,
                  "%s: kernel %%p is not registered: the build registers every kernel definition, and a "
                  "kernel template's instance once it is launched with <<<>>> or a typed call or named with its "
                  "template arguments in host code; this address is neither (a host function?)",
                  call);
    return refuse(cudaErrorInvalidDeviceFunction, fmt, func);
}

cudaError_t make_kernel_op(const void* func, const LaunchSpec& spec, void** args, const char* file, int line,
                           const char* call, KernelOp* op) {
    if (func == nullptr) return set_error(cudaErrorInvalidDeviceFunction);
    KernelEntry e;
    if (!find_kernel(func, &e)) return unknown_kernel(func, call);
    if (args == nullptr && e.nparams > 0) return set_error(cudaErrorInvalidValue);
    KernelCall record{spec, e.name != nullptr ? e.name : "(launched by address)", file, line, func, e.invoke, e.run_plain};
    record.spec.barrier_free = e.barrier_free;
    record.spec.block_loops = e.block_loops;
    record.spec.fibers_why = e.fibers_why;
    record.pack = e.make(func, args);
    record.destroy = e.destroy;
    *op = KernelOp(record);
    return cudaSuccess;
}

cudaError_t run_kernel_op(const KernelOp& op) {
    const cudaError_t before = tl_last_error;
    tl_last_error = cudaSuccess;
    launch_raw(op);
    const cudaError_t e = tl_last_error;
    if (e == cudaSuccess) tl_last_error = before;
    return e != cudaSuccess ? e : sticky_error();
}

cudaError_t launch_by_address(const void* func, const LaunchSpec& spec, void** args, bool cooperative,
                              const char* file, int line) {
    if (cudaError_t e = sticky_error()) return e;
    LaunchSpec s = spec;
    s.cooperative = cooperative;  // run_cooperative keeps every block resident for grid.sync()
    KernelOp op;
    if (cudaError_t e = make_kernel_op(func, s, args, file, line,
                                       cooperative ? "cudaLaunchCooperativeKernel" : "cudaLaunchKernel", &op))
        return e;
    if (capturing(spec.stream)) return capture_op(op);
    return run_kernel_op(op);
}

cudaError_t launch_ex(const cudaLaunchConfig_t* config, const void* func, void** args, const char* file, int line) {
    if (config == nullptr || (config->numAttrs > 0 && config->attrs == nullptr)) return set_error(cudaErrorInvalidValue);
    bool cooperative = false;
    for (unsigned int i = 0; i < config->numAttrs; ++i) {
        const cudaLaunchAttribute& a = config->attrs[i];
        switch (a.id) {
            case cudaLaunchAttributeIgnore:
            case cudaLaunchAttributePriority:  // one stream, run in order: a priority changes nothing
                break;
            case cudaLaunchAttributeAccessPolicyWindow: {
                // Checked as cudaStreamSetAttribute checks it; there is no cache to steer.
                const cudaAccessPolicyWindow& w = a.val.accessPolicyWindow;
                cudaDeviceProp prop;
                cudaGetDeviceProperties(&prop, 0);
                if (w.num_bytes > (size_t)prop.accessPolicyMaxWindowSize || !(w.hitRatio >= 0.0f && w.hitRatio <= 1.0f) ||
                    (int)w.hitProp < 0 || (int)w.hitProp > 2 || (int)w.missProp < 0 || (int)w.missProp > 2)
                    return set_error(cudaErrorInvalidValue);
                break;
            }
            case cudaLaunchAttributeCooperative:
                cooperative = cooperative || a.val.cooperative != 0;
                break;
            default: {
                char buf[256];
                std::snprintf(buf, sizeof buf,
                              "cudaLaunchKernelEx: launch attribute %d is not supported by the simulator (supported: "
                              "access policy window, priority, cooperative); returns cudaErrorInvalidValue",
                              (int)a.id);
                std::fprintf(stderr, "note (simulator): %s\n", buf);
                return set_error(cudaErrorInvalidValue);
            }
        }
    }
    return launch_by_address(func, LaunchSpec{config->gridDim, config->blockDim, config->dynamicSmemBytes, config->stream},
                             args, cooperative, file, line);
}

cudaError_t func_get_attributes(struct cudaFuncAttributes* attr, const void* func) {
    if (attr == nullptr) return set_error(cudaErrorInvalidValue);
    KernelEntry e;
    if (func == nullptr) return set_error(cudaErrorInvalidDeviceFunction);
    // Any kernel's attributes: a kernel of a library's header (CUB asks for its EmptyKernel's to
    // learn the PTX version) is not in the registry until it is launched.
    (void)e;
    std::memset(attr, 0, sizeof(*attr));
    attr->maxThreadsPerBlock = 1024;
    attr->ptxVersion = 80;  // the modelled sm_80 device
    attr->binaryVersion = 80;
    attr->preferredShmemCarveout = -1;
    int optin = 0;
    {
        std::lock_guard<std::mutex> lock(g_state_mu);
        auto it = g_smem_optin.find(func);
        if (it != g_smem_optin.end()) optin = it->second;
    }
    attr->maxDynamicSharedSizeBytes = std::max(optin, (int)kDefaultSmemLimit);
    return sticky_error();
}

}  // namespace __sim
