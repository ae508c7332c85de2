// __device__ and __constant__ variables as the host API names them: the registry the front end
// fills (each file-scope variable's name, address and size) and the symbol calls
// (cudaMemcpyToSymbol, cudaMemcpyFromSymbol and their Async forms, cudaGetSymbolAddress,
// cudaGetSymbolSize). Device memory is host memory here, so a symbol's device address is its
// address. A symbol may also be named by a string, as before CUDA 5 (older code such as
// Rodinia's kmeans does so): that form runs with a note that it is gone from current CUDA.
#include "sim_internal.h"

#include <cctype>

#include <dlfcn.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>

namespace {

struct Symbol {
    const void* address;
    size_t size;
};

// Registered while the program's static objects are built.
std::mutex& symbols_mu() {
    static std::mutex mu;
    return mu;
}
std::map<std::string, Symbol>& by_name() {
    static auto* table = new std::map<std::string, Symbol>();
    return *table;
}
std::unordered_map<const void*, size_t>& by_address() {
    static auto* table = new std::unordered_map<const void*, size_t>();
    return *table;
}

// Each call says once that it was handed a string (ToSymbol's note does not stand for FromSymbol's).
std::atomic<bool> g_said_string_to{false};
std::atomic<bool> g_said_string_from{false};
std::atomic<bool> g_said_string_address{false};

// A string that names a registered variable, read only where ``p`` lies inside a loaded object
// (string literals do): a symbol named by a string, as before CUDA 5.
bool named_by_string(const void* p, Symbol* out) {
    Dl_info info;
    if (p == nullptr || dladdr(p, &info) == 0) return false;
    const char* name = static_cast<const char*>(p);
    const size_t n = strnlen(name, 256);
    if (n == 0 || n == 256) return false;
    std::lock_guard<std::mutex> lock(symbols_mu());
    auto it = by_name().find(std::string(name, n));
    if (it == by_name().end()) return false;
    *out = it->second;
    return true;
}

// Whether ``p``, inside a loaded object, holds a C identifier ended by NUL (a symbol named by a
// string that no registered variable has).
bool looks_like_a_name(const void* p) {
    Dl_info info;
    if (p == nullptr || dladdr(p, &info) == 0) return false;
    const char* text = static_cast<const char*>(p);
    const size_t n = strnlen(text, 256);
    if (n == 0 || n == 256 || std::isdigit(static_cast<unsigned char>(text[0]))) return false;
    for (size_t i = 0; i < n; ++i) {
        const unsigned char c = static_cast<unsigned char>(text[i]);
        if (!std::isalnum(c) && c != '_') return false;
    }
    return true;
}

// The bytes [offset, offset + count) of ``symbol``, or nullptr with the error to return. An address
// the front end did not register (a variable of a library's header) is taken as it is.
char* symbol_bytes(const void* symbol, size_t offset, size_t count, const char* call, std::atomic<bool>& said,
                   cudaError_t* error) {
    if (symbol == nullptr) {
        *error = cudaErrorInvalidSymbol;
        return nullptr;
    }
    Symbol sym{symbol, 0};
    bool known;
    {
        std::lock_guard<std::mutex> lock(symbols_mu());
        auto it = by_address().find(symbol);
        known = it != by_address().end();
        if (known) sym.size = it->second;
    }
    if (!known && named_by_string(symbol, &sym)) {
        known = true;
        char what[96];
        std::snprintf(what, sizeof what, "%s with the symbol named by a string", call);
        __sim::note_gone(said, what, "the same call with the variable itself");
    }
    if (!known && looks_like_a_name(symbol)) {
        // A string naming no registered variable (a misspelt name): writing through it would
        // write the string literal itself.
        *error = cudaErrorInvalidSymbol;
        return nullptr;
    }
    if (known && (offset > sym.size || count > sym.size - offset)) {
        *error = cudaErrorInvalidValue;
        return nullptr;
    }
    return const_cast<char*>(static_cast<const char*>(sym.address)) + offset;
}

}  // namespace

namespace __sim {
bool register_symbol_name(const char* name, const void* address, size_t size) {
    std::lock_guard<std::mutex> lock(symbols_mu());
    by_name()[name] = Symbol{address, size};
    by_address()[address] = size;
    return true;
}
cudaError_t symbol_copy(void* dst, const void* src, size_t count) {
    if (cudaError_t e = sticky_error()) return e;
    if (count > 0 && (dst == nullptr || src == nullptr)) return set_error(cudaErrorInvalidValue);
    if (count > 0) std::memcpy(dst, src, count);
    return cudaSuccess;
}

}  // namespace __sim

extern "C" {

cudaError_t cudaMemcpyToSymbol(const void* symbol, const void* src, size_t count, size_t offset,
                               enum cudaMemcpyKind kind) {
    (void)kind;
    cudaError_t error = cudaSuccess;
    char* dst = symbol_bytes(symbol, offset, count, "cudaMemcpyToSymbol", g_said_string_to, &error);
    if (dst == nullptr) return __sim::set_error(error);
    return __sim::symbol_copy(dst, src, count);
}

cudaError_t cudaMemcpyFromSymbol(void* dst, const void* symbol, size_t count, size_t offset,
                                 enum cudaMemcpyKind kind) {
    (void)kind;
    cudaError_t error = cudaSuccess;
    const char* src = symbol_bytes(symbol, offset, count, "cudaMemcpyFromSymbol", g_said_string_from, &error);
    if (src == nullptr) return __sim::set_error(error);
    return __sim::symbol_copy(dst, src, count);
}

// Streams run in order: the asynchronous forms copy at once.
cudaError_t cudaMemcpyToSymbolAsync(const void* symbol, const void* src, size_t count, size_t offset,
                                    enum cudaMemcpyKind kind, cudaStream_t stream) {
    (void)stream;
    return cudaMemcpyToSymbol(symbol, src, count, offset, kind);
}

cudaError_t cudaMemcpyFromSymbolAsync(void* dst, const void* symbol, size_t count, size_t offset,
                                      enum cudaMemcpyKind kind, cudaStream_t stream) {
    (void)stream;
    return cudaMemcpyFromSymbol(dst, symbol, count, offset, kind);
}

cudaError_t cudaGetSymbolAddress(void** dev_ptr, const void* symbol) {
    if (dev_ptr == nullptr) return __sim::set_error(cudaErrorInvalidValue);
    cudaError_t error = cudaSuccess;
    char* p = symbol_bytes(symbol, 0, 0, "cudaGetSymbolAddress", g_said_string_address, &error);
    if (p == nullptr) return __sim::set_error(error);
    *dev_ptr = p;
    return cudaSuccess;
}

cudaError_t cudaGetSymbolSize(size_t* size, const void* symbol) {
    if (size == nullptr || symbol == nullptr) return __sim::set_error(cudaErrorInvalidValue);
    std::lock_guard<std::mutex> lock(symbols_mu());
    auto it = by_address().find(symbol);
    if (it == by_address().end()) return __sim::set_error(cudaErrorInvalidSymbol);
    *size = it->second;
    return cudaSuccess;
}

}  // extern "C"
// sim-runtime: cold
