// Surface objects: each thread writes its element of a 2-D and a 3-D array (x in bytes), the
// block meets at a barrier, then reads its neighbours with the zero and clamp boundary modes,
// and a texture object reads what the surface wrote. With the argument "trap" one thread
// reads past the edge with cudaBoundaryModeTrap, which faults the launch as on a GPU.
// With "mipmap": mipmapped arrays and tex2DLod, a 16 x 8 float array with its levels (10 asked
// for, 5 made), each level filled from a formula of (level, x, y); two texture objects (linear
// filtering with linear level blending, a bias and a clamp range; point filtering with point level
// selection) sampled at a grid of normalized coordinates for a list of LODs. The test models each
// fetch. One program for both, so that each mode builds it once.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <cuda_runtime.h>

#include "textures_check.h"

const int W = 8, H = 6, D = 3;

__global__ void write_then_read(cudaSurfaceObject_t s2, cudaSurfaceObject_t s3, float* zero_right, float* clamp_right,
                                float* clamp_down, int* sum3) {
    const int x = threadIdx.x, y = threadIdx.y;
    surf2Dwrite(100.0f * y + x, s2, x * (int)sizeof(float), y);
    for (int z = 0; z < D; ++z) surf3Dwrite(make_int2(x + 10 * y + 100 * z, -z), s3, x * (int)sizeof(int2), y, z);
    __syncthreads();
    const int i = y * W + x;
    zero_right[i] = surf2Dread<float>(s2, (x + 1) * (int)sizeof(float), y, cudaBoundaryModeZero);
    clamp_right[i] = surf2Dread<float>(s2, (x + 1) * (int)sizeof(float), y, cudaBoundaryModeClamp);
    float down;
    surf2Dread(&down, s2, x * (int)sizeof(float), y + 1, cudaBoundaryModeClamp);
    clamp_down[i] = down;
    int total = 0;
    for (int z = -1; z <= D; ++z) {
        int2 v = surf3Dread<int2>(s3, x * (int)sizeof(int2), y, z, cudaBoundaryModeZero);
        total += v.x + v.y;
    }
    sum3[i] = total;
}

__global__ void layered(cudaSurfaceObject_t s2l, cudaSurfaceObject_t s1l, float* out) {
    const int x = threadIdx.x, y = threadIdx.y;
    for (int layer = 0; layer < 2; ++layer) surf2DLayeredwrite(1000.0f * layer + 10.0f * y + x, s2l, x * 4, y, layer);
    if (y < 3) surf1DLayeredwrite(-(100.0f * y + x), s1l, x * 4, y);
    __syncthreads();
    out[y * W + x] = surf2DLayeredread<float>(s2l, ((x + 1) % W) * 4, y, 1) + surf1DLayeredread<float>(s1l, x * 4, y % 3);
}

__global__ void read_past_edge(cudaSurfaceObject_t s2, float* out) {
    const int x = threadIdx.x;
    out[x] = surf2Dread<float>(s2, (x + 1) * (int)sizeof(float), 0);  // trap mode: x == W - 1 faults
}

__global__ void through_texture(cudaTextureObject_t t, float* out) {
    const int x = threadIdx.x, y = threadIdx.y;
    out[y * W + x] = tex2D<float>(t, x + 0.5f, y + 0.5f);
}

static void print_floats(const char* name, const float* v, int n) {
    std::printf("%s", name);
    for (int i = 0; i < n; ++i) std::printf(" %.9g", v[i]);
    std::printf("\n");
}

const int MW = 16, MH = 8, NU = 5, NV = 4, NLOD = 8;
__constant__ float c_lod[NLOD] = {-1.0f, 0.0f, 0.3f, 0.5f, 1.25f, 2.7f, 3.5f, 10.0f};

__global__ void sample_lods(float* out, cudaTextureObject_t tex) {
    const int i = threadIdx.x, j = threadIdx.y, l = blockIdx.x;
    const float u = -0.1f + i * 0.3f, v = 0.05f + j * 0.3f;
    out[(l * NV + j) * NU + i] = tex2DLod<float>(tex, u, v, c_lod[l]);
}

static float texel(int level, int x, int y) { return level * 10.0f + x * 0.5f + y * 0.25f; }

// "mipmap": the mipmapped array's cases; "mipmap misuse" also the calls CUDA refuses (a checker
// reports them).
static int mipmap_main(bool misuse) {
    cudaChannelFormatDesc desc = cudaCreateChannelDesc<float>();
    cudaMipmappedArray_t mip = nullptr;
    CHECK(cudaMallocMipmappedArray(&mip, &desc, make_cudaExtent(MW, MH, 0), 10, 0));
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

int main(int argc, char** argv) {
    if (argc > 1 && std::strcmp(argv[1], "mipmap") == 0) return mipmap_main(argc > 2);
    const bool trap = argc > 1 && std::strcmp(argv[1], "trap") == 0;
    cudaChannelFormatDesc fdesc = cudaCreateChannelDesc<float>();
    cudaChannelFormatDesc idesc = cudaCreateChannelDesc<int2>();
    cudaArray_t a2, a3;
    CHECK(cudaMallocArray(&a2, &fdesc, W, H, cudaArraySurfaceLoadStore));
    CHECK(cudaMalloc3DArray(&a3, &idesc, make_cudaExtent(W, H, D), cudaArraySurfaceLoadStore));
    cudaResourceDesc r;
    memset(&r, 0, sizeof(r));
    r.resType = cudaResourceTypeArray;
    r.res.array.array = a2;
    cudaSurfaceObject_t s2, s3;
    CHECK(cudaCreateSurfaceObject(&s2, &r));
    r.res.array.array = a3;
    CHECK(cudaCreateSurfaceObject(&s3, &r));
    float* d_f;
    int* d_i;
    CHECK(cudaMalloc(&d_f, 4 * W * H * sizeof(float)));
    CHECK(cudaMalloc(&d_i, W * H * sizeof(int)));
    if (trap) {
        read_past_edge<<<1, W>>>(s2, d_f);
        std::printf("trap_launch=%s\n", cudaGetErrorName(cudaDeviceSynchronize()));
        return 0;
    }
    write_then_read<<<1, dim3(W, H)>>>(s2, s3, d_f, d_f + W * H, d_f + 2 * W * H, d_i);
    CHECK(cudaGetLastError());
    // The surface's writes read back through a texture object over the same array.
    memset(&r, 0, sizeof(r));
    r.resType = cudaResourceTypeArray;
    r.res.array.array = a2;
    cudaTextureDesc td;
    memset(&td, 0, sizeof(td));
    td.addressMode[0] = td.addressMode[1] = cudaAddressModeClamp;
    td.filterMode = cudaFilterModePoint;
    td.readMode = cudaReadModeElementType;
    cudaTextureObject_t t;
    CHECK(cudaCreateTextureObject(&t, &r, &td, nullptr));
    through_texture<<<1, dim3(W, H)>>>(t, d_f + 3 * W * H);
    CHECK(cudaGetLastError());
    float f[4 * W * H];
    int sums[W * H];
    CHECK(cudaMemcpy(f, d_f, sizeof(f), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(sums, d_i, sizeof(sums), cudaMemcpyDeviceToHost));
    print_floats("zero_right", f, W * H);
    print_floats("clamp_right", f + W * H, W * H);
    print_floats("clamp_down", f + 2 * W * H, W * H);
    print_floats("texture_view", f + 3 * W * H, W * H);
    std::printf("sum3d");
    for (int i = 0; i < W * H; ++i) std::printf(" %d", sums[i]);
    std::printf("\n");
    // Layered surfaces: 2 layers of W x H, and a 1-D array of 3 layers.
    cudaArray_t a2l, a1l;
    CHECK(cudaMalloc3DArray(&a2l, &fdesc, make_cudaExtent(W, H, 2), cudaArrayLayered | cudaArraySurfaceLoadStore));
    CHECK(cudaMalloc3DArray(&a1l, &fdesc, make_cudaExtent(W, 0, 3), cudaArrayLayered | cudaArraySurfaceLoadStore));
    cudaSurfaceObject_t s2l, s1l;
    r.res.array.array = a2l;
    CHECK(cudaCreateSurfaceObject(&s2l, &r));
    r.res.array.array = a1l;
    CHECK(cudaCreateSurfaceObject(&s1l, &r));
    layered<<<1, dim3(W, H)>>>(s2l, s1l, d_f);
    CHECK(cudaMemcpy(f, d_f, W * H * sizeof(float), cudaMemcpyDeviceToHost));
    print_floats("layered_surfaces", f, W * H);
    CHECK(cudaDestroySurfaceObject(s2l));
    CHECK(cudaDestroySurfaceObject(s1l));
    CHECK(cudaFreeArray(a2l));
    CHECK(cudaFreeArray(a1l));
    // The whole 2-D array through a host copy, and a surface over an array without the flag.
    float host[H][W];
    CHECK(cudaMemcpy2DFromArray(host, W * sizeof(float), a2, 0, 0, W * sizeof(float), H, cudaMemcpyDeviceToHost));
    print_floats("array_copy", &host[0][0], W * H);
    cudaArray_t plain;
    CHECK(cudaMallocArray(&plain, &fdesc, W, H));
    r.res.array.array = plain;
    cudaSurfaceObject_t bad;
    std::printf("err_no_flag=%s\n", cudaGetErrorName(cudaCreateSurfaceObject(&bad, &r)));
    cudaGetLastError();
    CHECK(cudaDestroyTextureObject(t));
    CHECK(cudaDestroySurfaceObject(s2));
    CHECK(cudaDestroySurfaceObject(s3));
    CHECK(cudaFreeArray(a2));
    CHECK(cudaFreeArray(a3));
    CHECK(cudaFreeArray(plain));
    CHECK(cudaFree(d_f));
    CHECK(cudaFree(d_i));
    std::printf("done=1\n");
    return 0;
}
