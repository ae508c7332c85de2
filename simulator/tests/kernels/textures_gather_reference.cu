// tex2Dgather of texture references (removed in CUDA 12; not for nvcc 13): a 5 x 3 uchar4
// array bound to an element-read reference (the gather returns uchar4) and to a
// normalized-float one (float4), gathered for each component at a quarter-texel grid with clamp
// addressing. Prints "NAME v0 v1 ..." lines; test_textures_gather.py models every value.
#include <cstdio>
#include <cstdlib>

#include "textures_check.h"

texture<uchar4, cudaTextureType2D, cudaReadModeElementType> t_elem;
texture<uchar4, cudaTextureType2D, cudaReadModeNormalizedFloat> t_norm;

const int UW = 5, UH = 3, NX = 45, NY = 9, NP = NX * NY;

__global__ void gather_refs(uchar4* elem, float4* norm) {
    const int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= NP) return;
    const float x = -1.5f + 0.25f * (float)(p % NX), y = -1.0f + 0.75f * (float)(p / NX);
    for (int c = 0; c < 4; c++) {
        elem[4 * p + c] = tex2Dgather(t_elem, x, y, c);
        norm[4 * p + c] = tex2Dgather(t_norm, x, y, c);
    }
}

int main() {
    static uchar4 host[UH * UW];
    for (int y = 0; y < UH; y++)
        for (int x = 0; x < UW; x++)
            host[y * UW + x] = make_uchar4((x * 37 + y * 91) % 256, (x * 37 + y * 91 + 53) % 256,
                                           (x * 37 + y * 91 + 106) % 256, (x * 37 + y * 91 + 159) % 256);
    cudaChannelFormatDesc d = cudaCreateChannelDesc<uchar4>();
    cudaArray_t arr = nullptr;
    CHECK(cudaMallocArray(&arr, &d, UW, UH));
    CHECK(cudaMemcpy2DToArray(arr, 0, 0, host, UW * sizeof(uchar4), UW * sizeof(uchar4), UH,
                              cudaMemcpyHostToDevice));
    CHECK(cudaBindTextureToArray(t_elem, arr));
    CHECK(cudaBindTextureToArray(t_norm, arr));
    uchar4* de = nullptr;
    float4* dn = nullptr;
    CHECK(cudaMalloc(&de, 4 * NP * sizeof(uchar4)));
    CHECK(cudaMalloc(&dn, 4 * NP * sizeof(float4)));
    gather_refs<<<(NP + 127) / 128, 128>>>(de, dn);
    CHECK(cudaGetLastError());
    static uchar4 elem[4 * NP];
    static float4 norm[4 * NP];
    CHECK(cudaMemcpy(elem, de, sizeof elem, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(norm, dn, sizeof norm, cudaMemcpyDeviceToHost));
    std::printf("ref_elem");
    for (int i = 0; i < 4 * NP; i++) std::printf(" %d %d %d %d", elem[i].x, elem[i].y, elem[i].z, elem[i].w);
    std::printf("\nref_norm");
    for (int i = 0; i < 4 * NP; i++) std::printf(" %.9g %.9g %.9g %.9g", norm[i].x, norm[i].y, norm[i].z, norm[i].w);
    std::printf("\ndone=1\n");
    return 0;
}
