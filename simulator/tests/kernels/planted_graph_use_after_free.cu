// A kernel that writes a graph allocation after it was freed (planted when run with the
// argument "planted"), and its fixed twin that writes before the free. memcheck must name the
// kernel's line in the planted run and stay quiet in the fixed one (test_graph_memory.py).
#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>

__global__ void fill(float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = 1.0f;  // PLANT
}

int main(int argc, char** argv) {
    const bool planted = argc > 1 && std::strcmp(argv[1], "planted") == 0;
    const int n = 128;
    cudaGraph_t g;
    cudaGraphCreate(&g, 0);
    cudaMemAllocNodeParams p = {};
    p.bytesize = n * sizeof(float);
    p.poolProps.allocType = cudaMemAllocationTypePinned;
    p.poolProps.location.type = cudaMemLocationTypeDevice;
    p.poolProps.location.id = 0;
    cudaGraphNode_t alloc;
    cudaGraphAddMemAllocNode(&alloc, g, nullptr, 0, &p);
    float* d = (float*)p.dptr;
    cudaGraphExec_t x;
    cudaGraphInstantiate(&x, g, 0);
    cudaGraphLaunch(x, 0);  // the graph does not free d: it stays valid until cudaFree
    if (!planted) fill<<<1, n>>>(d, n);
    cudaFree(d);
    if (planted) fill<<<1, n>>>(d, n);
    cudaError_t e = cudaDeviceSynchronize();
    std::printf("status=%s\n", cudaGetErrorName(e));
    cudaGraphExecDestroy(x);
    cudaGraphDestroy(g);
    return 0;
}
