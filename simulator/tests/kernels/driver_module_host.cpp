// Loads driver_module.cu's module (argv[1], built with nvcc -fatbin) through the driver API and
// prints key=value lines: 1 where each call behaved as CUDA's driver does.
#include <cuda.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <thread>
#include <vector>

static CUresult g_last = CUDA_SUCCESS;
#define CHECK(call)                                                                      \
    do {                                                                                 \
        g_last = (call);                                                                 \
        if (g_last != CUDA_SUCCESS) std::printf("failed: %s -> %d\n", #call, (int)g_last); \
    } while (0)

int main(int argc, char** argv) {
    if (argc < 2) {
        std::printf("usage: %s MODULE.fatbin\n", argv[0]);
        return 2;
    }
    CUdeviceptr early = 0;
    std::printf("before_init=%d\n", cuMemAlloc(&early, 16) == CUDA_ERROR_NOT_INITIALIZED);
    CHECK(cuInit(0));
    CUdevice dev;
    CHECK(cuDeviceGet(&dev, 0));
    CUctxCreateParams params = {};
    CUcontext ctx;
    CHECK(cuCtxCreate(&ctx, &params, 0, dev));

    // One module by file, another copy of it by data: each has its own __device__ variables.
    CUmodule by_file, by_data;
    std::printf("load_file=%d\n", cuModuleLoad(&by_file, argv[1]) == CUDA_SUCCESS);
    std::ifstream in(argv[1], std::ios::binary);
    std::vector<char> image((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::printf("load_data=%d\n", cuModuleLoadData(&by_data, image.data()) == CUDA_SUCCESS);

    CUfunction scale, axpy, bump, missing;
    CHECK(cuModuleGetFunction(&scale, by_data, "scale"));
    CHECK(cuModuleGetFunction(&axpy, by_data, "axpy"));
    CHECK(cuModuleGetFunction(&bump, by_data, "bump"));
    std::printf("unknown_not_found=%d\n",
                cuModuleGetFunction(&missing, by_data, "no_such_kernel") == CUDA_ERROR_NOT_FOUND);
    std::printf("variable_not_function=%d\n",
                cuModuleGetFunction(&missing, by_data, "counters") == CUDA_ERROR_NOT_FOUND);

    // kernelParams: scale 300 floats by 2.5.
    const int n = 300;
    std::vector<float> xs(n);
    for (int i = 0; i < n; i++) xs[i] = (float)i;
    CUdeviceptr dx;
    CHECK(cuMemAlloc(&dx, n * sizeof(float)));
    CHECK(cuMemcpyHtoD(dx, xs.data(), n * sizeof(float)));
    float a = 2.5f;
    int count = n;
    void* args[] = {&dx, &a, &count};
    CHECK(cuLaunchKernel(scale, (n + 127) / 128, 1, 1, 128, 1, 1, 0, nullptr, args, nullptr));
    CHECK(cuMemcpyDtoH(xs.data(), dx, n * sizeof(float)));
    int scaled = 1;
    for (int i = 0; i < n; i++) scaled &= xs[i] == 2.5f * (float)i;
    std::printf("params_launch=%d\n", scaled && g_last == CUDA_SUCCESS);

    // extra: y += 0.5 * x with the arguments packed as the kernel's parameters are laid out.
    std::vector<double> hx(n), hy(n);
    for (int i = 0; i < n; i++) {
        hx[i] = i;
        hy[i] = 1.0;
    }
    CUdeviceptr px, py;
    CHECK(cuMemAlloc(&px, n * sizeof(double)));
    CHECK(cuMemAlloc(&py, n * sizeof(double)));
    CHECK(cuMemcpyHtoD(px, hx.data(), n * sizeof(double)));
    CHECK(cuMemcpyHtoD(py, hy.data(), n * sizeof(double)));
    alignas(8) char buffer[32];
    double half = 0.5;
    std::memcpy(buffer + 0, &count, sizeof count);
    std::memcpy(buffer + 8, &half, sizeof half);
    std::memcpy(buffer + 16, &px, sizeof px);
    std::memcpy(buffer + 24, &py, sizeof py);
    size_t size = sizeof buffer;
    void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buffer, CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END};
    CHECK(cuLaunchKernel(axpy, (n + 63) / 64, 1, 1, 64, 1, 1, 0, nullptr, nullptr, extra));
    CHECK(cuMemcpyDtoH(hy.data(), py, n * sizeof(double)));
    int added = 1;
    for (int i = 0; i < n; i++) added &= hy[i] == 1.0 + 0.5 * i;
    std::printf("extra_launch=%d\n", added && g_last == CUDA_SUCCESS);
    size_t short_size = 20;  // too small for the four parameters
    void* short_extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buffer, CU_LAUNCH_PARAM_BUFFER_SIZE, &short_size,
                           CU_LAUNCH_PARAM_END};
    std::printf("short_buffer_refused=%d\n",
                cuLaunchKernel(axpy, 1, 1, 1, 64, 1, 1, 0, nullptr, nullptr, short_extra) == CUDA_ERROR_INVALID_VALUE);
    std::printf("big_block_refused=%d\n",
                cuLaunchKernel(scale, 1, 1, 1, 2048, 1, 1, 0, nullptr, args, nullptr) == CUDA_ERROR_INVALID_VALUE);

    // cuModuleGetGlobal: write the array, bump it in one module, read both modules' copies back.
    CUdeviceptr g_data, g_file;
    size_t bytes = 0, file_bytes = 0;
    CHECK(cuModuleGetGlobal(&g_data, &bytes, by_data, "counters"));
    CHECK(cuModuleGetGlobal(&g_file, &file_bytes, by_file, "counters"));
    std::printf("global_bytes=%d\n", (int)bytes);
    int start[4] = {10, 20, 30, 40};
    CHECK(cuMemcpyHtoD(g_data, start, sizeof start));
    int by = 100;
    void* bump_args[] = {&by};
    CHECK(cuLaunchKernel(bump, 1, 1, 1, 32, 1, 1, 0, nullptr, bump_args, nullptr));
    CHECK(cuCtxSynchronize());
    int got[4] = {0, 0, 0, 0}, other[4] = {-1, -1, -1, -1};
    CHECK(cuMemcpyDtoH(got, g_data, sizeof got));
    CHECK(cuMemcpyDtoH(other, g_file, sizeof other));
    std::printf("global_readback=%d\n", got[0] == 110 && got[1] == 121 && got[2] == 132 && got[3] == 143);
    CHECK(cuMemsetD32(g_data + sizeof(int), 7, 2));
    CHECK(cuMemcpyDtoH(got, g_data, sizeof got));
    std::printf("global_memset=%d\n", got[0] == 110 && got[1] == 7 && got[2] == 7 && got[3] == 143);
    std::printf("modules_separate=%d\n", other[0] == 0 && other[3] == 0 && g_file != g_data);
    CUdeviceptr none;
    std::printf("unknown_global_not_found=%d\n",
                cuModuleGetGlobal(&none, &bytes, by_data, "no_such_variable") == CUDA_ERROR_NOT_FOUND);

    // Images that are not modules.
    CUmodule bad;
    std::vector<char> damaged(image.begin(), image.begin() + 64);
    damaged[40] = 'X';  // the library's ELF magic
    std::printf("damaged_invalid_image=%d\n", cuModuleLoadData(&bad, damaged.data()) == CUDA_ERROR_INVALID_IMAGE);
    std::printf("text_invalid_image=%d\n", cuModuleLoadData(&bad, "not a module") == CUDA_ERROR_INVALID_IMAGE);
    const char* ptx = "//\n// Generated by NVIDIA NVVM Compiler\n.version 8.0\n.target sm_80\n";
    std::printf("ptx_not_supported=%d\n", cuModuleLoadData(&bad, ptx) == CUDA_ERROR_NOT_SUPPORTED);

    // Contexts: popped here, pushed and popped on another thread, current per thread.
    CUcontext popped = nullptr, current = nullptr;
    CHECK(cuCtxPopCurrent(&popped));
    CHECK(cuCtxGetCurrent(&current));
    std::printf("popped_main=%d\n", popped == ctx && current == nullptr);
    int thread_ok = 0;
    std::thread worker([&] {
        CUcontext mine = nullptr, seen = nullptr, back = nullptr, after = ctx;
        cuCtxGetCurrent(&mine);
        cuCtxPushCurrent(ctx);
        cuCtxGetCurrent(&seen);
        float three = 3.0f;
        void* more[] = {&dx, &three, &count};
        CUresult launched = cuLaunchKernel(scale, (n + 127) / 128, 1, 1, 128, 1, 1, 0, nullptr, more, nullptr);
        CUresult synced = cuCtxSynchronize();
        cuCtxPopCurrent(&back);
        cuCtxGetCurrent(&after);
        thread_ok = mine == nullptr && seen == ctx && launched == CUDA_SUCCESS && synced == CUDA_SUCCESS &&
                    back == ctx && after == nullptr;
    });
    worker.join();
    std::printf("thread_push_pop=%d\n", thread_ok);
    std::printf("pop_empty_invalid=%d\n", cuCtxPopCurrent(&popped) == CUDA_ERROR_INVALID_CONTEXT);
    CHECK(cuCtxPushCurrent(ctx));
    CHECK(cuMemcpyDtoH(xs.data(), dx, n * sizeof(float)));
    std::printf("thread_launch_result=%d\n", xs[7] == 7.0f * 2.5f * 3.0f);

    CHECK(cuModuleUnload(by_file));
    std::printf("unloaded_handle_invalid=%d\n", cuModuleGetFunction(&missing, by_file, "scale") == CUDA_ERROR_INVALID_HANDLE);
    CHECK(cuMemFree(dx));
    CHECK(cuMemFree(px));
    CHECK(cuMemFree(py));
    CHECK(cuModuleUnload(by_data));
    CHECK(cuCtxDestroy(ctx));
    std::printf("destroyed_context_invalid=%d\n", cuCtxPushCurrent(ctx) == CUDA_ERROR_INVALID_CONTEXT);
    std::printf("done=1\n");
    return 0;
}
