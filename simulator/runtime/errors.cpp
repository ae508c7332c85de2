// cudaGetErrorName and cudaGetErrorString, from the one error table in host_api.h.
#include "sim_internal.h"

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
