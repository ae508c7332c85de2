// Simulator stand-in for <curand.h>: the host generator API for the XORWOW and Philox4x32-10
// pseudo-random generators (runtime/curand.cpp). See simulator/docs/supported.md ("NVIDIA libraries").
#ifndef CUDA_SIM_CURAND_H
#define CUDA_SIM_CURAND_H

#include "../cuda_sim.h"

#define CURAND_VER_MAJOR 10
#define CURAND_VER_MINOR 4
#define CURAND_VER_PATCH 0
#define CURAND_VERSION (CURAND_VER_MAJOR * 1000 + CURAND_VER_MINOR * 100 + CURAND_VER_PATCH)

typedef enum curandStatus {
    CURAND_STATUS_SUCCESS = 0,
    CURAND_STATUS_VERSION_MISMATCH = 100,
    CURAND_STATUS_NOT_INITIALIZED = 101,
    CURAND_STATUS_ALLOCATION_FAILED = 102,
    CURAND_STATUS_TYPE_ERROR = 103,
    CURAND_STATUS_OUT_OF_RANGE = 104,
    CURAND_STATUS_LENGTH_NOT_MULTIPLE = 105,
    CURAND_STATUS_DOUBLE_PRECISION_REQUIRED = 106,
    CURAND_STATUS_LAUNCH_FAILURE = 201,
    CURAND_STATUS_PREEXISTING_FAILURE = 202,
    CURAND_STATUS_INITIALIZATION_FAILED = 203,
    CURAND_STATUS_ARCH_MISMATCH = 204,
    CURAND_STATUS_INTERNAL_ERROR = 999,
} curandStatus_t;

typedef enum curandRngType {
    CURAND_RNG_TEST = 0,
    CURAND_RNG_PSEUDO_DEFAULT = 100,
    CURAND_RNG_PSEUDO_XORWOW = 101,
    CURAND_RNG_PSEUDO_MRG32K3A = 121,
    CURAND_RNG_PSEUDO_MTGP32 = 141,
    CURAND_RNG_PSEUDO_MT19937 = 142,
    CURAND_RNG_PSEUDO_PHILOX4_32_10 = 161,
    CURAND_RNG_QUASI_DEFAULT = 200,
    CURAND_RNG_QUASI_SOBOL32 = 201,
    CURAND_RNG_QUASI_SCRAMBLED_SOBOL32 = 202,
    CURAND_RNG_QUASI_SOBOL64 = 203,
    CURAND_RNG_QUASI_SCRAMBLED_SOBOL64 = 204,
} curandRngType_t;

typedef enum curandOrdering {
    CURAND_ORDERING_PSEUDO_BEST = 100,
    CURAND_ORDERING_PSEUDO_DEFAULT = 101,
    CURAND_ORDERING_PSEUDO_SEEDED = 102,
    CURAND_ORDERING_PSEUDO_LEGACY = 103,
    CURAND_ORDERING_PSEUDO_DYNAMIC = 104,
    CURAND_ORDERING_QUASI_DEFAULT = 201,
} curandOrdering_t;

struct curandGenerator_st;
typedef struct curandGenerator_st* curandGenerator_t;

extern "C" {
SIM_API curandStatus_t curandCreateGenerator(curandGenerator_t* generator, curandRngType_t rng_type);
SIM_API curandStatus_t curandCreateGeneratorHost(curandGenerator_t* generator, curandRngType_t rng_type);
SIM_API curandStatus_t curandDestroyGenerator(curandGenerator_t generator);
SIM_API curandStatus_t curandGetVersion(int* version);
SIM_API curandStatus_t curandSetStream(curandGenerator_t generator, cudaStream_t stream);
SIM_API curandStatus_t curandSetPseudoRandomGeneratorSeed(curandGenerator_t generator, unsigned long long seed);
SIM_API curandStatus_t curandSetGeneratorOffset(curandGenerator_t generator, unsigned long long offset);
SIM_API curandStatus_t curandSetGeneratorOrdering(curandGenerator_t generator, curandOrdering_t order);
SIM_API curandStatus_t curandGenerateSeeds(curandGenerator_t generator);
SIM_API curandStatus_t curandGenerate(curandGenerator_t generator, unsigned int* output, size_t n);
SIM_API curandStatus_t curandGenerateUniform(curandGenerator_t generator, float* output, size_t n);
SIM_API curandStatus_t curandGenerateUniformDouble(curandGenerator_t generator, double* output, size_t n);
SIM_API curandStatus_t curandGenerateNormal(curandGenerator_t generator, float* output, size_t n, float mean,
                                            float stddev);
SIM_API curandStatus_t curandGenerateNormalDouble(curandGenerator_t generator, double* output, size_t n, double mean,
                                                  double stddev);
SIM_API curandStatus_t curandGenerateLogNormal(curandGenerator_t generator, float* output, size_t n, float mean,
                                               float stddev);
}

#endif  // CUDA_SIM_CURAND_H
