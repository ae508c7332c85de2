// memcheck with several faulting threads (test_memcheck_threads.py). Argument "tail" (barrier-free):
// the threads from N on read a[N], one past the end of an N-int buffer. Argument "rounds" (a
// kernel with one barrier, run as block loops): the threads t with t % 8 == 5 read a[N] in round 1.
#include <cstdio>
#include <cstring>

constexpr int N = 40;        // the buffer's length; also the first faulting thread of "tail"
constexpr int THREADS = 64;  // one block

__global__ void read_tail(const int* a, int* out) {
    const int t = threadIdx.x;
    out[t] = a[t < N ? t : N];  // PLANT-TAIL
}

__global__ void two_rounds(const int* a, int* out) {
    __shared__ int s[THREADS];
    const int t = threadIdx.x;
    s[t] = a[t % 8 == 5 ? N : t % N];  // PLANT-ROUND1
    printf("round 1: thread %d\n", t);
    __syncthreads();
    out[t] = s[THREADS - 1 - t];
    printf("round 2: thread %d\n", t);
}

int main(int argc, char** argv) {
    const char* what = argc > 1 ? argv[1] : "";
    int *a, *out;
    cudaMalloc(&a, N * sizeof(int));
    cudaMalloc(&out, THREADS * sizeof(int));
    cudaMemset(a, 0, N * sizeof(int));
    if (std::strcmp(what, "tail") == 0) read_tail<<<1, THREADS>>>(a, out);
    if (std::strcmp(what, "rounds") == 0) two_rounds<<<1, THREADS>>>(a, out);
    cudaError_t e = cudaDeviceSynchronize();
    std::fflush(stdout);
    std::printf("%s: %s\n", what, cudaGetErrorName(e));
    return 0;
}
