// Texture objects over CUDA arrays, pitched and linear memory: every address mode, point and
// linear filtering, normalized coordinates, element and normalized-float reads, layered and
// cubemap arrays, the array copies and the documented errors. Prints "NAME v0 v1 ..." lines
// (the samples, in order) and key=value lines; test_textures.py models the expected values.
// With "float_path" it runs only the one-channel float fetch check below (float_path_main), with
// "gather" only the gathers (gather_case): one program for all, so that each mode builds it once.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

#include "textures_check.h"

__global__ void sample1d(cudaTextureObject_t t, const float* xs, int n, float* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex1D<float>(t, xs[i]);
}
__global__ void sample2d(cudaTextureObject_t t, const float2* xy, int n, float* out, int lod) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    if (lod == 0) out[i] = tex2D<float>(t, xy[i].x, xy[i].y);
    else if (lod == 1) out[i] = tex2DLod<float>(t, xy[i].x, xy[i].y, 0.0f);
    else out[i] = tex2DGrad<float>(t, xy[i].x, xy[i].y, make_float2(0.0f, 0.0f), make_float2(0.0f, 0.0f));
}
__global__ void sample2d_f4(cudaTextureObject_t t, const float2* xy, int n, float4* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex2D<float4>(t, xy[i].x, xy[i].y);
}
__global__ void sample2d_u4(cudaTextureObject_t t, const float2* xy, int n, uchar4* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex2D<uchar4>(t, xy[i].x, xy[i].y);
}
__global__ void sample3d(cudaTextureObject_t t, const float4* p, int n, float* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex3D<float>(t, p[i].x, p[i].y, p[i].z) + 0.0f * tex3DLod<float>(t, 0.0f, 0.0f, 0.0f, 0.0f);
}
__global__ void sample_layered(cudaTextureObject_t t1, cudaTextureObject_t t2, const float* xs, int n, float* out1,
                               float* out2) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    out1[i] = tex1DLayered<float>(t1, xs[i], i % 3);
    out2[i] = tex2DLayered<float>(t2, xs[i], 0.5f * xs[i] + 1.0f, i % 2);
}
__global__ void sample_cube(cudaTextureObject_t t, const float4* d, int n, float* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = texCubemap<float>(t, d[i].x, d[i].y, d[i].z);
}
__global__ void sample_cube_layered(cudaTextureObject_t t, const float4* d, int n, int layer, float* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = texCubemapLayered<float>(t, d[i].x, d[i].y, d[i].z, layer);
}
__global__ void fetch_float2(cudaTextureObject_t t, int n, float2* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex1Dfetch<float2>(t, i);
}
__global__ void fetch_int(cudaTextureObject_t t, int n, int* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex1Dfetch<int>(t, i - 2);
}
__global__ void fetch_float(cudaTextureObject_t t, int n, float* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex1Dfetch<float>(t, i);
}

template <class T>
static T* to_device(const T* host, int n) {
    T* d = nullptr;
    CHECK(cudaMalloc(&d, n * sizeof(T)));
    CHECK(cudaMemcpy(d, host, n * sizeof(T), cudaMemcpyHostToDevice));
    return d;
}

static void print_floats(const char* name, const float* v, int n) {
    std::printf("%s", name);
    for (int i = 0; i < n; ++i) std::printf(" %.9g", v[i]);
    std::printf("\n");
}

static cudaTextureDesc tex_desc(cudaTextureAddressMode mode, cudaTextureFilterMode filter, int normalized,
                                cudaTextureReadMode read = cudaReadModeElementType) {
    cudaTextureDesc d;
    memset(&d, 0, sizeof(d));
    d.addressMode[0] = d.addressMode[1] = d.addressMode[2] = mode;
    d.filterMode = filter;
    d.readMode = read;
    d.normalizedCoords = normalized;
    d.borderColor[0] = 9.5f;
    d.borderColor[1] = 9.5f;
    d.borderColor[2] = 9.5f;
    d.borderColor[3] = 9.5f;
    return d;
}

static cudaResourceDesc array_res(cudaArray_t a) {
    cudaResourceDesc r;
    memset(&r, 0, sizeof(r));
    r.resType = cudaResourceTypeArray;
    r.res.array.array = a;
    return r;
}

// ---- "float_path": a one-channel float texture is sampled on a path of its own
// (sim_texture_fetch.h's tex_sample); a four-channel float texture whose first channel holds the
// same values and whose others are 0 takes the general path. Linear fetches of both, in 1-D, 2-D,
// 3-D and 2-D layered arrays, every address mode, normalized and not, at coordinates inside,
// between and outside the texels, must agree bit for bit in all four components (a border corner
// adds the border colour to each). Prints "mismatches=N", "samples=N", "border_samples=N" (samples
// whose .y took a border corner).
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

static int float_path_main() {
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

// ---- "gather": tex2Dgather of texture objects: an 8 x 4 float4 array gathered for each component
// under every address mode with texel and normalized coordinates (a grid in quarter texels, on and
// between texel edges and centres and outside the texture), a 5 x 3 uchar4 array read as
// normalized float (border) and as elements (clamp), and with "gather layered" a gather CUDA has no
// layered form of, which the simulator refuses. Prints "NAME v0 v1 ..." lines and key=value lines;
// test_textures_gather.py models every value. In a namespace of its own: its names are its own.
namespace gather_case {
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

int gather_main(int argc, char** argv) {
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
}  // namespace gather_case

static const char* kModes[4] = {"wrap", "clamp", "mirror", "border"};
static const char* kFilters[2] = {"point", "linear"};

int main(int argc, char** argv) {
    if (argc > 1 && std::strcmp(argv[1], "float_path") == 0) return float_path_main();
    if (argc > 1 && std::strcmp(argv[1], "gather") == 0) return gather_case::gather_main(argc - 1, argv + 1);
    const int T = 128;  // threads per block
    // ---- 1-D float array of 8 texels, every mode x filter x normalization -------------------
    const int W1 = 8, N1 = 91;
    float d1[W1];
    for (int i = 0; i < W1; ++i) d1[i] = (float)((i * 5) % 7) - 1.5f + 0.25f * i;
    cudaChannelFormatDesc fdesc = cudaCreateChannelDesc<float>();
    cudaArray_t a1;
    CHECK(cudaMallocArray(&a1, &fdesc, W1));
    CHECK(cudaMemcpy2DToArray(a1, 0, 0, d1, sizeof(d1), sizeof(d1), 1, cudaMemcpyHostToDevice));
    float xs[N1], xn[N1];
    for (int k = 0; k < N1; ++k) {
        xs[k] = -2.0f + k * 0.15625f;
        xn[k] = xs[k] / W1;
    }
    float* d_xs = to_device(xs, N1);
    float* d_xn = to_device(xn, N1);
    float* d_out;
    CHECK(cudaMalloc(&d_out, 4096 * sizeof(float)));
    float out[4096];
    char name[64];
    for (int m = 0; m < 4; ++m) {
        for (int f = 0; f < 2; ++f) {
            for (int nrm = 0; nrm < 2; ++nrm) {
                cudaResourceDesc r = array_res(a1);
                cudaTextureDesc td = tex_desc((cudaTextureAddressMode)m, (cudaTextureFilterMode)f, nrm);
                cudaTextureObject_t t;
                CHECK(cudaCreateTextureObject(&t, &r, &td, nullptr));
                sample1d<<<1, T>>>(t, nrm ? d_xn : d_xs, N1, d_out);
                CHECK(cudaGetLastError());
                CHECK(cudaMemcpy(out, d_out, N1 * sizeof(float), cudaMemcpyDeviceToHost));
                std::snprintf(name, sizeof name, "tex1d_%s_%s_%d", kModes[m], kFilters[f], nrm);
                print_floats(name, out, N1);
                CHECK(cudaDestroyTextureObject(t));
            }
        }
    }

    // A fine sweep across texels 0 and 1, whose fractions are not multiples of 1/256.
    {
        const int NF = 205;
        float xf[NF];
        for (int k = 0; k < NF; ++k) xf[k] = 0.5f + k * 0.0049f;
        float* d_xf = to_device(xf, NF);
        cudaResourceDesc r = array_res(a1);
        cudaTextureDesc td = tex_desc(cudaAddressModeClamp, cudaFilterModeLinear, 0);
        cudaTextureObject_t t;
        CHECK(cudaCreateTextureObject(&t, &r, &td, nullptr));
        sample1d<<<(NF + T - 1) / T, T>>>(t, d_xf, NF, d_out);
        CHECK(cudaMemcpy(out, d_out, NF * sizeof(float), cudaMemcpyDeviceToHost));
        print_floats("tex1d_fine", out, NF);
        CHECK(cudaDestroyTextureObject(t));
        CHECK(cudaFree(d_xf));
    }

    // ---- 2-D float array 8 x 4 (through a pitched host buffer), every combination ----------
    const int W2 = 8, H2 = 4, GX = 13, GY = 10, N2 = GX * GY;
    float d2[H2][10];  // host pitch of 10 floats
    for (int y = 0; y < H2; ++y)
        for (int x = 0; x < W2; ++x) d2[y][x] = x * 1.5f + y * y * 0.75f - 2.0f;
    cudaArray_t a2;
    CHECK(cudaMallocArray(&a2, &fdesc, W2, H2));
    CHECK(cudaMemcpy2DToArray(a2, 0, 0, d2, 10 * sizeof(float), W2 * sizeof(float), H2, cudaMemcpyHostToDevice));
    float2 g[N2], gn[N2];
    for (int j = 0; j < GY; ++j)
        for (int i = 0; i < GX; ++i) {
            g[j * GX + i] = make_float2(-1.5f + i * 0.78125f, -1.25f + j * 0.65625f);
            gn[j * GX + i] = make_float2(g[j * GX + i].x / W2, g[j * GX + i].y / H2);
        }
    float2* d_g = to_device(g, N2);
    float2* d_gn = to_device(gn, N2);
    for (int m = 0; m < 4; ++m) {
        for (int f = 0; f < 2; ++f) {
            for (int nrm = 0; nrm < 2; ++nrm) {
                cudaResourceDesc r = array_res(a2);
                cudaTextureDesc td = tex_desc((cudaTextureAddressMode)m, (cudaTextureFilterMode)f, nrm);
                cudaTextureObject_t t;
                CHECK(cudaCreateTextureObject(&t, &r, &td, nullptr));
                sample2d<<<(N2 + T - 1) / T, T>>>(t, nrm ? d_gn : d_g, N2, d_out, (m + f) % 3);
                CHECK(cudaGetLastError());
                CHECK(cudaMemcpy(out, d_out, N2 * sizeof(float), cudaMemcpyDeviceToHost));
                std::snprintf(name, sizeof name, "tex2d_%s_%s_%d", kModes[m], kFilters[f], nrm);
                print_floats(name, out, N2);
                CHECK(cudaDestroyTextureObject(t));
            }
        }
    }
    // The array back through cudaMemcpy2DFromArray, and a 3 x 2 block copied array to array.
    float back[H2][W2];
    CHECK(cudaMemcpy2DFromArray(back, W2 * sizeof(float), a2, 0, 0, W2 * sizeof(float), H2, cudaMemcpyDeviceToHost));
    int mismatches = 0;
    for (int y = 0; y < H2; ++y)
        for (int x = 0; x < W2; ++x) mismatches += back[y][x] != d2[y][x];
    std::printf("roundtrip2d_mismatches=%d\n", mismatches);
    cudaArray_t a2b;
    CHECK(cudaMallocArray(&a2b, &fdesc, 3, 2));
    CHECK(cudaMemcpy2DArrayToArray(a2b, 0, 0, a2, 1 * sizeof(float), 2, 3 * sizeof(float), 2));
    float block[2][3];
    CHECK(cudaMemcpy2DFromArray(block, 3 * sizeof(float), a2b, 0, 0, 3 * sizeof(float), 2, cudaMemcpyDeviceToHost));
    print_floats("block_x1_y2", &block[0][0], 6);
    // The deprecated 1-D forms: 3 floats written at element 2 of row 1, then row 1 read back.
    const float three[3] = {100.0f, 200.0f, 300.0f};
    CHECK(cudaMemcpyToArray(a2b, 0, 1, three, sizeof(three), cudaMemcpyHostToDevice));
    float row1[3];
    CHECK(cudaMemcpyFromArray(row1, a2b, 0, 1, sizeof(row1), cudaMemcpyDeviceToHost));
    print_floats("to_from_array", row1, 3);

    // ---- pitched uchar4: normalized-float linear reads, and element reads ------------------
    const int WP = 6, HP = 5;
    uchar4 hp[HP][WP];
    for (int y = 0; y < HP; ++y)
        for (int x = 0; x < WP; ++x)
            hp[y][x] = make_uchar4((unsigned char)((x * 40 + y * 7) % 256), (unsigned char)((x * x * 9 + y) % 256),
                                   (unsigned char)(255 - x * 20 - y * 30), (unsigned char)((x * y * 11) % 256));
    uchar4* d_p;
    size_t pitch;
    CHECK(cudaMallocPitch(&d_p, &pitch, WP * sizeof(uchar4), HP));
    CHECK(cudaMemcpy2D(d_p, pitch, hp, WP * sizeof(uchar4), WP * sizeof(uchar4), HP, cudaMemcpyHostToDevice));
    cudaResourceDesc rp;
    memset(&rp, 0, sizeof(rp));
    rp.resType = cudaResourceTypePitch2D;
    rp.res.pitch2D.devPtr = d_p;
    rp.res.pitch2D.desc = cudaCreateChannelDesc<uchar4>();
    rp.res.pitch2D.width = WP;
    rp.res.pitch2D.height = HP;
    rp.res.pitch2D.pitchInBytes = pitch;
    cudaTextureDesc tdp = tex_desc(cudaAddressModeClamp, cudaFilterModeLinear, 0, cudaReadModeNormalizedFloat);
    cudaTextureObject_t tp;
    CHECK(cudaCreateTextureObject(&tp, &rp, &tdp, nullptr));
    float4* d_out4;
    CHECK(cudaMalloc(&d_out4, N2 * sizeof(float4)));
    sample2d_f4<<<(N2 + T - 1) / T, T>>>(tp, d_g, N2, d_out4);
    float4 out4[N2];
    CHECK(cudaMemcpy(out4, d_out4, sizeof(out4), cudaMemcpyDeviceToHost));
    print_floats("pitch_uchar4_norm_linear", &out4[0].x, 4 * N2);
    CHECK(cudaDestroyTextureObject(tp));
    tdp = tex_desc(cudaAddressModeBorder, cudaFilterModePoint, 0, cudaReadModeElementType);
    tdp.borderColor[0] = 7.0f;
    tdp.borderColor[1] = 8.0f;
    tdp.borderColor[2] = 9.0f;
    tdp.borderColor[3] = 10.0f;
    CHECK(cudaCreateTextureObject(&tp, &rp, &tdp, nullptr));
    uchar4* d_u4;
    CHECK(cudaMalloc(&d_u4, N2 * sizeof(uchar4)));
    sample2d_u4<<<(N2 + T - 1) / T, T>>>(tp, d_g, N2, d_u4);
    uchar4 u4[N2];
    CHECK(cudaMemcpy(u4, d_u4, sizeof(u4), cudaMemcpyDeviceToHost));
    std::printf("pitch_uchar4_point_border");
    for (int i = 0; i < N2; ++i) std::printf(" %d %d %d %d", u4[i].x, u4[i].y, u4[i].z, u4[i].w);
    std::printf("\n");
    CHECK(cudaDestroyTextureObject(tp));

    // ---- linear memory: tex1Dfetch with element (int) and normalized (short) reads ----------
    const int NL = 10;
    int hl[NL];
    for (int i = 0; i < NL; ++i) hl[i] = i * i - 20;
    int* d_l = to_device(hl, NL);
    cudaResourceDesc rl;
    memset(&rl, 0, sizeof(rl));
    rl.resType = cudaResourceTypeLinear;
    rl.res.linear.devPtr = d_l;
    rl.res.linear.desc = cudaCreateChannelDesc<int>();
    rl.res.linear.sizeInBytes = sizeof(hl);
    cudaTextureDesc tdl = tex_desc(cudaAddressModeClamp, cudaFilterModePoint, 0);
    cudaTextureObject_t tl;
    CHECK(cudaCreateTextureObject(&tl, &rl, &tdl, nullptr));
    int* d_iout;
    CHECK(cudaMalloc(&d_iout, 16 * sizeof(int)));
    fetch_int<<<1, 32>>>(tl, 15, d_iout);
    int iout[15];
    CHECK(cudaMemcpy(iout, d_iout, sizeof(iout), cudaMemcpyDeviceToHost));
    std::printf("fetch_int");
    for (int i = 0; i < 15; ++i) std::printf(" %d", iout[i]);
    std::printf("\n");
    // The documented errors: linear filtering of integer elements, normalized 32-bit reads.
    tdl.filterMode = cudaFilterModeLinear;
    cudaTextureObject_t bad;
    std::printf("err_linear_int=%s\n", cudaGetErrorName(cudaCreateTextureObject(&bad, &rl, &tdl, nullptr)));
    tdl.filterMode = cudaFilterModePoint;
    tdl.readMode = cudaReadModeNormalizedFloat;
    std::printf("err_norm_int32=%s\n", cudaGetErrorName(cudaCreateTextureObject(&bad, &rl, &tdl, nullptr)));
    CHECK(cudaDestroyTextureObject(tl));
    const short hs[8] = {-32768, -32767, -16384, -1, 0, 1, 16384, 32767};
    short* d_s = to_device(hs, 8);
    rl.res.linear.devPtr = d_s;
    rl.res.linear.desc = cudaCreateChannelDesc<short>();
    rl.res.linear.sizeInBytes = sizeof(hs);
    CHECK(cudaCreateTextureObject(&tl, &rl, &tdl, nullptr));
    fetch_float<<<1, 32>>>(tl, 8, d_out);
    CHECK(cudaMemcpy(out, d_out, 8 * sizeof(float), cudaMemcpyDeviceToHost));
    print_floats("fetch_short_norm", out, 8);
    CHECK(cudaDestroyTextureObject(tl));
    // 16-bit float channels read as float; signed char and ushort2 as normalized floats.
    const unsigned short hbits[6] = {0x3C00, 0xC000, 0x3800, 0x7BFF, 0x0001, 0x8400};
    unsigned short* d_h = to_device(hbits, 6);
    rl.res.linear.devPtr = d_h;
    rl.res.linear.desc = cudaCreateChannelDescHalf();
    rl.res.linear.sizeInBytes = sizeof(hbits);
    tdl.readMode = cudaReadModeElementType;
    CHECK(cudaCreateTextureObject(&tl, &rl, &tdl, nullptr));
    fetch_float<<<1, 32>>>(tl, 6, d_out);
    CHECK(cudaMemcpy(out, d_out, 6 * sizeof(float), cudaMemcpyDeviceToHost));
    print_floats("fetch_half", out, 6);
    CHECK(cudaDestroyTextureObject(tl));
    const signed char hsc[5] = {-128, -127, -1, 0, 127};
    signed char* d_sc = to_device(hsc, 5);
    rl.res.linear.devPtr = d_sc;
    rl.res.linear.desc = cudaCreateChannelDesc<signed char>();
    rl.res.linear.sizeInBytes = sizeof(hsc);
    tdl.readMode = cudaReadModeNormalizedFloat;
    CHECK(cudaCreateTextureObject(&tl, &rl, &tdl, nullptr));
    fetch_float<<<1, 32>>>(tl, 5, d_out);
    CHECK(cudaMemcpy(out, d_out, 5 * sizeof(float), cudaMemcpyDeviceToHost));
    print_floats("fetch_schar_norm", out, 5);
    CHECK(cudaDestroyTextureObject(tl));
    const ushort2 hu2[3] = {make_ushort2(0, 65535), make_ushort2(1, 32768), make_ushort2(65534, 257)};
    ushort2* d_u2 = to_device(hu2, 3);
    rl.res.linear.devPtr = d_u2;
    rl.res.linear.desc = cudaCreateChannelDesc<ushort2>();
    rl.res.linear.sizeInBytes = sizeof(hu2);
    CHECK(cudaCreateTextureObject(&tl, &rl, &tdl, nullptr));
    fetch_float2<<<1, 32>>>(tl, 3, reinterpret_cast<float2*>(d_out));
    CHECK(cudaMemcpy(out, d_out, 6 * sizeof(float), cudaMemcpyDeviceToHost));
    print_floats("fetch_ushort2_norm", out, 6);
    CHECK(cudaDestroyTextureObject(tl));
    CHECK(cudaFree(d_h));
    CHECK(cudaFree(d_sc));
    CHECK(cudaFree(d_u2));

    // ---- 3-D float array 4 x 4 x 2 through cudaMemcpy3D, trilinear ---------------------------
    const int W3 = 4, H3 = 4, D3 = 2, G3 = 10, N3 = G3 * G3 * 5;
    float h3[D3][H3][W3];
    for (int z = 0; z < D3; ++z)
        for (int y = 0; y < H3; ++y)
            for (int x = 0; x < W3; ++x) h3[z][y][x] = x + 2.0f * y * y - 3.0f * z + 0.5f * x * z;
    cudaArray_t a3;
    CHECK(cudaMalloc3DArray(&a3, &fdesc, make_cudaExtent(W3, H3, D3)));
    cudaMemcpy3DParms p3;
    memset(&p3, 0, sizeof(p3));
    p3.srcPtr = make_cudaPitchedPtr(h3, W3 * sizeof(float), W3, H3);
    p3.dstArray = a3;
    p3.extent = make_cudaExtent(W3, H3, D3);
    p3.kind = cudaMemcpyHostToDevice;
    CHECK(cudaMemcpy3D(&p3));
    // Back through a cudaMalloc3D buffer: array -> pitched device -> host.
    cudaPitchedPtr pd;
    CHECK(cudaMalloc3D(&pd, make_cudaExtent(W3 * sizeof(float), H3, D3)));
    memset(&p3, 0, sizeof(p3));
    p3.srcArray = a3;
    p3.dstPtr = pd;
    p3.extent = make_cudaExtent(W3, H3, D3);
    p3.kind = cudaMemcpyDeviceToDevice;
    CHECK(cudaMemcpy3D(&p3));
    float h3b[D3][H3][W3];
    memset(&p3, 0, sizeof(p3));
    p3.srcPtr = pd;
    p3.srcPos = make_cudaPos(sizeof(float), 1, 0);
    p3.dstPtr = make_cudaPitchedPtr(h3b, W3 * sizeof(float), W3, H3);
    p3.dstPos = make_cudaPos(sizeof(float), 1, 0);
    p3.extent = make_cudaExtent((W3 - 1) * sizeof(float), H3 - 1, D3);
    p3.kind = cudaMemcpyDeviceToHost;
    memset(h3b, 0, sizeof(h3b));
    CHECK(cudaMemcpy3D(&p3));
    mismatches = 0;
    for (int z = 0; z < D3; ++z)
        for (int y = 0; y < H3; ++y)
            for (int x = 0; x < W3; ++x) mismatches += h3b[z][y][x] != ((x >= 1 && y >= 1) ? h3[z][y][x] : 0.0f);
    std::printf("roundtrip3d_mismatches=%d\n", mismatches);
    CHECK(cudaFree(pd.ptr));
    float4 p[N3];
    for (int k = 0; k < 5; ++k)
        for (int j = 0; j < G3; ++j)
            for (int i = 0; i < G3; ++i)
                p[(k * G3 + j) * G3 + i] = make_float4(-0.75f + i * 0.5625f, -0.75f + j * 0.5625f, -0.5f + k * 0.6875f, 0);
    float4* d_p3 = to_device(p, N3);
    cudaResourceDesc r3 = array_res(a3);
    cudaTextureDesc td3 = tex_desc(cudaAddressModeClamp, cudaFilterModeLinear, 0);
    cudaTextureObject_t t3;
    CHECK(cudaCreateTextureObject(&t3, &r3, &td3, nullptr));
    sample3d<<<(N3 + T - 1) / T, T>>>(t3, d_p3, N3, d_out);
    CHECK(cudaMemcpy(out, d_out, N3 * sizeof(float), cudaMemcpyDeviceToHost));
    print_floats("tex3d_clamp_linear", out, N3);
    CHECK(cudaDestroyTextureObject(t3));

    // ---- layered arrays: 1-D (8 wide, 3 layers) and 2-D (4 x 4, 2 layers), linear, clamp -----
    const int NLY = 40;
    float hl1[3][8], hl2[2][4][4];
    for (int l = 0; l < 3; ++l)
        for (int x = 0; x < 8; ++x) hl1[l][x] = 10.0f * l + x * x * 0.5f;
    for (int l = 0; l < 2; ++l)
        for (int y = 0; y < 4; ++y)
            for (int x = 0; x < 4; ++x) hl2[l][y][x] = -5.0f * l + x - 2.0f * y + 0.25f * x * y;
    cudaArray_t al1, al2;
    CHECK(cudaMalloc3DArray(&al1, &fdesc, make_cudaExtent(8, 0, 3), cudaArrayLayered));
    CHECK(cudaMalloc3DArray(&al2, &fdesc, make_cudaExtent(4, 4, 2), cudaArrayLayered));
    memset(&p3, 0, sizeof(p3));
    p3.srcPtr = make_cudaPitchedPtr(hl1, 8 * sizeof(float), 8, 1);
    p3.dstArray = al1;
    p3.extent = make_cudaExtent(8, 1, 3);
    p3.kind = cudaMemcpyHostToDevice;
    CHECK(cudaMemcpy3D(&p3));
    p3.srcPtr = make_cudaPitchedPtr(hl2, 4 * sizeof(float), 4, 4);
    p3.dstArray = al2;
    p3.extent = make_cudaExtent(4, 4, 2);
    CHECK(cudaMemcpy3D(&p3));
    cudaChannelFormatDesc info_desc;
    cudaExtent info_ext;
    unsigned int info_flags;
    CHECK(cudaArrayGetInfo(&info_desc, &info_ext, &info_flags, al2));
    std::printf("info=%d %d %d %d %d %zu %zu %zu %u\n", info_desc.x, info_desc.y, info_desc.z, info_desc.w,
                (int)info_desc.f, info_ext.width, info_ext.height, info_ext.depth, info_flags);
    float xl[NLY];
    for (int k = 0; k < NLY; ++k) xl[k] = -1.0f + k * 0.25f;
    float* d_xl = to_device(xl, NLY);
    cudaResourceDesc rl1 = array_res(al1), rl2 = array_res(al2);
    cudaTextureDesc tdly = tex_desc(cudaAddressModeClamp, cudaFilterModeLinear, 0);
    cudaTextureObject_t tl1, tl2;
    CHECK(cudaCreateTextureObject(&tl1, &rl1, &tdly, nullptr));
    CHECK(cudaCreateTextureObject(&tl2, &rl2, &tdly, nullptr));
    float* d_out2;
    CHECK(cudaMalloc(&d_out2, NLY * sizeof(float)));
    sample_layered<<<1, 64>>>(tl1, tl2, d_xl, NLY, d_out, d_out2);
    CHECK(cudaMemcpy(out, d_out, NLY * sizeof(float), cudaMemcpyDeviceToHost));
    print_floats("layered1d", out, NLY);
    CHECK(cudaMemcpy(out, d_out2, NLY * sizeof(float), cudaMemcpyDeviceToHost));
    print_floats("layered2d", out, NLY);
    CHECK(cudaDestroyTextureObject(tl1));
    CHECK(cudaDestroyTextureObject(tl2));

    // ---- cubemap 4 x 4 x 6, point sampling along directions with one major axis ------------
    float hc[6][4][4];
    for (int f = 0; f < 6; ++f)
        for (int y = 0; y < 4; ++y)
            for (int x = 0; x < 4; ++x) hc[f][y][x] = f * 100.0f + y * 4 + x;
    cudaArray_t ac;
    CHECK(cudaMalloc3DArray(&ac, &fdesc, make_cudaExtent(4, 4, 6), cudaArrayCubemap));
    memset(&p3, 0, sizeof(p3));
    p3.srcPtr = make_cudaPitchedPtr(hc, 4 * sizeof(float), 4, 4);
    p3.dstArray = ac;
    p3.extent = make_cudaExtent(4, 4, 6);
    p3.kind = cudaMemcpyHostToDevice;
    CHECK(cudaMemcpy3D(&p3));
    const float comps[7] = {-1.0f, -0.625f, -0.25f, 0.0f, 0.375f, 0.75f, 1.0f};
    float4 dirs[343];
    int nd = 0;
    for (int i = 0; i < 7; ++i)
        for (int j = 0; j < 7; ++j)
            for (int k = 0; k < 7; ++k) {
                float ax = fabsf(comps[i]), ay = fabsf(comps[j]), az = fabsf(comps[k]);
                float m = fmaxf(ax, fmaxf(ay, az));
                if (m == 0.0f || (ax == m) + (ay == m) + (az == m) > 1) continue;  // one major axis only
                dirs[nd++] = make_float4(comps[i], comps[j], comps[k], 0.0f);
            }
    std::printf("cube_directions=%d\n", nd);
    float4* d_dirs = to_device(dirs, nd);
    cudaResourceDesc rc = array_res(ac);
    cudaTextureDesc tdc = tex_desc(cudaAddressModeClamp, cudaFilterModePoint, 1);
    cudaTextureObject_t tc;
    CHECK(cudaCreateTextureObject(&tc, &rc, &tdc, nullptr));
    sample_cube<<<(nd + T - 1) / T, T>>>(tc, d_dirs, nd, d_out);
    CHECK(cudaMemcpy(out, d_out, nd * sizeof(float), cudaMemcpyDeviceToHost));
    print_floats("cubemap_point", out, nd);
    CHECK(cudaDestroyTextureObject(tc));
    // A layered cubemap of 2 x 6 faces: layer 1 holds faces 6..11 of the same formula.
    float hcl[12][4][4];
    for (int f = 0; f < 12; ++f)
        for (int y = 0; y < 4; ++y)
            for (int x = 0; x < 4; ++x) hcl[f][y][x] = f * 100.0f + y * 4 + x;
    cudaArray_t acl;
    CHECK(cudaMalloc3DArray(&acl, &fdesc, make_cudaExtent(4, 4, 12), cudaArrayCubemap | cudaArrayLayered));
    memset(&p3, 0, sizeof(p3));
    p3.srcPtr = make_cudaPitchedPtr(hcl, 4 * sizeof(float), 4, 4);
    p3.dstArray = acl;
    p3.extent = make_cudaExtent(4, 4, 12);
    p3.kind = cudaMemcpyHostToDevice;
    CHECK(cudaMemcpy3D(&p3));
    rc = array_res(acl);
    CHECK(cudaCreateTextureObject(&tc, &rc, &tdc, nullptr));
    sample_cube_layered<<<(nd + T - 1) / T, T>>>(tc, d_dirs, nd, 1, d_out);
    CHECK(cudaMemcpy(out, d_out, nd * sizeof(float), cudaMemcpyDeviceToHost));
    print_floats("cubemap_layer1_point", out, nd);
    CHECK(cudaDestroyTextureObject(tc));
    CHECK(cudaFreeArray(acl));

    // ---- argument errors ----------------------------------------------------------------------
    cudaArray_t bad_array;
    std::printf("err_cube_shape=%s\n", cudaGetErrorName(cudaMalloc3DArray(&bad_array, &fdesc, make_cudaExtent(4, 3, 6),
                                                                         cudaArrayCubemap)));
    cudaChannelFormatDesc three8 = cudaCreateChannelDesc(8, 8, 8, 0, cudaChannelFormatKindUnsigned);
    std::printf("err_channels=%s\n", cudaGetErrorName(cudaMallocArray(&bad_array, &three8, 4)));
    std::printf("err_outside=%s\n", cudaGetErrorName(cudaMemcpy2DToArray(a2b, 2 * sizeof(float), 0, three,
                                                                         sizeof(three), sizeof(three), 1,
                                                                         cudaMemcpyHostToDevice)));
    cudaGetLastError();

    CHECK(cudaFreeArray(a1));
    CHECK(cudaFreeArray(a2));
    CHECK(cudaFreeArray(a2b));
    CHECK(cudaFreeArray(a3));
    CHECK(cudaFreeArray(al1));
    CHECK(cudaFreeArray(al2));
    CHECK(cudaFreeArray(ac));
    CHECK(cudaFree(d_xs));
    CHECK(cudaFree(d_xn));
    CHECK(cudaFree(d_out));
    CHECK(cudaFree(d_out2));
    CHECK(cudaFree(d_out4));
    CHECK(cudaFree(d_u4));
    CHECK(cudaFree(d_g));
    CHECK(cudaFree(d_gn));
    CHECK(cudaFree(d_p));
    CHECK(cudaFree(d_l));
    CHECK(cudaFree(d_s));
    CHECK(cudaFree(d_iout));
    CHECK(cudaFree(d_p3));
    CHECK(cudaFree(d_xl));
    CHECK(cudaFree(d_dirs));
    std::printf("done=1\n");
    return 0;
}
