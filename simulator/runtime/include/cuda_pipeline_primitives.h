// Simulator stand-in for <cuda_pipeline_primitives.h>: __pipeline_memcpy_async, __pipeline_commit
// and __pipeline_wait_prior. The copy is made at once by the calling thread (zero-filling its last
// ``zfill`` bytes, as CUDA specifies), so committing and waiting have nothing left to do; another
// thread sees the data only after a barrier, as on a GPU.
#ifndef CUDA_SIM_CUDA_PIPELINE_PRIMITIVES_H
#define CUDA_SIM_CUDA_PIPELINE_PRIMITIVES_H

#include <cstddef>

#include "sim_async_copy.h"

// Copies size_and_align - zfill bytes and writes zeros to the remaining zfill bytes of ``dst``.
static inline void __pipeline_memcpy_async(void* dst, const void* src, ::std::size_t size_and_align,
                                           ::std::size_t zfill = 0) {
    const ::std::size_t copied = zfill < size_and_align ? size_and_align - zfill : 0;
    ::sim_async::copy_range(dst, src, 0, copied);
    char* d = static_cast<char*>(dst);
    for (::std::size_t k = copied; k < size_and_align; ++k) d[k] = 0;
}

// Closes the current batch of copies.
static inline void __pipeline_commit() {}

// All but the ``prior`` most recent batches are complete: every copy already is.
static inline void __pipeline_wait_prior(::std::size_t prior) { (void)prior; }

#endif  // CUDA_SIM_CUDA_PIPELINE_PRIMITIVES_H
