// <nvToolsExt.h>: NVTX 3's header of that name (CUDA 13 ships NVTX only as nvtx3/, header-only).
#include <nvtx3/nvToolsExt.h>
