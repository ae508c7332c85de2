// What a declared but unimplemented function does when a program calls it. The build links a
// stub for each function NVIDIA's headers declare that a program calls and the simulator does not
// define (simulator/link_stubs.py): the stub calls unimplemented_call, which says so once per
// function (naming it, its header and the caller's line), and then the stub returns the
// library's "not supported" status, or, for a device function, stops the kernel as a fault does.
#include "sim_internal.h"

#include <cstdio>
#include <mutex>
#include <set>
#include <string>

namespace __sim {

namespace {
std::mutex g_said_mu;
std::set<std::string>& said() {
    static auto* names = new std::set<std::string>();
    return *names;
}
}  // namespace

void unimplemented_call(const char* name, const char* header, const char* returns, void* caller) {
    bool first;
    {
        std::lock_guard<std::mutex> lock(g_said_mu);
        first = said().insert(name).second;
    }
    const bool device = returns[0] == '\0';
    if (first || device) {
        const std::string where = source_of(reinterpret_cast<uintptr_t>(caller));
        char line[1024];
        if (device) {
            std::snprintf(line, sizeof line, "%s (declared in <%s>) is not implemented by the simulator (called from %s)",
                          name, header, where.c_str());
            if (tl_thread != nullptr) trap_with(line);
        }
        std::fprintf(stderr, "simulator: %s (declared in <%s>) is not implemented by the simulator; it returns %s (%s)\n",
                     name, header, device ? "nothing" : returns, where.c_str());
        std::fflush(stderr);
    }
    if (std::string(returns) == "cudaErrorNotSupported") set_error(cudaErrorNotSupported);
}

}  // namespace __sim
// sim-runtime: cold
