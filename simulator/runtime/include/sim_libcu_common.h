// What <cuda/barrier> and <cuda/pipeline> share: cuda::thread_scope and the wait that lets the
// block's other threads run.
#ifndef CUDA_SIM_LIBCU_COMMON_H
#define CUDA_SIM_LIBCU_COMMON_H

#include "cuda_runtime.h"
#include "sim_async_copy.h"

// NVIDIA's libcu++ (CCCL, on every program's include path): its cuda::thread_scope.
#include <cuda/std/__atomic/scopes.h>

// racecheck of __shared__ memory (SIM_SHARED_RACES) starts a new epoch of the block at each atomic
// that acquires. The counters of a barrier or pipeline are read at every arrival and at every turn
// of a waiting thread, which would order accesses that nothing orders (a read between arrive() and
// wait()); so their atomics are left uninstrumented there, and a wait that is over acquires once.
#if defined(SIM_SHARED_RACES)
#define SIM_SYNC_COUNTER __attribute__((noinline, no_sanitize("thread")))
#else
#define SIM_SYNC_COUNTER
#endif

namespace sim_async {

// Spins until ``*counter`` reaches ``target`` (or, with ``differs``, until it differs from
// ``target``), letting the block's other threads run meanwhile: the front end sees the call to
// ::__sim::nanosleep_thread and never runs a kernel that reaches this as a plain loop.
SIM_SYNC_COUNTER static inline void spin_on_counter(const unsigned long long* counter,
                                                    unsigned long long target, bool differs,
                                                    const char* file, int line) {
    for (;;) {
        const unsigned long long now = __atomic_load_n(counter, __ATOMIC_ACQUIRE);
        if (differs ? now != target : now >= target) return;
        ::__sim::nanosleep_thread(0, file, line);
    }
}

// The wait of a barrier or pipeline: what the threads that released the counter did is visible after.
static inline void wait_counter(const unsigned long long* counter, unsigned long long target, bool differs,
                                const char* file, int line) {
    spin_on_counter(counter, target, differs, file, line);
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
}

}  // namespace sim_async

#endif  // CUDA_SIM_LIBCU_COMMON_H
