// A whole program for `python -m simulator run`: the host API a self-checking program calls
// (events, device properties, stream flags, cudaMemcpyDefault, device selection). It prints
// `name=value` lines that the test compares with the documented model; it exits non-zero when
// a call returns something other than CUDA's documented result. Builds with nvcc too.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <time.h>
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>

static int failures = 0;

static void want(const char* what, cudaError_t got, cudaError_t expected) {
    std::printf("%s=%s\n", what, cudaGetErrorName(got));
    if (got != expected) {
        std::printf("MISMATCH %s: got %s, want %s\n", what, cudaGetErrorName(got), cudaGetErrorName(expected));
        failures++;
    }
}

static void sleep_ms(int ms) {
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void CUDART_CB count_call(void* data) { *static_cast<int*>(data) += 1; }
static void CUDART_CB count_callback(cudaStream_t, cudaError_t status, void* data) {
    *static_cast<int*>(data) += status == cudaSuccess ? 10 : 100;
}

__global__ void square(float* p, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = p[i] * p[i];
}

int main() {
    // ---- events: real host time between two records
    cudaEvent_t start, stop, untimed, never;
    want("event_create", cudaEventCreate(&start), cudaSuccess);
    want("event_create_flags", cudaEventCreateWithFlags(&stop, cudaEventBlockingSync), cudaSuccess);
    want("event_create_untimed", cudaEventCreateWithFlags(&untimed, cudaEventDisableTiming), cudaSuccess);
    want("event_create_never", cudaEventCreate(&never), cudaSuccess);
    want("event_create_bad_flags", cudaEventCreateWithFlags(&never, 0x80u), cudaErrorInvalidValue);
    (void)cudaGetLastError();
    want("event_record", cudaEventRecord(start, 0), cudaSuccess);
    sleep_ms(30);
    want("event_record_stop", cudaEventRecord(stop), cudaSuccess);
    want("event_synchronize", cudaEventSynchronize(stop), cudaSuccess);
    want("event_query", cudaEventQuery(stop), cudaSuccess);
    float ms = -1.0f;
    want("elapsed", cudaEventElapsedTime(&ms, start, stop), cudaSuccess);
    std::printf("elapsed_ms=%.3f\n", ms);
    float back = 0.0f;
    want("elapsed_reversed", cudaEventElapsedTime(&back, stop, start), cudaSuccess);
    std::printf("elapsed_reversed_ms=%.3f\n", back);
    want("elapsed_unrecorded", cudaEventElapsedTime(&ms, start, never), cudaErrorInvalidResourceHandle);
    want("record_untimed", cudaEventRecord(untimed), cudaSuccess);
    want("elapsed_untimed", cudaEventElapsedTime(&ms, start, untimed), cudaErrorInvalidResourceHandle);
    want("elapsed_null_result", cudaEventElapsedTime(NULL, start, stop), cudaErrorInvalidValue);
    want("wait_event", cudaStreamWaitEvent(0, stop, 0), cudaSuccess);
    want("event_destroy", cudaEventDestroy(never), cudaSuccess);
    want("event_destroyed_record", cudaEventRecord(never), cudaErrorInvalidResourceHandle);
    want("event_destroy_twice", cudaEventDestroy(never), cudaErrorInvalidResourceHandle);
    want("last_error_after_refusal", cudaGetLastError(), cudaErrorInvalidResourceHandle);
    want("last_error_cleared", cudaGetLastError(), cudaSuccess);
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    cudaEventDestroy(untimed);

    // ---- the modelled device
    int count = 0, dev = -1;
    want("device_count", cudaGetDeviceCount(&count), cudaSuccess);
    want("set_device_0", cudaSetDevice(0), cudaSuccess);
    want("set_device_1", cudaSetDevice(1), cudaErrorInvalidDevice);
    want("get_device", cudaGetDevice(&dev), cudaSuccess);
    std::printf("device_count_value=%d\ndevice=%d\n", count, dev);
    cudaDeviceProp prop;
    std::memset(&prop, 0x5a, sizeof prop);
    want("properties", cudaGetDeviceProperties(&prop, 0), cudaSuccess);
    want("properties_device_1", cudaGetDeviceProperties(&prop, 1), cudaErrorInvalidDevice);
    (void)cudaGetLastError();
    std::printf("name=%s\n", prop.name);
    std::printf("major=%d\nminor=%d\n", prop.major, prop.minor);
    std::printf("warpSize=%d\n", prop.warpSize);
    std::printf("maxThreadsPerBlock=%d\n", prop.maxThreadsPerBlock);
    std::printf("maxThreadsDim=%d,%d,%d\n", prop.maxThreadsDim[0], prop.maxThreadsDim[1], prop.maxThreadsDim[2]);
    std::printf("maxGridSize=%d,%d,%d\n", prop.maxGridSize[0], prop.maxGridSize[1], prop.maxGridSize[2]);
    std::printf("sharedMemPerBlock=%zu\n", prop.sharedMemPerBlock);
    std::printf("sharedMemPerBlockOptin=%zu\n", prop.sharedMemPerBlockOptin);
    std::printf("multiProcessorCount=%d\n", prop.multiProcessorCount);
    std::printf("totalGlobalMem=%zu\n", prop.totalGlobalMem);
    std::printf("regsPerBlock=%d\n", prop.regsPerBlock);
    std::printf("totalConstMem=%zu\n", prop.totalConstMem);
    std::printf("maxThreadsPerMultiProcessor=%d\n", prop.maxThreadsPerMultiProcessor);
    std::printf("l2CacheSize=%d\n", prop.l2CacheSize);
    std::printf("cooperativeLaunch=%d\n", prop.cooperativeLaunch);
    // Attributes read the same model.
    int attr = 0;
    cudaDeviceGetAttribute(&attr, cudaDevAttrMultiProcessorCount, 0);
    std::printf("attr_multiProcessorCount=%d\n", attr);
    cudaDeviceGetAttribute(&attr, cudaDevAttrWarpSize, 0);
    std::printf("attr_warpSize=%d\n", attr);
    cudaDeviceGetAttribute(&attr, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0);
    std::printf("attr_sharedMemPerBlockOptin=%d\n", attr);
    cudaDeviceGetAttribute(&attr, cudaDevAttrL2CacheSize, 0);
    std::printf("attr_l2CacheSize=%d\n", attr);
    size_t free_b = 0, total_b = 0;
    want("mem_get_info", cudaMemGetInfo(&free_b, &total_b), cudaSuccess);
    std::printf("mem_total_matches=%d\nmem_free_le_total=%d\n", (int)(total_b == prop.totalGlobalMem),
                (int)(free_b <= total_b && free_b > 0));

    // ---- streams with flags
    cudaStream_t s1, s2;
    want("stream_nonblocking", cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking), cudaSuccess);
    want("stream_default_flags", cudaStreamCreateWithFlags(&s2, cudaStreamDefault), cudaSuccess);
    want("stream_bad_flags", cudaStreamCreateWithFlags(&s2, 0x10u), cudaErrorInvalidValue);
    (void)cudaGetLastError();

    // ---- cudaMemcpyDefault: the direction follows from the pointers
    const int n = 300;
    float h[n], r[n];
    for (int i = 0; i < n; i++) h[i] = (float)i - 7.0f;
    float *d = NULL, *d2 = NULL;
    cudaMalloc(&d, n * sizeof(float));
    cudaMalloc(&d2, n * sizeof(float));
    want("copy_default_h2d", cudaMemcpyAsync(d, h, n * sizeof(float), cudaMemcpyDefault, s1), cudaSuccess);
    square<<<(n + 127) / 128, 128, 0, s1>>>(d, n);
    want("copy_default_d2d", cudaMemcpy(d2, d, n * sizeof(float), cudaMemcpyDefault), cudaSuccess);
    want("stream_sync", cudaStreamSynchronize(s1), cudaSuccess);
    want("copy_default_d2h", cudaMemcpy(r, d2, n * sizeof(float), cudaMemcpyDefault), cudaSuccess);
    int wrong = 0;
    for (int i = 0; i < n; i++) wrong += r[i] != h[i] * h[i];
    std::printf("copy_default_wrong=%d\n", wrong);
    failures += wrong != 0;
    // One float past the end of a device allocation: refused like an explicit direction.
    want("copy_default_past_end", cudaMemcpy(d + 1, h, n * sizeof(float), cudaMemcpyDefault), cudaErrorInvalidValue);
    (void)cudaGetLastError();
    // ---- pitched memory: 3 rows of 100 floats
    float* pd = NULL;
    size_t pitch = 0;
    float rows_in[3][100], rows_out[3][100];
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 100; c++) rows_in[r][c] = (float)(r * 1000 + c);
    want("malloc_pitch", cudaMallocPitch(&pd, &pitch, 100 * sizeof(float), 3), cudaSuccess);
    std::printf("pitch=%zu\n", pitch);
    want("memset_2d", cudaMemset2D(pd, pitch, 0, pitch, 3), cudaSuccess);
    want("copy_2d_h2d", cudaMemcpy2D(pd, pitch, rows_in, sizeof rows_in[0], sizeof rows_in[0], 3,
                                     cudaMemcpyHostToDevice), cudaSuccess);
    square<<<3, pitch / sizeof(float)>>>(pd, (int)(3 * pitch / sizeof(float)));
    want("copy_2d_d2h", cudaMemcpy2D(rows_out, sizeof rows_out[0], pd, pitch, sizeof rows_out[0], 3,
                                     cudaMemcpyDeviceToHost), cudaSuccess);
    int wrong_2d = 0;
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 100; c++) wrong_2d += rows_out[r][c] != rows_in[r][c] * rows_in[r][c];
    std::printf("copy_2d_wrong=%d\n", wrong_2d);
    failures += wrong_2d != 0;
    want("copy_2d_bad_pitch", cudaMemcpy2D(pd, 16, rows_in, sizeof rows_in[0], sizeof rows_in[0], 3,
                                           cudaMemcpyHostToDevice), cudaErrorInvalidPitchValue);
    (void)cudaGetLastError();
    cudaFree(pd);

    // ---- host functions and callbacks run in stream order (here: at once)
    int calls = 0;
    want("host_func", cudaLaunchHostFunc(s1, count_call, &calls), cudaSuccess);
    want("stream_callback", cudaStreamAddCallback(s1, count_callback, &calls, 0), cudaSuccess);
    want("stream_sync_after_callbacks", cudaStreamSynchronize(s1), cudaSuccess);
    std::printf("callbacks_run=%d\n", calls);
    failures += calls != 11;

    // ---- occupancy, modelled from the block size and dynamic shared memory
    int blocks = -1, min_grid = -1, block = -1;
    want("occupancy_256_call", cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, square, 256, 0), cudaSuccess);
    std::printf("occupancy_256=%d\n", blocks);
    want("occupancy_96_smem_call", cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, square, 96, 40 * 1024),
         cudaSuccess);
    std::printf("occupancy_96_smem=%d\n", blocks);
    want("potential_block_call", cudaOccupancyMaxPotentialBlockSize(&min_grid, &block, square, 0, 0), cudaSuccess);
    std::printf("potential_block=%d\npotential_min_grid=%d\n", block, min_grid);

    // ---- limits are kept; the profiler calls succeed
    size_t heap = 0;
    want("set_heap_limit", cudaDeviceSetLimit(cudaLimitMallocHeapSize, 64u << 20), cudaSuccess);
    want("get_heap_limit", cudaDeviceGetLimit(&heap, cudaLimitMallocHeapSize), cudaSuccess);
    std::printf("heap_limit=%zu\n", heap);
    want("profiler_start", cudaProfilerStart(), cudaSuccess);
    want("profiler_stop", cudaProfilerStop(), cudaSuccess);
#if defined(__CUDA_RUNTIME_H__) && defined(__DRIVER_TYPES_H__)
    std::printf("runtime_guards=1\n");
#endif

    cudaFree(d);
    cudaFree(d2);
    cudaStreamDestroy(s1);
    cudaStreamDestroy(s2);
    std::printf("failures=%d\n", failures);
    return failures == 0 ? 0 : 1;
}
