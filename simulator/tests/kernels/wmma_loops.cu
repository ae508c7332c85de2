// A wmma kernel the simulator runs as block loops (simulator/block_loops_wmma.py) and two it keeps
// on fibers. Each prints its output tiles and whether they equal the host's product (every input
// is a small integer, so each float sum is exact).
#include <cstdio>
#include <cstdlib>
#include <cuda_fp16.h>
#include <mma.h>
using namespace nvcuda;

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

int main() {
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
