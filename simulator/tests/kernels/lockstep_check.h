// Host helpers of the lockstep test programs (program_interchange.cu, program_gridstride.cu):
// which kernels to run, the check of a result against the host's with a hash of its bits, copies
// to and from the device, and exact inputs.
#pragma once
#include <cstdio>
#include <cstring>
#include <vector>

static bool wanted(const char* only, const char* name) { return only == nullptr || std::strcmp(only, name) == 0; }

// Prints whether every value is the host's and a hash of their bits, which a run with fibers must
// match exactly. The inputs are multiples of 1/4 small enough that every product and sum is exact:
// whether the compiler contracts a multiply and an add into one (nvcc's -fmad=true, which the
// simulator's device code follows where the CPU has FMA) then changes no bit, and a difference
// can only come from the order of the operations or the values they read.
static void report(const char* name, const std::vector<float>& got, const std::vector<float>& want) {
    bool ok = got.size() == want.size();
    for (size_t i = 0; ok && i < got.size(); ++i) ok = got[i] == want[i];
    std::printf("%s %s ", name, ok ? "ok" : "WRONG");
    unsigned long long hash = 14695981039346656037ull;  // FNV-1a over the values' bytes
    for (float v : got) {
        unsigned char bytes[sizeof v];
        std::memcpy(bytes, &v, sizeof v);
        for (unsigned char b : bytes) hash = (hash ^ b) * 1099511628211ull;
    }
    std::printf("%016llx\n", hash);
}

static float* to_device(const std::vector<float>& h) {
    float* d = nullptr;
    cudaMalloc(&d, h.size() * sizeof(float));
    cudaMemcpy(d, h.data(), h.size() * sizeof(float), cudaMemcpyHostToDevice);
    return d;
}

static std::vector<float> from_device(const float* d, size_t n) {
    std::vector<float> h(n);
    cudaMemcpy(h.data(), d, n * sizeof(float), cudaMemcpyDeviceToHost);
    return h;
}

static std::vector<float> values(size_t n, int seed) {
    std::vector<float> v(n);
    unsigned int s = 12345u + (unsigned)seed;
    for (auto& x : v) {
        s = s * 1664525u + 1013904223u;
        x = (float)((int)((s >> 8) % 17) - 8) / 4.0f;
    }
    return v;
}
