// What Rodinia's CUDA programs need beyond the other legacy names: symbols named by a string
// (kmeans), the driver API's CUDA_SUCCESS from <cuda.h> (kmeans), <cuda_gl_interop.h> included
// but unused (hybridsort), every error name an old helper_cuda.h switches over (hybridsort), a
// device that can overlap copies with kernels (huffman), and a file-scope constant defined
// differently for each __CUDA_ARCH__ pass (dwt2d). Not for nvcc 13 (string symbols are gone).
#include <cuda.h>
#include <cuda_gl_interop.h>
#include <cstdio>

#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 200)
const int SHM_LIMIT = 48 * 1024;
#else
const int SHM_LIMIT = 16 * 1024;
#endif

__constant__ float c_scale[4];
__device__ int d_hits;

__global__ void scale(const float* in, float* out, int n, int* limit) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = in[i] * c_scale[i % 4];
        atomicAdd(&d_hits, 1);
    }
    if (i == 0) *limit = SHM_LIMIT;
}

int main() {
    const int n = 40;
    float in[n], out[n];
    for (int i = 0; i < n; ++i) in[i] = (float)(i + 1);
    const float factors[4] = {0.5f, 2.0f, -3.0f, 10.0f};
    if (cudaMemcpyToSymbol("c_scale", factors, sizeof(factors), 0, cudaMemcpyHostToDevice) != CUDA_SUCCESS)
        return 3;
    int zero = 0;
    cudaMemcpyToSymbol("d_hits", &zero, sizeof(int));
    float *d_in, *d_out;
    int* d_limit;
    cudaMalloc((void**)&d_in, sizeof(in));
    cudaMalloc((void**)&d_out, sizeof(out));
    cudaMalloc((void**)&d_limit, sizeof(int));
    cudaMemcpy(d_in, in, sizeof(in), cudaMemcpyHostToDevice);
    scale<<<3, 16>>>(d_in, d_out, n, d_limit);
    cudaMemcpy(out, d_out, sizeof(out), cudaMemcpyDeviceToHost);
    int hits = -1, device_limit = -1;
    cudaMemcpyFromSymbol(&hits, "d_hits", sizeof(int), 0, cudaMemcpyDeviceToHost);
    cudaMemcpy(&device_limit, d_limit, sizeof(int), cudaMemcpyDeviceToHost);
    for (int i = 0; i < n; ++i) std::printf("out%d=%g\n", i, out[i]);
    std::printf("hits=%d\n", hits);
    // The second factor alone, through an offset.
    float second = 0.0f;
    cudaMemcpyFromSymbol(&second, "c_scale", sizeof(float), sizeof(float));
    std::printf("second=%g\n", second);
    std::printf("unknown=%d\n", (int)cudaMemcpyToSymbol("no_such_symbol", factors, 4));
    std::printf("too_long=%d\n", (int)cudaMemcpyToSymbol("c_scale", factors, sizeof(factors), 4));
    cudaGetLastError();
    std::printf("host_limit=%d\n", SHM_LIMIT);
    std::printf("device_limit=%d\n", device_limit);
    cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, 0);
    int overlap = -1;
    cudaDeviceGetAttribute(&overlap, cudaDevAttrGpuOverlap, 0);
    std::printf("attr_overlap=%d\n", overlap);
    std::printf("asyncEngineCount=%d\n", prop.asyncEngineCount);
    std::printf("map_failed=%d %s\n", (int)cudaErrorMapBufferObjectFailed,
                cudaGetErrorName(cudaErrorMapBufferObjectFailed));
    std::printf("api_base=%d\n", (int)cudaErrorApiFailureBase);
    // The driver API's device queries (Rodinia's mummergpu makes them before the runtime calls).
    int dcount = -1, dmajor = -1, dminor = -1;
    CUdevice dev = -1;
    size_t dfree = 0, dtotal = 0;
    std::printf("cu_init=%d\n", (int)cuInit(0));
    std::printf("cu_count=%d\n", (cuDeviceGetCount(&dcount) == CUDA_SUCCESS) ? dcount : -1);
    std::printf("cu_get=%d\n", (cuDeviceGet(&dev, 0) == CUDA_SUCCESS) ? dev : -1);
    std::printf("cu_get_bad=%d\n", (int)cuDeviceGet(&dev, 5));
    cuDeviceComputeCapability(&dmajor, &dminor, 0);
    std::printf("cu_cc=%d.%d\n", dmajor, dminor);
    std::printf("cu_cc_matches=%d\n", dmajor == prop.major && dminor == prop.minor);
    // cuDeviceGetAttribute (cuda-samples' helper_cuda_drvapi.h) answers as the runtime does.
    int sms = -1, ccmajor = -1, optin = -1, warp = -1, runtime_sms = -2;
    cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
    cuDeviceGetAttribute(&ccmajor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
    cuDeviceGetAttribute(&optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, dev);
    cuDeviceGetAttribute(&warp, CU_DEVICE_ATTRIBUTE_WARP_SIZE, dev);
    cudaDeviceGetAttribute(&runtime_sms, cudaDevAttrMultiProcessorCount, 0);
    std::printf("cu_attr_sms=%d %d\n", sms, sms == prop.multiProcessorCount && sms == runtime_sms);
    std::printf("cu_attr_cc=%d %d\n", ccmajor, ccmajor == prop.major);
    std::printf("cu_attr_optin=%d\n", optin == (int)prop.sharedMemPerBlockOptin);
    std::printf("cu_attr_warp=%d\n", warp);
    // Virtual memory management is offered (driver_vmm.cpp); compressible memory is not: 0, not an error.
    int vmm = -1, compression = -1;
    CUresult vmm_status = cuDeviceGetAttribute(&vmm, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, dev);
    cuDeviceGetAttribute(&compression, CU_DEVICE_ATTRIBUTE_GENERIC_COMPRESSION_SUPPORTED, dev);
    std::printf("cu_attr_vmm=%d %d %d\n", (int)vmm_status, vmm, compression);
    std::printf("cu_attr_bad_device=%d\n", (int)cuDeviceGetAttribute(&warp, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 7));
    std::printf("cu_attr_bad_attr=%d\n", (int)cuDeviceGetAttribute(&warp, (CUdevice_attribute)100000, dev));
    std::printf("cu_attr_null=%d\n", (int)cuDeviceGetAttribute(nullptr, CU_DEVICE_ATTRIBUTE_WARP_SIZE, dev));
    std::printf("cu_attr_last=%d\n", (int)cudaGetLastError());  // the driver calls leave it alone
    std::printf("cu_mem=%d\n", (int)cuMemGetInfo(&dfree, &dtotal));
    std::printf("cu_mem_sane=%d\n", dtotal == prop.totalGlobalMem && dfree > 0 && dfree <= dtotal);
#ifdef VERIFY
    std::printf("verify=%d\n", VERIFY + 1);  // -D VERIFY=41 on the command line, as a Makefile's
#endif
    cudaFree(d_in);
    cudaFree(d_out);
    cudaFree(d_limit);
    return 0;
}
