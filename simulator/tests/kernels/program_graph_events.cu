// Graph event nodes: explicitly added record and wait nodes, their get/set calls, the exec-graph
// form, and the nodes stream capture makes from cudaEventRecordWithFlags(cudaEventRecordExternal)
// and cudaStreamWaitEvent(cudaEventWaitExternal). Prints key=value lines.
#include <cuda_runtime.h>
#include <cstdio>

#define N 128

__global__ void fill(float* x) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) x[i] = (float)i;
}

__global__ void scale(float* x, float a) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) x[i] *= a;
}

// 1 when ``e`` has been recorded: cudaEventElapsedTime needs both of its events recorded.
static int recorded(cudaEvent_t e, cudaEvent_t reference) {
    float ms = 0;
    return cudaEventElapsedTime(&ms, reference, e) == cudaSuccess ? 1 : 0;
}

static void print_sum(const char* key, const float* d) {
    float h[N];
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    double s = 0;
    for (int i = 0; i < N; ++i) s += h[i];
    std::printf("%s=%.1f\n", key, s);
}

int main() {
    float* d;
    cudaMalloc(&d, N * sizeof(float));
    cudaEvent_t ref, e1, e2, e3, gone;
    cudaEventCreate(&ref);
    cudaEventCreate(&e1);
    cudaEventCreate(&e2);
    cudaEventCreate(&e3);
    cudaEventCreate(&gone);
    cudaEventDestroy(gone);
    cudaEventRecord(ref);

    // An explicit graph: fill -> record e1 -> wait e1 -> scale by 3 -> record e2.
    cudaGraph_t g;
    cudaGraphCreate(&g, 0);
    cudaGraphNode_t n_fill, n_rec1, n_wait, n_scale, n_rec2, bad;
    void* fill_args[] = {&d};
    cudaKernelNodeParams kp = {};
    kp.func = (void*)fill;
    kp.gridDim = dim3(1);
    kp.blockDim = dim3(N);
    kp.kernelParams = fill_args;
    cudaGraphAddKernelNode(&n_fill, g, nullptr, 0, &kp);
    cudaGraphAddEventRecordNode(&n_rec1, g, &n_fill, 1, e1);
    cudaGraphAddEventWaitNode(&n_wait, g, &n_rec1, 1, e1);
    float a = 3.0f;
    void* scale_args[] = {&d, &a};
    kp.func = (void*)scale;
    kp.kernelParams = scale_args;
    cudaGraphAddKernelNode(&n_scale, g, &n_wait, 1, &kp);
    cudaGraphAddEventRecordNode(&n_rec2, g, &n_scale, 1, e2);

    cudaGraphNodeType t1, t2;
    cudaGraphNodeGetType(n_rec1, &t1);
    cudaGraphNodeGetType(n_wait, &t2);
    std::printf("type_record=%d\ntype_wait=%d\n", (int)t1, (int)t2);
    cudaEvent_t got = nullptr;
    cudaGraphEventRecordNodeGetEvent(n_rec2, &got);
    std::printf("get_record_is_e2=%d\n", got == e2 ? 1 : 0);
    cudaGraphEventWaitNodeGetEvent(n_wait, &got);
    std::printf("get_wait_is_e1=%d\n", got == e1 ? 1 : 0);
    std::printf("get_on_kernel_node=%s\n", cudaGetErrorName(cudaGraphEventRecordNodeGetEvent(n_fill, &got)));
    std::printf("get_wait_on_record_node=%s\n", cudaGetErrorName(cudaGraphEventWaitNodeGetEvent(n_rec1, &got)));
    std::printf("add_destroyed_event=%s\n",
                cudaGetErrorName(cudaGraphAddEventRecordNode(&bad, g, nullptr, 0, gone)));
    cudaGetLastError();

    std::printf("before_launch_e1=%d\nbefore_launch_e2=%d\n", recorded(e1, ref), recorded(e2, ref));
    cudaGraphExec_t x;
    cudaGraphInstantiate(&x, g, 0);
    std::printf("launch=%s\n", cudaGetErrorName(cudaGraphLaunch(x, 0)));
    cudaDeviceSynchronize();
    std::printf("after_launch_e1=%d\nafter_launch_e2=%d\n", recorded(e1, ref), recorded(e2, ref));
    print_sum("explicit_sum", d);

    // The executable graph's record node now records e3; the graph's node keeps e2.
    std::printf("exec_set=%s\n", cudaGetErrorName(cudaGraphExecEventRecordNodeSetEvent(x, n_rec2, e3)));
    std::printf("exec_set_on_wait_node=%s\n",
                cudaGetErrorName(cudaGraphExecEventRecordNodeSetEvent(x, n_wait, e3)));
    cudaGetLastError();
    std::printf("before_exec_set_launch_e3=%d\n", recorded(e3, ref));
    cudaGraphLaunch(x, 0);
    cudaDeviceSynchronize();
    std::printf("after_exec_set_launch_e3=%d\n", recorded(e3, ref));
    cudaGraphEventRecordNodeGetEvent(n_rec2, &got);
    std::printf("graph_keeps_e2=%d\n", got == e2 ? 1 : 0);
    cudaGraphEventRecordNodeSetEvent(n_rec2, e1);
    cudaGraphEventRecordNodeGetEvent(n_rec2, &got);
    std::printf("graph_set_to_e1=%d\n", got == e1 ? 1 : 0);
    print_sum("relaunch_sum", d);
    cudaGraphExecDestroy(x);
    cudaGraphDestroy(g);

    // Capture: fill, an external record, an external wait, scale by 5.
    cudaEvent_t ce;
    cudaEventCreate(&ce);
    cudaStream_t s;
    cudaStreamCreate(&s);
    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
    fill<<<1, N, 0, s>>>(d);
    std::printf("capture_record=%s\n", cudaGetErrorName(cudaEventRecordWithFlags(ce, s, cudaEventRecordExternal)));
    std::printf("capture_wait=%s\n", cudaGetErrorName(cudaStreamWaitEvent(s, ce, cudaEventWaitExternal)));
    scale<<<1, N, 0, s>>>(d, 5.0f);
    cudaGraph_t cg;
    cudaStreamEndCapture(s, &cg);
    size_t count = 0;
    cudaGraphGetNodes(cg, nullptr, &count);
    cudaGraphNode_t nodes[8];
    cudaGraphGetNodes(cg, nodes, &count);
    std::printf("captured_nodes=%zu\n", count);
    for (size_t i = 0; i < count; ++i) {
        cudaGraphNodeType t;
        cudaGraphNodeGetType(nodes[i], &t);
        std::printf("captured_type_%zu=%d\n", i, (int)t);
    }
    std::printf("captured_not_yet_recorded=%d\n", recorded(ce, ref));
    cudaGraphExec_t cx;
    cudaGraphInstantiate(&cx, cg, 0);
    cudaGraphLaunch(cx, s);
    cudaStreamSynchronize(s);
    std::printf("captured_recorded=%d\n", recorded(ce, ref));
    print_sum("capture_sum", d);
    std::printf("wait_bad_flags=%s\n", cudaGetErrorName(cudaStreamWaitEvent(s, ce, 2)));
    std::printf("record_bad_flags=%s\n", cudaGetErrorName(cudaEventRecordWithFlags(ce, s, 2)));
    cudaGetLastError();
    std::printf("wait_external_outside_capture=%s\n", cudaGetErrorName(cudaStreamWaitEvent(s, ce, cudaEventWaitExternal)));

    cudaGraphExecDestroy(cx);
    cudaGraphDestroy(cg);
    cudaStreamDestroy(s);
    cudaFree(d);
    std::printf("last_error=%s\n", cudaGetErrorName(cudaGetLastError()));
    return 0;
}
