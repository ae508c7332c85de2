// Front-end conformance: kernel launches from device code (dynamic parallelism, CDP2), in every
// way of naming the launched kernel that nvcc accepts (nvcc needs -rdc=true for them).
#include <cuda_runtime.h>
#include <cstdio>

#include "conformance_check.h"

template <int N>
__global__ void put(int* out) { out[threadIdx.x] = N; }

template <class T>
__global__ void scale(T* out, T factor, int n = 2) {
    if ((int)threadIdx.x < n) out[threadIdx.x] *= factor;
}

namespace ns {
__global__ void fill(int* out, int v) { out[threadIdx.x] = v; }
}  // namespace ns

__global__ void over(int* out) { out[0] = 11; }
__global__ void over(float* out) { out[0] = 2.5f; }

__global__ void add(int* out, int v) { out[threadIdx.x] += v; }
__global__ void sub(int* out, int v) { out[threadIdx.x] -= v; }

__global__ void later(int* out);  // declared before it is defined

// Declared (as in a header) with other parameters than the definition has: two overloads in C++,
// and the launch picks the defined one (NVIDIA's cdpAdvancedQuicksort does this).
__global__ void twin(int* out);
__global__ void twin(int* out, int v) { out[0] = v; }

#define LAUNCH_ONE(k, ...) k<<<1, 1>>>(__VA_ARGS__)

// Launched from a __device__ helper and from a __host__ __device__ function run on the device.
__device__ void from_helper(int* out) { ns::fill<<<dim3(1), dim3(2), 0, cudaStreamFireAndForget>>>(out, 8); }
__host__ __device__ void from_both(int* out) { put<9><<<1, 1>>>(out); }

__global__ void parent(int* i, float* f, int which) {
    put<3><<<1, 2>>>(i);                          // template, explicit argument
    scale<<<1, 2>>>(i + 2, 4);                     // deduced template; default argument n
    ns::fill<<<1, 2, 0, 0>>>(i + 4, 7);            // qualified name, smem and stream given
    over<<<1, 1>>>(f);                             // overload set
    void (*fp)(int*, int) = which ? add : sub;     // through a pointer
    fp<<<1, 2>>>(i + 6, 5);
    (which ? add : sub)<<<1, 2>>>(i + 8, 1);       // a conditional expression
    later<<<1, 1>>>(i + 10);
    LAUNCH_ONE(put<4>, i + 11);                    // written in a macro
    from_helper(i + 12);
    from_both(i + 14);
    twin<<<1, 1>>>(i + 16, 12);
}

__global__ void later(int* out) { out[0] = 21; }

int main() {
    int* i = nullptr;
    float* f = nullptr;
    cudaMalloc(&i, 20 * sizeof(int));
    cudaMalloc(&f, sizeof(float));
    int init[20];
    for (int k = 0; k < 20; ++k) init[k] = 1;
    cudaMemcpy(i, init, sizeof init, cudaMemcpyHostToDevice);
    parent<<<1, 1>>>(i, f, 1);
    CHECK(cudaDeviceSynchronize() == cudaSuccess);
    int h[20];
    float hf = 0.0f;
    cudaMemcpy(h, i, sizeof h, cudaMemcpyDeviceToHost);
    cudaMemcpy(&hf, f, sizeof hf, cudaMemcpyDeviceToHost);
    CHECK(h[0] == 3 && h[1] == 3);
    CHECK(h[2] == 4 && h[3] == 4);
    CHECK(h[4] == 7 && h[5] == 7);
    CHECK(hf == 2.5f);
    CHECK(h[6] == 6 && h[7] == 6);
    CHECK(h[8] == 2 && h[9] == 2);
    CHECK(h[10] == 21);
    CHECK(h[11] == 4);
    CHECK(h[12] == 8 && h[13] == 8);
    CHECK(h[14] == 9);
    CHECK(h[16] == 12);
    twin<<<1, 1>>>(i + 17, 13);  // the same from the host
    // The same __host__ __device__ function launches from the host too.
    from_both(i + 15);
    cudaMemcpy(h, i, sizeof h, cudaMemcpyDeviceToHost);
    CHECK(h[15] == 9);
    CHECK(h[17] == 13);
    cudaFree(i);
    cudaFree(f);
    std::printf("device_launches: OK\n");
    return 0;
}
