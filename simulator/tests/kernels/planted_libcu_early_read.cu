// Planted races on libcu++ synchronization: argument "pipeline" has consumers read a stage with no
// consumer_wait; "barrier" has each thread read a neighbour's copy after arrive() but before
// wait(token). Racecheck must report both. "overcount": a barrier expects one thread more than
// the block has, so its phase never completes and the launch hangs as on a GPU.
#include <cstdio>
#include <cstring>
#include <cooperative_groups.h>
#include <cuda/barrier>
#include <cuda/pipeline>
#include <cuda_runtime.h>

namespace cg = cooperative_groups;

__global__ void early_consumer(const int* in, int* out) {
    __shared__ cuda::pipeline_shared_state<cuda::thread_scope_block, 1> state;
    __shared__ int stage[32];
    const int lane = threadIdx.x % 32;
    const bool producer = threadIdx.x >= 32;
    auto pipe = cuda::make_pipeline(cg::this_thread_block(), &state,
                                    producer ? cuda::pipeline_role::producer : cuda::pipeline_role::consumer);
    if (producer) {
        pipe.producer_acquire();
        cuda::memcpy_async(&stage[lane], &in[lane], sizeof(int), pipe);
        pipe.producer_commit();
    } else {
        out[lane] = stage[31 - lane];  // PLANT: no consumer_wait before the read
        pipe.consumer_wait();
        pipe.consumer_release();
    }
}

__global__ void early_barrier_read(const int* in, int* out) {
    __shared__ cuda::barrier<cuda::thread_scope_block> bar;
    __shared__ int buf[64];
    const int i = threadIdx.x;
    if (i == 0) init(&bar, 64);
    __syncthreads();
    cuda::memcpy_async(&buf[i], &in[i], sizeof(int), bar);
    auto token = bar.arrive();
    out[i] = buf[63 - i];  // PLANT: read before wait(token)
    bar.wait(std::move(token));
}

__global__ void overcounted_barrier(int* out) {
    __shared__ cuda::barrier<cuda::thread_scope_block> bar;
    if (threadIdx.x == 0) init(&bar, blockDim.x + 1);  // PLANT: one arrival too many expected
    __syncthreads();
    bar.arrive_and_wait();
    out[threadIdx.x] = 1;
}

int main(int argc, char** argv) {
    const bool pipeline = argc > 1 && std::strcmp(argv[1], "pipeline") == 0;
    int *in, *out;
    cudaMalloc(&in, 64 * sizeof(int));
    cudaMalloc(&out, 64 * sizeof(int));
    cudaMemset(in, 0, 64 * sizeof(int));
    if (pipeline) {
        early_consumer<<<1, 64>>>(in, out);
    } else if (argc > 1 && std::strcmp(argv[1], "overcount") == 0) {
        overcounted_barrier<<<1, 64>>>(out);
    } else {
        early_barrier_read<<<1, 64>>>(in, out);
    }
    printf("error=%s\n", cudaGetErrorString(cudaDeviceSynchronize()));
    cudaFree(in);
    cudaFree(out);
    return 0;
}
