// Texture references as older code (textbooks, Rodinia) uses them: texture<> globals bound
// with cudaBindTexture, cudaBindTexture2D and cudaBindTextureToArray, read with tex1Dfetch and
// tex2D. Not for nvcc 13: texture references were removed in CUDA 12.
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

int main() {
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
