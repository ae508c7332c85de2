// The worker pool: the threads beyond the launching one that share out the blocks of a launch.
// Each of them, and the launching thread, runs blocks (run_blocks, scheduler.cpp) until none is
// left; SIMULATOR_THREADS says how many threads there are in all.
#include "sim_internal.h"

#include <unistd.h>

#include <condition_variable>
#include <thread>
#include <vector>

namespace __sim {

unsigned worker_threads() {
    const long n = knob_value("SIMULATOR_THREADS", (long)host_cpu_count());
    return n < 1 ? 1u : n > 64 ? 64u : (unsigned)n;  // the knob's bounds, for the CPU count
}

namespace {

// Workers beyond the calling thread; blocks of one launch are shared out between them.
class Pool {
public:
    void run(Launch* L) {
        unsigned want = workers_for(L->nblocks);
        if (want <= 1) {
            run_blocks(L);
            return;
        }
        std::unique_lock<std::mutex> lock(mu_);
        if (pid_ != getpid()) {
            // After fork() the workers did not come along: forget them (their objects leak).
            threads_.clear();
            pid_ = getpid();
        }
        while (threads_.size() + 1 < want) threads_.push_back(new std::thread([this] { loop(); }));
        job_ = L;
        ++generation_;
        pending_ = (int)threads_.size();
        lock.unlock();
        cv_.notify_all();
        run_blocks(L);
        lock.lock();
        done_cv_.wait(lock, [this] { return pending_ == 0; });
        job_ = nullptr;
    }

private:
    static unsigned workers_for(unsigned long long nblocks) {
        unsigned n = worker_threads();
        if (nblocks < n) n = (unsigned)nblocks;
        return n;
    }
    void loop() {
        unsigned long long seen = 0;
        std::unique_lock<std::mutex> lock(mu_);
        for (;;) {
            cv_.wait(lock, [&] { return generation_ != seen; });
            seen = generation_;
            Launch* L = job_;
            lock.unlock();
            run_blocks(L);
            lock.lock();
            if (--pending_ == 0) done_cv_.notify_all();
        }
    }
    std::mutex mu_;
    std::condition_variable cv_, done_cv_;
    std::vector<std::thread*> threads_;
    pid_t pid_ = getpid();
    Launch* job_ = nullptr;
    unsigned long long generation_ = 0;
    int pending_ = 0;
};

// Never destroyed, like the watchdog: exit() from a host thread while a launch runs would
// otherwise wait in ~Pool for workers still running kernel code (with no time limit, forever)
// while the launching thread went on past the exit. The workers end with the process.
Pool& pool() {
    static Pool* p = new Pool;
    return *p;
}

}  // namespace

void run_on_pool(Launch* L) { pool().run(L); }

}  // namespace __sim
