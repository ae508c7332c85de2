// Stream-ordered memory, memory pools, stream attributes and the device attributes programs
// test before using them. Prints key=value lines; exits non-zero on a failed call.
#include <cstdio>

#include <cuda_runtime.h>

#define CHECK(call)                                                                          \
    do {                                                                                     \
        cudaError_t e_ = (call);                                                             \
        if (e_ != cudaSuccess) {                                                             \
            std::printf("failed=%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorName(e_));      \
            return 1;                                                                        \
        }                                                                                    \
    } while (0)

__global__ void iota_scaled(float* out, int n, float scale) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = scale * i;
}

int main() {
    int pools_supported = -1, window_max = -1, persisting_max = -1;
    CHECK(cudaDeviceGetAttribute(&pools_supported, cudaDevAttrMemoryPoolsSupported, 0));
    CHECK(cudaDeviceGetAttribute(&window_max, cudaDevAttrMaxAccessPolicyWindowSize, 0));
    CHECK(cudaDeviceGetAttribute(&persisting_max, cudaDevAttrMaxPersistingL2CacheSize, 0));
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    std::printf("pools_supported=%d\nwindow_max=%d\npersisting_max=%d\n", pools_supported, window_max,
                persisting_max);
    std::printf("prop_matches=%d\n", prop.accessPolicyMaxWindowSize == window_max &&
                                         prop.persistingL2CacheMaxSize == persisting_max &&
                                         prop.memoryPoolsSupported == pools_supported);

    cudaStream_t stream;
    CHECK(cudaStreamCreate(&stream));
    const int n = 1000;
    float* a = nullptr;
    CHECK(cudaMallocAsync(&a, n * sizeof(float), stream));
    iota_scaled<<<(n + 127) / 128, 128, 0, stream>>>(a, n, 2.0f);
    CHECK(cudaGetLastError());

    cudaMemPool_t pool;
    CHECK(cudaDeviceGetDefaultMemPool(&pool, 0));
    unsigned long long used = 0, high = 0, threshold = 1 << 20, got_threshold = 0;
    CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used));
    std::printf("default_used=%llu\n", used);
    CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
    CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &got_threshold));
    std::printf("threshold=%llu\n", got_threshold);

    // A pool of its own, with a size limit: 4000 bytes fit, 4000 more do not.
    cudaMemPoolProps props = {};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = 0;
    props.maxSize = 6000;
    cudaMemPool_t own;
    CHECK(cudaMemPoolCreate(&own, &props));
    float* b = nullptr;
    CHECK(cudaMallocFromPoolAsync(reinterpret_cast<void**>(&b), n * sizeof(float), own, stream));
    float* c = nullptr;
    cudaError_t over = cudaMallocFromPoolAsync(reinterpret_cast<void**>(&c), n * sizeof(float), own, stream);
    std::printf("over_limit=%s\n", cudaGetErrorName(over));
    cudaGetLastError();
    CHECK(cudaMemcpyAsync(b, a, n * sizeof(float), cudaMemcpyDeviceToDevice, stream));
    CHECK(cudaMemPoolGetAttribute(own, cudaMemPoolAttrUsedMemCurrent, &used));
    std::printf("own_used=%llu\n", used);
    CHECK(cudaFreeAsync(b, stream));
    CHECK(cudaMemPoolGetAttribute(own, cudaMemPoolAttrUsedMemCurrent, &used));
    CHECK(cudaMemPoolGetAttribute(own, cudaMemPoolAttrUsedMemHigh, &high));
    std::printf("own_used_after_free=%llu\nown_high=%llu\n", used, high);
    CHECK(cudaMemPoolDestroy(own));

    // An access policy window on the stream: accepted, read back, refused past the device's limit.
    cudaStreamAttrValue window = {};
    window.accessPolicyWindow.base_ptr = a;
    window.accessPolicyWindow.num_bytes = n * sizeof(float);
    window.accessPolicyWindow.hitRatio = 0.6f;
    window.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
    window.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
    CHECK(cudaStreamSetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &window));
    cudaStreamAttrValue back = {};
    CHECK(cudaStreamGetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &back));
    std::printf("window_bytes=%zu\nwindow_hit_ratio=%.2f\n", back.accessPolicyWindow.num_bytes,
                back.accessPolicyWindow.hitRatio);
    window.accessPolicyWindow.num_bytes = (size_t)window_max + 1;
    cudaError_t too_big = cudaStreamSetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &window);
    std::printf("window_too_big=%s\n", cudaGetErrorName(too_big));
    cudaGetLastError();
    CHECK(cudaCtxResetPersistingL2Cache());

    float host[n];
    CHECK(cudaMemcpyAsync(host, a, n * sizeof(float), cudaMemcpyDeviceToHost, stream));
    CHECK(cudaStreamSynchronize(stream));
    CHECK(cudaFreeAsync(a, stream));
    CHECK(cudaStreamDestroy(stream));
    std::printf("last=%g\n", host[n - 1]);

    // Fresh device memory reads as zero, as a GPU's does (programs sum into it without a memset),
    // in every build: past the first page too, and for managed memory.
    const size_t big = 1 << 16;
    unsigned char *fresh, *managed;
    cudaMalloc(&fresh, big);
    cudaMallocManaged(&managed, 64);
    unsigned char* seen = new unsigned char[big];
    cudaMemcpy(seen, fresh, big, cudaMemcpyDeviceToHost);
    size_t nonzero = 0;
    for (size_t i = 0; i < big; ++i) nonzero += seen[i] != 0;
    for (int i = 0; i < 64; ++i) nonzero += managed[i] != 0;
    std::printf("fresh_nonzero=%zu\n", nonzero);
    delete[] seen;
    cudaFree(fresh);
    cudaFree(managed);
    return 0;
}
