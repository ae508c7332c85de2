// cuda::ptx's special-register reads, which CUB calls (get_sreg_lanemask_ge in DeviceScan's
// look-back, get_sreg_laneid in its warp algorithms): each thread of two warps prints what it reads.
#include <cstdio>
#include <cuda/ptx>

constexpr int THREADS = 64;

__global__ void registers(unsigned* out) {
    unsigned* mine = out + 6 * threadIdx.x;
    mine[0] = cuda::ptx::get_sreg_laneid();
    mine[1] = cuda::ptx::get_sreg_lanemask_eq();
    mine[2] = cuda::ptx::get_sreg_lanemask_le();
    mine[3] = cuda::ptx::get_sreg_lanemask_lt();
    mine[4] = cuda::ptx::get_sreg_lanemask_ge();
    mine[5] = cuda::ptx::get_sreg_lanemask_gt();
}

int main() {
    unsigned* d;
    cudaMalloc(&d, 6 * THREADS * sizeof(unsigned));
    registers<<<1, THREADS>>>(d);
    unsigned h[6 * THREADS];
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    const char* names[6] = {"laneid", "lanemask_eq", "lanemask_le", "lanemask_lt", "lanemask_ge", "lanemask_gt"};
    for (int r = 0; r < 6; ++r) {
        printf("%s=", names[r]);
        for (int t = 0; t < THREADS; ++t) printf(t ? ",%u" : "%u", h[6 * t + r]);
        printf("\n");
    }
    printf("error=%s\n", cudaGetErrorString(cudaGetLastError()));
    cudaFree(d);
    return 0;
}
