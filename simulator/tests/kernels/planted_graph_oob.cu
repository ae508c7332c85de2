// memcheck plant in a graph's kernel node: the bounds test lets thread n write one element
// past the buffer. With an argument the planted bound is used; without, the correct one.
#include <cuda_runtime.h>

#include <cstdio>

__global__ void fill_index(float* out, int n, int planted) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (planted ? i <= n : i < n) out[i] = (float)i;  // PLANT
}

int main(int argc, char** argv) {
    (void)argv;
    int n = 100, planted = argc > 1 ? 1 : 0;
    float* out;
    if (cudaMalloc(&out, n * sizeof(float)) != cudaSuccess) return 1;
    cudaFuncAttributes fa;  // a typed call: registers the kernel for the launch by address below
    if (cudaFuncGetAttributes(&fa, fill_index) != cudaSuccess) return 1;
    void* args[] = {&out, &n, &planted};
    cudaKernelNodeParams p = {};
    p.func = (void*)fill_index;
    p.gridDim = dim3(2);
    p.blockDim = dim3(64);
    p.kernelParams = args;
    cudaGraph_t g;
    cudaGraphNode_t node;
    cudaGraphExec_t exec;
    if (cudaGraphCreate(&g, 0) != cudaSuccess) return 1;
    if (cudaGraphAddKernelNode(&node, g, nullptr, 0, &p) != cudaSuccess) return 1;  // NODE
    if (cudaGraphInstantiate(&exec, g, 0) != cudaSuccess) return 1;
    cudaError_t launched = cudaGraphLaunch(exec, 0);
    cudaError_t synced = cudaDeviceSynchronize();
    float last = -1.0f;
    cudaMemcpy(&last, out + n - 1, sizeof last, cudaMemcpyDeviceToHost);
    std::printf("launch=%s sync=%s last=%g\n", cudaGetErrorName(launched), cudaGetErrorName(synced), last);
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(g);
    cudaFree(out);
    return synced == cudaSuccess ? 0 : 3;
}
