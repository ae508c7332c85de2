// A program for a machine with two or more GPUs (run with --devices 2 or more): device queries
// per ordinal, the current device per host thread, peer access and its errors, memory on each
// device (pointer attributes, pools), copies between devices, a kernel on device 1 reading
// device 0's memory through peer access, and a reset of one device. Prints key=value tokens
// for test_devices.py.
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <string>
#include <thread>

#define NAME(call) cudaGetErrorName(call)

// out[i] = 2 * peer[i] + own[i]: ``peer`` lies on another device.
__global__ void combine(const int* peer, const int* own, int* out, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = 2 * peer[i] + own[i];
}

// x[i] = i + 1000 * tag.
__global__ void fill(int* x, int tag, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = i + 1000 * tag;
}

static int device_of(const void* p) {
    cudaPointerAttributes a;
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess) return -100;
    return a.device;
}

static int type_of(const void* p) {
    cudaPointerAttributes a;
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess) return -100;
    return (int)a.type;
}

int main() {
    int count = 0;
    cudaGetDeviceCount(&count);
    std::printf("count=%d\n", count);
    if (count < 2) return 3;

    // Device queries: every ordinal below the count, identical but for the PCI location.
    cudaDeviceProp p0, p1;
    cudaGetDeviceProperties(&p0, 0);
    cudaGetDeviceProperties(&p1, count - 1);
    int bus_attr = -1;
    cudaDeviceGetAttribute(&bus_attr, cudaDevAttrPciBusId, count - 1);
    std::printf("same_name=%d same_sms=%d bus0=%d bus_last=%d bus_attr_last=%d dev0=%d dev_last=%d\n",
                std::string(p0.name) == std::string(p1.name), p0.multiProcessorCount == p1.multiProcessorCount,
                p0.pciBusID, p1.pciBusID, bus_attr, p0.pciDeviceID, p1.pciDeviceID);
    cudaDeviceProp bad;
    std::printf("props_past=%s set_past=%s set_negative=%s attr_past=%s\n", NAME(cudaGetDeviceProperties(&bad, count)),
                NAME(cudaSetDevice(count)), NAME(cudaSetDevice(-1)),
                NAME(cudaDeviceGetAttribute(&bus_attr, cudaDevAttrPciBusId, count)));
    CUdevice cu = -1;
    const CUresult cu_last = cuDeviceGet(&cu, count - 1);
    const CUresult cu_past = cuDeviceGet(&cu, count);
    std::printf("cu_get_last=%d cu_device=%d cu_get_past=%d\n", (int)cu_last, (int)cu, (int)cu_past);
    cudaGetLastError();

    // The current device is per host thread, 0 until the thread sets it.
    cudaSetDevice(1);
    int thread_initial = -1, thread_after = -1, main_after = -1;
    std::thread other([&] {
        cudaGetDevice(&thread_initial);
        cudaSetDevice(0);
        cudaGetDevice(&thread_after);
    });
    other.join();
    cudaGetDevice(&main_after);
    std::printf("thread_initial=%d thread_after=%d main_after=%d\n", thread_initial, thread_after, main_after);

    // One host thread per device, each allocating and launching on its own device.
    const int m = 100;
    int thread_dev[16], thread_alloc_dev[16];
    long long thread_sum[16];
    std::thread workers[16];
    for (int t = 0; t < count; ++t) {
        workers[t] = std::thread([&, t] {
            cudaSetDevice(t);
            int* x = nullptr;
            int got[m];
            cudaMalloc(&x, sizeof got);
            fill<<<1, 128>>>(x, t + 1, m);
            cudaMemcpy(got, x, sizeof got, cudaMemcpyDeviceToHost);
            cudaGetDevice(&thread_dev[t]);
            thread_alloc_dev[t] = device_of(x);
            thread_sum[t] = 0;
            for (int i = 0; i < m; ++i) thread_sum[t] += got[i];
            cudaFree(x);
        });
    }
    for (int t = 0; t < count; ++t) workers[t].join();
    for (int t = 0; t < count; ++t)
        std::printf("worker%d_dev=%d worker%d_alloc_dev=%d worker%d_sum=%lld\n", t, thread_dev[t], t,
                    thread_alloc_dev[t], t, thread_sum[t]);

    // Peer access.
    int can01 = -1, can11 = -1;
    cudaDeviceCanAccessPeer(&can01, 0, 1);
    cudaDeviceCanAccessPeer(&can11, 1, 1);
    std::printf("can01=%d can11=%d can_past=%s\n", can01, can11, NAME(cudaDeviceCanAccessPeer(&can01, 0, count)));
    cudaSetDevice(0);
    // One call per statement: the order of a call's arguments is unspecified.
    const cudaError_t enable = cudaDeviceEnablePeerAccess(1, 0);
    const cudaError_t enable_again = cudaDeviceEnablePeerAccess(1, 0);
    const cudaError_t disable = cudaDeviceDisablePeerAccess(1);
    const cudaError_t disable_again = cudaDeviceDisablePeerAccess(1);
    const cudaError_t enable_self = cudaDeviceEnablePeerAccess(0, 0);
    const cudaError_t enable_past = cudaDeviceEnablePeerAccess(count, 0);
    std::printf("enable=%s enable_again=%s disable=%s disable_again=%s enable_self=%s enable_past=%s\n",
                NAME(enable), NAME(enable_again), NAME(disable), NAME(disable_again), NAME(enable_self),
                NAME(enable_past));
    cudaGetLastError();

    // Memory on each device, copies between them, and a kernel on device 1 reading device 0's memory.
    const int n = 300;
    int host[n], back[n];
    for (int i = 0; i < n; ++i) host[i] = i * i - 7;
    int *a = nullptr, *d = nullptr, *b = nullptr, *c = nullptr, *managed = nullptr, *pinned = nullptr;
    cudaSetDevice(0);
    cudaMalloc(&a, sizeof host);
    cudaMalloc(&d, sizeof host);
    cudaMemcpy(a, host, sizeof host, cudaMemcpyHostToDevice);
    cudaSetDevice(1);
    cudaMalloc(&b, sizeof host);
    cudaMalloc(&c, sizeof host);
    cudaMallocManaged(&managed, sizeof host);
    cudaMallocHost(&pinned, sizeof host);
    int stack_value = 0;
    std::printf("dev_a=%d dev_b=%d dev_b_inner=%d dev_managed=%d dev_pinned=%d dev_stack=%d\n", device_of(a),
                device_of(b), device_of(b + 17), device_of(managed), device_of(pinned), device_of(&stack_value));
    std::printf("type_a=%d type_managed=%d type_pinned=%d type_stack=%d\n", type_of(a), type_of(managed),
                type_of(pinned), type_of(&stack_value));
    std::printf("peer_copy=%s\n", NAME(cudaMemcpyPeer(b, 1, a, 0, sizeof host)));  // b = a
    std::printf("peer_copy_async=%s\n", NAME(cudaMemcpyPeerAsync(managed, 1, a, 0, sizeof host, 0)));
    cudaSetDevice(1);
    std::printf("enable_10=%s\n", NAME(cudaDeviceEnablePeerAccess(0, 0)));
    combine<<<(n + 127) / 128, 128>>>(a, b, c, n);  // c = 2a + b = 3a
    std::printf("launch=%s sync=%s\n", NAME(cudaGetLastError()), NAME(cudaDeviceSynchronize()));
    std::printf("default_copy=%s\n", NAME(cudaMemcpy(d, c, sizeof host, cudaMemcpyDefault)));  // device 1 -> 0
    cudaMemcpy(back, d, sizeof back, cudaMemcpyDefault);
    long long sum = 0, managed_sum = 0;
    for (int i = 0; i < n; ++i) sum += back[i];
    for (int i = 0; i < n; ++i) managed_sum += managed[i];
    std::printf("combined_sum=%lld managed_sum=%lld\n", sum, managed_sum);

    // Memory pools are per device; a stream-ordered allocation comes from the current device's.
    cudaMemPool_t pool0 = nullptr, pool1 = nullptr, current1 = nullptr;
    cudaDeviceGetDefaultMemPool(&pool0, 0);
    cudaDeviceGetDefaultMemPool(&pool1, 1);
    cudaDeviceGetMemPool(&current1, 1);
    void *async1 = nullptr, *from0 = nullptr;
    cudaSetDevice(1);
    cudaMallocAsync(&async1, 4096, 0);
    cudaMallocFromPoolAsync(&from0, 1000, pool0, 0);
    unsigned long long used0 = 0, used1 = 0;
    cudaMemPoolGetAttribute(pool0, cudaMemPoolAttrUsedMemCurrent, &used0);
    cudaMemPoolGetAttribute(pool1, cudaMemPoolAttrUsedMemCurrent, &used1);
    std::printf("pools_differ=%d current1_default=%d dev_async=%d dev_from0=%d used0=%llu used1=%llu\n",
                pool0 != pool1, current1 == pool1, device_of(async1), device_of(from0), used0, used1);
    std::printf("set_other_pool=%s pool_past=%s\n", NAME(cudaDeviceSetMemPool(1, pool0)),
                NAME(cudaDeviceGetDefaultMemPool(&pool0, count)));
    cudaGetLastError();
    // cudaFree (not only cudaFreeAsync) takes a pool allocation off its pool's books; async1 stays
    // allocated until device 1's reset frees it, and a threshold set on pool1 goes with the reset.
    cudaFree(from0);
    unsigned long long threshold = 1 << 20;
    cudaMemPoolSetAttribute(pool1, cudaMemPoolAttrReleaseThreshold, &threshold);

    // A reset ends device 1's context only: its memory and peer access go, device 0's stay.
    cudaSetDevice(0);
    cudaDeviceEnablePeerAccess(1, 0);
    cudaSetDevice(1);
    std::printf("reset=%s\n", NAME(cudaDeviceReset()));
    std::printf("after_reset_type_b=%d after_reset_type_a=%d\n", type_of(b), type_of(a));
    unsigned long long pool_values[5] = {};
    cudaMemPoolGetAttribute(pool0, cudaMemPoolAttrUsedMemCurrent, &pool_values[0]);
    cudaMemPoolGetAttribute(pool0, cudaMemPoolAttrUsedMemHigh, &pool_values[1]);
    cudaMemPoolGetAttribute(pool1, cudaMemPoolAttrUsedMemCurrent, &pool_values[2]);
    cudaMemPoolGetAttribute(pool1, cudaMemPoolAttrUsedMemHigh, &pool_values[3]);
    cudaMemPoolGetAttribute(pool1, cudaMemPoolAttrReleaseThreshold, &pool_values[4]);
    std::printf("after_reset_used0=%llu after_reset_high0=%llu after_reset_used1=%llu after_reset_high1=%llu "
                "after_reset_threshold1=%llu\n", pool_values[0],
                pool_values[1], pool_values[2], pool_values[3], pool_values[4]);
    cudaSetDevice(0);
    const cudaError_t copy_a = cudaMemcpy(back, a, sizeof back, cudaMemcpyDefault);
    const cudaError_t enable_after = cudaDeviceEnablePeerAccess(1, 0);
    std::printf("after_reset_copy_a=%s after_reset_enable=%s\n", NAME(copy_a), NAME(enable_after));
    long long a_sum = 0;
    for (int i = 0; i < n; ++i) a_sum += back[i];
    std::printf("a_sum=%lld\n", a_sum);
    cudaFreeHost(pinned);
    cudaFree(a);
    cudaFree(d);
    return 0;
}
