// tex2Dgather of texture objects: an 8 x 4 float4 array gathered for each component under every
// address mode with texel and normalized coordinates (a grid in quarter texels, on and between
// texel edges and centres and outside the texture), a 5 x 3 uchar4 array read as normalized
// float (border) and as elements (clamp), and with an argument a gather CUDA has no layered form
// of, which the simulator refuses. Prints "NAME v0 v1 ..." lines and key=value lines;
// test_textures_gather.py models every value.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

#include "textures_check.h"

const int W = 8, H = 4;    // the float4 array
const int UW = 5, UH = 3;  // the uchar4 array
const int NX = 45, NY = 9;  // x = -1.5 + 0.25 i, y = -1 + 0.75 j
const int NP = NX * NY;

__device__ float grid_x(int p) { return -1.5f + 0.25f * (float)(p % NX); }
__device__ float grid_y(int p) { return -1.0f + 0.75f * (float)(p / NX); }

// Every component of every grid point; `scale` divides texel coordinates into normalized ones.
__global__ void gather_f4(cudaTextureObject_t t, float sx, float sy, float4* out) {
    const int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= NP) return;
    const float x = grid_x(p) / sx, y = grid_y(p) / sy;
    out[4 * p + 0] = tex2Dgather<float4>(t, x, y, 0);
    out[4 * p + 1] = tex2Dgather<float4>(t, x, y, 1);
    out[4 * p + 2] = tex2Dgather<float4>(t, x, y, 2);
    out[4 * p + 3] = tex2Dgather<float4>(t, x, y, 3);
}
__global__ void gather_u4(cudaTextureObject_t tn, cudaTextureObject_t te, float4* outn, uchar4* oute) {
    const int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= NP) return;
    const float x = grid_x(p), y = grid_y(p);
    for (int c = 0; c < 4; c++) {
        outn[4 * p + c] = tex2Dgather<float4>(tn, x, y, c);
        oute[4 * p + c] = tex2Dgather<uchar4>(te, x, y, c);
    }
}
__global__ void gather_layered(cudaTextureObject_t t, float4* out) { *out = tex2Dgather<float4>(t, 0.5f, 0.5f, 0); }

static float texel(int x, int y, int c) { return 1000.0f * c + 10.0f * y + x; }
static unsigned char utexel(int x, int y, int c) { return (unsigned char)((x * 37 + y * 91 + c * 53) % 256); }

static cudaTextureObject_t make_tex(cudaArray_t a, int mode, int linear, int normalized, int read, const float* border) {
    cudaResourceDesc res;
    std::memset(&res, 0, sizeof res);
    res.resType = cudaResourceTypeArray;
    res.res.array.array = a;
    cudaTextureDesc td;
    std::memset(&td, 0, sizeof td);
    td.addressMode[0] = td.addressMode[1] = (cudaTextureAddressMode)mode;
    td.filterMode = linear ? cudaFilterModeLinear : cudaFilterModePoint;  // a gather ignores it
    td.readMode = (cudaTextureReadMode)read;
    td.normalizedCoords = normalized;
    for (int c = 0; c < 4; c++) td.borderColor[c] = border[c];
    cudaTextureObject_t t = 0;
    CHECK(cudaCreateTextureObject(&t, &res, &td, nullptr));
    return t;
}

static void print_row(const char* name, const float* v, int n) {
    std::printf("%s", name);
    for (int i = 0; i < n; i++) std::printf(" %.9g", v[i]);
    std::printf("\n");
}

static int refuse_layered() {
    cudaChannelFormatDesc d = cudaCreateChannelDesc<float>();
    cudaArray_t a = nullptr;
    CHECK(cudaMalloc3DArray(&a, &d, make_cudaExtent(4, 4, 2), cudaArrayLayered));
    const float border[4] = {0, 0, 0, 0};
    cudaTextureObject_t t = make_tex(a, cudaAddressModeClamp, 0, 0, cudaReadModeElementType, border);
    float4* out = nullptr;
    CHECK(cudaMalloc(&out, sizeof(float4)));
    gather_layered<<<1, 1>>>(t, out);
    std::printf("layered_launch=%s\n", cudaGetErrorName(cudaDeviceSynchronize()));
    return 0;
}

int main(int argc, char** argv) {
    if (argc > 1 && std::strcmp(argv[1], "layered") == 0) return refuse_layered();
    const int blocks = (NP + 127) / 128;

    static float4 host[H * W];
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            host[y * W + x] = make_float4(texel(x, y, 0), texel(x, y, 1), texel(x, y, 2), texel(x, y, 3));
    cudaChannelFormatDesc d4 = cudaCreateChannelDesc<float4>();
    cudaArray_t arr = nullptr;
    CHECK(cudaMallocArray(&arr, &d4, W, H, cudaArrayTextureGather));
    CHECK(cudaMemcpy2DToArray(arr, 0, 0, host, W * sizeof(float4), W * sizeof(float4), H, cudaMemcpyHostToDevice));

    float4* dout = nullptr;
    CHECK(cudaMalloc(&dout, 4 * NP * sizeof(float4)));
    static float4 out[4 * NP];
    const float border[4] = {-1.0f, -2.0f, -3.0f, -4.0f};
    const char* modes[4] = {"wrap", "clamp", "mirror", "border"};
    for (int norm = 0; norm < 2; norm++) {
        for (int mode = 0; mode < 4; mode++) {
            cudaTextureObject_t t = make_tex(arr, mode, (mode + norm) % 2, norm, cudaReadModeElementType, border);
            gather_f4<<<blocks, 128>>>(t, norm ? (float)W : 1.0f, norm ? (float)H : 1.0f, dout);
            CHECK(cudaGetLastError());
            CHECK(cudaMemcpy(out, dout, sizeof out, cudaMemcpyDeviceToHost));
            char name[64];
            std::snprintf(name, sizeof name, "f4_%s_%s", modes[mode], norm ? "normalized" : "texels");
            print_row(name, &out[0].x, 16 * NP);
            CHECK(cudaDestroyTextureObject(t));
        }
    }

    static uchar4 uhost[UH * UW];
    for (int y = 0; y < UH; y++)
        for (int x = 0; x < UW; x++)
            uhost[y * UW + x] = make_uchar4(utexel(x, y, 0), utexel(x, y, 1), utexel(x, y, 2), utexel(x, y, 3));
    cudaChannelFormatDesc du = cudaCreateChannelDesc<uchar4>();
    cudaArray_t uarr = nullptr;
    CHECK(cudaMallocArray(&uarr, &du, UW, UH));
    CHECK(cudaMemcpy2DToArray(uarr, 0, 0, uhost, UW * sizeof(uchar4), UW * sizeof(uchar4), UH,
                              cudaMemcpyHostToDevice));
    const float ub[4] = {0.25f, 0.5f, 0.75f, 1.0f};
    cudaTextureObject_t tn = make_tex(uarr, cudaAddressModeBorder, 1, 0, cudaReadModeNormalizedFloat, ub);
    cudaTextureObject_t te = make_tex(uarr, cudaAddressModeClamp, 0, 0, cudaReadModeElementType, ub);
    uchar4* de = nullptr;
    CHECK(cudaMalloc(&de, 4 * NP * sizeof(uchar4)));
    gather_u4<<<blocks, 128>>>(tn, te, dout, de);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(out, dout, sizeof out, cudaMemcpyDeviceToHost));
    print_row("u4_normalized_border", &out[0].x, 16 * NP);
    static uchar4 uout[4 * NP];
    CHECK(cudaMemcpy(uout, de, sizeof uout, cudaMemcpyDeviceToHost));
    std::printf("u4_element_clamp");
    for (int i = 0; i < 4 * NP; i++) std::printf(" %d %d %d %d", uout[i].x, uout[i].y, uout[i].z, uout[i].w);
    std::printf("\n");
    std::printf("done=1\n");
    return 0;
}
