// CHECK of the feature libraries' launchers (semantics.cu, misc.cu, coop_groups.cu, fp16.cu):
// a runtime call that fails ends the launcher, which returns its cudaError_t to the Python test.
#pragma once

#define CHECK(call)                            \
    do {                                       \
        cudaError_t e_ = (call);               \
        if (e_ != cudaSuccess) return (int)e_; \
    } while (0)
