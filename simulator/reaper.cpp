// Runs one program so that no process it starts outlives it (Linux).
//
// `reaper PARENT_PID PROGRAM [ARGS...]` is what `run` and `check` start instead of the program
// itself, and every build instead of its compiler (simulator/supervise.py, start_tree; the build
// compiles this file once into its cache).
// It makes itself a child subreaper, so that every process the program starts and leaves behind
// (even one that calls setsid) becomes its child instead of init's, and starts the program in a
// process group of its own. Then:
//   - SIGTERM, SIGHUP and SIGINT sent to it are passed on to the program's group;
//   - SIGUSR1 (also what it gets when PARENT_PID dies, even by SIGKILL) kills the program and
//     every process it started, at once;
//   - when the program ends, whatever it left running is killed, and this process ends as the
//     program did: with its exit status, or by its signal.
#include <dirent.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

volatile sig_atomic_t g_program = 0;  // the program's pid, which is also its process group
volatile sig_atomic_t g_ending = 0;

const int kForwarded[] = {SIGTERM, SIGHUP, SIGINT};

void forward(int signum) {
    if (g_program > 0) kill(-g_program, signum);
}

void end_all(int) {
    g_ending = 1;
    if (g_program > 0) kill(-g_program, SIGKILL);
}

// The processes whose parent is this one: the program, and what it left behind.
std::vector<pid_t> children() {
    std::vector<pid_t> found;
    const pid_t me = getpid();
    DIR* proc = opendir("/proc");
    if (proc == nullptr) return found;
    while (dirent* entry = readdir(proc)) {
        char* end = nullptr;
        const long pid = std::strtol(entry->d_name, &end, 10);
        if (end == entry->d_name || *end != '\0') continue;
        char path[64];
        std::snprintf(path, sizeof path, "/proc/%ld/stat", pid);
        FILE* f = std::fopen(path, "r");
        if (f == nullptr) continue;
        char stat[512];
        const size_t n = std::fread(stat, 1, sizeof stat - 1, f);
        std::fclose(f);
        stat[n] = '\0';
        // pid (comm) state ppid ...: comm may hold spaces and parentheses, so read after the last ')'.
        const char* close = std::strrchr(stat, ')');
        char state = 0;
        long ppid = 0;
        if (close != nullptr && std::sscanf(close + 1, " %c %ld", &state, &ppid) == 2 && ppid == me) {
            found.push_back(static_cast<pid_t>(pid));
        }
    }
    closedir(proc);
    return found;
}

// SIGKILL the program's group and every child until none is left.
void end_everything(pid_t program) {
    kill(-program, SIGKILL);
    for (std::vector<pid_t> left = children(); !left.empty(); left = children()) {
        for (pid_t pid : left) kill(pid, SIGKILL);
        for (pid_t pid : left) {  // their own children are ours now: the next round finds them
            while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
            }
        }
    }
}

void on(int signum, void (*handler)(int)) {
    struct sigaction action {};
    action.sa_handler = handler;
    sigemptyset(&action.sa_mask);
    sigaction(signum, &action, nullptr);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: %s PARENT_PID PROGRAM [ARGS...]\n", argv[0]);
        return 2;
    }
    const pid_t parent = static_cast<pid_t>(std::atol(argv[1]));
    prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    prctl(PR_SET_PDEATHSIG, SIGUSR1, 0, 0, 0);
    // Signals wait while the program starts, so that one that comes then finds its group.
    sigset_t handled, before;
    sigemptyset(&handled);
    for (int s : kForwarded) sigaddset(&handled, s);
    sigaddset(&handled, SIGUSR1);
    sigprocmask(SIG_BLOCK, &handled, &before);
    for (int s : kForwarded) on(s, forward);
    on(SIGUSR1, end_all);
    if (getppid() != parent) return 128 + SIGKILL;  // the parent died before the request took effect
    const pid_t me = getpid();
    const pid_t pid = fork();
    if (pid == 0) {
        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
        if (getppid() != me) _exit(128 + SIGKILL);
        for (int s : kForwarded) on(s, SIG_DFL);
        on(SIGUSR1, SIG_DFL);
        sigprocmask(SIG_SETMASK, &before, nullptr);
        execv(argv[2], argv + 2);
        std::fprintf(stderr, "simulator: cannot start %s: %s\n", argv[2], std::strerror(errno));
        _exit(127);
    }
    if (pid < 0) {
        std::fprintf(stderr, "simulator: cannot start %s: %s\n", argv[2], std::strerror(errno));
        return 127;
    }
    setpgid(pid, pid);  // also here, so that a signal forwarded at once finds the group
    g_program = pid;
    sigprocmask(SIG_SETMASK, &before, nullptr);
    if (g_ending) kill(-pid, SIGKILL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) return 128 + SIGKILL;
    }
    end_everything(pid);
    while (waitpid(-1, nullptr, WNOHANG) > 0) {
    }
    if (WIFSIGNALED(status)) {
        const int signum = WTERMSIG(status);
        const struct rlimit none {0, 0};
        setrlimit(RLIMIT_CORE, &none);  // the program's own core, if any, is written
        on(signum, SIG_DFL);
        sigset_t only;
        sigemptyset(&only);
        sigaddset(&only, signum);
        sigprocmask(SIG_UNBLOCK, &only, nullptr);
        kill(getpid(), signum);
        return 128 + signum;
    }
    return WEXITSTATUS(status);
}
