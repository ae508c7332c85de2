// cudaGetErrorName and cudaGetErrorString, from the one error table in host_api.h; the error of
// a __global__ function called without a launch configuration.
#include "sim_internal.h"

#include <atomic>
#include <cstdio>

namespace sim {

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

}  // namespace sim

extern "C" {

const char* cudaGetErrorName(cudaError_t error) {
    switch (error) {
#define SIM_ERROR_NAME(name, value, text) \
    case name:                            \
        return #name;
        SIM_CUDA_ERRORS(SIM_ERROR_NAME)
#undef SIM_ERROR_NAME
    }
    return "cudaErrorUnknown";
}

const char* cudaGetErrorString(cudaError_t error) {
    switch (error) {
#define SIM_ERROR_TEXT(name, value, text) \
    case name:                            \
        return text;
        SIM_CUDA_ERRORS(SIM_ERROR_TEXT)
#undef SIM_ERROR_TEXT
    }
    return "unrecognized error code";
}

}  // extern "C"
