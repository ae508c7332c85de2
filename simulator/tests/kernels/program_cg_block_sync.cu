// Cooperative groups' barrier of the whole block (`cta.sync()`, `cg::sync(cta)`,
// `cg::this_thread_block().sync()`) is __syncthreads(): such kernels run as block loops in a fast
// build. Each kernel reverses a block's values through shared memory and sums them in a tree. The
// argument "oob" plants a bug, a read past the shared tile after the barrier (memcheck), and a
// second argument runs only the kernel of that name. Prints the results.
#include <cooperative_groups.h>
#include <cstdio>
#include <cstring>

namespace cg = cooperative_groups;
constexpr int kThreads = 128;

__global__ void by_member(const int* in, int* out, int past) {
    cg::thread_block cta = cg::this_thread_block();
    __shared__ int s[kThreads];
    const int t = threadIdx.x;
    s[t] = in[blockIdx.x * kThreads + t];
    cta.sync();
    const int mirrored = s[kThreads - 1 - t + past];  // PLANT-OOB-MEMBER
    cta.sync();
    s[t] = mirrored;
    cta.sync();
    for (int stride = kThreads / 2; stride > 0; stride /= 2) {
        if (t < stride) s[t] += s[t + stride];
        cta.sync();
    }
    out[blockIdx.x * kThreads + t] = mirrored * 1000 + s[0] % 1000;
}

__global__ void by_function(const int* in, int* out, int past) {
    cg::thread_block cta = cg::this_thread_block();
    __shared__ int s[kThreads];
    const int t = threadIdx.x;
    s[t] = in[blockIdx.x * kThreads + t];
    cg::sync(cta);
    const int mirrored = s[kThreads - 1 - t + past];  // PLANT-OOB-FUNCTION
    cg::sync(cta);
    s[t] = mirrored;
    cg::sync(cta);
    for (int stride = kThreads / 2; stride > 0; stride /= 2) {
        if (t < stride) s[t] += s[t + stride];
        cg::sync(cta);
    }
    out[blockIdx.x * kThreads + t] = mirrored * 1000 + s[0] % 1000;
}

__global__ void by_temporary(const int* in, int* out, int past) {
    __shared__ int s[kThreads];
    const int t = threadIdx.x;
    s[t] = in[blockIdx.x * kThreads + t];
    cg::this_thread_block().sync();
    const int mirrored = s[kThreads - 1 - t + past];  // PLANT-OOB-TEMPORARY
    cg::this_thread_block().sync();
    s[t] = mirrored;
    cg::this_thread_block().sync();
    for (int stride = kThreads / 2; stride > 0; stride /= 2) {
        if (t < stride) s[t] += s[t + stride];
        cg::this_thread_block().sync();
    }
    out[blockIdx.x * kThreads + t] = mirrored * 1000 + s[0] % 1000;
}

int main(int argc, char** argv) {
    const char* arg = argc > 1 ? argv[1] : "";
    const int past = std::strcmp(arg, "oob") == 0 ? kThreads : 0;
    const int blocks = 3, n = blocks * kThreads;
    static int h_in[n], h_out[n];
    for (int i = 0; i < n; ++i) h_in[i] = (i * 37) % 101 - 50;
    int *d_in, *d_out;
    cudaMalloc(&d_in, sizeof h_in);
    cudaMalloc(&d_out, sizeof h_out);
    cudaMemcpy(d_in, h_in, sizeof h_in, cudaMemcpyHostToDevice);
    const char* names[] = {"member", "function", "temporary"};
    for (int k = 0; k < 3; ++k) {
        if (argc > 2 && std::strcmp(argv[2], names[k]) != 0) continue;
        cudaMemset(d_out, 0, sizeof h_out);
        if (k == 0) by_member<<<blocks, kThreads>>>(d_in, d_out, past);
        if (k == 1) by_function<<<blocks, kThreads>>>(d_in, d_out, past);
        if (k == 2) by_temporary<<<blocks, kThreads>>>(d_in, d_out, past);
        cudaError_t status = cudaDeviceSynchronize();
        cudaMemcpy(h_out, d_out, sizeof h_out, cudaMemcpyDeviceToHost);
        std::printf("%s %s", names[k], cudaGetErrorName(status));
        for (int i = 0; i < n; ++i) std::printf(" %d", h_out[i]);
        std::printf("\n");
    }
    return 0;
}
