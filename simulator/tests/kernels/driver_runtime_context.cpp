// The runtime's primary contexts seen through the driver API without cuInit, as The CUDA
// Handbook's peer2peerMemcpyDrv uses them: cudaSetDevice initialises the driver and makes the
// device's primary context current; a pushed context pops back to it. Prints NAME=1 for each
// call that behaves as CUDA's does. Run with two devices.
#include <cstdio>

#include <cuda.h>
#include <cuda_runtime.h>

int main() {
    CUcontext c = nullptr;
    std::printf("before_runtime=%d\n", cuCtxGetCurrent(&c) == CUDA_ERROR_NOT_INITIALIZED);
    CUcontext ctx0 = nullptr, ctx1 = nullptr;
    cudaSetDevice(0);
    std::printf("primary_current=%d\n", cuCtxGetCurrent(&ctx0) == CUDA_SUCCESS && ctx0 != nullptr);
    cudaSetDevice(1);
    std::printf("set_device_replaces=%d\n", cuCtxGetCurrent(&ctx1) == CUDA_SUCCESS && ctx1 != nullptr && ctx1 != ctx0);
    CUdevice dev = -1;
    std::printf("context_device=%d\n", cuCtxGetDevice(&dev) == CUDA_SUCCESS && dev == 1);
    CUcontext retained = nullptr;
    std::printf("retain_same=%d\n", cuDevicePrimaryCtxRetain(&retained, 0) == CUDA_SUCCESS && retained == ctx0);
    cuDevicePrimaryCtxRelease(0);
    int device = -1;
    const bool pushed = cuCtxPushCurrent(ctx0) == CUDA_SUCCESS && cudaGetDevice(&device) == cudaSuccess && device == 0;
    CUcontext popped = nullptr;
    const bool back = cuCtxPopCurrent(&popped) == CUDA_SUCCESS && popped == ctx0 &&
                      cuCtxGetCurrent(&c) == CUDA_SUCCESS && c == ctx1 && cudaGetDevice(&device) == cudaSuccess &&
                      device == 1;
    std::printf("push_pop_back_to_primary=%d\n", pushed && back);
    // a copy from device 1 to device 0 through a host buffer, each side in its own context
    int *d0 = nullptr, *d1 = nullptr, host[4] = {1, 2, 3, 4}, out[4] = {};
    cudaSetDevice(0);
    cudaMalloc(&d0, sizeof host);
    cudaSetDevice(1);
    cudaMalloc(&d1, sizeof host);
    cudaMemcpy(d1, host, sizeof host, cudaMemcpyHostToDevice);
    int staged[4] = {};
    CUevent read = nullptr;
    bool copied = cuCtxPushCurrent(ctx1) == CUDA_SUCCESS && cuEventCreate(&read, 0) == CUDA_SUCCESS &&
                  cuMemcpyDtoHAsync(staged, (CUdeviceptr)d1, sizeof staged, nullptr) == CUDA_SUCCESS &&
                  cuEventRecord(read, nullptr) == CUDA_SUCCESS && cuCtxPopCurrent(&popped) == CUDA_SUCCESS &&
                  cuCtxPushCurrent(ctx0) == CUDA_SUCCESS && cuStreamWaitEvent(nullptr, read, 0) == CUDA_SUCCESS &&
                  cuMemcpyHtoDAsync((CUdeviceptr)d0, staged, sizeof staged, nullptr) == CUDA_SUCCESS &&
                  cuCtxSynchronize() == CUDA_SUCCESS && cuCtxPopCurrent(&popped) == CUDA_SUCCESS;
    cudaMemcpy(out, d0, sizeof out, cudaMemcpyDeviceToHost);
    for (int i = 0; i < 4; i++) copied = copied && out[i] == host[i];
    std::printf("staged_copy=%d\n", copied);
    std::printf("queries_ready=%d\n", cuEventQuery(read) == CUDA_SUCCESS && cuStreamQuery(nullptr) == CUDA_SUCCESS);
    std::printf("unbind_leaves_none=%d\n",
                cuCtxSetCurrent(nullptr) == CUDA_SUCCESS && cuCtxGetCurrent(&c) == CUDA_SUCCESS && c == nullptr);
    std::printf("done=1\n");
    return 0;
}
