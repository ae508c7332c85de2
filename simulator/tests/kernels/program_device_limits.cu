// Device memory is a limit (cudaMemGetInfo's total, per device) and streams are handles a call
// checks: what a GPU refuses, the simulator refuses with the same error (test_device_limits.py).
#include <cstdio>
#include <cuda_runtime.h>

__global__ void touch(int* p) { p[threadIdx.x] = 1; }

static void say(const char* what, cudaError_t e) {
    std::printf("%s=%d\n", what, (int)e);
    cudaGetLastError();  // a failed call's error is not sticky: clear it for the next line
}

int main() {
    size_t free0 = 0, total = 0;
    cudaMemGetInfo(&free0, &total);
    cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, 0);
    std::printf("total_matches=%d\n", (int)(total == prop.totalGlobalMem && free0 == total));
    std::printf("total_mib=%zu\n", total >> 20);
    void* p = nullptr;
    say("twice", cudaMalloc(&p, 2 * total));
    say("huge", cudaMalloc(&p, (size_t)900 << 30));
    const size_t most = total / 8 * 5;  // two of these do not fit
    void* a = nullptr;
    say("first", cudaMalloc(&a, most));
    size_t free1 = 0;
    cudaMemGetInfo(&free1, &total);
    std::printf("free_drop_matches=%d\n", (int)(free0 - free1 == most));
    say("second", cudaMalloc(&p, most));
    say("managed", cudaMallocManaged(&p, most));
    size_t pitch = 0;
    say("pitch", cudaMallocPitch(&p, &pitch, most / 64, 64));
    say("async", cudaMallocAsync(&p, most, 0));
    cudaExtent extent = make_cudaExtent(most / 64, 8, 8);
    cudaPitchedPtr pitched;
    say("malloc3d", cudaMalloc3D(&pitched, extent));
    cudaFree(a);
    say("after_free", cudaMalloc(&p, most));
    cudaFree(p);

    int* dev = nullptr;
    cudaMalloc(&dev, 32 * sizeof(int));
    int host = 0;
    cudaStream_t s;
    cudaStreamCreate(&s);
    touch<<<1, 32, 0, s>>>(dev);
    say("live_stream", cudaGetLastError());
    cudaStreamDestroy(s);
    touch<<<1, 32, 0, s>>>(dev);
    say("destroyed_stream", cudaGetLastError());
    cudaStream_t junk = reinterpret_cast<cudaStream_t>(0x12345678);
    touch<<<1, 32, 0, junk>>>(dev);
    say("garbage_stream", cudaGetLastError());
    say("memcpy_async", cudaMemcpyAsync(dev, &host, sizeof host, cudaMemcpyHostToDevice, junk));
    say("synchronize", cudaStreamSynchronize(junk));
    say("destroy_again", cudaStreamDestroy(s));
    touch<<<1, 32, 0, cudaStreamPerThread>>>(dev);
    say("per_thread_stream", cudaGetLastError());
    touch<<<1, 32>>>(dev);
    say("default_stream", cudaGetLastError());
    cudaFree(dev);
    std::printf("done\n");
    return 0;
}
