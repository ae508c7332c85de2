// CUDA graphs and stream capture. A graph is a list of nodes (kernel, memcpy, memset, host,
// empty, child graph, memory allocation and free, events: graph_events.cpp) with dependency edges; an executable graph is
// a copy of the nodes' operations in a topological order (creation order among the nodes that
// are ready; a child graph's nodes in its own such order), replayed synchronously by
// cudaGraphLaunch. Stream capture appends each captured operation as a node that depends on
// the one captured before it: every stream is one in-order stream here, so the captured
// graph is a chain and any order a GPU could pick for the original work is respected. Child
// graphs and clones: graph_children.cpp; the shared structures: graph_state.h.
//
// Graph memory (graph_memory.cpp): an allocation node reserves its block when it is made (the address is fixed
// across launches, as CUDA promises) and the block is live, i.e. a device allocation that
// memcheck and the copy checks accept, from the node's run to its free. An allocation node
// that (transitively) depends on the frees of every earlier use of a block of this graph reuses
// that block's address, as CUDA may. The footprint is the most graph memory live at once
// since the last trim: launches never overlap here, so graphs always share physical memory (graph_memory.cpp).
#include "graph_state.h"

#include <algorithm>
#include <queue>

namespace __sim {

std::mutex g_graph_mu;
std::set<CUgraph_st*> g_graphs;
std::set<CUgraphNode_st*> g_nodes;
std::set<CUgraphExec_st*> g_execs;
std::set<CUgraph_st*> g_owned;
Capture g_capture;
std::atomic<bool> g_capture_active{false};

namespace {

unsigned long long g_capture_ids = 0;
thread_local cudaStreamCaptureMode tl_capture_mode = cudaStreamCaptureModeGlobal;

cudaError_t run_copy(const MemcpyOp& c) {
    for (size_t z = 0; z < c.depth; ++z) {
        for (size_t y = 0; y < c.height; ++y) {
            cudaError_t e = cudaMemcpy(c.dst + z * c.dslice + y * c.dpitch, c.src + z * c.sslice + y * c.spitch,
                                       c.width, c.kind);
            if (e != cudaSuccess) return e;
        }
    }
    return cudaSuccess;
}

cudaError_t run_set(const MemsetOp& s) {
    if (cudaError_t e = sticky_error()) return e;
    const size_t row = s.width * s.elem;
    for (size_t y = 0; y < s.height; ++y) {
        char* dst = s.dst + y * s.pitch;
        bool ok;
        {
            std::lock_guard<std::mutex> lock(g_state_mu);
            ok = find_alloc(dst, row, nullptr);
        }
        if (!ok) {
            report("%s: memset node (%p, value %u, %zu elements of %u bytes): the range is not inside one live "
                   "device allocation",
                   mode_name(), (void*)dst, s.value, s.width, s.elem);
            return set_error(cudaErrorInvalidValue);
        }
        for (size_t i = 0; i < s.width; ++i) std::memcpy(dst + i * s.elem, &s.value, s.elem);  // little-endian low bytes
    }
    return cudaSuccess;
}

cudaError_t run_op(const NodeOp& op) {
    switch (op.type) {
        case cudaGraphNodeTypeKernel:
            if (op.work) {
                if (cudaError_t e = sticky_error()) return e;
                op.work();
                return cudaSuccess;
            }
            return run_kernel_op(op.kernel);
        case cudaGraphNodeTypeMemAlloc:
            return run_alloc(op);
        case cudaGraphNodeTypeMemFree:
            return run_free(op);
        case cudaGraphNodeTypeMemcpy:
            return run_copy(op.copy);
        case cudaGraphNodeTypeMemset:
            return run_set(op.set);
        case cudaGraphNodeTypeEventRecord:
        case cudaGraphNodeTypeWaitEvent:
            return run_event_op(op);
        case cudaGraphNodeTypeHost:
            if (cudaError_t e = sticky_error()) return e;
            op.host.fn(op.host.userData);
            return cudaSuccess;
        default:
            return sticky_error();
    }
}

cudaError_t make_copy(const cudaMemcpy3DParms* p, MemcpyOp* c) {
    if (p == nullptr) return set_error(cudaErrorInvalidValue);
    if (p->srcArray != nullptr || p->dstArray != nullptr) {
        graph_note("cudaGraphAddMemcpyNode: copies to or from CUDA arrays are not supported in graphs by the "
                   "simulator; returns cudaErrorNotSupported");
        return set_error(cudaErrorNotSupported);
    }
    const cudaExtent x = p->extent;
    if (x.width == 0 || x.height == 0 || x.depth == 0 || p->srcPtr.ptr == nullptr || p->dstPtr.ptr == nullptr ||
        (int)p->kind < 0 || (int)p->kind > 4)
        return set_error(cudaErrorInvalidValue);
    const size_t spitch = p->srcPtr.pitch, dpitch = p->dstPtr.pitch;
    if ((x.height > 1 || x.depth > 1) && (spitch < p->srcPos.x + x.width || dpitch < p->dstPos.x + x.width))
        return set_error(cudaErrorInvalidPitchValue);
    c->src = static_cast<const char*>(p->srcPtr.ptr) + p->srcPos.z * spitch * p->srcPtr.ysize +
             p->srcPos.y * spitch + p->srcPos.x;
    c->dst = static_cast<char*>(p->dstPtr.ptr) + p->dstPos.z * dpitch * p->dstPtr.ysize + p->dstPos.y * dpitch +
             p->dstPos.x;
    c->spitch = spitch;
    c->dpitch = dpitch;
    c->sslice = spitch * p->srcPtr.ysize;
    c->dslice = dpitch * p->dstPtr.ysize;
    c->width = x.width;
    c->height = x.height;
    c->depth = x.depth;
    c->kind = p->kind;
    return cudaSuccess;
}

}  // namespace

void graph_note(const char* text) {
    std::fprintf(stderr, "note (simulator): %s\n", text);
    std::fflush(stderr);
}

bool live_graph(cudaGraph_t g) { return g != nullptr && g_graphs.count(g) != 0; }

// A new node of ``graph`` after ``deps`` (which must be nodes of it); g_graph_mu held.
cudaError_t add_node(cudaGraphNode_t* out, cudaGraph_t graph, const cudaGraphNode_t* deps, size_t num_deps,
                     NodeOp&& op) {
    if (out == nullptr || !live_graph(graph) || (num_deps > 0 && deps == nullptr)) return set_error(cudaErrorInvalidValue);
    std::vector<CUgraphNode_st*> d;
    for (size_t i = 0; i < num_deps; ++i) {
        if (g_nodes.count(deps[i]) == 0 || deps[i]->graph != graph) return set_error(cudaErrorInvalidValue);
        if (std::find(d.begin(), d.end(), deps[i]) != d.end()) return set_error(cudaErrorInvalidValue);
        d.push_back(deps[i]);
    }
    auto node = std::make_unique<CUgraphNode_st>(CUgraphNode_st{graph, graph->nodes.size(), std::move(op), std::move(d)});
    *out = node.get();
    g_nodes.insert(node.get());
    graph->nodes.push_back(std::move(node));
    return cudaSuccess;
}

// Appends to the capture (g_graph_mu held): the node follows the one captured before it.
cudaError_t capture_node(NodeOp&& op) {
    cudaGraphNode_t node;
    CUgraphNode_st* prev = g_capture.last;
    cudaError_t e = add_node(&node, g_capture.graph, prev != nullptr ? &prev : nullptr, prev != nullptr ? 1 : 0,
                             std::move(op));
    if (e == cudaSuccess) g_capture.last = node;
    return e;
}

NodeOp memcpy_node(void* dst, const void* src, size_t count, cudaMemcpyKind kind) {
    NodeOp n;
    n.type = cudaGraphNodeTypeMemcpy;
    n.copy.dst = static_cast<char*>(dst);
    n.copy.src = static_cast<const char*>(src);
    n.copy.width = count;
    n.copy.kind = kind;
    return n;
}

NodeOp memset_node(void* dst, unsigned int value, unsigned int elem, size_t width, size_t height, size_t pitch) {
    NodeOp n;
    n.type = cudaGraphNodeTypeMemset;
    n.set.dst = static_cast<char*>(dst);
    n.set.pitch = pitch;
    n.set.value = value;
    n.set.elem = elem;
    n.set.width = width;
    n.set.height = height;
    return n;
}

// Kahn's algorithm, the lowest creation index first among ready nodes; false on a cycle.
bool topological_order(const std::vector<std::vector<size_t>>& deps, std::vector<size_t>* order) {
    const size_t n = deps.size();
    std::vector<size_t> waiting(n, 0);
    std::vector<std::vector<size_t>> next(n);
    for (size_t i = 0; i < n; ++i) {
        waiting[i] = deps[i].size();
        for (size_t d : deps[i]) next[d].push_back(i);
    }
    std::priority_queue<size_t, std::vector<size_t>, std::greater<size_t>> ready;
    for (size_t i = 0; i < n; ++i)
        if (waiting[i] == 0) ready.push(i);
    order->clear();
    while (!ready.empty()) {
        const size_t i = ready.top();
        ready.pop();
        order->push_back(i);
        for (size_t j : next[i])
            if (--waiting[j] == 0) ready.push(j);
    }
    return order->size() == n;
}

std::vector<std::vector<size_t>> dependency_indices(const CUgraph_st* g) {
    std::vector<std::vector<size_t>> deps;
    for (const auto& node : g->nodes) {
        std::vector<size_t> d;
        for (const CUgraphNode_st* p : node->deps) d.push_back(p->index);
        std::sort(d.begin(), d.end());
        deps.push_back(std::move(d));
    }
    return deps;
}

bool capturing(cudaStream_t stream) {
    (void)stream;  // every stream is the one stream
    return g_capture_active.load(std::memory_order_acquire);
}

cudaError_t capture_op(const KernelOp& op) {
    {
        std::lock_guard<std::mutex> lock(g_graph_mu);
        if (g_capture_active.load()) {
            NodeOp n;
            n.type = cudaGraphNodeTypeKernel;
            n.kernel = op;
            return capture_node(std::move(n));
        }
    }
    return run_kernel_op(op);  // the capture ended meanwhile: run it, outside the lock
}

bool capture_library_call(cudaStream_t stream, std::function<void()> work) {
    if (!capturing(stream)) return false;
    NodeOp n;
    n.type = cudaGraphNodeTypeKernel;
    n.work = std::move(work);
    std::lock_guard<std::mutex> lock(g_graph_mu);
    if (!g_capture_active.load()) return false;
    capture_node(std::move(n));  // cannot fail: the capture's graph is live and the chain is its own
    return true;
}

void capture_kernel(const KernelCall& call) {
    capture_op(KernelOp(call));  // an error is this thread's last error, as for a launch
}

}  // namespace __sim

using __sim::NodeOp;
using __sim::g_graph_mu;
using __sim::set_error;

extern "C" {

// ---- stream capture --------------------------------------------------------------------------
cudaError_t cudaStreamBeginCapture(cudaStream_t stream, enum cudaStreamCaptureMode mode) {
    (void)stream;
    if ((int)mode < 0 || (int)mode > 2) return set_error(cudaErrorInvalidValue);
    if (cudaError_t e = __sim::sticky_error()) return e;
    std::lock_guard<std::mutex> lock(g_graph_mu);
    // One capture at a time; CUDA documents cudaErrorInvalidValue for a stream that cannot begin one.
    if (__sim::g_capture_active.load()) return set_error(cudaErrorInvalidValue);
    auto* graph = new CUgraph_st();
    __sim::g_graphs.insert(graph);
    __sim::g_capture = __sim::Capture{graph, mode, std::this_thread::get_id(), ++__sim::g_capture_ids, nullptr};
    __sim::g_capture_active.store(true);
    return cudaSuccess;
}

cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t* graph) {
    (void)stream;
    if (graph == nullptr) return set_error(cudaErrorInvalidValue);
    std::lock_guard<std::mutex> lock(g_graph_mu);
    if (!__sim::g_capture_active.load()) return set_error(cudaErrorInvalidValue);  // not capturing
    if (__sim::g_capture.mode != cudaStreamCaptureModeRelaxed && __sim::g_capture.thread != std::this_thread::get_id())
        return set_error(cudaErrorStreamCaptureWrongThread);
    *graph = __sim::g_capture.graph;
    __sim::g_capture = __sim::Capture{};
    __sim::g_capture_active.store(false);
    return cudaSuccess;
}

cudaError_t cudaStreamIsCapturing(cudaStream_t stream, enum cudaStreamCaptureStatus* status) {
    if (status == nullptr) return set_error(cudaErrorInvalidValue);
    *status = __sim::capturing(stream) ? cudaStreamCaptureStatusActive : cudaStreamCaptureStatusNone;
    return __sim::sticky_error();
}

cudaError_t cudaStreamGetCaptureInfo(cudaStream_t stream, enum cudaStreamCaptureStatus* status,
                                     unsigned long long* id, cudaGraph_t* graph,
                                     const cudaGraphNode_t** dependencies, const cudaGraphEdgeData** edge_data,
                                     size_t* num_dependencies) {
    (void)stream;
    if (status == nullptr) return set_error(cudaErrorInvalidValue);
    std::lock_guard<std::mutex> lock(g_graph_mu);
    const bool active = __sim::g_capture_active.load();
    *status = active ? cudaStreamCaptureStatusActive : cudaStreamCaptureStatusNone;
    if (id != nullptr) *id = active ? __sim::g_capture.id : 0;
    if (graph != nullptr) *graph = active ? __sim::g_capture.graph : nullptr;
    // The one node the next captured operation will depend on (none at the start).
    static thread_local cudaGraphNode_t last;
    last = active ? __sim::g_capture.last : nullptr;
    if (dependencies != nullptr) *dependencies = last != nullptr ? &last : nullptr;
    if (edge_data != nullptr) *edge_data = nullptr;  // every edge is a plain full dependency
    if (num_dependencies != nullptr) *num_dependencies = last != nullptr ? 1 : 0;
    return __sim::sticky_error();
}

cudaError_t cudaThreadExchangeStreamCaptureMode(enum cudaStreamCaptureMode* mode) {
    if (mode == nullptr || (int)*mode < 0 || (int)*mode > 2) return set_error(cudaErrorInvalidValue);
    std::swap(*mode, __sim::tl_capture_mode);  // kept; no call is refused because of it
    return cudaSuccess;
}

// ---- building graphs -------------------------------------------------------------------------
cudaError_t cudaGraphCreate(cudaGraph_t* graph, unsigned int flags) {
    if (graph == nullptr || flags != 0) return set_error(cudaErrorInvalidValue);
    std::lock_guard<std::mutex> lock(g_graph_mu);
    *graph = new CUgraph_st();
    __sim::g_graphs.insert(*graph);
    return cudaSuccess;
}

cudaError_t cudaGraphAddKernelNode(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* deps,
                                   size_t num_deps, const struct cudaKernelNodeParams* params) {
    const __sim::Site site = __sim::take_site();
    if (params == nullptr) return set_error(cudaErrorInvalidValue);
    if (params->kernelParams == nullptr && params->extra != nullptr) {
        __sim::graph_note("cudaGraphAddKernelNode: arguments in the 'extra' format are not supported by the simulator "
                  "(pass kernelParams); returns cudaErrorNotSupported");
        return set_error(cudaErrorNotSupported);
    }
    NodeOp n;
    n.type = cudaGraphNodeTypeKernel;
    const __sim::LaunchSpec spec{params->gridDim, params->blockDim, params->sharedMemBytes, nullptr};
    if (cudaError_t e = __sim::make_kernel_op(params->func, spec, params->kernelParams, site.file, site.line,
                                            "cudaGraphAddKernelNode", &n.kernel))
        return e;
    std::lock_guard<std::mutex> lock(g_graph_mu);
    return __sim::add_node(node, graph, deps, num_deps, std::move(n));
}

cudaError_t cudaGraphAddMemcpyNode(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* deps,
                                   size_t num_deps, const struct cudaMemcpy3DParms* params) {
    NodeOp n;
    n.type = cudaGraphNodeTypeMemcpy;
    if (cudaError_t e = __sim::make_copy(params, &n.copy)) return e;
    std::lock_guard<std::mutex> lock(g_graph_mu);
    return __sim::add_node(node, graph, deps, num_deps, std::move(n));
}

cudaError_t cudaGraphAddMemcpyNode1D(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* deps,
                                     size_t num_deps, void* dst, const void* src, size_t count,
                                     enum cudaMemcpyKind kind) {
    if (dst == nullptr || src == nullptr || count == 0 || (int)kind < 0 || (int)kind > 4)
        return set_error(cudaErrorInvalidValue);
    std::lock_guard<std::mutex> lock(g_graph_mu);
    return __sim::add_node(node, graph, deps, num_deps, __sim::memcpy_node(dst, src, count, kind));
}

cudaError_t cudaGraphAddMemsetNode(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* deps,
                                   size_t num_deps, const struct cudaMemsetParams* params) {
    if (params == nullptr || params->dst == nullptr || params->width == 0 || params->height == 0 ||
        (params->elementSize != 1 && params->elementSize != 2 && params->elementSize != 4) ||
        (params->height > 1 && params->pitch < params->width * params->elementSize))
        return set_error(cudaErrorInvalidValue);
    std::lock_guard<std::mutex> lock(g_graph_mu);
    return __sim::add_node(node, graph, deps, num_deps,
                           __sim::memset_node(params->dst, params->value, params->elementSize, params->width,
                                              params->height, params->pitch));
}

cudaError_t cudaGraphAddHostNode(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* deps,
                                 size_t num_deps, const struct cudaHostNodeParams* params) {
    if (params == nullptr || params->fn == nullptr) return set_error(cudaErrorInvalidValue);
    NodeOp n;
    n.type = cudaGraphNodeTypeHost;
    n.host = *params;
    std::lock_guard<std::mutex> lock(g_graph_mu);
    return __sim::add_node(node, graph, deps, num_deps, std::move(n));
}

cudaError_t cudaGraphAddEmptyNode(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* deps,
                                  size_t num_deps) {
    std::lock_guard<std::mutex> lock(g_graph_mu);
    return __sim::add_node(node, graph, deps, num_deps, NodeOp{});
}

cudaError_t cudaGraphAddDependencies(cudaGraph_t graph, const cudaGraphNode_t* from, const cudaGraphNode_t* to,
                                     const cudaGraphEdgeData* edge_data, size_t count) {
    std::lock_guard<std::mutex> lock(g_graph_mu);
    if (!__sim::live_graph(graph) || (count > 0 && (from == nullptr || to == nullptr)))
        return set_error(cudaErrorInvalidValue);
    for (size_t i = 0; i < count; ++i) {
        const cudaGraphEdgeData* d = edge_data != nullptr ? &edge_data[i] : nullptr;
        if (d != nullptr && (d->from_port != 0 || d->to_port != 0 || d->type != 0)) {
            __sim::graph_note(
                "cudaGraphAddDependencies: only full (default) dependencies are supported by the simulator");
            return set_error(cudaErrorInvalidValue);
        }
        for (cudaGraphNode_t n : {from[i], to[i]})
            if (__sim::g_nodes.count(n) == 0 || n->graph != graph) return set_error(cudaErrorInvalidValue);
        auto& deps = to[i]->deps;
        if (from[i] == to[i] || std::find(deps.begin(), deps.end(), from[i]) != deps.end())
            return set_error(cudaErrorInvalidValue);  // a self edge, or one that exists
    }
    for (size_t i = 0; i < count; ++i) to[i]->deps.push_back(from[i]);
    return cudaSuccess;
}

cudaError_t cudaGraphGetNodes(cudaGraph_t graph, cudaGraphNode_t* nodes, size_t* num_nodes) {
    std::lock_guard<std::mutex> lock(g_graph_mu);
    if (!__sim::live_graph(graph) || num_nodes == nullptr) return set_error(cudaErrorInvalidValue);
    if (nodes != nullptr) {
        for (size_t i = 0; i < *num_nodes; ++i) nodes[i] = i < graph->nodes.size() ? graph->nodes[i].get() : nullptr;
    }
    *num_nodes = graph->nodes.size();
    return cudaSuccess;
}

cudaError_t cudaGraphGetRootNodes(cudaGraph_t graph, cudaGraphNode_t* nodes, size_t* num_nodes) {
    std::lock_guard<std::mutex> lock(g_graph_mu);
    if (!__sim::live_graph(graph) || num_nodes == nullptr) return set_error(cudaErrorInvalidValue);
    std::vector<cudaGraphNode_t> roots;
    for (const auto& n : graph->nodes)
        if (n->deps.empty()) roots.push_back(n.get());
    if (nodes != nullptr) {
        for (size_t i = 0; i < *num_nodes; ++i) nodes[i] = i < roots.size() ? roots[i] : nullptr;
    }
    *num_nodes = roots.size();
    return cudaSuccess;
}

cudaError_t cudaGraphNodeGetType(cudaGraphNode_t node, enum cudaGraphNodeType* type) {
    std::lock_guard<std::mutex> lock(g_graph_mu);
    if (type == nullptr || __sim::g_nodes.count(node) == 0) return set_error(cudaErrorInvalidValue);
    *type = node->op.type;
    return cudaSuccess;
}

cudaError_t cudaGraphDestroy(cudaGraph_t graph) {
    std::lock_guard<std::mutex> lock(g_graph_mu);
    if (!__sim::live_graph(graph) || __sim::g_owned.count(graph) != 0 ||
        (__sim::g_capture_active.load() && __sim::g_capture.graph == graph))
        return set_error(cudaErrorInvalidValue);
    __sim::destroy_graph(graph);
    return cudaSuccess;
}

// ---- executable graphs -----------------------------------------------------------------------
cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t* exec, cudaGraph_t graph, unsigned long long flags) {
    if (flags & cudaGraphInstantiateFlagDeviceLaunch) {
        __sim::graph_note("cudaGraphInstantiate: graphs launched from the device are not supported by the simulator; "
                  "returns cudaErrorNotSupported");
        return set_error(cudaErrorNotSupported);
    }
    // Upload is only for cudaGraphInstantiateWithParams; priorities and auto-free change nothing here.
    if ((flags & ~(unsigned long long)(cudaGraphInstantiateFlagAutoFreeOnLaunch |
                                       cudaGraphInstantiateFlagUseNodePriority)) != 0)
        return set_error(cudaErrorInvalidValue);
    std::lock_guard<std::mutex> lock(g_graph_mu);
    if (exec == nullptr || !__sim::live_graph(graph)) return set_error(cudaErrorInvalidValue);
    auto x = std::make_unique<CUgraphExec_st>();
    x->flags = flags;
    x->deps = __sim::dependency_indices(graph);
    bool acyclic = __sim::topological_order(x->deps, &x->order);
    for (const auto& n : graph->nodes) {
        x->types.push_back(n->op.type);
        x->ops.emplace_back();
        acyclic = acyclic && __sim::exec_form(n->op, &x->ops.back());
        x->index_of[n.get()] = n->index;
    }
    if (!acyclic) {
        __sim::graph_note("cudaGraphInstantiate: the graph's dependencies form a cycle; returns cudaErrorInvalidValue");
        return set_error(cudaErrorInvalidValue);
    }
    *exec = x.release();
    __sim::g_execs.insert(*exec);
    return cudaSuccess;
}

cudaError_t cudaGraphInstantiate(cudaGraphExec_t* exec, cudaGraph_t graph, unsigned long long flags) {
    return cudaGraphInstantiateWithFlags(exec, graph, flags);
}

cudaError_t cudaGraphUpload(cudaGraphExec_t exec, cudaStream_t stream) {
    (void)stream;
    std::lock_guard<std::mutex> lock(g_graph_mu);
    if (__sim::g_execs.count(exec) == 0) return set_error(cudaErrorInvalidValue);
    return __sim::sticky_error();  // nothing to upload: graphs run from host memory
}

cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream) {
    std::vector<NodeOp> ops;
    {
        std::lock_guard<std::mutex> lock(g_graph_mu);
        if (__sim::g_execs.count(exec) == 0) return set_error(cudaErrorInvalidValue);
        if (cudaError_t e = __sim::sticky_error()) return e;
        for (size_t i : exec->order) __sim::expand_op(exec->ops[i], &ops);
        // Allocations of its previous launch must be freed first (or be freed now, on request).
        const bool auto_free = (exec->flags & cudaGraphInstantiateFlagAutoFreeOnLaunch) != 0;
        if (cudaError_t e = __sim::free_previous_allocations(ops, auto_free)) return e;
        if (__sim::capturing(stream)) {
            // Launched into a capture: its work joins the captured chain, in its replay order.
            for (NodeOp& op : ops)
                if (cudaError_t e = __sim::capture_node(std::move(op))) return e;
            return cudaSuccess;
        }
    }
    // Outside the lock: a host node may build or launch graphs itself.
    for (const NodeOp& op : ops)
        if (cudaError_t e = __sim::run_op(op)) return e;
    return cudaSuccess;
}

cudaError_t cudaGraphExecUpdate(cudaGraphExec_t exec, cudaGraph_t graph, cudaGraphExecUpdateResultInfo* info) {
    std::lock_guard<std::mutex> lock(g_graph_mu);
    if (__sim::g_execs.count(exec) == 0 || !__sim::live_graph(graph) || info == nullptr)
        return set_error(cudaErrorInvalidValue);
    *info = cudaGraphExecUpdateResultInfo{cudaGraphExecUpdateSuccess, nullptr, nullptr};
    const auto deps = __sim::dependency_indices(graph);
    auto fail = [&](cudaGraphExecUpdateResult r, cudaGraphNode_t node) {
        *info = cudaGraphExecUpdateResultInfo{r, node, nullptr};
        return set_error(cudaErrorGraphExecUpdateFailure);
    };
    if (graph->nodes.size() != exec->types.size()) return fail(cudaGraphExecUpdateErrorTopologyChanged, nullptr);
    for (size_t i = 0; i < deps.size(); ++i) {
        if (deps[i] != exec->deps[i]) return fail(cudaGraphExecUpdateErrorTopologyChanged, graph->nodes[i].get());
        if (graph->nodes[i]->op.type != exec->types[i])
            return fail(cudaGraphExecUpdateErrorNodeTypeChanged, graph->nodes[i].get());
    }
    std::vector<NodeOp> ops(graph->nodes.size());
    for (const auto& n : graph->nodes)
        if (!__sim::exec_form(n->op, &ops[n->index])) return fail(cudaGraphExecUpdateErrorTopologyChanged, n.get());
    for (const auto& n : graph->nodes) exec->index_of[n.get()] = n->index;
    exec->ops = std::move(ops);
    return cudaSuccess;
}

cudaError_t cudaGraphExecKernelNodeSetParams(cudaGraphExec_t exec, cudaGraphNode_t node,
                                             const struct cudaKernelNodeParams* params) {
    if (params == nullptr) return set_error(cudaErrorInvalidValue);
    size_t index;
    __sim::KernelOp old;
    {
        std::lock_guard<std::mutex> lock(g_graph_mu);
        if (__sim::g_execs.count(exec) == 0) return set_error(cudaErrorInvalidValue);
        auto it = exec->index_of.find(node);
        if (it == exec->index_of.end() || exec->types[it->second] != cudaGraphNodeTypeKernel)
            return set_error(cudaErrorInvalidValue);
        index = it->second;
        old = exec->ops[index].kernel;
    }
    __sim::KernelOp op;
    const __sim::LaunchSpec spec{params->gridDim, params->blockDim, params->sharedMemBytes, nullptr};
    if (cudaError_t e = __sim::make_kernel_op(params->func, spec, params->kernelParams, old.file, old.line,
                                            "cudaGraphExecKernelNodeSetParams", &op))
        return e;
    std::lock_guard<std::mutex> lock(g_graph_mu);
    if (__sim::g_execs.count(exec) == 0) return set_error(cudaErrorInvalidValue);
    exec->ops[index].kernel = std::move(op);
    exec->ops[index].work = nullptr;  // a recorded library call becomes this kernel
    return cudaSuccess;
}

cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec) {
    std::lock_guard<std::mutex> lock(g_graph_mu);
    if (__sim::g_execs.count(exec) == 0) return set_error(cudaErrorInvalidValue);
    __sim::g_execs.erase(exec);
    delete exec;
    return cudaSuccess;
}

}  // extern "C"
// sim-runtime: cold
