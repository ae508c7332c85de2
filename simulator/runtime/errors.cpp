// The error state and the calls that read it: each host thread's last error and the context's
// sticky error (cudaGetLastError, cudaPeekAtLastError), cudaGetErrorName and cudaGetErrorString
// for every error code NVIDIA's <driver_types.h> declares (sim_toolkit_errors.inc, generated from
// it by simulator/toolkit_index.py) with the texts of error_texts.h, the driver API's
// cuGetErrorName/cuGetErrorString likewise, and the error of a __global__ function called
// without a launch configuration.
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

#include <cuda.h>

#include <atomic>
#include <cstdio>

#include "error_texts.h"

namespace __sim {

__thread cudaError_t tl_last_error = cudaSuccess;
std::atomic<int> g_sticky_error{cudaSuccess};

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

// A kernel called as a plain function from host code (through a pointer or a template, where
// nvcc cannot refuse it): as with CUDA's host stub, which finds no configuration to pop, the
// kernel does not run and the call records cudaErrorMissingConfiguration (not sticky).
void unconfigured_call(const char* name) {
    static std::atomic<bool> said{false};
    if (!said.exchange(true))
        std::fprintf(stderr,
                     "note (simulator): the __global__ function '%s' was called from host code without "
                     "<<<...>>>; it does not run and the call sets cudaErrorMissingConfiguration\n",
                     name);
    if (sticky_error() == cudaSuccess) set_error(cudaErrorMissingConfiguration);
}

}  // namespace __sim

using __sim::sticky_error;

extern "C" {

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

const char* cudaGetErrorName(cudaError_t error) {
    switch (error) {
#define SIM_ERROR(name, text) \
    case name:                \
        return #name;
#define SIM_DRIVER_ERROR(name, text)
#include "sim_toolkit_errors.inc"
#undef SIM_DRIVER_ERROR
#undef SIM_ERROR
    }
    return "cudaErrorUnknown";
}

const char* cudaGetErrorString(cudaError_t error) {
    switch (error) {
#define SIM_TEXT(name, text) \
    case name:               \
        return text;
        SIM_ERROR_TEXTS(SIM_TEXT)
#undef SIM_TEXT
        default:
            break;
    }
    switch (error) {
#define SIM_ERROR(name, text) \
    case name:                \
        return text;
#define SIM_DRIVER_ERROR(name, text)
#include "sim_toolkit_errors.inc"
#undef SIM_DRIVER_ERROR
#undef SIM_ERROR
    }
    return "unrecognized error code";
}

CUresult cuGetErrorName(CUresult error, const char** name) {
    if (name == nullptr) return CUDA_ERROR_INVALID_VALUE;
    switch (error) {
#define SIM_ERROR(code, text)
#define SIM_DRIVER_ERROR(code, text) \
    case code:                       \
        *name = #code;               \
        return CUDA_SUCCESS;
#include "sim_toolkit_errors.inc"
#undef SIM_DRIVER_ERROR
#undef SIM_ERROR
    }
    *name = nullptr;
    return CUDA_ERROR_INVALID_VALUE;
}

CUresult cuGetErrorString(CUresult error, const char** text) {
    if (text == nullptr) return CUDA_ERROR_INVALID_VALUE;
    switch (error) {
#define SIM_ERROR(code, words)
#define SIM_DRIVER_ERROR(code, words) \
    case code:                        \
        *text = words;                \
        return CUDA_SUCCESS;
#include "sim_toolkit_errors.inc"
#undef SIM_DRIVER_ERROR
#undef SIM_ERROR
    }
    *text = nullptr;
    return CUDA_ERROR_INVALID_VALUE;
}

}  // extern "C"
// sim-runtime: cold
