// Simulator stand-in for the NVTX v2 include path <nvToolsExt.h>: the v3 stand-in.
#include "nvtx3/nvToolsExt.h"
