// What cuBLAS and cublasLt (cublas.cpp, cublaslt.cpp) share: element loads and stores by
// cudaDataType, the operand bounds check, and the one GEMM loop with its epilogue. Products are
// accumulated in order of k in the compute type's precision (float for the 32F types, double
// for 64F, int for 32I); the TF32 and reduced-precision modes compute at full float precision.
#ifndef SIM_BLAS_CORE_H
#define SIM_BLAS_CORE_H

#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include <cublasLt.h>
#include <cublas_api.h>
#include "sim_internal.h"

namespace __sim {
namespace blas {

inline void say(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
inline void say(const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    std::fputs("cuBLAS (simulator): ", stderr);
    std::vfprintf(stderr, fmt, ap);
    std::fputc('\n', stderr);
    va_end(ap);
}

inline size_t type_size(cudaDataType t) {
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

inline const char* type_name(cudaDataType t) {
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

inline double load(const void* p, cudaDataType t, size_t i) {
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

inline void store(void* p, cudaDataType t, size_t i, double v) {
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
inline bool inside(const char* call, const char* what, const Operand& o, int batch) {
    if (o.p == nullptr || o.rows == 0 || o.cols == 0 || batch == 0) return o.p != nullptr || o.rows * o.cols == 0;
    const long long last = (o.cols - 1) * o.ld + (o.rows - 1) + (long long)(batch - 1) * o.stride;
    const size_t bytes = (size_t)(last + 1) * type_size(o.type);
    std::lock_guard<std::mutex> lock(__sim::g_state_mu);
    bool start = false;
    if (!__sim::find_alloc(o.p, 1, &start)) return true;  // not device memory: mapped host memory
    if (__sim::find_alloc(o.p, bytes, nullptr)) return true;
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

inline double gelu_tanh(double x) {  // cublasLt's GELU: the tanh approximation
    const double c = 0.7978845608028654;  // sqrt(2 / pi)
    return 0.5 * x * (1.0 + std::tanh(c * (x + 0.044715 * x * x * x)));
}

// ---- the GEMM ------------------------------------------------------------------------------
// op(A) is packed in panels of kPanelRows rows and op(B) in panels of kPanelCols<Acc> columns,
// converted to Acc and padded with zeros: for each l, a panel's values sit side by side. A tile
// of kPanelRows x kPanelCols outputs then keeps its sums in vector registers while l runs. The
// vectors run across outputs, never across l, so each output still adds its k products one
// after another in order of l, in Acc: the same sums, rounded the same way, as a plain loop.
constexpr int kPanelRows = 4;
template <class Acc>
constexpr int kPanelCols = 32 / (int)sizeof(Acc);  // two 16-byte vectors

template <class Acc>
struct Packed {
    std::vector<Acc> a, b;  // panels of op(A) and op(B)
    long long m, n, k, row_panels, col_panels;
};

// op(A) and op(B) of batch ``bt`` in panels (see above).
template <class Acc>
void pack(Packed<Acc>& pk, cublasOperation_t ta, cublasOperation_t tb, const Operand& a, const Operand& b, int bt) {
    constexpr int R = kPanelRows, C = kPanelCols<Acc>;
    const long long m = pk.m, n = pk.n, k = pk.k;
    const size_t oa = (size_t)bt * a.stride, ob = (size_t)bt * b.stride;
    pk.a.assign((size_t)pk.row_panels * R * k, Acc(0));
    pk.b.assign((size_t)pk.col_panels * C * k, Acc(0));
    for (long long i = 0; i < m; ++i) {
        Acc* dst = pk.a.data() + (size_t)(i / R) * R * k + i % R;
        for (long long l = 0; l < k; ++l)
            dst[(size_t)l * R] = (Acc)load(a.p, a.type, oa + (ta == CUBLAS_OP_N ? i + l * a.ld : l + i * a.ld));
    }
    for (long long j = 0; j < n; ++j) {
        Acc* dst = pk.b.data() + (size_t)(j / C) * C * k + j % C;
        for (long long l = 0; l < k; ++l)
            dst[(size_t)l * C] = (Acc)load(b.p, b.type, ob + (tb == CUBLAS_OP_N ? l + j * b.ld : j + l * b.ld));
    }
}

// The kPanelRows x kPanelCols sums of one row panel and one column panel, row by row into ``out``.
template <class Acc>
void tile_sums(const Acc* ap, const Acc* bp, long long k, Acc* out) {
    constexpr int R = kPanelRows, C = kPanelCols<Acc>, L = C / 2;
    typedef Acc V __attribute__((vector_size(16)));
    V sum[R][2];
    for (int r = 0; r < R; ++r) sum[r][0] = sum[r][1] = V{};
    for (long long l = 0; l < k; ++l) {
        V b0, b1;
        std::memcpy(&b0, bp + l * C, sizeof b0);
        std::memcpy(&b1, bp + l * C + L, sizeof b1);
        for (int r = 0; r < R; ++r) {
            const Acc av = ap[l * R + r];
            sum[r][0] += av * b0;
            sum[r][1] += av * b1;
        }
    }
    for (int r = 0; r < R; ++r) std::memcpy(out + r * C, sum[r], sizeof sum[r]);
}

// D = act(alpha * op(A) op(B) + beta * C + bias) for each batch, in the accumulator type Acc.
// Column panels are shared out between threads (SIMULATOR_THREADS, as kernel blocks are) when the
// product is large enough to pay for starting them.
template <class Acc>
void gemm(cublasOperation_t ta, cublasOperation_t tb, long long m, long long n, long long k, double alpha,
          const Operand& a, const Operand& b, double beta, const Operand& c, void* d, cudaDataType d_type,
          long long ldd, long long stride_d, int batch, const Epilogue& ep) {
    constexpr int R = kPanelRows, C = kPanelCols<Acc>;
    Packed<Acc> pk{{}, {}, m, n, k, (m + R - 1) / R, (n + C - 1) / C};
    const double work = (double)m * (double)n * (double)k;
    const long long want = work < 1e7 ? 1 : std::min<long long>(worker_threads(), pk.col_panels);
    for (int bt = 0; bt < batch; ++bt) {
        pack(pk, ta, tb, a, b, bt);
        const size_t oc = (size_t)bt * c.stride, od = (size_t)bt * stride_d;
        auto columns = [&](long long first, long long last) {
            Acc out[R * C];
            for (long long jp = first; jp < last; ++jp) {
                for (long long ip = 0; ip < pk.row_panels; ++ip) {
                    tile_sums(pk.a.data() + (size_t)ip * R * k, pk.b.data() + (size_t)jp * C * k, k, out);
                    for (long long j = jp * C; j < std::min(n, (jp + 1) * C); ++j) {
                        for (long long i = ip * R; i < std::min(m, (ip + 1) * R); ++i) {
                            double v = alpha * (double)out[(i - ip * R) * C + (j - jp * C)];
                            // beta == 0: C is not read, so NaN or garbage in it does not reach D (as cuBLAS).
                            if (beta != 0.0) v += beta * load(c.p, c.type, oc + i + j * c.ld);
                            if (ep.bias != nullptr) v += load(ep.bias, ep.bias_type, (size_t)bt * ep.bias_stride + i);
                            if (ep.aux != nullptr)
                                store(ep.aux, ep.aux_type, (size_t)bt * ep.aux_stride + i + j * ep.aux_ld, v);
                            if (ep.act == Act::kRelu) v = v > 0 ? v : 0;
                            if (ep.act == Act::kGelu) v = gelu_tanh(v);
                            store(d, d_type, od + i + j * ldd, v);
                        }
                    }
                }
            }
        };
        std::vector<std::thread> helpers;
        for (long long t = 1; t < want; ++t)
            helpers.emplace_back(columns, pk.col_panels * t / want, pk.col_panels * (t + 1) / want);
        columns(0, pk.col_panels / want);
        for (auto& h : helpers) h.join();
    }
}

inline bool op_ok(cublasOperation_t op) { return op == CUBLAS_OP_N || op == CUBLAS_OP_T || op == CUBLAS_OP_C; }

// The accumulator precision and the scalar type of a compute type, or false when unsupported.
inline bool compute_types(cublasComputeType_t ct, cudaDataType* scalar, int* acc_bits) {
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

}  // namespace blas
}  // namespace __sim

#endif  // SIM_BLAS_CORE_H
