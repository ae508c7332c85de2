// Double-precision nvcuda::wmma (m8n8k4, the DMMA shape): each warp computes one 8x8 tile of
// D = A * B + C with the accumulator loaded from memory (row- or column-major, as
// dmmaTensorCoreGemm loads its C tiles from shared memory) and stored in both layouts.
// Prints D; test_wmma_double.py computes it in numpy.
#include <cstdio>

#include <mma.h>

using namespace nvcuda;

const int M = 8, N = 8, K = 4;

// A (m x k) row-major, B (k x n) column-major, C (m x n) in `c_layout`; D row- and column-major.
__global__ void dmma(const double* a, const double* b, const double* c, double* d_row, double* d_col, int m, int n,
                     int k, int c_col_major) {
    __shared__ double tile[M * N];
    __shared__ double t2[M * N];
    const int tile_row = blockIdx.y * M, tile_col = blockIdx.x * N;
    wmma::fragment<wmma::matrix_a, M, N, K, double, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, M, N, K, double, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, M, N, K, double> acc;
    // Through shared memory, as the sample stages its tiles: one lane per element.
    for (int i = threadIdx.x; i < M * N; i += 32) {
        const int r = i / N, col = i % N;
        tile[i] = c_col_major ? c[(size_t)(tile_col + col) * m + tile_row + r]
                              : c[(size_t)(tile_row + r) * n + tile_col + col];
    }
    __syncwarp();
    if (c_col_major) {
        // The same tile, read back as column-major: element (r, col) at col * M + r.
        for (int i = threadIdx.x; i < M * N; i += 32) t2[(i % N) * M + i / N] = tile[i];
        __syncwarp();
        wmma::load_matrix_sync(acc, t2, M, wmma::mem_col_major);
    } else {
        wmma::load_matrix_sync(acc, tile, N, wmma::mem_row_major);
    }
    for (int kk = 0; kk < k; kk += K) {
        wmma::load_matrix_sync(fa, a + (size_t)tile_row * k + kk, k);
        wmma::load_matrix_sync(fb, b + (size_t)tile_col * k + kk, k);
        wmma::mma_sync(acc, fa, fb, acc);
    }
    wmma::store_matrix_sync(d_row + (size_t)tile_row * n + tile_col, acc, n, wmma::mem_row_major);
    wmma::store_matrix_sync(d_col + (size_t)tile_col * m + tile_row, acc, m, wmma::mem_col_major);
}

static double value_a(int i, int j) { return (double)((i * 7 + j * 3) % 9 - 4) * 0.25; }
static double value_b(int i, int j) { return (double)((i * 5 + j * 11) % 7 - 3) * 0.5; }
static double value_c(int i, int j) { return (double)((i * 3 + j * 13) % 11 - 5) * 0.125; }

int main() {
    const int m = 16, n = 24, k = 12;
    double ha[m * k], hb[k * n], hc[m * n], hc_col[m * n], row[m * n], col[m * n];
    for (int i = 0; i < m; ++i)
        for (int j = 0; j < k; ++j) ha[i * k + j] = value_a(i, j);
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < k; ++i) hb[j * k + i] = value_b(i, j);
    for (int i = 0; i < m; ++i)
        for (int j = 0; j < n; ++j) {
            hc[i * n + j] = value_c(i, j);
            hc_col[j * m + i] = value_c(i, j);
        }
    double *da, *db, *dc, *dr, *dl;
    cudaMalloc(&da, sizeof ha);
    cudaMalloc(&db, sizeof hb);
    cudaMalloc(&dc, sizeof hc);
    cudaMalloc(&dr, sizeof row);
    cudaMalloc(&dl, sizeof col);
    cudaMemcpy(da, ha, sizeof ha, cudaMemcpyHostToDevice);
    cudaMemcpy(db, hb, sizeof hb, cudaMemcpyHostToDevice);
    for (int c_col_major = 0; c_col_major < 2; ++c_col_major) {
        cudaMemcpy(dc, c_col_major ? hc_col : hc, sizeof hc, cudaMemcpyHostToDevice);
        dmma<<<dim3(n / N, m / M), 32>>>(da, db, dc, dr, dl, m, n, k, c_col_major);
        cudaError_t e = cudaDeviceSynchronize();
        cudaMemcpy(row, dr, sizeof row, cudaMemcpyDeviceToHost);
        cudaMemcpy(col, dl, sizeof col, cudaMemcpyDeviceToHost);
        std::printf("case c_col_major=%d %s\n", c_col_major, cudaGetErrorName(e));
        std::printf("row");
        for (int i = 0; i < m * n; ++i) std::printf(" %.17g", row[i]);
        std::printf("\ncol");
        for (int i = 0; i < m * n; ++i) std::printf(" %.17g", col[i]);
        std::printf("\n");
    }
    cudaFree(da);
    cudaFree(db);
    cudaFree(dc);
    cudaFree(dr);
    cudaFree(dl);
    return 0;
}
