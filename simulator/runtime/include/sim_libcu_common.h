// What <cuda/barrier> and <cuda/pipeline> share: cuda::thread_scope and the wait that lets the
// block's other threads run.
#ifndef CUDA_SIM_LIBCU_COMMON_H
#define CUDA_SIM_LIBCU_COMMON_H

#include "cuda_runtime.h"
#include "sim_async_copy.h"

#ifdef SIM_WITH_CCCL
// NVIDIA's libcu++ is on the include path (a Thrust program): its cuda::thread_scope, not a second one.
#include <cuda/std/__atomic/scopes.h>
#else
namespace cuda {
enum thread_scope {
    thread_scope_system = 0,
    thread_scope_device = 1,
    thread_scope_block = 2,
    thread_scope_thread = 3,
};
}  // namespace cuda
#endif

namespace sim_async {

// Waits until ``*counter`` reaches ``target`` (or, with ``differs``, until it differs from
// ``target``), letting the block's other threads run meanwhile: the front end sees the call to
// ::sim::nanosleep_thread and never runs a kernel that reaches this as a plain loop.
static inline void wait_counter(const unsigned long long* counter, unsigned long long target, bool differs,
                                const char* file, int line) {
    for (;;) {
        const unsigned long long now = __atomic_load_n(counter, __ATOMIC_ACQUIRE);
        if (differs ? now != target : now >= target) return;
        ::sim::nanosleep_thread(0, file, line);
    }
}

}  // namespace sim_async

#endif  // CUDA_SIM_LIBCU_COMMON_H
