// cuBLAS and cublasLt on the CPU: the GEMM family ML code calls, column-major as cuBLAS
// defines it. Device memory is host memory here, so a GEMM is a loop over the operands; a
// matrix that starts inside a device allocation must lie inside it (else the call fails with
// CUBLAS_STATUS_EXECUTION_FAILED, where a GPU would fault). Products are accumulated in order
// of k in the compute type's precision (float for the 32F types, double for 64F, int for 32I);
// the TF32 and reduced-precision modes compute at full float precision here. Messages go to
// stderr as "cuBLAS (simulator): ...".
#include "include/cublasLt.h"

#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <mutex>

#include "sim_internal.h"

struct cublasContext {
    cudaStream_t stream = nullptr;
    cublasMath_t math = CUBLAS_DEFAULT_MATH;
    cublasPointerMode_t pointer_mode = CUBLAS_POINTER_MODE_HOST;
};
struct cublasLtContext {};
struct cublasLtMatmulDescOpaque_st {
    cublasComputeType_t compute;
    cudaDataType_t scale;
    cublasOperation_t transa = CUBLAS_OP_N, transb = CUBLAS_OP_N;
    cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
    const void* bias = nullptr;
    cudaDataType_t bias_type = CUDA_R_32F;
    bool bias_type_set = false;
    void* aux = nullptr;
    int64_t aux_ld = 0;
    long long bias_batch_stride = 0, aux_batch_stride = 0;
};
struct cublasLtMatrixLayoutOpaque_st {
    cudaDataType type;
    uint64_t rows, cols;
    int64_t ld;
    cublasLtOrder_t order = CUBLASLT_ORDER_COL;
    int batch = 1;
    long long stride = 0;
};
struct cublasLtMatmulPreferenceOpaque_st {
    size_t max_workspace = 0;
};

namespace {

void say(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void say(const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    std::fputs("cuBLAS (simulator): ", stderr);
    std::vfprintf(stderr, fmt, ap);
    std::fputc('\n', stderr);
    va_end(ap);
}

size_t type_size(cudaDataType t) {
    switch (t) {
        case CUDA_R_16F:
        case CUDA_R_16BF: return 2;
        case CUDA_R_32F:
        case CUDA_R_32I: return 4;
        case CUDA_R_64F: return 8;
        case CUDA_R_8I:
        case CUDA_R_8U: return 1;
        default: return 0;
    }
}

const char* type_name(cudaDataType t) {
    switch (t) {
        case CUDA_R_16F: return "CUDA_R_16F";
        case CUDA_R_16BF: return "CUDA_R_16BF";
        case CUDA_R_32F: return "CUDA_R_32F";
        case CUDA_R_64F: return "CUDA_R_64F";
        case CUDA_R_8I: return "CUDA_R_8I";
        case CUDA_R_32I: return "CUDA_R_32I";
        default: return "an unsupported cudaDataType";
    }
}

double load(const void* p, cudaDataType t, size_t i) {
    switch (t) {
        case CUDA_R_16F: return __half2float(static_cast<const __half*>(p)[i]);
        case CUDA_R_16BF: return __bfloat162float(static_cast<const __nv_bfloat16*>(p)[i]);
        case CUDA_R_32F: return static_cast<const float*>(p)[i];
        case CUDA_R_64F: return static_cast<const double*>(p)[i];
        case CUDA_R_8I: return static_cast<const signed char*>(p)[i];
        case CUDA_R_8U: return static_cast<const unsigned char*>(p)[i];
        case CUDA_R_32I: return static_cast<const int*>(p)[i];
        default: return 0;
    }
}

void store(void* p, cudaDataType t, size_t i, double v) {
    switch (t) {
        case CUDA_R_16F: static_cast<__half*>(p)[i] = __float2half((float)v); break;
        case CUDA_R_16BF: static_cast<__nv_bfloat16*>(p)[i] = __float2bfloat16((float)v); break;
        case CUDA_R_32F: static_cast<float*>(p)[i] = (float)v; break;
        case CUDA_R_64F: static_cast<double*>(p)[i] = v; break;
        case CUDA_R_32I: static_cast<int*>(p)[i] = (int)v; break;
        default: break;
    }
}

// A column-major operand: rows x cols with leading dimension ld, `batch` copies `stride` apart.
struct Operand {
    const void* p;
    cudaDataType type;
    long long rows, cols, ld, stride;
};

// False (with a message) when the operand starts inside a device allocation but runs past it.
bool inside(const char* call, const char* what, const Operand& o, int batch) {
    if (o.p == nullptr || o.rows == 0 || o.cols == 0 || batch == 0) return o.p != nullptr || o.rows * o.cols == 0;
    const long long last = (o.cols - 1) * o.ld + (o.rows - 1) + (long long)(batch - 1) * o.stride;
    const size_t bytes = (size_t)(last + 1) * type_size(o.type);
    std::lock_guard<std::mutex> lock(sim::g_state_mu);
    bool start = false;
    if (!sim::find_alloc(o.p, 1, &start)) return true;  // not device memory: mapped host memory
    if (sim::find_alloc(o.p, bytes, nullptr)) return true;
    say("%s: matrix %s (%lld x %lld, ld %lld, %d batch(es)) runs past the end of its device allocation", call, what,
        o.rows, o.cols, o.ld, batch);
    return false;
}

enum class Act { kNone, kRelu, kGelu };

struct Epilogue {
    Act act = Act::kNone;
    const void* bias = nullptr;
    cudaDataType bias_type = CUDA_R_32F;
    long long bias_stride = 0;
    void* aux = nullptr;  // the values before the activation, for the backward pass
    cudaDataType aux_type = CUDA_R_32F;
    long long aux_ld = 0, aux_stride = 0;
};

double gelu_tanh(double x) {  // cublasLt's GELU: the tanh approximation
    const double c = 0.7978845608028654;  // sqrt(2 / pi)
    return 0.5 * x * (1.0 + std::tanh(c * (x + 0.044715 * x * x * x)));
}

// D = act(alpha * op(A) op(B) + beta * C + bias) for each batch, in the accumulator type Acc.
template <class Acc>
void gemm(cublasOperation_t ta, cublasOperation_t tb, long long m, long long n, long long k, double alpha,
          const Operand& a, const Operand& b, double beta, const Operand& c, void* d, cudaDataType d_type,
          long long ldd, long long stride_d, int batch, const Epilogue& ep) {
    for (int bt = 0; bt < batch; ++bt) {
        const size_t oa = (size_t)bt * a.stride, ob = (size_t)bt * b.stride, oc = (size_t)bt * c.stride;
        const size_t od = (size_t)bt * stride_d;
        for (long long j = 0; j < n; ++j) {
            for (long long i = 0; i < m; ++i) {
                Acc acc = 0;
                for (long long l = 0; l < k; ++l) {
                    const size_t ia = oa + (ta == CUBLAS_OP_N ? i + l * a.ld : l + i * a.ld);
                    const size_t ib = ob + (tb == CUBLAS_OP_N ? l + j * b.ld : j + l * b.ld);
                    acc += (Acc)load(a.p, a.type, ia) * (Acc)load(b.p, b.type, ib);
                }
                double v = alpha * (double)acc;
                // beta == 0: C is not read, so NaN or garbage in it does not reach D (as cuBLAS).
                if (beta != 0.0) v += beta * load(c.p, c.type, oc + i + j * c.ld);
                if (ep.bias != nullptr) v += load(ep.bias, ep.bias_type, (size_t)bt * ep.bias_stride + i);
                if (ep.aux != nullptr) store(ep.aux, ep.aux_type, (size_t)bt * ep.aux_stride + i + j * ep.aux_ld, v);
                if (ep.act == Act::kRelu) v = v > 0 ? v : 0;
                if (ep.act == Act::kGelu) v = gelu_tanh(v);
                store(d, d_type, od + i + j * ldd, v);
            }
        }
    }
}

bool op_ok(cublasOperation_t op) { return op == CUBLAS_OP_N || op == CUBLAS_OP_T || op == CUBLAS_OP_C; }

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

// The accumulator precision and the scalar type of a compute type, or false when unsupported.
bool compute_types(cublasComputeType_t ct, cudaDataType* scalar, int* acc_bits) {
    switch (ct) {
        case CUBLAS_COMPUTE_32F:
        case CUBLAS_COMPUTE_32F_PEDANTIC:
        case CUBLAS_COMPUTE_32F_FAST_16F:
        case CUBLAS_COMPUTE_32F_FAST_16BF:
        case CUBLAS_COMPUTE_32F_FAST_TF32: *scalar = CUDA_R_32F; *acc_bits = 32; return true;
        case CUBLAS_COMPUTE_16F:
        case CUBLAS_COMPUTE_16F_PEDANTIC: *scalar = CUDA_R_16F; *acc_bits = 32; return true;
        case CUBLAS_COMPUTE_64F:
        case CUBLAS_COMPUTE_64F_PEDANTIC: *scalar = CUDA_R_64F; *acc_bits = 64; return true;
        case CUBLAS_COMPUTE_32I:
        case CUBLAS_COMPUTE_32I_PEDANTIC: *scalar = CUDA_R_32I; *acc_bits = -32; return true;
        default: return false;
    }
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
    const double al = load(alpha, scalar, 0), be = load(beta, scalar, 0);
    if (acc_bits == 64)
        gemm<double>(ta, tb, m, n, k, al, a, b, be, c, C, ct, ldc, sc, batch, Epilogue{});
    else if (acc_bits < 0)
        gemm<long long>(ta, tb, m, n, k, al, a, b, be, c, C, ct, ldc, sc, batch, Epilogue{});
    else
        gemm<float>(ta, tb, m, n, k, al, a, b, be, c, C, ct, ldc, sc, batch, Epilogue{});
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
    if (batch < 0 || (batch > 0 && (A == nullptr || B == nullptr || C == nullptr))) return CUBLAS_STATUS_INVALID_VALUE;
    for (int i = 0; i < batch; ++i) {
        cublasStatus_t s = gemm_ex("cublasSgemmBatched", h, ta, tb, m, n, k, alpha, A[i], CUDA_R_32F, lda, 0, B[i],
                                   CUDA_R_32F, ldb, 0, beta, C[i], CUDA_R_32F, ldc, 0, 1, CUBLAS_COMPUTE_32F);
        if (s != CUBLAS_STATUS_SUCCESS) return s;
    }
    return batch == 0 ? check_gemm("cublasSgemmBatched", h, ta, tb, m, n, k, lda, ldb, ldc, 0) : CUBLAS_STATUS_SUCCESS;
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
    if (h == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    for (int i = 0; i < n; ++i) y[(long long)i * incy] += *alpha * x[(long long)i * incx];
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSscal_v2(cublasHandle_t h, int n, const float* alpha, float* x, int incx) {
    if (h == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (incx <= 0) return CUBLAS_STATUS_SUCCESS;  // cuBLAS does nothing for incx <= 0
    for (int i = 0; i < n; ++i) x[(long long)i * incx] *= *alpha;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSdot_v2(cublasHandle_t h, int n, const float* x, int incx, const float* y, int incy,
                             float* result) {
    if (h == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (result == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    float acc = 0.0f;
    for (int i = 0; i < n; ++i) acc += x[(long long)i * incx] * y[(long long)i * incy];
    *result = acc;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSnrm2_v2(cublasHandle_t h, int n, const float* x, int incx, float* result) {
    if (h == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (result == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    double acc = 0.0;
    for (int i = 0; incx > 0 && i < n; ++i) acc += (double)x[(long long)i * incx] * x[(long long)i * incx];
    *result = (float)std::sqrt(acc);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSasum_v2(cublasHandle_t h, int n, const float* x, int incx, float* result) {
    if (h == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (result == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    float acc = 0.0f;
    for (int i = 0; incx > 0 && i < n; ++i) acc += std::fabs(x[(long long)i * incx]);
    *result = acc;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasScopy_v2(cublasHandle_t h, int n, const float* x, int incx, float* y, int incy) {
    if (h == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    for (int i = 0; i < n; ++i) y[(long long)i * incy] = x[(long long)i * incx];
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasIsamax_v2(cublasHandle_t h, int n, const float* x, int incx, int* result) {
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
    if (h == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!op_ok(ta) || !op_ok(tb) || m < 0 || n < 0 || ldc < (m > 1 ? m : 1)) return CUBLAS_STATUS_INVALID_VALUE;
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < m; ++i) {
            const float a = ta == CUBLAS_OP_N ? A[i + (size_t)j * lda] : A[j + (size_t)i * lda];
            const float b = tb == CUBLAS_OP_N ? B[i + (size_t)j * ldb] : B[j + (size_t)i * ldb];
            C[i + (size_t)j * ldc] = (*alpha == 0.0f ? 0.0f : *alpha * a) + (*beta == 0.0f ? 0.0f : *beta * b);
        }
    return CUBLAS_STATUS_SUCCESS;
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

// ---- cublasLt --------------------------------------------------------------------------------

cublasStatus_t cublasLtCreate(cublasLtHandle_t* handle) {
    if (handle == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    *handle = new cublasLtContext;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtDestroy(cublasLtHandle_t handle) {
    if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    delete handle;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t* desc, cublasComputeType_t compute,
                                        cudaDataType_t scale) {
    cudaDataType s;
    int bits;
    if (desc == nullptr || !compute_types(compute, &s, &bits)) return CUBLAS_STATUS_INVALID_VALUE;
    *desc = new cublasLtMatmulDescOpaque_st{compute, scale};
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t desc) {
    delete desc;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t attr,
                                              const void* buf, size_t size) {
    if (d == nullptr || buf == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    auto take = [&](auto& field) {
        if (size != sizeof(field)) return false;
        std::memcpy(&field, buf, size);
        return true;
    };
    bool ok;
    switch (attr) {
        case CUBLASLT_MATMUL_DESC_TRANSA: ok = take(d->transa); break;
        case CUBLASLT_MATMUL_DESC_TRANSB: ok = take(d->transb); break;
        case CUBLASLT_MATMUL_DESC_EPILOGUE: ok = take(d->epilogue); break;
        case CUBLASLT_MATMUL_DESC_BIAS_POINTER: ok = take(d->bias); break;
        case CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE: ok = take(d->bias_type) && (d->bias_type_set = true); break;
        case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER: ok = take(d->aux); break;
        case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD: ok = take(d->aux_ld); break;
        case CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE: ok = take(d->bias_batch_stride); break;
        case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE: ok = take(d->aux_batch_stride); break;
        case CUBLASLT_MATMUL_DESC_COMPUTE_TYPE: ok = take(d->compute); break;
        case CUBLASLT_MATMUL_DESC_SCALE_TYPE: ok = take(d->scale); break;
        case CUBLASLT_MATMUL_DESC_POINTER_MODE:
        case CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET: ok = size == sizeof(int32_t); break;  // no effect here
        default:
            say("cublasLtMatmulDescSetAttribute: attribute %d is not supported", (int)attr);
            return CUBLAS_STATUS_NOT_SUPPORTED;
    }
    return ok ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
}

cublasStatus_t cublasLtMatmulDescGetAttribute(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t attr, void* buf,
                                              size_t size, size_t* written) {
    if (d == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    auto give = [&](const auto& field) {
        if (written != nullptr) *written = sizeof(field);
        if (buf == nullptr && size == 0) return CUBLAS_STATUS_SUCCESS;  // a size query
        if (buf == nullptr || size < sizeof(field)) return CUBLAS_STATUS_INVALID_VALUE;
        std::memcpy(buf, &field, sizeof(field));
        return CUBLAS_STATUS_SUCCESS;
    };
    switch (attr) {
        case CUBLASLT_MATMUL_DESC_TRANSA: return give(d->transa);
        case CUBLASLT_MATMUL_DESC_TRANSB: return give(d->transb);
        case CUBLASLT_MATMUL_DESC_EPILOGUE: return give(d->epilogue);
        case CUBLASLT_MATMUL_DESC_BIAS_POINTER: return give(d->bias);
        case CUBLASLT_MATMUL_DESC_COMPUTE_TYPE: return give(d->compute);
        case CUBLASLT_MATMUL_DESC_SCALE_TYPE: return give(d->scale);
        default: return CUBLAS_STATUS_NOT_SUPPORTED;
    }
}

cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t* layout, cudaDataType type, uint64_t rows,
                                          uint64_t cols, int64_t ld) {
    if (layout == nullptr || type_size(type) == 0) return CUBLAS_STATUS_INVALID_VALUE;
    *layout = new cublasLtMatrixLayoutOpaque_st{type, rows, cols, ld};
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t layout) {
    delete layout;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t l, cublasLtMatrixLayoutAttribute_t attr,
                                                const void* buf, size_t size) {
    if (l == nullptr || buf == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    auto take = [&](auto& field) {
        if (size != sizeof(field)) return CUBLAS_STATUS_INVALID_VALUE;
        std::memcpy(&field, buf, size);
        return CUBLAS_STATUS_SUCCESS;
    };
    switch (attr) {
        case CUBLASLT_MATRIX_LAYOUT_TYPE: return take(l->type);
        case CUBLASLT_MATRIX_LAYOUT_ORDER: return take(l->order);
        case CUBLASLT_MATRIX_LAYOUT_ROWS: return take(l->rows);
        case CUBLASLT_MATRIX_LAYOUT_COLS: return take(l->cols);
        case CUBLASLT_MATRIX_LAYOUT_LD: return take(l->ld);
        case CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT: return take(l->batch);
        case CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET: return take(l->stride);
    }
    say("cublasLtMatrixLayoutSetAttribute: attribute %d is not supported", (int)attr);
    return CUBLAS_STATUS_NOT_SUPPORTED;
}

cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t* pref) {
    if (pref == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    *pref = new cublasLtMatmulPreferenceOpaque_st;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t pref) {
    delete pref;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t pref,
                                                    cublasLtMatmulPreferenceAttributes_t attr, const void* buf,
                                                    size_t size) {
    if (pref == nullptr || buf == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    if (attr == CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES) {
        if (size != sizeof(uint64_t)) return CUBLAS_STATUS_INVALID_VALUE;
        std::memcpy(&pref->max_workspace, buf, size);
        return CUBLAS_STATUS_SUCCESS;
    }
    return size == sizeof(uint32_t) || size == sizeof(uint64_t) ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
}

cublasStatus_t cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
                                              cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                                              cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d,
                                              cublasLtMatmulPreference_t pref, int requested,
                                              cublasLtMatmulHeuristicResult_t results[], int* returned) {
    if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (desc == nullptr || a == nullptr || b == nullptr || c == nullptr || d == nullptr || pref == nullptr ||
        requested < 1 || results == nullptr || returned == nullptr)
        return CUBLAS_STATUS_INVALID_VALUE;
    std::memset(&results[0], 0, sizeof(results[0]));  // one algorithm, needing no workspace
    results[0].state = CUBLAS_STATUS_SUCCESS;
    results[0].wavesCount = 1.0f;
    *returned = 1;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmul(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, const void* alpha, const void* A,
                              cublasLtMatrixLayout_t al, const void* B, cublasLtMatrixLayout_t bl, const void* beta,
                              const void* C, cublasLtMatrixLayout_t cl, void* D, cublasLtMatrixLayout_t dl,
                              const cublasLtMatmulAlgo_t* algo, void* workspace, size_t workspace_bytes,
                              cudaStream_t stream) {
    (void)algo;
    (void)workspace;
    (void)workspace_bytes;
    (void)stream;
    const char* call = "cublasLtMatmul";
    if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (desc == nullptr || al == nullptr || bl == nullptr || cl == nullptr || dl == nullptr || alpha == nullptr ||
        beta == nullptr || D == nullptr)
        return CUBLAS_STATUS_INVALID_VALUE;
    for (const cublasLtMatrixLayoutOpaque_st* l : {al, bl, cl, dl}) {
        if (l->order != CUBLASLT_ORDER_COL) {
            say("%s: only CUBLASLT_ORDER_COL layouts are supported (order %d given)", call, (int)l->order);
            return CUBLAS_STATUS_NOT_SUPPORTED;
        }
    }
    Epilogue ep;
    switch (desc->epilogue) {
        case CUBLASLT_EPILOGUE_DEFAULT: break;
        case CUBLASLT_EPILOGUE_RELU: ep.act = Act::kRelu; break;
        case CUBLASLT_EPILOGUE_BIAS: ep.bias = desc->bias; break;
        case CUBLASLT_EPILOGUE_RELU_BIAS: ep.act = Act::kRelu; ep.bias = desc->bias; break;
        case CUBLASLT_EPILOGUE_GELU: ep.act = Act::kGelu; break;
        case CUBLASLT_EPILOGUE_GELU_BIAS: ep.act = Act::kGelu; ep.bias = desc->bias; break;
        case CUBLASLT_EPILOGUE_GELU_AUX: ep.act = Act::kGelu; ep.aux = desc->aux; break;
        case CUBLASLT_EPILOGUE_GELU_AUX_BIAS: ep.act = Act::kGelu; ep.aux = desc->aux; ep.bias = desc->bias; break;
        default:
            say("%s: epilogue %d is not supported (DEFAULT, RELU, BIAS, RELU_BIAS, GELU, GELU_BIAS, GELU_AUX and "
                "GELU_AUX_BIAS are)",
                call, (int)desc->epilogue);
            return CUBLAS_STATUS_NOT_SUPPORTED;
    }
    const bool wants_bias = desc->epilogue == CUBLASLT_EPILOGUE_BIAS || desc->epilogue == CUBLASLT_EPILOGUE_RELU_BIAS ||
                            desc->epilogue == CUBLASLT_EPILOGUE_GELU_BIAS ||
                            desc->epilogue == CUBLASLT_EPILOGUE_GELU_AUX_BIAS;
    if ((wants_bias && ep.bias == nullptr) || (ep.aux == nullptr && (desc->epilogue & 128) != 0)) {
        say("%s: the epilogue needs a %s pointer (cublasLtMatmulDescSetAttribute)", call,
            ep.bias == nullptr && wants_bias ? "bias" : "aux");
        return CUBLAS_STATUS_INVALID_VALUE;
    }
    ep.bias_type = desc->bias_type_set ? desc->bias_type : dl->type;
    ep.bias_stride = desc->bias_batch_stride;
    ep.aux_type = dl->type;
    ep.aux_ld = desc->aux_ld != 0 ? desc->aux_ld : (int64_t)dl->rows;
    ep.aux_stride = desc->aux_batch_stride;
    const long long m = (long long)dl->rows, n = (long long)dl->cols;
    const long long k = desc->transa == CUBLAS_OP_N ? (long long)al->cols : (long long)al->rows;
    const long long a_rows = desc->transa == CUBLAS_OP_N ? m : k, b_rows = desc->transb == CUBLAS_OP_N ? k : n;
    const long long b_cols = desc->transb == CUBLAS_OP_N ? n : k;
    if ((long long)al->rows != a_rows || (long long)bl->rows != b_rows || (long long)bl->cols != b_cols ||
        (long long)cl->rows != m || (long long)cl->cols != n || al->batch != dl->batch || bl->batch != dl->batch ||
        cl->batch != dl->batch) {
        say("%s: the layouts do not fit together: A %llux%llu, B %llux%llu, C %llux%llu, D %llux%llu (transa %d, "
            "transb %d)",
            call, (unsigned long long)al->rows, (unsigned long long)al->cols, (unsigned long long)bl->rows,
            (unsigned long long)bl->cols, (unsigned long long)cl->rows, (unsigned long long)cl->cols,
            (unsigned long long)dl->rows, (unsigned long long)dl->cols, (int)desc->transa, (int)desc->transb);
        return CUBLAS_STATUS_INVALID_VALUE;
    }
    cudaDataType scalar;
    int acc_bits;
    compute_types(desc->compute, &scalar, &acc_bits);
    const Operand a{A, al->type, (long long)al->rows, (long long)al->cols, al->ld, al->stride};
    const Operand b{B, bl->type, (long long)bl->rows, (long long)bl->cols, bl->ld, bl->stride};
    const Operand c{C, cl->type, m, n, cl->ld, cl->stride};
    const Operand d{D, dl->type, m, n, dl->ld, dl->stride};
    const int batch = dl->batch;
    const double be = load(beta, desc->scale, 0);
    if (!inside(call, "A", a, batch) || !inside(call, "B", b, batch) || !inside(call, "D", d, batch) ||
        (be != 0.0 && !inside(call, "C", c, batch)))
        return CUBLAS_STATUS_EXECUTION_FAILED;
    const double alv = load(alpha, desc->scale, 0);
    if (acc_bits == 64)
        gemm<double>(desc->transa, desc->transb, m, n, k, alv, a, b, be, c, D, dl->type, dl->ld, dl->stride, batch, ep);
    else
        gemm<float>(desc->transa, desc->transb, m, n, k, alv, a, b, be, c, D, dl->type, dl->ld, dl->stride, batch, ep);
    return CUBLAS_STATUS_SUCCESS;
}

}  // extern "C"
