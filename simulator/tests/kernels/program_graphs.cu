// Launch forms and CUDA graphs, run unmodified: cudaLaunchKernel (by address and typed),
// cudaLaunchKernelEx with attributes, cudaFuncGetAttributes, stream capture, explicitly built
// graphs, exec updates. Prints key=value lines; simulator/tests/test_graphs.py computes the
// expected values independently.
// With "oob ..." it runs only that case below instead: one program for both, so that each
// mode builds it once.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>

__global__ void affine(float* x, float a, float b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = a * x[i] + b;
}

__global__ void affine_at(float* x, float a, float b, int lo, int count) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < count) x[lo + i] = a * x[lo + i] + b;
}

__global__ void iota_add(float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += (float)i;
}

template <class T>
__global__ void add_const(T* x, T v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += v;
}

__global__ void shift(float* x, int n, float by = 10.0f) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += by;
}

__global__ void never_launched(float* x) { x[0] = 42.0f; }
// Not a kernel: launching it by address is refused, on a GPU as here.
static void not_a_kernel(float* x) { x[0] = -1.0f; }

static const int N = 256;

struct HostTally {
    int calls;
    double sum;
    const float* data;
};

static void CUDART_CB bump(void* p) { ++*static_cast<int*>(p); }

static void CUDART_CB tally(void* p) {
    HostTally* t = static_cast<HostTally*>(p);
    ++t->calls;
    for (int i = 0; i < N; ++i) t->sum += t->data[i];
}

static double sum(const float* v, int n) {
    double s = 0;
    for (int i = 0; i < n; ++i) s += v[i];
    return s;
}

#define CHECK(call)                                                                       \
    do {                                                                                  \
        cudaError_t e_ = (call);                                                          \
        if (e_ != cudaSuccess) {                                                          \
            std::printf("failed=%s at line %d: %s\n", #call, __LINE__, cudaGetErrorName(e_)); \
            return 1;                                                                     \
        }                                                                                 \
    } while (0)

static int launch_forms(float* d, float* h) {
    for (int i = 0; i < N; ++i) h[i] = (float)i;
    CHECK(cudaMemcpy(d, h, N * sizeof(float), cudaMemcpyHostToDevice));
    affine<<<2, 128>>>(d, 2.0f, 1.0f, N);  // 2i + 1
    CHECK(cudaGetLastError());

    float a = 1.0f, b = 3.0f;
    int n = N;
    void* args[] = {&d, &a, &b, &n};
    CHECK(cudaLaunchKernel((void*)affine, dim3(2), dim3(128), args, 0, 0));  // 2i + 4
    a = 3.0f;
    b = 0.0f;
    CHECK(cudaLaunchKernel(affine, dim3(2), dim3(128), args));  // 6i + 12

    cudaLaunchAttribute attrs[2];
    std::memset(attrs, 0, sizeof attrs);
    attrs[0].id = cudaLaunchAttributePriority;
    attrs[0].val.priority = 0;
    attrs[1].id = cudaLaunchAttributeAccessPolicyWindow;
    attrs[1].val.accessPolicyWindow.base_ptr = d;
    attrs[1].val.accessPolicyWindow.num_bytes = N * sizeof(float);
    attrs[1].val.accessPolicyWindow.hitRatio = 0.5f;
    attrs[1].val.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
    attrs[1].val.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
    cudaLaunchConfig_t cfg;
    std::memset(&cfg, 0, sizeof cfg);
    cfg.gridDim = dim3(2);
    cfg.blockDim = dim3(128);
    cfg.attrs = attrs;
    cfg.numAttrs = 2;
    CHECK(cudaLaunchKernelEx(&cfg, affine, d, 1.0f, 1.0f, N));  // 6i + 13

    cudaLaunchAttribute cluster;
    std::memset(&cluster, 0, sizeof cluster);
    cluster.id = cudaLaunchAttributeClusterDimension;
    cluster.val.clusterDim.x = 2;
    cluster.val.clusterDim.y = 1;
    cluster.val.clusterDim.z = 1;
    cudaLaunchConfig_t bad = cfg;
    bad.attrs = &cluster;
    bad.numAttrs = 1;
    std::printf("unknown_attribute=%s\n", cudaGetErrorName(cudaLaunchKernelEx(&bad, affine, d, 0.0f, 0.0f, N)));
    cudaGetLastError();

    a = 0.5f;
    b = 0.0f;
    cfg.numAttrs = 0;
    cfg.attrs = nullptr;
    CHECK(cudaLaunchKernelExC(&cfg, (const void*)affine, args));  // 3i + 6.5

    // A kernel used only by address runs: the build registers every kernel definition.
    float* probe;
    CHECK(cudaMalloc(&probe, sizeof(float)));
    void* probe_args[] = {&probe};
    CHECK(cudaLaunchKernel((void*)never_launched, dim3(1), dim3(1), probe_args, 0, 0));
    float probe_value = 0.0f;
    CHECK(cudaMemcpy(&probe_value, probe, sizeof(float), cudaMemcpyDeviceToHost));
    CHECK(cudaFree(probe));
    std::printf("address_only=%g\n", probe_value);
    void* never_args[] = {&d};
    std::printf("unregistered=%s\n",
                cudaGetErrorName(cudaLaunchKernel((void*)not_a_kernel, dim3(1), dim3(1), never_args, 0, 0)));
    std::printf("unregistered_last=%s\n", cudaGetErrorName(cudaGetLastError()));
    // A cooperative launch runs like any other (every block resident): 1.5i + 3.25
    std::printf("cooperative=%s\n",
                cudaGetErrorName(cudaLaunchCooperativeKernel((void*)affine, dim3(2), dim3(128), args, 0, 0)));
    cudaGetLastError();

    cudaFuncAttributes fa;
    CHECK(cudaFuncGetAttributes(&fa, affine));
    std::printf("max_threads=%d\n", fa.maxThreadsPerBlock);
    std::printf("attributes_unregistered=%s\n",
                cudaGetErrorName(cudaFuncGetAttributes(&fa, (const void*)not_a_kernel)));
    cudaGetLastError();

    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(h, d, N * sizeof(float), cudaMemcpyDeviceToHost));
    std::printf("launches_last=%g\n", h[N - 1]);
    std::printf("launches_sum=%.1f\n", sum(h, N));
    return 0;
}

static int captured(float* y, float* hy) {
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    int hits = 0;
    for (int i = 0; i < N; ++i) hy[i] = -1.0f;
    cudaGraph_t none;
    std::printf("end_without_begin=%s\n", cudaGetErrorName(cudaStreamEndCapture(s, &none)));
    cudaGetLastError();

    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    cudaStreamCaptureStatus status;
    CHECK(cudaStreamIsCapturing(s, &status));
    std::printf("capturing=%d\n", (int)status);
    CHECK(cudaMemsetAsync(y, 0, N * sizeof(float), s));
    affine<<<2, 128, 0, s>>>(y, 1.0f, 2.0f, N);  // 2
    iota_add<<<2, 128, 0, s>>>(y, N);             // 2 + i
    float a = 3.0f, b = 0.0f;
    int n = N;
    void* args[] = {&y, &a, &b, &n};
    CHECK(cudaLaunchKernel((void*)affine, dim3(2), dim3(128), args, 0, s));  // 6 + 3i
    a = 100.0f;                                      // the launch copied its arguments when it was captured
    add_const<<<2, 128, 0, s>>>(y, 1.0f, N);         // 7 + 3i (a kernel template, arguments deduced)
    shift<<<2, 128, 0, s>>>(y, N);                   // 17 + 3i (a default argument)
    CHECK(cudaLaunchHostFunc(s, bump, &hits));
    CHECK(cudaMemcpyAsync(hy, y, N * sizeof(float), cudaMemcpyDeviceToHost, s));
    unsigned long long id = 0;
    cudaGraph_t during = nullptr;
    const cudaGraphNode_t* deps = nullptr;
    size_t ndeps = 0;
    CHECK(cudaStreamGetCaptureInfo(s, &status, &id, &during, &deps, nullptr, &ndeps));
    std::printf("info_status=%d info_deps=%zu\n", (int)status, ndeps);
    cudaGraph_t g;
    CHECK(cudaStreamEndCapture(s, &g));
    CHECK(cudaStreamIsCapturing(s, &status));
    std::printf("capturing_after=%d\n", (int)status);
    std::printf("same_graph=%d\n", during == g ? 1 : 0);
    std::printf("ran_during_capture=%d\n", hits);
    std::printf("copied_during_capture=%g\n", hy[0]);

    size_t count = 0;
    CHECK(cudaGraphGetNodes(g, nullptr, &count));
    cudaGraphNode_t nodes[16];
    CHECK(cudaGraphGetNodes(g, nodes, &count));
    std::printf("captured_nodes=%zu\n", count);
    std::printf("captured_types=");
    for (size_t i = 0; i < count; ++i) {
        cudaGraphNodeType t;
        CHECK(cudaGraphNodeGetType(nodes[i], &t));
        std::printf("%s%d", i ? "," : "", (int)t);
    }
    std::printf("\n");

    cudaGraphExec_t exec;
    CHECK(cudaGraphInstantiate(&exec, g, 0));
    for (int r = 0; r < 3; ++r) CHECK(cudaGraphLaunch(exec, s));
    CHECK(cudaStreamSynchronize(s));
    std::printf("captured_hits=%d\n", hits);
    std::printf("captured_last=%g\n", hy[N - 1]);
    std::printf("captured_sum=%.1f\n", sum(hy, N));
    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphDestroy(g));
    CHECK(cudaStreamDestroy(s));
    return 0;
}

// A diamond built by hand, nodes created out of order: memset -> {left half, right half} ->
// empty -> copy to the host -> host tally.
static int build_diamond(cudaGraph_t* out, float* z, float* hz, HostTally* t, float left_a, float right_b,
                         bool join_right, cudaGraphNode_t* left_node) {
    cudaGraph_t g;
    CHECK(cudaGraphCreate(&g, 0));
    cudaGraphNode_t copy, left, right, fill, host, join;
    CHECK(cudaGraphAddMemcpyNode1D(&copy, g, nullptr, 0, hz, z, N * sizeof(float), cudaMemcpyDeviceToHost));

    float la = left_a, lb = 0.0f, ra = 5.0f, rb = right_b;
    int lo0 = 0, lo1 = N / 2, half = N / 2;
    void* left_args[] = {&z, &la, &lb, &lo0, &half};
    void* right_args[] = {&z, &ra, &rb, &lo1, &half};
    cudaKernelNodeParams kp;
    std::memset(&kp, 0, sizeof kp);
    kp.func = (void*)affine_at;
    kp.gridDim = dim3(1);
    kp.blockDim = dim3(128);
    kp.kernelParams = left_args;
    CHECK(cudaGraphAddKernelNode(&left, g, nullptr, 0, &kp));
    kp.kernelParams = right_args;
    CHECK(cudaGraphAddKernelNode(&right, g, nullptr, 0, &kp));

    cudaMemsetParams mp;
    std::memset(&mp, 0, sizeof mp);
    mp.dst = z;
    float one = 1.0f;
    std::memcpy(&mp.value, &one, sizeof one);
    mp.elementSize = 4;
    mp.width = N;
    mp.height = 1;
    CHECK(cudaGraphAddMemsetNode(&fill, g, nullptr, 0, &mp));

    cudaHostNodeParams hp;
    hp.fn = tally;
    hp.userData = t;
    CHECK(cudaGraphAddHostNode(&host, g, &copy, 1, &hp));
    cudaGraphNode_t both[] = {left, right};
    CHECK(cudaGraphAddEmptyNode(&join, g, both, join_right ? 2 : 1));

    cudaGraphNode_t from[] = {fill, fill, join};
    cudaGraphNode_t to[] = {left, right, copy};
    CHECK(cudaGraphAddDependencies(g, from, to, nullptr, 3));
    *out = g;
    if (left_node != nullptr) *left_node = left;
    return 0;
}

static int explicit_graphs(float* z, float* hz) {
    HostTally t{0, 0.0, hz};
    // Registers affine_at for the kernel nodes below (an identity launch); without the front
    // end's registration of every definition, a kernel used only by address is unknown.
    affine_at<<<1, 128>>>(z, 1.0f, 0.0f, 0, N);
    cudaGraph_t g;
    cudaGraphNode_t left;
    if (build_diamond(&g, z, hz, &t, 2.0f, 1.0f, true, &left)) return 1;
    size_t roots = 0;
    CHECK(cudaGraphGetRootNodes(g, nullptr, &roots));
    std::printf("roots=%zu\n", roots);
    cudaGraphExec_t exec;
    CHECK(cudaGraphInstantiateWithFlags(&exec, g, 0));
    CHECK(cudaGraphLaunch(exec, 0));
    CHECK(cudaGraphLaunch(exec, 0));
    std::printf("diamond_first=%g diamond_last=%g\n", hz[0], hz[N - 1]);
    std::printf("diamond_calls=%d diamond_tally=%.1f\n", t.calls, t.sum);

    // New arguments for the left kernel in the executable graph only.
    float la = 3.0f, lb = 0.0f;
    int lo0 = 0, half = N / 2;
    void* args[] = {&z, &la, &lb, &lo0, &half};
    cudaKernelNodeParams kp;
    std::memset(&kp, 0, sizeof kp);
    kp.func = (void*)affine_at;
    kp.gridDim = dim3(1);
    kp.blockDim = dim3(128);
    kp.kernelParams = args;
    CHECK(cudaGraphExecKernelNodeSetParams(exec, left, &kp));
    CHECK(cudaGraphLaunch(exec, 0));
    std::printf("set_params_first=%g set_params_last=%g\n", hz[0], hz[N - 1]);

    // The same topology with other parameters updates in place ...
    cudaGraph_t g2;
    if (build_diamond(&g2, z, hz, &t, 4.0f, 2.0f, true, nullptr)) return 1;
    cudaGraphExecUpdateResultInfo info;
    CHECK(cudaGraphExecUpdate(exec, g2, &info));
    std::printf("update_result=%d\n", (int)info.result);
    CHECK(cudaGraphLaunch(exec, 0));
    std::printf("updated_first=%g updated_last=%g\n", hz[0], hz[N - 1]);

    // ... another topology (the join no longer waits for the right half) does not.
    cudaGraph_t g3;
    if (build_diamond(&g3, z, hz, &t, 4.0f, 2.0f, false, nullptr)) return 1;
    cudaError_t e = cudaGraphExecUpdate(exec, g3, &info);
    std::printf("topology_update=%s topology_result=%d\n", cudaGetErrorName(e), (int)info.result);
    cudaGetLastError();

    // A kernel node for a kernel the registry does not know is refused.
    void* never_args[] = {&z};
    kp.func = (void*)not_a_kernel;
    kp.kernelParams = never_args;
    cudaGraphNode_t bad;
    std::printf("node_unregistered=%s\n", cudaGetErrorName(cudaGraphAddKernelNode(&bad, g3, nullptr, 0, &kp)));
    cudaGetLastError();

    // A cycle cannot be instantiated.
    cudaGraph_t cyc;
    CHECK(cudaGraphCreate(&cyc, 0));
    cudaGraphNode_t p, q;
    CHECK(cudaGraphAddEmptyNode(&p, cyc, nullptr, 0));
    CHECK(cudaGraphAddEmptyNode(&q, cyc, &p, 1));
    CHECK(cudaGraphAddDependencies(cyc, &q, &p, nullptr, 1));
    cudaGraphExec_t cyc_exec;
    std::printf("cycle=%s\n", cudaGetErrorName(cudaGraphInstantiate(&cyc_exec, cyc, 0)));
    cudaGetLastError();

    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphDestroy(g));
    CHECK(cudaGraphDestroy(g2));
    CHECK(cudaGraphDestroy(g3));
    CHECK(cudaGraphDestroy(cyc));
    return 0;
}

// A 3 x 4 block of a pitched 8 x 16 device array, from column 2 of row 1, copied by a memcpy node.
static int pitched_copy() {
    const int rows = 8, cols = 16;
    float host_src[rows * cols], host_dst[3 * 4];
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c) host_src[r * cols + c] = (float)(r * 100 + c);
    for (int i = 0; i < 12; ++i) host_dst[i] = -1.0f;
    float* w;
    CHECK(cudaMalloc(&w, sizeof host_src));
    CHECK(cudaMemcpy(w, host_src, sizeof host_src, cudaMemcpyHostToDevice));
    cudaMemcpy3DParms p;
    std::memset(&p, 0, sizeof p);
    p.srcPtr = make_cudaPitchedPtr(w, cols * sizeof(float), cols, rows);
    p.srcPos = make_cudaPos(2 * sizeof(float), 1, 0);
    p.dstPtr = make_cudaPitchedPtr(host_dst, 4 * sizeof(float), 4, 3);
    p.extent = make_cudaExtent(4 * sizeof(float), 3, 1);
    p.kind = cudaMemcpyDeviceToHost;
    cudaGraph_t g;
    CHECK(cudaGraphCreate(&g, 0));
    cudaGraphNode_t node;
    CHECK(cudaGraphAddMemcpyNode(&node, g, nullptr, 0, &p));
    cudaGraphExec_t exec;
    CHECK(cudaGraphInstantiate(&exec, g, 0));
    CHECK(cudaGraphLaunch(exec, 0));
    std::printf("pitched=");
    for (int i = 0; i < 12; ++i) std::printf("%s%g", i ? "," : "", host_dst[i]);
    std::printf("\n");
    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphDestroy(g));
    CHECK(cudaFree(w));
    return 0;
}

// ---- "oob": a memcheck plant in a graph's kernel node: the bounds test lets thread n write one
// element past the buffer. With an argument the planted bound is used; without, the correct one.
__global__ void fill_index(float* out, int n, int planted) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (planted ? i <= n : i < n) out[i] = (float)i;  // PLANT
}

static int oob_main(int argc, char** argv) {
    (void)argv;
    int n = 100, planted = argc > 1 ? 1 : 0;
    float* out;
    if (cudaMalloc(&out, n * sizeof(float)) != cudaSuccess) return 1;
    cudaFuncAttributes fa;  // a typed call: registers the kernel for the launch by address below
    if (cudaFuncGetAttributes(&fa, fill_index) != cudaSuccess) return 1;
    void* args[] = {&out, &n, &planted};
    cudaKernelNodeParams p = {};
    p.func = (void*)fill_index;
    p.gridDim = dim3(2);
    p.blockDim = dim3(64);
    p.kernelParams = args;
    cudaGraph_t g;
    cudaGraphNode_t node;
    cudaGraphExec_t exec;
    if (cudaGraphCreate(&g, 0) != cudaSuccess) return 1;
    if (cudaGraphAddKernelNode(&node, g, nullptr, 0, &p) != cudaSuccess) return 1;  // NODE
    if (cudaGraphInstantiate(&exec, g, 0) != cudaSuccess) return 1;
    cudaError_t launched = cudaGraphLaunch(exec, 0);
    cudaError_t synced = cudaDeviceSynchronize();
    float last = -1.0f;
    cudaMemcpy(&last, out + n - 1, sizeof last, cudaMemcpyDeviceToHost);
    std::printf("launch=%s sync=%s last=%g\n", cudaGetErrorName(launched), cudaGetErrorName(synced), last);
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(g);
    cudaFree(out);
    return synced == cudaSuccess ? 0 : 3;
}

int main(int argc, char** argv) {
    if (argc > 1 && std::strcmp(argv[1], "oob") == 0) return oob_main(argc - 1, argv + 1);
    float *d, *y, *z;
    static float h[N], hy[N], hz[N];
    CHECK(cudaMalloc(&d, N * sizeof(float)));
    CHECK(cudaMalloc(&y, N * sizeof(float)));
    CHECK(cudaMalloc(&z, N * sizeof(float)));
    if (launch_forms(d, h) || captured(y, hy) || explicit_graphs(z, hz) || pitched_copy()) return 1;
    CHECK(cudaFree(d));
    CHECK(cudaFree(y));
    CHECK(cudaFree(z));
    std::printf("done=1\n");
    return 0;
}
