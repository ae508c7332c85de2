// cuRAND's MRG32k3a through the device API (curandStateMRG32k3a_t) and the host API
// (CURAND_RNG_PSEUDO_MRG32K3A): raw outputs, uniforms, skip-ahead by subsequence and offset,
// and normals. Prints key=value lines; test_curand_mrg32k3a.py checks them against its own model.
#include <cstdio>
#include <vector>

#include <curand.h>
#include <curand_kernel.h>

// Thread t: subsequence t; the first 4 raw outputs, then 4 uniforms and 4 doubles.
__global__ void mrg_raw(unsigned long long seed, unsigned long long offset, unsigned int* raw, float* uni,
                        double* dbl) {
    curandStateMRG32k3a_t s;
    curand_init(seed, threadIdx.x, offset, &s);
    for (int i = 0; i < 4; ++i) raw[threadIdx.x * 4 + i] = curand(&s);
    for (int i = 0; i < 4; ++i) uni[threadIdx.x * 4 + i] = curand_uniform(&s);
    for (int i = 0; i < 4; ++i) dbl[threadIdx.x * 4 + i] = curand_uniform_double(&s);
}

// One state moved by skipahead and skipahead_subsequence after curand_init(seed, 0, 0).
__global__ void mrg_skips(unsigned long long seed, unsigned int* out) {
    curandStateMRG32k3a_t s;
    curand_init(seed, 0, 0, &s);
    skipahead(1000003ull, &s);
    out[0] = curand(&s);
    skipahead_subsequence(2, &s);
    out[1] = curand(&s);
}

__global__ void mrg_normals(unsigned long long seed, float* normal, int per_thread) {
    curandStateMRG32k3a_t s;
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    curand_init(seed, t, 0, &s);
    for (int i = 0; i < per_thread; ++i) normal[t * per_thread + i] = curand_normal(&s);
}

template <class T>
static std::vector<T> fetch(const T* d, size_t n) {
    std::vector<T> h(n);
    cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost);
    return h;
}

template <class T>
static void print(const char* key, const std::vector<T>& v, const char* format) {
    std::printf("%s=", key);
    for (size_t i = 0; i < v.size(); ++i) {
        if (i) std::printf(",");
        std::printf(format, v[i]);
    }
    std::printf("\n");
}

static void moments(const char* key, const std::vector<float>& v) {
    double sum = 0, sq = 0;
    for (float x : v) {
        sum += x;
        sq += (double)x * x;
    }
    const double mean = sum / v.size();
    std::printf("%s_n=%zu\n%s_mean=%.9g\n%s_var=%.9g\n", key, v.size(), key, mean, key, sq / v.size() - mean * mean);
}

int main() {
    const unsigned long long seed = 0x0123456789abcdefull;
    unsigned int* raw;
    float* uni;
    double* dbl;
    cudaMalloc(&raw, 16 * sizeof(unsigned int));
    cudaMalloc(&uni, 16 * sizeof(float));
    cudaMalloc(&dbl, 16 * sizeof(double));
    for (unsigned long long s : {0ull, seed}) {
        for (unsigned long long offset : {0ull, 7ull}) {
            mrg_raw<<<1, 4>>>(s, offset, raw, uni, dbl);
            char key[64];
            std::snprintf(key, sizeof(key), "dev_%llx_%llu_raw", s, offset);
            print(key, fetch(raw, 16), "%u");
            std::snprintf(key, sizeof(key), "dev_%llx_%llu_uniform", s, offset);
            print(key, fetch(uni, 16), "%a");
            std::snprintf(key, sizeof(key), "dev_%llx_%llu_double", s, offset);
            print(key, fetch(dbl, 16), "%a");
        }
    }
    mrg_skips<<<1, 1>>>(seed, raw);
    print("dev_skips", fetch(raw, 2), "%u");

    const int threads = 32, per = 800, n = threads * per;
    float* g;
    cudaMalloc(&g, n * sizeof(float));
    mrg_normals<<<1, threads>>>(seed, g, per);
    moments("dev_normal", fetch(g, n));

    // The host API: created on the device and on the host, seeded, offset, drawn in order.
    for (int host = 0; host < 2; ++host) {
        curandGenerator_t gen;
        const curandStatus_t made = host ? curandCreateGeneratorHost(&gen, CURAND_RNG_PSEUDO_MRG32K3A)
                                         : curandCreateGenerator(&gen, CURAND_RNG_PSEUDO_MRG32K3A);
        curandSetPseudoRandomGeneratorSeed(gen, seed);
        curandSetGeneratorOffset(gen, 5);
        std::vector<unsigned int> h_raw(6);
        std::vector<float> h_uni(6);
        curandGenerate(gen, raw, 6);
        curandGenerateUniform(gen, uni, 6);  // goes on where the raw numbers stopped
        const char* who = host ? "host" : "device";
        std::printf("%s_create=%d\n", who, (int)made);
        char key[64];
        std::snprintf(key, sizeof(key), "%s_api_raw", who);
        print(key, fetch(raw, 6), "%u");
        std::snprintf(key, sizeof(key), "%s_api_uniform", who);
        print(key, fetch(uni, 6), "%a");
        curandGenerateNormal(gen, g, n, 2.0f, 3.0f);
        std::snprintf(key, sizeof(key), "%s_api_normal", who);
        moments(key, fetch(g, n));
        curandDestroyGenerator(gen);
    }
    cudaFree(raw);
    cudaFree(uni);
    cudaFree(dbl);
    cudaFree(g);
    return 0;
}
