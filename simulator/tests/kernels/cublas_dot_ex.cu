// cublasDotEx (HeCBench's dp): float and double dot products of strided vectors in device memory,
// the result written to device memory (CUBLAS_POINTER_MODE_DEVICE), and a call mixing half and
// float operands, a combination cuBLAS does not support.
#include <cstdio>
#include <cublas_v2.h>
#include <cuda_fp16.h>

constexpr int N = 37;  // elements used; the vectors are read with a stride of 2

template <class T>
static int run(cublasHandle_t h, cudaDataType type, const char* name) {
    T hx[2 * N], hy[2 * N];
    for (int i = 0; i < 2 * N; ++i) {
        hx[i] = (T)((i * 7 % 13) - 6) / (T)3;
        hy[i] = (T)((i * 5 % 11) - 5) / (T)7;
    }
    T *dx, *dy, *dr;
    cudaMalloc(&dx, sizeof hx);
    cudaMalloc(&dy, sizeof hy);
    cudaMalloc(&dr, sizeof(T));
    cudaMemcpy(dx, hx, sizeof hx, cudaMemcpyHostToDevice);
    cudaMemcpy(dy, hy, sizeof hy, cudaMemcpyHostToDevice);
    int status = (int)cublasDotEx(h, N, dx, type, 2, dy, type, 2, dr, type, type);
    T r = 0;
    cudaMemcpy(&r, dr, sizeof r, cudaMemcpyDeviceToHost);
    printf("%s=%d %.17g\n", name, status, (double)r);
    cudaFree(dx);
    cudaFree(dy);
    cudaFree(dr);
    return status;
}

int main() {
    cublasHandle_t h;
    cublasCreate(&h);
    cublasSetPointerMode(h, CUBLAS_POINTER_MODE_DEVICE);
    run<float>(h, CUDA_R_32F, "dot32");
    run<double>(h, CUDA_R_64F, "dot64");
    __half hx[4] = {}, r;
    float fy[4] = {};
    printf("dot16=%d\n", (int)cublasDotEx(h, 4, hx, CUDA_R_16F, 1, fy, CUDA_R_32F, 1, &r, CUDA_R_16F, CUDA_R_32F));
    printf("dot_null=%d\n", (int)cublasDotEx(h, 4, hx, CUDA_R_32F, 1, fy, CUDA_R_32F, 1, nullptr, CUDA_R_32F,
                                             CUDA_R_32F));
    cublasDestroy(h);
    return 0;
}
