// Texture references as older code (textbooks, Rodinia) uses them: texture<> globals bound
// with cudaBindTexture, cudaBindTexture2D and cudaBindTextureToArray, read with tex1Dfetch and
// tex2D. Not for nvcc 13: texture references were removed in CUDA 12.
// With "gather" it runs only the gathers below (gather_main): one program, so that each mode
// builds it once.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "textures_check.h"

texture<float, 1, cudaReadModeElementType> t_features;
texture<float, 2, cudaReadModeElementType> t_field;
texture<unsigned char, 2, cudaReadModeNormalizedFloat> t_image;

const int N = 12, W = 8, H = 4;

__global__ void gather(const int* idx, float* out) {
    int i = threadIdx.x;
    out[i] = tex1Dfetch(t_features, idx[i]);
}

__global__ void field(float* out) {
    int x = threadIdx.x, y = threadIdx.y;
    out[y * W + x] = tex2D(t_field, 0.75f * x - 0.5f, 0.625f * y + 0.25f);
}

__global__ void image(float* out) {
    int x = threadIdx.x, y = threadIdx.y;
    out[y * W + x] = tex2D(t_image, (x + 0.5f) / W, (y + 1.25f) / H);
}

static void print_floats(const char* name, const float* v, int n) {
    std::printf("%s", name);
    for (int i = 0; i < n; ++i) std::printf(" %.9g", v[i]);
    std::printf("\n");
}

// ---- "gather": tex2Dgather of texture references: a 5 x 3 uchar4 array bound to an element-read
// reference (the gather returns uchar4) and to a normalized-float one (float4), gathered for each
// component at a quarter-texel grid with clamp addressing. Prints "NAME v0 v1 ..." lines;
// test_textures_gather.py models every value.
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

static int gather_main() {
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

int main(int argc, char** argv) {
    if (argc > 1 && std::strcmp(argv[1], "gather") == 0) return gather_main();
    float feat[N];
    for (int i = 0; i < N; ++i) feat[i] = 0.5f * i * i - 3.0f;
    int idx[N];
    for (int i = 0; i < N; ++i) idx[i] = (i * 7) % N;
    float *d_feat, *d_out;
    int* d_idx;
    CHECK(cudaMalloc((void**)&d_feat, sizeof(feat)));
    CHECK(cudaMalloc((void**)&d_idx, sizeof(idx)));
    CHECK(cudaMalloc((void**)&d_out, W * H * sizeof(float)));
    CHECK(cudaMemcpy(d_feat, feat, sizeof(feat), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_idx, idx, sizeof(idx), cudaMemcpyHostToDevice));
    cudaChannelFormatDesc fdesc = cudaCreateChannelDesc<float>();
    size_t offset = 1;
    CHECK(cudaBindTexture(&offset, &t_features, d_feat, &fdesc, sizeof(feat)));  // the C form
    gather<<<1, N>>>(d_idx, d_out);
    CHECK(cudaGetLastError());
    float out[W * H];
    CHECK(cudaMemcpy(out, d_out, N * sizeof(float), cudaMemcpyDeviceToHost));
    std::printf("offset=%zu\n", offset);
    print_floats("gather", out, N);
    CHECK(cudaUnbindTexture(t_features));

    // A pitched field with linear filtering and clamping, bound by the C++ form.
    float* d_field;
    size_t pitch;
    CHECK(cudaMallocPitch((void**)&d_field, &pitch, W * sizeof(float), H));
    float hfield[H][W];
    for (int y = 0; y < H; ++y)
        for (int x = 0; x < W; ++x) hfield[y][x] = x * x * 0.25f - y * 1.5f;
    CHECK(cudaMemcpy2D(d_field, pitch, hfield, W * sizeof(float), W * sizeof(float), H, cudaMemcpyHostToDevice));
    t_field.filterMode = cudaFilterModeLinear;
    t_field.addressMode[0] = cudaAddressModeClamp;
    t_field.addressMode[1] = cudaAddressModeClamp;
    CHECK(cudaBindTexture2D(0, t_field, d_field, fdesc, W, H, pitch));
    field<<<1, dim3(W, H)>>>(d_out);
    CHECK(cudaMemcpy(out, d_out, sizeof(out), cudaMemcpyDeviceToHost));
    print_floats("field", out, W * H);
    CHECK(cudaUnbindTexture(t_field));

    // An 8-bit image in a CUDA array, read as normalized float with normalized, wrapped coordinates.
    unsigned char pixels[H][W];
    for (int y = 0; y < H; ++y)
        for (int x = 0; x < W; ++x) pixels[y][x] = (unsigned char)((x * 37 + y * 91) % 256);
    cudaChannelFormatDesc udesc = cudaCreateChannelDesc<unsigned char>();
    cudaArray* arr;
    CHECK(cudaMallocArray(&arr, &udesc, W, H));
    CHECK(cudaMemcpy2DToArray(arr, 0, 0, pixels, W, W, H, cudaMemcpyHostToDevice));
    t_image.normalized = 1;
    t_image.addressMode[0] = cudaAddressModeWrap;
    t_image.addressMode[1] = cudaAddressModeWrap;
    t_image.filterMode = cudaFilterModePoint;
    CHECK(cudaBindTextureToArray(t_image, arr));
    image<<<1, dim3(W, H)>>>(d_out);
    CHECK(cudaMemcpy(out, d_out, sizeof(out), cudaMemcpyDeviceToHost));
    print_floats("image", out, W * H);
    CHECK(cudaUnbindTexture(t_image));

    CHECK(cudaFreeArray(arr));
    CHECK(cudaFree(d_field));
    CHECK(cudaFree(d_feat));
    CHECK(cudaFree(d_idx));
    CHECK(cudaFree(d_out));
    std::printf("done=1\n");
    return 0;
}
