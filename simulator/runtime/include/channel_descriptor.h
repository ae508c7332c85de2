// Simulator stand-in for <channel_descriptor.h>: the runtime header is force-included by the build.
#include "../cuda_sim.h"
