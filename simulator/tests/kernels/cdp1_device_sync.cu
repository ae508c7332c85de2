// CUDA 11's dynamic parallelism (CDP1): a CUDA thread calls cudaDeviceSynchronize() and then
// reads what the child grids its block launched wrote. Removed in CUDA 12 (nvcc 13 refuses it);
// the simulator runs it as CUDA 11 did. Prints name=value lines; the test computes every value
// itself.
//   squares   8 parent blocks of 64 threads; thread 0 of each launches a child that writes the
//             squares of the block's 64 indices, waits, and the whole block (after a barrier)
//             reads them back: sum of parent-side reads = sum of i*i for i < 512.
//   tree      a tree sum over n values: each grid splits its range between two child grids,
//             waits for them and adds their two results (depth up to 5), leaves add serially.
//   copy      a child writes 41; the parent copies it with cudaMemcpyAsync in device code, waits
//             and reads the copy: 41.
//   nothing   cudaDeviceSynchronize() with nothing launched returns cudaSuccess at once.
//   fault     a child's assert fails: the parent's wait returns cudaErrorAssert, as does the host.
#include <cuda_runtime.h>
#include <cassert>
#include <cstdio>
#include <cstring>

__global__ void write_squares(int* out, int base) { out[base + threadIdx.x] = (base + threadIdx.x) * (base + threadIdx.x); }

__global__ void squares_parent(int* squares, unsigned long long* total) {
    __shared__ int status;
    const int base = blockIdx.x * blockDim.x;
    if (threadIdx.x == 0) {
        write_squares<<<1, blockDim.x>>>(squares, base);
        status = (int)cudaDeviceSynchronize();
    }
    __syncthreads();
    if (status == 0) atomicAdd(total, (unsigned long long)squares[base + threadIdx.x]);
}

__global__ void tree_sum(const int* a, int lo, int hi, long long* result, int depth) {
    if (hi - lo <= 16 || depth == 5) {
        long long s = 0;
        for (int i = lo; i < hi; ++i) s += a[i];
        *result = s;
        return;
    }
    long long* parts = (long long*)malloc(2 * sizeof(long long));
    const int mid = lo + (hi - lo) / 2;
    tree_sum<<<1, 1>>>(a, lo, mid, &parts[0], depth + 1);
    tree_sum<<<1, 1>>>(a, mid, hi, &parts[1], depth + 1);
    if (cudaDeviceSynchronize() == cudaSuccess) *result = parts[0] + parts[1];
    free(parts);
}

__global__ void write_value(int* p, int v) { *p = v; }

__global__ void copy_parent(int* src, int* dst, int* seen) {
    write_value<<<1, 1>>>(src, 41);
    cudaMemcpyAsync(dst, src, sizeof(int), cudaMemcpyDeviceToDevice, 0);
    const cudaError_t e = cudaDeviceSynchronize();
    *seen = e == cudaSuccess ? *dst : -(int)e;
}

__global__ void nothing_parent(int* status) { *status = (int)cudaDeviceSynchronize(); }

__global__ void failing_child() { assert(threadIdx.x < 0); }

__global__ void fault_parent(int* status) {
    failing_child<<<1, 1>>>();
    *status = (int)cudaDeviceSynchronize();
}

int main(int argc, char** argv) {
    const char* which = argc > 1 ? argv[1] : "squares";
    if (std::strcmp(which, "squares") == 0) {
        int* squares;
        unsigned long long* total;
        cudaMalloc(&squares, 512 * sizeof(int));
        cudaMallocManaged(&total, sizeof(unsigned long long));
        *total = 0;
        squares_parent<<<8, 64>>>(squares, total);
        std::printf("status=%d\n", (int)cudaDeviceSynchronize());
        std::printf("squares_total=%llu\n", *total);
    } else if (std::strcmp(which, "tree") == 0) {
        const int n = 1000;
        int* a;
        long long* result;
        cudaMallocManaged(&a, n * sizeof(int));
        cudaMallocManaged(&result, sizeof(long long));
        for (int i = 0; i < n; ++i) a[i] = (i * 7919) % 1013 - 500;
        *result = -1;
        tree_sum<<<1, 1>>>(a, 0, n, result, 0);
        std::printf("status=%d\n", (int)cudaDeviceSynchronize());
        std::printf("tree_sum=%lld\n", *result);
    } else if (std::strcmp(which, "copy") == 0) {
        int *src, *dst, *seen;
        cudaMalloc(&src, sizeof(int));
        cudaMalloc(&dst, sizeof(int));
        cudaMallocManaged(&seen, sizeof(int));
        copy_parent<<<1, 1>>>(src, dst, seen);
        std::printf("status=%d\n", (int)cudaDeviceSynchronize());
        std::printf("seen=%d\n", *seen);
    } else if (std::strcmp(which, "nothing") == 0) {
        int* status;
        cudaMallocManaged(&status, sizeof(int));
        *status = -1;
        nothing_parent<<<1, 1>>>(status);
        std::printf("status=%d\n", (int)cudaDeviceSynchronize());
        std::printf("device_status=%d\n", *status);
    } else {
        int* status;
        cudaMallocManaged(&status, sizeof(int));
        *status = -1;
        fault_parent<<<1, 1>>>(status);
        std::printf("status=%d\n", (int)cudaDeviceSynchronize());
        std::printf("device_status=%d\n", *status);
    }
    return 0;
}
