// nvcuda::wmma GEMM for each multiplicand type: one warp per output tile, A row-major, B
// column-major, C row-major, alpha/beta applied element-wise to the accumulator fragment.
// Prints every element of C; the test computes C in numpy from the same input formulas.
#include <cstdio>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>

#include <type_traits>

using namespace nvcuda;

template <class TIn, class TStore, int M, int N, int K, class TAcc>
__global__ void wmma_gemm(const TStore* a, const TStore* b, TAcc* c, int m, int n, int k, TAcc alpha) {
    const int tile_row = blockIdx.y * M, tile_col = blockIdx.x * N;
    wmma::fragment<wmma::matrix_a, M, N, K, TIn, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, M, N, K, TIn, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, M, N, K, TAcc> acc;
    wmma::fill_fragment(acc, TAcc(0));
    for (int kk = 0; kk < k; kk += K) {
        wmma::load_matrix_sync(fa, a + (size_t)tile_row * k + kk, k);
        wmma::load_matrix_sync(fb, b + (size_t)tile_col * k + kk, k);
        if constexpr (std::is_same<TIn, wmma::precision::tf32>::value) {  // as CUDA's tf32 samples do
            for (int i = 0; i < fa.num_elements; ++i) fa.x[i] = wmma::__float_to_tf32(fa.x[i]);
            for (int i = 0; i < fb.num_elements; ++i) fb.x[i] = wmma::__float_to_tf32(fb.x[i]);
        }
        wmma::mma_sync(acc, fa, fb, acc);
    }
    for (int i = 0; i < acc.num_elements; ++i) acc.x[i] = alpha * acc.x[i];
    wmma::store_matrix_sync(c + (size_t)tile_row * n + tile_col, acc, n, wmma::mem_row_major);
}

// Inputs: small multiples of 1/4 (exact in half and bf16), or integers for int8.
static float value_a(int i, int j) { return (float)(((i * 7 + j * 3) % 9) - 4) * 0.25f; }
static float value_b(int i, int j) { return (float)(((i * 5 + j * 11) % 7) - 3) * 0.25f; }
// For tf32 and double: values with more mantissa bits than tf32 keeps.
static float fine_a(int i, int j) { return (float)((i * 37 + j * 101) % 1000) / 997.0f - 0.5f; }
static float fine_b(int i, int j) { return (float)((i * 53 + j * 29) % 1000) / 991.0f - 0.5f; }

template <class TIn, class TStore, int M, int N, int K, class TAcc, class Make>
static int run_case(const char* name, int m, int n, int k, Make make, float (*fa)(int, int), float (*fb)(int, int),
                    TAcc alpha) {
    TStore* ha = new TStore[m * k];
    TStore* hb = new TStore[k * n];
    TAcc* hc = new TAcc[m * n];
    for (int i = 0; i < m; ++i)
        for (int j = 0; j < k; ++j) ha[i * k + j] = make(fa(i, j));
    for (int j = 0; j < n; ++j)  // column-major: column j of B is contiguous
        for (int i = 0; i < k; ++i) hb[j * k + i] = make(fb(i, j));
    TStore *da, *db;
    TAcc* dc;
    cudaMalloc(&da, sizeof(TStore) * m * k);
    cudaMalloc(&db, sizeof(TStore) * k * n);
    cudaMalloc(&dc, sizeof(TAcc) * m * n);
    cudaMemcpy(da, ha, sizeof(TStore) * m * k, cudaMemcpyHostToDevice);
    cudaMemcpy(db, hb, sizeof(TStore) * k * n, cudaMemcpyHostToDevice);
    wmma_gemm<TIn, TStore, M, N, K, TAcc><<<dim3(n / N, m / M), 32>>>(da, db, dc, m, n, k, alpha);
    cudaError_t err = cudaDeviceSynchronize();
    cudaMemcpy(hc, dc, sizeof(TAcc) * m * n, cudaMemcpyDeviceToHost);
    std::printf("case %s %s", name, cudaGetErrorName(err));
    for (int i = 0; i < m * n; ++i) std::printf(" %.17g", (double)hc[i]);
    std::printf("\n");
    cudaFree(da);
    cudaFree(db);
    cudaFree(dc);
    delete[] ha;
    delete[] hb;
    delete[] hc;
    return err != cudaSuccess;
}

int main() {
    int failures = 0;
    failures += run_case<__half, __half, 16, 16, 16, float>("half_m16n16k16", 32, 32, 32,
                                                            [](float v) { return __float2half(v); }, value_a,
                                                            value_b, 2.0f);
    failures += run_case<__half, __half, 32, 8, 16, float>("half_m32n8k16", 32, 16, 32,
                                                           [](float v) { return __float2half(v); }, value_a,
                                                           value_b, 1.0f);
    failures += run_case<__nv_bfloat16, __nv_bfloat16, 8, 32, 16, float>(
        "bf16_m8n32k16", 16, 32, 32, [](float v) { return __float2bfloat16(v); }, value_a, value_b, 1.0f);
    failures += run_case<wmma::precision::tf32, float, 16, 16, 8, float>(
        "tf32_m16n16k8", 16, 32, 16, [](float v) { return v; }, fine_a, fine_b, 1.0f);
    failures += run_case<signed char, signed char, 16, 16, 16, int>(
        "s8_m16n16k16", 16, 16, 32, [](float v) { return (signed char)(v * 4.0f); }, value_a, value_b, 1);
    failures += run_case<double, double, 8, 8, 4, double>("f64_m8n8k4", 16, 8, 8, [](float v) { return (double)v; },
                                                          fine_a, fine_b, 1.0);
    std::printf("failures=%d\n", failures);
    return failures;
}
