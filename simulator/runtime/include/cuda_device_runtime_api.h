// Simulator stand-in for <cuda_device_runtime_api.h>: the runtime header is force-included by the build.
#include "../cuda_sim.h"
