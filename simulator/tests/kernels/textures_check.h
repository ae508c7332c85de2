// CHECK of the texture test programs (textures_objects.cu, textures_references.cu,
// textures_surfaces.cu): a runtime call that fails prints "failed=CALL line N: ERROR", which the
// tests show, and ends the program.
#pragma once
#include <cstdio>
#include <cstdlib>

#define CHECK(x)                                                                         \
    do {                                                                                 \
        cudaError_t e_ = (x);                                                            \
        if (e_ != cudaSuccess) {                                                         \
            std::printf("failed=%s line %d: %s\n", #x, __LINE__, cudaGetErrorName(e_)); \
            std::exit(1);                                                                \
        }                                                                                \
    } while (0)
