// sim-runtime: per mode
// The launch watchdog and faults in kernel code: the signals that stop a launch past its time
// limit, and (fast and synccheck builds) a kernel's wild access, as a GPU would, without
// stopping the process. scheduler.cpp runs the blocks; this file only ever abandons a fiber
// (yield_to_scheduler) and marks its block failed.
#include "sim_internal.h"

#include <link.h>
#include <signal.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <thread>

namespace __sim {

namespace {

// ---- the launch watchdog ---------------------------------------------------------------------
// Like a GPU's watchdog, it stops a launch that runs past its deadline. It sets the launch's
// timed_out flag, which the scheduler checks between fiber switches, and sends each thread
// running a block a signal (again every 20 ms until the launch returns). The handler leaves
// the running fiber for the scheduler when the signal interrupted kernel code: so a kernel
// stuck in a loop without barriers stops too. It does nothing when the signal lands in the
// runtime, the scheduler or another library (a fiber stopped inside printf or malloc would
// leave their locks held); the next signal tries again. Under ThreadSanitizer, signals reach
// handlers only at library calls, so racecheck relies on the flag (and on the caller's process
// timeout for a loop without barriers or calls).

int timeout_signal() { return SIGRTMIN + 7; }

uintptr_t interrupted_pc(void* uc) {
#if defined(__x86_64__)
    return (uintptr_t) static_cast<ucontext_t*>(uc)->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
    return (uintptr_t) static_cast<ucontext_t*>(uc)->uc_mcontext.pc;
#else
    (void)uc;
    return 0;
#endif
}

// The handler installed before ours: every simulated library loaded into a process has its
// own copy of the runtime, each with its handler; a signal for another copy's fiber goes on.
struct sigaction g_previous_handler;

void chain_timeout_signal(int sig, siginfo_t* info, void* uc) {
    const struct sigaction& prev = g_previous_handler;
    if (prev.sa_flags & SA_SIGINFO) {
        if (prev.sa_sigaction != nullptr) prev.sa_sigaction(sig, info, uc);
    } else if (prev.sa_handler != SIG_DFL && prev.sa_handler != SIG_IGN && prev.sa_handler != nullptr) {
        prev.sa_handler(sig);
    }
}

void on_timeout_signal(int sig, siginfo_t* info, void* uc) {
    Fiber* f = tl_run.fiber;
    Block* b = tl_run.block;
    if (f == nullptr || b == nullptr) {
        chain_timeout_signal(sig, info, uc);  // not this copy's fiber
        return;
    }
    if (!tl_run.in_kernel || !b->launch->timed_out.load()) return;
    const uintptr_t pc = interrupted_pc(uc);
    if (pc != 0 && (pc < b->launch->code_lo || pc >= b->launch->code_hi)) return;
    // The fiber is abandoned where it stands (its stack is reused by the next block); nothing
    // returns to the interrupted code. SA_NODEFER left the signal unblocked.
    tl_run.in_kernel = false;
    stop_thread(b, f);
}

bool install_timeout_handler() {
#if defined(SIM_RACECHECK)
    return false;
#else
    struct sigaction old;
    if (sigaction(timeout_signal(), nullptr, &old) != 0) return false;
    if ((old.sa_flags & SA_SIGINFO) && old.sa_sigaction == on_timeout_signal) return true;
    g_previous_handler = old;
    struct sigaction sa;
    std::memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_timeout_signal;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    return sigaction(timeout_signal(), &sa, nullptr) == 0;
#endif
}

}  // namespace

// The executable segment of the loaded object that holds ``addr`` (the launch's code).
void code_range(const void* addr, uintptr_t* lo, uintptr_t* hi) {
    struct Query {
        uintptr_t addr, lo, hi;
    } q{reinterpret_cast<uintptr_t>(addr), 0, 0};
    dl_iterate_phdr(
        [](struct dl_phdr_info* info, size_t, void* data) -> int {
            Query* q = static_cast<Query*>(data);
            for (int i = 0; i < info->dlpi_phnum; ++i) {
                const ElfW(Phdr)& ph = info->dlpi_phdr[i];
                if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X)) continue;
                const uintptr_t start = info->dlpi_addr + ph.p_vaddr;
                if (q->addr >= start && q->addr < start + ph.p_memsz) {
                    q->lo = start;
                    q->hi = start + ph.p_memsz;
                    return 1;
                }
            }
            return 0;
        },
        &q);
    *lo = q.lo;
    *hi = q.hi;
}

namespace {

// ---- memory faults in kernels (fast and synccheck builds) -------------------------------------
// A kernel that touches unmapped memory (a wild or null pointer) would kill the process; on a
// GPU the launch fails with cudaErrorIllegalAddress and the context is lost. When the fault is
// in kernel code, the handler reports it, abandons the block like a timeout does and the launch
// returns that sticky error. A fault anywhere else (the runtime, another library, the host) goes
// to the handler installed before, or kills the process as it would have. memcheck leaves
// faults to AddressSanitizer, racecheck to ThreadSanitizer.
#if !defined(SIM_MEMCHECK) && !defined(SIM_RACECHECK)
struct sigaction g_previous_fault[2];
bool g_fault_quiet = false;  // SIMULATOR_QUIET=1, read when the handler is installed

void on_fault_signal(int sig, siginfo_t* info, void* uc) {
    Fiber* f = tl_run.fiber;
    Block* b = tl_run.block;
    const uintptr_t pc = interrupted_pc(uc);
    if (f != nullptr && b != nullptr && tl_run.in_kernel && pc >= b->launch->code_lo && pc < b->launch->code_hi) {
        tl_run.in_kernel = false;
        char msg[320];
        const int n = std::snprintf(msg, sizeof msg,
                                    "simulator: illegal address: kernel '%s' block (%u,%u,%u) thread (%u,%u,%u) "
                                    "accessed %p; the launch returns cudaErrorIllegalAddress, which is sticky "
                                    "(check --mode memcheck names the line)\n",
                                    b->launch->name, b->idx.x, b->idx.y, b->idx.z, f->thread_idx.x,
                                    f->thread_idx.y, f->thread_idx.z, info->si_addr);
        if (n > 0 && !g_fault_quiet) (void)!write(2, msg, (size_t)std::min(n, (int)sizeof msg - 1));
        b->launch->faulted.store(true);
        stop_thread(b, f);
    }
    // Not a kernel's fault: what would have happened without this handler.
    const struct sigaction& prev = g_previous_fault[sig == SIGBUS ? 1 : 0];
    if (prev.sa_flags & SA_SIGINFO) {
        prev.sa_sigaction(sig, info, uc);
    } else if (prev.sa_handler != SIG_DFL && prev.sa_handler != SIG_IGN) {
        prev.sa_handler(sig);
    } else {
        signal(sig, SIG_DFL);  // the faulting instruction runs again and takes the default action
    }
}

}  // namespace

// On the thread that runs blocks: an alternate signal stack, so that a fault reaches the handler.
void ensure_signal_stack() {
    static thread_local bool done = false;
    if (done) return;
    done = true;
    stack_t cur;
    if (sigaltstack(nullptr, &cur) == 0 && !(cur.ss_flags & SS_DISABLE)) return;  // the program's own
    stack_t ss;
    ss.ss_size = 64 * 1024;
    ss.ss_sp = std::malloc(ss.ss_size);  // kept for the thread's lifetime
    ss.ss_flags = 0;
    if (ss.ss_sp != nullptr) sigaltstack(&ss, nullptr);
}

void install_fault_handler() {
    static std::once_flag once;
    std::call_once(once, [] {
        const char* q = std::getenv("SIMULATOR_QUIET");
        g_fault_quiet = q != nullptr && q[0] == '1';
        const int sigs[2] = {SIGSEGV, SIGBUS};
        for (int i = 0; i < 2; ++i) {
            struct sigaction sa;
            std::memset(&sa, 0, sizeof sa);
            sa.sa_sigaction = on_fault_signal;
            sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
            sigemptyset(&sa.sa_mask);
            sigaction(sigs[i], &sa, &g_previous_fault[i]);
        }
    });
}
#else
}  // namespace

void ensure_signal_stack() {}
void install_fault_handler() {}
#endif

namespace {

class Watchdog {
public:
    // Watches ``L`` until disarm(L); a launch without a limit is not watched. Several launches
    // may be watched at once: a CUDA thread that waits for its child grids (CDP1's device-side
    // cudaDeviceSynchronize) keeps its own launch armed while theirs run.
    void arm(Launch* L) {
        if (L->timeout_s <= 0) return;
        std::lock_guard<std::mutex> lock(mu_);
        if (pid_ != getpid()) {
            // After fork() the watchdog thread did not come along.
            started_ = false;
            watched_.clear();
            pid_ = getpid();
        }
        if (!started_) {
            signals_ = install_timeout_handler();
            std::thread([this] { loop(); }).detach();
            started_ = true;
        }
        const auto deadline = std::chrono::steady_clock::now() +
                              std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                  std::chrono::duration<double>(L->timeout_s));
        watched_.push_back({L, deadline});
        cv_.notify_one();
    }
    void disarm(Launch* L) {
        std::lock_guard<std::mutex> lock(mu_);
        watched_.erase(std::remove_if(watched_.begin(), watched_.end(), [L](const Watched& w) { return w.launch == L; }),
                       watched_.end());
    }

private:
    struct Watched {
        Launch* launch;
        std::chrono::steady_clock::time_point deadline;
    };
    void loop() {
        std::unique_lock<std::mutex> lock(mu_);
        for (;;) {
            if (watched_.empty()) {
                cv_.wait(lock);
                continue;
            }
            const auto now = std::chrono::steady_clock::now();
            auto next = watched_.front().deadline;
            for (Watched& w : watched_) {
                if (now >= w.deadline) {
                    stop(w.launch);
                    w.deadline = now + std::chrono::milliseconds(20);
                }
                next = std::min(next, w.deadline);
            }
            cv_.wait_until(lock, next);
        }
    }
    // Past its deadline: flags ``L`` and signals each thread running its blocks (again every 20 ms).
    void stop(Launch* L) {
        L->timed_out.store(true);
        L->failed.store(true);
        if (signals_) {
            // disarm() waits for mu_, so L and its threads outlive this step.
            std::lock_guard<std::mutex> tl(L->threads_mu);
            for (pthread_t t : L->threads) pthread_kill(t, timeout_signal());
        }
    }
    std::mutex mu_;
    std::condition_variable cv_;
    std::vector<Watched> watched_;
    pid_t pid_ = getpid();
    bool started_ = false;
    bool signals_ = false;
};

// Never destroyed: the detached watchdog thread may still wait on it at exit.
Watchdog& watchdog() {
    static Watchdog* w = new Watchdog;
    return *w;
}

}  // namespace

void watch_launch(Launch* L) { watchdog().arm(L); }
void unwatch_launch(Launch* L) { watchdog().disarm(L); }

}  // namespace __sim
