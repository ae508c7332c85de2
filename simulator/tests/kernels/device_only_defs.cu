// Definitions that exist only in the device pass (inside #if __CUDA_ARCH__), as in NVIDIA's
// warpAggregatedAtomicsCG sample: the kernels call them, so the build must carry them over.
#include <cuda_runtime.h>
#include <cstdio>

#if __CUDA_ARCH__ >= 700
struct Scale {
    int factor;
    static constexpr int offset = 5;
};

__device__ int scaled(Scale s, int x) { return s.factor * x + Scale::offset; }

template <typename T>
__device__ T twice(T v) {
    return v + v;
}
#endif

// A __host__ __device__ function whose body differs by pass.
__host__ __device__ int which_side() {
#ifdef __CUDA_ARCH__
    return 7;
#else
    return 3;
#endif
}

__global__ void use_device_only(int* out) {
    int i = threadIdx.x;
#if __CUDA_ARCH__ >= 700
    Scale s{i};
    out[i] = scaled(s, 10) + twice(i);
#else
    out[i] = -1;
#endif
    out[4 + i] = which_side();
}

int main() {
    int* d;
    int h[8] = {0};
    cudaMalloc(&d, sizeof h);
    use_device_only<<<1, 4>>>(d);
    cudaError_t err = cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    cudaFree(d);
    std::printf("err=%d\n", (int)err);
    for (int i = 0; i < 8; ++i) std::printf("out[%d]=%d\n", i, h[i]);
    std::printf("host_side=%d\n", which_side());
    return 0;
}
