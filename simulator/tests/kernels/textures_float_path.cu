// A one-channel float texture is sampled on a path of its own (sim_texture_fetch.h's tex_sample);
// a four-channel float texture whose first channel holds the same values and whose others are 0
// takes the general path. Linear fetches of both, in 1-D, 2-D, 3-D and 2-D layered arrays, every
// address mode, normalized and not, at coordinates inside, between and outside the texels, must
// agree bit for bit in all four components (a border corner adds the border colour to each).
// Prints "mismatches=N", "samples=N", "border_samples=N" (samples whose .y took a border corner).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

#include "textures_check.h"

constexpr int W = 7, H = 5, D = 3, G = 23;

__global__ void fetch_pair(cudaTextureObject_t one, cudaTextureObject_t four, int dims, float scale, float4* out1,
                           float4* out4) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= G * G * G) return;
    const float x = (-2.6f + 0.53f * (i % G)) * scale, y = (-1.9f + 0.41f * ((i / G) % G)) * scale;
    const float z = (-1.3f + 0.29f * (i / (G * G))) * scale;
    if (dims == 1) {
        out1[i] = tex1D<float4>(one, x);
        out4[i] = tex1D<float4>(four, x);
    } else if (dims == 2) {
        out1[i] = tex2D<float4>(one, x, y);
        out4[i] = tex2D<float4>(four, x, y);
    } else if (dims == 3) {
        out1[i] = tex3D<float4>(one, x, y, z);
        out4[i] = tex3D<float4>(four, x, y, z);
    } else {
        out1[i] = tex2DLayered<float4>(one, x, y, i % D);
        out4[i] = tex2DLayered<float4>(four, x, y, i % D);
    }
}

static cudaArray_t make_array(int dims, bool four) {
    cudaChannelFormatDesc f = four ? cudaCreateChannelDesc<float4>() : cudaCreateChannelDesc<float>();
    const int h = dims >= 2 ? H : 0, d = dims >= 3 ? D : 0;
    cudaArray_t a;
    CHECK(cudaMalloc3DArray(&a, &f, make_cudaExtent(W, h, d), dims == 4 ? cudaArrayLayered : 0));
    static float one[D][H][W];
    static float4 all[D][H][W];
    for (int z = 0; z < D; ++z)
        for (int y = 0; y < H; ++y)
            for (int x = 0; x < W; ++x) {
                one[z][y][x] = 0.1f * x * x - 1.37f * y + 2.9f * z + 0.013f * x * y * z - 0.7f;
                all[z][y][x] = make_float4(one[z][y][x], 0.0f, 0.0f, 0.0f);
            }
    cudaMemcpy3DParms p;
    memset(&p, 0, sizeof(p));
    const size_t elem = four ? sizeof(float4) : sizeof(float);
    p.srcPtr = make_cudaPitchedPtr(four ? (void*)all : (void*)one, W * elem, W, H);
    p.dstArray = a;
    p.extent = make_cudaExtent(W, dims >= 2 ? H : 1, dims >= 3 ? D : 1);
    p.kind = cudaMemcpyHostToDevice;
    CHECK(cudaMemcpy3D(&p));
    return a;
}

static cudaTextureObject_t make_texture(cudaArray_t a, cudaTextureAddressMode mode, int normalized) {
    cudaResourceDesc r;
    memset(&r, 0, sizeof(r));
    r.resType = cudaResourceTypeArray;
    r.res.array.array = a;
    cudaTextureDesc t;
    memset(&t, 0, sizeof(t));
    t.addressMode[0] = t.addressMode[1] = t.addressMode[2] = mode;
    t.filterMode = cudaFilterModeLinear;
    t.readMode = cudaReadModeElementType;
    t.normalizedCoords = normalized;
    t.borderColor[0] = 1.25f;
    t.borderColor[1] = -2.5f;
    t.borderColor[2] = 3.75f;
    t.borderColor[3] = 0.3f;
    cudaTextureObject_t o;
    CHECK(cudaCreateTextureObject(&o, &r, &t, nullptr));
    return o;
}

int main() {
    const int n = G * G * G;
    float4 *d1, *d4;
    CHECK(cudaMalloc(&d1, n * sizeof(float4)));
    CHECK(cudaMalloc(&d4, n * sizeof(float4)));
    static float4 h1[G * G * G], h4[G * G * G];
    long mismatches = 0, samples = 0, border = 0;
    const cudaTextureAddressMode modes[4] = {cudaAddressModeWrap, cudaAddressModeClamp, cudaAddressModeMirror,
                                             cudaAddressModeBorder};
    for (int dims = 1; dims <= 4; ++dims) {
        cudaArray_t a1 = make_array(dims, false), a4 = make_array(dims, true);
        for (cudaTextureAddressMode mode : modes)
            for (int normalized = 0; normalized < 2; ++normalized) {
                cudaTextureObject_t t1 = make_texture(a1, mode, normalized), t4 = make_texture(a4, mode, normalized);
                fetch_pair<<<(n + 127) / 128, 128>>>(t1, t4, dims, normalized ? 0.2f : 1.0f, d1, d4);
                CHECK(cudaGetLastError());
                CHECK(cudaMemcpy(h1, d1, n * sizeof(float4), cudaMemcpyDeviceToHost));
                CHECK(cudaMemcpy(h4, d4, n * sizeof(float4), cudaMemcpyDeviceToHost));
                for (int i = 0; i < n; ++i) {
                    mismatches += memcmp(&h1[i], &h4[i], sizeof(float4)) != 0;
                    border += h1[i].y != 0.0f;
                }
                samples += n;
                CHECK(cudaDestroyTextureObject(t1));
                CHECK(cudaDestroyTextureObject(t4));
            }
        CHECK(cudaFreeArray(a1));
        CHECK(cudaFreeArray(a4));
    }
    std::printf("mismatches=%ld\nsamples=%ld\nborder_samples=%ld\ndone=1\n", mismatches, samples, border);
    return 0;
}
