// sim-runtime: per mode
// Reports: the one place that prints. Every finding names the kind, the kernel, the block and
// thread and the source line (memcheck's sanitizer hooks: memcheck_reports.cpp).
#include "sim_internal.h"

#include <dlfcn.h>

#include <cctype>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <string>


namespace __sim {

// Marks every object the runtime is linked into: loaders that must check the SIMULATOR_*
// environment before loading a simulated library find this section by its name alone
// (torchlight's CUDA C loader; simulator.limits.SIMULATOR_SECTION).
__attribute__((used, section(".cuda_cpu_simulator"))) extern const char kSimulatorMarker[] =
    "CUDA CPU simulator runtime";

std::mutex g_report_mu;

bool quiet() {
    const char* q = std::getenv("SIMULATOR_QUIET");
    return q != nullptr && q[0] == '1';
}

const char* mode_name() {
#if defined(SIM_MEMCHECK)
    return "memcheck";
#elif defined(SIM_RACECHECK) || defined(SIM_SHARED_RACES)
    return "racecheck";
#elif defined(SIM_SYNCCHECK)
    return "synccheck";
#else
    return "fast";
#endif
}

namespace {
// Appends the decimal digits of ``v`` at ``p``; returns the end.
char* put_uint(char* p, unsigned v) {
    char digits[10];
    int n = 0;
    do digits[n++] = (char)('0' + v % 10); while ((v /= 10) != 0);
    while (n > 0) *p++ = digits[--n];
    return p;
}
char* put_dim(char* p, uint3 v) {
    *p++ = '(';
    p = put_uint(p, v.x);
    *p++ = ',';
    p = put_uint(p, v.y);
    *p++ = ',';
    p = put_uint(p, v.z);
    *p++ = ')';
    return p;
}
}  // namespace

// Written by hand: racecheck names every CUDA thread of every block, and snprintf (intercepted by
// ThreadSanitizer) was a tenth of its time on short threads.
void fiber_name(char* out, size_t size, const char* kernel, uint3 block, uint3 thread) {
    char* p = out;
    char* const room = out + size - 2 * 34 - 16;  // what the two dims and the words after K need
    for (const char* w = "kernel "; *w != 0;) *p++ = *w++;
    while (*kernel != 0 && p < room) *p++ = *kernel++;
    for (const char* w = " block "; *w != 0;) *p++ = *w++;
    p = put_dim(p, block);
    for (const char* w = " thread "; *w != 0;) *p++ = *w++;
    p = put_dim(p, thread);
    *p = 0;
}

// NVIDIA's headers in the build's overlay folder (simulator/cuda_headers.py: cudaNN-include-KEY/):
// a frame there is the toolkit's wrapper (cudaMalloc<T>), not the program's call.
static bool toolkit_file(const char* path) {
    for (const char* at = std::strstr(path, "-include-"); at != nullptr; at = std::strstr(at + 1, "-include-")) {
        const char* segment = at;
        while (segment > path && segment[-1] != '/') --segment;
        if (std::strncmp(segment, "cuda", 4) == 0) return true;
    }
    return false;
}

bool runtime_file(const char* path) {
    // The sanitizers' own frames carry relative paths (../../../../src/libsanitizer/...); the
    // program's sources are compiled by absolute path. The runtime is simulator/runtime/ in the
    // repository and torchlight/simulator/runtime/ when installed.
    return path[0] != '/' || std::strstr(path, "simulator/runtime/") != nullptr ||
           std::strncmp(path, "/usr/", 5) == 0 || std::strstr(path, "/gcc/") != nullptr ||
           std::strstr(path, "libsanitizer") != nullptr || toolkit_file(path);
}

// "func at file:line" for the first frame of ``pc`` (inlined frames included) outside the
// runtime, read by addr2line from the module's debug information.
std::string source_of(uintptr_t pc) {
    Dl_info info{};
    if (pc == 0 || dladdr(reinterpret_cast<void*>(pc), &info) == 0 || info.dli_fname == nullptr) {
        return "source line unknown";
    }
    char cmd[4200];
    const uintptr_t off = pc - 1 - reinterpret_cast<uintptr_t>(info.dli_fbase);
    std::snprintf(cmd, sizeof cmd, "addr2line -f -i -C -e '%s' 0x%lx 2>/dev/null", info.dli_fname,
                  (unsigned long)off);
    FILE* p = popen(cmd, "r");
    if (p == nullptr) return "source line unknown";
    std::string found, first;
    char func[2048], where[2048];
    while (std::fgets(func, sizeof func, p) != nullptr && std::fgets(where, sizeof where, p) != nullptr) {
        func[std::strcspn(func, "\n")] = 0;
        where[std::strcspn(where, "\n")] = 0;
        char* col = std::strstr(where, " (discriminator");
        if (col != nullptr) *col = 0;
        std::string here = std::string(func) + " at " + where;
        if (first.empty()) first = here;
        if (found.empty() && std::strncmp(where, "??", 2) != 0 && !runtime_file(where)) {
            found = here;
        }
    }
    pclose(p);
    return !found.empty() ? found : !first.empty() ? first : "source line unknown";
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
    std::string at_bar, at_warp, at_group;
    int nbar = 0, nwarp = 0, ngroup = 0;
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
        } else if ((f.state == FState::kTile || f.state == FState::kGrid) && ngroup++ < 4) {
            if (f.state == FState::kTile) {
                std::snprintf(buf, sizeof buf, " %s in thread_block_tile<%d>::sync() at %s:%d;", tid_str(f).c_str(),
                              f.wparam, f.wfile, f.wline);
            } else {
                std::snprintf(buf, sizeof buf, " %s in grid.sync() at %s:%d;", tid_str(f).c_str(), f.wfile, f.wline);
            }
            at_group += buf;
        }
    }
    report("%s: deadlock in %s: %d live thread(s) can never proceed. %d wait at __syncthreads:%s %d "
           "wait in warp operations whose lanes are elsewhere:%s%s%s",
           mode_name(), where(b).c_str(), b->live, nbar, at_bar.c_str(), nwarp, at_warp.c_str(),
           ngroup > 0 ? " waiting for a tile or the grid:" : "", at_group.c_str());
    fail_block(b);
}

void report_grid_deadlock(Grid* g) {
    const Launch* L = g->blocks[0].launch;
    report("%s: deadlock in the cooperative launch of kernel '%s' (launched at %s:%d): no thread of its %llu "
           "blocks can proceed; %lld of %lld live thread(s) wait at grid.sync()%s%s%s, the others wait elsewhere "
           "(below)",
           mode_name(), L->name, L->file, L->line, g->nblocks, g->arrived, g->live, g->arrived > 0 ? " at " : "",
           g->arrived > 0 ? g->file : "", g->arrived > 0 ? (":" + std::to_string(g->line)).c_str() : "");
    for (unsigned long long k = 0; k < g->nblocks; ++k) {
        Block* b = &g->blocks[k];
        if (b->live == 0) continue;
        bool elsewhere = false;
        for (int i = 0; i < b->nthreads && !elsewhere; ++i) {
            const FState st = b->fibers[i].state;
            elsewhere = st != FState::kDone && st != FState::kGrid;
        }
        if (elsewhere) {
            report_deadlock(b);  // the first block whose threads wait for something other than the grid
            return;
        }
    }
    fail_block(&g->blocks[0]);
}

}  // namespace __sim
