// Each lane of a warp holds a share of a wmma fragment. Prints:
//   count NAME N      num_elements of some fragment types (a GPU's per-lane counts);
//   chain STATUS v..  a chain of four mma_sync calls per warp (D = A_s * B_s + D, s = 0..3) with
//                     no other warp operation between them, in 2 warps x 6 blocks; each lane then
//                     writes its accumulator elements itself (no store_matrix_sync), so the output
//                     is every element of each warp's D once, in an order the test does not rely on;
//   partial STATUS    mma_sync in a block of 16 threads (a warp without all 32 lanes).
#include <cstdio>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>

using namespace nvcuda;

constexpr int kSteps = 4, kWarps = 2, kBlocks = 6;

// A_s (16 x 16, row-major) and B_s (16 x 16, column-major), whole multiples of 1/8: exact in half.
__host__ __device__ inline float value_a(int s, int i, int k) { return (float)(((i * 5 + k * 3 + s * 7) % 9) - 4) * 0.125f; }
__host__ __device__ inline float value_b(int s, int k, int j) { return (float)(((k * 7 + j * 2 + s * 5) % 11) - 5) * 0.125f; }

__global__ void chain(const __half* a, const __half* b, float* out) {
    const int warp = (int)(threadIdx.x / 32), lane = (int)(threadIdx.x % 32);
    const int tile = (int)blockIdx.x * kWarps + warp;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, (float)tile);
    // Every step's operands are loaded first, so that the four multiplies follow each other
    // with no other warp operation between them.
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> as[kSteps];
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> bs[kSteps];
    for (int s = 0; s < kSteps; ++s) {
        wmma::load_matrix_sync(as[s], a + s * 256, 16);
        wmma::load_matrix_sync(bs[s], b + s * 256, 16);
    }
    for (int s = 0; s < kSteps; ++s) wmma::mma_sync(acc, as[s], bs[s], acc);
    for (int e = 0; e < acc.num_elements; ++e) out[(size_t)tile * 256 + lane * acc.num_elements + e] = acc.x[e];
}

__global__ void partial(const __half* a, const __half* b, float* out) {
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    wmma::load_matrix_sync(fa, a, 16);
    wmma::load_matrix_sync(fb, b, 16);
    wmma::mma_sync(acc, fa, fb, acc);
    wmma::store_matrix_sync(out, acc, 16, wmma::mem_row_major);
}

int main() {
    std::printf("count f32_accumulator_m16n16k16 %d\n",
                (int)wmma::fragment<wmma::accumulator, 16, 16, 16, float>::num_elements);
    std::printf("count tf32_a_m16n16k8 %d\n",
                (int)wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major>::num_elements);
    std::printf("count tf32_b_m16n16k8 %d\n",
                (int)wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::col_major>::num_elements);
    std::printf("count f64_a_m8n8k4 %d\n",
                (int)wmma::fragment<wmma::matrix_a, 8, 8, 4, double, wmma::row_major>::num_elements);
    std::printf("count f64_accumulator_m8n8k4 %d\n", (int)wmma::fragment<wmma::accumulator, 8, 8, 4, double>::num_elements);
    std::printf("count s8_a_m16n16k16 %d\n",
                (int)wmma::fragment<wmma::matrix_a, 16, 16, 16, signed char, wmma::row_major>::num_elements);
    std::printf("count bf16_b_m16n16k16 %d\n",
                (int)wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::col_major>::num_elements);

    __half ha[kSteps * 256], hb[kSteps * 256];
    for (int s = 0; s < kSteps; ++s)
        for (int i = 0; i < 16; ++i)
            for (int k = 0; k < 16; ++k) {
                ha[s * 256 + i * 16 + k] = __float2half(value_a(s, i, k));
                hb[s * 256 + i * 16 + k] = __float2half(value_b(s, k, i));  // column i of B_s
            }
    __half *da, *db;
    float* dout;
    const int tiles = kBlocks * kWarps;
    cudaMalloc(&da, sizeof ha);
    cudaMalloc(&db, sizeof hb);
    cudaMalloc(&dout, sizeof(float) * 256 * tiles);
    cudaMemcpy(da, ha, sizeof ha, cudaMemcpyHostToDevice);
    cudaMemcpy(db, hb, sizeof hb, cudaMemcpyHostToDevice);
    chain<<<kBlocks, 32 * kWarps>>>(da, db, dout);
    cudaError_t err = cudaDeviceSynchronize();
    float* hout = new float[256 * tiles];
    cudaMemcpy(hout, dout, sizeof(float) * 256 * tiles, cudaMemcpyDeviceToHost);
    for (int t = 0; t < tiles; ++t) {
        std::printf("chain %s", cudaGetErrorName(err));
        for (int i = 0; i < 256; ++i) std::printf(" %.9g", hout[t * 256 + i]);
        std::printf("\n");
    }
    delete[] hout;

    partial<<<1, 16>>>(da, db, dout);
    std::printf("partial %s\n", cudaGetErrorName(cudaDeviceSynchronize()));
    cudaFree(da);
    cudaFree(db);
    cudaFree(dout);
    return 0;
}
