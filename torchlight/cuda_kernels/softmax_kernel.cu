// Attention softmax, forward and backward, over the last dim of [batch, heads, q_len, k_len]
// float32 scores stored row-major (C-contiguous).
//
// Maths (matches torchlight.backends.cpu.CPUBackend):
//   forward   s[k] = x[b,h,q,k] + mask[b,h,q,k] (when a mask is given; the mask is broadcast
//             by its strides, see below); with causal, keys k > q are excluded (s[k] = -inf;
//             top-left aligned: query q sees keys 0..q);
//             y = exp(s - max s) / sum exp(s - max s). A row whose every key is excluded
//             (max s = -inf) is all zeros. A row with a NaN or +inf score among its keys (after
//             the mask) is all NaN, as in PyTorch; an excluded key's own score is never read.
//   backward  dx = y * (dy - sum_k(dy * y)); an all-zero row of y gives an all-zero dx.
//
// Launchers (host pointers; each copies in, launches, copies out and frees its device memory):
//
//   int tl_attn_softmax_fw_strided(const float* x, const float* mask, float* y,
//                          int64_t batch, int64_t heads, int64_t q_len, int64_t k_len,
//                          int64_t mask_sb, int64_t mask_sh, int64_t mask_sq, int64_t mask_sk,
//                          int causal);
//       x, y: batch*heads*q_len*k_len floats. mask: NULL (no mask), or the additive mask with
//       element [b,h,q,k] at mask[b*mask_sb + h*mask_sh + q*mask_sq + k*mask_sk]: a stride of 0
//       broadcasts that dim (a [batch, 1, 1, k_len] mask has strides k_len, 0, 0, 1), so a
//       broadcast mask is never materialised. Strides are in floats and must be >= 0; only
//       1 + sum((dim - 1) * stride) floats are read (and copied to the device).
//       causal: 0 = off, any other value = on.
//   int tl_attn_softmax_fw(const float* x, const float* mask, float* y,
//                          int64_t batch, int64_t heads, int64_t q_len, int64_t k_len,
//                          int causal);
//       the same with mask NULL or [batch, k_len] (strides k_len, 0, 0, 1).
//   int tl_attn_softmax_bw(const float* y, const float* dy, float* dx,
//                          int64_t rows, int64_t k_len);
//       y, dy, dx: rows*k_len floats (rows = batch*heads*q_len).
//   int tl_softmax_abi_version(void);
//       returns TL_ABI_VERSION, so a loader can tell this library from any other .so.
//
// Return codes: 0 success; a cudaError_t value when a CUDA call failed (the first failure; all
// device memory is freed and the pending error cleared, so the next call is unaffected; a
// sticky error left by an earlier kernel fault is returned at entry, see tl_common.cuh);
// TL_ERR_NEGATIVE_SIZE (20001) for a size < 0, TL_ERR_NULL_POINTER (20002) for a NULL
// required pointer, TL_ERR_SIZE_OVERFLOW (20003) when the element or byte count overflows,
// TL_ERR_BAD_ARGUMENT (20004) for a negative mask stride.
// When the element count is 0 nothing is launched and 0 is returned. Launchers never print,
// exit or throw.
//
// Kernels: one block per row, blocks grid-stride over rows; threads stride over the row by
// blockDim.x, so any k_len works. The forward finds the row max and the sum of exponentials in
// one read of the row (an online softmax: each thread keeps a running (max, sum) pair and the
// pairs are merged with warp shuffles, then across warps through shared memory).
#include "tl_common.cuh"

// The score of key k for a row, with the mask added (mrow[k * msk]) and causal exclusion applied.
static __device__ __forceinline__ float tl_score(const float* xrow, const float* mrow, int64_t msk,
                                                 int64_t k, int64_t q, int causal) {
    if (causal && k > q) return -INFINITY;
    float s = xrow[k];
    if (mrow != NULL) s += mrow[k * msk];
    return s;
}

// Merge running pair (m, s) with (om, os), where s is a sum of exp(v - m). A NaN m marks a
// side that saw a NaN or +inf score; it wins (fmaxf alone would drop it).
static __device__ __forceinline__ void tl_online_merge(float* m, float* s, float om, float os) {
    if (*m != *m || om != om) {
        *m = NAN;
        *s = NAN;
        return;
    }
    const float nm = fmaxf(*m, om);
    if (nm == -INFINITY) {
        // Both sides saw only excluded keys: exp(-inf - -inf) would be NaN.
        *s = 0.0f;
        return;
    }
    *s = *s * expf(*m - nm) + os * expf(om - nm);
    *m = nm;
}

static __device__ __forceinline__ void tl_warp_online(float* m, float* s) {
    for (int offset = 16; offset > 0; offset >>= 1) {
        const float om = __shfl_xor_sync(TL_FULL_MASK, *m, offset);
        const float os = __shfl_xor_sync(TL_FULL_MASK, *s, offset);
        tl_online_merge(m, s, om, os);
    }
}

// Block-wide merge of (m, s) pairs; every thread gets the result. scratch: 66 floats.
static __device__ __forceinline__ void tl_block_online(float* m, float* s, float* scratch) {
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    const int nwarps = blockDim.x >> 5;
    tl_warp_online(m, s);
    if (lane == 0) {
        scratch[warp] = *m;
        scratch[33 + warp] = *s;
    }
    __syncthreads();
    if (warp == 0) {
        float wm = lane < nwarps ? scratch[lane] : -INFINITY;
        float ws = lane < nwarps ? scratch[33 + lane] : 0.0f;
        tl_warp_online(&wm, &ws);
        if (lane == 0) {
            scratch[32] = wm;
            scratch[65] = ws;
        }
    }
    __syncthreads();
    *m = scratch[32];
    *s = scratch[65];
}

__global__ void tl_attn_softmax_fw_kernel(const float* __restrict__ x, const float* __restrict__ mask,
                                          float* __restrict__ y, int64_t rows, int64_t heads,
                                          int64_t q_len, int64_t k_len, int64_t msb, int64_t msh,
                                          int64_t msq, int64_t msk, int causal) {
    extern __shared__ float tl_smem[];
    for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
        const float* xrow = x + row * k_len;
        float* yrow = y + row * k_len;
        const int64_t q = row % q_len;
        const int64_t h = (row / q_len) % heads;
        const int64_t b = row / (q_len * heads);
        const float* mrow = mask != NULL ? mask + b * msb + h * msh + q * msq : NULL;

        float m = -INFINITY;
        float s = 0.0f;
        for (int64_t k = threadIdx.x; k < k_len; k += blockDim.x) {
            const float v = tl_score(xrow, mrow, msk, k, q, causal);
            if (v == -INFINITY) continue;  // excluded key: contributes exp(-inf) = 0
            if (!(v < INFINITY)) {
                m = NAN;  // NaN or +inf: the whole row is NaN
                s = NAN;
            }
            if (m != m) continue;
            if (v > m) {
                s = s * expf(m - v) + 1.0f;
                m = v;
            } else {
                s += expf(v - m);
            }
        }
        tl_block_online(&m, &s, tl_smem);

        const bool live = m != -INFINITY;  // a NaN m (a NaN row) is live: every output is NaN
        for (int64_t k = threadIdx.x; k < k_len; k += blockDim.x) {
            yrow[k] = live ? expf(tl_score(xrow, mrow, msk, k, q, causal) - m) / s : 0.0f;
        }
    }
}

__global__ void tl_attn_softmax_bw_kernel(const float* __restrict__ y, const float* __restrict__ dy,
                                          float* __restrict__ dx, int64_t rows, int64_t k_len) {
    extern __shared__ float tl_smem[];
    for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
        const float* yrow = y + row * k_len;
        const float* dyrow = dy + row * k_len;
        float* dxrow = dx + row * k_len;
        float dot = 0.0f;
        for (int64_t k = threadIdx.x; k < k_len; k += blockDim.x) dot += yrow[k] * dyrow[k];
        dot = tl_block_sum(dot, tl_smem);
        for (int64_t k = threadIdx.x; k < k_len; k += blockDim.x) {
            dxrow[k] = yrow[k] * (dyrow[k] - dot);
        }
    }
}

TL_EXPORT int tl_softmax_abi_version(void) { return TL_ABI_VERSION; }

// Floats a strided mask spans: 1 + sum((dim - 1) * stride) over the dims of size > 0.
static inline int tl_mask_extent(const int64_t* dims, const int64_t* strides, int64_t* out) {
    int64_t extent = 1;
    for (int i = 0; i < 4; ++i) {
        int64_t span = 0;
        int rc = tl_mul(dims[i] - 1, strides[i], &span);
        if (rc != 0) return rc;
        if (span > INT64_MAX - extent) return TL_ERR_SIZE_OVERFLOW;
        extent += span;
    }
    *out = extent;
    return 0;
}

TL_EXPORT int tl_attn_softmax_fw_strided(const float* x, const float* mask, float* y, int64_t batch,
                                          int64_t heads, int64_t q_len, int64_t k_len, int64_t mask_sb,
                                          int64_t mask_sh, int64_t mask_sq, int64_t mask_sk,
                                          int causal) {
    if (batch < 0 || heads < 0 || q_len < 0 || k_len < 0) return TL_ERR_NEGATIVE_SIZE;
    if (mask != NULL && (mask_sb < 0 || mask_sh < 0 || mask_sq < 0 || mask_sk < 0)) {
        return TL_ERR_BAD_ARGUMENT;
    }
    int64_t per_batch = 0, rows = 0, total = 0, mask_count = 0;
    int rc = tl_mul(heads, q_len, &per_batch);
    if (rc == 0) rc = tl_mul(batch, per_batch, &rows);
    if (rc == 0) rc = tl_mul(rows, k_len, &total);
    size_t bytes = 0, mask_bytes = 0;
    if (rc == 0) rc = tl_bytes(total, &bytes);
    if (rc != 0) return rc;
    if (total == 0) return 0;
    if (x == NULL || y == NULL) return TL_ERR_NULL_POINTER;
    if (mask != NULL) {
        const int64_t dims[4] = {batch, heads, q_len, k_len};
        const int64_t strides[4] = {mask_sb, mask_sh, mask_sq, mask_sk};
        rc = tl_mask_extent(dims, strides, &mask_count);
        if (rc == 0) rc = tl_bytes(mask_count, &mask_bytes);
        if (rc != 0) return rc;
    }

    tl_buffers bufs;
    tl_buffers_init(&bufs);
    rc = tl_begin();
    if (rc != 0) return rc;
    float* d_x = NULL;
    float* d_mask = NULL;
    float* d_y = NULL;
    TL_CHECK(&bufs, tl_upload(&bufs, &d_x, x, bytes));
    if (mask != NULL) TL_CHECK(&bufs, tl_upload(&bufs, &d_mask, mask, mask_bytes));
    TL_CHECK(&bufs, tl_alloc(&bufs, &d_y, bytes));

    const unsigned int grid = tl_grid(rows);
    const int block = tl_row_block(k_len);
    const size_t smem = TL_REDUCE_SMEM_FLOATS * sizeof(float);
    tl_attn_softmax_fw_kernel<<<grid, block, smem>>>(d_x, d_mask, d_y, rows, heads, q_len, k_len, mask_sb,
                                                     mask_sh, mask_sq, mask_sk, causal != 0);
    TL_CHECK(&bufs, cudaGetLastError());
    TL_CHECK(&bufs, cudaDeviceSynchronize());
    TL_CHECK(&bufs, cudaMemcpy(y, d_y, bytes, cudaMemcpyDeviceToHost));
    return tl_finish(&bufs, 0);
}

TL_EXPORT int tl_attn_softmax_fw(const float* x, const float* mask, float* y, int64_t batch,
                                  int64_t heads, int64_t q_len, int64_t k_len, int causal) {
    // A [batch, k_len] mask: one row per batch, broadcast over heads and queries.
    return tl_attn_softmax_fw_strided(x, mask, y, batch, heads, q_len, k_len, k_len, 0, 0, 1, causal);
}

TL_EXPORT int tl_attn_softmax_bw(const float* y, const float* dy, float* dx, int64_t rows,
                                  int64_t k_len) {
    if (rows < 0 || k_len < 0) return TL_ERR_NEGATIVE_SIZE;
    int64_t total = 0;
    size_t bytes = 0;
    int rc = tl_mul(rows, k_len, &total);
    if (rc == 0) rc = tl_bytes(total, &bytes);
    if (rc != 0) return rc;
    if (total == 0) return 0;
    if (y == NULL || dy == NULL || dx == NULL) return TL_ERR_NULL_POINTER;

    tl_buffers bufs;
    tl_buffers_init(&bufs);
    rc = tl_begin();
    if (rc != 0) return rc;
    float* d_y = NULL;
    float* d_dy = NULL;
    float* d_dx = NULL;
    TL_CHECK(&bufs, tl_upload(&bufs, &d_y, y, bytes));
    TL_CHECK(&bufs, tl_upload(&bufs, &d_dy, dy, bytes));
    TL_CHECK(&bufs, tl_alloc(&bufs, &d_dx, bytes));

    const unsigned int grid = tl_grid(rows);
    const int block = tl_row_block(k_len);
    const size_t smem = TL_REDUCE_SMEM_FLOATS * sizeof(float);
    tl_attn_softmax_bw_kernel<<<grid, block, smem>>>(d_y, d_dy, d_dx, rows, k_len);
    TL_CHECK(&bufs, cudaGetLastError());
    TL_CHECK(&bufs, cudaDeviceSynchronize());
    TL_CHECK(&bufs, cudaMemcpy(dx, d_dx, bytes, cudaMemcpyDeviceToHost));
    return tl_finish(&bufs, 0);
}
