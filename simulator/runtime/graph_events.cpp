// Graph event nodes: an event record node records its event when the replay reaches it; an
// event wait node waits for its event, which is at once here (a graph launch replays its nodes
// synchronously and every earlier record has completed). Stream capture makes them from
// cudaEventRecordWithFlags(cudaEventRecordExternal) and cudaStreamWaitEvent(cudaEventWaitExternal).
#include "graph_state.h"

namespace __sim {

namespace {

bool is_event_node(cudaGraphNodeType type) {
    return type == cudaGraphNodeTypeEventRecord || type == cudaGraphNodeTypeWaitEvent;
}

NodeOp event_op(cudaGraphNodeType type, cudaEvent_t event) {
    NodeOp n;
    n.type = type;
    n.event = event;
    return n;
}

cudaError_t add_event_node(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* deps, size_t num_deps,
                           cudaEvent_t event, cudaGraphNodeType type) {
    if (!event_is_live(event)) return set_error(cudaErrorInvalidResourceHandle);
    std::lock_guard<std::mutex> lock(g_graph_mu);
    return add_node(node, graph, deps, num_deps, event_op(type, event));
}

// The event of ``node``, a node of a graph of type ``type``.
cudaError_t node_event(cudaGraphNode_t node, cudaGraphNodeType type, cudaEvent_t* event_out) {
    std::lock_guard<std::mutex> lock(g_graph_mu);
    if (event_out == nullptr || g_nodes.count(node) == 0 || node->op.type != type)
        return set_error(cudaErrorInvalidValue);
    *event_out = node->op.event;
    return cudaSuccess;
}

cudaError_t set_node_event(cudaGraphNode_t node, cudaGraphNodeType type, cudaEvent_t event) {
    if (!event_is_live(event)) return set_error(cudaErrorInvalidResourceHandle);
    std::lock_guard<std::mutex> lock(g_graph_mu);
    if (g_nodes.count(node) == 0 || node->op.type != type) return set_error(cudaErrorInvalidValue);
    node->op.event = event;
    return cudaSuccess;
}

// The same change in an executable graph only: the graph it was made from keeps its event.
cudaError_t set_exec_event(cudaGraphExec_t exec, cudaGraphNode_t node, cudaGraphNodeType type, cudaEvent_t event) {
    if (!event_is_live(event)) return set_error(cudaErrorInvalidResourceHandle);
    std::lock_guard<std::mutex> lock(g_graph_mu);
    if (g_execs.count(exec) == 0) return set_error(cudaErrorInvalidValue);
    auto it = exec->index_of.find(node);
    if (it == exec->index_of.end() || exec->types[it->second] != type) return set_error(cudaErrorInvalidValue);
    exec->ops[it->second].event = event;
    return cudaSuccess;
}

}  // namespace

cudaError_t run_event_op(const NodeOp& op) {
    if (!is_event_node(op.type)) return set_error(cudaErrorInvalidValue);
    if (op.type == cudaGraphNodeTypeEventRecord) return cudaEventRecord(op.event, nullptr);
    if (!event_is_live(op.event)) return set_error(cudaErrorInvalidResourceHandle);
    return sticky_error();
}

bool capture_event_node(cudaGraphNodeType type, cudaEvent_t event, cudaError_t* result) {
    if (!g_capture_active.load(std::memory_order_acquire)) return false;
    if (!event_is_live(event)) {
        *result = set_error(cudaErrorInvalidResourceHandle);
        return true;
    }
    std::lock_guard<std::mutex> lock(g_graph_mu);
    if (!g_capture_active.load()) return false;  // the capture ended meanwhile: the caller runs it
    *result = capture_node(event_op(type, event));
    return true;
}

}  // namespace __sim

using __sim::set_error;

extern "C" {

cudaError_t cudaGraphAddEventRecordNode(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* deps,
                                        size_t num_deps, cudaEvent_t event) {
    return __sim::add_event_node(node, graph, deps, num_deps, event, cudaGraphNodeTypeEventRecord);
}

cudaError_t cudaGraphAddEventWaitNode(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* deps,
                                      size_t num_deps, cudaEvent_t event) {
    return __sim::add_event_node(node, graph, deps, num_deps, event, cudaGraphNodeTypeWaitEvent);
}

cudaError_t cudaGraphEventRecordNodeGetEvent(cudaGraphNode_t node, cudaEvent_t* event_out) {
    return __sim::node_event(node, cudaGraphNodeTypeEventRecord, event_out);
}

cudaError_t cudaGraphEventRecordNodeSetEvent(cudaGraphNode_t node, cudaEvent_t event) {
    return __sim::set_node_event(node, cudaGraphNodeTypeEventRecord, event);
}

cudaError_t cudaGraphEventWaitNodeGetEvent(cudaGraphNode_t node, cudaEvent_t* event_out) {
    return __sim::node_event(node, cudaGraphNodeTypeWaitEvent, event_out);
}

cudaError_t cudaGraphEventWaitNodeSetEvent(cudaGraphNode_t node, cudaEvent_t event) {
    return __sim::set_node_event(node, cudaGraphNodeTypeWaitEvent, event);
}

cudaError_t cudaGraphExecEventRecordNodeSetEvent(cudaGraphExec_t exec, cudaGraphNode_t node, cudaEvent_t event) {
    return __sim::set_exec_event(exec, node, cudaGraphNodeTypeEventRecord, event);
}

cudaError_t cudaGraphExecEventWaitNodeSetEvent(cudaGraphExec_t exec, cudaGraphNode_t node, cudaEvent_t event) {
    return __sim::set_exec_event(exec, node, cudaGraphNodeTypeWaitEvent, event);
}

}  // extern "C"
// sim-runtime: cold
