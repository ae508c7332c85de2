// Reports: the one place that prints. Every finding names the kind, the kernel, the block and
// thread and the source line; memcheck adds hooks that name the CUDA thread a sanitizer fault
// happened in and list device buffers never freed.
#include "sim_internal.h"

#include <cstdarg>

#if defined(SIM_MEMCHECK)
#include <dlfcn.h>
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

namespace sim {

// Marks every object the runtime is linked into: loaders that must check the SIMULATOR_*
// environment before loading a simulated library find this section by its name alone
// (torchlight's CUDA C loader; simulator.limits.SIMULATOR_SECTION).
__attribute__((used, section(".cuda_cpu_simulator"))) extern const char kSimulatorMarker[] =
    "CUDA CPU simulator runtime";

namespace {

std::mutex g_report_mu;

bool quiet() {
    const char* q = std::getenv("SIMULATOR_QUIET");
    return q != nullptr && q[0] == '1';
}

}  // namespace

const char* mode_name() {
#if defined(SIM_MEMCHECK)
    return "memcheck";
#elif defined(SIM_RACECHECK)
    return "racecheck";
#elif defined(SIM_SYNCCHECK)
    return "synccheck";
#else
    return "fast";
#endif
}

void report(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void report(const char* fmt, ...) {
    if (quiet()) return;
    std::lock_guard<std::mutex> lock(g_report_mu);
    va_list ap;
    va_start(ap, fmt);
    std::fputs("simulator: ", stderr);
    std::vfprintf(stderr, fmt, ap);
    std::fputc('\n', stderr);
    std::fflush(stderr);
    va_end(ap);
}

std::string where(const Block* b) {
    char buf[256];
    std::snprintf(buf, sizeof buf, "kernel '%s' block (%u,%u,%u) (launched at %s:%d)", b->launch->name, b->idx.x,
                  b->idx.y, b->idx.z, b->launch->file, b->launch->line);
    return buf;
}

std::string tid_str(const Fiber& f) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "(%u,%u,%u)", f.thread_idx.x, f.thread_idx.y, f.thread_idx.z);
    return buf;
}

const char* warp_kind_name(int kind) {
    switch (kind) {
        case kShflIdx:
            return "__shfl_sync";
        case kShflUp:
            return "__shfl_up_sync";
        case kShflDown:
            return "__shfl_down_sync";
        case kShflXor:
            return "__shfl_xor_sync";
        case kBallot:
            return "__ballot_sync";
        case kAny:
            return "__any_sync";
        case kAll:
            return "__all_sync";
        case kMatchAny:
            return "__match_any_sync";
        case kMatchAll:
            return "__match_all_sync";
        case kReduceAdd:
            return "__reduce_add_sync";
        case kReduceMin:
            return "__reduce_min_sync";
        case kReduceMax:
            return "__reduce_max_sync";
        case kReduceAnd:
            return "__reduce_and_sync";
        case kReduceOr:
            return "__reduce_or_sync";
        case kReduceXor:
            return "__reduce_xor_sync";
        default:
            return "__syncwarp";
    }
}

void report_deadlock(Block* b) {
    std::string at_bar, at_warp;
    int nbar = 0, nwarp = 0;
    for (int i = 0; i < b->nthreads; ++i) {
        Fiber& f = b->fibers[i];
        char buf[256];
        if (f.state == FState::kBarrier && nbar++ < 4) {
            std::snprintf(buf, sizeof buf, " %s at %s:%d;", tid_str(f).c_str(), f.wfile, f.wline);
            at_bar += buf;
        } else if (f.state == FState::kWarp && nwarp++ < 4) {
            std::snprintf(buf, sizeof buf, " %s in %s(mask 0x%08x) at %s:%d;", tid_str(f).c_str(),
                          warp_kind_name(f.wkind), f.wmask, f.wfile, f.wline);
            at_warp += buf;
        }
    }
    report("%s: deadlock in %s: %d live thread(s) can never proceed. %d wait at __syncthreads:%s %d "
           "wait in warp operations whose lanes are elsewhere:%s",
           mode_name(), where(b).c_str(), b->live, nbar, at_bar.c_str(), nwarp, at_warp.c_str());
    fail_block(b);
}

namespace {

#if defined(SIM_MEMCHECK)
void on_death() {
    Block* b = tl_run.block;
    Fiber* f = tl_run.fiber;
    if (b != nullptr && f != nullptr) {
        report("memcheck: the fault above happened in %s thread %s", where(b).c_str(), tid_str(*f).c_str());
    }
}
// UBSan is a separate runtime library under GCC, with its own death callback.
struct DeathHook {
    DeathHook() {
        __sanitizer_set_death_callback(on_death);
        void* ubsan = dlopen("libubsan.so.1", RTLD_NOW | RTLD_NOLOAD);
        if (ubsan != nullptr) {
            typedef void (*SetCallback)(void (*)(void));
            SetCallback set = reinterpret_cast<SetCallback>(dlsym(ubsan, "__sanitizer_set_death_callback"));
            if (set != nullptr) set(on_death);
        }
    }
} g_death_hook;
#endif


}  // namespace

#if defined(SIM_MEMCHECK)
// Device buffers still allocated at exit: a launcher that misses a cudaFree on some path.
void report_leaks() {
    std::lock_guard<std::mutex> lock(g_state_mu);
    for (const auto& a : g_allocs) {
        char where_buf[512] = "unknown caller";
        auto site = g_alloc_sites.find(a.first);
        if (site != g_alloc_sites.end()) {
            __sanitizer_symbolize_pc(const_cast<void*>(site->second), "%f at %s:%l", where_buf, sizeof where_buf);
        }
        report("memcheck: device memory leak: %zu bytes from cudaMalloc in %s were never freed with cudaFree",
               a.second, where_buf);
    }
}
#endif

}  // namespace sim
