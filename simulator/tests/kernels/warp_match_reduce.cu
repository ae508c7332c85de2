// __match_*_sync, __reduce_*_sync, __nanosleep spin-waits and clock64: each lane writes what
// it got; the test computes the expected values independently. With "stream_memory" it runs
// only the stream-ordered memory case below instead: one program for both, so that each mode builds
// it once.
#include <cstdio>
#include <cstring>

#include <cuda_runtime.h>

__global__ void match_reduce(const int* in, unsigned int* any_out, unsigned int* all_out, int* all_pred,
                             int* add_out, int* min_out, int* max_out, unsigned int* and_out, unsigned int* or_out,
                             unsigned int* xor_out, unsigned int* umin_out) {
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    const int v = in[t];
    const unsigned int full = 0xffffffffu;
    any_out[t] = __match_any_sync(full, v);
    int pred = -1;
    all_out[t] = __match_all_sync(full, v % 2 == 0 ? 4 : 4, &pred);  // the same value on every lane
    int pred2 = -1;
    unsigned int none = __match_all_sync(full, v, &pred2);  // differs between lanes in the test data
    all_pred[t] = pred * 10 + pred2 + (none != 0 ? 100 : 0);
    add_out[t] = __reduce_add_sync(full, v);
    min_out[t] = __reduce_min_sync(full, v);
    max_out[t] = __reduce_max_sync(full, v);
    and_out[t] = __reduce_and_sync(full, (unsigned int)v);
    or_out[t] = __reduce_or_sync(full, (unsigned int)v);
    xor_out[t] = __reduce_xor_sync(full, (unsigned int)v);
    umin_out[t] = __reduce_min_sync(full, (unsigned int)v);  // unsigned: negative values are large
}

// Thread 0 waits for the last thread of the block to raise a flag: without a yield in
// __nanosleep the block would never finish.
__global__ void spin_wait(int* flag, long long* elapsed, int* seen) {
    if (threadIdx.x == 0) {
        const long long start = clock64();
        while (atomicAdd(flag, 0) == 0) __nanosleep(100);
        elapsed[0] = clock64() - start;
        seen[0] = atomicAdd(flag, 0);
    } else if (threadIdx.x == blockDim.x - 1) {
        atomicExch(flag, 7);
    }
}

// ---- "stream_memory": stream-ordered memory, memory pools, stream attributes and the device
// attributes programs test before using them. Prints key=value lines; exits non-zero on a failed
// call.
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

static int stream_memory_main() {
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

int main(int argc, char** argv) {
    if (argc > 1 && std::strcmp(argv[1], "stream_memory") == 0) return stream_memory_main();
    const int n = 64;
    int host_in[n];
    for (int i = 0; i < n; ++i) host_in[i] = (i * 37 % 11) - 5;  // values in [-5, 5], repeated
    int* in;
    unsigned *any_out, *all_out, *and_out, *or_out, *xor_out, *umin_out;
    int *all_pred, *add_out, *min_out, *max_out;
    cudaMalloc(&in, sizeof(host_in));
    cudaMemcpy(in, host_in, sizeof(host_in), cudaMemcpyHostToDevice);
    cudaMalloc(&any_out, n * 4);
    cudaMalloc(&all_out, n * 4);
    cudaMalloc(&all_pred, n * 4);
    cudaMalloc(&add_out, n * 4);
    cudaMalloc(&min_out, n * 4);
    cudaMalloc(&max_out, n * 4);
    cudaMalloc(&and_out, n * 4);
    cudaMalloc(&or_out, n * 4);
    cudaMalloc(&xor_out, n * 4);
    cudaMalloc(&umin_out, n * 4);
    match_reduce<<<2, 32>>>(in, any_out, all_out, all_pred, add_out, min_out, max_out, and_out, or_out, xor_out,
                            umin_out);
    unsigned h_any[n], h_all[n], h_and[n], h_or[n], h_xor[n], h_umin[n];
    int h_pred[n], h_add[n], h_min[n], h_max[n];
    cudaMemcpy(h_any, any_out, n * 4, cudaMemcpyDeviceToHost);
    cudaMemcpy(h_all, all_out, n * 4, cudaMemcpyDeviceToHost);
    cudaMemcpy(h_pred, all_pred, n * 4, cudaMemcpyDeviceToHost);
    cudaMemcpy(h_add, add_out, n * 4, cudaMemcpyDeviceToHost);
    cudaMemcpy(h_min, min_out, n * 4, cudaMemcpyDeviceToHost);
    cudaMemcpy(h_max, max_out, n * 4, cudaMemcpyDeviceToHost);
    cudaMemcpy(h_and, and_out, n * 4, cudaMemcpyDeviceToHost);
    cudaMemcpy(h_or, or_out, n * 4, cudaMemcpyDeviceToHost);
    cudaMemcpy(h_xor, xor_out, n * 4, cudaMemcpyDeviceToHost);
    cudaMemcpy(h_umin, umin_out, n * 4, cudaMemcpyDeviceToHost);
    for (int i = 0; i < n; ++i)
        std::printf("lane %d in=%d any=%u all=%u pred=%d add=%d min=%d max=%d and=%u or=%u xor=%u umin=%u\n", i,
                    host_in[i], h_any[i], h_all[i], h_pred[i], h_add[i], h_min[i], h_max[i], h_and[i], h_or[i],
                    h_xor[i], h_umin[i]);

    int* flag;
    long long* elapsed;
    int* seen;
    cudaMalloc(&flag, 4);
    cudaMemset(flag, 0, 4);
    cudaMalloc(&elapsed, 8);
    cudaMalloc(&seen, 4);
    spin_wait<<<1, 64>>>(flag, elapsed, seen);
    cudaError_t err = cudaDeviceSynchronize();
    long long h_elapsed = -1;
    int h_seen = -1;
    cudaMemcpy(&h_elapsed, elapsed, 8, cudaMemcpyDeviceToHost);
    cudaMemcpy(&h_seen, seen, 4, cudaMemcpyDeviceToHost);
    std::printf("spin_status=%s\nspin_seen=%d\nspin_elapsed_nonnegative=%d\n", cudaGetErrorName(err), h_seen,
                h_elapsed >= 0);
    cudaFree(in);
    cudaFree(any_out);
    cudaFree(all_out);
    cudaFree(all_pred);
    cudaFree(add_out);
    cudaFree(min_out);
    cudaFree(max_out);
    cudaFree(and_out);
    cudaFree(or_out);
    cudaFree(xor_out);
    cudaFree(umin_out);
    cudaFree(flag);
    cudaFree(elapsed);
    cudaFree(seen);
    return 0;
}
