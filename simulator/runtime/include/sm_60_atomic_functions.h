// Simulator stand-in for <sm_60_atomic_functions.h>: the runtime header is force-included by the build.
#include "../cuda_sim.h"
