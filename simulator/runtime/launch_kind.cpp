// The knobs of how a launch's blocks run (scheduler.cpp's runs_plain and runs_block_loops decide
// with the mode): SIMULATOR_FIBERS=1 forces a fiber per thread for every kernel, and
// SIMULATOR_LAUNCH_LOG=1 says per launch whether it ran as a plain loop, block loops or fibers.
#include "sim_internal.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

namespace __sim {

bool fibers_forced() {
    const char* env = std::getenv("SIMULATOR_FIBERS");
    if (env == nullptr || *env == '\0' || std::strcmp(env, "0") == 0) return false;
    if (std::strcmp(env, "1") == 0) return true;
    static std::atomic<bool> warned{false};
    if (!warned.exchange(true)) {
        report("SIMULATOR_FIBERS='%s' is not 0 or 1 (1 runs barrier-free launches with fibers too); using 1", env);
    }
    return true;  // fibers run every kernel correctly: the safe reading of a bad value
}

bool launch_log() {
    const char* env = std::getenv("SIMULATOR_LAUNCH_LOG");
    return env != nullptr && std::strcmp(env, "1") == 0;
}

}  // namespace __sim
