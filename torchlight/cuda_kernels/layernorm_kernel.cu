// Layer normalisation over the last dim, forward and backward, float32, row-major
// (C-contiguous) data seen as [rows, hidden] (rows = product of the leading dims).
//
// Maths (matches torchlight.backends.cpu.CPUBackend):
//   forward   mean = sum(x) / hidden; var = sum((x - mean)^2) / hidden (two passes, so it is
//             a sum of squares and never negative); rstd = 1 / sqrt(var + eps);
//             y = (x - mean) * rstd * gamma + beta.
//   backward  xhat = (x - mean) * rstd; g = dy * gamma;
//             dx = rstd * (g - mean_j(g) - xhat * mean_j(g * xhat));
//             dgamma[j] = sum_rows(dy * xhat); dbeta[j] = sum_rows(dy).
//
// Launchers (host pointers; each copies in, launches, copies out and frees its device memory):
//
//   int tl_layernorm_fw(const float* x, const float* gamma, const float* beta,
//                       float* y, float* mean, float* rstd,
//                       int64_t rows, int64_t hidden, float eps);
//       x, y: rows*hidden floats; gamma, beta: hidden floats; mean, rstd: rows floats.
//   int tl_layernorm_bw(const float* dy, const float* x, const float* gamma,
//                       const float* mean, const float* rstd,
//                       float* dx, float* dgamma, float* dbeta,
//                       int64_t rows, int64_t hidden);
//       dy, x, dx: rows*hidden floats; gamma, dgamma, dbeta: hidden floats; mean, rstd: rows.
//       With rows == 0 and hidden > 0, dgamma and dbeta are set to zeros (an empty sum)
//       on the host and nothing is launched.
//   int tl_layernorm_abi_version(void);
//       returns TL_ABI_VERSION, so a loader can tell this library from any other .so.
//
// Return codes: 0 success; a cudaError_t value when a CUDA call failed (the first failure; all
// device memory is freed and the pending error cleared, so the next call is unaffected; a
// sticky error left by an earlier kernel fault is returned at entry, see tl_common.cuh);
// TL_ERR_NEGATIVE_SIZE (20001) for a size < 0; TL_ERR_NULL_POINTER (20002) for a NULL
// required pointer; TL_ERR_SIZE_OVERFLOW (20003) when an element or byte count overflows;
// TL_ERR_BAD_ARGUMENT (20004) for eps not > 0 or hidden == 0 with rows > 0 (the statistics of
// an empty row are undefined). Launchers never print, exit or throw.
//
// Kernels: the row kernels run one block per row (blocks grid-stride over rows; threads stride
// over the row by blockDim.x, so any hidden size works) and reduce with warp shuffles plus
// shared memory. dgamma/dbeta are deterministic (no atomics): a first kernel gives each block
// a tile of 32 columns and a chunk of rows, one warp per row at a time with lane j on column j,
// so loads are coalesced; the warps' sums are combined in a fixed order through shared memory
// into one partial per (chunk, column); a second kernel sums the chunks of each column in
// order. The same input therefore always gives bit-identical gradients.
#include "tl_common.cuh"

// Rows per dgamma/dbeta chunk grow with the row count so the partial buffer stays at most
// TL_MAX_CHUNKS * hidden floats.
#define TL_MIN_CHUNK_ROWS 32
#define TL_MAX_CHUNKS 256
#define TL_PARAM_WARPS 8

__global__ void tl_layernorm_fw_kernel(const float* __restrict__ x, const float* __restrict__ gamma,
                                       const float* __restrict__ beta, float* __restrict__ y,
                                       float* __restrict__ mean_out, float* __restrict__ rstd_out,
                                       int64_t rows, int64_t hidden, float eps) {
    extern __shared__ float tl_smem[];
    const float inv_hidden = 1.0f / (float)hidden;
    for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
        const float* xrow = x + row * hidden;
        float* yrow = y + row * hidden;

        float sum = 0.0f;
        for (int64_t j = threadIdx.x; j < hidden; j += blockDim.x) sum += xrow[j];
        const float mean = tl_block_sum(sum, tl_smem) * inv_hidden;

        float sq = 0.0f;
        for (int64_t j = threadIdx.x; j < hidden; j += blockDim.x) {
            const float c = xrow[j] - mean;
            sq += c * c;
        }
        const float var = tl_block_sum(sq, tl_smem) * inv_hidden;
        const float rstd = rsqrtf(var + eps);

        if (threadIdx.x == 0) {
            mean_out[row] = mean;
            rstd_out[row] = rstd;
        }
        for (int64_t j = threadIdx.x; j < hidden; j += blockDim.x) {
            yrow[j] = (xrow[j] - mean) * rstd * gamma[j] + beta[j];
        }
    }
}

__global__ void tl_layernorm_bw_dx_kernel(const float* __restrict__ dy, const float* __restrict__ x,
                                          const float* __restrict__ gamma, const float* __restrict__ mean,
                                          const float* __restrict__ rstd, float* __restrict__ dx,
                                          int64_t rows, int64_t hidden) {
    extern __shared__ float tl_smem[];
    const float inv_hidden = 1.0f / (float)hidden;
    for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
        const float* xrow = x + row * hidden;
        const float* dyrow = dy + row * hidden;
        float* dxrow = dx + row * hidden;
        const float mu = mean[row];
        const float r = rstd[row];

        float sum_g = 0.0f;
        float sum_gx = 0.0f;
        for (int64_t j = threadIdx.x; j < hidden; j += blockDim.x) {
            const float xhat = (xrow[j] - mu) * r;
            const float g = dyrow[j] * gamma[j];
            sum_g += g;
            sum_gx += g * xhat;
        }
        tl_block_sum2(&sum_g, &sum_gx, tl_smem);
        const float mean_g = sum_g * inv_hidden;
        const float mean_gx = sum_gx * inv_hidden;

        for (int64_t j = threadIdx.x; j < hidden; j += blockDim.x) {
            const float xhat = (xrow[j] - mu) * r;
            const float g = dyrow[j] * gamma[j];
            dxrow[j] = r * (g - mean_g - xhat * mean_gx);
        }
    }
}

// Stage 1 of dgamma/dbeta: block item = (column tile, row chunk); writes one partial per
// (chunk, column) into part_g/part_b laid out [chunks, hidden]. blockDim.x = 32 * warps.
__global__ void tl_layernorm_bw_param_partial_kernel(const float* __restrict__ dy,
                                                     const float* __restrict__ x,
                                                     const float* __restrict__ mean,
                                                     const float* __restrict__ rstd,
                                                     float* __restrict__ part_g,
                                                     float* __restrict__ part_b, int64_t rows,
                                                     int64_t hidden, int64_t tiles,
                                                     int64_t chunks, int64_t chunk_rows) {
    extern __shared__ float tl_smem[];  // [2][warps][32]
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    const int nwarps = blockDim.x >> 5;
    float* sh_g = tl_smem;
    float* sh_b = tl_smem + nwarps * 32;
    const int64_t items = tiles * chunks;
    for (int64_t item = blockIdx.x; item < items; item += gridDim.x) {
        const int64_t tile = item % tiles;
        const int64_t chunk = item / tiles;
        const int64_t col = tile * 32 + lane;
        const int64_t first = chunk * chunk_rows;
        const int64_t last = first + chunk_rows < rows ? first + chunk_rows : rows;

        float acc_g = 0.0f;
        float acc_b = 0.0f;
        if (col < hidden) {
            for (int64_t row = first + warp; row < last; row += nwarps) {
                const float d = dy[row * hidden + col];
                acc_g += d * ((x[row * hidden + col] - mean[row]) * rstd[row]);
                acc_b += d;
            }
        }
        sh_g[warp * 32 + lane] = acc_g;
        sh_b[warp * 32 + lane] = acc_b;
        __syncthreads();
        if (warp == 0 && col < hidden) {
            float g = 0.0f;
            float b = 0.0f;
            for (int w = 0; w < nwarps; ++w) {
                g += sh_g[w * 32 + lane];
                b += sh_b[w * 32 + lane];
            }
            part_g[chunk * hidden + col] = g;
            part_b[chunk * hidden + col] = b;
        }
        // The next item overwrites the shared tile warp 0 is reading.
        __syncthreads();
    }
}

// Stage 2 of dgamma/dbeta: each thread sums one column's partials over the chunks in order.
__global__ void tl_layernorm_bw_param_final_kernel(const float* __restrict__ part_g,
                                                   const float* __restrict__ part_b,
                                                   float* __restrict__ dgamma, float* __restrict__ dbeta,
                                                   int64_t hidden, int64_t chunks) {
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t col = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; col < hidden; col += stride) {
        float g = 0.0f;
        float b = 0.0f;
        for (int64_t c = 0; c < chunks; ++c) {
            g += part_g[c * hidden + col];
            b += part_b[c * hidden + col];
        }
        dgamma[col] = g;
        dbeta[col] = b;
    }
}

TL_EXPORT int tl_layernorm_abi_version(void) { return TL_ABI_VERSION; }

TL_EXPORT int tl_layernorm_fw(const float* x, const float* gamma, const float* beta, float* y,
                               float* mean, float* rstd, int64_t rows, int64_t hidden, float eps) {
    if (rows < 0 || hidden < 0) return TL_ERR_NEGATIVE_SIZE;
    if (!(eps > 0.0f)) return TL_ERR_BAD_ARGUMENT;
    int64_t total = 0;
    size_t bytes = 0, row_bytes = 0, col_bytes = 0;
    int rc = tl_mul(rows, hidden, &total);
    if (rc == 0) rc = tl_bytes(total, &bytes);
    if (rc == 0) rc = tl_bytes(rows, &row_bytes);
    if (rc == 0) rc = tl_bytes(hidden, &col_bytes);
    if (rc != 0) return rc;
    if (rows == 0) return 0;
    if (hidden == 0) return TL_ERR_BAD_ARGUMENT;
    if (x == NULL || gamma == NULL || beta == NULL || y == NULL || mean == NULL || rstd == NULL) {
        return TL_ERR_NULL_POINTER;
    }

    tl_buffers bufs;
    tl_buffers_init(&bufs);
    rc = tl_begin();
    if (rc != 0) return rc;
    float *d_x = NULL, *d_gamma = NULL, *d_beta = NULL, *d_y = NULL, *d_mean = NULL, *d_rstd = NULL;
    TL_CHECK(&bufs, tl_upload(&bufs, &d_x, x, bytes));
    TL_CHECK(&bufs, tl_upload(&bufs, &d_gamma, gamma, col_bytes));
    TL_CHECK(&bufs, tl_upload(&bufs, &d_beta, beta, col_bytes));
    TL_CHECK(&bufs, tl_alloc(&bufs, &d_y, bytes));
    TL_CHECK(&bufs, tl_alloc(&bufs, &d_mean, row_bytes));
    TL_CHECK(&bufs, tl_alloc(&bufs, &d_rstd, row_bytes));

    const unsigned int grid = tl_grid(rows);
    const int block = tl_row_block(hidden);
    const size_t smem = TL_REDUCE_SMEM_FLOATS * sizeof(float);
    tl_layernorm_fw_kernel<<<grid, block, smem>>>(d_x, d_gamma, d_beta, d_y, d_mean, d_rstd, rows, hidden,
                                                  eps);
    TL_CHECK(&bufs, cudaGetLastError());
    TL_CHECK(&bufs, cudaDeviceSynchronize());
    TL_CHECK(&bufs, cudaMemcpy(y, d_y, bytes, cudaMemcpyDeviceToHost));
    TL_CHECK(&bufs, cudaMemcpy(mean, d_mean, row_bytes, cudaMemcpyDeviceToHost));
    TL_CHECK(&bufs, cudaMemcpy(rstd, d_rstd, row_bytes, cudaMemcpyDeviceToHost));
    return tl_finish(&bufs, 0);
}

TL_EXPORT int tl_layernorm_bw(const float* dy, const float* x, const float* gamma, const float* mean,
                               const float* rstd, float* dx, float* dgamma, float* dbeta, int64_t rows,
                               int64_t hidden) {
    if (rows < 0 || hidden < 0) return TL_ERR_NEGATIVE_SIZE;
    int64_t total = 0;
    size_t bytes = 0, row_bytes = 0, col_bytes = 0;
    int rc = tl_mul(rows, hidden, &total);
    if (rc == 0) rc = tl_bytes(total, &bytes);
    if (rc == 0) rc = tl_bytes(rows, &row_bytes);
    if (rc == 0) rc = tl_bytes(hidden, &col_bytes);
    if (rc != 0) return rc;
    if (hidden == 0) return rows == 0 ? 0 : TL_ERR_BAD_ARGUMENT;
    if (dgamma == NULL || dbeta == NULL) return TL_ERR_NULL_POINTER;
    if (rows == 0) {
        memset(dgamma, 0, col_bytes);
        memset(dbeta, 0, col_bytes);
        return 0;
    }
    if (dy == NULL || x == NULL || gamma == NULL || mean == NULL || rstd == NULL || dx == NULL) {
        return TL_ERR_NULL_POINTER;
    }

    int64_t chunk_rows = (rows + TL_MAX_CHUNKS - 1) / TL_MAX_CHUNKS;
    if (chunk_rows < TL_MIN_CHUNK_ROWS) chunk_rows = TL_MIN_CHUNK_ROWS;
    const int64_t chunks = (rows + chunk_rows - 1) / chunk_rows;
    const int64_t tiles = (hidden + 31) / 32;
    int64_t part_count = 0;
    size_t part_bytes = 0;
    rc = tl_mul(chunks, hidden, &part_count);
    if (rc == 0) rc = tl_bytes(part_count, &part_bytes);
    if (rc != 0) return rc;

    tl_buffers bufs;
    tl_buffers_init(&bufs);
    rc = tl_begin();
    if (rc != 0) return rc;
    float *d_dy = NULL, *d_x = NULL, *d_gamma = NULL, *d_mean = NULL, *d_rstd = NULL;
    float *d_dx = NULL, *d_dgamma = NULL, *d_dbeta = NULL, *d_part_g = NULL, *d_part_b = NULL;
    TL_CHECK(&bufs, tl_upload(&bufs, &d_dy, dy, bytes));
    TL_CHECK(&bufs, tl_upload(&bufs, &d_x, x, bytes));
    TL_CHECK(&bufs, tl_upload(&bufs, &d_gamma, gamma, col_bytes));
    TL_CHECK(&bufs, tl_upload(&bufs, &d_mean, mean, row_bytes));
    TL_CHECK(&bufs, tl_upload(&bufs, &d_rstd, rstd, row_bytes));
    TL_CHECK(&bufs, tl_alloc(&bufs, &d_dx, bytes));
    TL_CHECK(&bufs, tl_alloc(&bufs, &d_dgamma, col_bytes));
    TL_CHECK(&bufs, tl_alloc(&bufs, &d_dbeta, col_bytes));
    TL_CHECK(&bufs, tl_alloc(&bufs, &d_part_g, part_bytes));
    TL_CHECK(&bufs, tl_alloc(&bufs, &d_part_b, part_bytes));

    const unsigned int row_grid = tl_grid(rows);
    const int row_block = tl_row_block(hidden);
    const size_t row_smem = TL_REDUCE_SMEM_FLOATS * sizeof(float);
    tl_layernorm_bw_dx_kernel<<<row_grid, row_block, row_smem>>>(d_dy, d_x, d_gamma, d_mean, d_rstd, d_dx,
                                                                 rows, hidden);
    TL_CHECK(&bufs, cudaGetLastError());

    // With fewer rows than warps the extra warps would only add zeros.
    const int warps = rows < TL_PARAM_WARPS ? (int)rows : TL_PARAM_WARPS;
    const unsigned int part_grid = tl_grid(tiles * chunks);
    const int part_block = warps * 32;
    const size_t part_smem = 2 * (size_t)part_block * sizeof(float);
    tl_layernorm_bw_param_partial_kernel<<<part_grid, part_block, part_smem>>>(
        d_dy, d_x, d_mean, d_rstd, d_part_g, d_part_b, rows, hidden, tiles, chunks, chunk_rows);
    TL_CHECK(&bufs, cudaGetLastError());
    const unsigned int final_grid = tl_grid((hidden + TL_MAX_BLOCK - 1) / TL_MAX_BLOCK);
    tl_layernorm_bw_param_final_kernel<<<final_grid, TL_MAX_BLOCK>>>(d_part_g, d_part_b, d_dgamma, d_dbeta,
                                                                     hidden, chunks);
    TL_CHECK(&bufs, cudaGetLastError());
    TL_CHECK(&bufs, cudaDeviceSynchronize());
    TL_CHECK(&bufs, cudaMemcpy(dx, d_dx, bytes, cudaMemcpyDeviceToHost));
    TL_CHECK(&bufs, cudaMemcpy(dgamma, d_dgamma, col_bytes, cudaMemcpyDeviceToHost));
    TL_CHECK(&bufs, cudaMemcpy(dbeta, d_dbeta, col_bytes, cudaMemcpyDeviceToHost));
    return tl_finish(&bufs, 0);
}
