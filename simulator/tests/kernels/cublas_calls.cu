// The cuBLAS and cublasLt calls ML code makes, on matrices made from index formulas. Prints
// every output element; the test computes the same products in numpy.
#include <cstdio>
#include <vector>

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

static float formula(int which, int i) { return (float)(((i * (7 + 2 * which) + which * 5) % 13) - 6) * 0.125f; }

template <class T, class Make>
static T* device_matrix(int which, int count, Make make) {
    std::vector<T> h(count);
    for (int i = 0; i < count; ++i) h[i] = make(formula(which, i));
    T* d;
    cudaMalloc(&d, sizeof(T) * count);
    cudaMemcpy(d, h.data(), sizeof(T) * count, cudaMemcpyHostToDevice);
    return d;
}

template <class T, class Out>
static void print_case(const char* name, int status, const T* d, int count, Out out) {
    std::vector<T> h(count);
    cudaMemcpy(h.data(), d, sizeof(T) * count, cudaMemcpyDeviceToHost);
    std::printf("case %s %d", name, status);
    for (int i = 0; i < count; ++i) std::printf(" %.17g", (double)out(h[i]));
    std::printf("\n");
}

int main() {
    cublasHandle_t h;
    cublasCreate(&h);
    cublasSetMathMode(h, CUBLAS_TF32_TENSOR_OP_MATH);
    const int m = 5, n = 4, k = 3;
    auto as_float = [](float v) { return v; };
    auto same = [](auto v) { return v; };
    // Sgemm, every transpose pair: A is m x k (or k x m), B k x n (or n x k), C m x n, col-major.
    const cublasOperation_t ops[2] = {CUBLAS_OP_N, CUBLAS_OP_T};
    for (int ta = 0; ta < 2; ++ta) {
        for (int tb = 0; tb < 2; ++tb) {
            float* A = device_matrix<float>(0, m * k, as_float);
            float* B = device_matrix<float>(1, k * n, as_float);
            float* C = device_matrix<float>(2, m * n, as_float);
            const float alpha = 1.5f, beta = -0.5f;
            int s = cublasSgemm(h, ops[ta], ops[tb], m, n, k, &alpha, A, ta ? k : m, B, tb ? n : k, &beta, C, m);
            char name[32];
            std::snprintf(name, sizeof(name), "sgemm_%c%c", ta ? 'T' : 'N', tb ? 'T' : 'N');
            print_case(name, s, C, m * n, same);
            cudaFree(A);
            cudaFree(B);
            cudaFree(C);
        }
    }
    {  // Dgemm with beta 0: C holds NaN, which must not reach the result.
        double* A = device_matrix<double>(0, m * k, as_float);
        double* B = device_matrix<double>(1, k * n, as_float);
        std::vector<double> nan(m * n, 0.0 / 0.0);
        double* C;
        cudaMalloc(&C, sizeof(double) * m * n);
        cudaMemcpy(C, nan.data(), sizeof(double) * m * n, cudaMemcpyHostToDevice);
        const double alpha = 2.0, beta = 0.0;
        int s = cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, A, m, B, k, &beta, C, m);
        print_case("dgemm_beta0", s, C, m * n, same);
        cudaFree(A);
        cudaFree(B);
        cudaFree(C);
    }
    {  // GemmEx: half and bfloat16 inputs, float compute, float / half output.
        __half* A = device_matrix<__half>(0, m * k, [](float v) { return __float2half(v); });
        __half* B = device_matrix<__half>(1, k * n, [](float v) { return __float2half(v); });
        float* C = device_matrix<float>(2, m * n, as_float);
        const float alpha = 1.0f, beta = 1.0f;
        int s = cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &alpha, A, CUDA_R_16F, k, B, CUDA_R_16F, k, &beta,
                             C, CUDA_R_32F, m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT_TENSOR_OP);
        print_case("gemmex_half_TN", s, C, m * n, same);
        __half* Ch = device_matrix<__half>(2, m * n, [](float v) { return __float2half(v); });
        s = cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &alpha, A, CUDA_R_16F, k, B, CUDA_R_16F, k, &beta, Ch,
                         CUDA_R_16F, m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
        print_case("gemmex_half_out", s, Ch, m * n, [](__half v) { return __half2float(v); });
        __nv_bfloat16* Ab = device_matrix<__nv_bfloat16>(0, m * k, [](float v) { return __float2bfloat16(v); });
        __nv_bfloat16* Bb = device_matrix<__nv_bfloat16>(1, k * n, [](float v) { return __float2bfloat16(v); });
        float* Cb = device_matrix<float>(2, m * n, as_float);
        s = cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_T, m, n, k, &alpha, Ab, CUDA_R_16BF, m, Bb, CUDA_R_16BF, n, &beta,
                         Cb, CUDA_R_32F, m, CUBLAS_COMPUTE_32F_FAST_16BF, CUBLAS_GEMM_DEFAULT);
        print_case("gemmex_bf16_NT", s, Cb, m * n, same);
        // Code from before CUDA 11 passes a cudaDataType as the compute type: C++ still takes it.
        float* Cl = device_matrix<float>(2, m * n, as_float);
        s = cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &alpha, A, CUDA_R_16F, k, B, CUDA_R_16F, k, &beta, Cl,
                         CUDA_R_32F, m, CUDA_R_32F, CUBLAS_GEMM_DEFAULT);
        print_case("gemmex_legacy_compute", s, Cl, m * n, same);
        s = cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &alpha, A, CUDA_R_16F, k, B, CUDA_R_16F, k, &beta, Cl,
                         CUDA_R_32F, m, CUDA_R_8I, CUBLAS_GEMM_DEFAULT);
        std::printf("legacy_8i=%d\n", s);
        cudaFree(Cl);
        cudaFree(A);
        cudaFree(B);
        cudaFree(C);
        cudaFree(Ch);
        cudaFree(Ab);
        cudaFree(Bb);
        cudaFree(Cb);
    }
    const int batch = 3;
    {  // Strided batches, as attention does: A batch stride m*k, B k*n, C m*n.
        float* A = device_matrix<float>(0, batch * m * k, as_float);
        float* B = device_matrix<float>(1, batch * k * n, as_float);
        float* C = device_matrix<float>(2, batch * m * n, as_float);
        const float alpha = 0.5f, beta = 0.0f;
        int s = cublasSgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, A, m, m * k, B, k, k * n,
                                          &beta, C, m, m * n, batch);
        print_case("sgemm_strided", s, C, batch * m * n, same);
        float* C2 = device_matrix<float>(2, batch * m * n, as_float);
        const float beta1 = 1.0f;
        s = cublasGemmStridedBatchedEx(h, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &alpha, A, CUDA_R_32F, k, m * k, B,
                                       CUDA_R_32F, k, k * n, &beta1, C2, CUDA_R_32F, m, m * n, batch,
                                       CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT);
        print_case("gemmex_strided_TN", s, C2, batch * m * n, same);
        cudaFree(A);
        cudaFree(B);
        cudaFree(C);
        cudaFree(C2);
    }
    {  // Bad arguments: lda too small; a matrix past the end of its allocation.
        float* A = device_matrix<float>(0, m * k, as_float);
        float* B = device_matrix<float>(1, k * n, as_float);
        float* C = device_matrix<float>(2, m * n, as_float);
        const float one = 1.0f;
        int bad_lda = cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, A, m - 1, B, k, &one, C, m);
        int past_end = cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n + 1, k, &one, A, m, B, k, &one, C, m);
        std::printf("bad_lda=%s\npast_end=%s\n", cublasGetStatusName((cublasStatus_t)bad_lda),
                    cublasGetStatusName((cublasStatus_t)past_end));
        cudaFree(A);
        cudaFree(B);
        cudaFree(C);
    }
    cublasDestroy(h);

    // cublasLt as llm.c's matmul forward: out (m x n) = W^T (m x k)... with bias and GELU.
    cublasLtHandle_t lt;
    cublasLtCreate(&lt);
    for (int epi = 0; epi < 3; ++epi) {
        float* W = device_matrix<float>(0, k * m, as_float);  // k x m, used transposed
        float* X = device_matrix<float>(1, k * n, as_float);  // k x n
        float* bias = device_matrix<float>(3, m, as_float);
        float* D = device_matrix<float>(2, m * n, as_float);
        float* aux = device_matrix<float>(2, m * n, as_float);
        cublasLtMatmulDesc_t desc;
        cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F);
        cublasOperation_t t = CUBLAS_OP_T, nn = CUBLAS_OP_N;
        cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof(t));
        cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &nn, sizeof(nn));
        const cublasLtEpilogue_t epilogues[3] = {CUBLASLT_EPILOGUE_BIAS, CUBLASLT_EPILOGUE_GELU_BIAS,
                                                 CUBLASLT_EPILOGUE_GELU_AUX_BIAS};
        cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogues[epi], sizeof(epilogues[epi]));
        cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias));
        if (epi == 2) {
            cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, &aux, sizeof(aux));
            int64_t ld = m;
            cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, &ld, sizeof(ld));
        }
        cublasLtMatrixLayout_t wl, xl, dl;
        cublasLtMatrixLayoutCreate(&wl, CUDA_R_32F, k, m, k);
        cublasLtMatrixLayoutCreate(&xl, CUDA_R_32F, k, n, k);
        cublasLtMatrixLayoutCreate(&dl, CUDA_R_32F, m, n, m);
        cublasLtMatmulPreference_t pref;
        cublasLtMatmulPreferenceCreate(&pref);
        uint64_t ws = 1 << 20;
        cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws));
        cublasLtMatmulHeuristicResult_t heuristic;
        int found = 0;
        cublasLtMatmulAlgoGetHeuristic(lt, desc, wl, xl, dl, dl, pref, 1, &heuristic, &found);
        const float alpha = 1.0f, beta = 0.0f;
        int s = cublasLtMatmul(lt, desc, &alpha, W, wl, X, xl, &beta, D, dl, D, dl, &heuristic.algo, nullptr, 0, 0);
        const char* names[3] = {"lt_bias", "lt_gelu_bias", "lt_gelu_aux_bias"};
        print_case(names[epi], s * 10 + found, D, m * n, same);
        if (epi == 2) print_case("lt_aux", 0, aux, m * n, same);
        cublasLtMatmulPreferenceDestroy(pref);
        cublasLtMatrixLayoutDestroy(wl);
        cublasLtMatrixLayoutDestroy(xl);
        cublasLtMatrixLayoutDestroy(dl);
        cublasLtMatmulDescDestroy(desc);
        cudaFree(W);
        cudaFree(X);
        cudaFree(bias);
        cudaFree(D);
        cudaFree(aux);
    }
    cublasLtDestroy(lt);
    return 0;
}
