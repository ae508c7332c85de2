// Simulator stand-in for <cuda_runtime.h>: the runtime header is force-included by the build.
#include "../cuda_sim.h"
