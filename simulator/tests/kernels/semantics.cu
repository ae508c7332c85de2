// Small kernels exercising one runtime feature each; the Python tests call the launchers
// through ctypes and compare with numpy. Each launcher returns a cudaError_t value.
#include <cuda_runtime.h>
#include <stdint.h>

#include "entry_check.h"

template <class T>
static int to_device(T** d, const T* h, size_t n) {
    CHECK(cudaMalloc(d, n * sizeof(T) + 1));
    if (h != NULL) CHECK(cudaMemcpy(*d, h, n * sizeof(T), cudaMemcpyHostToDevice));
    else CHECK(cudaMemset(*d, 0, n * sizeof(T)));
    return 0;
}

template <class T>
static int to_host(T* h, T* d, size_t n) {
    CHECK(cudaMemcpy(h, d, n * sizeof(T), cudaMemcpyDeviceToHost));
    CHECK(cudaFree(d));
    return 0;
}

// Tree reduction in shared memory: one barrier per level.
template <int BLOCK>
__global__ void block_sum_kernel(const int* in, int* out) {
    __shared__ int s[BLOCK];
    const int t = threadIdx.x;
    s[t] = in[blockIdx.x * BLOCK + t];
    __syncthreads();
    for (int stride = BLOCK / 2; stride > 0; stride >>= 1) {
        if (t < stride) s[t] += s[t + stride];
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = s[0];
}

extern "C" int sem_block_sum(const int* in, int* out, int blocks) {
    int *d_in, *d_out;
    int rc = to_device(&d_in, in, (size_t)blocks * 128);
    if (rc) return rc;
    if ((rc = to_device<int>(&d_out, NULL, blocks))) return rc;
    block_sum_kernel<128><<<blocks, 128>>>(d_in, d_out);
    CHECK(cudaGetLastError());
    CHECK(cudaFree(d_in));
    return to_host(out, d_out, blocks);
}

// out[lane * 8 + k]: k = idx(src 3), up(1), down(2), xor(5), idx width 8 (src 1), up width 8 (2),
// down width 8 (3), xor width 8 (4). Values are lane * 10.
__global__ void shuffle_kernel(int* out) {
    const int lane = threadIdx.x & 31;
    const int v = lane * 10;
    int* o = out + threadIdx.x * 8;
    o[0] = __shfl_sync(0xffffffffu, v, 3);
    o[1] = __shfl_up_sync(0xffffffffu, v, 1);
    o[2] = __shfl_down_sync(0xffffffffu, v, 2);
    o[3] = __shfl_xor_sync(0xffffffffu, v, 5);
    o[4] = __shfl_sync(0xffffffffu, v, 1, 8);
    o[5] = __shfl_up_sync(0xffffffffu, v, 2, 8);
    o[6] = __shfl_down_sync(0xffffffffu, v, 3, 8);
    o[7] = __shfl_xor_sync(0xffffffffu, v, 4, 8);
}

extern "C" int sem_shuffles(int* out, int threads) {
    int* d;
    int rc = to_device<int>(&d, NULL, (size_t)threads * 8);
    if (rc) return rc;
    shuffle_kernel<<<1, threads>>>(d);
    CHECK(cudaGetLastError());
    return to_host(out, d, (size_t)threads * 8);
}

// A double shuffled as 8 bytes, and a warp sum by xor butterfly over floats.
__global__ void shuffle_types_kernel(double* dout, float* fout) {
    const int lane = threadIdx.x & 31;
    dout[threadIdx.x] = __shfl_down_sync(0xffffffffu, lane * 0.5, 1);
    float v = (float)lane;
    for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
    fout[threadIdx.x] = v;
}

extern "C" int sem_shuffle_types(double* dout, float* fout) {
    double* dd;
    float* df;
    int rc = to_device<double>(&dd, NULL, 64);
    if (rc || (rc = to_device<float>(&df, NULL, 64))) return rc;
    shuffle_types_kernel<<<1, 64>>>(dd, df);
    CHECK(cudaGetLastError());
    if ((rc = to_host(dout, dd, 64))) return rc;
    return to_host(fout, df, 64);
}

// out[warp * 4 + 0..3] = ballot(lane % 3 == 0), any(lane == 5), all(lane < 32), all(lane < 16).
__global__ void vote_kernel(unsigned* out) {
    const int lane = threadIdx.x & 31;
    const unsigned b = __ballot_sync(0xffffffffu, lane % 3 == 0);
    const int any5 = __any_sync(0xffffffffu, lane == 5);
    const int all32 = __all_sync(0xffffffffu, lane < 32);
    const int all16 = __all_sync(0xffffffffu, lane < 16);
    __syncwarp();
    if (lane == 0) {
        unsigned* o = out + (threadIdx.x >> 5) * 4;
        o[0] = b;
        o[1] = (unsigned)any5;
        o[2] = (unsigned)all32;
        o[3] = (unsigned)all16;
    }
}

extern "C" int sem_votes(unsigned* out, int warps) {
    unsigned* d;
    int rc = to_device<unsigned>(&d, NULL, (size_t)warps * 4);
    if (rc) return rc;
    vote_kernel<<<1, warps * 32>>>(d);
    CHECK(cudaGetLastError());
    return to_host(out, d, (size_t)warps * 4);
}

// Half-warp groups shuffle with disjoint masks at the same time.
__global__ void half_mask_kernel(int* out) {
    const int lane = threadIdx.x & 31;
    const unsigned mask = lane < 16 ? 0x0000ffffu : 0xffff0000u;
    out[threadIdx.x] = __shfl_sync(mask, lane * 3, lane < 16 ? 0 : 16);
}

extern "C" int sem_half_masks(int* out) {
    int* d;
    int rc = to_device<int>(&d, NULL, 32);
    if (rc) return rc;
    half_mask_kernel<<<1, 32>>>(d);
    CHECK(cudaGetLastError());
    return to_host(out, d, 32);
}

// Every thread of every block: atomicAdd(int), atomicAdd(float), atomicMax, a CAS-built add.
__global__ void atomics_kernel(int* counter, float* fsum, int* maxv, unsigned long long* cas_sum) {
    const int gid = blockIdx.x * blockDim.x + threadIdx.x;
    atomicAdd(counter, 1);
    atomicAdd(fsum, 0.5f);
    atomicMax(maxv, gid * 7 % 1000);
    unsigned long long old = *cas_sum, assumed;
    do {
        assumed = old;
        old = atomicCAS(cas_sum, assumed, assumed + (unsigned long long)gid);
    } while (old != assumed);
}

extern "C" int sem_atomics(int blocks, int threads, int* counter, float* fsum, int* maxv,
                           unsigned long long* cas_sum) {
    int *dc, *dm;
    float* df;
    unsigned long long* du;
    int rc = to_device<int>(&dc, NULL, 1);
    if (rc || (rc = to_device<int>(&dm, NULL, 1)) || (rc = to_device<float>(&df, NULL, 1)) ||
        (rc = to_device<unsigned long long>(&du, NULL, 1)))
        return rc;
    atomics_kernel<<<blocks, threads>>>(dc, df, dm, du);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    if ((rc = to_host(counter, dc, 1)) || (rc = to_host(fsum, df, 1)) || (rc = to_host(maxv, dm, 1))) return rc;
    return to_host(cas_sum, du, 1);
}

// Reverses each block's chunk through dynamic shared memory sized by the launch.
__global__ void reverse_kernel(const float* in, float* out, int n) {
    extern __shared__ float buf[];
    const int t = threadIdx.x;
    const int base = blockIdx.x * blockDim.x;
    if (base + t < n) buf[t] = in[base + t];
    __syncthreads();
    const int count = min(n - base, (int)blockDim.x);
    if (t < count) out[base + t] = buf[count - 1 - t];
}

extern "C" int sem_dynamic_shared(const float* in, float* out, int n, int block) {
    float *di, *dout;
    int rc = to_device(&di, in, n);
    if (rc || (rc = to_device<float>(&dout, NULL, n))) return rc;
    reverse_kernel<<<(n + block - 1) / block, block, block * sizeof(float)>>>(di, dout, n);
    CHECK(cudaGetLastError());
    CHECK(cudaFree(di));
    return to_host(out, dout, n);
}

// Grid-stride loop: a small grid covers any n.
__global__ void grid_stride_kernel(float* out, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        out[i] += 2.0f * i;
    }
}

extern "C" int sem_grid_stride(float* out, int n, int grid, int block) {
    float* d;
    int rc = to_device<float>(&d, NULL, n);
    if (rc) return rc;
    grid_stride_kernel<<<grid, block>>>(d, n);
    CHECK(cudaGetLastError());
    return to_host(out, d, n);
}

// 3-D grids and blocks: each thread writes its linear block and thread ids at its global slot.
__global__ void dims_kernel(int* out) {
    const int block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    const int thread = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    const int nthreads = blockDim.x * blockDim.y * blockDim.z;
    out[2 * (block * nthreads + thread)] = block;
    out[2 * (block * nthreads + thread) + 1] = thread;
}

extern "C" int sem_dims(int* out, int gx, int gy, int gz, int bx, int by, int bz) {
    const size_t n = (size_t)gx * gy * gz * bx * by * bz * 2;
    int* d;
    int rc = to_device<int>(&d, NULL, n);
    if (rc) return rc;
    dims_kernel<<<dim3(gx, gy, gz), dim3(bx, by, bz)>>>(d);
    CHECK(cudaGetLastError());
    return to_host(out, d, n);
}

// __syncthreads_count / _and / _or.
__global__ void sync_count_kernel(int* out, int threshold) {
    const int t = threadIdx.x;
    const int c = __syncthreads_count(t < threshold);
    const int a = __syncthreads_and(t < threshold);
    const int o = __syncthreads_or(t < threshold);
    if (t == 0) {
        out[0] = c;
        out[1] = a;
        out[2] = o;
    }
}

extern "C" int sem_sync_count(int* out, int threads, int threshold) {
    int* d;
    int rc = to_device<int>(&d, NULL, 3);
    if (rc) return rc;
    sync_count_kernel<<<1, threads>>>(d, threshold);
    CHECK(cudaGetLastError());
    return to_host(out, d, 3);
}

// Threads that return early do not hold up a barrier the others still reach.
__global__ void early_exit_kernel(int* out, int live) {
    __shared__ int s[64];
    const int t = threadIdx.x;
    if (t >= live) return;
    s[t] = t + 1;
    __syncthreads();
    out[t] = s[(t + 1) % live];
}

extern "C" int sem_early_exit(int* out, int live) {
    int* d;
    int rc = to_device<int>(&d, NULL, 64);
    if (rc) return rc;
    early_exit_kernel<<<1, 64>>>(d, live);
    CHECK(cudaGetLastError());
    return to_host(out, d, 64);
}

// Lane 0..15 shuffle while 16..31 wait at a barrier: can never finish. Returns the launch's
// error (from cudaDeviceSynchronize), then resets the device so later calls work.
__global__ void deadlock_kernel(int* out) {
    const int lane = threadIdx.x & 31;
    if (lane < 16) {
        out[lane] = __shfl_sync(0xffffffffu, lane, 0);
    } else {
        __syncthreads();
    }
}

extern "C" int sem_deadlock(void) {
    int* d;
    int rc = to_device<int>(&d, NULL, 32);
    if (rc) return rc;
    deadlock_kernel<<<1, 32>>>(d);
    const int err = (int)cudaDeviceSynchronize();
    cudaFree(d);       // frees it; returns the sticky error
    cudaDeviceReset();  // clears the sticky error so that the next tests can launch
    return err;
}

// Launch configuration limits: returns cudaGetLastError() after the launch.
__global__ void noop_kernel(int* out) {
    extern __shared__ char big[];
    if (threadIdx.x == 0 && out != NULL) out[0] = big[0] == big[0];
}

extern "C" int sem_launch_error(int block, int smem, int optin) {
    if (optin) CHECK(cudaFuncSetAttribute(noop_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    noop_kernel<<<1, block, smem>>>(NULL);
    return (int)cudaGetLastError();
}

// cudaMemcpy past the end of a device allocation is refused.
extern "C" int sem_memcpy_past_end(void) {
    float* d;
    float h[8] = {0};
    CHECK(cudaMalloc(&d, 4 * sizeof(float)));
    const int err = (int)cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice);
    cudaFree(d);
    return err;
}

extern "C" const char* sem_error_string(int code) { return cudaGetErrorString((cudaError_t)code); }
