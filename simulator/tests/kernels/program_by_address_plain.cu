// Launches through a pointer and by address run as <<<>>> launches by name do
// (test_plain_loop.py): a barrier-free kernel as a plain loop, whose threads run one after
// another in one stack frame, and a kernel with a barrier on fibers, one stack per thread. Each
// kernel writes where its threads' local variable lives; the program prints, per launch form,
// whether threads 0 and 1 shared it. Instances of kernel templates that host code only passes
// by address (never launched by name, which would register them too) come last, named with
// their arguments in main and, dependent on a template parameter, in a host function template.
#include <cstdint>
#include <cstdio>
#include <cuda_runtime.h>

__global__ void free_kernel(unsigned long long* out) {
    volatile int local = (int)threadIdx.x;
    out[threadIdx.x] = (unsigned long long)(uintptr_t)&local;
}

__global__ void barrier_kernel(unsigned long long* out) {
    volatile int local = (int)threadIdx.x;
    __syncthreads();
    out[threadIdx.x] = (unsigned long long)(uintptr_t)&local;
}

template <class T>
__global__ void free_template(unsigned long long* out) {
    volatile T local = (T)threadIdx.x;
    out[threadIdx.x] = (unsigned long long)(uintptr_t)&local;
}

template <class T>
__global__ void barrier_template(unsigned long long* out) {
    volatile T local = (T)threadIdx.x;
    __syncthreads();
    out[threadIdx.x] = (unsigned long long)(uintptr_t)&local;
}

static int shared_frame(unsigned long long* d) {
    unsigned long long h[2] = {0, 0};
    if (cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost) != cudaSuccess) return -1;
    return h[0] == h[1] ? 1 : 0;
}

static void report(const char* name, int by_name, void (*kernel)(unsigned long long*), unsigned long long* d) {
    kernel<<<1, 2>>>(d);
    const int by_pointer = shared_frame(d);
    void* args[1] = {&d};
    cudaLaunchKernel((const void*)kernel, dim3(1), dim3(2), args, 0, 0);
    const int by_address = shared_frame(d);
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    cudaGraphNode_t node;
    cudaKernelNodeParams p = {};
    p.func = (void*)kernel;
    p.gridDim = dim3(1);
    p.blockDim = dim3(2);
    p.kernelParams = args;
    cudaGraphCreate(&graph, 0);
    cudaGraphAddKernelNode(&node, graph, nullptr, 0, &p);
    cudaGraphInstantiate(&exec, graph, nullptr, nullptr, 0);
    cudaGraphLaunch(exec, 0);
    cudaStreamSynchronize(0);
    const int by_node = shared_frame(d);
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    std::printf("%s name=%d pointer=%d address=%d node=%d\n", name, by_name, by_pointer, by_address, by_node);
}

// cudaLaunchKernel of ``kernel`` (1 block of 2 threads), then whether they shared a frame; -1
// when the launch fails (an instance the runtime does not know).
static int by_address(const void* kernel, unsigned long long* d) {
    void* args[1] = {&d};
    if (cudaLaunchKernel(kernel, dim3(1), dim3(2), args, 0, 0) != cudaSuccess) return -1;
    return shared_frame(d);
}

template <class T>
static int in_template(unsigned long long* d) {
    return by_address((const void*)free_template<T>, d);
}

int main() {
    unsigned long long* d = nullptr;
    if (cudaMalloc(&d, 2 * sizeof(unsigned long long)) != cudaSuccess) return 1;
    free_kernel<<<1, 2>>>(d);
    report("free", shared_frame(d), free_kernel, d);
    barrier_kernel<<<1, 2>>>(d);
    report("barrier", shared_frame(d), barrier_kernel, d);
    using FreeInt = decltype(&free_template<int>);  // the name keeps its type where it is not evaluated
    const FreeInt free_int = free_template<int>;
    const int t_free = by_address((const void*)free_int, d);
    const int t_barrier = by_address((const void*)&barrier_template<int>, d);
    std::printf("template free=%d barrier=%d in_template=%d\n", t_free, t_barrier, in_template<long>(d));
    cudaFree(d);
    return cudaGetLastError() == cudaSuccess ? 0 : 2;
}
