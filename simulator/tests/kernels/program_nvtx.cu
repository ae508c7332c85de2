// A program annotated with NVTX ranges, as profiled code is: the annotations must build and run
// without a profiler and leave the computed values alone.
#include <cstdio>
#include <cuda_runtime.h>
#include <nvToolsExt.h>
#include <nvtx3/nvToolsExtCudaRt.h>

__global__ void saxpy(int n, float a, const float* x, float* y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

int main() {
    const int n = 1000;
    float hx[n], hy[n];
    for (int i = 0; i < n; ++i) {
        hx[i] = 0.5f * i;
        hy[i] = 3.0f;
    }
    cudaStream_t stream;
    cudaStreamCreate(&stream);
    nvtxNameCudaStreamA(stream, "work");
    nvtxNameOsThreadA(0, "main");
    nvtxEventAttributes_t attr = {};
    attr.version = NVTX_VERSION;
    attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    attr.colorType = NVTX_COLOR_ARGB;
    attr.color = 0xff00ff00u;
    attr.messageType = NVTX_MESSAGE_TYPE_ASCII;
    attr.message.ascii = "copy in";
    int pushed = nvtxRangePushEx(&attr);
    float *dx, *dy;
    cudaMalloc(&dx, n * sizeof(float));
    cudaMalloc(&dy, n * sizeof(float));
    cudaMemcpyAsync(dx, hx, n * sizeof(float), cudaMemcpyHostToDevice, stream);
    cudaMemcpyAsync(dy, hy, n * sizeof(float), cudaMemcpyHostToDevice, stream);
    int popped = nvtxRangePop();
    nvtxRangeId_t range = nvtxRangeStartA("saxpy");
    nvtxMarkA("launch");
    saxpy<<<(n + 255) / 256, 256, 0, stream>>>(n, 2.0f, dx, dy);
    nvtxRangeEnd(range);
    nvtxDomainHandle_t domain = nvtxDomainCreateA("sim");
    nvtxDomainRangePushEx(domain, &attr);
    cudaMemcpyAsync(hy, dy, n * sizeof(float), cudaMemcpyDeviceToHost, stream);
    cudaStreamSynchronize(stream);
    nvtxDomainRangePop(domain);
    nvtxDomainDestroy(domain);
    printf("pushed=%d\npopped=%d\nrange=%llu\n", pushed, popped, (unsigned long long)range);
    printf("domain_null=%d\n", domain == nullptr ? 1 : 0);
    printf("y0=%g\ny1=%g\nylast=%g\n", hy[0], hy[1], hy[n - 1]);
    printf("error=%s\n", cudaGetErrorName(cudaGetLastError()));
    cudaFree(dx);
    cudaFree(dy);
    cudaStreamDestroy(stream);
    return 0;
}
