// cuBLAS's pointer-array batched calls: cublasDgemmBatched and cublasS/DgetrfBatched (LU with
// partial pivoting, and without when the pivot array is null), on matrices made from an index
// formula. Prints every output element; the test computes the same in numpy.
#include <cstdio>
#include <vector>

#include <cublas_v2.h>

static double formula(int which, int i) { return (double)(((i * (7 + 2 * which) + which * 5) % 17) - 8) * 0.25; }

template <class T>
static void print_case(const char* name, int status, const T* d, int count) {
    std::vector<T> h(count);
    cudaMemcpy(h.data(), d, sizeof(T) * count, cudaMemcpyDeviceToHost);
    std::printf("case %s %d", name, status);
    for (int i = 0; i < count; ++i) std::printf(" %.17g", (double)h[i]);
    std::printf("\n");
}

// `batch` device matrices of `count` elements each from formula(which + b, i), and a device
// array of pointers to them.
template <class T>
static T** device_batch(int which, int batch, int count, std::vector<T*>& mats) {
    mats.resize(batch);
    for (int b = 0; b < batch; ++b) {
        std::vector<T> h(count);
        for (int i = 0; i < count; ++i) h[i] = (T)formula(which + b, i);
        cudaMalloc(&mats[b], sizeof(T) * count);
        cudaMemcpy(mats[b], h.data(), sizeof(T) * count, cudaMemcpyHostToDevice);
    }
    T** d;
    cudaMalloc(&d, sizeof(T*) * batch);
    cudaMemcpy(d, mats.data(), sizeof(T*) * batch, cudaMemcpyHostToDevice);
    return d;
}

int main() {
    cublasHandle_t h;
    cublasCreate(&h);
    // DgemmBatched: C_b = 1.5 op(A_b) op(B_b) - 0.5 C_b, m x n x k, two matrices, each transpose pair.
    const int m = 5, n = 4, k = 3, batch = 2;
    const cublasOperation_t ops[2] = {CUBLAS_OP_N, CUBLAS_OP_T};
    const double alpha = 1.5, beta = -0.5;
    for (int ta = 0; ta < 2; ++ta)
        for (int tb = 0; tb < 2; ++tb) {
            std::vector<double*> a, b, c;
            double** da = device_batch<double>(0, batch, m * k, a);
            double** db = device_batch<double>(2, batch, k * n, b);
            double** dc = device_batch<double>(4, batch, m * n, c);
            const int lda = ta ? k : m, ldb = tb ? n : k;
            const int s = (int)cublasDgemmBatched(h, ops[ta], ops[tb], m, n, k, &alpha, da, lda, db, ldb, &beta, dc,
                                                  m, batch);
            for (int i = 0; i < batch; ++i) {
                char name[64];
                std::snprintf(name, sizeof name, "dgemm_batched_%c%c_%d", "NT"[ta], "NT"[tb], i);
                print_case(name, s, c[i], m * n);
            }
        }
    // getrfBatched: three 6 x 6 matrices (lda 7); the third has a zero column, so U has a zero
    // pivot and info names it.
    const int N = 6, LDA = 7, B = 3;
    {
        std::vector<double*> a;
        double** da = device_batch<double>(1, B, LDA * N, a);
        cudaMemset(a[2] + 2 * LDA, 0, sizeof(double) * LDA);  // column 2 of the third matrix
        int *piv, *info;
        cudaMalloc(&piv, sizeof(int) * N * B);
        cudaMalloc(&info, sizeof(int) * B);
        const int s = (int)cublasDgetrfBatched(h, N, da, LDA, piv, info, B);
        for (int i = 0; i < B; ++i) {
            char name[64];
            std::snprintf(name, sizeof name, "dgetrf_%d", i);
            print_case(name, s, a[i], LDA * N);
        }
        print_case("dgetrf_pivots", s, piv, N * B);
        print_case("dgetrf_info", s, info, B);
    }
    {
        std::vector<float*> a;
        float** da = device_batch<float>(1, 1, LDA * N, a);
        int *piv, *info;
        cudaMalloc(&piv, sizeof(int) * N);
        cudaMalloc(&info, sizeof(int));
        const int s = (int)cublasSgetrfBatched(h, N, da, LDA, piv, info, 1);
        print_case("sgetrf_0", s, a[0], LDA * N);
        print_case("sgetrf_pivots", s, piv, N);
        print_case("sgetrf_info", s, info, 1);
    }
    {
        // No pivot array: no row exchanges. A diagonally dominant matrix (formula + 10 I).
        std::vector<double*> a;
        double** da = device_batch<double>(1, 1, LDA * N, a);
        std::vector<double> hm(LDA * N);
        cudaMemcpy(hm.data(), a[0], sizeof(double) * LDA * N, cudaMemcpyDeviceToHost);
        for (int i = 0; i < N; ++i) hm[i + i * LDA] += 10.0;
        cudaMemcpy(a[0], hm.data(), sizeof(double) * LDA * N, cudaMemcpyHostToDevice);
        int* info;
        cudaMalloc(&info, sizeof(int));
        const int s = (int)cublasDgetrfBatched(h, N, da, LDA, nullptr, info, 1);
        print_case("dgetrf_nopiv", s, a[0], LDA * N);
        print_case("dgetrf_nopiv_info", s, info, 1);
    }
    // Bad arguments: lda < n, a negative batch, a null handle.
    std::printf("bad_lda=%d\n", (int)cublasDgetrfBatched(h, 4, nullptr, 3, nullptr, nullptr, 1));
    std::printf("bad_batch=%d\n", (int)cublasDgetrfBatched(h, 4, nullptr, 4, nullptr, nullptr, -1));
    std::printf("bad_handle=%d\n", (int)cublasDgetrfBatched(nullptr, 4, nullptr, 4, nullptr, nullptr, 1));
    std::printf("bad_gemm_batch=%d\n", (int)cublasDgemmBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &alpha, nullptr,
                                                                2, nullptr, 2, &beta, nullptr, 2, -1));
    cublasDestroy(h);
    std::printf("done\n");
    return 0;
}
