// A thread's own array updated from its other elements (`call[j] = pu * call[j + 1] + pd * call[j]`,
// as hecbench's binomial and NVIDIA's binomialOptions do) is no warp-synchronous exchange: no other
// lane sees the array, so the statement needs no lockstep and the kernel may run as block loops.
// Neighbours pass values through shared memory between barriers. Argument "oob" reads one element
// past the shared exchange (a finding under memcheck). Prints the values for the test to check.
#include <cstdio>
#include <cstring>

constexpr int kThreads = 64;
constexpr int kElems = 4;
constexpr int kSteps = kThreads * kElems;

__global__ void lattice(const float* start, float* out, float up, float down, int past) {
    __shared__ float exchange[kThreads + 1];
    const int tid = threadIdx.x;
    float call[kElems + 1];
    for (int i = 0; i < kElems; ++i) call[i] = start[blockIdx.x * kSteps + tid * kElems + i];
    if (tid == 0) exchange[kThreads] = start[blockIdx.x * kSteps + kSteps];
    const int last = tid * kElems - 1;
    for (int i = kSteps; i > 0; --i) {
        exchange[tid] = call[0];
        __syncthreads();
        call[kElems] = exchange[tid + 1 + past];  // PLANT-OOB
        __syncthreads();
        if (i > last) {
            for (int j = 0; j < kElems; ++j) call[j] = up * call[j + 1] + down * call[j];
        }
    }
    out[blockIdx.x * kThreads + tid] = call[0];
}

int main(int argc, char** argv) {
    const int blocks = 3;
    const int past = argc > 1 && std::strcmp(argv[1], "oob") == 0 ? kThreads : 0;
    static float h_start[blocks * kSteps + 1], h_out[blocks * kThreads];
    for (int i = 0; i < blocks * kSteps + 1; ++i) h_start[i] = (float)((i * 7) % 13) * 0.125f;
    float *d_start, *d_out;
    cudaMalloc(&d_start, sizeof h_start);
    cudaMalloc(&d_out, sizeof h_out);
    cudaMemcpy(d_start, h_start, sizeof h_start, cudaMemcpyHostToDevice);
    lattice<<<blocks, kThreads>>>(d_start, d_out, 0.5f, 0.5f, past);
    cudaError_t status = cudaDeviceSynchronize();
    cudaMemcpy(h_out, d_out, sizeof h_out, cudaMemcpyDeviceToHost);
    std::printf("status %s\n", cudaGetErrorName(status));
    std::printf("out");
    for (int i = 0; i < blocks * kThreads; ++i) std::printf(" %.9g", h_out[i]);
    std::printf("\n");
    return 0;
}
