// Simulator stand-in for cuBLAS (<cublas_v2.h>, <cublas_api.h>): the handle, stream and mode
// calls and the GEMM family ML code uses, run on the CPU in column-major order as cuBLAS
// defines it (runtime/cublas.cpp). See simulator/docs/supported.md ("NVIDIA libraries") for the subset.
#ifndef CUDA_SIM_CUBLAS_API_H
#define CUDA_SIM_CUBLAS_API_H

#include "../cuda_sim.h"
#include "cuda_bf16.h"
#include "cuda_fp16.h"
#include "library_types.h"

#define CUBLAS_VER_MAJOR 13
#define CUBLAS_VER_MINOR 0
#define CUBLAS_VER_PATCH 2
#define CUBLAS_VERSION (CUBLAS_VER_MAJOR * 10000 + CUBLAS_VER_MINOR * 100 + CUBLAS_VER_PATCH)

typedef enum {
    CUBLAS_STATUS_SUCCESS = 0,
    CUBLAS_STATUS_NOT_INITIALIZED = 1,
    CUBLAS_STATUS_ALLOC_FAILED = 3,
    CUBLAS_STATUS_INVALID_VALUE = 7,
    CUBLAS_STATUS_ARCH_MISMATCH = 8,
    CUBLAS_STATUS_MAPPING_ERROR = 11,
    CUBLAS_STATUS_EXECUTION_FAILED = 13,
    CUBLAS_STATUS_INTERNAL_ERROR = 14,
    CUBLAS_STATUS_NOT_SUPPORTED = 15,
    CUBLAS_STATUS_LICENSE_ERROR = 16,
} cublasStatus_t;

typedef enum { CUBLAS_OP_N = 0, CUBLAS_OP_T = 1, CUBLAS_OP_C = 2, CUBLAS_OP_CONJG = 3 } cublasOperation_t;
typedef enum { CUBLAS_POINTER_MODE_HOST = 0, CUBLAS_POINTER_MODE_DEVICE = 1 } cublasPointerMode_t;
typedef enum { CUBLAS_ATOMICS_NOT_ALLOWED = 0, CUBLAS_ATOMICS_ALLOWED = 1 } cublasAtomicsMode_t;
typedef enum {
    CUBLAS_DEFAULT_MATH = 0,
    CUBLAS_TENSOR_OP_MATH = 1,
    CUBLAS_PEDANTIC_MATH = 2,
    CUBLAS_TF32_TENSOR_OP_MATH = 3,
    CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION = 16,
} cublasMath_t;
typedef enum {
    CUBLAS_COMPUTE_16F = 64,
    CUBLAS_COMPUTE_16F_PEDANTIC = 65,
    CUBLAS_COMPUTE_32F = 68,
    CUBLAS_COMPUTE_32F_PEDANTIC = 69,
    CUBLAS_COMPUTE_32F_FAST_16F = 74,
    CUBLAS_COMPUTE_32F_FAST_16BF = 75,
    CUBLAS_COMPUTE_32F_FAST_TF32 = 77,
    CUBLAS_COMPUTE_64F = 70,
    CUBLAS_COMPUTE_64F_PEDANTIC = 71,
    CUBLAS_COMPUTE_32I = 72,
    CUBLAS_COMPUTE_32I_PEDANTIC = 73,
} cublasComputeType_t;
typedef enum {
    CUBLAS_GEMM_DEFAULT = -1,
    CUBLAS_GEMM_DFALT = -1,
    CUBLAS_GEMM_ALGO0 = 0,
    CUBLAS_GEMM_ALGO23 = 23,
    CUBLAS_GEMM_DEFAULT_TENSOR_OP = 99,
    CUBLAS_GEMM_DFALT_TENSOR_OP = 99,
    CUBLAS_GEMM_ALGO0_TENSOR_OP = 100,
    CUBLAS_GEMM_ALGO15_TENSOR_OP = 115,
} cublasGemmAlgo_t;
typedef cudaDataType cublasDataType_t;

struct cublasContext;
typedef struct cublasContext* cublasHandle_t;

extern "C" {
SIM_API cublasStatus_t cublasCreate_v2(cublasHandle_t* handle);
SIM_API cublasStatus_t cublasDestroy_v2(cublasHandle_t handle);
SIM_API cublasStatus_t cublasGetVersion_v2(cublasHandle_t handle, int* version);
SIM_API cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream);
SIM_API cublasStatus_t cublasGetStream_v2(cublasHandle_t handle, cudaStream_t* stream);
SIM_API cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode);
SIM_API cublasStatus_t cublasGetMathMode(cublasHandle_t handle, cublasMath_t* mode);
SIM_API cublasStatus_t cublasSetPointerMode_v2(cublasHandle_t handle, cublasPointerMode_t mode);
SIM_API cublasStatus_t cublasGetPointerMode_v2(cublasHandle_t handle, cublasPointerMode_t* mode);
SIM_API cublasStatus_t cublasSetAtomicsMode(cublasHandle_t handle, cublasAtomicsMode_t mode);
SIM_API cublasStatus_t cublasSetWorkspace_v2(cublasHandle_t handle, void* workspace, size_t bytes);
SIM_API const char* cublasGetStatusName(cublasStatus_t status);
SIM_API const char* cublasGetStatusString(cublasStatus_t status);

SIM_API cublasStatus_t cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                      int m, int n, int k, const float* alpha, const float* A, int lda,
                                      const float* B, int ldb, const float* beta, float* C, int ldc);
SIM_API cublasStatus_t cublasDgemm_v2(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                      int m, int n, int k, const double* alpha, const double* A, int lda,
                                      const double* B, int ldb, const double* beta, double* C, int ldc);
SIM_API cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa,
                                                 cublasOperation_t transb, int m, int n, int k, const float* alpha,
                                                 const float* A, int lda, long long strideA, const float* B, int ldb,
                                                 long long strideB, const float* beta, float* C, int ldc,
                                                 long long strideC, int batch_count);
SIM_API cublasStatus_t cublasDgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa,
                                                 cublasOperation_t transb, int m, int n, int k, const double* alpha,
                                                 const double* A, int lda, long long strideA, const double* B,
                                                 int ldb, long long strideB, const double* beta, double* C, int ldc,
                                                 long long strideC, int batch_count);
SIM_API cublasStatus_t cublasSgemmBatched(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                          int m, int n, int k, const float* alpha, const float* const A[], int lda,
                                          const float* const B[], int ldb, const float* beta, float* const C[],
                                          int ldc, int batch_count);
SIM_API cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m,
                                    int n, int k, const void* alpha, const void* A, cudaDataType Atype, int lda,
                                    const void* B, cudaDataType Btype, int ldb, const void* beta, void* C,
                                    cudaDataType Ctype, int ldc, cublasComputeType_t computeType,
                                    cublasGemmAlgo_t algo);
SIM_API cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t handle, cublasOperation_t transa,
                                                  cublasOperation_t transb, int m, int n, int k, const void* alpha,
                                                  const void* A, cudaDataType Atype, int lda, long long strideA,
                                                  const void* B, cudaDataType Btype, int ldb, long long strideB,
                                                  const void* beta, void* C, cudaDataType Ctype, int ldc,
                                                  long long strideC, int batch_count,
                                                  cublasComputeType_t computeType, cublasGemmAlgo_t algo);
SIM_API cublasStatus_t cublasSgemv_v2(cublasHandle_t handle, cublasOperation_t trans, int m, int n,
                                      const float* alpha, const float* A, int lda, const float* x, int incx,
                                      const float* beta, float* y, int incy);
SIM_API cublasStatus_t cublasSaxpy_v2(cublasHandle_t handle, int n, const float* alpha, const float* x, int incx,
                                      float* y, int incy);
SIM_API cublasStatus_t cublasSscal_v2(cublasHandle_t handle, int n, const float* alpha, float* x, int incx);
SIM_API cublasStatus_t cublasSdot_v2(cublasHandle_t handle, int n, const float* x, int incx, const float* y,
                                     int incy, float* result);
SIM_API cublasStatus_t cublasSnrm2_v2(cublasHandle_t handle, int n, const float* x, int incx, float* result);
SIM_API cublasStatus_t cublasSasum_v2(cublasHandle_t handle, int n, const float* x, int incx, float* result);
SIM_API cublasStatus_t cublasScopy_v2(cublasHandle_t handle, int n, const float* x, int incx, float* y, int incy);
SIM_API cublasStatus_t cublasIsamax_v2(cublasHandle_t handle, int n, const float* x, int incx, int* result);
SIM_API cublasStatus_t cublasSgeam(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m,
                                   int n, const float* alpha, const float* A, int lda, const float* beta,
                                   const float* B, int ldb, float* C, int ldc);
SIM_API cublasStatus_t cublasSetMatrix(int rows, int cols, int elem_size, const void* A, int lda, void* B, int ldb);
SIM_API cublasStatus_t cublasGetMatrix(int rows, int cols, int elem_size, const void* A, int lda, void* B, int ldb);
SIM_API cublasStatus_t cublasSetVector(int n, int elem_size, const void* x, int incx, void* y, int incy);
SIM_API cublasStatus_t cublasGetVector(int n, int elem_size, const void* x, int incx, void* y, int incy);
}

// Code written before CUDA 11 passes a cudaDataType as the GEMM's compute type; from C++,
// cuBLAS still accepts it and picks the compute type of that precision (the _PEDANTIC one
// under CUBLAS_PEDANTIC_MATH); another data type is CUBLAS_STATUS_NOT_SUPPORTED.
static inline cublasStatus_t cublasMigrateComputeType(cublasHandle_t handle, cudaDataType data_type,
                                                      cublasComputeType_t* compute_type) {
    cublasMath_t mode = CUBLAS_DEFAULT_MATH;
    const cublasStatus_t status = cublasGetMathMode(handle, &mode);
    if (status != CUBLAS_STATUS_SUCCESS) return status;
    const bool pedantic = (mode & 0x3) == CUBLAS_PEDANTIC_MATH;
    switch (data_type) {
        case CUDA_R_16F: *compute_type = pedantic ? CUBLAS_COMPUTE_16F_PEDANTIC : CUBLAS_COMPUTE_16F; break;
        case CUDA_R_32F:
        case CUDA_C_32F: *compute_type = pedantic ? CUBLAS_COMPUTE_32F_PEDANTIC : CUBLAS_COMPUTE_32F; break;
        case CUDA_R_64F:
        case CUDA_C_64F: *compute_type = pedantic ? CUBLAS_COMPUTE_64F_PEDANTIC : CUBLAS_COMPUTE_64F; break;
        case CUDA_R_32I: *compute_type = pedantic ? CUBLAS_COMPUTE_32I_PEDANTIC : CUBLAS_COMPUTE_32I; break;
        default: return CUBLAS_STATUS_NOT_SUPPORTED;
    }
    return CUBLAS_STATUS_SUCCESS;
}
static inline cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                          int m, int n, int k, const void* alpha, const void* A, cudaDataType Atype,
                                          int lda, const void* B, cudaDataType Btype, int ldb, const void* beta,
                                          void* C, cudaDataType Ctype, int ldc, cudaDataType compute_data_type,
                                          cublasGemmAlgo_t algo) {
    cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
    const cublasStatus_t status = cublasMigrateComputeType(handle, compute_data_type, &compute);
    if (status != CUBLAS_STATUS_SUCCESS) return status;
    return cublasGemmEx(handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C, Ctype, ldc,
                        compute, algo);
}
static inline cublasStatus_t cublasGemmStridedBatchedEx(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
    const void* alpha, const void* A, cudaDataType Atype, int lda, long long strideA, const void* B,
    cudaDataType Btype, int ldb, long long strideB, const void* beta, void* C, cudaDataType Ctype, int ldc,
    long long strideC, int batch_count, cudaDataType compute_data_type, cublasGemmAlgo_t algo) {
    cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
    const cublasStatus_t status = cublasMigrateComputeType(handle, compute_data_type, &compute);
    if (status != CUBLAS_STATUS_SUCCESS) return status;
    return cublasGemmStridedBatchedEx(handle, transa, transb, m, n, k, alpha, A, Atype, lda, strideA, B, Btype, ldb,
                                      strideB, beta, C, Ctype, ldc, strideC, batch_count, compute, algo);
}

// The v2 API under its everyday names, as NVIDIA's <cublas_v2.h> maps them.
#define cublasCreate cublasCreate_v2
#define cublasDestroy cublasDestroy_v2
#define cublasGetVersion cublasGetVersion_v2
#define cublasSetStream cublasSetStream_v2
#define cublasGetStream cublasGetStream_v2
#define cublasSetPointerMode cublasSetPointerMode_v2
#define cublasGetPointerMode cublasGetPointerMode_v2
#define cublasSetWorkspace cublasSetWorkspace_v2
#define cublasSgemm cublasSgemm_v2
#define cublasDgemm cublasDgemm_v2
#define cublasSgemv cublasSgemv_v2
#define cublasSaxpy cublasSaxpy_v2
#define cublasSscal cublasSscal_v2
#define cublasSdot cublasSdot_v2
#define cublasSnrm2 cublasSnrm2_v2
#define cublasSasum cublasSasum_v2
#define cublasScopy cublasScopy_v2
#define cublasIsamax cublasIsamax_v2

#endif  // CUDA_SIM_CUBLAS_API_H
