// sim-runtime: per mode
// memcheck's reports: the hooks AddressSanitizer and UBSan call, which print a device fault or
// undefined behaviour in compute-sanitizer's shape (kernel, block, thread, the program's frames,
// the address against its allocation), hide or label host-code reports, let the program go on
// after a fault, and list device buffers never freed. Empty outside memcheck builds.
#include "sim_internal.h"

#if defined(SIM_MEMCHECK)
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <string>
#include <vector>
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

namespace __sim {

namespace {

#if defined(SIM_MEMCHECK)
// What memcheck judges. Kernels run on the runtime's fibers, so a sanitizer report raised
// while this thread runs no fiber comes from host code (main, option parsing, a host
// callback), which compute-sanitizer never sees: by default such a report is not printed, the
// program goes on and one note at exit counts them; SIMULATOR_CHECK_HOST=1 (`run --check-host`)
// prints them, labelled as host code, and they are findings like a device report (an
// AddressSanitizer report stops the program, an undefined-behaviour report lets it go on).
bool env_is(const char* name, const char* value) {
    const char* v = std::getenv(name);
    return v != nullptr && std::strcmp(v, value) == 0;
}
const bool g_check_host = env_is("SIMULATOR_CHECK_HOST", "1");
std::atomic<int> g_host_reports{0};
int g_devnull = -1;
std::atomic<int> g_unchecked_reports{0};  // from launches the kernel filters leave unchecked
__thread bool tl_hidden_report = false;  // this thread's report is host code or unchecked, hidden
__thread bool tl_located = false;           // "the fault above happened in ..." already said

constexpr int kDeviceFaultStatus = 86;  // ASAN_OPTIONS exitcode in check/run: stopped by memcheck

// The only reads of the scheduler's thread-locals here.
Block* current_block() { return tl_run.block; }
Fiber* current_fiber() { return tl_run.fiber; }
bool in_device_code() { return current_fiber() != nullptr; }
// A kernel of a launch that run's --kernel-name, --kernel-name-exclude, --launch-skip or
// --launch-count leave unchecked: its reports are not shown, as compute-sanitizer does not
// check such a launch; the program goes on where the sanitizer lets it.
bool in_unchecked_launch() {
    return in_device_code() && current_block() != nullptr && !current_block()->launch->checked;
}

void say_where() {
    Block* b = current_block();
    Fiber* f = current_fiber();
    if (b != nullptr && f != nullptr && !tl_located) {
        tl_located = true;
        report("memcheck: the fault above happened in %s thread %s", where(b).c_str(), tid_str(*f).c_str());
    }
}

// How memcheck shows a device fault: as compute-sanitizer, one block naming the access, the
// kernel, block and thread, the program's frames and the address against the nearest
// allocation; AddressSanitizer's own report only with SIMULATOR_MEMCHECK_RAW=1 (`run --verbose`).
// The faulting launch then fails with cudaErrorLaunchFailure and the program goes on, unless
// SIMULATOR_STOP_ON_ERROR=1 (`run --stop-on-error`, and `check`) stops it at the first.
// Unset (a library loaded from Python): the program stops at a fault and the sanitizer's reports
// are shown as they are, beside the runtime's.
const bool g_show_raw = !env_is("SIMULATOR_MEMCHECK_RAW", "0");
const bool g_stop_on_error = !env_is("SIMULATOR_STOP_ON_ERROR", "0");  // unset: stop, as before
__thread bool tl_device_report = false;  // AddressSanitizer reports a device fault of this thread now

// As compute-sanitizer: each faulting thread is one error with a report of its own; the first
// SIMULATOR_PRINT_LIMIT of them (`run --print-limit N`; 100 unset, 0: no limit) are printed,
// and the rest counted in a note at exit, which run adds to its ERROR SUMMARY.
long print_limit() {
    const char* v = std::getenv("SIMULATOR_PRINT_LIMIT");
    if (v == nullptr || *v == '\0') return 100;
    char* end = nullptr;
    const long n = std::strtol(v, &end, 10);
    return *end == '\0' && n >= 0 ? n : 100;  // run checks the value; a stray one keeps the default
}
const long g_print_limit = print_limit();
std::atomic<long> g_errors_printed{0};
std::atomic<long> g_errors_unprinted{0};

// Whether the next error may be printed; counts it as not printed when it may not.
bool take_print_slot() {
    if (g_print_limit == 0 || g_errors_printed.fetch_add(1) < g_print_limit) return true;
    ++g_errors_unprinted;
    return false;
}

// The program's frames (``FUNC in FILE:LINE``) in AddressSanitizer's report ``text``: its first
// stack, without the runtime's, the toolkit's and the system's frames.
std::vector<std::string> program_frames(const char* text) {
    std::vector<std::string> frames;
    // A region of a kernel run as block loops (simulator/block_loops.py) is a lambda the
    // runtime's thread loop calls: its frame is named by the kernel's, as with fibers.
    int region = -1;       // the index of an `operator()` frame that may be such a region
    bool in_loop = false;  // ... and the frame after it is the runtime's thread loop
    const char* at = std::strstr(text, "    #0 ");
    for (const char* ln = at; ln != nullptr && std::strncmp(ln, "    #", 5) == 0;) {
        const char* end = std::strchr(ln, '\n');
        std::string line(ln, end == nullptr ? std::strlen(ln) : (size_t)(end - ln));
        ln = end == nullptr ? nullptr : end + 1;
        const size_t in = line.find(" in ");
        const size_t space = line.rfind(' ');
        if (in == std::string::npos || space <= in + 4) continue;
        std::string func = line.substr(in + 4, space - in - 4);
        std::string file = line.substr(space + 1);
        if (region >= 0 && !in_loop) {
            // The loop, or the body of it that memcheck's build inlines into it (block_loops.h).
            in_loop = func.compare(0, 22, "for_each_plain_thread<") == 0 ||
                      func.compare(0, 18, "plain_thread_loop<") == 0;
            if (!in_loop) region = -1;
        }
        const size_t col = file.find(':');
        // FILE:LINE:COL -> FILE:LINE; a frame without a source line names its module in ().
        if (col == std::string::npos || file[0] != '/' || runtime_file(file.c_str())) continue;
        const size_t col2 = file.find(':', col + 1);
        if (region >= 0 && in_loop) {  // the kernel: it names the region's frame
            frames[region] = func + frames[region].substr(frames[region].find(" in "));
            region = -1;
            in_loop = false;
            continue;
        }
        frames.push_back(func + " in " + file.substr(0, col2));
        // A region's lambda, generic where its loop has a fast form (``operator()<...>``).
        if (func == "operator()" || func.compare(0, 11, "operator()<") == 0) region = (int)frames.size() - 1;
    }
    return frames;
}

// Whether the heap block at ``start`` is a block's shared memory: the runtime's first frame in
// its allocation stack is the shared-memory allocator's (device_api.cpp, mode_hooks.h), not
// cudaMalloc's or the device heap's.
bool shared_block(void* start) {
    void* trace[16];
    int tid = 0;
    const size_t n = __asan_get_alloc_stack(start, trace, 16, &tid);
    for (size_t i = 0; i < n; ++i) {
        char file[1024];
        file[0] = '\0';
        __sanitizer_symbolize_pc(static_cast<char*>(trace[i]) - (i == 0 ? 0 : 1), "%s", file, sizeof file);
        if (file[0] != '/') continue;  // the sanitizer's own frames (malloc)
        return std::strstr(file, "runtime/device_api.cpp") != nullptr ||
               std::strstr(file, "runtime/mode_hooks.h") != nullptr;
    }
    return false;
}

// "is N bytes after the end of a SIZE-byte NOUN at 0x..", or before, or inside it.
std::string relative(uintptr_t addr, uintptr_t start, size_t size, const char* noun, const char* tail) {
    char buf[256];
    if (addr < start) {
        std::snprintf(buf, sizeof buf, "is %zu bytes before a %zu-byte %s at 0x%lx%s", (size_t)(start - addr), size,
                      noun, (unsigned long)start, tail);
    } else if (addr < start + size) {
        std::snprintf(buf, sizeof buf, "is %zu bytes inside a %zu-byte %s at 0x%lx%s", (size_t)(addr - start), size,
                      noun, (unsigned long)start, tail);
    } else {
        std::snprintf(buf, sizeof buf, "is %zu bytes after the end of a %zu-byte %s at 0x%lx%s",
                      (size_t)(addr - start - size), size, noun, (unsigned long)start, tail);
    }
    return buf;
}

// Where ``addr`` lies, and in which memory space (``*space``): against the heap block
// AddressSanitizer blames (a device allocation, a block's shared memory, a freed buffer), a
// __device__ variable, a thread's stack, else the nearest device allocation.
std::string address_place(uintptr_t addr, const char* kind_of_fault, const char** space) {
    char name[128];
    name[0] = '\0';
    void* region = nullptr;
    size_t size = 0;
    const char* kind = __asan_locate_address(reinterpret_cast<void*>(addr), name, sizeof name, &region, &size);
    const uintptr_t start = reinterpret_cast<uintptr_t>(region);
    if (kind != nullptr && std::strcmp(kind, "stack") == 0) {
        *space = "__local__";
        return "is in the thread's local memory (its stack)";
    }
    if (kind != nullptr && std::strcmp(kind, "global") == 0 && region != nullptr) {
        const std::string tail = name[0] != '\0' ? std::string(" ('") + name + "')" : std::string();
        return relative(addr, start, size, "variable", tail.c_str());
    }
    if (kind != nullptr && std::strcmp(kind, "heap") == 0 && region != nullptr) {
        bool device = false;
        {
            std::lock_guard<std::mutex> lock(g_state_mu);
            auto it = g_allocs.find(start);
            if (it != g_allocs.end()) {
                device = true;
                size = it->second;  // the size the program asked for
            }
        }
        if (!device && shared_block(region)) *space = "__shared__";
        const char* tail = std::strstr(kind_of_fault, "free") != nullptr     ? " that was freed"
                           : std::strstr(kind_of_fault, "poison") != nullptr ? " that is not allocated now"
                                                                             : "";
        return relative(addr, start, size, device ? "allocation" : "block", tail);
    }
    std::lock_guard<std::mutex> lock(g_state_mu);
    auto next = g_allocs.upper_bound(addr);
    if (next != g_allocs.begin()) {
        auto before = std::prev(next);
        if (next == g_allocs.end() || addr - before->first < next->first - addr) next = before;
    }
    if (next == g_allocs.end()) return "is not near any device allocation";
    return relative(addr, next->first, next->second, "allocation", " (the nearest)");
}

// The block's lines for the program's frames after the first: the device callers, then, from
// the launch's own line on, the host code that launched the kernel (when the block runs on the
// launching thread; the translated launch's lambda is left out); and the closing rule.
std::string caller_frames(const std::vector<std::string>& frames, const Launch* launch) {
    std::string out;
    char launch_at[1100];
    std::snprintf(launch_at, sizeof launch_at, " in %s:%d", launch->file, launch->line);
    auto is_at_launch = [&launch_at](const std::string& fr) {
        return fr.size() >= std::strlen(launch_at) &&
               fr.compare(fr.size() - std::strlen(launch_at), std::string::npos, launch_at) == 0;
    };
    // A launch that runs its registration's call by name (KernelCall::registered_call): that call's
    // frame, the lambda that calls the kernel (the first `operator()` after the kernel's own frame),
    // stands where the launch's own lambda stood, at the launch.
    size_t call_frame = 0;  // none
    if (launch->registered_call && launch->name != nullptr) {
        const std::string kernel(launch->name, std::strcspn(launch->name, "<"));
        for (size_t i = 1; i < frames.size() && call_frame == 0; ++i) {
            const std::string inner = frames[i - 1].substr(0, frames[i - 1].find(" in "));
            const size_t at = inner.find(kernel);
            const bool after_kernel = !kernel.empty() && at != std::string::npos &&
                                      (inner[at + kernel.size()] == '(' || inner[at + kernel.size()] == '<');
            if (after_kernel && frames[i].compare(0, 10, "operator()") == 0) call_frame = i;
        }
    }
    bool host = false;
    for (size_t i = 1; i < frames.size(); ++i) {
        const std::string& fr = frames[i];
        const bool at_launch = i == call_frame || is_at_launch(fr);
        if (at_launch && !host) {
            host = true;
            out += "=========     Host frames of the launch:\n";
        }
        if (host && fr.compare(0, 10, "operator()") == 0) continue;
        out += (host ? "=========         " : "=========     called from ") + fr + "\n";
    }
    return out + "=========\n";
}

// Prints the fault AddressSanitizer reported in ``text`` as compute-sanitizer would, one report
// per faulting thread (up to the print limit); the launch fails (cudaErrorLaunchFailure) and runs
// no further blocks, and the block stops after the faulting warp (fault_block).
void report_device_fault(const char* text) {
    Block* b = current_block();
    Fiber* f = current_fiber();
    if (b == nullptr || f == nullptr) return;
    // The thread runs on to its next switch (halt_on_error=0): its further faults there are the
    // same error, which a GPU would have stopped it at.
    if (b->last_fault == f->linear) return;
    b->last_fault = f->linear;
    fault_block(b, f->linear);
    if (quiet() || !take_print_slot()) return;
    const char* k = std::strstr(text, "ERROR: AddressSanitizer: ");
    std::string kind = "memory error";
    if (k != nullptr) {
        k += std::strlen("ERROR: AddressSanitizer: ");
        kind.assign(k, std::strcspn(k, " \n"));
    }
    // The report's own stack: the text AddressSanitizer passes holds all it printed since its
    // last report (a stack printed for an undefined-behaviour block, say) before it.
    const std::vector<std::string> frames = program_frames(k != nullptr ? k : text);
    const uintptr_t addr = reinterpret_cast<uintptr_t>(__asan_get_report_address());
    const size_t size = __asan_get_report_access_size();
    const bool write = __asan_get_report_access_type() != 0;
    const char* space = "__global__";
    const std::string place = addr != 0 ? address_place(addr, kind.c_str(), &space) : "";
    std::string out;
    char line[1024];
    if (size != 0) {
        std::snprintf(line, sizeof line, "========= Invalid %s %s of size %zu bytes (%s)\n", space,
                      write ? "write" : "read", size, kind.c_str());
    } else {
        std::snprintf(line, sizeof line, "========= Invalid %s access (%s)\n", space, kind.c_str());
    }
    out += line;
    out += "=========     at " + (frames.empty() ? std::string("source line unknown") : frames[0]) + "\n";
    std::snprintf(line, sizeof line,
                  "=========     by thread %s in block (%u,%u,%u) of kernel '%s' launched at %s:%d\n",
                  tid_str(*f).c_str(), b->idx.x, b->idx.y, b->idx.z, b->launch->name, b->launch->file, b->launch->line);
    out += line;
    if (addr != 0) {
        std::snprintf(line, sizeof line, "=========     Address 0x%lx %s\n", (unsigned long)addr, place.c_str());
        out += line;
    }
    out += caller_frames(frames, b->launch);
    std::lock_guard<std::mutex> lock(g_report_mu);
    std::fputs(out.c_str(), stderr);
    std::fflush(stderr);
}

// A faulting write still lands after its report (halt_on_error=0 recovers), though a GPU never
// makes it. Past the end of a heap block it lands on AddressSanitizer's own header of the next
// block: a magic word, then the pointer to that block's chunk header. A later report near there
// (another thread's, or this thread's next fault) follows the broken pointer and the sanitizer
// dies of it ("nested bug in the same thread"). So the bytes a device write is about to
// overwrite are kept and put back where the thread's turn ends (undo_fault_writes), and a magic
// word whose pointer the write breaks is cleared until then: the sanitizer then finds the block
// the fault ran past by searching back, as it does for any overflow into a redzone.
constexpr uint64_t kAllocBegMagic = 0xCC6E96B9CC6E96B9ull;  // asan_allocator.cpp's, 64-bit
struct FaultWrite {
    uintptr_t addr;
    size_t size;
    unsigned char before[80];  // the write's bytes (64 at most) and the magic word before them
};
constexpr int kFaultWrites = 8;  // a thread's faulting writes before its turn ends; more land
__thread FaultWrite tl_fault_writes[kFaultWrites];
__thread int tl_fault_write_count = 0;

// Copies ``n`` bytes that AddressSanitizer has poisoned; byte by byte (volatile) so that no
// intercepted memcpy checks them.
__attribute__((no_sanitize_address)) void copy_poisoned(volatile unsigned char* to, const volatile unsigned char* from,
                                                       size_t n) {
    for (size_t i = 0; i < n; ++i) to[i] = from[i];
}

// The start of the magic word that ends where the 8-byte word holding ``addr`` begins, or 0: a
// write there breaks the pointer after the magic and leaves the magic whole. Only on the page of
// ``addr``, which the write is about to touch, so that the read cannot fault.
uintptr_t magic_before(uintptr_t addr) {
    const uintptr_t magic = (addr & ~uintptr_t{7}) - 8;
    if ((magic >> 12) != (addr >> 12)) return 0;
    uint64_t word = 0;
    copy_poisoned(reinterpret_cast<unsigned char*>(&word), reinterpret_cast<const unsigned char*>(magic), 8);
    return word == kAllocBegMagic ? magic : 0;
}

// Keeps the bytes the reported device write will overwrite: only in a heap block's or global's
// redzone or freed memory, which stays mapped and is never the program's live data.
void remember_fault_write() {
    if (__asan_get_report_access_type() == 0 || tl_fault_write_count == kFaultWrites) return;
    uintptr_t addr = reinterpret_cast<uintptr_t>(__asan_get_report_address());
    size_t size = __asan_get_report_access_size();
    if (addr == 0 || size == 0 || size > 64) return;
    char name[8];
    void* region = nullptr;
    size_t region_size = 0;
    const char* kind = __asan_locate_address(reinterpret_cast<void*>(addr), name, sizeof name, &region, &region_size);
    if (kind == nullptr) return;
    const bool heap = std::strcmp(kind, "heap") == 0;
    if (!heap && std::strcmp(kind, "global") != 0) return;
    const uintptr_t magic = heap ? magic_before(addr) : 0;
    if (magic != 0) {
        size += addr - magic;
        addr = magic;
    }
    FaultWrite& w = tl_fault_writes[tl_fault_write_count++];
    w.addr = addr;
    w.size = size;
    copy_poisoned(w.before, reinterpret_cast<const unsigned char*>(addr), size);
    if (magic != 0) {
        const uint64_t cleared = 0;
        copy_poisoned(reinterpret_cast<unsigned char*>(magic), reinterpret_cast<const unsigned char*>(&cleared), 8);
    }
}

void say_host(const char* where_) {
    report("memcheck: host code: the report %s is from host code (not a kernel); it is judged because "
           "host checks were asked for (--check-host)",
           where_);
}

// The sanitizers' report fd: /dev/null while a host report is hidden, else stderr; for
// AddressSanitizer /dev/null by default too when its raw reports are not shown (but ``show``).
void set_report_fd(void* handle, bool hide, bool show = false) {
    hide = hide || (handle == nullptr && !g_show_raw && !show);
    typedef void (*SetFd)(void*);
    SetFd set = reinterpret_cast<SetFd>(handle == nullptr ? dlsym(RTLD_DEFAULT, "__sanitizer_set_report_fd")
                                                          : dlsym(handle, "__sanitizer_set_report_fd"));
    if (set == nullptr) return;
    if (hide && g_devnull < 0) g_devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
    set(reinterpret_cast<void*>(static_cast<uintptr_t>(hide && g_devnull >= 0 ? g_devnull : 2)));
}

// Hides the report the sanitizer (``handle``: null for AddressSanitizer) is about to print and
// counts it in ``count``; the program goes on.
void hide_report(void* handle, std::atomic<int>& count) {
    tl_hidden_report = true;
    ++count;
    set_report_fd(handle, true);
}

void* ubsan_handle() {
    static void* h = dlopen("libubsan.so.1", RTLD_NOW | RTLD_NOLOAD);
    return h;
}

// The program's frames (``FUNC in FILE:LINE``) of the calling thread's stack now, read from the
// sanitizer's own stack trace (it unwinds the runtime's fibers), written into a memory file.
std::vector<std::string> current_program_frames() {
    typedef void (*SetFd)(void*);
    SetFd set = reinterpret_cast<SetFd>(dlsym(RTLD_DEFAULT, "__sanitizer_set_report_fd"));
    const int fd = set != nullptr ? memfd_create("sim-stack", MFD_CLOEXEC) : -1;
    if (fd < 0) return {};
    set(reinterpret_cast<void*>(static_cast<uintptr_t>(fd)));
    __sanitizer_print_stack_trace();
    set_report_fd(nullptr, false);
    std::string text;
    char buf[4096];
    lseek(fd, 0, SEEK_SET);
    for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) text.append(buf, static_cast<size_t>(n));
    close(fd);
    return program_frames(text.c_str());
}

// Prints the undefined behaviour UBSan (``ubsan``) is about to report in device code as
// compute-sanitizer prints a finding: what, the program's line, the CUDA thread, the program's
// frames; UBSan's own report follows only when raw reports are shown. UBSan reports each source
// location once and, recovering, lets the thread go on: the launch is not failed. False when
// UBSan does not say what it reports (its report is then labelled as before).
bool report_device_ub(void* ubsan) {
    typedef void (*ReportData)(const char**, const char**, const char**, unsigned*, unsigned*, char**);
    ReportData get =
        ubsan != nullptr ? reinterpret_cast<ReportData>(dlsym(ubsan, "__ubsan_get_current_report_data")) : nullptr;
    Block* b = current_block();
    Fiber* f = current_fiber();
    if (get == nullptr || b == nullptr || f == nullptr) return false;
    const char* issue = nullptr;
    const char* message = nullptr;
    const char* file = nullptr;
    unsigned line_no = 0, col = 0;
    char* address = nullptr;
    get(&issue, &message, &file, &line_no, &col, &address);
    if (message == nullptr || message[0] == '\0') return false;
    if (quiet()) {
        set_report_fd(ubsan, !g_show_raw);
        return true;
    }
    if (!take_print_slot()) {
        set_report_fd(ubsan, true);  // counted at exit; UBSan's own report hidden with it
        return true;
    }
    const std::vector<std::string> frames = current_program_frames();
    set_report_fd(ubsan, !g_show_raw);
    // The report data capitalises UBSan's message; its printed report does not.
    std::string what = message;
    what[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(what[0])));
    std::string out = "========= Undefined behaviour: " + what + "\n";
    char line[1200];
    const bool in_program = file != nullptr && file[0] == '/' && !runtime_file(file);
    if (in_program) {
        // UBSan's own line; the function is the program's innermost frame.
        const std::string func = frames.empty() ? std::string("?") : frames[0].substr(0, frames[0].find(" in "));
        std::snprintf(line, sizeof line, "=========     at %s in %s:%u\n", func.c_str(), file, line_no);
        out += line;
    } else {
        // Inside a runtime header (a vector type's helper): the program's line that called it.
        out += "=========     at " + (frames.empty() ? std::string("source line unknown") : frames[0]) + "\n";
        if (file != nullptr && file[0] != '\0') {
            std::snprintf(line, sizeof line, "=========     inside the simulator's runtime at %s:%u\n", file, line_no);
            out += line;
        }
    }
    std::snprintf(line, sizeof line,
                  "=========     by thread %s in block (%u,%u,%u) of kernel '%s' launched at %s:%d\n",
                  tid_str(*f).c_str(), b->idx.x, b->idx.y, b->idx.z, b->launch->name, b->launch->file, b->launch->line);
    out += line;
    out += caller_frames(frames, b->launch);
    std::lock_guard<std::mutex> lock(g_report_mu);
    std::fputs(out.c_str(), stderr);
    std::fflush(stderr);
    return true;
}

void on_death() {
    if (in_unchecked_launch() && tl_hidden_report) {
        report("memcheck: the program was stopped by a sanitizer report from %s, a launch the kernel filters "
               "leave unchecked; check that launch (--kernel-name, --launch-skip, --launch-count) to see it",
               where(current_block()).c_str());
        return;
    }
    if (!in_device_code() && tl_hidden_report) {
        // A host report that cannot be recovered from (the sanitizer stops the program anyway).
        report("memcheck: host code: the program was stopped by a sanitizer report from host code; "
               "run with --check-host to see it");
        return;
    }
    if (!tl_device_report) say_where();  // a device fault is named by its own block
}

// After AddressSanitizer printed a report (also in a library loaded from Python).
void on_asan_report(const char* text) {
    if (in_device_code() && !tl_hidden_report) {
        if (tl_device_report && !g_show_raw) set_report_fd(nullptr, false);
        tl_device_report = true;
        report_device_fault(text);
        remember_fault_write();
        // run/check set halt_on_error=0: the thread goes on to its next switch, where its
        // block ends; the launch runs no further blocks and returns cudaErrorLaunchFailure.
        if (g_stop_on_error) _exit(kDeviceFaultStatus);
        return;
    }
    if (tl_hidden_report) {  // hidden by __asan_on_error: the program goes on
        tl_hidden_report = false;
        set_report_fd(nullptr, false);
        return;
    }
    if (g_check_host) {
        say_host("above");
        _exit(kDeviceFaultStatus);
    }
    // A library loaded from Python keeps the sanitizer's own hooks: label the report, and
    // leave the stop to the sanitizer's options.
    report("memcheck: host code: the report above is from host code (not a kernel)");
}

// UBSan is a separate runtime library under GCC, with its own death callback.
struct DeathHook {
    DeathHook() {
        if (!g_show_raw) set_report_fd(nullptr, true);  // AddressSanitizer's banner comes before its hooks
        __sanitizer_set_death_callback(on_death);
        __asan_set_error_report_callback(on_asan_report);
        if (void* ubsan = ubsan_handle()) {
            typedef void (*SetCallback)(void (*)(void));
            SetCallback set = reinterpret_cast<SetCallback>(dlsym(ubsan, "__sanitizer_set_death_callback"));
            if (set != nullptr) set(on_death);
        }
    }
    ~DeathHook() {
        if (const long n = g_errors_unprinted.load()) {
            report("memcheck: note: %ld error(s) past the print limit of %ld were not printed (--print-limit)", n,
                   g_print_limit);
        }
        if (int n = g_unchecked_reports.load()) {
            report("memcheck: note: %d sanitizer report(s) from launches that were not checked were not shown "
                   "(the kernel filters: --kernel-name, --kernel-name-exclude, --launch-skip, --launch-count)",
                   n);
        }
        int n = g_host_reports.load();
        if (n > 0 && !g_check_host) {
            report("memcheck: note: %d sanitizer report(s) from host code were not shown: memcheck judges "
                   "device code, as compute-sanitizer does (--check-host checks host code too)",
                   n);
        }
    }
} g_death_hook;
#endif

}  // namespace

#if defined(SIM_MEMCHECK)
void fault_block(Block* b, int linear) {
    if (b->fault_warp < 0) b->fault_warp = linear / 32;
    b->launch->failed.store(true);
}

// A plain loop's or block loop's thread loop (launch.h): the block has faulted and the rest of
// the faulting warp has run, so the block ends here (a block-loop kernel does not go on to its
// next region): back to run_block_plain (scheduler.cpp), failed.
void block_loop_stop() {
    yield_from(run_state(), false);
    std::abort();  // a plain block's threads leave by a jump
}

void undo_fault_writes() {
    // The latest first: a thread that wrote one place twice gets the bytes from before both.
    while (tl_fault_write_count > 0) {
        const FaultWrite& w = tl_fault_writes[--tl_fault_write_count];
        copy_poisoned(reinterpret_cast<unsigned char*>(w.addr), w.before, w.size);
    }
}

// Device buffers still allocated at exit: a launcher that misses a cudaFree on some path. Only
// when asked for (SIMULATOR_LEAK_CHECK=full: `run --leak-check full`, and `check`), as
// compute-sanitizer reports leaks only with --leak-check full.
void report_leaks() {
    if (!env_is("SIMULATOR_LEAK_CHECK", "full")) return;
    std::lock_guard<std::mutex> lock(g_state_mu);
    for (const auto& a : g_allocs) {
        if (vmm_range(a.first)) {  // no cudaMalloc call to name: the range and what frees it
            report("memcheck: device memory leak: %zu bytes mapped with cuMemMap at 0x%lx were never unmapped "
                   "with cuMemUnmap",
                   a.second, (unsigned long)a.first);
            continue;
        }
        std::string site = "unknown caller";
        auto it = g_alloc_sites.find(a.first);
        site = user_frame(reinterpret_cast<const void*>(a.first),
                          it == g_alloc_sites.end() ? nullptr : it->second);
        report("memcheck: device memory leak: %zu bytes from cudaMalloc in %s were never freed with cudaFree",
               a.second, site.c_str());
    }
}

namespace {

// "FUNC at FILE:LINE" of the first frame of ``pc`` (with its inlined frames, innermost first)
// outside the runtime; empty if every frame is the runtime's.
std::string user_frame_of_pc(const void* pc) {
    char buf[4096];
    buf[0] = buf[1] = '\0';
    // One NUL-terminated line per frame, innermost inlined frame first; "%s" alone locates it.
    __sanitizer_symbolize_pc(const_cast<void*>(pc), "%s\x1f%f at %s:%l", buf, sizeof buf);
    for (const char* fr = buf; *fr != '\0' && fr < buf + sizeof buf; fr += std::strlen(fr) + 1) {
        const char* sep = std::strchr(fr, '\x1f');
        if (sep == nullptr) continue;
        std::string file(fr, sep - fr);
        if (!runtime_file(file.c_str())) return sep + 1;
    }
    return "";
}

}  // namespace

std::string user_frame(const void* block, const void* call_site) {
    // AddressSanitizer keeps the stack of every allocation (cudaMalloc's malloc): its first frame
    // outside the runtime is the program's call, also through a template wrapper, a
    // cudaMallocManaged/Pitch/Async or a helper in a runtime header.
    void* trace[64];
    int tid = 0;
    size_t n = __asan_get_alloc_stack(const_cast<void*>(block), trace, 64, &tid);
    for (size_t i = 0; i < n; ++i) {
        // Return addresses: step back into the call for its line.
        std::string s = user_frame_of_pc(static_cast<const char*>(trace[i]) - (i == 0 ? 0 : 1));
        if (!s.empty()) return s;
    }
    if (call_site != nullptr) {
        std::string s = user_frame_of_pc(call_site);
        if (!s.empty()) return s;
    }
    return "unknown caller";
}
#endif

}  // namespace __sim

#if defined(SIM_MEMCHECK)
// Called by AddressSanitizer and UBSan before they print a report (weak defaults in their
// libraries, replaced by these in a linked program; a library loaded from Python keeps the
// defaults and shows every report). A host-code report is hidden unless host checks are on.
extern "C" {
__attribute__((visibility("default"))) void __asan_on_error() {
    if (__sim::in_unchecked_launch()) {
        __sim::hide_report(nullptr, __sim::g_unchecked_reports);
        return;
    }
    if (__sim::in_device_code()) {
        // The runtime prints the fault in compute-sanitizer's shape (report_device_fault);
        // AddressSanitizer's report, with the runtime's frames, only when asked for.
        __sim::tl_device_report = true;
        if (!__sim::g_show_raw) __sim::set_report_fd(nullptr, true);
        return;
    }
    if (!__sim::g_check_host) {
        __sim::hide_report(nullptr, __sim::g_host_reports);
    } else {
        __sim::set_report_fd(nullptr, false, true);
    }
}

__attribute__((visibility("default"))) void __ubsan_on_report() {
    void* ubsan = __sim::ubsan_handle();
    __sim::tl_hidden_report = false;
    if (__sim::in_unchecked_launch()) {
        __sim::hide_report(ubsan, __sim::g_unchecked_reports);
        return;
    }
    if (__sim::in_device_code()) {
        // Printed in compute-sanitizer's shape; UBSan's report after it only when asked for.
        if (__sim::report_device_ub(ubsan)) return;
        __sim::set_report_fd(ubsan, false);
        // UBSan prints after this hook: name the CUDA thread first. Its report then goes on
        // (halt_on_error=0 in run/check), and the finding fails the run at exit.
        __sim::report("memcheck: the undefined behaviour below happened in %s thread %s",
                    __sim::where(__sim::current_block()).c_str(), __sim::tid_str(*__sim::current_fiber()).c_str());
        return;
    }
    if (!__sim::g_check_host) {
        // Hidden; UBSan's next report sets its output again through this hook. A fatal kind
        // (unreachable code, a missing return) still stops the program: on_death says so.
        __sim::hide_report(ubsan, __sim::g_host_reports);
        return;
    }
    __sim::set_report_fd(ubsan, false);
    __sim::say_host("below");
}
}
#endif
