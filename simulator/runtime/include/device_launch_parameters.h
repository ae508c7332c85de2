// Simulator stand-in for <device_launch_parameters.h>: the runtime header is force-included by the build.
#include "../cuda_sim.h"
