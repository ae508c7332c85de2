// Dynamic parallelism: errors in child grids. argv[1] picks the case:
//   trap    a grandchild calls __trap(): the host's launch fails with sticky cudaErrorLaunchFailure
//   assert  a child's assert fails: sticky cudaErrorAssert
//   oob     a child writes past its buffer (memcheck names the child kernel)
//   spin    the parent spins until its child sets a flag: the child cannot run before the parent
//           ends here, so the launch runs into the time limit (cudaErrorLaunchTimeout)
#include <cuda_runtime.h>
#include <cassert>
#include <cstdio>
#include <cstring>

__global__ void grandchild_trap(int* p) {
    if (threadIdx.x == 3) __trap();
    p[threadIdx.x] = 1;
}
__global__ void child_trap(int* p) { grandchild_trap<<<1, 8>>>(p); }
__global__ void parent_trap(int* p) { child_trap<<<1, 1>>>(p); }

__global__ void child_assert(int v) { assert(v == 0); }
__global__ void parent_assert() { child_assert<<<1, 1>>>(1); }

__global__ void child_oob(int* p, int n) { p[n + threadIdx.x] = 1; }
__global__ void parent_oob(int* p, int n) { child_oob<<<1, 4>>>(p, n); }

__global__ void child_flag(volatile int* flag) { *flag = 1; }
__global__ void parent_spin(volatile int* flag) {
    child_flag<<<1, 1>>>(flag);
    while (*flag == 0) {
    }
}

int main(int argc, char** argv) {
    const char* what = argc > 1 ? argv[1] : "";
    int* d = nullptr;
    cudaMalloc(&d, 8 * sizeof(int));
    cudaMemset(d, 0, 8 * sizeof(int));
    if (std::strcmp(what, "trap") == 0) {
        parent_trap<<<1, 1>>>(d);
    } else if (std::strcmp(what, "assert") == 0) {
        parent_assert<<<1, 1>>>();
    } else if (std::strcmp(what, "oob") == 0) {
        parent_oob<<<1, 1>>>(d, 8);
    } else if (std::strcmp(what, "spin") == 0) {
        parent_spin<<<1, 1>>>(d);
    } else {
        std::fprintf(stderr, "usage: %s trap|assert|oob|spin\n", argv[0]);
        return 2;
    }
    std::printf("sync=%d\n", (int)cudaDeviceSynchronize());
    std::printf("after=%d\n", (int)cudaMemset(d, 0, sizeof(int)));  // a sticky error stays
    cudaFree(d);
    return 0;
}
