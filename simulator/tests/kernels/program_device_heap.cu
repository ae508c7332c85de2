// Device memory laid out as a GPU lays it out (simulator/runtime/device_heap.cpp): small
// allocations side by side at 512-byte steps, freed space handed out again zero-filled, large
// allocations in whole 2 MiB pages. "overrun" writes 32 floats past a 100-float buffer, as a
// buggy kernel may: the write lands in the next buffer, and the program runs on.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

#define CHECK(call)                                                                       \
    do {                                                                                  \
        cudaError_t e_ = (call);                                                          \
        if (e_ != cudaSuccess) {                                                          \
            printf("error %s at line %d\n", cudaGetErrorName(e_), __LINE__);              \
            return 1;                                                                     \
        }                                                                                 \
    } while (0)

__global__ void fill(float* a, int n, float base) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] = base + i;  // PLANT-OVERRUN
}

__global__ void count_nonzero(const float* a, int n, int* count) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && a[i] != 0.0f) atomicAdd(count, 1);
}

static int nonzero(const float* d, int n, int* d_count) {
    int h = 0;
    cudaMemcpy(d_count, &h, sizeof(int), cudaMemcpyHostToDevice);
    count_nonzero<<<(n + 255) / 256, 256>>>(d, n, d_count);
    cudaMemcpy(&h, d_count, sizeof(int), cudaMemcpyDeviceToHost);
    return h;
}

int main(int argc, char** argv) {
    const bool overrun = argc > 1 && std::strcmp(argv[1], "overrun") == 0;
    int* d_count;
    CHECK(cudaMalloc(&d_count, sizeof(int)));
    float *a, *b;
    CHECK(cudaMalloc(&a, 100 * sizeof(float)));
    CHECK(cudaMalloc(&b, 100 * sizeof(float)));
    printf("step=%lld\n", (long long)((char*)b - (char*)a));
    printf("aligned=%d\n", (int)((unsigned long long)a % 512 == 0 && (unsigned long long)b % 512 == 0));
    fill<<<1, 128>>>(b, 100, 1000.0f);
    fill<<<1, 256>>>(a, overrun ? 160 : 100, 0.0f);
    CHECK(cudaDeviceSynchronize());
    float hb[100];
    CHECK(cudaMemcpy(hb, b, sizeof(hb), cudaMemcpyDeviceToHost));
    printf("b0=%d\n", (int)hb[0]);
    printf("b31=%d\n", (int)hb[31]);
    printf("b32=%d\n", (int)hb[32]);

    // Freed space comes back at the same place, zero-filled.
    CHECK(cudaFree(a));
    float* c;
    CHECK(cudaMalloc(&c, 100 * sizeof(float)));
    printf("reused=%d\n", (int)(c == a));
    printf("reused_nonzero=%d\n", nonzero(c, 100, d_count));

    // A large allocation: written, freed, made again and read back as zeros.
    const int big = 3 << 20;  // floats: 12 MiB, six 2 MiB pages
    float* d;
    CHECK(cudaMalloc(&d, big * sizeof(float)));
    printf("big_page_aligned=%d\n", (int)((unsigned long long)d % (2 << 20) == 0));
    fill<<<big / 256, 256>>>(d, big, 1.0f);
    printf("big_nonzero=%d\n", nonzero(d, big, d_count));
    CHECK(cudaFree(d));
    CHECK(cudaMalloc(&d, big * sizeof(float)));
    printf("big_fresh_nonzero=%d\n", nonzero(d, big, d_count));

    // The host heap is the program's own: untouched by the overrun above.
    char* host = (char*)std::malloc(1 << 16);
    std::memset(host, 7, 1 << 16);
    std::free(host);
    CHECK(cudaFree(d));
    CHECK(cudaFree(b));
    CHECK(cudaFree(c));
    CHECK(cudaFree(d_count));
    printf("done\n");
    return 0;
}
