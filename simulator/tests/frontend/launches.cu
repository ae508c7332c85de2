// Front-end conformance: every way of naming a launched kernel that nvcc accepts.
#include <cuda_runtime.h>
#include <cstdio>

#include "conformance_check.h"

template <int N>
__global__ void put(int* out) { out[threadIdx.x] = N; }

template <bool B>
__global__ void flag(int* out) { out[threadIdx.x] = B ? 1 : 0; }

template <class T>
struct Box { T v; };

template <class T, int N>
__global__ void put_box(Box<Box<T>> b, T* out) { out[threadIdx.x] = b.v.v + T(N); }

template <class T>
__global__ void scale(T* out, T factor, int n = 4) {
    if ((int)threadIdx.x < n) out[threadIdx.x] *= factor;
}

__global__ void later(int* out);  // declared before it is defined

namespace ns {
namespace inner {
__global__ void fill(int* out, int v) { out[threadIdx.x] = v; }
}  // namespace inner
}  // namespace ns

// Overloaded kernels: the argument types pick one, as in a call.
__global__ void over(int* out) { out[threadIdx.x] = 11; }
__global__ void over(float* out) { out[threadIdx.x] = 2.5f; }

__global__ void add(int* out, int v) { out[threadIdx.x] += v; }
__global__ void sub(int* out, int v) { out[threadIdx.x] -= v; }

template <class Kernel>
void run_kernel(Kernel kernel, int* out, int v) { kernel<<<1, 4>>>(out, v); }

template <class T>
void scale_all(T* out, T factor) { scale<<<1, 4>>>(out, factor); }

#define LAUNCH(kernel, ...) kernel<<<1, 4>>>(__VA_ARGS__)
#define GRID 1
#define BLOCK 4

static int read0(const int* d) {
    int h = 0;
    cudaMemcpy(&h, d, sizeof(int), cudaMemcpyDeviceToHost);
    return h;
}

int main() {
    int* d;
    float* f;
    double* g;
    cudaMalloc(&d, 4 * sizeof(int));
    cudaMalloc(&f, 4 * sizeof(float));
    cudaMalloc(&g, 4 * sizeof(double));

    put<(64 >> 1)><<<1, 4>>>(d);
    CHECK(read0(d) == 32);
    put<(3 < 4) + 40><<<1, 4>>>(d);
    CHECK(read0(d) == 41);
    put<2 * 3 + 1><<<GRID, BLOCK>>>(d);
    CHECK(read0(d) == 7);
    flag<(1 > 2)><<<1, 4>>>(d);
    CHECK(read0(d) == 0);

    Box<Box<int>> b{{5}};
    put_box<int, (8 >> 2)><<<1, 4>>>(b, d);
    CHECK(read0(d) == 7);

    LAUNCH(ns::inner::fill, d, 9);
    CHECK(read0(d) == 9);
    LAUNCH(put<3>, d);
    CHECK(read0(d) == 3);

    auto in_lambda = [&](int v) { ns::inner::fill<<<1, 4>>>(d, v); };
    in_lambda(13);
    CHECK(read0(d) == 13);

    void (*fp)(int*, int) = add;
    fp<<<1, 4>>>(d, 2);
    CHECK(read0(d) == 15);
    void (*table[2])(int*, int) = {add, sub};
    for (int i = 0; i < 2; i++) table[i]<<<1, 4>>>(d, 5);
    CHECK(read0(d) == 15);
    (read0(d) > 0 ? add : sub)<<<1, 4>>>(d, 1);
    CHECK(read0(d) == 16);

    run_kernel(add, d, 4);
    CHECK(read0(d) == 20);
    run_kernel(sub, d, 10);
    CHECK(read0(d) == 10);

    over<<<1, 4>>>(d);
    CHECK(read0(d) == 11);
    over<<<1, 4>>>(f);
    float hf = 0;
    cudaMemcpy(&hf, f, sizeof(float), cudaMemcpyDeviceToHost);
    CHECK(hf == 2.5f);

    scale_all(d, 3);          // function template instantiated for int ...
    CHECK(read0(d) == 33);
    scale_all(f, 2.0f);       // ... and for float
    cudaMemcpy(&hf, f, sizeof(float), cudaMemcpyDeviceToHost);
    CHECK(hf == 5.0f);
    cudaMemset(g, 0, 4 * sizeof(double));
    scale<double><<<1, 4>>>(g, 2.0, 2);  // explicit template argument, default argument given
    scale<<<1, 4>>>(d, 2);               // deduced, default argument applies
    CHECK(read0(d) == 66);

    later<<<1, 4>>>(d);
    CHECK(read0(d) == 77);

    add<< <1, 4>>>(d, 1);  // the legacy spelling nvcc accepts
    CHECK(read0(d) == 78);

    cudaStream_t s;
    cudaStreamCreate(&s);
    add<<<dim3(1, 1, 1), dim3(4), 0, s>>>(d, 2);
    cudaStreamSynchronize(s);
    cudaStreamDestroy(s);
    CHECK(read0(d) == 80);
    CHECK(cudaGetLastError() == cudaSuccess);

    cudaFree(d);
    cudaFree(f);
    cudaFree(g);
    std::printf("launches: OK\n");
    return 0;
}

__global__ void later(int* out) { out[threadIdx.x] = 77; }
