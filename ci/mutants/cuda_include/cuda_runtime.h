// What the mutation tool's parser needs to read torchlight's kernels with libclang in CUDA mode
// without a CUDA installation (-nocudainc). It only lets the syntax tree come out whole, so that
// mutation sites can be found: nothing built or run ever includes it. The real headers (the
// toolkit's for nvcc, the simulator's for the CPU build) are what the kernels are compiled with.
#pragma once
#include <stddef.h>

#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __host__ __attribute__((host))
#define __shared__ __attribute__((shared))
#define __forceinline__ __inline__ __attribute__((always_inline))

struct uint3 {
    unsigned int x, y, z;
};
struct dim3 {
    unsigned int x, y, z;
    __host__ __device__ dim3(unsigned int a = 1, unsigned int b = 1, unsigned int c = 1) : x(a), y(b), z(c) {}
};
extern const __device__ uint3 threadIdx;
extern const __device__ uint3 blockIdx;
extern const __device__ dim3 blockDim;
extern const __device__ dim3 gridDim;
extern const __device__ int warpSize;

typedef struct CUstream_st* cudaStream_t;
typedef enum cudaError { cudaSuccess = 0, cudaErrorInvalidValue = 1 } cudaError_t;
enum cudaMemcpyKind {
    cudaMemcpyHostToHost = 0,
    cudaMemcpyHostToDevice = 1,
    cudaMemcpyDeviceToHost = 2,
    cudaMemcpyDeviceToDevice = 3,
    cudaMemcpyDefault = 4
};
extern "C" unsigned __cudaPushCallConfiguration(dim3 grid, dim3 block, size_t shared = 0, cudaStream_t s = 0);
// What a launch calls when clang finds no CUDA installation to take the version from (it then
// assumes a release before 9.2, whose launches call cudaConfigureCall).
extern "C" cudaError_t cudaConfigureCall(dim3 grid, dim3 block, size_t shared = 0, cudaStream_t s = 0);
cudaError_t cudaMalloc(void** ptr, size_t bytes);
cudaError_t cudaFree(void* ptr);
cudaError_t cudaMemcpy(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind);
cudaError_t cudaGetLastError(void);
cudaError_t cudaPeekAtLastError(void);
cudaError_t cudaDeviceSynchronize(void);

__device__ float __shfl_xor_sync(unsigned int mask, float v, int lane_mask, int width = 32);
__device__ float __shfl_down_sync(unsigned int mask, float v, unsigned int delta, int width = 32);
__device__ float __shfl_up_sync(unsigned int mask, float v, unsigned int delta, int width = 32);
__device__ float __shfl_sync(unsigned int mask, float v, int lane, int width = 32);
__device__ float expf(float x);
__device__ float fmaxf(float a, float b);
__device__ float rsqrtf(float x);
__device__ float sqrtf(float x);
