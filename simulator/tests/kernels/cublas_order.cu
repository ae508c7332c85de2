// cuBLAS GEMMs large enough to be shared out between threads, with shapes that are not multiples
// of any panel size: Sgemm for each transpose pair, a strided batch, and Dgemm. The inputs are
// irregular floats; every output is printed with all of its digits, so the test can check that
// each element sums its k products one after another in order of k, rounding as the compute
// type does (cuBLAS's documented order is unspecified; the simulator's is this one).
#include <cstdio>
#include <vector>

#include <cublas_v2.h>

constexpr int kM = 70, kN = 53, kK = 2903, kBatch = 2;

// An irregular value in (-1, 1) from the index (a 32-bit mix; exact in float and double).
static float value(int which, long long i);

// An integer in [-127, 127] from the same mix, for the int8 GEMM.
static signed char small(int which, long long i) { return (signed char)(value(which, i) * 127.0f); }

static float value(int which, long long i) {
    unsigned int x = (unsigned int)(i * 2654435761u) ^ (unsigned int)(which * 40503u + 0x9e3779b9u);
    x ^= x >> 15;
    x *= 0x2c1b3c6dU;
    x ^= x >> 12;
    return (float)((int)(x % 2001u) - 1000) / 1024.0f;
}

template <class T>
static T* device_values(int which, long long count) {
    std::vector<T> h(count);
    for (long long i = 0; i < count; ++i) h[i] = (T)value(which, i);
    T* d;
    cudaMalloc(&d, sizeof(T) * count);
    cudaMemcpy(d, h.data(), sizeof(T) * count, cudaMemcpyHostToDevice);
    return d;
}

template <class T>
static void print_case(const char* name, cublasStatus_t status, const T* d, long long count) {
    std::vector<T> h(count);
    cudaMemcpy(h.data(), d, sizeof(T) * count, cudaMemcpyDeviceToHost);
    std::printf("case %s %d", name, (int)status);
    for (long long i = 0; i < count; ++i) std::printf(" %.17g", (double)h[i]);
    std::printf("\n");
}

int main() {
    cublasHandle_t h;
    cublasCreate(&h);
    const long long mk = (long long)kM * kK, kn = (long long)kK * kN, mn = (long long)kM * kN;
    float* a = device_values<float>(0, mk * kBatch);
    float* b = device_values<float>(1, kn * kBatch);
    float* c = device_values<float>(2, mn * kBatch);
    float* d;
    cudaMalloc(&d, sizeof(float) * mn * kBatch);
    const float alpha = 1.0f, beta = -0.5f, zero = 0.0f;
    const cublasOperation_t ops[2] = {CUBLAS_OP_N, CUBLAS_OP_T};
    const char names[2] = {'N', 'T'};
    for (int ta = 0; ta < 2; ++ta) {
        for (int tb = 0; tb < 2; ++tb) {
            cudaMemcpy(d, c, sizeof(float) * mn, cudaMemcpyDeviceToDevice);
            const int lda = ta == 0 ? kM : kK, ldb = tb == 0 ? kK : kN;
            cublasStatus_t s = cublasSgemm(h, ops[ta], ops[tb], kM, kN, kK, &alpha, a, lda, b, ldb, &beta, d, kM);
            char name[16];
            std::snprintf(name, sizeof name, "sgemm_%c%c", names[ta], names[tb]);
            print_case(name, s, d, mn);
        }
    }
    cublasStatus_t s = cublasSgemmStridedBatched(h, CUBLAS_OP_T, CUBLAS_OP_N, kM, kN, kK, &alpha, a, kK, mk, b, kK,
                                                 kn, &zero, d, kM, mn, kBatch);
    print_case("sgemm_strided_TN", s, d, mn * kBatch);
    double* ad = device_values<double>(0, mk);
    double* bd = device_values<double>(1, kn);
    double* dd;
    cudaMalloc(&dd, sizeof(double) * mn);
    const double one = 1.0, dzero = 0.0;
    s = cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, kM, kN, kK, &one, ad, kM, bd, kK, &dzero, dd, kM);
    print_case("dgemm_NN", s, dd, mn);
    // int8 inputs, int32 accumulation and output (CUBLAS_COMPUTE_32I): A transposed, as GPUs want.
    std::vector<signed char> h8a(mk), h8b(kn);
    for (long long i = 0; i < mk; ++i) h8a[i] = small(0, i);
    for (long long i = 0; i < kn; ++i) h8b[i] = small(1, i);
    signed char *a8, *b8;
    int* d32;
    cudaMalloc(&a8, mk);
    cudaMalloc(&b8, kn);
    cudaMalloc(&d32, sizeof(int) * mn);
    cudaMemcpy(a8, h8a.data(), mk, cudaMemcpyHostToDevice);
    cudaMemcpy(b8, h8b.data(), kn, cudaMemcpyHostToDevice);
    const int ione = 1, izero = 0;
    s = cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, kM, kN, kK, &ione, a8, CUDA_R_8I, kK, b8, CUDA_R_8I, kK, &izero, d32,
                     CUDA_R_32I, kM, CUBLAS_COMPUTE_32I, CUBLAS_GEMM_DEFAULT);
    print_case("gemmex_int8_TN", s, d32, mn);
    cudaFree(a8);
    cudaFree(b8);
    cudaFree(d32);
    cublasDestroy(h);
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
    cudaFree(d);
    cudaFree(ad);
    cudaFree(bd);
    cudaFree(dd);
    return 0;
}
