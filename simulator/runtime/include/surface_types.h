// Simulator stand-in for <surface_types.h>: the runtime header is force-included by the build.
#include "../cuda_sim.h"
