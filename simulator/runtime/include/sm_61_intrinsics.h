// Simulator stand-in for <sm_61_intrinsics.h>: the runtime header is force-included by the build.
#include "../cuda_sim.h"
