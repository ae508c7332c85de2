// A driver API module (built with nvcc -fatbin; driver_module_host.cpp loads it): kernels with
// parameters of several sizes and alignments, and a __device__ array the host reaches through
// cuModuleGetGlobal.
__device__ int counters[4];

extern "C" __global__ void scale(float* x, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= a;
}

// int, then double: the packed ``extra`` buffer puts the double at offset 8, not 4.
extern "C" __global__ void axpy(int n, double a, const double* x, double* y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] += a * x[i];
}

extern "C" __global__ void bump(int by) {
    if (threadIdx.x < 4) counters[threadIdx.x] += by + (int)threadIdx.x;
}
