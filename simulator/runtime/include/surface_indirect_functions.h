// Simulator stand-in for <surface_indirect_functions.h>: the runtime header is force-included by the build.
#include "../cuda_sim.h"
