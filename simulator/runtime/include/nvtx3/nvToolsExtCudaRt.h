// Simulator stand-in for NVTX v3 <nvtx3/nvToolsExtCudaRt.h>: naming CUDA streams and events for a
// profiler, which does nothing with no tool attached (see nvToolsExt.h).
#ifndef SIM_NVTOOLSEXTCUDART_H
#define SIM_NVTOOLSEXTCUDART_H

#include "../cuda_runtime.h"
#include "nvToolsExt.h"

static inline void nvtxNameCudaDeviceA(int, const char*) {}
static inline void nvtxNameCudaStreamA(cudaStream_t, const char*) {}
static inline void nvtxNameCudaEventA(cudaEvent_t, const char*) {}

#endif
