// cuBLAS's half-precision GEMMs: cublasHgemm for each transpose pair, cublasHgemmStridedBatched
// and cublasHgemmBatched, with half alpha and beta, and an invalid argument. Inputs are irregular
// halves; every output prints as a float (exact), so the test can repeat cuBLAS's definition
// (cublasGemmEx with CUDA_R_16F and CUBLAS_COMPUTE_16F) in numpy.
#include <cstdio>
#include <vector>

#include <cublas_v2.h>
#include <cuda_fp16.h>

constexpr int kM = 13, kN = 7, kK = 301, kBatch = 3;

// An irregular value in (-1, 1) from the index, exact in half (a multiple of 1/256).
static float value(int which, long long i) {
    unsigned int x = (unsigned int)(i * 2654435761u) ^ (unsigned int)(which * 40503u + 0x9e3779b9u);
    x ^= x >> 15;
    x *= 0x2c1b3c6dU;
    x ^= x >> 12;
    return (float)((int)(x % 511u) - 255) / 256.0f;
}

static __half* device_values(int which, long long count) {
    std::vector<__half> h(count);
    for (long long i = 0; i < count; ++i) h[i] = __float2half(value(which, i));
    __half* d;
    cudaMalloc(&d, sizeof(__half) * count);
    cudaMemcpy(d, h.data(), sizeof(__half) * count, cudaMemcpyHostToDevice);
    return d;
}

static void print_case(const char* name, cublasStatus_t status, const __half* d, long long count) {
    std::vector<__half> h(count);
    cudaMemcpy(h.data(), d, sizeof(__half) * count, cudaMemcpyDeviceToHost);
    std::printf("case %s %d", name, (int)status);
    for (const __half& v : h) std::printf(" %.17g", __half2float(v));
    std::printf("\n");
}

int main() {
    cublasHandle_t h;
    cublasCreate(&h);
    const long long sa = kM * kK, sb = kK * kN, sc = kM * kN;
    __half* A = device_values(0, sa * kBatch);
    __half* B = device_values(1, sb * kBatch);
    __half* C = device_values(2, sc * kBatch);
    __half* C0 = device_values(2, sc * kBatch);
    const __half alpha = __float2half(1.5f), beta = __float2half(-0.5f);
    const cublasOperation_t ops[2] = {CUBLAS_OP_N, CUBLAS_OP_T};
    for (int ta = 0; ta < 2; ++ta) {
        for (int tb = 0; tb < 2; ++tb) {
            cudaMemcpy(C, C0, sizeof(__half) * sc, cudaMemcpyDeviceToDevice);
            // op(A) is kM x kK and op(B) kK x kN whichever the transposes: the leading dimensions follow.
            const cublasStatus_t s = cublasHgemm(h, ops[ta], ops[tb], kM, kN, kK, &alpha, A, ta ? kK : kM, B,
                                                 tb ? kN : kK, &beta, C, kM);
            char name[32];
            std::snprintf(name, sizeof(name), "hgemm_%c%c", "NT"[ta], "NT"[tb]);
            print_case(name, s, C, sc);
        }
    }
    cudaMemcpy(C, C0, sizeof(__half) * sc * kBatch, cudaMemcpyDeviceToDevice);
    cublasStatus_t s =
        cublasHgemmStridedBatched(h, CUBLAS_OP_T, CUBLAS_OP_N, kM, kN, kK, &alpha, A, kK, sa, B, kK, sb, &beta, C, kM,
                                  sc, kBatch);
    print_case("hgemm_strided_TN", s, C, sc * kBatch);

    cudaMemcpy(C, C0, sizeof(__half) * sc * kBatch, cudaMemcpyDeviceToDevice);
    std::vector<const __half*> as, bs;
    std::vector<__half*> cs;
    for (int i = 0; i < kBatch; ++i) {
        as.push_back(A + i * sa);
        bs.push_back(B + i * sb);
        cs.push_back(C + i * sc);
    }
    const __half** d_as;
    const __half** d_bs;
    __half** d_cs;
    cudaMalloc(&d_as, sizeof(void*) * kBatch);
    cudaMalloc(&d_bs, sizeof(void*) * kBatch);
    cudaMalloc(&d_cs, sizeof(void*) * kBatch);
    cudaMemcpy(d_as, as.data(), sizeof(void*) * kBatch, cudaMemcpyHostToDevice);
    cudaMemcpy(d_bs, bs.data(), sizeof(void*) * kBatch, cudaMemcpyHostToDevice);
    cudaMemcpy(d_cs, cs.data(), sizeof(void*) * kBatch, cudaMemcpyHostToDevice);
    s = cublasHgemmBatched(h, CUBLAS_OP_N, CUBLAS_OP_T, kM, kN, kK, &alpha, d_as, kM, d_bs, kN, &beta, d_cs, kM,
                           kBatch);
    print_case("hgemm_batched_NT", s, C, sc * kBatch);

    // lda smaller than op(A)'s rows: CUBLAS_STATUS_INVALID_VALUE, C untouched.
    s = cublasHgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, kM, kN, kK, &alpha, A, kM - 1, B, kK, &beta, C, kM);
    std::printf("bad_lda %d\n", (int)s);
    cublasDestroy(h);
    return 0;
}
