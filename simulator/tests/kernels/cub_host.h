// Host helpers of the CUB test programs (program_cub.cu, program_cub_device.cu): CHECK of a
// runtime call, the name=v0,v1,... lines test_cub.py reads, and a copy back from the device.
#pragma once
#include <cstdio>
#include <vector>

#define CHECK(call)                                                                    \
    do {                                                                               \
        cudaError_t e_ = (call);                                                       \
        if (e_ != cudaSuccess) {                                                       \
            std::printf("error=%s at line %d\n", cudaGetErrorString(e_), __LINE__);    \
            return 1;                                                                  \
        }                                                                              \
    } while (0)

static void print(const char* name, const std::vector<int>& v) {
    std::printf("%s=", name);
    for (size_t i = 0; i < v.size(); ++i) std::printf(i ? ",%d" : "%d", v[i]);
    std::printf("\n");
}

static std::vector<int> fetch(const int* d, int n) {
    std::vector<int> h(n);
    cudaMemcpy(h.data(), d, n * sizeof(int), cudaMemcpyDeviceToHost);
    return h;
}
