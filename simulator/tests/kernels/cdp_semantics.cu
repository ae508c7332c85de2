// Dynamic parallelism semantics: what a device-side launch sees and returns. Prints key=value
// lines; the test states what CUDA 12/13 documents for each.
#include <cuda_runtime.h>
#include <cstdio>

__device__ int g_order[8];
__device__ int g_next;

__global__ void record(int slot) { g_order[slot] = atomicAdd(&g_next, 1); }

// Tail launch first, then a default-stream and a fire-and-forget child: the tail runs last.
__global__ void launch_order() {
    record<<<1, 1, 0, cudaStreamTailLaunch>>>(0);
    record<<<1, 1>>>(1);
    record<<<1, 1, 0, cudaStreamFireAndForget>>>(2);
}

// Arguments are converted and copied at the launch: later changes of the variable do not reach
// the child, and a double argument arrives as the float parameter.
__global__ void take(int v, float f, int* out) {
    out[0] = v;
    out[1] = (int)(f * 4.0f);
}
__global__ void convert_at_launch(int* out) {
    int v = 5;
    take<<<1, 1>>>(v, 2.75, out);
    v = 99;
    out[2] = v;
}

// Nesting: each grid launches the next level and records the launch's error for its depth.
__global__ void nest(int depth, int* err) {
    nest<<<1, 1>>>(depth + 1, err);
    err[depth] = (int)cudaGetLastError();
}

// A launch error is the launching thread's own: thread 0 launches with 2048 threads per block.
__global__ void child_noop() {}
__global__ void bad_config(int* err) {
    if (threadIdx.x == 0) child_noop<<<1, 2048>>>();
    __syncthreads();
    err[threadIdx.x] = (int)cudaPeekAtLastError();
    __syncthreads();
    err[2 + threadIdx.x] = (int)cudaGetLastError();
    err[4 + threadIdx.x] = (int)cudaGetLastError();  // cleared by the read before
}

// A child with dynamic shared memory and barriers; grandchildren write the results.
__global__ void grandchild(int* out, int i, int v) { out[i] = v; }
__global__ void shared_child(int* out) {
    extern __shared__ int buf[];
    buf[threadIdx.x] = (int)threadIdx.x + 1;
    __syncthreads();
    if (threadIdx.x == 0) {
        int s = 0;
        for (int i = 0; i < (int)blockDim.x; ++i) s += buf[i];
        grandchild<<<1, 1>>>(out, 0, s);
    }
}
__global__ void shared_parent(int* out) { shared_child<<<1, 32, 32 * sizeof(int)>>>(out); }

// A copy issued after a child launch in the same stream runs after the child.
__global__ void write_seven(int* p) { *p = 7; }
__global__ void copy_after_child(int* src, int* dst) {
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    write_seven<<<1, 1, 0, s>>>(src);
    cudaMemcpyAsync(dst, src, sizeof(int), cudaMemcpyDeviceToDevice, s);
    cudaStreamDestroy(s);
}

// The device runtime queries and device heap.
__global__ void queries(int* out) {
    int dev = -1, threads = 0;
    out[0] = (int)cudaGetDevice(&dev);
    out[1] = dev;
    out[2] = (int)cudaDeviceGetAttribute(&threads, cudaDevAttrMaxThreadsPerBlock, dev);
    out[3] = threads;
    int* p = (int*)malloc(4 * sizeof(int));
    p[3] = 42;
    out[4] = p[3];
    free(p);
    int* q = nullptr;
    out[5] = (int)cudaMalloc((void**)&q, 2 * sizeof(int));
    q[1] = 17;
    out[6] = q[1];
    out[7] = (int)cudaFree(q);
}

int main() {
    int* d = nullptr;
    cudaMalloc(&d, 64 * sizeof(int));
    int h[64];

    std::printf("set_limit=%d\n", (int)cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, 4096));

    launch_order<<<1, 1>>>();
    cudaDeviceSynchronize();
    int order[3];
    cudaMemcpyFromSymbol(order, g_order, sizeof order);
    std::printf("tail=%d\ndefault=%d\nfire_and_forget=%d\n", order[0], order[1], order[2]);

    convert_at_launch<<<1, 1>>>(d);
    cudaDeviceSynchronize();
    cudaMemcpy(h, d, 3 * sizeof(int), cudaMemcpyDeviceToHost);
    std::printf("arg_int=%d\narg_float_x4=%d\nparent_after=%d\n", h[0], h[1], h[2]);

    cudaMemset(d, 0xff, 64 * sizeof(int));
    nest<<<1, 1>>>(0, d);
    std::printf("nest_status=%d\n", (int)cudaDeviceSynchronize());
    cudaMemcpy(h, d, 30 * sizeof(int), cudaMemcpyDeviceToHost);
    int deepest_ok = -1;
    while (deepest_ok + 1 < 30 && h[deepest_ok + 1] == 0) ++deepest_ok;
    std::printf("deepest_ok_launcher=%d\ndepth_error=%d\nbeyond=%d\n", deepest_ok, h[deepest_ok + 1],
                h[deepest_ok + 2]);

    bad_config<<<1, 2>>>(d);
    std::printf("bad_config_status=%d\n", (int)cudaDeviceSynchronize());
    cudaMemcpy(h, d, 6 * sizeof(int), cudaMemcpyDeviceToHost);
    std::printf("peek0=%d\npeek1=%d\nget0=%d\nget1=%d\nagain0=%d\n", h[0], h[1], h[2], h[3], h[4]);

    shared_parent<<<1, 1>>>(d);
    cudaDeviceSynchronize();
    cudaMemcpy(h, d, sizeof(int), cudaMemcpyDeviceToHost);
    std::printf("shared_sum=%d\n", h[0]);

    cudaMemset(d, 0, 64 * sizeof(int));
    copy_after_child<<<1, 1>>>(d, d + 1);
    cudaDeviceSynchronize();
    cudaMemcpy(h, d, 2 * sizeof(int), cudaMemcpyDeviceToHost);
    std::printf("copied=%d\n", h[1]);

    queries<<<1, 1>>>(d);
    cudaDeviceSynchronize();
    cudaMemcpy(h, d, 8 * sizeof(int), cudaMemcpyDeviceToHost);
    std::printf("get_device=%d\ndevice=%d\nattr_status=%d\nmax_threads=%d\nheap=%d\n", h[0], h[1], h[2], h[3],
                h[4]);
    std::printf("malloc_status=%d\nmalloc_value=%d\nfree_status=%d\n", h[5], h[6], h[7]);
    std::printf("last=%d\n", (int)cudaGetLastError());
    cudaFree(d);
    return 0;
}
