// Simulator stand-in for <sm_30_intrinsics.h>: the runtime header is force-included by the build.
#include "../cuda_sim.h"
