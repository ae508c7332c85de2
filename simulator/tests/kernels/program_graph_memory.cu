// Graph memory nodes, child graph nodes and cuBLAS calls in a stream capture, run unmodified.
// Prints key=value lines; simulator/tests/test_graph_memory.py computes the expected values
// independently (numpy, and CUDA's documented enum values and error rules).
// With "use_after_free ..." it runs only that case below instead: one program for both, so that
// each mode builds it once.
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>

static const int N = 256;
static const size_t BYTES = N * sizeof(float);

__global__ void square(const float* in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] * in[i];
}

__global__ void negate(const float* in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = -in[i];
}

__global__ void affine(float* x, float a, float b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = a * x[i] + b;
}

static unsigned long long footprint(cudaGraphMemAttributeType attr) {
    unsigned long long v = 0;
    cudaDeviceGetGraphMemAttribute(0, attr, &v);
    return v;
}

static double sum(const float* v) {
    double s = 0;
    for (int i = 0; i < N; ++i) s += v[i];
    return s;
}

static double sum16(const float* v) {
    double s = 0;
    for (int i = 0; i < 16; ++i) s += v[i];
    return s;
}

static cudaKernelNodeParams kernel_params(void* func, void** args) {
    cudaKernelNodeParams p = {};
    p.func = func;
    p.gridDim = dim3(N / 64);
    p.blockDim = dim3(64);
    p.kernelParams = args;
    return p;
}

static void alloc_params(cudaMemAllocNodeParams* p, size_t bytes) {
    *p = cudaMemAllocNodeParams{};
    p->bytesize = bytes;
    p->poolProps.allocType = cudaMemAllocationTypePinned;
    p->poolProps.location.type = cudaMemLocationTypeDevice;
    p->poolProps.location.id = 0;
}

// in -> a; b = a * a; free a; c (may reuse a's address) = -b; c -> out; free b, c.
static void explicit_graph(const float* host_in, float* host_out) {
    int n = N;
    cudaGraph_t g;
    cudaGraphCreate(&g, 0);
    cudaMemAllocNodeParams p;
    alloc_params(&p, BYTES);
    cudaGraphNode_t alloc_a, alloc_b, alloc_c, copy_in, sq, neg, copy_out, free_a, free_b, free_c;
    cudaGraphAddMemAllocNode(&alloc_a, g, nullptr, 0, &p);
    float* a = (float*)p.dptr;
    cudaGraphAddMemAllocNode(&alloc_b, g, &alloc_a, 1, &p);
    float* b = (float*)p.dptr;
    cudaGraphAddMemcpyNode1D(&copy_in, g, &alloc_b, 1, a, host_in, BYTES, cudaMemcpyHostToDevice);
    void* sq_args[] = {&a, &b, &n};
    cudaKernelNodeParams kp = kernel_params((void*)square, sq_args);
    cudaGraphAddKernelNode(&sq, g, &copy_in, 1, &kp);
    cudaGraphAddMemFreeNode(&free_a, g, &sq, 1, a);
    cudaGraphAddMemAllocNode(&alloc_c, g, &free_a, 1, &p);
    float* c = (float*)p.dptr;
    std::printf("reuse=%d distinct_ab=%d\n", c == a, a != b);
    void* neg_args[] = {&b, &c, &n};
    kp = kernel_params((void*)negate, neg_args);
    cudaGraphAddKernelNode(&neg, g, &alloc_c, 1, &kp);
    cudaGraphAddMemcpyNode1D(&copy_out, g, &neg, 1, host_out, c, BYTES, cudaMemcpyDeviceToHost);
    cudaGraphAddMemFreeNode(&free_b, g, &neg, 1, b);
    cudaGraphAddMemFreeNode(&free_c, g, &copy_out, 1, c);

    cudaGraphNodeType ta, tf;
    cudaGraphNodeGetType(alloc_a, &ta);
    cudaGraphNodeGetType(free_a, &tf);
    cudaMemAllocNodeParams got;
    cudaGraphMemAllocNodeGetParams(alloc_b, &got);
    void* freed = nullptr;
    cudaGraphMemFreeNodeGetParams(free_b, &freed);
    std::printf("alloc_type=%d free_type=%d params_bytes=%zu params_dptr_ok=%d free_dptr_ok=%d\n", (int)ta, (int)tf,
                got.bytesize, got.dptr == b, freed == b);
    cudaGraphNode_t bad;
    float host_word = 0;
    std::printf("free_host_pointer=%s\n", cudaGetErrorName(cudaGraphAddMemFreeNode(&bad, g, &copy_out, 1, &host_word)));
    std::printf("free_twice=%s\n", cudaGetErrorName(cudaGraphAddMemFreeNode(&bad, g, &copy_out, 1, b)));
    cudaGetLastError();

    cudaGraphExec_t x;
    cudaGraphInstantiate(&x, g, 0);
    cudaGraphDestroy(g);
    std::printf("footprint_before_launch=%llu\n", footprint(cudaGraphMemAttrUsedMemCurrent));
    cudaError_t e1 = cudaGraphLaunch(x, 0);
    cudaError_t e2 = cudaGraphLaunch(x, 0);  // everything was freed in the graph: a relaunch is fine
    std::printf("explicit_launches=%s,%s explicit_sum=%.3f explicit_last=%g\n", cudaGetErrorName(e1),
                cudaGetErrorName(e2), sum(host_out), host_out[N - 1]);
    std::printf("footprint_used=%llu footprint_reserved=%llu footprint_high=%llu\n",
                footprint(cudaGraphMemAttrUsedMemCurrent), footprint(cudaGraphMemAttrReservedMemCurrent),
                footprint(cudaGraphMemAttrUsedMemHigh));
    cudaDeviceGraphMemTrim(0);
    std::printf("footprint_after_trim=%llu high_after_trim=%llu\n", footprint(cudaGraphMemAttrReservedMemCurrent),
                footprint(cudaGraphMemAttrReservedMemHigh));
    unsigned long long zero = 0, one = 1;
    cudaDeviceSetGraphMemAttribute(0, cudaGraphMemAttrUsedMemHigh, &zero);
    std::printf("high_after_reset=%llu\n", footprint(cudaGraphMemAttrUsedMemHigh));
    std::printf("set_current=%s set_high_nonzero=%s other_device=%s\n",
                cudaGetErrorName(cudaDeviceSetGraphMemAttribute(0, cudaGraphMemAttrUsedMemCurrent, &zero)),
                cudaGetErrorName(cudaDeviceSetGraphMemAttribute(0, cudaGraphMemAttrUsedMemHigh, &one)),
                cudaGetErrorName(cudaDeviceGetGraphMemAttribute(1, cudaGraphMemAttrUsedMemCurrent, &zero)));
    cudaGetLastError();
    cudaGraphExecDestroy(x);
}

// An allocation the graph does not free: valid after the launch until cudaFree; a relaunch
// before that fails, unless the graph was instantiated to free it on launch.
static void unfreed_graph(const float* host_in) {
    cudaGraph_t g;
    cudaGraphCreate(&g, 0);
    cudaMemAllocNodeParams p;
    alloc_params(&p, BYTES);
    cudaGraphNode_t alloc, copy;
    cudaGraphAddMemAllocNode(&alloc, g, nullptr, 0, &p);
    float* d = (float*)p.dptr;
    cudaGraphAddMemcpyNode1D(&copy, g, &alloc, 1, d, host_in, BYTES, cudaMemcpyHostToDevice);
    cudaGraphExec_t x, x_auto;
    cudaGraphInstantiate(&x, g, 0);
    cudaError_t first = cudaGraphLaunch(x, 0);
    affine<<<N / 64, 64>>>(d, 2.0f, 1.0f, N);  // stream work after the launch may use it
    float out[N];
    cudaMemcpy(out, d, BYTES, cudaMemcpyDeviceToHost);
    std::printf("unfreed_first=%s unfreed_sum=%.3f\n", cudaGetErrorName(first), sum(out));
    std::printf("unfreed_footprint=%llu\n", footprint(cudaGraphMemAttrUsedMemCurrent));
    cudaError_t again = cudaGraphLaunch(x, 0);
    cudaGetLastError();
    cudaError_t freed = cudaFree(d);
    cudaDeviceGraphMemTrim(0);
    std::printf("unfreed_relaunch=%s free=%s trimmed=%llu\n", cudaGetErrorName(again), cudaGetErrorName(freed),
                footprint(cudaGraphMemAttrUsedMemCurrent));
    cudaError_t after_free = cudaGraphLaunch(x, 0);
    cudaError_t free_async = cudaFreeAsync(d, 0);
    cudaGraphExecDestroy(x);
    cudaGraphInstantiate(&x_auto, g, cudaGraphInstantiateFlagAutoFreeOnLaunch);
    cudaError_t auto1 = cudaGraphLaunch(x_auto, 0);
    cudaError_t auto2 = cudaGraphLaunch(x_auto, 0);
    std::printf("relaunch_after_free=%s free_async=%s auto_free=%s,%s\n", cudaGetErrorName(after_free),
                cudaGetErrorName(free_async), cudaGetErrorName(auto1), cudaGetErrorName(auto2));
    cudaFree(d);
    cudaGraphExecDestroy(x_auto);
    cudaGraphDestroy(g);
}

// cudaMallocAsync / cudaFreeAsync in a stream capture become memory nodes.
static void captured_graph(const float* host_in, float* host_out) {
    cudaStream_t s;
    cudaStreamCreate(&s);
    float *a, *b;
    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
    cudaMallocAsync(&a, BYTES, s);
    cudaMallocAsync(&b, BYTES, s);
    cudaMemcpyAsync(a, host_in, BYTES, cudaMemcpyHostToDevice, s);
    square<<<N / 64, 64, 0, s>>>(a, b, N);
    cudaFreeAsync(a, s);
    cudaMemcpyAsync(host_out, b, BYTES, cudaMemcpyDeviceToHost, s);
    cudaFreeAsync(b, s);
    float* none = b;
    cudaError_t zero = cudaMallocAsync(&none, 0, s);  // no allocation and no node, as outside a capture
    std::printf("zero_alloc=%s zero_null=%d\n", cudaGetErrorName(zero), none == nullptr);
    cudaGraph_t g;
    cudaStreamEndCapture(s, &g);
    size_t count = 0;
    cudaGraphGetNodes(g, nullptr, &count);
    cudaGraphNode_t nodes[16];
    cudaGraphGetNodes(g, nodes, &count);
    std::printf("captured_types=");
    for (size_t i = 0; i < count; ++i) {
        cudaGraphNodeType t;
        cudaGraphNodeGetType(nodes[i], &t);
        std::printf("%s%d", i ? "," : "", (int)t);
    }
    std::printf("\n");
    cudaGraphExec_t x;
    cudaGraphInstantiate(&x, g, 0);
    cudaError_t e1 = cudaGraphLaunch(x, s);
    cudaError_t e2 = cudaGraphLaunch(x, s);
    cudaStreamSynchronize(s);
    std::printf("captured_launches=%s,%s captured_sum=%.3f\n", cudaGetErrorName(e1), cudaGetErrorName(e2),
                sum(host_out));
    cudaGraphExecDestroy(x);
    cudaGraphDestroy(g);
    cudaStreamDestroy(s);
}

// parent: x = 2x + 1; child (x = 3x; x = x - 4); x = 0.5x. Then the same with a cuBLAS call.
static void child_graphs(const float* host_in) {
    float* d;
    cudaMalloc(&d, BYTES);
    cudaMemcpy(d, host_in, BYTES, cudaMemcpyHostToDevice);
    int n = N;
    float a1 = 2, b1 = 1, a2 = 3, b2 = 0, a3 = 1, b3 = -4, a4 = 0.5f, b4 = 0;
    void* args1[] = {&d, &a1, &b1, &n};
    void* args2[] = {&d, &a2, &b2, &n};
    void* args3[] = {&d, &a3, &b3, &n};
    void* args4[] = {&d, &a4, &b4, &n};
    cudaGraph_t child, parent;
    cudaGraphCreate(&child, 0);
    cudaGraphCreate(&parent, 0);
    cudaGraphNode_t c1, c2, p1, p2, p3;
    cudaKernelNodeParams kp = kernel_params((void*)affine, args2);
    cudaGraphAddKernelNode(&c1, child, nullptr, 0, &kp);
    kp = kernel_params((void*)affine, args3);
    cudaGraphAddKernelNode(&c2, child, &c1, 1, &kp);
    kp = kernel_params((void*)affine, args1);
    cudaGraphAddKernelNode(&p1, parent, nullptr, 0, &kp);
    cudaGraphAddChildGraphNode(&p2, parent, &p1, 1, child);
    kp = kernel_params((void*)affine, args4);
    cudaGraphAddKernelNode(&p3, parent, &p2, 1, &kp);
    cudaGraphDestroy(child);  // the node holds its own copy
    cudaGraph_t embedded = nullptr;
    cudaGraphNodeType t;
    cudaGraphNodeGetType(p2, &t);
    cudaGraphChildGraphNodeGetGraph(p2, &embedded);
    size_t count = 0;
    cudaGraphGetNodes(embedded, nullptr, &count);
    std::printf("child_type=%d child_nodes=%zu destroy_embedded=%s\n", (int)t, count,
                cudaGetErrorName(cudaGraphDestroy(embedded)));
    cudaGraph_t with_memory;
    cudaGraphCreate(&with_memory, 0);
    cudaMemAllocNodeParams p;
    alloc_params(&p, BYTES);
    cudaGraphNode_t alloc, bad;
    cudaGraphAddMemAllocNode(&alloc, with_memory, nullptr, 0, &p);
    std::printf("child_with_memory=%s\n",
                cudaGetErrorName(cudaGraphAddChildGraphNode(&bad, parent, nullptr, 0, with_memory)));
    cudaGraph_t copy = nullptr;
    std::printf("clone_with_memory=%s\n", cudaGetErrorName(cudaGraphClone(&copy, with_memory)));
    cudaGetLastError();
    cudaGraphDestroy(with_memory);
    cudaGraphClone(&copy, parent);  // the clone replays the same work as the parent
    cudaGraphNode_t p2_copy = nullptr;
    cudaGraphNodeType copy_type;
    cudaGraphNodeFindInClone(&p2_copy, p2, copy);
    cudaGraphNodeGetType(p2_copy, &copy_type);
    std::printf("clone_found=%d clone_node_type=%d\n", p2_copy != nullptr && p2_copy != p2, (int)copy_type);
    cudaGraphExec_t x;
    cudaGraphInstantiate(&x, parent, 0);
    cudaGraphLaunch(x, 0);
    cudaGraphLaunch(x, 0);
    float out[N];
    cudaMemcpy(out, d, BYTES, cudaMemcpyDeviceToHost);
    std::printf("child_sum=%.3f child_last=%g\n", sum(out), out[N - 1]);
    cudaGraphExecDestroy(x);
    cudaGraphDestroy(parent);
    cudaGraphInstantiate(&x, copy, 0);  // a third application, from the clone
    cudaGraphLaunch(x, 0);
    cudaMemcpy(out, d, BYTES, cudaMemcpyDeviceToHost);
    std::printf("clone_sum=%.3f\n", sum(out));
    cudaGraphExecDestroy(x);
    cudaGraphDestroy(copy);

    // A cuBLAS call captured into a graph runs at each replay, not during the capture.
    cublasHandle_t h;
    cublasCreate(&h);
    cudaStream_t s;
    cudaStreamCreate(&s);
    cublasSetStream(h, s);
    float* y;
    cudaMalloc(&y, BYTES);
    cudaMemcpy(y, host_in, BYTES, cudaMemcpyHostToDevice);
    float alpha = 5.0f;
    cudaGraph_t lib;
    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
    cublasStatus_t st = cublasSaxpy(h, N, &alpha, d, 1, y, 1);  // y += 5 d
    cudaStreamEndCapture(s, &lib);
    alpha = 100.0f;  // a host scalar is read at the call: the capture keeps 5
    cudaMemcpy(out, y, BYTES, cudaMemcpyDeviceToHost);
    std::printf("saxpy_status=%d saxpy_during_capture_sum=%.3f\n", (int)st, sum(out));
    cudaGraph_t outer;
    cudaGraphCreate(&outer, 0);
    cudaGraphNode_t o1, o2;
    float one = 1.0f, none = 0.0f;
    void* args5[] = {&y, &one, &one, &n};  // y += 1
    kp = kernel_params((void*)affine, args5);
    cudaGraphAddKernelNode(&o1, outer, nullptr, 0, &kp);
    cudaGraphAddChildGraphNode(&o2, outer, &o1, 1, lib);
    (void)none;
    cudaGraphExec_t ox;
    cudaGraphInstantiate(&ox, outer, 0);
    cudaGraphLaunch(ox, s);
    cudaGraphLaunch(ox, s);
    cudaStreamSynchronize(s);
    cudaMemcpy(out, y, BYTES, cudaMemcpyDeviceToHost);
    std::printf("saxpy_graph_sum=%.3f saxpy_graph_last=%g\n", sum(out), out[N - 1]);
    cudaGraphExecDestroy(ox);
    cudaGraphDestroy(outer);
    cudaGraphDestroy(lib);

    // cublasLtMatmul in a capture: D (4 x 4, column-major) = A * B, computed only at the replay.
    const int m4 = 4;
    float ha[16], hb[16], hd[16];
    for (int i = 0; i < 16; ++i) {
        ha[i] = (float)(i % 5) - 2.0f;
        hb[i] = (float)(i % 3) + 0.5f;
    }
    float *la, *lb, *ld;
    cudaMalloc(&la, sizeof ha);
    cudaMalloc(&lb, sizeof hb);
    cudaMalloc(&ld, sizeof hd);
    cudaMemcpy(la, ha, sizeof ha, cudaMemcpyHostToDevice);
    cudaMemcpy(lb, hb, sizeof hb, cudaMemcpyHostToDevice);
    cudaMemset(ld, 0, sizeof hd);
    cublasLtHandle_t lt;
    cublasLtCreate(&lt);
    cublasLtMatmulDesc_t desc;
    cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F);
    cublasLtMatrixLayout_t lay;
    cublasLtMatrixLayoutCreate(&lay, CUDA_R_32F, m4, m4, m4);
    float one_f = 1.0f, zero_f = 0.0f;
    cudaGraph_t ltg;
    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
    int lt_status = (int)cublasLtMatmul(lt, desc, &one_f, la, lay, lb, lay, &zero_f, ld, lay, ld, lay, nullptr,
                                        nullptr, 0, s);
    cudaStreamEndCapture(s, &ltg);
    cudaMemcpy(hd, ld, sizeof hd, cudaMemcpyDeviceToHost);
    std::printf("lt_status=%d lt_during_capture=%g\n", lt_status, sum16(hd));
    cudaGraphExec_t ltx;
    cudaGraphInstantiate(&ltx, ltg, 0);
    cudaGraphLaunch(ltx, s);
    cudaMemcpy(hd, ld, sizeof hd, cudaMemcpyDeviceToHost);
    std::printf("lt_d=");
    for (int i = 0; i < 16; ++i) std::printf("%s%g", i ? "," : "", hd[i]);
    std::printf("\n");
    cudaGraphExecDestroy(ltx);
    cudaGraphDestroy(ltg);
    cublasLtMatrixLayoutDestroy(lay);
    cublasLtMatmulDescDestroy(desc);
    cublasLtDestroy(lt);
    cudaFree(la);
    cudaFree(lb);
    cudaFree(ld);
    cublasDestroy(h);
    cudaStreamDestroy(s);
    cudaFree(y);
    cudaFree(d);
}

// ---- "use_after_free": a kernel that writes a graph allocation after it was freed (planted when
// run with the argument "planted"), and its fixed twin that writes before the free. memcheck must
// name the kernel's line in the planted run and stay quiet in the fixed one (test_graph_memory.py).
__global__ void fill(float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = 1.0f;  // PLANT
}

static int use_after_free_main(int argc, char** argv) {
    const bool planted = argc > 1 && std::strcmp(argv[1], "planted") == 0;
    const int n = 128;
    cudaGraph_t g;
    cudaGraphCreate(&g, 0);
    cudaMemAllocNodeParams p = {};
    p.bytesize = n * sizeof(float);
    p.poolProps.allocType = cudaMemAllocationTypePinned;
    p.poolProps.location.type = cudaMemLocationTypeDevice;
    p.poolProps.location.id = 0;
    cudaGraphNode_t alloc;
    cudaGraphAddMemAllocNode(&alloc, g, nullptr, 0, &p);
    float* d = (float*)p.dptr;
    cudaGraphExec_t x;
    cudaGraphInstantiate(&x, g, 0);
    cudaGraphLaunch(x, 0);  // the graph does not free d: it stays valid until cudaFree
    if (!planted) fill<<<1, n>>>(d, n);
    cudaFree(d);
    if (planted) fill<<<1, n>>>(d, n);
    cudaError_t e = cudaDeviceSynchronize();
    std::printf("status=%s\n", cudaGetErrorName(e));
    cudaGraphExecDestroy(x);
    cudaGraphDestroy(g);
    return 0;
}

int main(int argc, char** argv) {
    if (argc > 1 && std::strcmp(argv[1], "use_after_free") == 0) return use_after_free_main(argc - 1, argv + 1);
    float in[N], out[N];
    for (int i = 0; i < N; ++i) in[i] = (float)(i % 17) - 8.0f;
    explicit_graph(in, out);
    unfreed_graph(in);
    captured_graph(in, out);
    child_graphs(in);
    std::printf("last_error=%s\n", cudaGetErrorName(cudaGetLastError()));
    std::printf("done=1\n");
    return 0;
}
