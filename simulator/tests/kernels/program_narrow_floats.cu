// NVIDIA's 8-, 6- and 4-bit floating-point types (<cuda_fp8.h>, <cuda_fp6.h>, <cuda_fp4.h>) in
// device code: each input converts to every format (round to nearest even, out-of-range values
// saturating to the largest finite value) and back to float. One line per input and format:
//   FORMAT INPUT_BITS STORAGE_BITS BACK_BITS
// test_narrow_floats.py works out what each line must say from the formats' definitions.
#include <cuda_fp4.h>
#include <cuda_fp6.h>
#include <cuda_fp8.h>
#include <cstdio>
#include <cstring>

constexpr int kFormats = 5;

__global__ void convert(const float* in, int n, unsigned char* bits, float* back) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const float x = in[i];
    const __nv_fp8_e4m3 a(x);
    const __nv_fp8_e5m2 b(x);
    const __nv_fp6_e2m3 c(x);
    const __nv_fp6_e3m2 d(x);
    const __nv_fp4_e2m1 e(x);
    const unsigned char stored[kFormats] = {a.__x, b.__x, c.__x, d.__x, e.__x};
    const float decoded[kFormats] = {float(a), float(b), float(c), float(d), float(e)};
    for (int k = 0; k < kFormats; ++k) {
        bits[i * kFormats + k] = stored[k];
        back[i * kFormats + k] = decoded[k];
    }
}

static unsigned int bits_of(float f) {
    unsigned int u;
    std::memcpy(&u, &f, 4);
    return u;
}

int main() {
    const float inputs[] = {0.0f, -0.0f, 1.0f, -1.5f, 0.3f, 2.75f, 3.1f, 5.0f, 6.5f, 7.75f, 17.0f, 300.0f,
                            449.0f, 500.0f, 1e5f, -1e9f, 0.0009765625f, 1e-3f, 1.2e-5f, 1e-30f, 0.0625f,
                            0.1875f, 28.5f, 240.0f, 57344.0f, 61440.0f, __builtin_nanf(""),
                            __builtin_inff(), -__builtin_inff()};
    const int n = sizeof(inputs) / sizeof(inputs[0]);
    float *in, *back;
    unsigned char* bits;
    if (cudaMallocManaged(&in, sizeof(inputs)) != cudaSuccess ||
        cudaMallocManaged(&back, n * kFormats * sizeof(float)) != cudaSuccess ||
        cudaMallocManaged(&bits, n * kFormats) != cudaSuccess)
        return 1;
    std::memcpy(in, inputs, sizeof(inputs));
    convert<<<(n + 31) / 32, 32>>>(in, n, bits, back);
    if (cudaDeviceSynchronize() != cudaSuccess) return 2;
    const char* names[kFormats] = {"e4m3", "e5m2", "e2m3", "e3m2", "e2m1"};
    for (int i = 0; i < n; ++i)
        for (int k = 0; k < kFormats; ++k)
            std::printf("%s %08x %02x %08x\n", names[k], bits_of(inputs[i]), bits[i * kFormats + k],
                        bits_of(back[i * kFormats + k]));
    cudaFree(in);
    cudaFree(back);
    cudaFree(bits);
    return 0;
}
