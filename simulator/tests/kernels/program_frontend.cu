// A whole program for `python -m simulator run`: launch forms the front end must translate.
// It prints one `name=value` line per check and exits 0 only when every value is right.
// The same file builds with nvcc (`nvcc -c`).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

// Default arguments, applied at a launch that leaves them out.
__global__ void affine(float* out, int n, float scale = 2.0f, float shift = 0.5f) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = scale * i + shift;
}

// A kernel template with a default argument, launched with explicit template arguments; and a
// kernel whose default is given in a declaration before its definition.
template <typename T, int K>
__global__ void fill_k(T* out, int n, T offset = T(0.25)) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = T(K) * i + offset;
}
__global__ void declared_first(float* out, int n, int stride = 3);

__global__ void add_one(float* p, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] += 1.0f;
}
__global__ void times_ten(float* p, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] *= 10.0f;
}

// Device code keeps the built-ins, also in a __host__ __device__ helper.
__host__ __device__ int flat_index(int b, int t, int per_block) { return b * per_block + t; }
__global__ void index_of(int* out, int n) {
    int i = flat_index(blockIdx.x, threadIdx.x, blockDim.x);
    if (i < n) out[i] = i + warpSize * 0 + gridDim.x * 0;
}

// Several __shared__ variables in one statement, and a 2-D dynamic shared array.
__global__ void shared_forms(int* out) {
    __shared__ int a[64], b, *p;
    extern __shared__ float rows[][3];
    a[threadIdx.x] = (int)threadIdx.x;
    rows[threadIdx.x][2] = 0.5f * threadIdx.x;
    if (threadIdx.x == 0) {
        b = 1000;
        p = &b;
    }
    __syncthreads();
    out[threadIdx.x] = a[63 - threadIdx.x] + *p + (int)(2.0f * rows[63 - threadIdx.x][2]);
}

__global__ void declared_first(float* out, int n, int stride) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = (float)(i * stride);
}

typedef void (*kernel_t)(float*, int);
static kernel_t pick(int which) { return which == 0 ? add_one : times_ten; }

struct LaunchShape {
    dim3 gridDim;  // members named like the built-ins
    dim3 blockDim;
};

static float host[256];
static int failures = 0;

static void expect(const char* name, float got, float want) {
    std::printf("%s=%g\n", name, got);
    if (got != want) {
        std::printf("MISMATCH %s: got %g, want %g\n", name, got, want);
        failures++;
    }
}

static void fetch(const float* d, int n) { cudaMemcpy(host, d, n * sizeof(float), cudaMemcpyDeviceToHost); }

int main(int argc, char** argv) {
    const int n = argc > 1 ? std::atoi(argv[1]) : 100;  // the size comes from the command line
    if (n <= 0 || n > 256) return 64;
    float* d = NULL;
    if (cudaMalloc(&d, 256 * sizeof(float)) != cudaSuccess) return 65;

    // Host variables named like the built-ins (legal CUDA: they are device-only names).
    dim3 blockDim(32);
    dim3 gridDim((n + blockDim.x - 1) / blockDim.x);
    int warpSize = 3;

    affine<<<gridDim, blockDim>>>(d, n);  // both defaults
    fetch(d, n);
    expect("affine_defaults_last", host[n - 1], 2.0f * (n - 1) + 0.5f);
    affine<<<gridDim, blockDim>>>(d, n, 3.0f);  // one default
    fetch(d, n);
    expect("affine_one_default_last", host[n - 1], 3.0f * (n - 1) + 0.5f);
    affine<<<gridDim, blockDim>>>(d, n, 1.0f, 0);  // none; 0 converts to float
    fetch(d, n);
    expect("affine_no_default_last", host[n - 1], (float)(n - 1));

    fill_k<float, 4><<<gridDim, blockDim>>>(d, n);
    fetch(d, n);
    expect("template_default_last", host[n - 1], 4.0f * (n - 1) + 0.25f);
    declared_first<<<gridDim, blockDim>>>(d, n);
    fetch(d, n);
    expect("declared_default_last", host[n - 1], 3.0f * (n - 1));

    // Launches through expressions: a table, a conditional, a pointer, a call.
    kernel_t table[2] = {add_one, times_ten};
    int k = 1;
    table[k]<<<gridDim, blockDim>>>(d, n);  // x10
    const bool flag = argc > 99;
    (flag ? times_ten : add_one)<<<gridDim, blockDim>>>(d, n);  // +1
    kernel_t fp = times_ten;
    fp<<<gridDim, blockDim>>>(d, n);  // x10
    pick(0)<<<gridDim, blockDim>>>(d, n);  // +1
    LaunchShape shape;
    shape.gridDim = gridDim;
    shape.blockDim = blockDim;
    table[0]<<<shape.gridDim, shape.blockDim>>>(d, n);  // +1
    fetch(d, n);
    expect("expression_launches_last", host[n - 1], (3.0f * (n - 1) * 10.0f + 1.0f) * 10.0f + 2.0f);
    expect("expression_launches_first", host[0], 12.0f);

    int* di = NULL;
    cudaMalloc(&di, n * sizeof(int));
    index_of<<<gridDim, blockDim>>>(di, n);
    int hi[256];
    cudaMemcpy(hi, di, n * sizeof(int), cudaMemcpyDeviceToHost);
    expect("device_builtins_last", (float)hi[n - 1], (float)(n - 1));
    expect("host_warpSize", (float)warpSize, 3.0f);

    int* ds = NULL;
    cudaMalloc(&ds, 64 * sizeof(int));
    shared_forms<<<1, 64 /* 32, 2 */, 64 * 3 * sizeof(float)>>>(ds);  // a comma in a comment
    int hs[64];
    cudaMemcpy(hs, ds, sizeof hs, cudaMemcpyDeviceToHost);
    expect("shared_forms_first", (float)hs[0], 63.0f + 1000.0f + 63.0f);
    expect("shared_forms_last", (float)hs[63], 1000.0f);
    cudaFree(ds);

    // A launch of a null kernel pointer is refused, not run.
    kernel_t none = NULL;
    none<<<1, 1>>>(d, n);
    cudaError_t err = cudaGetLastError();
    std::printf("null_kernel=%s\n", cudaGetErrorName(err));
    if (err != cudaErrorInvalidDeviceFunction) failures++;

    cudaFree(di);
    cudaFree(d);
    std::printf("failures=%d\n", failures);
    return failures == 0 ? 0 : 1;
}
