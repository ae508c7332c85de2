// Each lane of a warp holds a share of a wmma fragment. Prints:
//   count NAME N      num_elements of some fragment types (a GPU's per-lane counts);
//   chain STATUS v..  a chain of four mma_sync calls per warp (D = A_s * B_s + D, s = 0..3) with
//                     no other warp operation between them, in 2 warps x 6 blocks; each lane then
//                     writes its accumulator elements itself (no store_matrix_sync), so the output
//                     is every element of each warp's D once, in an order the test does not rely on;
//   partial STATUS    mma_sync in a block of 16 threads (a warp without all 32 lanes).
// With "double", "gemm" or "loops" it runs only that case below instead: one program for all, so
// that each mode builds it once.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>

#include <type_traits>

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
    wmma::mma_sync(acc, fa, fb, acc);  // PARTIAL_MMA
    wmma::store_matrix_sync(out, acc, 16, wmma::mem_row_major);
}

// ---- "double": double-precision nvcuda::wmma (m8n8k4, the DMMA shape): each warp computes one 8x8
// tile of D = A * B + C with the accumulator loaded from memory (row- or column-major, as
// dmmaTensorCoreGemm loads its C tiles from shared memory) and stored in both layouts. Prints D;
// test_wmma_double.py computes it in numpy.
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

static int double_main() {
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

// ---- "gemm": nvcuda::wmma GEMM for each multiplicand type: one warp per output tile, A row-major,
// B column-major, C row-major, alpha/beta applied element-wise to the accumulator fragment. Prints
// every element of C; test_compat.py computes C in numpy from the same input formulas. In a
// namespace of its own: its input formulas share the double-precision case's names.
namespace gemm_case {
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

int gemm_main() {
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
}  // namespace gemm_case

// ---- "loops": a wmma kernel the simulator runs as block loops (simulator/block_loops_wmma.py) and
// two it keeps on fibers. Each prints its output tiles and whether they equal the host's product
// (every input is a small integer, so each float sum is exact). In a namespace of its own: its
// names are the shares case's.
namespace loops_case {
constexpr int kWarps = 4;   // warps per block: each makes one 16x16 output tile per group
constexpr int kGroups = 3;  // groups of kWarps output tiles; 2 blocks take them in turn
constexpr int kSteps = 3;   // 16x16x16 products summed into each output tile

// Output tile t = sum over s of A(t, s) * B(s), times 2 * scale. As cudaTensorCoreGemm's kernel:
// a grid-stride loop left by a uniform break, a parameter written once, `#pragma unroll` on
// loops that hold warp operations, a typedef in the body and a staging tile in shared memory.
__global__ void tiles_loop(const __half* a, const __half* b, float* out, int groups, float scale) {
    __shared__ float stage[kWarps][256];
    const int warp = (int)(threadIdx.x / 32), lane = (int)(threadIdx.x % 32);
    scale *= 2.0f;
    for (int group = blockIdx.x;; group += gridDim.x) {
        const int first = group * kWarps;
        if (first >= groups * kWarps) break;
        wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
        wmma::fill_fragment(acc, 0.0f);
#pragma unroll
        for (int s = 0; s < kSteps; ++s) {
            wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa;
            wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> fb;
            wmma::load_matrix_sync(fa, a + ((size_t)(first + warp) * kSteps + s) * 256, 16);
            if (s < kSteps) {
                wmma::load_matrix_sync(fb, b + (size_t)s * 256, 16);
            }
            wmma::mma_sync(acc, fa, fb, acc);
        }
        for (int e = 0; e < acc.num_elements; ++e) acc.x[e] *= scale;
        wmma::store_matrix_sync(&stage[warp][0], acc, 16, wmma::mem_row_major);
        __syncwarp();
        for (int i = lane; i < 64; i += 32) {
            typedef float4 chunk_t;
            ((chunk_t*)(out + (size_t)(first + warp) * 256))[i] = ((const chunk_t*)&stage[warp][0])[i];
        }
        __syncthreads();
    }
}

// Only warps 0 and 1 multiply: a branch on the thread's warp, which a GPU allows (each warp takes
// it whole) but block loops cannot show to be block-uniform, so the kernel keeps its fibers.
__global__ void warp_branch(const __half* a, const __half* b, float* out) {
    const int warp = (int)(threadIdx.x / 32);
    if (warp < 2) {
        wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa;
        wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> fb;
        wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
        wmma::fill_fragment(acc, 1.0f);
        wmma::load_matrix_sync(fa, a + (size_t)warp * kSteps * 256, 16);
        wmma::load_matrix_sync(fb, b, 16);
        wmma::mma_sync(acc, fa, fb, acc);
        wmma::store_matrix_sync(out + (size_t)warp * 256, acc, 16, wmma::mem_row_major);
    }
}

// Its mma_sync's arguments step a counter: two rounds of a block loop would evaluate them twice,
// so the kernel keeps its fibers (each warp multiplies by A(0, 0), then by A(1, 0)).
__global__ void counted(const __half* a, const __half* b, float* out) {
    const int warp = (int)(threadIdx.x / 32);
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa[2];
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    wmma::load_matrix_sync(fa[0], a, 16);
    wmma::load_matrix_sync(fa[1], a + kSteps * 256, 16);
    wmma::load_matrix_sync(fb, b, 16);
    int s = 0;
    wmma::mma_sync(acc, fa[s++], fb, acc);
    wmma::mma_sync(acc, fa[s++], fb, acc);
    wmma::store_matrix_sync(out + (size_t)warp * 256, acc, 16, wmma::mem_row_major);
}

static float value_a(int i) { return (float)((i * 7 + i / 16) % 5 - 2); }
static float value_b(int i) { return (float)((i * 3 + i / 16) % 3 - 1); }

// A(t, s)[r][c] (row-major) times B(s)[c][j] (col-major: element (c, j) at j * 16 + c).
static float product(const float* a, const float* b, int t, int steps, int r, int j) {
    float sum = 0.0f;
    for (int s = 0; s < steps; ++s)
        for (int c = 0; c < 16; ++c)
            sum += a[((size_t)t * kSteps + s) * 256 + r * 16 + c] * b[(size_t)s * 256 + j * 16 + c];
    return sum;
}

static void print_tiles(const char* name, cudaError_t status, const float* got, const float* want, int n) {
    bool same = true;
    for (int i = 0; i < n; ++i) same = same && got[i] == want[i];
    std::printf("%s %s %s\n", name, same ? "ok" : "WRONG", cudaGetErrorName(status));
    for (int i = 0; i < n; ++i) std::printf("%g%c", got[i], i % 256 == 255 ? '\n' : ' ');
}

int loops_main() {
    const int tiles = kGroups * kWarps, na = tiles * kSteps * 256, nb = kSteps * 256, nout = tiles * 256;
    float* fa = (float*)std::malloc(sizeof(float) * na);
    float* fb = (float*)std::malloc(sizeof(float) * nb);
    __half* ha = (__half*)std::malloc(sizeof(__half) * na);
    __half* hb = (__half*)std::malloc(sizeof(__half) * nb);
    float* got = (float*)std::malloc(sizeof(float) * nout);
    float* want = (float*)std::malloc(sizeof(float) * nout);
    for (int i = 0; i < na; ++i) ha[i] = __float2half(fa[i] = value_a(i));
    for (int i = 0; i < nb; ++i) hb[i] = __float2half(fb[i] = value_b(i));
    __half *da, *db;
    float* dout;
    cudaMalloc(&da, sizeof(__half) * na);
    cudaMalloc(&db, sizeof(__half) * nb);
    cudaMalloc(&dout, sizeof(float) * nout);
    cudaMemcpy(da, ha, sizeof(__half) * na, cudaMemcpyHostToDevice);
    cudaMemcpy(db, hb, sizeof(__half) * nb, cudaMemcpyHostToDevice);

    const float scale = 1.5f;
    tiles_loop<<<2, kWarps * 32>>>(da, db, dout, kGroups, scale);
    cudaError_t status = cudaDeviceSynchronize();
    cudaMemcpy(got, dout, sizeof(float) * nout, cudaMemcpyDeviceToHost);
    for (int t = 0; t < tiles; ++t)
        for (int r = 0; r < 16; ++r)
            for (int j = 0; j < 16; ++j) want[t * 256 + r * 16 + j] = 2.0f * scale * product(fa, fb, t, kSteps, r, j);
    print_tiles("tiles_loop", status, got, want, nout);

    cudaMemset(dout, 0, sizeof(float) * nout);
    warp_branch<<<1, kWarps * 32>>>(da, db, dout);
    status = cudaDeviceSynchronize();
    cudaMemcpy(got, dout, sizeof(float) * 2 * 256, cudaMemcpyDeviceToHost);
    for (int w = 0; w < 2; ++w)
        for (int r = 0; r < 16; ++r)
            for (int j = 0; j < 16; ++j) want[w * 256 + r * 16 + j] = 1.0f + product(fa, fb, w, 1, r, j);
    print_tiles("warp_branch", status, got, want, 2 * 256);

    cudaMemset(dout, 0, sizeof(float) * nout);
    counted<<<1, 2 * 32>>>(da, db, dout);
    status = cudaDeviceSynchronize();
    cudaMemcpy(got, dout, sizeof(float) * 2 * 256, cudaMemcpyDeviceToHost);
    for (int w = 0; w < 2; ++w)
        for (int r = 0; r < 16; ++r)
            for (int j = 0; j < 16; ++j)
                want[w * 256 + r * 16 + j] = product(fa, fb, 0, 1, r, j) + product(fa, fb, 1, 1, r, j);
    print_tiles("counted", status, got, want, 2 * 256);
    return 0;
}
}  // namespace loops_case

int main(int argc, char** argv) {
    if (argc > 1 && std::strcmp(argv[1], "double") == 0) return double_main();
    if (argc > 1 && std::strcmp(argv[1], "gemm") == 0) return gemm_case::gemm_main();
    if (argc > 1 && std::strcmp(argv[1], "loops") == 0) return loops_case::loops_main();
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
