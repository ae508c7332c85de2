// Runtime calls gone from current CUDA (removed in CUDA 12/13, deprecated since CUDA 4) that
// older code still makes: each runs as its current equivalent and says so once on stderr.
#include "sim_internal.h"

#include <atomic>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

void sim::note_gone(std::atomic<bool>& said, const char* what, const char* instead) {
    if (!said.exchange(true))
        std::fprintf(stderr, "note (simulator): %s is gone from current CUDA; it runs as %s\n", what, instead);
}

namespace {

struct NamedSymbol {
    const void* address;
    size_t size;
};

// Registered while the program's static objects are built, read by the string-form copies.
std::mutex& symbols_mu() {
    static std::mutex mu;
    return mu;
}
std::map<std::string, NamedSymbol>& symbols() {
    static std::map<std::string, NamedSymbol> by_name;
    return by_name;
}

// The named variable's bytes [offset, offset + count), or nullptr with the error to return.
char* named_bytes(const char* name, size_t offset, size_t count, cudaError_t* error) {
    if (name == nullptr) {
        *error = cudaErrorInvalidSymbol;
        return nullptr;
    }
    NamedSymbol sym{};
    {
        std::lock_guard<std::mutex> lock(symbols_mu());
        auto it = symbols().find(name);
        if (it == symbols().end()) {
            *error = cudaErrorInvalidSymbol;
            return nullptr;
        }
        sym = it->second;
    }
    if (offset > sym.size || count > sym.size - offset) {
        *error = cudaErrorInvalidValue;
        return nullptr;
    }
    return const_cast<char*>(static_cast<const char*>(sym.address)) + offset;
}

}  // namespace

namespace sim {
bool register_symbol_name(const char* name, const void* address, size_t size) {
    std::lock_guard<std::mutex> lock(symbols_mu());
    symbols()[name] = NamedSymbol{address, size};
    return true;
}
}  // namespace sim

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

// Not a legacy name, but the getter of cudaDeviceSetCacheConfig: the preference has no effect.
cudaError_t cudaDeviceGetCacheConfig(enum cudaFuncCache* config) {
    if (config == nullptr) return sim::set_error(cudaErrorInvalidValue);
    *config = cudaFuncCachePreferNone;
    return cudaSuccess;
}

}  // extern "C"

cudaError_t cudaMemcpyToSymbol(const char* symbol, const void* src, size_t count, size_t offset,
                               enum cudaMemcpyKind kind) {
    (void)kind;
    SIM_NOTE_GONE("cudaMemcpyToSymbol with the symbol named by a string", "a copy to the variable of that name");
    cudaError_t error = cudaSuccess;
    char* dst = named_bytes(symbol, offset, count, &error);
    if (dst == nullptr) return sim::set_error(error);
    return sim::symbol_copy(dst, src, count);
}

cudaError_t cudaMemcpyFromSymbol(void* dst, const char* symbol, size_t count, size_t offset,
                                 enum cudaMemcpyKind kind) {
    (void)kind;
    SIM_NOTE_GONE("cudaMemcpyFromSymbol with the symbol named by a string", "a copy from the variable of that name");
    cudaError_t error = cudaSuccess;
    const char* src = named_bytes(symbol, offset, count, &error);
    if (src == nullptr) return sim::set_error(error);
    return sim::symbol_copy(dst, src, count);
}
