// What host code of a translated program uses beyond NVIDIA's declarations (included by
// cuda_sim.h after <cuda_runtime.h>): the launch machinery that the build's rewrites of
// `kernel<<<...>>>(args)` call and the kernel registry (launch.h), the registrations the front
// end writes for symbols named by a string, and the calls and types that current CUDA no longer
// declares but older programs still use (each runs as its current equivalent and notes that
// once: legacy_api.cpp, textures.cpp). Every cuda* call CUDA 13 declares is NVIDIA's declaration.
#ifndef CUDA_CPU_SIMULATOR_HOST_API_H
#define CUDA_CPU_SIMULATOR_HOST_API_H

#include <climits>
#include <tuple>
#include <type_traits>
#include <utility>

#include "sim_device.h"
#include "launch.h"

namespace __sim {
// A file-scope __device__/__constant__ variable, registered by the front end under its name and
// address: cudaMemcpyToSymbol and friends check a copy against its size, and a symbol named by
// a string (removed in CUDA 5, still in older code such as Rodinia's kmeans) is found by name.
SIM_API bool register_symbol_name(const char* name, const void* address, size_t size);
}  // namespace __sim

// ---- names gone from current CUDA (legacy_api.cpp) -------------------------------------------
// Removed from the CUDA 12/13 toolkits but common in older code (suites, textbooks).
extern "C" {
SIM_API cudaError_t cudaThreadSynchronize(void);
SIM_API cudaError_t cudaThreadExit(void);
SIM_API cudaError_t cudaThreadSetLimit(enum cudaLimit limit, size_t value);
SIM_API cudaError_t cudaThreadGetLimit(size_t* value, enum cudaLimit limit);
SIM_API cudaError_t cudaThreadSetCacheConfig(enum cudaFuncCache config);
SIM_API cudaError_t cudaThreadGetCacheConfig(enum cudaFuncCache* config);
}

// ---- texture references (removed in CUDA 12; textures.cpp notes their use once) -------------
#include "sim_textures.h"

#endif  // CUDA_CPU_SIMULATOR_HOST_API_H
