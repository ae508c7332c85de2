// CUDA graphs and stream capture, part of host_api.h (graphs.cpp, graph_memory.cpp,
// graph_children.cpp). Graphs replay their nodes synchronously, in a topological order
// (creation order among ready nodes). Capture covers every stream (streams are one stream
// here): work issued on another stream during a capture is captured too. Captured: launches,
// cudaMemcpyAsync, cudaMemsetAsync, cudaLaunchHostFunc, cudaGraphLaunch,
// cudaMallocAsync/cudaFreeAsync (graph memory nodes) and cuBLAS's device-writing calls; every
// other call runs at once, as outside a capture.
#ifndef CUDA_CPU_SIMULATOR_HOST_GRAPHS_H
#define CUDA_CPU_SIMULATOR_HOST_GRAPHS_H

#ifndef CUDA_CPU_SIMULATOR_HOST_API_H
#error "host_graphs.h is part of host_api.h; include <cuda_runtime.h>"
#endif

struct CUgraph_st;
typedef struct CUgraph_st* cudaGraph_t;
struct CUgraphNode_st;
typedef struct CUgraphNode_st* cudaGraphNode_t;
struct CUgraphExec_st;
typedef struct CUgraphExec_st* cudaGraphExec_t;
struct cudaMemcpy3DParms;

enum cudaStreamCaptureStatus {
    cudaStreamCaptureStatusNone = 0,
    cudaStreamCaptureStatusActive = 1,
    cudaStreamCaptureStatusInvalidated = 2,
};
enum cudaStreamCaptureMode {
    cudaStreamCaptureModeGlobal = 0,
    cudaStreamCaptureModeThreadLocal = 1,
    cudaStreamCaptureModeRelaxed = 2,
};
enum cudaGraphNodeType {
    cudaGraphNodeTypeKernel = 0x00,
    cudaGraphNodeTypeMemcpy = 0x01,
    cudaGraphNodeTypeMemset = 0x02,
    cudaGraphNodeTypeHost = 0x03,
    cudaGraphNodeTypeGraph = 0x04,
    cudaGraphNodeTypeEmpty = 0x05,
    cudaGraphNodeTypeWaitEvent = 0x06,
    cudaGraphNodeTypeEventRecord = 0x07,
    cudaGraphNodeTypeExtSemaphoreSignal = 0x08,
    cudaGraphNodeTypeExtSemaphoreWait = 0x09,
    cudaGraphNodeTypeMemAlloc = 0x0a,
    cudaGraphNodeTypeMemFree = 0x0b,
    cudaGraphNodeTypeConditional = 0x0d,
    cudaGraphNodeTypeCount,
};
enum cudaGraphExecUpdateResult {
    cudaGraphExecUpdateSuccess = 0x0,
    cudaGraphExecUpdateError = 0x1,
    cudaGraphExecUpdateErrorTopologyChanged = 0x2,
    cudaGraphExecUpdateErrorNodeTypeChanged = 0x3,
    cudaGraphExecUpdateErrorFunctionChanged = 0x4,
    cudaGraphExecUpdateErrorParametersChanged = 0x5,
    cudaGraphExecUpdateErrorNotSupported = 0x6,
    cudaGraphExecUpdateErrorUnsupportedFunctionChange = 0x7,
    cudaGraphExecUpdateErrorAttributesChanged = 0x8,
};
typedef struct cudaGraphExecUpdateResultInfo_st {
    enum cudaGraphExecUpdateResult result;
    cudaGraphNode_t errorNode;
    cudaGraphNode_t errorFromNode;
} cudaGraphExecUpdateResultInfo;
enum cudaGraphInstantiateFlags {
    cudaGraphInstantiateFlagAutoFreeOnLaunch = 1,
    cudaGraphInstantiateFlagUpload = 2,
    cudaGraphInstantiateFlagDeviceLaunch = 4,
    cudaGraphInstantiateFlagUseNodePriority = 8,
};
typedef struct cudaGraphEdgeData_st {
    unsigned char from_port;
    unsigned char to_port;
    unsigned char type;
    unsigned char reserved[5];
} cudaGraphEdgeData;

struct cudaKernelNodeParams {
    void* func;
    dim3 gridDim;
    dim3 blockDim;
    unsigned int sharedMemBytes;
    void** kernelParams;
    void** extra;
};
struct cudaMemsetParams {
    void* dst;
    size_t pitch;
    unsigned int value;
    unsigned int elementSize;
    size_t width;
    size_t height;
};
struct cudaHostNodeParams {
    cudaHostFn_t fn;
    void* userData;
};
struct cudaMemAllocNodeParams {
    struct cudaMemPoolProps poolProps;
    const struct cudaMemAccessDesc* accessDescs;
    size_t accessDescCount;
    size_t bytesize;
    void* dptr;  // out: the allocation's address
};
// The graph memory footprint (cudaDeviceGetGraphMemAttribute), values as in CUDA's driver_types.h.
enum cudaGraphMemAttributeType {
    cudaGraphMemAttrUsedMemCurrent = 0x0,
    cudaGraphMemAttrUsedMemHigh = 0x1,
    cudaGraphMemAttrReservedMemCurrent = 0x2,
    cudaGraphMemAttrReservedMemHigh = 0x3,
};

extern "C" {
SIM_API cudaError_t cudaStreamBeginCapture(cudaStream_t stream, enum cudaStreamCaptureMode mode);
SIM_API cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t* graph);
SIM_API cudaError_t cudaStreamIsCapturing(cudaStream_t stream, enum cudaStreamCaptureStatus* status);
SIM_API cudaError_t cudaStreamGetCaptureInfo(cudaStream_t stream, enum cudaStreamCaptureStatus* status,
                                             unsigned long long* id = 0, cudaGraph_t* graph = 0,
                                             const cudaGraphNode_t** dependencies = 0,
                                             const cudaGraphEdgeData** edge_data = 0, size_t* num_dependencies = 0);
SIM_API cudaError_t cudaThreadExchangeStreamCaptureMode(enum cudaStreamCaptureMode* mode);
SIM_API cudaError_t cudaGraphCreate(cudaGraph_t* graph, unsigned int flags);
// The two trailing parameters (the caller's file and line, for reports) are the simulator's.
SIM_API cudaError_t cudaGraphAddKernelNode(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* deps,
                                           size_t num_deps, const struct cudaKernelNodeParams* params,
                                           const char* file = __builtin_FILE(), int line = __builtin_LINE());
SIM_API cudaError_t cudaGraphAddMemcpyNode(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* deps,
                                           size_t num_deps, const struct cudaMemcpy3DParms* params);
SIM_API cudaError_t cudaGraphAddMemcpyNode1D(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* deps,
                                             size_t num_deps, void* dst, const void* src, size_t count,
                                             enum cudaMemcpyKind kind);
SIM_API cudaError_t cudaGraphAddMemsetNode(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* deps,
                                           size_t num_deps, const struct cudaMemsetParams* params);
SIM_API cudaError_t cudaGraphAddHostNode(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* deps,
                                         size_t num_deps, const struct cudaHostNodeParams* params);
SIM_API cudaError_t cudaGraphAddEmptyNode(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* deps,
                                          size_t num_deps);
SIM_API cudaError_t cudaGraphAddDependencies(cudaGraph_t graph, const cudaGraphNode_t* from, const cudaGraphNode_t* to,
                                             const cudaGraphEdgeData* edge_data, size_t count);
SIM_API cudaError_t cudaGraphGetNodes(cudaGraph_t graph, cudaGraphNode_t* nodes, size_t* num_nodes);
SIM_API cudaError_t cudaGraphGetRootNodes(cudaGraph_t graph, cudaGraphNode_t* nodes, size_t* num_nodes);
SIM_API cudaError_t cudaGraphNodeGetType(cudaGraphNode_t node, enum cudaGraphNodeType* type);
SIM_API cudaError_t cudaGraphDestroy(cudaGraph_t graph);
SIM_API cudaError_t cudaGraphInstantiate(cudaGraphExec_t* exec, cudaGraph_t graph, unsigned long long flags = 0);
SIM_API cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t* exec, cudaGraph_t graph,
                                                  unsigned long long flags = 0);
SIM_API cudaError_t cudaGraphUpload(cudaGraphExec_t exec, cudaStream_t stream);
SIM_API cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream);
SIM_API cudaError_t cudaGraphExecUpdate(cudaGraphExec_t exec, cudaGraph_t graph,
                                        cudaGraphExecUpdateResultInfo* result_info);
SIM_API cudaError_t cudaGraphExecKernelNodeSetParams(cudaGraphExec_t exec, cudaGraphNode_t node,
                                                     const struct cudaKernelNodeParams* params);
SIM_API cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec);

// Child graph nodes: the node holds its own copy of the child graph, replayed in the child's
// topological order where the node stands in the parent's.
SIM_API cudaError_t cudaGraphAddChildGraphNode(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* deps,
                                               size_t num_deps, cudaGraph_t child_graph);
SIM_API cudaError_t cudaGraphChildGraphNodeGetGraph(cudaGraphNode_t node, cudaGraph_t* graph);
// A copy of a graph (not of one with memory nodes: cudaErrorNotSupported), and a node's copy in it.
SIM_API cudaError_t cudaGraphClone(cudaGraph_t* clone, cudaGraph_t original);
SIM_API cudaError_t cudaGraphNodeFindInClone(cudaGraphNode_t* node, cudaGraphNode_t original_node,
                                             cudaGraph_t cloned_graph);

// Event nodes: a record node records its event when the replay reaches it; a wait node's event
// has always completed by then (replays are synchronous).
SIM_API cudaError_t cudaGraphAddEventRecordNode(cudaGraphNode_t* node, cudaGraph_t graph,
                                                const cudaGraphNode_t* deps, size_t num_deps, cudaEvent_t event);
SIM_API cudaError_t cudaGraphAddEventWaitNode(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* deps,
                                              size_t num_deps, cudaEvent_t event);
SIM_API cudaError_t cudaGraphEventRecordNodeGetEvent(cudaGraphNode_t node, cudaEvent_t* event_out);
SIM_API cudaError_t cudaGraphEventRecordNodeSetEvent(cudaGraphNode_t node, cudaEvent_t event);
SIM_API cudaError_t cudaGraphEventWaitNodeGetEvent(cudaGraphNode_t node, cudaEvent_t* event_out);
SIM_API cudaError_t cudaGraphEventWaitNodeSetEvent(cudaGraphNode_t node, cudaEvent_t event);
SIM_API cudaError_t cudaGraphExecEventRecordNodeSetEvent(cudaGraphExec_t exec, cudaGraphNode_t node,
                                                         cudaEvent_t event);
SIM_API cudaError_t cudaGraphExecEventWaitNodeSetEvent(cudaGraphExec_t exec, cudaGraphNode_t node,
                                                       cudaEvent_t event);

// Graph memory nodes: an allocation node fixes its address when it is made (params->dptr);
// the memory is valid from the node's run to its free (a free node, or cudaFree/cudaFreeAsync
// after the launch). Stream-captured cudaMallocAsync/cudaFreeAsync become such nodes.
SIM_API cudaError_t cudaGraphAddMemAllocNode(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* deps,
                                             size_t num_deps, struct cudaMemAllocNodeParams* params);
SIM_API cudaError_t cudaGraphMemAllocNodeGetParams(cudaGraphNode_t node, struct cudaMemAllocNodeParams* params);
SIM_API cudaError_t cudaGraphAddMemFreeNode(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* deps,
                                            size_t num_deps, void* dptr);
SIM_API cudaError_t cudaGraphMemFreeNodeGetParams(cudaGraphNode_t node, void* dptr_out);
SIM_API cudaError_t cudaDeviceGetGraphMemAttribute(int device, enum cudaGraphMemAttributeType attr, void* value);
SIM_API cudaError_t cudaDeviceSetGraphMemAttribute(int device, enum cudaGraphMemAttributeType attr, void* value);
SIM_API cudaError_t cudaDeviceGraphMemTrim(int device);
}

// CUDA 12's forms, still in programs: instantiate with an error node and log buffer, and
// dependencies without edge data.
static inline cudaError_t cudaGraphInstantiate(cudaGraphExec_t* exec, cudaGraph_t graph, cudaGraphNode_t* error_node,
                                               char* log, size_t log_size) {
    (void)error_node;
    if (log != nullptr && log_size > 0) log[0] = '\0';
    return cudaGraphInstantiate(exec, graph, 0ull);
}
static inline cudaError_t cudaGraphAddDependencies(cudaGraph_t graph, const cudaGraphNode_t* from,
                                                   const cudaGraphNode_t* to, size_t count) {
    return cudaGraphAddDependencies(graph, from, to, nullptr, count);
}

#endif  // CUDA_CPU_SIMULATOR_HOST_GRAPHS_H
