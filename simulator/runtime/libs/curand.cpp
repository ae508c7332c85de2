// cuRAND's host generator API on the CPU, generated with cuRAND's own device API (NVIDIA's
// <curand_kernel.h>, compiled here as host code) from one state in order (curand_init(seed, 0,
// offset)), where cuRAND spreads a host generator over many states: its numbers are
// statistically sound but are not the same sequence as cuRAND's host API.
#include <curand_kernel.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <new>

#include "sim_internal.h"

namespace {
void say(const char* what) { std::fprintf(stderr, "cuRAND (simulator): %s\n", what); }
}  // namespace

struct curandGenerator_st {
    curandRngType_t type;
    unsigned long long seed = 0;
    unsigned long long offset = 0;
    bool started = false;  // the state is (re)made from seed and offset before the next generate
    curandStateXORWOW_t xorwow;
    curandStatePhilox4_32_10_t philox;
    curandStateMRG32k3a_t mrg32k3a;

    // Calls f with this generator's device-API state: one body for every generator type.
    template <class F>
    auto with_state(F f) {
        switch (type) {
            case CURAND_RNG_PSEUDO_PHILOX4_32_10:
                return f(&philox);
            case CURAND_RNG_PSEUDO_MRG32K3A:
                return f(&mrg32k3a);
            default:
                return f(&xorwow);
        }
    }
    unsigned int next() {
        return with_state([](auto* s) { return curand(s); });
    }
    float uniform() {
        return with_state([](auto* s) { return curand_uniform(s); });
    }
    double uniform_double() {
        return with_state([](auto* s) { return curand_uniform_double(s); });
    }
    float2 normal2() {
        return with_state([](auto* s) { return curand_normal2(s); });
    }
    double2 normal2_double() {
        return with_state([](auto* s) { return curand_normal2_double(s); });
    }
    void start() {
        if (started) return;
        with_state([this](auto* s) { curand_init(seed, 0, offset, s); });
        started = true;
    }
};

namespace {

curandStatus_t create(curandGenerator_t* g, curandRngType_t type) {
    if (g == nullptr) return CURAND_STATUS_NOT_INITIALIZED;
    if (type == CURAND_RNG_PSEUDO_DEFAULT) type = CURAND_RNG_PSEUDO_XORWOW;
    if (type != CURAND_RNG_PSEUDO_XORWOW && type != CURAND_RNG_PSEUDO_PHILOX4_32_10 &&
        type != CURAND_RNG_PSEUDO_MRG32K3A) {
        char line[160];
        std::snprintf(line, sizeof(line),
                      "generator type %d is not provided (XORWOW, PHILOX4_32_10 and MRG32K3A are): "
                      "CURAND_STATUS_TYPE_ERROR",
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
    for (size_t i = 0; i < n; ++i) out[i] = g->uniform();
    return CURAND_STATUS_SUCCESS;
}

curandStatus_t curandGenerateUniformDouble(curandGenerator_t g, double* out, size_t n) {
    if (g == nullptr) return CURAND_STATUS_NOT_INITIALIZED;
    if (out == nullptr && n != 0) return CURAND_STATUS_LAUNCH_FAILURE;
    g->start();
    for (size_t i = 0; i < n; ++i) out[i] = g->uniform_double();
    return CURAND_STATUS_SUCCESS;
}

curandStatus_t curandGenerateNormal(curandGenerator_t g, float* out, size_t n, float mean, float stddev) {
    return normals<float>(g, out, n, mean, stddev, [](curandGenerator_t gen, float* a, float* b) {
        const float2 v = gen->normal2();
        *a = v.x;
        *b = v.y;
    });
}

curandStatus_t curandGenerateNormalDouble(curandGenerator_t g, double* out, size_t n, double mean, double stddev) {
    return normals<double>(g, out, n, mean, stddev, [](curandGenerator_t gen, double* a, double* b) {
        const double2 v = gen->normal2_double();
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
