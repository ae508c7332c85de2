// Runtime calls gone from current CUDA (removed in CUDA 12/13, deprecated since CUDA 4) that
// older code still makes: each runs as its current equivalent and says so once on stderr.
#include "sim_internal.h"

#include <atomic>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

void __sim::note_gone(std::atomic<bool>& said, const char* what, const char* instead) {
    if (!said.exchange(true))
        std::fprintf(stderr, "note (simulator): %s is gone from current CUDA; it runs as %s\n", what, instead);
}

#define SIM_GONE(name, instead) SIM_NOTE_GONE(#name, instead)

extern "C" {

cudaError_t cudaThreadSynchronize(void) {
    SIM_GONE(cudaThreadSynchronize, "cudaDeviceSynchronize");
    return cudaDeviceSynchronize();
}

cudaError_t cudaThreadExit(void) {
    SIM_GONE(cudaThreadExit, "cudaDeviceReset");
    return cudaDeviceReset();
}

cudaError_t cudaThreadSetLimit(enum cudaLimit limit, size_t value) {
    SIM_GONE(cudaThreadSetLimit, "cudaDeviceSetLimit");
    return cudaDeviceSetLimit(limit, value);
}

cudaError_t cudaThreadGetLimit(size_t* value, enum cudaLimit limit) {
    SIM_GONE(cudaThreadGetLimit, "cudaDeviceGetLimit");
    return cudaDeviceGetLimit(value, limit);
}

cudaError_t cudaThreadSetCacheConfig(enum cudaFuncCache config) {
    SIM_GONE(cudaThreadSetCacheConfig, "cudaDeviceSetCacheConfig");
    return cudaDeviceSetCacheConfig(config);
}

cudaError_t cudaThreadGetCacheConfig(enum cudaFuncCache* config) {
    SIM_GONE(cudaThreadGetCacheConfig, "cudaDeviceGetCacheConfig");
    return cudaDeviceGetCacheConfig(config);
}

}  // extern "C"
// sim-runtime: cold
