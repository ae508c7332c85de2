// cuRAND's device and host APIs: raw outputs, jump-ahead, conversions and distributions.
// Prints key=value lines; the test checks them against its own numpy model of the generators.
#include <cstdio>
#include <vector>

#include <curand.h>
#include <curand_kernel.h>

__global__ void philox_known_answers(uint4* out) {
    out[0] = curand_Philox4x32_10(make_uint4(0, 0, 0, 0), make_uint2(0, 0));
    out[1] = curand_Philox4x32_10(make_uint4(0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu),
                                  make_uint2(0xffffffffu, 0xffffffffu));
    out[2] = curand_Philox4x32_10(make_uint4(0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u),
                                  make_uint2(0xa4093822u, 0x299f31d0u));
}

// Thread t: subsequence t, offset 3 (Philox) or 0; the first 6 raw outputs.
template <class State>
__global__ void raw(unsigned long long seed, unsigned long long offset, unsigned int* out) {
    State s;
    curand_init(seed, threadIdx.x, offset, &s);
    for (int i = 0; i < 6; ++i) out[threadIdx.x * 6 + i] = curand(&s);
}

// Many uniforms and normals, for their moments.
template <class State>
__global__ void draws(unsigned long long seed, float* uniform, float* normal, int per_thread) {
    State s;
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    curand_init(seed, t, 0, &s);
    for (int i = 0; i < per_thread; ++i) {
        uniform[t * per_thread + i] = curand_uniform(&s);
        normal[t * per_thread + i] = curand_normal(&s);
    }
}

template <class T>
static std::vector<T> fetch(const T* d, size_t n) {
    std::vector<T> h(n);
    cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost);
    return h;
}

static void print_words(const char* key, const std::vector<unsigned int>& v) {
    std::printf("%s=", key);
    for (size_t i = 0; i < v.size(); ++i) std::printf("%s%u", i ? "," : "", v[i]);
    std::printf("\n");
}

static void moments(const char* key, const std::vector<float>& v) {
    double sum = 0, sq = 0, lo = 1e30, hi = -1e30;
    for (float x : v) {
        sum += x;
        sq += (double)x * x;
        lo = x < lo ? x : lo;
        hi = x > hi ? x : hi;
    }
    const double mean = sum / v.size();
    std::printf("%s_n=%zu\n%s_mean=%.9g\n%s_var=%.9g\n%s_min=%.9g\n%s_max=%.9g\n", key, v.size(), key, mean, key,
                sq / v.size() - mean * mean, key, lo, key, hi);
}

int main() {
    uint4* kat;
    cudaMalloc(&kat, 3 * sizeof(uint4));
    philox_known_answers<<<1, 1>>>(kat);
    std::vector<uint4> k = fetch(kat, 3);
    std::vector<unsigned int> words;
    for (const uint4& q : k) words.insert(words.end(), {q.x, q.y, q.z, q.w});
    print_words("philox_kat", words);
    cudaFree(kat);

    const unsigned long long seed = 0x0123456789abcdefull;
    unsigned int* out;
    cudaMalloc(&out, 4 * 6 * sizeof(unsigned int));
    raw<curandStatePhilox4_32_10_t><<<1, 4>>>(seed, 3, out);
    print_words("philox_raw", fetch(out, 24));
    raw<curandStateXORWOW_t><<<1, 4>>>(seed, 0, out);
    print_words("xorwow_raw", fetch(out, 24));
    raw<curandStateXORWOW_t><<<1, 4>>>(seed, 5, out);
    print_words("xorwow_offset5", fetch(out, 24));
    cudaFree(out);

    const int threads = 128, per = 200, n = threads * per;
    float *u, *g;
    cudaMalloc(&u, n * sizeof(float));
    cudaMalloc(&g, n * sizeof(float));
    draws<curandStateXORWOW_t><<<2, threads / 2>>>(seed, u, g, per);
    moments("xorwow_uniform", fetch(u, n));
    moments("xorwow_normal", fetch(g, n));
    draws<curandStatePhilox4_32_10_t><<<2, threads / 2>>>(seed, u, g, per);
    moments("philox_uniform", fetch(u, n));
    moments("philox_normal", fetch(g, n));

    curandGenerator_t gen;
    curandStatus_t s = curandCreateGenerator(&gen, CURAND_RNG_PSEUDO_DEFAULT);
    curandSetPseudoRandomGeneratorSeed(gen, seed);
    curandGenerate(gen, reinterpret_cast<unsigned int*>(u), 4);
    print_words("host_raw", fetch(reinterpret_cast<unsigned int*>(u), 4));
    curandGenerateNormal(gen, g, n, 2.0f, 3.0f);
    moments("host_normal", fetch(g, n));
    const curandStatus_t odd = curandGenerateNormal(gen, g, 3, 0.0f, 1.0f);
    curandDestroyGenerator(gen);
    curandGenerator_t mtgp;
    const curandStatus_t unsupported = curandCreateGenerator(&mtgp, CURAND_RNG_PSEUDO_MTGP32);
    std::printf("create=%d\nodd_length=%d\nunsupported=%d\n", (int)s, (int)odd, (int)unsupported);
    cudaFree(u);
    cudaFree(g);
    return 0;
}
