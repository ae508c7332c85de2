// cuBLAS on the CPU: the handle, stream and mode calls and the GEMM family ML code calls,
// column-major as cuBLAS defines it. Device memory is host memory here, so a GEMM is a loop over
// the operands (blas_core.h); a matrix that starts inside a device allocation must lie inside it
// (else the call fails with CUBLAS_STATUS_EXECUTION_FAILED, where a GPU would fault). Messages go
// to stderr as "cuBLAS (simulator): ...".
#include "blas_core.h"
#include "graphs_internal.h"

#include <cmath>
#include <memory>
#include <utility>
#include <vector>

using namespace __sim::blas;

struct cublasContext {
    cudaStream_t stream = nullptr;
    cublasMath_t math = CUBLAS_DEFAULT_MATH;
    cublasPointerMode_t pointer_mode = CUBLAS_POINTER_MODE_HOST;
};

namespace {

// A call made while a stream capture is on becomes a node of the captured graph that makes the
// call again at each replay (the calls below do their work at once otherwise). Checks run at the
// call, as cuBLAS's do.
thread_local bool tl_replaying = false;

template <class F>
bool recorded(cublasHandle_t h, F call) {
    if (tl_replaying) return false;
    return __sim::capture_library_call(h->stream, [call] {
        tl_replaying = true;
        call();
        tl_replaying = false;
    });
}

// A scalar argument: cuBLAS reads a host one during the call, a device one when the work runs.
template <class T>
struct Scalar {
    T value;
    const T* device;
    const T* get() const { return device != nullptr ? device : &value; }
};
template <class T>
Scalar<T> scalar(cublasHandle_t h, const T* p) {
    return h->pointer_mode == CUBLAS_POINTER_MODE_DEVICE ? Scalar<T>{T(), p} : Scalar<T>{*p, nullptr};
}

// Calls that return a result to host memory cannot be replayed from a graph here.
cublasStatus_t refuse_in_capture(cublasHandle_t h, const char* call) {
    if (tl_replaying || !__sim::capturing(h->stream)) return CUBLAS_STATUS_SUCCESS;
    say("%s: a call that returns its result is not supported during stream capture", call);
    return CUBLAS_STATUS_NOT_SUPPORTED;
}

// cuBLAS's argument checks for a GEMM, with the parameter named as cuBLAS numbers it.
cublasStatus_t check_gemm(const char* call, cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m,
                          int n, int k, int lda, int ldb, int ldc, int batch) {
    if (h == nullptr) {
        say("%s: the handle is null (call cublasCreate first)", call);
        return CUBLAS_STATUS_NOT_INITIALIZED;
    }
    const int need_a = ta == CUBLAS_OP_N ? m : k, need_b = tb == CUBLAS_OP_N ? k : n;
    const char* bad = !op_ok(ta) ? "transa" : !op_ok(tb) ? "transb" : m < 0 ? "m" : n < 0 ? "n" : k < 0 ? "k"
                      : lda < (need_a > 1 ? need_a : 1)                         ? "lda"
                      : ldb < (need_b > 1 ? need_b : 1)                         ? "ldb"
                      : ldc < (m > 1 ? m : 1)                                    ? "ldc"
                      : batch < 0                                                ? "batchCount"
                                                                                 : nullptr;
    if (bad != nullptr) {
        say("%s: parameter %s has an illegal value (m=%d n=%d k=%d lda=%d ldb=%d ldc=%d)", call, bad, m, n, k, lda,
            ldb, ldc);
        return CUBLAS_STATUS_INVALID_VALUE;
    }
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t gemm_ex(const char* call, cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                       int k, const void* alpha, const void* A, cudaDataType at, int lda, long long sa,
                       const void* B, cudaDataType bt, int ldb, long long sb, const void* beta, void* C,
                       cudaDataType ct, int ldc, long long sc, int batch, cublasComputeType_t compute) {
    if (cublasStatus_t s = check_gemm(call, h, ta, tb, m, n, k, lda, ldb, ldc, batch)) return s;
    cudaDataType scalar;
    int acc_bits;
    if (!compute_types(compute, &scalar, &acc_bits)) {
        say("%s: compute type %d is not supported", call, (int)compute);
        return CUBLAS_STATUS_NOT_SUPPORTED;
    }
    for (cudaDataType t : {at, bt, ct}) {
        if (type_size(t) == 0 || t == CUDA_R_8U) {
            say("%s: data type %s (%d) is not supported", call, type_name(t), (int)t);
            return CUBLAS_STATUS_NOT_SUPPORTED;
        }
    }
    if (m == 0 || n == 0 || batch == 0) return CUBLAS_STATUS_SUCCESS;
    const Operand a{A, at, ta == CUBLAS_OP_N ? m : k, ta == CUBLAS_OP_N ? k : m, lda, sa};
    const Operand b{B, bt, tb == CUBLAS_OP_N ? k : n, tb == CUBLAS_OP_N ? n : k, ldb, sb};
    const Operand c{C, ct, m, n, ldc, sc};
    if (!inside(call, "A", a, batch) || !inside(call, "B", b, batch) || !inside(call, "C", c, batch))
        return CUBLAS_STATUS_EXECUTION_FAILED;
    if (!tl_replaying && __sim::capturing(h->stream)) {
        // Scalars as cuBLAS reads them: host ones now (copied), device ones at each replay.
        const bool host = h->pointer_mode != CUBLAS_POINTER_MODE_DEVICE;
        const size_t bytes = type_size(scalar);
        auto al = std::make_shared<std::vector<char>>(host ? bytes : 0);
        auto be = std::make_shared<std::vector<char>>(host ? bytes : 0);
        if (host) {
            std::memcpy(al->data(), alpha, bytes);
            std::memcpy(be->data(), beta, bytes);
        }
        const void* alpha_at = host ? al->data() : alpha;
        const void* beta_at = host ? be->data() : beta;
        if (recorded(h, [=] {
                gemm_ex(call, h, ta, tb, m, n, k, alpha_at, A, at, lda, sa, B, bt, ldb, sb, beta_at, C, ct, ldc, sc,
                        batch, compute);
                (void)al, (void)be;  // keep the copies alive with the node
            }))
            return CUBLAS_STATUS_SUCCESS;
    }
    const double al = load(alpha, scalar, 0), be = load(beta, scalar, 0);
    if (acc_bits == 64)
        gemm<double>(ta, tb, m, n, k, al, a, b, be, c, C, ct, ldc, sc, batch, Epilogue{});
    else if (acc_bits < 0)
        gemm<long long>(ta, tb, m, n, k, al, a, b, be, c, C, ct, ldc, sc, batch, Epilogue{});
    else
        gemm<float>(ta, tb, m, n, k, al, a, b, be, c, C, ct, ldc, sc, batch, Epilogue{});
    return CUBLAS_STATUS_SUCCESS;
}

// The pointer-array batched GEMMs: each matrix of the batch is one gemm_ex call; an empty batch
// still has its arguments checked.
template <class T>
cublasStatus_t gemm_pointers(const char* call, cudaDataType type, cublasComputeType_t compute, cublasHandle_t h,
                             cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, const T* alpha,
                             const T* const A[], int lda, const T* const B[], int ldb, const T* beta, T* const C[],
                             int ldc, int batch) {
    if (batch < 0 || (batch > 0 && (A == nullptr || B == nullptr || C == nullptr))) return CUBLAS_STATUS_INVALID_VALUE;
    for (int i = 0; i < batch; ++i) {
        cublasStatus_t s = gemm_ex(call, h, ta, tb, m, n, k, alpha, A[i], type, lda, 0, B[i], type, ldb, 0, beta, C[i],
                                   type, ldc, 0, 1, compute);
        if (s != CUBLAS_STATUS_SUCCESS) return s;
    }
    return batch == 0 ? check_gemm(call, h, ta, tb, m, n, k, lda, ldb, ldc, 0) : CUBLAS_STATUS_SUCCESS;
}

// One LU factorization with partial pivoting, A = P * L * U in place (LAPACK's getf2, which
// cuBLAS's getrfBatched computes): column by column, the largest magnitude below the diagonal
// (the first of equals) becomes the pivot, its row swaps with the diagonal one across the whole
// matrix, the column below the diagonal is divided by the pivot and the trailing matrix loses the
// outer product. A zero pivot is recorded in *info (1-based, the first one) and its column left
// unscaled; the factorization goes on. pivots == nullptr: no row exchanges.
template <class T>
void getrf_one(int n, T* A, int lda, int* pivots, int* info) {
    *info = 0;
    for (int j = 0; j < n; ++j) {
        int p = j;
        if (pivots != nullptr) {
            for (int i = j + 1; i < n; ++i)
                if (std::abs(A[i + (long long)j * lda]) > std::abs(A[p + (long long)j * lda])) p = i;
            pivots[j] = p + 1;
        }
        const T pivot = A[p + (long long)j * lda];
        if (pivot == T(0)) {
            if (*info == 0) *info = j + 1;
        } else {
            if (p != j)
                for (int c = 0; c < n; ++c) std::swap(A[j + (long long)c * lda], A[p + (long long)c * lda]);
            for (int i = j + 1; i < n; ++i) A[i + (long long)j * lda] /= pivot;
        }
        for (int c = j + 1; c < n; ++c) {
            const T u = A[j + (long long)c * lda];
            for (int i = j + 1; i < n; ++i) A[i + (long long)c * lda] -= A[i + (long long)j * lda] * u;
        }
    }
}

template <class T>
cublasStatus_t getrf_batched(const char* call, cudaDataType type, cublasHandle_t h, int n, T* const As[], int lda,
                             int* pivots, int* infos, int batch) {
    if (h == nullptr) {
        say("%s: the handle is null (call cublasCreate first)", call);
        return CUBLAS_STATUS_NOT_INITIALIZED;
    }
    const char* bad = n < 0 ? "n" : lda < (n > 1 ? n : 1) ? "lda" : batch < 0 ? "batchSize" : nullptr;
    if (bad == nullptr && batch > 0 && (As == nullptr || infos == nullptr))
        bad = As == nullptr ? "Aarray" : "infoArray";
    if (bad != nullptr) {
        say("%s: parameter %s has an illegal value (n=%d lda=%d batchSize=%d)", call, bad, n, lda, batch);
        return CUBLAS_STATUS_INVALID_VALUE;
    }
    if (n == 0 || batch == 0) return CUBLAS_STATUS_SUCCESS;
    for (int b = 0; b < batch; ++b)
        if (!inside(call, "A", Operand{As[b], type, n, n, lda, 0}, 1)) return CUBLAS_STATUS_EXECUTION_FAILED;
    auto work = [=] {
        for (int b = 0; b < batch; ++b)
            getrf_one(n, As[b], lda, pivots == nullptr ? nullptr : pivots + (long long)b * n, &infos[b]);
    };
    if (!recorded(h, work)) work();
    return CUBLAS_STATUS_SUCCESS;
}

// C = alpha op(A) + beta op(B) (Sgeam, Dgeam), checked at the call and, during a capture, recorded
// with its host scalars read now; a zero alpha or beta leaves its matrix unread, so NaN there does
// not reach C.
template <class T>
cublasStatus_t geam(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, const T* alpha,
                    const T* A, int lda, const T* beta, const T* B, int ldb, T* C, int ldc) {
    if (h == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!op_ok(ta) || !op_ok(tb) || m < 0 || n < 0 || ldc < (m > 1 ? m : 1)) return CUBLAS_STATUS_INVALID_VALUE;
    if (recorded(h, [=, a = scalar(h, alpha), b = scalar(h, beta)] {
            geam(h, ta, tb, m, n, a.get(), A, lda, b.get(), B, ldb, C, ldc);
        }))
        return CUBLAS_STATUS_SUCCESS;
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < m; ++i) {
            const T a = ta == CUBLAS_OP_N ? A[i + (size_t)j * lda] : A[j + (size_t)i * lda];
            const T b = tb == CUBLAS_OP_N ? B[i + (size_t)j * ldb] : B[j + (size_t)i * ldb];
            C[i + (size_t)j * ldc] = (*alpha == T(0) ? T(0) : *alpha * a) + (*beta == T(0) ? T(0) : *beta * b);
        }
    return CUBLAS_STATUS_SUCCESS;
}

}  // namespace

extern "C" {

cublasStatus_t cublasCreate_v2(cublasHandle_t* handle) {
    if (handle == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    *handle = new cublasContext;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasDestroy_v2(cublasHandle_t handle) {
    if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    delete handle;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetVersion_v2(cublasHandle_t handle, int* version) {
    if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (version == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    *version = CUBLAS_VERSION;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream) {
    if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    handle->stream = stream;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetStream_v2(cublasHandle_t handle, cudaStream_t* stream) {
    if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (stream == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    *stream = handle->stream;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode) {
    if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    const int base = (int)mode & ~(int)CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION;
    if (base < 0 || base > 3) return CUBLAS_STATUS_INVALID_VALUE;
    handle->math = mode;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetMathMode(cublasHandle_t handle, cublasMath_t* mode) {
    if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (mode == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    *mode = handle->math;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetPointerMode_v2(cublasHandle_t handle, cublasPointerMode_t mode) {
    if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (mode != CUBLAS_POINTER_MODE_HOST && mode != CUBLAS_POINTER_MODE_DEVICE) return CUBLAS_STATUS_INVALID_VALUE;
    handle->pointer_mode = mode;  // both read the scalar where it is: device memory is host memory
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetPointerMode_v2(cublasHandle_t handle, cublasPointerMode_t* mode) {
    if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (mode == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    *mode = handle->pointer_mode;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetAtomicsMode(cublasHandle_t handle, cublasAtomicsMode_t mode) {
    if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    return mode == CUBLAS_ATOMICS_ALLOWED || mode == CUBLAS_ATOMICS_NOT_ALLOWED ? CUBLAS_STATUS_SUCCESS
                                                                                : CUBLAS_STATUS_INVALID_VALUE;
}

cublasStatus_t cublasSetWorkspace_v2(cublasHandle_t handle, void* workspace, size_t bytes) {
    if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    (void)workspace;  // the CPU GEMM needs none
    (void)bytes;
    return CUBLAS_STATUS_SUCCESS;
}

const char* cublasGetStatusName(cublasStatus_t status) {
    switch (status) {
        case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
        case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
        case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
        case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
        case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
        case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
        case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
        case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
        case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
        case CUBLAS_STATUS_LICENSE_ERROR: return "CUBLAS_STATUS_LICENSE_ERROR";
    }
    return "CUBLAS_STATUS_UNKNOWN";
}

const char* cublasGetStatusString(cublasStatus_t status) {
    switch (status) {
        case CUBLAS_STATUS_SUCCESS: return "success";
        case CUBLAS_STATUS_NOT_INITIALIZED: return "the library was not initialized";
        case CUBLAS_STATUS_INVALID_VALUE: return "an invalid numeric value was used as an argument";
        case CUBLAS_STATUS_EXECUTION_FAILED: return "the GPU program failed to execute";
        case CUBLAS_STATUS_NOT_SUPPORTED: return "the functionality requested is not supported";
        default: return cublasGetStatusName(status);
    }
}

cublasStatus_t cublasSgemm_v2(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                              const float* alpha, const float* A, int lda, const float* B, int ldb, const float* beta,
                              float* C, int ldc) {
    return gemm_ex("cublasSgemm", h, ta, tb, m, n, k, alpha, A, CUDA_R_32F, lda, 0, B, CUDA_R_32F, ldb, 0, beta, C,
                   CUDA_R_32F, ldc, 0, 1, CUBLAS_COMPUTE_32F);
}

cublasStatus_t cublasDgemm_v2(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                              const double* alpha, const double* A, int lda, const double* B, int ldb,
                              const double* beta, double* C, int ldc) {
    return gemm_ex("cublasDgemm", h, ta, tb, m, n, k, alpha, A, CUDA_R_64F, lda, 0, B, CUDA_R_64F, ldb, 0, beta, C,
                   CUDA_R_64F, ldc, 0, 1, CUBLAS_COMPUTE_64F);
}

cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                         int k, const float* alpha, const float* A, int lda, long long sa,
                                         const float* B, int ldb, long long sb, const float* beta, float* C, int ldc,
                                         long long sc, int batch) {
    return gemm_ex("cublasSgemmStridedBatched", h, ta, tb, m, n, k, alpha, A, CUDA_R_32F, lda, sa, B, CUDA_R_32F,
                   ldb, sb, beta, C, CUDA_R_32F, ldc, sc, batch, CUBLAS_COMPUTE_32F);
}

cublasStatus_t cublasDgemmStridedBatched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                         int k, const double* alpha, const double* A, int lda, long long sa,
                                         const double* B, int ldb, long long sb, const double* beta, double* C,
                                         int ldc, long long sc, int batch) {
    return gemm_ex("cublasDgemmStridedBatched", h, ta, tb, m, n, k, alpha, A, CUDA_R_64F, lda, sa, B, CUDA_R_64F,
                   ldb, sb, beta, C, CUDA_R_64F, ldc, sc, batch, CUBLAS_COMPUTE_64F);
}

cublasStatus_t cublasSgemmBatched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                                  const float* alpha, const float* const A[], int lda, const float* const B[],
                                  int ldb, const float* beta, float* const C[], int ldc, int batch) {
    return gemm_pointers("cublasSgemmBatched", CUDA_R_32F, CUBLAS_COMPUTE_32F, h, ta, tb, m, n, k, alpha, A, lda, B,
                         ldb, beta, C, ldc, batch);
}

cublasStatus_t cublasDgemmBatched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                                  const double* alpha, const double* const A[], int lda, const double* const B[],
                                  int ldb, const double* beta, double* const C[], int ldc, int batch) {
    return gemm_pointers("cublasDgemmBatched", CUDA_R_64F, CUBLAS_COMPUTE_64F, h, ta, tb, m, n, k, alpha, A, lda, B,
                         ldb, beta, C, ldc, batch);
}

// The half-precision GEMMs are cublasGemmEx's CUDA_R_16F matrices and scalars with
// CUBLAS_COMPUTE_16F, as cuBLAS defines them.
cublasStatus_t cublasHgemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                           const __half* alpha, const __half* A, int lda, const __half* B, int ldb,
                           const __half* beta, __half* C, int ldc) {
    return gemm_ex("cublasHgemm", h, ta, tb, m, n, k, alpha, A, CUDA_R_16F, lda, 0, B, CUDA_R_16F, ldb, 0, beta, C,
                   CUDA_R_16F, ldc, 0, 1, CUBLAS_COMPUTE_16F);
}

cublasStatus_t cublasHgemmStridedBatched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                         int k, const __half* alpha, const __half* A, int lda, long long sa,
                                         const __half* B, int ldb, long long sb, const __half* beta, __half* C,
                                         int ldc, long long sc, int batch) {
    return gemm_ex("cublasHgemmStridedBatched", h, ta, tb, m, n, k, alpha, A, CUDA_R_16F, lda, sa, B, CUDA_R_16F,
                   ldb, sb, beta, C, CUDA_R_16F, ldc, sc, batch, CUBLAS_COMPUTE_16F);
}

cublasStatus_t cublasHgemmBatched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                                  const __half* alpha, const __half* const A[], int lda, const __half* const B[],
                                  int ldb, const __half* beta, __half* const C[], int ldc, int batch) {
    return gemm_pointers("cublasHgemmBatched", CUDA_R_16F, CUBLAS_COMPUTE_16F, h, ta, tb, m, n, k, alpha, A, lda, B,
                         ldb, beta, C, ldc, batch);
}

cublasStatus_t cublasSgetrfBatched(cublasHandle_t h, int n, float* const A[], int lda, int* P, int* info, int batch) {
    return getrf_batched("cublasSgetrfBatched", CUDA_R_32F, h, n, A, lda, P, info, batch);
}

cublasStatus_t cublasDgetrfBatched(cublasHandle_t h, int n, double* const A[], int lda, int* P, int* info,
                                   int batch) {
    return getrf_batched("cublasDgetrfBatched", CUDA_R_64F, h, n, A, lda, P, info, batch);
}

cublasStatus_t cublasGemmEx(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                            const void* alpha, const void* A, cudaDataType at, int lda, const void* B,
                            cudaDataType bt, int ldb, const void* beta, void* C, cudaDataType ct, int ldc,
                            cublasComputeType_t compute, cublasGemmAlgo_t algo) {
    (void)algo;  // one algorithm here
    return gemm_ex("cublasGemmEx", h, ta, tb, m, n, k, alpha, A, at, lda, 0, B, bt, ldb, 0, beta, C, ct, ldc, 0, 1,
                   compute);
}

cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                          int k, const void* alpha, const void* A, cudaDataType at, int lda,
                                          long long sa, const void* B, cudaDataType bt, int ldb, long long sb,
                                          const void* beta, void* C, cudaDataType ct, int ldc, long long sc,
                                          int batch, cublasComputeType_t compute, cublasGemmAlgo_t algo) {
    (void)algo;
    return gemm_ex("cublasGemmStridedBatchedEx", h, ta, tb, m, n, k, alpha, A, at, lda, sa, B, bt, ldb, sb, beta, C,
                   ct, ldc, sc, batch, compute);
}

cublasStatus_t cublasSgemv_v2(cublasHandle_t h, cublasOperation_t trans, int m, int n, const float* alpha,
                              const float* A, int lda, const float* x, int incx, const float* beta, float* y,
                              int incy) {
    if (h == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!op_ok(trans) || m < 0 || n < 0 || lda < (m > 1 ? m : 1) || incx == 0 || incy == 0)
        return CUBLAS_STATUS_INVALID_VALUE;
    if (h != nullptr && recorded(h, [=, a = scalar(h, alpha), b = scalar(h, beta)] {
            cublasSgemv_v2(h, trans, m, n, a.get(), A, lda, x, incx, b.get(), y, incy);
        }))
        return CUBLAS_STATUS_SUCCESS;
    const int rows = trans == CUBLAS_OP_N ? m : n, cols = trans == CUBLAS_OP_N ? n : m;
    for (int i = 0; i < rows; ++i) {
        float acc = 0.0f;
        for (int j = 0; j < cols; ++j) {
            const float a = trans == CUBLAS_OP_N ? A[i + (size_t)j * lda] : A[j + (size_t)i * lda];
            acc += a * x[(incx > 0 ? j : cols - 1 - j) * (long long)std::abs(incx)];
        }
        float& out = y[(incy > 0 ? i : rows - 1 - i) * (long long)std::abs(incy)];
        out = *beta == 0.0f ? *alpha * acc : *alpha * acc + *beta * out;
    }
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSaxpy_v2(cublasHandle_t h, int n, const float* alpha, const float* x, int incx, float* y,
                              int incy) {
    if (h != nullptr && recorded(h, [=, a = scalar(h, alpha)] { cublasSaxpy_v2(h, n, a.get(), x, incx, y, incy); }))
        return CUBLAS_STATUS_SUCCESS;
    if (h == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    for (int i = 0; i < n; ++i) y[(long long)i * incy] += *alpha * x[(long long)i * incx];
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSscal_v2(cublasHandle_t h, int n, const float* alpha, float* x, int incx) {
    if (h != nullptr && recorded(h, [=, a = scalar(h, alpha)] { cublasSscal_v2(h, n, a.get(), x, incx); }))
        return CUBLAS_STATUS_SUCCESS;
    if (h == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (incx <= 0) return CUBLAS_STATUS_SUCCESS;  // cuBLAS does nothing for incx <= 0
    for (int i = 0; i < n; ++i) x[(long long)i * incx] *= *alpha;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSdot_v2(cublasHandle_t h, int n, const float* x, int incx, const float* y, int incy,
                             float* result) {
    if (h != nullptr) {
        if (cublasStatus_t st = refuse_in_capture(h, "cublasSdot")) return st;
    }
    if (h == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (result == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    float acc = 0.0f;
    for (int i = 0; i < n; ++i) acc += x[(long long)i * incx] * y[(long long)i * incy];
    *result = acc;
    return CUBLAS_STATUS_SUCCESS;
}

// x . y with the element, result and execution types named (the real ones: 16F, 16BF and 32F
// inputs accumulate in float, 64F in double, as cuBLAS documents its supported combinations).
cublasStatus_t cublasDotEx(cublasHandle_t h, int n, const void* x, cudaDataType xt, int incx, const void* y,
                           cudaDataType yt, int incy, void* result, cudaDataType rt, cudaDataType et) {
    if (h != nullptr) {
        if (cublasStatus_t st = refuse_in_capture(h, "cublasDotEx")) return st;
    }
    if (h == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (result == nullptr || (n > 0 && (x == nullptr || y == nullptr))) return CUBLAS_STATUS_INVALID_VALUE;
    const bool half = xt == CUDA_R_16F || xt == CUDA_R_16BF;
    const bool same = xt == yt && xt == rt;
    const bool supported = same && ((half && et == CUDA_R_32F) || (xt == CUDA_R_32F && et == CUDA_R_32F) ||
                                    (xt == CUDA_R_64F && et == CUDA_R_64F));
    if (!supported) {
        say("cublasDotEx: x %s, y %s, result %s, execution %s is not a combination cuBLAS supports (same real "
            "type for x, y and result; 32F execution for 16F, 16BF and 32F, 64F for 64F)",
            type_name(xt), type_name(yt), type_name(rt), type_name(et));
        return CUBLAS_STATUS_NOT_SUPPORTED;
    }
    double total = 0.0;
    float acc = 0.0f;
    for (long long i = 0; i < n; ++i) {
        // A negative increment walks its vector from the far end, as the BLAS defines it.
        const long long ix = incx >= 0 ? i * incx : (n - 1 - i) * -(long long)incx;
        const long long iy = incy >= 0 ? i * incy : (n - 1 - i) * -(long long)incy;
        const double a = load(x, xt, (size_t)ix), b = load(y, yt, (size_t)iy);
        if (et == CUDA_R_64F) {
            total += a * b;
        } else {
            acc += (float)a * (float)b;
        }
    }
    store(result, rt, 0, et == CUDA_R_64F ? total : (double)acc);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSnrm2_v2(cublasHandle_t h, int n, const float* x, int incx, float* result) {
    if (h != nullptr) {
        if (cublasStatus_t st = refuse_in_capture(h, "cublasSnrm2")) return st;
    }
    if (h == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (result == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    double acc = 0.0;
    for (int i = 0; incx > 0 && i < n; ++i) acc += (double)x[(long long)i * incx] * x[(long long)i * incx];
    *result = (float)std::sqrt(acc);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSasum_v2(cublasHandle_t h, int n, const float* x, int incx, float* result) {
    if (h != nullptr) {
        if (cublasStatus_t st = refuse_in_capture(h, "cublasSasum")) return st;
    }
    if (h == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (result == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    float acc = 0.0f;
    for (int i = 0; incx > 0 && i < n; ++i) acc += std::fabs(x[(long long)i * incx]);
    *result = acc;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasScopy_v2(cublasHandle_t h, int n, const float* x, int incx, float* y, int incy) {
    if (h != nullptr && recorded(h, [=] { cublasScopy_v2(h, n, x, incx, y, incy); })) return CUBLAS_STATUS_SUCCESS;
    if (h == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    for (int i = 0; i < n; ++i) y[(long long)i * incy] = x[(long long)i * incx];
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasIsamax_v2(cublasHandle_t h, int n, const float* x, int incx, int* result) {
    if (h != nullptr) {
        if (cublasStatus_t st = refuse_in_capture(h, "cublasIsamax")) return st;
    }
    if (h == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (result == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    int best = 0;  // 1-based, 0 for n <= 0 or incx <= 0, as cuBLAS
    float best_v = -1.0f;
    for (int i = 0; incx > 0 && i < n; ++i) {
        const float v = std::fabs(x[(long long)i * incx]);
        if (v > best_v) {
            best_v = v;
            best = i + 1;
        }
    }
    *result = best;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSgeam(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                           const float* alpha, const float* A, int lda, const float* beta, const float* B, int ldb,
                           float* C, int ldc) {
    return geam(h, ta, tb, m, n, alpha, A, lda, beta, B, ldb, C, ldc);
}

cublasStatus_t cublasDgeam(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                           const double* alpha, const double* A, int lda, const double* beta, const double* B,
                           int ldb, double* C, int ldc) {
    return geam(h, ta, tb, m, n, alpha, A, lda, beta, B, ldb, C, ldc);
}

cublasStatus_t cublasSetMatrix(int rows, int cols, int elem_size, const void* A, int lda, void* B, int ldb) {
    if (rows < 0 || cols < 0 || elem_size <= 0 || lda <= 0 || ldb <= 0 || lda < rows || ldb < rows)
        return CUBLAS_STATUS_INVALID_VALUE;
    for (int j = 0; j < cols; ++j)
        std::memcpy(static_cast<char*>(B) + (size_t)j * ldb * elem_size,
                    static_cast<const char*>(A) + (size_t)j * lda * elem_size, (size_t)rows * elem_size);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetMatrix(int rows, int cols, int elem_size, const void* A, int lda, void* B, int ldb) {
    return cublasSetMatrix(rows, cols, elem_size, A, lda, B, ldb);
}

cublasStatus_t cublasSetVector(int n, int elem_size, const void* x, int incx, void* y, int incy) {
    if (n < 0 || elem_size <= 0 || incx <= 0 || incy <= 0) return CUBLAS_STATUS_INVALID_VALUE;
    for (int i = 0; i < n; ++i)
        std::memcpy(static_cast<char*>(y) + (size_t)i * incy * elem_size,
                    static_cast<const char*>(x) + (size_t)i * incx * elem_size, elem_size);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetVector(int n, int elem_size, const void* x, int incx, void* y, int incy) {
    return cublasSetVector(n, elem_size, x, incx, y, incy);
}
}  // extern "C"
