// Simulator stand-in for <cuda.h>: the runtime header is force-included by the build.
#include "../cuda_sim.h"
