// What the sources of CUDA arrays and textures share (cuda_arrays.cpp, array_copies.cpp,
// textures.cpp): the sets of live arrays and objects, and the checks of their arguments.
#pragma once
#include "sim_internal.h"

#include <mutex>
#include <set>

namespace __sim {

extern std::mutex g_tex_mu;  // guards the live sets below
extern std::set<const void*> g_arrays, g_mipmaps, g_texobjs, g_surfobjs;

bool live(const std::set<const void*>& s, const void* p);

// Channels and bits of a descriptor CUDA accepts for arrays and textures: 1, 2 or 4 channels of
// 8, 16 or 32 bits each (16 or 32 for float); false otherwise.
bool channel_info(const cudaChannelFormatDesc& d, int* nch, int* bits);

// True when [p, p + n) lies inside one live device allocation.
bool device_range(const void* p, size_t n);

// An argument CUDA refuses: the call returns the error, as on a GPU, and says nothing (a report
// would be a checker finding). `why` documents the rule at the call site.
cudaError_t fail(cudaError_t e, const char* why, const char* api);

}  // namespace __sim
