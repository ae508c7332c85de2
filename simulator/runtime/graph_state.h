// Internal graph state shared by graphs.cpp (building, capture, replay), graph_memory.cpp
// (allocation and free nodes, the footprint) and graph_children.cpp (child graphs, clones);
// never included by kernel code. g_graph_mu guards everything here.
#ifndef SIM_GRAPH_STATE_H
#define SIM_GRAPH_STATE_H

#include "graphs_internal.h"

#include <atomic>
#include <map>
#include <set>
#include <thread>
#include <vector>

#pragma GCC visibility push(hidden)

namespace __sim {

struct MemcpyOp {
    char* dst = nullptr;
    const char* src = nullptr;
    size_t dpitch = 0, spitch = 0, dslice = 0, sslice = 0;
    size_t width = 0, height = 1, depth = 1;  // width in bytes
    cudaMemcpyKind kind = cudaMemcpyDefault;
};
struct MemsetOp {
    char* dst = nullptr;
    size_t pitch = 0;
    unsigned int value = 0, elem = 1;
    size_t width = 0, height = 1;  // width in elements
};

// Memory reserved for graph allocations; freed when no node and no live allocation uses it
// (graph_memory.cpp). Not live (poisoned under memcheck) until its allocation node runs.
struct GraphBlock {
    void* base = nullptr;
    size_t size = 0;
    explicit GraphBlock(size_t n);
    ~GraphBlock();
    GraphBlock(const GraphBlock&) = delete;
    GraphBlock& operator=(const GraphBlock&) = delete;
};

// What a node does; copied into an executable graph.
struct NodeOp {
    cudaGraphNodeType type = cudaGraphNodeTypeEmpty;
    __sim::KernelOp kernel;
    std::function<void()> work;  // a kernel node recorded from a library call (cuBLAS) instead
    MemcpyOp copy;
    MemsetOp set;
    cudaHostNodeParams host{nullptr, nullptr};
    std::shared_ptr<GraphBlock> block;  // allocation node: its block ...
    cudaMemAllocNodeParams alloc{};     // ... and its parameters (dptr filled in)
    uintptr_t free_addr = 0;            // free node
    cudaEvent_t event = nullptr;        // event record and event wait nodes
    CUgraph_st* child = nullptr;        // child graph node of a graph: the copy it owns
    std::shared_ptr<const std::vector<NodeOp>> flat;  // ... of an executable graph: its ops in replay order
};

}  // namespace __sim

struct CUgraphNode_st {
    CUgraph_st* graph;
    size_t index;  // creation order within the graph
    __sim::NodeOp op;
    std::vector<CUgraphNode_st*> deps;
};

namespace __sim {
// Graphs are told apart by id: a destroyed graph's address may come back for a new one.
inline unsigned long long new_graph_id() {
    static std::atomic<unsigned long long> last{0};
    return ++last;
}
}  // namespace __sim

struct CUgraph_st {
    std::vector<std::unique_ptr<CUgraphNode_st>> nodes;
    unsigned long long id = __sim::new_graph_id();
    unsigned long long cloned_from = 0;  // cudaGraphClone's source, by id
};

struct CUgraphExec_st {
    unsigned long long flags = 0;                      // cudaGraphInstantiateFlags
    std::vector<size_t> order;                         // node indices in replay order
    std::vector<__sim::NodeOp> ops;                           // by node index
    std::vector<cudaGraphNodeType> types;              // the topology it was made from ...
    std::vector<std::vector<size_t>> deps;             // ... by node index (sorted)
    std::map<const CUgraphNode_st*, size_t> index_of;  // nodes (of the graph and of updates) -> index
};

namespace __sim {

extern std::mutex g_graph_mu;
extern std::set<CUgraph_st*> g_graphs;
extern std::set<CUgraphNode_st*> g_nodes;
extern std::set<CUgraphExec_st*> g_execs;
extern std::set<CUgraph_st*> g_owned;  // graphs a child graph node owns (not the user's to destroy)

struct Capture {
    CUgraph_st* graph = nullptr;
    cudaStreamCaptureMode mode = cudaStreamCaptureModeGlobal;
    std::thread::id thread;
    unsigned long long id = 0;
    CUgraphNode_st* last = nullptr;
};
extern Capture g_capture;
extern std::atomic<bool> g_capture_active;

// ---- graphs.cpp
void graph_note(const char* text);  // "note (simulator): TEXT" on stderr
bool live_graph(cudaGraph_t g);
// A new node of ``graph`` after ``deps`` (which must be nodes of it).
cudaError_t add_node(cudaGraphNode_t* out, cudaGraph_t graph, const cudaGraphNode_t* deps, size_t num_deps,
                     NodeOp&& op);
// Appends to the capture: the node follows the one captured before it.
cudaError_t capture_node(NodeOp&& op);
// The operation of a memcpy node of ``count`` bytes (cudaGraphAddMemcpyNode1D, a captured
// cudaMemcpyAsync) and of a memset node of ``height`` rows of ``width`` elements of ``elem`` bytes,
// ``pitch`` bytes apart (cudaGraphAddMemsetNode, a captured cudaMemsetAsync: one row of bytes).
NodeOp memcpy_node(void* dst, const void* src, size_t count, cudaMemcpyKind kind);
NodeOp memset_node(void* dst, unsigned int value, unsigned int elem, size_t width, size_t height = 1,
                   size_t pitch = 0);
// Replays an event record or event wait node (graph_events.cpp).
cudaError_t run_event_op(const NodeOp& op);
// Kahn's algorithm, the lowest creation index first among ready nodes; false on a cycle.
bool topological_order(const std::vector<std::vector<size_t>>& deps, std::vector<size_t>* order);
std::vector<std::vector<size_t>> dependency_indices(const CUgraph_st* g);

// ---- graph_memory.cpp
uintptr_t address_of(const NodeOp& alloc_op);
cudaError_t run_alloc(const NodeOp& op);  // take g_graph_mu themselves
cudaError_t run_free(const NodeOp& op);
bool has_memory_nodes(const CUgraph_st* g);
// A launch of ``ops``: allocations its previous launch left live fail it, or are freed first.
cudaError_t free_previous_allocations(const std::vector<NodeOp>& ops, bool auto_free);

// ---- graph_children.cpp
CUgraph_st* clone_graph(const CUgraph_st* g, bool owned);
void destroy_graph(CUgraph_st* g);  // and the child graphs its nodes own
// A node's operation as an executable graph keeps it; false on a cycle in a child graph.
bool exec_form(const NodeOp& op, NodeOp* out);
// Appends ``op`` to ``out``, a child graph as the operations it replays.
void expand_op(const NodeOp& op, std::vector<NodeOp>* out);

}  // namespace __sim

#pragma GCC visibility pop

#endif  // SIM_GRAPH_STATE_H
