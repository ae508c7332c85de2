// Entry for `python -m simulator check` over the shipped kernels: calls every launcher of
// torchlight/cuda_kernels/{softmax,layernorm}_kernel.cu (linked in as separate sources) on a
// few shapes, including rows longer than one block, and compares with a plain C reference.
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

extern "C" {
int tl_attn_softmax_fw(const float* x, const float* mask, float* y, int64_t batch, int64_t heads, int64_t q_len,
                       int64_t k_len, int causal);
int tl_attn_softmax_fw_strided(const float* x, const float* mask, float* y, int64_t batch, int64_t heads,
                               int64_t q_len, int64_t k_len, int64_t mask_sb, int64_t mask_sh, int64_t mask_sq,
                               int64_t mask_sk, int causal);
int tl_attn_softmax_bw(const float* y, const float* dy, float* dx, int64_t rows, int64_t k_len);
int tl_layernorm_fw(const float* x, const float* gamma, const float* beta, float* y, float* mean, float* rstd,
                    int64_t rows, int64_t hidden, float eps);
int tl_layernorm_bw(const float* dy, const float* x, const float* gamma, const float* mean, const float* rstd,
                    float* dx, float* dgamma, float* dbeta, int64_t rows, int64_t hidden);
}

static float frand(unsigned* s) {
    *s = *s * 1664525u + 1013904223u;
    return ((*s >> 8) / 16777216.0f) * 4.0f - 2.0f;
}

static float* fill(int64_t n, unsigned* seed) {
    float* p = (float*)malloc((size_t)(n > 0 ? n : 1) * sizeof(float));
    for (int64_t i = 0; i < n; ++i) p[i] = frand(seed);
    return p;
}

static int close_to(float got, double want, const char* what, int64_t i) {
    if (fabs(got - want) <= 1e-4 + 1e-4 * fabs(want)) return 1;
    fprintf(stderr, "%s: element %lld is %g, reference %g\n", what, (long long)i, got, want);
    return 0;
}

// Masks: 0 none; 1 [batch, k_len] through tl_attn_softmax_fw; through the strided launcher,
// broadcast without a copy: 2 [batch, 1, q_len, k_len], 3 [1, heads, q_len, k_len], 4
// [batch, heads, q_len, 1] (one value per row, broadcast over the keys: key stride 0).
enum { NO_MASK = 0, KEY_MASK = 1, BATCH_QUERY_MASK = 2, HEAD_QUERY_MASK = 3, ROW_MASK = 4 };

static int softmax_case(int64_t batch, int64_t heads, int64_t q_len, int64_t k_len, int mask_kind, int causal,
                        unsigned seed) {
    const int64_t rows = batch * heads * q_len, n = rows * k_len;
    int64_t sb = k_len, sh = 0, sq = 0, sk = 1, mask_n = batch * k_len;
    if (mask_kind == BATCH_QUERY_MASK) sb = q_len * k_len, sq = k_len, mask_n = batch * q_len * k_len;
    if (mask_kind == HEAD_QUERY_MASK) sb = 0, sh = q_len * k_len, sq = k_len, mask_n = heads * q_len * k_len;
    if (mask_kind == ROW_MASK) sb = heads * q_len, sh = q_len, sq = 1, sk = 0, mask_n = rows;
    float* x = fill(n, &seed);
    float* mask = mask_kind != NO_MASK ? fill(mask_n, &seed) : NULL;
    float* y = fill(n, &seed);
    float* dy = fill(n, &seed);
    float* dx = fill(n, &seed);
    int ok = mask_kind <= KEY_MASK
                 ? tl_attn_softmax_fw(x, mask, y, batch, heads, q_len, k_len, causal) == 0
                 : tl_attn_softmax_fw_strided(x, mask, y, batch, heads, q_len, k_len, sb, sh, sq, sk, causal) == 0;
    ok = ok && tl_attn_softmax_bw(y, dy, dx, rows, k_len) == 0;
    for (int64_t r = 0; ok && r < rows; ++r) {
        const int64_t b = r / (heads * q_len), h = (r / q_len) % heads, q = r % q_len;
        const float* mrow = mask ? mask + b * sb + h * sh + q * sq : NULL;
        double m = -INFINITY, s = 0.0, dot = 0.0;
        for (int64_t k = 0; k < k_len; ++k) {
            if (causal && k > q) continue;
            double v = x[r * k_len + k] + (mrow ? mrow[k * sk] : 0.0f);
            m = v > m ? v : m;
        }
        for (int64_t k = 0; k < k_len; ++k) {
            if (causal && k > q) continue;
            s += exp(x[r * k_len + k] + (mrow ? mrow[k * sk] : 0.0f) - m);
        }
        for (int64_t k = 0; k < k_len && ok; ++k) {
            double want = 0.0;
            if (!(causal && k > q) && m != -INFINITY) want = exp(x[r * k_len + k] + (mrow ? mrow[k * sk] : 0.0f) - m) / s;
            ok = close_to(y[r * k_len + k], want, "softmax fw", r * k_len + k);
            dot += (double)y[r * k_len + k] * dy[r * k_len + k];
        }
        for (int64_t k = 0; k < k_len && ok; ++k) {
            const double want = y[r * k_len + k] * (dy[r * k_len + k] - dot);
            ok = close_to(dx[r * k_len + k], want, "softmax bw", r * k_len + k);
        }
    }
    free(x);
    free(mask);
    free(y);
    free(dy);
    free(dx);
    return ok;
}

static int layernorm_case(int64_t rows, int64_t hidden, unsigned seed) {
    const int64_t n = rows * hidden;
    float* x = fill(n, &seed);
    float* g = fill(hidden, &seed);
    float* be = fill(hidden, &seed);
    float* y = fill(n, &seed);
    float* mean = fill(rows, &seed);
    float* rstd = fill(rows, &seed);
    float* dy = fill(n, &seed);
    float* dx = fill(n, &seed);
    float* dg = fill(hidden, &seed);
    float* db = fill(hidden, &seed);
    int ok = tl_layernorm_fw(x, g, be, y, mean, rstd, rows, hidden, 1e-5f) == 0;
    ok = ok && tl_layernorm_bw(dy, x, g, mean, rstd, dx, dg, db, rows, hidden) == 0;
    for (int64_t r = 0; ok && r < rows; ++r) {
        double mu = 0.0, var = 0.0, sg = 0.0, sgx = 0.0;
        for (int64_t j = 0; j < hidden; ++j) mu += x[r * hidden + j];
        mu /= hidden;
        for (int64_t j = 0; j < hidden; ++j) var += (x[r * hidden + j] - mu) * (x[r * hidden + j] - mu);
        var /= hidden;
        const double rs = 1.0 / sqrt(var + 1e-5);
        ok = close_to(mean[r], mu, "layernorm mean", r) && close_to(rstd[r], rs, "layernorm rstd", r);
        for (int64_t j = 0; j < hidden && ok; ++j) {
            const double xh = (x[r * hidden + j] - mu) * rs;
            ok = close_to(y[r * hidden + j], xh * g[j] + be[j], "layernorm fw", r * hidden + j);
            sg += dy[r * hidden + j] * g[j];
            sgx += dy[r * hidden + j] * g[j] * xh;
        }
        for (int64_t j = 0; j < hidden && ok; ++j) {
            const double xh = (x[r * hidden + j] - mu) * rs;
            const double want = rs * (dy[r * hidden + j] * g[j] - sg / hidden - xh * sgx / hidden);
            ok = close_to(dx[r * hidden + j], want, "layernorm dx", r * hidden + j);
        }
    }
    for (int64_t j = 0; ok && j < hidden; ++j) {
        double wg = 0.0, wb = 0.0;
        for (int64_t r = 0; r < rows; ++r) {
            double mu = mean[r], rs = rstd[r];
            wg += dy[r * hidden + j] * (x[r * hidden + j] - mu) * rs;
            wb += dy[r * hidden + j];
        }
        ok = close_to(dg[j], wg, "layernorm dgamma", j) && close_to(db[j], wb, "layernorm dbeta", j);
    }
    free(x);
    free(g);
    free(be);
    free(y);
    free(mean);
    free(rstd);
    free(dy);
    free(dx);
    free(dg);
    free(db);
    return ok;
}

extern "C" int shipped_softmax(void) {
    if (!softmax_case(1, 1, 1, 1, 0, 0, 1)) return 1;
    if (!softmax_case(2, 2, 3, 5, 1, 0, 2)) return 2;
    if (!softmax_case(1, 2, 4, 33, 0, 1, 3)) return 3;
    if (!softmax_case(2, 1, 2, 300, 1, 1, 4)) return 4;  // a row longer than the block
    if (!softmax_case(1, 1, 3, 700, 0, 0, 5)) return 5;
    if (!softmax_case(2, 3, 4, 40, BATCH_QUERY_MASK, 1, 6)) return 6;  // strided, broadcast over heads
    if (!softmax_case(2, 3, 2, 300, HEAD_QUERY_MASK, 0, 7)) return 7;  // strided, broadcast over batch
    if (!softmax_case(2, 2, 3, 40, ROW_MASK, 1, 8)) return 8;  // strided, broadcast over the keys
    return 0;
}

extern "C" int shipped_layernorm(void) {
    if (!layernorm_case(1, 1, 11)) return 1;
    if (!layernorm_case(3, 7, 12)) return 2;
    if (!layernorm_case(5, 256, 13)) return 3;
    if (!layernorm_case(70, 40, 14)) return 4;  // several row chunks and column tiles for dgamma/dbeta
    if (!layernorm_case(2, 600, 15)) return 5;  // a row longer than the block
    return 0;
}

extern "C" int shipped_all(void) {
    int rc = shipped_softmax();
    if (rc != 0) return 100 + rc;
    rc = shipped_layernorm();
    return rc == 0 ? 0 : 200 + rc;
}
