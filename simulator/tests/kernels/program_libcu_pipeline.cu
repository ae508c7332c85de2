// libcu++ barriers and pipelines (<cuda/barrier>, <cuda/pipeline>, <cuda_pipeline.h>): a block
// barrier with arrive/wait tokens, arrive_and_wait, arrive_and_drop and a completion function;
// a block pipeline with 32 producer and 32 consumer threads over 2 stages; a pipeline whose
// threads all produce and consume; thread-scope pipelines; the __pipeline_* primitives with zero
// fill; a kernel that waits only through a barrier in global memory. Every read of another
// thread's copy comes after the wait CUDA requires. Prints each result. With "planted CASE" it
// runs only that planted race or hang below instead: one program for all, so that each mode builds
// it once.
#include <cstdio>
#include <cstring>
#include <cooperative_groups.h>
#include <cuda/barrier>
#include <cuda/pipeline>
#include <cuda/std/type_traits>
#include <cuda_pipeline.h>
#include <cuda_runtime.h>

namespace cg = cooperative_groups;

constexpr int T = 128;     // threads of the barrier and thread-scope kernels
constexpr int K = 8;       // tiles through the producer/consumer pipeline
constexpr int STAGES = 2;  // its stages

static_assert(cuda::std::is_same<cuda::std::remove_cv<const int>::type, int>::value, "cuda::std traits");

struct CountPhases {
    int* phases;
    __device__ void operator()() const noexcept { atomicAdd(phases, 1); }
};

// out (4*T per block): reversed copy, neighbour sums after a split arrive/wait, the even threads'
// result after the odd ones dropped out, and the group-form copy.
__global__ void barriers(const int* in, int* out, int* phases) {
    __shared__ cuda::barrier<cuda::thread_scope_block, CountPhases> bar;
    __shared__ int buf[T];
    __shared__ int sums[T];
    __shared__ int shared_copy[T];
    const int i = threadIdx.x;
    const int* src = in + blockIdx.x * T;
    int* o = out + blockIdx.x * 4 * T;
    if (i == 0) init(&bar, T, CountPhases{phases + blockIdx.x});
    __syncthreads();

    cuda::memcpy_async(&buf[i], &src[i], sizeof(int), bar);
    bar.arrive_and_wait();  // phase 1
    o[i] = buf[T - 1 - i];

    sums[i] = buf[i] + buf[(i + 1) % T];
    auto token = bar.arrive();  // phase 2
    bar.wait(std::move(token));
    o[T + i] = sums[(i + 5) % T];

    cuda::memcpy_async(cg::this_thread_block(), shared_copy, src, cuda::aligned_size_t<4>(sizeof(int) * T), bar);
    if (i % 2 == 1) {
        bar.arrive_and_drop();  // phase 3, then the barrier expects only the even threads
        o[2 * T + i] = -1;
        o[3 * T + i] = -1;
        return;
    }
    bar.arrive_and_wait();  // phase 3
    buf[i] = sums[i] * 3;
    bar.arrive_and_wait();  // phase 4: only the even threads
    o[2 * T + i] = buf[(i + 2) % T];
    o[3 * T + i] = shared_copy[T - 1 - i];
}

// Warp 1 produces tiles of 32 ints into 2 stages, warp 0 consumes them: out[lane] is the sum over
// tiles t of tile[t][(5 * lane + t) % 32] * (t + 1).
__global__ void producer_consumer(const int* in, int* out) {
    __shared__ cuda::pipeline_shared_state<cuda::thread_scope_block, STAGES> state;
    __shared__ int stage[STAGES][32];
    const int lane = threadIdx.x % 32;
    const bool producer = threadIdx.x >= 32;
    auto block = cg::this_thread_block();
    auto pipe = cuda::make_pipeline(block, &state, producer ? cuda::pipeline_role::producer : cuda::pipeline_role::consumer);
    const int* src = in + blockIdx.x * K * 32;
    if (producer) {
        for (int t = 0; t < K; ++t) {
            pipe.producer_acquire();
            cuda::memcpy_async(&stage[t % STAGES][lane], &src[t * 32 + lane], sizeof(int), pipe);
            pipe.producer_commit();
        }
    } else {
        int sum = 0;
        for (int t = 0; t < K; ++t) {
            pipe.consumer_wait();
            sum += stage[t % STAGES][(5 * lane + t) % 32] * (t + 1);
            pipe.consumer_release();
        }
        out[blockIdx.x * 32 + lane] = sum;
    }
}

// Every thread produces and consumes: out[i] = sum over tiles t of tile[t][(i + 7) % T] - t.
__global__ void all_roles(const int* in, int* out) {
    __shared__ cuda::pipeline_shared_state<cuda::thread_scope_block, STAGES> state;
    __shared__ int stage[STAGES][T];
    const int i = threadIdx.x;
    auto pipe = cuda::make_pipeline(cg::this_thread_block(), &state);
    const int* src = in + blockIdx.x * 3 * T;
    int sum = 0;
    for (int t = 0; t < 3; ++t) {
        pipe.producer_acquire();
        cuda::memcpy_async(&stage[t % STAGES][i], &src[t * T + i], sizeof(int), pipe);
        pipe.producer_commit();
        pipe.consumer_wait();
        // The consumer_wait of a block pipeline waits for every producer's commit of the stage.
        sum += stage[t % STAGES][(i + 7) % T] - t;
        pipe.consumer_release();
    }
    out[blockIdx.x * T + i] = sum;
}

// Thread-scope pipeline and the primitives: out (2*T per block) is the copy read across the block
// after __syncthreads, and a 16-byte copy of which the last 8 bytes are zero-filled.
__global__ void thread_scope(const int* in, int* out) {
    __shared__ alignas(16) int buf[T];
    __shared__ alignas(16) int quad[T];
    const int i = threadIdx.x;
    const int* src = in + blockIdx.x * T;
    cuda::pipeline<cuda::thread_scope_thread> pipe = cuda::make_pipeline();
    pipe.producer_acquire();
    cuda::memcpy_async(&buf[i], &src[i], cuda::aligned_size_t<alignof(int)>(sizeof(int)), pipe);
    pipe.producer_commit();
    cuda::pipeline_consumer_wait_prior<0>(pipe);
    pipe.consumer_release();
    if (i % 4 == 0) {
        __pipeline_memcpy_async(&quad[i], &src[i], 16, 8);
        __pipeline_commit();
        __pipeline_wait_prior(0);
    }
    __syncthreads();
    out[blockIdx.x * 2 * T + i] = buf[(i * 3) % T];
    out[blockIdx.x * 2 * T + T + i] = quad[T - 1 - i];
}

// A barrier in global memory, set up by an earlier launch: this kernel waits only through the
// barrier (no __syncthreads), so it must never run as a plain loop over its threads.
using BlockBarrier = cuda::barrier<cuda::thread_scope_block>;
__device__ int global_buf[T];
__global__ void setup_global_barrier(BlockBarrier* bar) { init(bar, T); }
__global__ void only_barrier(BlockBarrier* bar, int* out) {
    const int i = threadIdx.x;
    global_buf[i] = i * 3 + 1;
    bar->arrive_and_wait();
    out[i] = global_buf[T - 1 - i];
}

static void print(const char* name, int b, const int* v, int n) {
    printf("%s_%d=", name, b);
    for (int k = 0; k < n; ++k) printf(k ? ",%d" : "%d", v[k]);
    printf("\n");
}

// ---- "planted CASE": races on libcu++ synchronization. "pipeline" has consumers read a stage with
// no consumer_wait; "barrier" has each thread read a neighbour's copy after arrive() but before
// wait(token). Racecheck must report both. "overcount": a barrier expects one thread more than the
// block has, so its phase never completes and the launch hangs as on a GPU.
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

static int planted_main(int argc, char** argv) {
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

int main(int argc, char** argv) {
    if (argc > 1 && std::strcmp(argv[1], "planted") == 0) return planted_main(argc - 1, argv + 1);
    const int blocks = 2, n = blocks * K * 32 * 2;
    int* h = new int[n];
    for (int k = 0; k < n; ++k) h[k] = (k * 37 + 11) % 1009;
    int *in, *out, *phases;
    cudaMalloc(&in, n * sizeof(int));
    cudaMalloc(&out, blocks * 4 * T * sizeof(int));
    cudaMalloc(&phases, blocks * sizeof(int));
    cudaMemcpy(in, h, n * sizeof(int), cudaMemcpyHostToDevice);
    cudaMemset(phases, 0, blocks * sizeof(int));
    int* r = new int[blocks * 4 * T];
    int ph[blocks];

    barriers<<<blocks, T>>>(in, out, phases);
    cudaMemcpy(r, out, blocks * 4 * T * sizeof(int), cudaMemcpyDeviceToHost);
    cudaMemcpy(ph, phases, sizeof(ph), cudaMemcpyDeviceToHost);
    for (int b = 0; b < blocks; ++b) {
        print("barrier", b, r + b * 4 * T, 4 * T);
        printf("phases_%d=%d\n", b, ph[b]);
    }

    producer_consumer<<<blocks, 64>>>(in, out);
    cudaMemcpy(r, out, blocks * 32 * sizeof(int), cudaMemcpyDeviceToHost);
    for (int b = 0; b < blocks; ++b) print("prodcons", b, r + b * 32, 32);

    all_roles<<<blocks, T>>>(in, out);
    cudaMemcpy(r, out, blocks * T * sizeof(int), cudaMemcpyDeviceToHost);
    for (int b = 0; b < blocks; ++b) print("allroles", b, r + b * T, T);

    thread_scope<<<blocks, T>>>(in, out);
    cudaMemcpy(r, out, blocks * 2 * T * sizeof(int), cudaMemcpyDeviceToHost);
    for (int b = 0; b < blocks; ++b) print("threadscope", b, r + b * 2 * T, 2 * T);

    BlockBarrier* bar;
    cudaMalloc(&bar, sizeof(BlockBarrier));
    setup_global_barrier<<<1, 1>>>(bar);
    only_barrier<<<1, T>>>(bar, out);
    cudaMemcpy(r, out, T * sizeof(int), cudaMemcpyDeviceToHost);
    print("onlybarrier", 0, r, T);

    printf("error=%s\n", cudaGetErrorString(cudaDeviceSynchronize()));
    cudaFree(in);
    cudaFree(out);
    cudaFree(phases);
    cudaFree(bar);
    delete[] h;
    delete[] r;
    return 0;
}
