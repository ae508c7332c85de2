// The environment's knobs that the runtime reads (SIMULATOR_THREADS, SIMULATOR_STACK_KB,
// SIMULATOR_DEVICES, SIMULATOR_DEVICE_MEMORY_MIB, SIMULATOR_TIMEOUT, SIMULATOR_LINE_BUFFERED),
// each checked once.
#include "sim_internal.h"

#include <link.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace __sim {

// ---- environment knobs ------------------------------------------------------------------------
// SIMULATOR_THREADS, SIMULATOR_STACK_KB and SIMULATOR_DEVICES must be whole numbers in their
// ranges (the scheduler and devices.cpp read them through knob_value; simulator/limits.py has the
// same table for the front end). A bad value is refused once, when the runtime is loaded: a
// program stops with status 2 and the one line; in a library loaded into another process (ctypes) every call that uses the
// device returns cudaErrorInitializationError, as CUDA's calls do when it cannot start.
namespace {

struct Knob {
    const char* name;
    long lo, hi;
    const char* what;
    const char* unset;
};

constexpr Knob kKnobs[] = {
    {"SIMULATOR_THREADS", 1, 64, "worker threads for blocks", "the CPU count, at most 64"},
    {"SIMULATOR_STACK_KB", 16, 65536, "KiB of stack per CUDA thread", "128; 256 in memcheck and racecheck"},
    {"SIMULATOR_DEVICES", 1, kMaxDevices, "modelled GPUs", "1"},
    {"SIMULATOR_DEVICE_MEMORY_MIB", 1, 16L << 20, "MiB of memory per modelled GPU", "the host's physical memory"},
};

enum class KnobState { kUnset, kValid, kInvalid };

// ``k``'s value from the environment into *value when it is a whole number in its range.
KnobState read_knob(const Knob& k, const char* v, long* value) {
    if (v == nullptr || *v == '\0') return KnobState::kUnset;
    const size_t n = std::strlen(v);
    if (n > 9 || std::strspn(v, "0123456789") != n) return KnobState::kInvalid;
    *value = std::strtol(v, nullptr, 10);
    return *value >= k.lo && *value <= k.hi ? KnobState::kValid : KnobState::kInvalid;
}

// The first bad knob as one line, or "" when every knob is valid or unset.
std::string knob_error() {
    for (const Knob& k : kKnobs) {
        const char* v = std::getenv(k.name);
        long value;
        if (read_knob(k, v, &value) == KnobState::kInvalid) {
            char buf[512];
            std::snprintf(buf, sizeof buf,
                          "%s='%.80s' is not valid: give a whole number of %s from %ld to %ld, or leave it unset "
                          "(default: %s)",
                          k.name, v, k.what, k.lo, k.hi, k.unset);
            return buf;
        }
    }
    return "";
}

// True when this copy of the runtime is part of the program itself, not of a loaded library.
bool in_main_program() {
    struct Query {
        uintptr_t addr;
        bool found;
    } q{reinterpret_cast<uintptr_t>(&in_main_program), false};
    dl_iterate_phdr(
        [](struct dl_phdr_info* info, size_t, void* data) -> int {
            Query* q = static_cast<Query*>(data);
            for (int i = 0; i < info->dlpi_phnum; ++i) {
                const ElfW(Phdr)& ph = info->dlpi_phdr[i];
                const uintptr_t start = info->dlpi_addr + ph.p_vaddr;
                if (ph.p_type == PT_LOAD && q->addr >= start && q->addr < start + ph.p_memsz) q->found = true;
            }
            return 1;  // the first object listed is the program
        },
        &q);
    return q.found;
}

}  // namespace

long knob_value(const char* name, long fallback) {
    for (const Knob& k : kKnobs) {
        long value;
        if (std::strcmp(k.name, name) == 0 && read_knob(k, std::getenv(name), &value) == KnobState::kValid)
            return value;
    }
    return fallback;
}

bool g_knob_error = false;

namespace {

struct KnobCheckAtLoad {
    KnobCheckAtLoad() {
        const std::string e = knob_error();
        if (e.empty()) return;
        // Not report(): SIMULATOR_QUIET silences kernel reports, not a refused configuration.
        std::fprintf(stderr, "simulator: %s\n", e.c_str());
        std::fflush(stderr);
        if (in_main_program()) std::_Exit(2);
        g_knob_error = true;
        g_sticky_error.store(cudaErrorInitializationError);
    }
} g_knob_check;

// A program's stdout is fully buffered when it is a pipe, as it is under `run` (whose pumps
// copy it on): `run` sets SIMULATOR_LINE_BUFFERED=1 where the program would have written to a
// terminal, or when asked, so that each line shows when it is printed. Runs before every other
// static constructor, since setvbuf must come before the stream's first output. A library loaded
// into another process leaves that process's stdout alone.
__attribute__((constructor(101))) void line_buffer_stdout_when_asked() {
    const char* v = std::getenv("SIMULATOR_LINE_BUFFERED");
    if (v == nullptr || *v == '\0' || std::strcmp(v, "0") == 0 || !in_main_program()) return;
    if (std::strcmp(v, "1") == 0) {
        std::setvbuf(stdout, nullptr, _IOLBF, BUFSIZ);
        return;
    }
    std::fprintf(stderr,
                 "simulator: SIMULATOR_LINE_BUFFERED='%.80s' is not 0 or 1 (1 line-buffers the program's stdout); "
                 "stdout keeps its usual buffering\n",
                 v);
}

}  // namespace

double launch_timeout_s() {
    const char* env = std::getenv("SIMULATOR_TIMEOUT");
    if (env == nullptr || *env == '\0') return kDefaultLaunchTimeoutS;
    char* end = nullptr;
    const double s = std::strtod(env, &end);
    if (end == env || *end != '\0' || !(s >= 0) || s > 1e9) {
        static std::atomic<bool> warned{false};
        if (!warned.exchange(true)) {
            report("SIMULATOR_TIMEOUT='%s' is not a number of seconds (0 turns the limit off); using %g", env,
                   kDefaultLaunchTimeoutS);
        }
        return kDefaultLaunchTimeoutS;
    }
    return s;
}

}  // namespace __sim
// sim-runtime: cold
