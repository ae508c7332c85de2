// The knobs of how a launch's blocks run (scheduler.cpp's runs_plain and runs_block_loops decide
// with the mode): SIMULATOR_FIBERS=1 forces a fiber per thread for every kernel, and
// SIMULATOR_LAUNCH_LOG=1 says per launch whether it ran as a plain loop, block loops or fibers, and
// for fibers why (launch.cpp's log_launch).
#include "sim_internal.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

namespace __sim {

namespace {

bool read_fibers_forced() {
    const char* env = std::getenv("SIMULATOR_FIBERS");
    if (env == nullptr || *env == '\0' || std::strcmp(env, "0") == 0) return false;
    if (std::strcmp(env, "1") != 0) {
        static std::atomic<bool> warned{false};
        if (!warned.exchange(true)) {
            report("SIMULATOR_FIBERS='%s' is not 0 or 1 (1 runs barrier-free launches with fibers too); using 1", env);
        }
    }
    return true;  // fibers run every kernel correctly: the safe reading of a bad value
}

bool read_launch_log() {
    const char* env = std::getenv("SIMULATOR_LAUNCH_LOG");
    return env != nullptr && std::strcmp(env, "1") == 0;
}

// A knob read at the first launch that asks and kept (0: not read yet, 1: off, 2: on). Every
// launch asks, and a running program's environment is not where its launches change how they
// run. An atomic rather than a function-local static: host threads that launch at once may both
// read it (the same answer), and no initialisation guard is shared with the uninstrumented
// runtime, which racecheck's ThreadSanitizer cannot see into.
bool cached(std::atomic<int>& state, bool (*read)()) {
    int now = state.load(std::memory_order_relaxed);
    if (now == 0) {
        now = read() ? 2 : 1;
        state.store(now, std::memory_order_relaxed);
    }
    return now == 2;
}

std::atomic<int> g_fibers_forced{0};
std::atomic<int> g_launch_log{0};

}  // namespace

bool fibers_forced() { return cached(g_fibers_forced, read_fibers_forced); }

bool launch_log() { return cached(g_launch_log, read_launch_log); }

}  // namespace __sim
