// The driver API's CUDA arrays: cuArrayCreate / cuArray3DCreate and their descriptors,
// cuMemcpy2D between host, device and arrays with offsets, and texture objects over a driver
// array (cuTexObjectCreate) fetched by a kernel. Prints key=value lines: the test checks them
// against the values the program put in, computed again in Python.
#include <cstdio>
#include <cstring>
#include <vector>

#include <cuda.h>

constexpr int kW = 9, kH = 5;

static float value(int x, int y) { return (float)(y * 100 + x); }

// out[i]: the texture at (xs[i], ys[i]).
__global__ void fetch(CUtexObject tex, const float* xs, const float* ys, float* out, int n) {
    const int i = threadIdx.x;
    if (i < n) out[i] = tex2D<float>(tex, xs[i], ys[i]);
}

__global__ void fetch_u8(CUtexObject norm, CUtexObject raw, float* as_float, unsigned int* as_int) {
    const int i = threadIdx.x;
    as_float[i] = tex2D<float>(norm, i + 0.5f, 0.5f);
    as_int[i] = tex2D<unsigned char>(raw, i + 0.5f, 0.5f);
}

static void print_floats(const char* key, const std::vector<float>& v) {
    std::printf("%s=", key);
    for (size_t i = 0; i < v.size(); ++i) std::printf("%s%.9g", i ? "," : "", v[i]);
    std::printf("\n");
}

static CUresult copy(CUmemorytype st, const void* src, CUarray sa, size_t sx, size_t sy, size_t sp, CUmemorytype dt,
                     void* dst, CUarray da, size_t dx, size_t dy, size_t dp, size_t wb, size_t h) {
    CUDA_MEMCPY2D c;
    std::memset(&c, 0, sizeof(c));
    c.srcMemoryType = st;
    c.srcHost = src;
    c.srcDevice = (CUdeviceptr)src;
    c.srcArray = sa;
    c.srcXInBytes = sx;
    c.srcY = sy;
    c.srcPitch = sp;
    c.dstMemoryType = dt;
    c.dstHost = dst;
    c.dstDevice = (CUdeviceptr)dst;
    c.dstArray = da;
    c.dstXInBytes = dx;
    c.dstY = dy;
    c.dstPitch = dp;
    c.WidthInBytes = wb;
    c.Height = h;
    return cuMemcpy2D(&c);
}

static CUtexObject make_texture(CUarray a, CUfilter_mode filter, unsigned int flags) {
    CUDA_RESOURCE_DESC r;
    std::memset(&r, 0, sizeof(r));
    r.resType = CU_RESOURCE_TYPE_ARRAY;
    r.res.array.hArray = a;
    CUDA_TEXTURE_DESC t;
    std::memset(&t, 0, sizeof(t));
    t.addressMode[0] = t.addressMode[1] = CU_TR_ADDRESS_MODE_WRAP;
    t.filterMode = filter;
    t.flags = flags;
    CUtexObject o = 0;
    std::printf("tex_create=%d\n", (int)cuTexObjectCreate(&o, &r, &t, nullptr));
    return o;
}

int main() {
    CUarray early;
    CUDA_ARRAY_DESCRIPTOR d{kW, kH, CU_AD_FORMAT_FLOAT, 1};
    std::printf("before_init=%d\n", (int)cuArrayCreate(&early, &d));  // CUDA_ERROR_NOT_INITIALIZED
    cuInit(0);
    CUdevice dev;
    CUcontext ctx;
    cuDeviceGet(&dev, 0);
    cuDevicePrimaryCtxRetain(&ctx, dev);
    cuCtxSetCurrent(ctx);

    CUarray a;
    std::printf("create=%d\n", (int)cuArrayCreate(&a, &d));
    CUDA_ARRAY_DESCRIPTOR got;
    cuArrayGetDescriptor(&got, a);
    std::printf("desc=%zu,%zu,%d,%u\n", got.Width, got.Height, (int)got.Format, got.NumChannels);

    std::vector<float> host(kW * kH);
    for (int y = 0; y < kH; ++y)
        for (int x = 0; x < kW; ++x) host[y * kW + x] = value(x, y);
    std::printf("to_array=%d\n", (int)copy(CU_MEMORYTYPE_HOST, host.data(), nullptr, 0, 0, kW * 4, CU_MEMORYTYPE_ARRAY,
                                           nullptr, a, 0, 0, 0, kW * 4, kH));

    // A 3 x 2 window of the array from (2, 1) to device memory at (1, 1) of a 4-float pitch, back.
    float* dmem;
    cudaMalloc(&dmem, 16 * 4);
    cudaMemset(dmem, 0, 16 * 4);
    std::printf("array_to_device=%d\n", (int)copy(CU_MEMORYTYPE_ARRAY, nullptr, a, 2 * 4, 1, 0, CU_MEMORYTYPE_DEVICE,
                                                  dmem, nullptr, 4, 1, 16, 3 * 4, 2));
    std::vector<float> window(16);
    std::printf("device_to_host=%d\n", (int)copy(CU_MEMORYTYPE_DEVICE, dmem, nullptr, 0, 0, 16, CU_MEMORYTYPE_HOST,
                                                 window.data(), nullptr, 0, 0, 16, 16, 4));
    print_floats("window", window);

    // Array to array: b's row 0 gets a's row 3 from x 4 on (5 floats).
    CUDA_ARRAY3D_DESCRIPTOR d3{5, 2, 0, CU_AD_FORMAT_FLOAT, 1, 0};
    CUarray b;
    std::printf("create3d=%d\n", (int)cuArray3DCreate(&b, &d3));
    CUDA_ARRAY3D_DESCRIPTOR got3;
    cuArray3DGetDescriptor(&got3, b);
    std::printf("desc3d=%zu,%zu,%zu,%d,%u\n", got3.Width, got3.Height, got3.Depth, (int)got3.Format,
                got3.NumChannels);
    std::printf("array_to_array=%d\n", (int)copy(CU_MEMORYTYPE_ARRAY, nullptr, a, 4 * 4, 3, 0, CU_MEMORYTYPE_ARRAY,
                                                 nullptr, b, 0, 0, 0, 5 * 4, 1));
    std::vector<float> row(5);
    copy(CU_MEMORYTYPE_ARRAY, nullptr, b, 0, 0, 0, CU_MEMORYTYPE_HOST, row.data(), nullptr, 0, 0, 20, 20, 1);
    print_floats("row", row);
    std::printf("too_wide=%d\n", (int)copy(CU_MEMORYTYPE_HOST, host.data(), nullptr, 0, 0, kW * 4,
                                           CU_MEMORYTYPE_ARRAY, nullptr, b, 0, 0, 0, 6 * 4, 1));

    // Fetches: point-filtered at texel centres, wrapped normalized coordinates, one linear midpoint.
    const std::vector<float> xs = {0.5f, 3.5f, 8.5f, 2.5f}, ys = {0.5f, 4.5f, 2.5f, 1.5f};
    float *dx, *dy, *dout;
    cudaMalloc(&dx, 16);
    cudaMalloc(&dy, 16);
    cudaMalloc(&dout, 16);
    cudaMemcpy(dx, xs.data(), 16, cudaMemcpyHostToDevice);
    cudaMemcpy(dy, ys.data(), 16, cudaMemcpyHostToDevice);
    std::vector<float> out(4);
    CUtexObject point = make_texture(a, CU_TR_FILTER_MODE_POINT, 0);
    fetch<<<1, 4>>>(point, dx, dy, dout, 4);
    cudaMemcpy(out.data(), dout, 16, cudaMemcpyDeviceToHost);
    print_floats("point", out);
    // Normalized: u = (x + 0.5) / W + 1 wraps to the same texel.
    const std::vector<float> us = {1.5f / kW + 1.0f, 7.5f / kW - 1.0f}, vs = {2.5f / kH, 0.5f / kH + 2.0f};
    cudaMemcpy(dx, us.data(), 8, cudaMemcpyHostToDevice);
    cudaMemcpy(dy, vs.data(), 8, cudaMemcpyHostToDevice);
    CUtexObject wrapped = make_texture(a, CU_TR_FILTER_MODE_POINT, CU_TRSF_NORMALIZED_COORDINATES);
    fetch<<<1, 2>>>(wrapped, dx, dy, dout, 2);
    cudaMemcpy(out.data(), dout, 8, cudaMemcpyDeviceToHost);
    print_floats("wrapped", std::vector<float>(out.begin(), out.begin() + 2));
    // Linear, halfway between texels (3, 2) and (4, 2): a weight of exactly one half.
    const float mx = 4.0f, my = 2.5f;
    cudaMemcpy(dx, &mx, 4, cudaMemcpyHostToDevice);
    cudaMemcpy(dy, &my, 4, cudaMemcpyHostToDevice);
    CUtexObject linear = make_texture(a, CU_TR_FILTER_MODE_LINEAR, 0);
    fetch<<<1, 1>>>(linear, dx, dy, dout, 1);
    cudaMemcpy(out.data(), dout, 4, cudaMemcpyDeviceToHost);
    print_floats("linear", std::vector<float>(out.begin(), out.begin() + 1));

    // 8-bit texels: normalized floats unless CU_TRSF_READ_AS_INTEGER.
    CUDA_ARRAY_DESCRIPTOR d8{4, 1, CU_AD_FORMAT_UNSIGNED_INT8, 1};
    CUarray c;
    cuArrayCreate(&c, &d8);
    const unsigned char bytes[4] = {0, 51, 200, 255};
    copy(CU_MEMORYTYPE_HOST, bytes, nullptr, 0, 0, 4, CU_MEMORYTYPE_ARRAY, nullptr, c, 0, 0, 0, 4, 1);
    CUtexObject norm = make_texture(c, CU_TR_FILTER_MODE_POINT, 0);
    CUtexObject raw = make_texture(c, CU_TR_FILTER_MODE_POINT, CU_TRSF_READ_AS_INTEGER);
    unsigned int* dint;
    cudaMalloc(&dint, 16);
    fetch_u8<<<1, 4>>>(norm, raw, dout, dint);
    cudaMemcpy(out.data(), dout, 16, cudaMemcpyDeviceToHost);
    print_floats("u8_normalized", out);
    unsigned int ints[4];
    cudaMemcpy(ints, dint, 16, cudaMemcpyDeviceToHost);
    std::printf("u8_integer=%u,%u,%u,%u\n", ints[0], ints[1], ints[2], ints[3]);

    CUDA_ARRAY_DESCRIPTOR bad{4, 4, CU_AD_FORMAT_FLOAT, 3};
    CUarray unused;
    std::printf("three_channels=%d\n", (int)cuArrayCreate(&unused, &bad));  // CUDA_ERROR_INVALID_VALUE
    std::printf("destroy_tex=%d\n", (int)cuTexObjectDestroy(point));
    cuTexObjectDestroy(wrapped);
    cuTexObjectDestroy(linear);
    cuTexObjectDestroy(norm);
    cuTexObjectDestroy(raw);
    std::printf("destroy=%d\n", (int)cuArrayDestroy(a));
    cuArrayDestroy(b);
    cuArrayDestroy(c);
    return 0;
}
