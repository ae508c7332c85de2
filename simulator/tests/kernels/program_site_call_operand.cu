// A call of one of CUDA's functions that report their call site, as the operand of a rewritten
// shift: the CUDA Handbook's reduction7SyncThreads.cuh sums a block's bits as
// `blockSum += __syncthreads_count(value & (1 << bit)) << bit;`. The call-site record that
// wraps the call lost its closing parenthesis between the shift's operands, and the build failed.
#include <cstdio>

template <int nBits>
__global__ void bit_sums(int *out, const int *in, size_t n)
{
    int blockSum = 0;
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        int value = in[i];
        for (int bit = 0; bit < nBits; bit++) {
            blockSum += __syncthreads_count((value & (1 << bit))) << bit;
        }
    }
    if (threadIdx.x == 0) out[blockIdx.x] = blockSum;
}

// The same call as the right operand of a shift, and a warp shuffle as a shift's left operand.
__global__ void operands(int *out)
{
    int lane = threadIdx.x;
    int left = 1 << __syncthreads_count(lane < 3);
    int shuffled = __shfl_down_sync(0xffffffffu, lane, 1) << 4;
    if (lane == 0) {
        out[0] = left;
        out[1] = shuffled;
    }
}

int main()
{
    const int n = 256;
    int *in, *out;
    cudaMallocManaged(&in, n * sizeof(int));
    cudaMallocManaged(&out, 2 * sizeof(int));
    long long expected = 0;
    for (int i = 0; i < n; i++) {
        in[i] = (i * 37) & 0xff;
        expected += in[i];
    }
    bit_sums<8><<<1, n>>>(out, in, n);
    cudaDeviceSynchronize();
    printf("sum=%d\nexpected=%lld\n", out[0], expected);
    operands<<<1, 32>>>(out);
    cudaError_t err = cudaDeviceSynchronize();
    printf("left=%d\nshuffled=%d\nerror=%s\n", out[0], out[1], cudaGetErrorName(err));
    return 0;
}
