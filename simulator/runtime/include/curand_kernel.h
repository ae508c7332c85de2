// Simulator stand-in for <curand_kernel.h>: the device API of the XORWOW and Philox4x32-10
// generators (curand_init, curand, curand4, curand_uniform(4/_double), curand_normal(4/_double),
// curand_log_normal, skipahead, skipahead_sequence). The generators, their seeding and the
// float conversions follow cuRAND's documented algorithms; whether every sequence equals a GPU's
// bit for bit was not checked on a GPU (simulator/docs/supported.md).
#ifndef CUDA_SIM_CURAND_KERNEL_H
#define CUDA_SIM_CURAND_KERNEL_H

#include "curand.h"

#define CURAND_2POW32_INV (2.3283064e-10f)
#define CURAND_2POW32_INV_DOUBLE (2.3283064365386963e-10)
#define CURAND_2POW53_INV_DOUBLE (1.1102230246251565e-16)
#define CURAND_2POW32_INV_2PI (2.3283064e-10f * 6.2831855f)
#define CURAND_2POW53_INV_2PI_DOUBLE (1.1102230246251565e-16 * 6.2831853071795860)

struct curandStateXORWOW {
    unsigned int d, v[5];
    int boxmuller_flag;
    int boxmuller_flag_double;
    float boxmuller_extra;
    double boxmuller_extra_double;
};
typedef struct curandStateXORWOW curandStateXORWOW_t;
typedef struct curandStateXORWOW curandState_t;
typedef struct curandStateXORWOW curandState;

struct curandStatePhilox4_32_10 {
    uint4 ctr;
    uint4 output;
    uint2 key;
    unsigned int STATE;
    int boxmuller_flag;
    int boxmuller_flag_double;
    float boxmuller_extra;
    double boxmuller_extra_double;
};
typedef struct curandStatePhilox4_32_10 curandStatePhilox4_32_10_t;

namespace sim {
// v <- M^(subsequence * 2^67 + offset) v for XORWOW's 160-bit xorshift state (runtime/curand.cpp).
SIM_API void xorwow_jump(unsigned int v[5], unsigned long long subsequence, unsigned long long offset);
}  // namespace sim

// ---- XORWOW --------------------------------------------------------------------------------

static inline unsigned int curand(curandStateXORWOW_t* s) {
    const unsigned int t = s->v[0] ^ (s->v[0] >> 2);
    s->v[0] = s->v[1];
    s->v[1] = s->v[2];
    s->v[2] = s->v[3];
    s->v[3] = s->v[4];
    s->v[4] = (s->v[4] ^ (s->v[4] << 4)) ^ (t ^ (t << 1));
    s->d += 362437;
    return s->v[4] + s->d;
}

static inline void skipahead(unsigned long long n, curandStateXORWOW_t* s) {
    ::sim::xorwow_jump(s->v, 0, n);
    s->d += (unsigned int)(n * 362437ull);
}

static inline void skipahead_sequence(unsigned long long n, curandStateXORWOW_t* s) {
    ::sim::xorwow_jump(s->v, n, 0);  // d moves by 2^67 * 362437 * n: 0 modulo 2^32
}

static inline void curand_init(unsigned long long seed, unsigned long long subsequence, unsigned long long offset,
                               curandStateXORWOW_t* s) {
    const unsigned int s0 = (unsigned int)seed ^ 0xaad26b49u;
    const unsigned int s1 = (unsigned int)(seed >> 32) ^ 0xf7dcefddu;
    const unsigned int t0 = 1099087573u * s0;
    const unsigned int t1 = 2591861531u * s1;
    s->d = 6615241u + t1 + t0;
    s->v[0] = 123456789u + t0;
    s->v[1] = 362436069u ^ t0;
    s->v[2] = 521288629u + t1;
    s->v[3] = 88675123u ^ t1;
    s->v[4] = 5783321u + t0;
    ::sim::xorwow_jump(s->v, subsequence, offset);
    s->d += (unsigned int)(offset * 362437ull);
    s->boxmuller_flag = 0;
    s->boxmuller_flag_double = 0;
    s->boxmuller_extra = 0.0f;
    s->boxmuller_extra_double = 0.0;
}

// ---- Philox4x32-10 -------------------------------------------------------------------------

static inline uint4 curand_Philox4x32_10(uint4 c, uint2 k) {
    for (int round = 0; round < 10; ++round) {
        const unsigned long long p0 = 0xD2511F53ull * c.x, p1 = 0xCD9E8D57ull * c.z;
        c = make_uint4((unsigned int)(p1 >> 32) ^ c.y ^ k.x, (unsigned int)p1, (unsigned int)(p0 >> 32) ^ c.w ^ k.y,
                       (unsigned int)p0);
        k.x += 0x9E3779B9u;
        k.y += 0xBB67AE85u;
    }
    return c;
}

namespace sim {
// Adds n to the 128-bit counter (x is the lowest word).
static inline void philox_add(uint4* c, unsigned long long n) {
    const unsigned long long low = ((unsigned long long)c->y << 32 | c->x) + n;
    const unsigned int carry = low < n ? 1u : 0u;
    c->x = (unsigned int)low;
    c->y = (unsigned int)(low >> 32);
    const unsigned long long high = ((unsigned long long)c->w << 32 | c->z) + carry;
    c->z = (unsigned int)high;
    c->w = (unsigned int)(high >> 32);
}
// Adds n to the counter's upper 64 bits: one subsequence is 2^64 counters (2^66 numbers).
static inline void philox_add_high(uint4* c, unsigned long long n) {
    const unsigned long long high = ((unsigned long long)c->w << 32 | c->z) + n;
    c->z = (unsigned int)high;
    c->w = (unsigned int)(high >> 32);
}
}  // namespace sim

static inline void skipahead(unsigned long long n, curandStatePhilox4_32_10_t* s) {
    s->STATE += (unsigned int)(n & 3);
    n /= 4;
    if (s->STATE > 3) {
        n += 1;
        s->STATE -= 4;
    }
    ::sim::philox_add(&s->ctr, n);
    s->output = curand_Philox4x32_10(s->ctr, s->key);
}

static inline void skipahead_sequence(unsigned long long n, curandStatePhilox4_32_10_t* s) {
    ::sim::philox_add_high(&s->ctr, n);
    s->output = curand_Philox4x32_10(s->ctr, s->key);
}

static inline void curand_init(unsigned long long seed, unsigned long long subsequence, unsigned long long offset,
                               curandStatePhilox4_32_10_t* s) {
    s->ctr = make_uint4(0, 0, 0, 0);
    s->key = make_uint2((unsigned int)seed, (unsigned int)(seed >> 32));
    s->STATE = 0;
    s->boxmuller_flag = 0;
    s->boxmuller_flag_double = 0;
    s->boxmuller_extra = 0.0f;
    s->boxmuller_extra_double = 0.0;
    ::sim::philox_add_high(&s->ctr, subsequence);
    skipahead(offset, s);
}

static inline unsigned int curand(curandStatePhilox4_32_10_t* s) {
    const unsigned int words[4] = {s->output.x, s->output.y, s->output.z, s->output.w};
    const unsigned int r = words[s->STATE++];
    if (s->STATE == 4) {
        ::sim::philox_add(&s->ctr, 1);
        s->output = curand_Philox4x32_10(s->ctr, s->key);
        s->STATE = 0;
    }
    return r;
}

// Four numbers from where the state stands; the state moves on by four.
static inline uint4 curand4(curandStatePhilox4_32_10_t* s) {
    const uint4 now = s->output;
    ::sim::philox_add(&s->ctr, 1);
    s->output = curand_Philox4x32_10(s->ctr, s->key);
    const unsigned int all[8] = {now.x, now.y, now.z, now.w, s->output.x, s->output.y, s->output.z, s->output.w};
    const unsigned int at = s->STATE;
    return make_uint4(all[at], all[at + 1], all[at + 2], all[at + 3]);
}

// ---- distributions (the same for both generators) ------------------------------------------

namespace sim {
static inline float curand_unit_float(unsigned int x) { return x * CURAND_2POW32_INV + (CURAND_2POW32_INV / 2.0f); }
static inline double curand_unit_double(unsigned int x, unsigned int y) {
    const unsigned long long z = (unsigned long long)x ^ ((unsigned long long)y << (53 - 32));
    return z * CURAND_2POW53_INV_DOUBLE + (CURAND_2POW53_INV_DOUBLE / 2.0);
}
static inline float2 curand_box_muller(unsigned int x, unsigned int y) {
    const float u = x * CURAND_2POW32_INV + (CURAND_2POW32_INV / 2.0f);
    const float v = y * CURAND_2POW32_INV_2PI + (CURAND_2POW32_INV_2PI / 2.0f);
    const float s = sqrtf(-2.0f * logf(u));
    return make_float2(sinf(v) * s, cosf(v) * s);
}
static inline double2 curand_box_muller_double(unsigned int x0, unsigned int x1, unsigned int y0, unsigned int y1) {
    const double u = curand_unit_double(x0, x1);
    const double v = ((unsigned long long)y0 ^ ((unsigned long long)y1 << (53 - 32))) * CURAND_2POW53_INV_2PI_DOUBLE +
                     (CURAND_2POW53_INV_2PI_DOUBLE / 2.0);
    const double s = sqrt(-2.0 * log(u));
    return make_double2(sin(v) * s, cos(v) * s);
}
}  // namespace sim

template <class State>
static inline float curand_uniform(State* s) {
    return ::sim::curand_unit_float(curand(s));
}

template <class State>
static inline double curand_uniform_double(State* s) {
    const unsigned int x = curand(s);
    const unsigned int y = curand(s);
    return ::sim::curand_unit_double(x, y);
}

template <class State>
static inline float curand_normal(State* s) {
    if (s->boxmuller_flag != 1) {
        const unsigned int x = curand(s);
        const unsigned int y = curand(s);
        const float2 v = ::sim::curand_box_muller(x, y);
        s->boxmuller_extra = v.y;
        s->boxmuller_flag = 1;
        return v.x;
    }
    s->boxmuller_flag = 0;
    return s->boxmuller_extra;
}

template <class State>
static inline double curand_normal_double(State* s) {
    if (s->boxmuller_flag_double != 1) {
        const unsigned int x0 = curand(s), x1 = curand(s), y0 = curand(s), y1 = curand(s);
        const double2 v = ::sim::curand_box_muller_double(x0, x1, y0, y1);
        s->boxmuller_extra_double = v.y;
        s->boxmuller_flag_double = 1;
        return v.x;
    }
    s->boxmuller_flag_double = 0;
    return s->boxmuller_extra_double;
}

template <class State>
static inline float curand_log_normal(State* s, float mean, float stddev) {
    return expf(mean + stddev * curand_normal(s));
}

static inline float4 curand_uniform4(curandStatePhilox4_32_10_t* s) {
    const uint4 r = curand4(s);
    return make_float4(::sim::curand_unit_float(r.x), ::sim::curand_unit_float(r.y), ::sim::curand_unit_float(r.z),
                       ::sim::curand_unit_float(r.w));
}

static inline float4 curand_normal4(curandStatePhilox4_32_10_t* s) {
    const uint4 r = curand4(s);
    const float2 a = ::sim::curand_box_muller(r.x, r.y), b = ::sim::curand_box_muller(r.z, r.w);
    return make_float4(a.x, a.y, b.x, b.y);
}

#endif  // CUDA_SIM_CURAND_KERNEL_H
