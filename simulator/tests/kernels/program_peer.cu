// Peer-to-peer queries on the modelled machine, which has one GPU: run unmodified, a program
// sees what it would see on a one-GPU machine. Prints key=value lines for test_peer.py.
#include <cuda_runtime.h>

#include <cstdio>

int main() {
    int count = 0, can = -1;
    cudaGetDeviceCount(&count);
    cudaError_t self = cudaDeviceCanAccessPeer(&can, 0, 0);
    std::printf("count=%d can_access_self=%d status=%s\n", count, can, cudaGetErrorName(self));
    std::printf("can_access_other=%s\n", cudaGetErrorName(cudaDeviceCanAccessPeer(&can, 0, 1)));
    std::printf("enable_self=%s enable_other=%s disable_self=%s\n",
                cudaGetErrorName(cudaDeviceEnablePeerAccess(0, 0)),
                cudaGetErrorName(cudaDeviceEnablePeerAccess(1, 0)),
                cudaGetErrorName(cudaDeviceDisablePeerAccess(0)));
    cudaGetLastError();
    const int n = 64;
    int host[n], back[n];
    for (int i = 0; i < n; ++i) host[i] = i * i - 7;
    int *a, *b;
    cudaMalloc(&a, sizeof host);
    cudaMalloc(&b, sizeof host);
    cudaMemcpy(a, host, sizeof host, cudaMemcpyHostToDevice);
    cudaError_t copy = cudaMemcpyPeer(b, 0, a, 0, sizeof host);
    cudaError_t copy_other = cudaMemcpyPeer(b, 1, a, 0, sizeof host);
    cudaGetLastError();
    cudaMemcpy(back, b, sizeof back, cudaMemcpyDeviceToHost);
    long long sum = 0;
    for (int i = 0; i < n; ++i) sum += back[i];
    std::printf("peer_copy=%s peer_copy_other=%s peer_sum=%lld\n", cudaGetErrorName(copy),
                cudaGetErrorName(copy_other), sum);
    cudaFree(a);
    cudaFree(b);
    return 0;
}
