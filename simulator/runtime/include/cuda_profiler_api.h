// Simulator stand-in for <cuda_profiler_api.h>: cudaProfilerStart/Stop (no profiler; they succeed).
#include "../cuda_sim.h"
