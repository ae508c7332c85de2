// The driver API's contexts, memory, streams and events, each call one of the runtime's: a context
// is a device (the runtime's per-device state is the context) held on a per-thread stack, as the
// driver keeps it, so that a context pushed on another thread selects its device there too.
#include "sim_internal.h"
#include "driver_internal.h"

#include <algorithm>
#include <mutex>
#include <set>
#include <vector>

#include <cuda.h>

// What a CUcontext points at. Destroyed contexts are never freed: a later context at the same
// address would make a stale handle look live again.
struct CUctx_st {
    int device;
    bool primary;
    int primary_refs;
};

namespace {

std::mutex g_ctx_mu;
std::set<const CUctx_st*> g_live_contexts;          // guarded by g_ctx_mu
std::vector<CUctx_st*> g_primary_contexts;          // one per device, made on first retain
thread_local std::vector<CUctx_st*> tl_ctx_stack;  // this thread's contexts, current last
// cudaSetDevice made the runtime's device's primary context current on this thread, and no driver
// call has looked at the stack since: the stack's bottom is that context.
thread_local bool tl_runtime_bound = false;

// ``dev``'s primary context, made on first use (g_ctx_mu held).
CUctx_st* primary_of(int dev) {
    if (g_primary_contexts.size() <= (size_t)dev) g_primary_contexts.resize((size_t)dev + 1, nullptr);
    CUctx_st*& primary = g_primary_contexts[(size_t)dev];
    if (primary == nullptr) {
        primary = new CUctx_st{dev, true, 0};
        g_live_contexts.insert(primary);
    }
    return primary;
}

// This thread's context stack, with the primary context the runtime bound at its bottom: a
// program that used the runtime first gets that context from cuCtxGetCurrent, and pops back to
// it, as with CUDA's runtime, which binds it before the driver's calls see the stack.
std::vector<CUctx_st*>& ctx_stack() {
    if (tl_runtime_bound && tl_ctx_stack.empty()) {
        std::lock_guard<std::mutex> lock(g_ctx_mu);
        tl_ctx_stack.push_back(primary_of(__sim::current_device()));
    }
    tl_runtime_bound = false;
    return tl_ctx_stack;
}

bool ctx_live(const CUctx_st* ctx) {
    std::lock_guard<std::mutex> lock(g_ctx_mu);
    return ctx != nullptr && g_live_contexts.count(ctx) != 0;
}

// Makes ``ctx``'s device the runtime's current one on this thread (null: leaves it).
CUresult ctx_select(const CUctx_st* ctx) {
    if (ctx != nullptr) __sim::select_device(ctx->device);
    return CUDA_SUCCESS;
}

using __sim::driver_status;

void* dptr_of(CUdeviceptr p) { return reinterpret_cast<void*>(static_cast<uintptr_t>(p)); }

// The runtime's copy kind for a driver copy: a side that is a module variable
// (cuModuleGetGlobal) is host memory to the runtime, which knows device allocations only.
cudaMemcpyKind copy_kind(void* dst, const void* src, size_t n, bool dst_device, bool src_device) {
    dst_device = dst_device && !__sim::module_global(dst, n);
    src_device = src_device && !__sim::module_global(src, n);
    if (dst_device) return src_device ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice;
    return src_device ? cudaMemcpyDeviceToHost : cudaMemcpyHostToHost;
}

CUresult drv_copy(void* dst, const void* src, size_t n, bool dst_device, bool src_device) {
    SIM_DRIVER_READY();
    return driver_status(cudaMemcpy(dst, src, n, copy_kind(dst, src, n, dst_device, src_device)));
}

CUresult drv_copy_async(void* dst, const void* src, size_t n, bool dst_device, bool src_device, CUstream stream) {
    SIM_DRIVER_READY();
    return driver_status(cudaMemcpyAsync(dst, src, n, copy_kind(dst, src, n, dst_device, src_device), stream));
}

// cuMemsetD16/D32 (and D8 on a module variable): the pattern written through a host buffer, as
// the runtime has byte memset only, and that of device allocations.
template <class T>
CUresult memset_pattern(CUdeviceptr dst, T value, size_t n) {
    SIM_DRIVER_READY();
    if (n == 0) return CUDA_SUCCESS;
    if (dst % sizeof(T) != 0) return CUDA_ERROR_INVALID_VALUE;
    std::vector<T> pattern(n, value);
    return drv_copy(dptr_of(dst), pattern.data(), n * sizeof(T), true, false);
}

}  // namespace

void __sim::runtime_binds_primary_context() {
    __sim::runtime_initialises_driver();
    if (tl_ctx_stack.empty()) {
        tl_runtime_bound = true;
    } else {  // as cuCtxSetCurrent: the device's primary context replaces the current one
        std::lock_guard<std::mutex> lock(g_ctx_mu);
        tl_ctx_stack.back() = primary_of(__sim::current_device());
    }
}

extern "C" {

// ---- contexts ----------------------------------------------------------------------------
CUresult cuCtxCreate(CUcontext* pctx, CUctxCreateParams* params, unsigned int flags, CUdevice dev) {
    (void)flags;  // scheduling and mapping flags change nothing on a CPU
    SIM_DRIVER_READY();
    if (pctx == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (params != nullptr && (params->numExecAffinityParams != 0 || params->cigParams != nullptr)) {
        std::fprintf(stderr, "note (simulator): cuCtxCreate: execution affinity and CIG parameters are "
                             "not modelled; pass a CUctxCreateParams with neither\n");
        return CUDA_ERROR_NOT_SUPPORTED;
    }
    if (!__sim::valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
    auto* ctx = new CUctx_st{dev, false, 0};
    {
        std::lock_guard<std::mutex> lock(g_ctx_mu);
        g_live_contexts.insert(ctx);
    }
    ctx_stack().push_back(ctx);
    *pctx = ctx;
    return ctx_select(ctx);
}

CUresult cuCtxDestroy(CUcontext ctx) {
    SIM_DRIVER_READY();
    {
        std::lock_guard<std::mutex> lock(g_ctx_mu);
        if (ctx == nullptr || g_live_contexts.count(ctx) == 0 || ctx->primary) return CUDA_ERROR_INVALID_CONTEXT;
        g_live_contexts.erase(ctx);
    }
    __sim::select_device(ctx->device);
    cudaDeviceSynchronize();  // the context's work ends with it
    // Current on this thread: it is popped, as the driver does (other threads' stacks keep a
    // handle that no call accepts any more).
    ctx_stack().erase(std::remove(ctx_stack().begin(), ctx_stack().end(), ctx), ctx_stack().end());
    if (!ctx_stack().empty()) return ctx_select(ctx_stack().back());
    return CUDA_SUCCESS;
}

CUresult cuCtxPushCurrent(CUcontext ctx) {
    SIM_DRIVER_READY();
    if (!ctx_live(ctx)) return CUDA_ERROR_INVALID_CONTEXT;
    ctx_stack().push_back(ctx);
    return ctx_select(ctx);
}

CUresult cuCtxPopCurrent(CUcontext* pctx) {
    SIM_DRIVER_READY();
    if (ctx_stack().empty()) return CUDA_ERROR_INVALID_CONTEXT;
    CUctx_st* top = ctx_stack().back();
    ctx_stack().pop_back();
    if (pctx != nullptr) *pctx = top;
    return ctx_stack().empty() ? CUDA_SUCCESS : ctx_select(ctx_stack().back());
}

CUresult cuCtxSetCurrent(CUcontext ctx) {
    SIM_DRIVER_READY();
    if (ctx == nullptr) {  // unbinds the current context
        if (!ctx_stack().empty()) ctx_stack().pop_back();
        return CUDA_SUCCESS;
    }
    if (!ctx_live(ctx)) return CUDA_ERROR_INVALID_CONTEXT;
    if (ctx_stack().empty()) {
        ctx_stack().push_back(ctx);
    } else {
        ctx_stack().back() = ctx;
    }
    return ctx_select(ctx);
}

CUresult cuCtxGetCurrent(CUcontext* pctx) {
    SIM_DRIVER_READY();
    if (pctx == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *pctx = ctx_stack().empty() ? nullptr : ctx_stack().back();
    return CUDA_SUCCESS;
}

CUresult cuCtxGetDevice(CUdevice* device) {
    SIM_DRIVER_READY();
    if (device == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (ctx_stack().empty() || !ctx_live(ctx_stack().back())) return CUDA_ERROR_INVALID_CONTEXT;
    *device = ctx_stack().back()->device;
    return CUDA_SUCCESS;
}

CUresult cuCtxSynchronize(void) {
    SIM_DRIVER_READY();
    if (ctx_stack().empty() || !ctx_live(ctx_stack().back())) return CUDA_ERROR_INVALID_CONTEXT;
    return driver_status(cudaDeviceSynchronize());
}

CUresult cuDevicePrimaryCtxRetain(CUcontext* pctx, CUdevice dev) {
    SIM_DRIVER_READY();
    if (pctx == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (!__sim::valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
    std::lock_guard<std::mutex> lock(g_ctx_mu);
    CUctx_st* primary = primary_of(dev);
    primary->primary_refs++;
    *pctx = primary;
    return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRelease(CUdevice dev) {
    SIM_DRIVER_READY();
    if (!__sim::valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
    std::lock_guard<std::mutex> lock(g_ctx_mu);
    if (g_primary_contexts.size() <= (size_t)dev || g_primary_contexts[(size_t)dev] == nullptr ||
        g_primary_contexts[(size_t)dev]->primary_refs == 0)
        return CUDA_ERROR_INVALID_CONTEXT;
    // The primary context stays usable: the runtime's device state is never torn down here.
    g_primary_contexts[(size_t)dev]->primary_refs--;
    return CUDA_SUCCESS;
}

// ---- memory ------------------------------------------------------------------------------
CUresult cuMemAlloc(CUdeviceptr* dptr, size_t bytes) {
    SIM_DRIVER_READY();
    if (dptr == nullptr || bytes == 0) return CUDA_ERROR_INVALID_VALUE;
    void* p = nullptr;
    CUresult r = driver_status(cudaMalloc(&p, bytes));
    if (r == CUDA_SUCCESS) *dptr = reinterpret_cast<uintptr_t>(p);
    return r;
}

CUresult cuMemFree(CUdeviceptr dptr) {
    SIM_DRIVER_READY();
    return driver_status(cudaFree(dptr_of(dptr)));
}

CUresult cuMemAllocHost(void** pp, size_t bytes) {
    SIM_DRIVER_READY();
    if (pp == nullptr || bytes == 0) return CUDA_ERROR_INVALID_VALUE;
    return driver_status(cudaMallocHost(pp, bytes));
}

CUresult cuMemHostAlloc(void** pp, size_t bytes, unsigned int flags) {
    SIM_DRIVER_READY();
    if (pp == nullptr || bytes == 0) return CUDA_ERROR_INVALID_VALUE;
    return driver_status(cudaHostAlloc(pp, bytes, flags));  // CU_MEMHOSTALLOC_* are cudaHostAlloc*'s values
}

CUresult cuMemFreeHost(void* p) {
    SIM_DRIVER_READY();
    return driver_status(cudaFreeHost(p));
}

CUresult cuMemcpyHtoD(CUdeviceptr dst, const void* src, size_t n) { return drv_copy(dptr_of(dst), src, n, true, false); }

CUresult cuMemcpyDtoH(void* dst, CUdeviceptr src, size_t n) { return drv_copy(dst, dptr_of(src), n, false, true); }

CUresult cuMemcpyDtoD(CUdeviceptr dst, CUdeviceptr src, size_t n) {
    return drv_copy(dptr_of(dst), dptr_of(src), n, true, true);
}

CUresult cuMemcpyHtoDAsync(CUdeviceptr dst, const void* src, size_t n, CUstream stream) {
    return drv_copy_async(dptr_of(dst), src, n, true, false, stream);
}

CUresult cuMemcpyDtoHAsync(void* dst, CUdeviceptr src, size_t n, CUstream stream) {
    return drv_copy_async(dst, dptr_of(src), n, false, true, stream);
}

CUresult cuMemcpyDtoDAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream stream) {
    return drv_copy_async(dptr_of(dst), dptr_of(src), n, true, true, stream);
}

CUresult cuMemsetD8(CUdeviceptr dst, unsigned char value, size_t n) {
    SIM_DRIVER_READY();
    if (__sim::module_global(dptr_of(dst), n)) return memset_pattern(dst, value, n);
    return driver_status(cudaMemset(dptr_of(dst), value, n));
}

CUresult cuMemsetD16(CUdeviceptr dst, unsigned short value, size_t n) { return memset_pattern(dst, value, n); }

CUresult cuMemsetD32(CUdeviceptr dst, unsigned int value, size_t n) { return memset_pattern(dst, value, n); }

// ---- streams and events ------------------------------------------------------------------
CUresult cuStreamCreate(CUstream* stream, unsigned int flags) {
    SIM_DRIVER_READY();
    if (stream == nullptr) return CUDA_ERROR_INVALID_VALUE;
    return driver_status(cudaStreamCreateWithFlags(stream, flags));  // CU_STREAM_NON_BLOCKING is cudaStreamNonBlocking
}

CUresult cuStreamSynchronize(CUstream stream) {
    SIM_DRIVER_READY();
    return driver_status(cudaStreamSynchronize(stream));
}

CUresult cuStreamWaitEvent(CUstream stream, CUevent event, unsigned int flags) {
    SIM_DRIVER_READY();
    return driver_status(cudaStreamWaitEvent(stream, event, flags));  // CU_EVENT_WAIT_* are cudaEventWait*'s
}

CUresult cuStreamQuery(CUstream stream) {
    SIM_DRIVER_READY();
    return driver_status(cudaStreamQuery(stream));  // CUDA_ERROR_NOT_READY is cudaErrorNotReady's 600
}

CUresult cuStreamDestroy(CUstream stream) {
    SIM_DRIVER_READY();
    return driver_status(cudaStreamDestroy(stream));
}

CUresult cuEventCreate(CUevent* event, unsigned int flags) {
    SIM_DRIVER_READY();
    if (event == nullptr) return CUDA_ERROR_INVALID_VALUE;
    return driver_status(cudaEventCreateWithFlags(event, flags));  // CU_EVENT_* are cudaEvent*'s values
}

CUresult cuEventRecord(CUevent event, CUstream stream) {
    SIM_DRIVER_READY();
    return driver_status(cudaEventRecord(event, stream));
}

CUresult cuEventQuery(CUevent event) {
    SIM_DRIVER_READY();
    return driver_status(cudaEventQuery(event));
}

CUresult cuEventSynchronize(CUevent event) {
    SIM_DRIVER_READY();
    return driver_status(cudaEventSynchronize(event));
}

CUresult cuEventElapsedTime(float* ms, CUevent start, CUevent end) {
    SIM_DRIVER_READY();
    return driver_status(cudaEventElapsedTime(ms, start, end));
}

CUresult cuEventDestroy(CUevent event) {
    SIM_DRIVER_READY();
    return driver_status(cudaEventDestroy(event));
}

}  // extern "C"
// sim-runtime: cold
