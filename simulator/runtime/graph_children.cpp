// Child graph nodes and graph clones: a child graph node owns a copy of its graph, which an
// executable graph replays as the copy's nodes in its own topological order.
#include "graph_state.h"

namespace __sim {

// A copy of ``g``, for the user (cudaGraphClone) or owned by a child graph node (g_graph_mu held).
CUgraph_st* clone_graph(const CUgraph_st* g, bool owned) {
    auto* c = new CUgraph_st();
    c->cloned_from = g->id;
    g_graphs.insert(c);
    if (owned) g_owned.insert(c);
    std::map<const CUgraphNode_st*, CUgraphNode_st*> copy_of;
    for (const auto& n : g->nodes) {
        NodeOp op = n->op;
        if (op.child != nullptr) op.child = clone_graph(op.child, true);
        auto node = std::make_unique<CUgraphNode_st>(CUgraphNode_st{c, n->index, std::move(op), {}});
        copy_of[n.get()] = node.get();
        g_nodes.insert(node.get());
        c->nodes.push_back(std::move(node));
    }
    // Edges after all nodes: cudaGraphAddDependencies may point at a node made later.
    for (size_t i = 0; i < g->nodes.size(); ++i)
        for (const CUgraphNode_st* d : g->nodes[i]->deps) c->nodes[i]->deps.push_back(copy_of.at(d));
    return c;
}

// Deletes ``g`` and the child graphs its nodes own (g_graph_mu held).
void destroy_graph(CUgraph_st* g) {
    for (const auto& n : g->nodes) {
        if (n->op.child != nullptr) destroy_graph(n->op.child);
        g_nodes.erase(n.get());
    }
    g_graphs.erase(g);
    g_owned.erase(g);
    delete g;  // executable graphs made from it keep their own copies
}

namespace {

// The operations of ``g`` in replay order, in their executable form; false on a cycle.
bool replay_ops(const CUgraph_st* g, std::vector<NodeOp>* out) {
    std::vector<size_t> order;
    if (!topological_order(dependency_indices(g), &order)) return false;
    for (size_t i : order) {
        out->emplace_back();
        if (!exec_form(g->nodes[i]->op, &out->back())) return false;
    }
    return true;
}

}  // namespace

// A node's operation as an executable graph keeps it: a child graph becomes its replay list.
bool exec_form(const NodeOp& op, NodeOp* out) {
    *out = op;
    if (op.child == nullptr) return true;
    auto flat = std::make_shared<std::vector<NodeOp>>();
    if (!replay_ops(op.child, flat.get())) return false;
    out->child = nullptr;
    out->flat = std::move(flat);
    return true;
}

// Appends ``op`` to ``out``, a child graph as the operations it replays.
void expand_op(const NodeOp& op, std::vector<NodeOp>* out) {
    if (op.flat == nullptr) {
        out->push_back(op);
        return;
    }
    for (const NodeOp& inner : *op.flat) expand_op(inner, out);
}

}  // namespace __sim

using __sim::g_graph_mu;
using __sim::NodeOp;
using __sim::set_error;

extern "C" {

// ---- child graphs ------------------------------------------------------------------------------
cudaError_t cudaGraphAddChildGraphNode(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* deps,
                                       size_t num_deps, cudaGraph_t child_graph) {
    std::lock_guard<std::mutex> lock(g_graph_mu);
    if (!__sim::live_graph(child_graph) || child_graph == graph || !__sim::live_graph(graph))
        return set_error(cudaErrorInvalidValue);
    if (__sim::has_memory_nodes(child_graph)) {
        __sim::graph_note("cudaGraphAddChildGraphNode: a graph with memory allocation or free nodes cannot be a child "
                  "graph; returns cudaErrorInvalidValue");
        return set_error(cudaErrorInvalidValue);
    }
    NodeOp n;
    n.type = cudaGraphNodeTypeGraph;
    n.child = __sim::clone_graph(child_graph, true);
    CUgraph_st* child = n.child;
    cudaError_t e = __sim::add_node(node, graph, deps, num_deps, std::move(n));
    if (e != cudaSuccess) __sim::destroy_graph(child);
    return e;
}

cudaError_t cudaGraphChildGraphNodeGetGraph(cudaGraphNode_t node, cudaGraph_t* graph) {
    std::lock_guard<std::mutex> lock(g_graph_mu);
    if (graph == nullptr || __sim::g_nodes.count(node) == 0 || node->op.type != cudaGraphNodeTypeGraph)
        return set_error(cudaErrorInvalidValue);
    *graph = node->op.child;  // the node's own copy: changes to it change the node
    return cudaSuccess;
}

cudaError_t cudaGraphClone(cudaGraph_t* clone, cudaGraph_t original) {
    std::lock_guard<std::mutex> lock(g_graph_mu);
    if (clone == nullptr || !__sim::live_graph(original)) return set_error(cudaErrorInvalidValue);
    if (__sim::has_memory_nodes(original)) {  // CUDA: a graph with memory nodes cannot be cloned
        __sim::graph_note("cudaGraphClone: a graph with memory allocation or free nodes cannot be cloned; returns "
                  "cudaErrorNotSupported");
        return set_error(cudaErrorNotSupported);
    }
    *clone = __sim::clone_graph(original, false);
    return cudaSuccess;
}

cudaError_t cudaGraphNodeFindInClone(cudaGraphNode_t* node, cudaGraphNode_t original_node, cudaGraph_t cloned_graph) {
    std::lock_guard<std::mutex> lock(g_graph_mu);
    if (node == nullptr || __sim::g_nodes.count(original_node) == 0 || !__sim::live_graph(cloned_graph) ||
        cloned_graph->cloned_from != original_node->graph->id || original_node->index >= cloned_graph->nodes.size())
        return set_error(cudaErrorInvalidValue);
    *node = cloned_graph->nodes[original_node->index].get();  // a clone keeps the creation order
    return cudaSuccess;
}

}  // extern "C"
// sim-runtime: cold
