// A kernel's write into a reservation where it may not write, as the first argument says:
// "unmapped" (the reservation's second granule, never mapped) or "no_access" (mapped, but
// cuMemSetAccess never called). The first granule is mapped and writable; a GPU faults on the
// other, and so must the simulator (test_vmm.py). "leak" exits after the valid launch, leaving the
// memory mapped. Prints key=value tokens.
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>

// x[i] = i for the thread's i.
__global__ void touch(int* x, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = i;
}

int main(int argc, char** argv) {
    const bool unmapped = argc > 1 && std::strcmp(argv[1], "unmapped") == 0;
    cuInit(0);
    CUmemAllocationProp prop = {};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    size_t g = 0;
    cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
    CUdeviceptr va = 0;
    cuMemAddressReserve(&va, 2 * g, 0, 0, 0);
    CUmemGenericAllocationHandle h[2] = {0, 0};
    const int chunks = unmapped ? 1 : 2;
    for (int c = 0; c < chunks; ++c) {
        cuMemCreate(&h[c], g, &prop, 0);
        cuMemMap(va + c * g, g, 0, h[c], 0);
    }
    CUmemAccessDesc d = {};
    d.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    d.location.id = 0;
    d.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    cuMemSetAccess(va, g, &d, 1);  // the first granule only
    int* good = (int*)va;
    touch<<<1, 32>>>(good, 32);
    std::printf("good=%s\n", cudaGetErrorName(cudaDeviceSynchronize()));
    if (argc > 1 && std::strcmp(argv[1], "leak") == 0) return 0;  // exits with the granule mapped
    int* bad = (int*)(va + g);
    touch<<<1, 32>>>(bad, 32);  // VMM_FAULT_LINE
    std::printf("bad=%s\n", cudaGetErrorName(cudaDeviceSynchronize()));
    return 0;
}
