// cudaGetErrorName and cudaGetErrorString for every error code NVIDIA's <driver_types.h>
// declares (sim_toolkit_errors.inc, generated from it by simulator/toolkit_index.py), with the
// texts of error_texts.h; the driver API's cuGetErrorName/cuGetErrorString likewise. And the
// error of a __global__ function called without a launch configuration.
#include "sim_internal.h"

#include <cuda.h>

#include <atomic>
#include <cstdio>

#include "error_texts.h"

namespace __sim {

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

extern "C" {

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
