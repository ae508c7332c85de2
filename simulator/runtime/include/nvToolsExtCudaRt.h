// Simulator stand-in for the NVTX v2 include path <nvToolsExtCudaRt.h>: the v3 stand-in.
#include "nvtx3/nvToolsExtCudaRt.h"
