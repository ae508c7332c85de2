// Barrier-free kernels with one planted bug each, chosen by argv[1]: memcheck and synccheck run
// these launches as plain loops (SIMULATOR_FIBERS=1 forces fibers); what they find must not
// depend on it (test_plain_checkers.py). "wait" launches a kernel that does reach a barrier
// through ::__sim::launch with the barrier-free flag set, which only a plain loop refuses.
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>

__global__ void scale(float* p, int n, float s) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] *= s;
}

__global__ void write_past_end(float* p, int n) {
    p[blockIdx.x * blockDim.x + threadIdx.x + n] = 1.0f;  // PLANT-OOB
}

__global__ void read_freed(const float* in, float* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = in[i];  // PLANT-UAF
}

__global__ void shared_past_end(float* out, int n) {
    extern __shared__ float tile[];
    tile[threadIdx.x + n] = 2.0f;  // PLANT-SHARED-OOB
    out[threadIdx.x] = tile[threadIdx.x];
}

__global__ void local_past_end(int* out, int k) {
    int local[4] = {1, 2, 3, 4};
    out[threadIdx.x] = local[threadIdx.x + k];  // PLANT-STACK-OOB
}

__global__ void overflow(int* out, int s) {
    out[threadIdx.x] = ((int)threadIdx.x + s) * 429496730;  // PLANT-UB
}

__global__ void busy(float* out, long n) {
    float x = 0.0f;
    for (long i = 0; i < n; ++i) x = x * 0.999f + (float)(i & 7);  // PLANT-TIMEOUT
    out[threadIdx.x] = x;
}

__global__ void waits(float* p, float* q) {
    p[threadIdx.x] = 1.0f;
    __syncthreads();  // PLANT-WAIT
    q[threadIdx.x] = p[(threadIdx.x + 1) % blockDim.x];
}

int main(int argc, char** argv) {
    const char* what = argc > 1 ? argv[1] : "clean";
    const int n = 256;
    float *a = nullptr, *b = nullptr;
    int* c = nullptr;
    cudaMalloc(&a, n * sizeof(float));  // PLANT-LEAK
    cudaMalloc(&b, n * sizeof(float));
    cudaMalloc(&c, n * sizeof(int));
    cudaMemset(a, 0, n * sizeof(float));
    scale<<<4, 64>>>(a, n, 2.0f);
    if (std::strcmp(what, "oob") == 0) write_past_end<<<2, 32>>>(a, n - 40);
    if (std::strcmp(what, "uaf") == 0) {
        cudaFree(b);
        read_freed<<<2, 32>>>(b, a);
    }
    if (std::strcmp(what, "shared_oob") == 0) shared_past_end<<<2, 32, 32 * sizeof(float)>>>(a, 8);
    if (std::strcmp(what, "stack_oob") == 0) local_past_end<<<1, 8>>>(c, 0);
    if (std::strcmp(what, "ub") == 0) overflow<<<1, 4>>>(c, 2);
    if (std::strcmp(what, "timeout") == 0) busy<<<2, 32>>>(a, 1L << 40);
    if (std::strcmp(what, "wait") == 0) {
        ::__sim::launch(::__sim::LaunchSpec{dim3(1), dim3(32), 0, 0, true}, "waits", __FILE__, __LINE__, waits, a, b);
    }
    cudaError_t err = cudaDeviceSynchronize();
    std::printf("%s: %s\n", what, cudaGetErrorName(err));
    if (std::strcmp(what, "leak") != 0) cudaFree(a);
    if (std::strcmp(what, "uaf") != 0) cudaFree(b);
    cudaFree(c);
    return 0;
}
