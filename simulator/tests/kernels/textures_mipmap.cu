// Mipmapped arrays and tex2DLod: a 16 x 8 float array with its levels (10 asked for, 5 made),
// each level filled from a formula of (level, x, y); two texture objects (linear filtering with
// linear level blending, a bias and a clamp range; point filtering with point level selection)
// sampled at a grid of normalized coordinates for a list of LODs. The test models each fetch.
#include <cstdio>
#include <vector>

#include <cuda_runtime.h>

#define CHECK(x)                                                       \
    do {                                                               \
        cudaError_t e_ = (x);                                          \
        if (e_ != cudaSuccess) {                                       \
            std::printf("failed=%s:%d %s\n", __FILE__, __LINE__, #x); \
            return 1;                                                  \
        }                                                              \
    } while (0)

const int W = 16, H = 8, NU = 5, NV = 4, NLOD = 8;
__constant__ float c_lod[NLOD] = {-1.0f, 0.0f, 0.3f, 0.5f, 1.25f, 2.7f, 3.5f, 10.0f};

__global__ void sample_lods(float* out, cudaTextureObject_t tex) {
    const int i = threadIdx.x, j = threadIdx.y, l = blockIdx.x;
    const float u = -0.1f + i * 0.3f, v = 0.05f + j * 0.3f;
    out[(l * NV + j) * NU + i] = tex2DLod<float>(tex, u, v, c_lod[l]);
}

static float texel(int level, int x, int y) { return level * 10.0f + x * 0.5f + y * 0.25f; }

int main(int argc, char**) {
    const bool misuse = argc > 1;  // also the calls CUDA refuses (a checker reports them)
    cudaChannelFormatDesc desc = cudaCreateChannelDesc<float>();
    cudaMipmappedArray_t mip = nullptr;
    CHECK(cudaMallocMipmappedArray(&mip, &desc, make_cudaExtent(W, H, 0), 10, 0));
    int levels = 0;
    for (unsigned int l = 0; l < 10; l++) {
        cudaArray_t a = nullptr;
        if (cudaGetMipmappedArrayLevel(&a, mip, l) != cudaSuccess) break;
        cudaExtent e;
        CHECK(cudaArrayGetInfo(nullptr, &e, nullptr, a));
        std::printf("level%u=%zux%zu\n", l, e.width, e.height);
        std::vector<float> h(e.width * (e.height ? e.height : 1));
        for (size_t y = 0; y < (e.height ? e.height : 1); y++)
            for (size_t x = 0; x < e.width; x++) h[y * e.width + x] = texel((int)l, (int)x, (int)y);
        CHECK(cudaMemcpy2DToArray(a, 0, 0, h.data(), e.width * sizeof(float), e.width * sizeof(float),
                                  e.height ? e.height : 1, cudaMemcpyHostToDevice));
        levels++;
    }
    cudaGetLastError();  // the level past the last one set cudaErrorInvalidValue
    std::printf("levels=%d\n", levels);
    if (misuse) {
        cudaArray_t level0 = nullptr;
        CHECK(cudaGetMipmappedArrayLevel(&level0, mip, 0));
        std::printf("free_level=%d\n", (int)cudaFreeArray(level0));  // the mipmapped array owns it
        cudaGetLastError();
    }

    cudaResourceDesc res = {};
    res.resType = cudaResourceTypeMipmappedArray;
    res.res.mipmap.mipmap = mip;
    float* d_out = nullptr;
    CHECK(cudaMalloc(&d_out, sizeof(float) * NLOD * NV * NU));
    for (int which = 0; which < 2; which++) {
        cudaTextureDesc td = {};
        td.normalizedCoords = 1;
        td.addressMode[0] = td.addressMode[1] = cudaAddressModeClamp;
        td.readMode = cudaReadModeElementType;
        if (which == 0) {
            td.filterMode = cudaFilterModeLinear;
            td.mipmapFilterMode = cudaFilterModeLinear;
            td.mipmapLevelBias = 0.25f;
            td.minMipmapLevelClamp = 0.5f;
            td.maxMipmapLevelClamp = 3.0f;
        } else {
            td.filterMode = cudaFilterModePoint;
            td.mipmapFilterMode = cudaFilterModePoint;
            td.minMipmapLevelClamp = 0.0f;
            td.maxMipmapLevelClamp = 10.0f;
        }
        cudaTextureObject_t tex = 0;
        CHECK(cudaCreateTextureObject(&tex, &res, &td, nullptr));
        sample_lods<<<NLOD, dim3(NU, NV)>>>(d_out, tex);
        CHECK(cudaGetLastError());
        std::vector<float> h(NLOD * NV * NU);
        CHECK(cudaMemcpy(h.data(), d_out, sizeof(float) * h.size(), cudaMemcpyDeviceToHost));
        std::printf("%s", which == 0 ? "linear" : "point");
        for (float v : h) std::printf(" %.9g", v);
        std::printf("\n");
        CHECK(cudaDestroyTextureObject(tex));
    }
    CHECK(cudaFree(d_out));
    CHECK(cudaFreeMipmappedArray(mip));
    if (misuse) {
        std::printf("free_again=%d\n", (int)cudaFreeMipmappedArray(mip));
        cudaGetLastError();
    }
    std::printf("done=1\n");
    return 0;
}
