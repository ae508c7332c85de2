// Square GEMMs for benchmarks/bench_gemm.py: C = A * B with A row-major and B column-major, n a
// multiple of 64. The wmma entries give each warp one 16 x 16 tile of C (8 x 8 for double), four
// warps a block; they copy float or double data in, convert it to the fragment's input type on
// the device, multiply, and copy C back. gemm_sgemm makes the same product with cublasSgemm.
#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <mma.h>

using namespace nvcuda;

template <class TIn, class TStore, class TAcc, int M, int N, int K>
__global__ void gemm(const TStore* a, const TStore* b, TAcc* c, int n) {
    const int warp = (int)(threadIdx.x / 32);
    const int tiles_per_row = n / N;
    const int tile = (int)blockIdx.x * 4 + warp;
    const int row = (tile / tiles_per_row) * M, col = (tile % tiles_per_row) * N;
    wmma::fragment<wmma::matrix_a, M, N, K, TIn, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, M, N, K, TIn, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, M, N, K, TAcc> acc;
    wmma::fill_fragment(acc, TAcc(0));
    for (int k = 0; k < n; k += K) {
        wmma::load_matrix_sync(fa, a + (size_t)row * n + k, n);
        wmma::load_matrix_sync(fb, b + (size_t)col * n + k, n);
        wmma::mma_sync(acc, fa, fb, acc);
    }
    wmma::store_matrix_sync(c + (size_t)row * n + col, acc, n, wmma::mem_row_major);
}

__global__ void to_half(const float* x, __half* y, size_t count) {
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < count) y[i] = __float2half(x[i]);
}

template <class TIn, class TStore, class TAcc, class THost, int M, int N, int K>
static int run(const THost* a, const THost* b, TAcc* c, int n) {
    const size_t count = (size_t)n * n;
    THost *ha = nullptr, *hb = nullptr;
    TStore *da = nullptr, *db = nullptr;
    TAcc* dc = nullptr;
    cudaMalloc(&ha, count * sizeof(THost));
    cudaMalloc(&hb, count * sizeof(THost));
    cudaMalloc(&dc, count * sizeof(TAcc));
    cudaMemcpy(ha, a, count * sizeof(THost), cudaMemcpyHostToDevice);
    cudaMemcpy(hb, b, count * sizeof(THost), cudaMemcpyHostToDevice);
    if constexpr (sizeof(TStore) == sizeof(THost)) {
        da = (TStore*)ha;
        db = (TStore*)hb;
    } else {
        cudaMalloc(&da, count * sizeof(TStore));
        cudaMalloc(&db, count * sizeof(TStore));
        to_half<<<(unsigned)((count + 255) / 256), 256>>>(ha, da, count);
        to_half<<<(unsigned)((count + 255) / 256), 256>>>(hb, db, count);
    }
    gemm<TIn, TStore, TAcc, M, N, K><<<(unsigned)(count / (M * N) / 4), 128>>>(da, db, dc, n);
    cudaError_t err = cudaDeviceSynchronize();
    cudaMemcpy(c, dc, count * sizeof(TAcc), cudaMemcpyDeviceToHost);
    if ((void*)da != (void*)ha) {
        cudaFree(da);
        cudaFree(db);
    }
    cudaFree(ha);
    cudaFree(hb);
    cudaFree(dc);
    return (int)err;
}

// half inputs (rounded from a and b), float accumulation: m16n16k16.
extern "C" int gemm_half(const float* a, const float* b, float* c, int n) {
    return run<__half, __half, float, float, 16, 16, 16>(a, b, c, n);
}
// tf32 inputs (the low 13 bits of each float dropped), float accumulation: m16n16k8.
extern "C" int gemm_tf32(const float* a, const float* b, float* c, int n) {
    return run<wmma::precision::tf32, float, float, float, 16, 16, 8>(a, b, c, n);
}
// double: m8n8k4.
extern "C" int gemm_double(const double* a, const double* b, double* c, int n) {
    return run<double, double, double, double, 8, 8, 4>(a, b, c, n);
}
// The same product with cublasSgemm. Read column-major (as cuBLAS reads), row-major A is A^T,
// column-major B is B and row-major C is C^T = B^T A^T: op(B) = T, op(A) = N.
extern "C" int gemm_sgemm(const float* a, const float* b, float* c, int n) {
    const size_t bytes = (size_t)n * n * sizeof(float);
    float *da = nullptr, *db = nullptr, *dc = nullptr;
    cudaMalloc(&da, bytes);
    cudaMalloc(&db, bytes);
    cudaMalloc(&dc, bytes);
    cudaMemcpy(da, a, bytes, cudaMemcpyHostToDevice);
    cudaMemcpy(db, b, bytes, cudaMemcpyHostToDevice);
    cublasHandle_t h;
    cublasCreate(&h);
    const float one = 1.0f, zero = 0.0f;
    const cublasStatus_t s = cublasSgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, n, n, n, &one, db, n, da, n, &zero, dc, n);
    cublasDestroy(h);
    cudaMemcpy(c, dc, bytes, cudaMemcpyDeviceToHost);
    cudaFree(da);
    cudaFree(db);
    cudaFree(dc);
    return (int)s;
}
