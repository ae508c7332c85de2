// cuRAND on the CPU: XORWOW's jump-ahead (the device API's curand_init and skipahead) and the
// host generator API. A jump by n steps multiplies XORWOW's 160-bit xorshift state by the n-th
// power of its transition matrix over GF(2); the powers M^(2^i) are computed once, on first use.
// The host API generates from one device-API state in order (curand_init(seed, 0, offset)),
// where cuRAND spreads a host generator over many states: its numbers are statistically sound
// but are not the same sequence as cuRAND's host API.
#include "include/curand_kernel.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <new>

#include "sim_internal.h"

namespace {

constexpr int kBits = 160;           // five 32-bit words
constexpr int kSubsequenceShift = 67;  // one subsequence is 2^67 steps
constexpr int kPowers = kSubsequenceShift + 64;

// A 160 x 160 matrix over GF(2) as its columns: column j is the image of state bit j.
struct Matrix {
    unsigned int col[kBits][5];
};

void apply(const Matrix& m, const unsigned int v[5], unsigned int out[5]) {
    unsigned int r[5] = {0, 0, 0, 0, 0};
    for (int j = 0; j < kBits; ++j) {
        if ((v[j / 32] >> (j % 32)) & 1u) {
            for (int w = 0; w < 5; ++w) r[w] ^= m.col[j][w];
        }
    }
    std::memcpy(out, r, sizeof(r));
}

// powers[i] = M^(2^i), for i < kPowers.
Matrix* g_powers = nullptr;
std::once_flag g_powers_once;

void compute_powers() {
    g_powers = new Matrix[kPowers];
    for (int j = 0; j < kBits; ++j) {  // one xorshift step of the basis vector e_j
        unsigned int v[5] = {0, 0, 0, 0, 0};
        v[j / 32] = 1u << (j % 32);
        const unsigned int t = v[0] ^ (v[0] >> 2);
        unsigned int* c = g_powers[0].col[j];
        c[0] = v[1];
        c[1] = v[2];
        c[2] = v[3];
        c[3] = v[4];
        c[4] = (v[4] ^ (v[4] << 4)) ^ (t ^ (t << 1));
    }
    for (int i = 1; i < kPowers; ++i)
        for (int j = 0; j < kBits; ++j) apply(g_powers[i - 1], g_powers[i - 1].col[j], g_powers[i].col[j]);
}

void jump(unsigned int v[5], unsigned long long n, int shift) {
    for (int bit = 0; n != 0; ++bit, n >>= 1)
        if (n & 1u) apply(g_powers[shift + bit], v, v);
}

void say(const char* what) { std::fprintf(stderr, "cuRAND (simulator): %s\n", what); }

}  // namespace

namespace sim {
void xorwow_jump(unsigned int v[5], unsigned long long subsequence, unsigned long long offset) {
    if (subsequence == 0 && offset == 0) return;
    std::call_once(g_powers_once, compute_powers);
    jump(v, offset, 0);
    jump(v, subsequence, kSubsequenceShift);
}
}  // namespace sim

struct curandGenerator_st {
    curandRngType_t type;
    unsigned long long seed = 0;
    unsigned long long offset = 0;
    bool started = false;  // the state is (re)made from seed and offset before the next generate
    curandStateXORWOW_t xorwow;
    curandStatePhilox4_32_10_t philox;

    unsigned int next() { return type == CURAND_RNG_PSEUDO_PHILOX4_32_10 ? curand(&philox) : curand(&xorwow); }
    void start() {
        if (started) return;
        if (type == CURAND_RNG_PSEUDO_PHILOX4_32_10)
            curand_init(seed, 0, offset, &philox);
        else
            curand_init(seed, 0, offset, &xorwow);
        started = true;
    }
};

namespace {

curandStatus_t create(curandGenerator_t* g, curandRngType_t type) {
    if (g == nullptr) return CURAND_STATUS_NOT_INITIALIZED;
    if (type == CURAND_RNG_PSEUDO_DEFAULT) type = CURAND_RNG_PSEUDO_XORWOW;
    if (type != CURAND_RNG_PSEUDO_XORWOW && type != CURAND_RNG_PSEUDO_PHILOX4_32_10) {
        char line[160];
        std::snprintf(line, sizeof(line),
                      "generator type %d is not provided (XORWOW and PHILOX4_32_10 are): CURAND_STATUS_TYPE_ERROR",
                      (int)type);
        say(line);
        return CURAND_STATUS_TYPE_ERROR;
    }
    *g = new (std::nothrow) curandGenerator_st{type};
    return *g == nullptr ? CURAND_STATUS_ALLOCATION_FAILED : CURAND_STATUS_SUCCESS;
}

// Box-Muller pairs, as curand_normal makes them: pseudo-random normals come in pairs.
template <class T, class Pair>
curandStatus_t normals(curandGenerator_t g, T* out, size_t n, T mean, T stddev, Pair pair) {
    if (g == nullptr) return CURAND_STATUS_NOT_INITIALIZED;
    if (n % 2 != 0) return CURAND_STATUS_LENGTH_NOT_MULTIPLE;
    if (out == nullptr && n != 0) return CURAND_STATUS_LAUNCH_FAILURE;
    g->start();
    for (size_t i = 0; i < n; i += 2) {
        T a, b;
        pair(g, &a, &b);
        out[i] = mean + stddev * a;
        out[i + 1] = mean + stddev * b;
    }
    return CURAND_STATUS_SUCCESS;
}

}  // namespace

extern "C" {

curandStatus_t curandCreateGenerator(curandGenerator_t* g, curandRngType_t type) { return create(g, type); }

curandStatus_t curandCreateGeneratorHost(curandGenerator_t* g, curandRngType_t type) { return create(g, type); }

curandStatus_t curandDestroyGenerator(curandGenerator_t g) {
    if (g == nullptr) return CURAND_STATUS_NOT_INITIALIZED;
    delete g;
    return CURAND_STATUS_SUCCESS;
}

curandStatus_t curandGetVersion(int* version) {
    if (version == nullptr) return CURAND_STATUS_OUT_OF_RANGE;
    *version = CURAND_VERSION;
    return CURAND_STATUS_SUCCESS;
}

curandStatus_t curandSetStream(curandGenerator_t g, cudaStream_t stream) {
    (void)stream;  // streams run in order
    return g == nullptr ? CURAND_STATUS_NOT_INITIALIZED : CURAND_STATUS_SUCCESS;
}

curandStatus_t curandSetPseudoRandomGeneratorSeed(curandGenerator_t g, unsigned long long seed) {
    if (g == nullptr) return CURAND_STATUS_NOT_INITIALIZED;
    g->seed = seed;
    g->started = false;
    return CURAND_STATUS_SUCCESS;
}

curandStatus_t curandSetGeneratorOffset(curandGenerator_t g, unsigned long long offset) {
    if (g == nullptr) return CURAND_STATUS_NOT_INITIALIZED;
    g->offset = offset;
    g->started = false;
    return CURAND_STATUS_SUCCESS;
}

curandStatus_t curandSetGeneratorOrdering(curandGenerator_t g, curandOrdering_t order) {
    if (g == nullptr) return CURAND_STATUS_NOT_INITIALIZED;
    return order >= CURAND_ORDERING_PSEUDO_BEST && order <= CURAND_ORDERING_PSEUDO_DYNAMIC ? CURAND_STATUS_SUCCESS
                                                                                           : CURAND_STATUS_OUT_OF_RANGE;
}

curandStatus_t curandGenerateSeeds(curandGenerator_t g) {
    if (g == nullptr) return CURAND_STATUS_NOT_INITIALIZED;
    g->start();
    return CURAND_STATUS_SUCCESS;
}

curandStatus_t curandGenerate(curandGenerator_t g, unsigned int* out, size_t n) {
    if (g == nullptr) return CURAND_STATUS_NOT_INITIALIZED;
    if (out == nullptr && n != 0) return CURAND_STATUS_LAUNCH_FAILURE;
    g->start();
    for (size_t i = 0; i < n; ++i) out[i] = g->next();
    return CURAND_STATUS_SUCCESS;
}

curandStatus_t curandGenerateUniform(curandGenerator_t g, float* out, size_t n) {
    if (g == nullptr) return CURAND_STATUS_NOT_INITIALIZED;
    if (out == nullptr && n != 0) return CURAND_STATUS_LAUNCH_FAILURE;
    g->start();
    for (size_t i = 0; i < n; ++i) out[i] = ::sim::curand_unit_float(g->next());
    return CURAND_STATUS_SUCCESS;
}

curandStatus_t curandGenerateUniformDouble(curandGenerator_t g, double* out, size_t n) {
    if (g == nullptr) return CURAND_STATUS_NOT_INITIALIZED;
    if (out == nullptr && n != 0) return CURAND_STATUS_LAUNCH_FAILURE;
    g->start();
    for (size_t i = 0; i < n; ++i) {
        const unsigned int x = g->next();
        const unsigned int y = g->next();
        out[i] = ::sim::curand_unit_double(x, y);
    }
    return CURAND_STATUS_SUCCESS;
}

curandStatus_t curandGenerateNormal(curandGenerator_t g, float* out, size_t n, float mean, float stddev) {
    return normals<float>(g, out, n, mean, stddev, [](curandGenerator_t gen, float* a, float* b) {
        const unsigned int x = gen->next();
        const unsigned int y = gen->next();
        const float2 v = ::sim::curand_box_muller(x, y);
        *a = v.x;
        *b = v.y;
    });
}

curandStatus_t curandGenerateNormalDouble(curandGenerator_t g, double* out, size_t n, double mean, double stddev) {
    return normals<double>(g, out, n, mean, stddev, [](curandGenerator_t gen, double* a, double* b) {
        const unsigned int x0 = gen->next(), x1 = gen->next(), y0 = gen->next(), y1 = gen->next();
        const double2 v = ::sim::curand_box_muller_double(x0, x1, y0, y1);
        *a = v.x;
        *b = v.y;
    });
}

curandStatus_t curandGenerateLogNormal(curandGenerator_t g, float* out, size_t n, float mean, float stddev) {
    curandStatus_t s = curandGenerateNormal(g, out, n, mean, stddev);
    if (s == CURAND_STATUS_SUCCESS)
        for (size_t i = 0; i < n; ++i) out[i] = expf(out[i]);
    return s;
}

}  // extern "C"
