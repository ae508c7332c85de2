// Simulator stand-in for <host_defines.h>: the runtime header is force-included by the build.
#include "../cuda_sim.h"
