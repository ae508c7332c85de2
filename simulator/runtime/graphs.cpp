// CUDA graphs and stream capture. A graph is a list of nodes (kernel, memcpy, memset, host,
// empty, child graph, memory allocation and free) with dependency edges; an executable graph is
// a copy of the nodes' operations in a topological order (creation order among the nodes that
// are ready; a child graph's nodes in its own such order), replayed synchronously by
// cudaGraphLaunch. Stream capture appends each captured operation as a node that depends on
// the one captured before it: every stream is one in-order stream here, so the captured
// graph is a chain and any order a GPU could pick for the original work is respected.
//
// Graph memory: an allocation node reserves its block when it is made (the address is fixed
// across launches, as CUDA promises) and the block is live, i.e. a device allocation that
// memcheck and the copy checks accept, from the node's run to its free. An allocation node
// that (transitively) depends on the frees of every earlier use of a block of this graph reuses
// that block's address, as CUDA may. The footprint is the most graph memory live at once
// since the last trim: launches never overlap here, so graphs always share physical memory.
#include "graphs_internal.h"

#include <algorithm>
#include <queue>
#include <set>
#include <thread>

#if defined(SIM_MEMCHECK)
#include <sanitizer/asan_interface.h>  // the runtime is not instrumented, but links with ASan
#endif

namespace {

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

// Graph memory that is not live is poisoned, so memcheck reports a kernel's use of it.
void set_live(const void* p, size_t n, bool live) {
#if defined(SIM_MEMCHECK)
    if (live)
        __asan_unpoison_memory_region(p, n);
    else
        __asan_poison_memory_region(p, n);
#else
    (void)p, (void)n, (void)live;
#endif
}

// Memory reserved for graph allocations; freed when no node and no live allocation uses it.
struct GraphBlock {
    void* base = nullptr;
    size_t size = 0;
    explicit GraphBlock(size_t n) : size(n) {
#if defined(SIM_MEMCHECK) || defined(SIM_RACECHECK)
        base = std::malloc(n);  // exact size, so the byte after the block is a redzone (as cudaMalloc)
#else
        base = std::aligned_alloc(256, (n + 255) & ~size_t(255));
#endif
        if (base != nullptr) set_live(base, n, false);  // not live until its node runs
    }
    ~GraphBlock() {
        if (base != nullptr) set_live(base, size, true);
        std::free(base);
    }
    GraphBlock(const GraphBlock&) = delete;
    GraphBlock& operator=(const GraphBlock&) = delete;
};

// What a node does; copied into an executable graph.
struct NodeOp {
    cudaGraphNodeType type = cudaGraphNodeTypeEmpty;
    sim::KernelOp kernel;
    std::function<void()> work;  // a kernel node recorded from a library call (cuBLAS) instead
    MemcpyOp copy;
    MemsetOp set;
    cudaHostNodeParams host{nullptr, nullptr};
    std::shared_ptr<GraphBlock> block;  // allocation node: its block ...
    cudaMemAllocNodeParams alloc{};     // ... and its parameters (dptr filled in)
    uintptr_t free_addr = 0;            // free node
    CUgraph_st* child = nullptr;        // child graph node of a graph: the copy it owns
    std::shared_ptr<const std::vector<NodeOp>> flat;  // ... of an executable graph: its ops in replay order
};

}  // namespace

struct CUgraphNode_st {
    CUgraph_st* graph;
    size_t index;  // creation order within the graph
    NodeOp op;
    std::vector<CUgraphNode_st*> deps;
};

struct CUgraph_st {
    std::vector<std::unique_ptr<CUgraphNode_st>> nodes;
    const CUgraph_st* cloned_from = nullptr;  // cudaGraphClone's source (compared, never read)
};

struct CUgraphExec_st {
    unsigned long long flags = 0;                      // cudaGraphInstantiateFlags
    std::vector<size_t> order;                         // node indices in replay order
    std::vector<NodeOp> ops;                           // by node index
    std::vector<cudaGraphNodeType> types;              // the topology it was made from ...
    std::vector<std::vector<size_t>> deps;             // ... by node index (sorted)
    std::map<const CUgraphNode_st*, size_t> index_of;  // nodes (of the graph and of updates) -> index
};

namespace sim {
namespace {

std::mutex g_graph_mu;  // guards the handle sets and the capture
std::set<CUgraph_st*> g_graphs;
std::set<CUgraphNode_st*> g_nodes;
std::set<CUgraphExec_st*> g_execs;
std::set<CUgraph_st*> g_owned;  // graphs a child graph node owns (not the user's to destroy)

// Graph allocations: every block ever reserved (by address, for free-node checks) and the
// live ones; the footprint counters (g_graph_mu guards them all).
struct LiveAlloc {
    std::shared_ptr<GraphBlock> block;
    size_t bytes;
};
std::map<uintptr_t, std::weak_ptr<GraphBlock>> g_blocks;
std::map<uintptr_t, LiveAlloc> g_live;
unsigned long long g_live_bytes = 0, g_footprint = 0, g_footprint_high = 0;

struct Capture {
    CUgraph_st* graph = nullptr;
    cudaStreamCaptureMode mode = cudaStreamCaptureModeGlobal;
    std::thread::id thread;
    unsigned long long id = 0;
    CUgraphNode_st* last = nullptr;
};
Capture g_capture;
std::atomic<bool> g_capture_active{false};
unsigned long long g_capture_ids = 0;
thread_local cudaStreamCaptureMode tl_capture_mode = cudaStreamCaptureModeGlobal;

void note(const char* text) {
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

uintptr_t address_of(const NodeOp& op) { return reinterpret_cast<uintptr_t>(op.block->base); }

// A live graph allocation stops being live (g_graph_mu held); false if ``a`` is none.
bool release_locked(uintptr_t a) {
    auto it = g_live.find(a);
    if (it == g_live.end()) return false;
    {
        std::lock_guard<std::mutex> lock(g_state_mu);
        g_allocs.erase(a);
    }
    set_live(reinterpret_cast<void*>(a), it->second.bytes, false);
    g_live_bytes -= it->second.bytes;
    g_live.erase(it);
    return true;
}

cudaError_t run_alloc(const NodeOp& op) {
    std::lock_guard<std::mutex> lock(g_graph_mu);
    if (cudaError_t e = sticky_error()) return e;
    const uintptr_t a = address_of(op);
    if (g_live.count(a) != 0) {  // cudaGraphLaunch checks this first; a capture replay may not
        note("graph allocation node: its address is still allocated (free it before the graph runs again); "
             "returns cudaErrorInvalidValue");
        return set_error(cudaErrorInvalidValue);
    }
    const size_t bytes = op.alloc.bytesize;
    g_live[a] = LiveAlloc{op.block, bytes};
    {
        std::lock_guard<std::mutex> state(g_state_mu);
        g_allocs[a] = bytes;
    }
    set_live(reinterpret_cast<void*>(a), bytes, true);
    g_live_bytes += bytes;
    g_footprint = std::max(g_footprint, g_live_bytes);
    g_footprint_high = std::max(g_footprint_high, g_footprint);
    return cudaSuccess;
}

cudaError_t run_free(const NodeOp& op) {
    std::lock_guard<std::mutex> lock(g_graph_mu);
    if (cudaError_t e = sticky_error()) return e;
    if (!release_locked(op.free_addr)) {
        report("%s: graph free node (%p): not a live graph allocation (freed already, or never allocated)",
               mode_name(), reinterpret_cast<void*>(op.free_addr));
        return set_error(cudaErrorInvalidValue);
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
        case cudaGraphNodeTypeHost:
            if (cudaError_t e = sticky_error()) return e;
            op.host.fn(op.host.userData);
            return cudaSuccess;
        default:
            return sticky_error();
    }
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

cudaError_t make_copy(const cudaMemcpy3DParms* p, MemcpyOp* c) {
    if (p == nullptr) return set_error(cudaErrorInvalidValue);
    if (p->srcArray != nullptr || p->dstArray != nullptr) {
        note("cudaGraphAddMemcpyNode: copies to or from CUDA arrays are not supported in graphs by the simulator; "
             "returns cudaErrorNotSupported");
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

// Every node ``deps`` reach, themselves included.
std::set<const CUgraphNode_st*> ancestors(const cudaGraphNode_t* deps, size_t n) {
    std::set<const CUgraphNode_st*> seen;
    std::vector<const CUgraphNode_st*> todo;
    for (size_t i = 0; i < n; ++i)
        if (g_nodes.count(deps[i]) != 0) todo.push_back(deps[i]);
    while (!todo.empty()) {
        const CUgraphNode_st* x = todo.back();
        todo.pop_back();
        if (!seen.insert(x).second) continue;
        for (const CUgraphNode_st* d : x->deps) todo.push_back(d);
    }
    return seen;
}

// A block of ``graph`` that an allocation after ``deps`` may reuse: every earlier allocation
// of it is freed by a node the new one depends on (g_graph_mu held).
std::shared_ptr<GraphBlock> reusable_block(const CUgraph_st* graph, const cudaGraphNode_t* deps, size_t n,
                                           size_t bytes) {
    const auto before = ancestors(deps, n);
    std::map<uintptr_t, int> allocs, freed_before;
    std::vector<std::shared_ptr<GraphBlock>> blocks;
    for (const auto& node : graph->nodes) {
        if (node->op.type == cudaGraphNodeTypeMemAlloc) {
            if (allocs[address_of(node->op)]++ == 0) blocks.push_back(node->op.block);
        } else if (node->op.type == cudaGraphNodeTypeMemFree && before.count(node.get()) != 0) {
            ++freed_before[node->op.free_addr];
        }
    }
    for (const auto& b : blocks) {
        const uintptr_t a = reinterpret_cast<uintptr_t>(b->base);
        if (b->size >= bytes && freed_before[a] == allocs[a]) return b;
    }
    return nullptr;
}

// A new allocation node (g_graph_mu held); params->dptr receives its address.
cudaError_t add_alloc_node(cudaGraphNode_t* out, cudaGraph_t graph, const cudaGraphNode_t* deps, size_t num_deps,
                           cudaMemAllocNodeParams* params) {
    if (params == nullptr || params->bytesize == 0 || !live_graph(graph)) return set_error(cudaErrorInvalidValue);
    const cudaMemPoolProps& p = params->poolProps;
    if (p.allocType != cudaMemAllocationTypePinned || p.location.type != cudaMemLocationTypeDevice ||
        (params->accessDescCount > 0 && params->accessDescs == nullptr))
        return set_error(cudaErrorInvalidValue);
    if (p.location.id != 0) return set_error(cudaErrorInvalidDevice);
    for (size_t i = 0; i < params->accessDescCount; ++i) {
        const cudaMemAccessDesc& d = params->accessDescs[i];
        if (d.location.type != cudaMemLocationTypeDevice) return set_error(cudaErrorInvalidValue);
        if (d.location.id != 0) return set_error(cudaErrorInvalidDevice);
    }
    if (params->bytesize > ((size_t)1 << 40)) return set_error(cudaErrorMemoryAllocation);
    NodeOp n;
    n.type = cudaGraphNodeTypeMemAlloc;
    n.block = reusable_block(graph, deps, num_deps, params->bytesize);
    if (n.block == nullptr) {
        n.block = std::make_shared<GraphBlock>(params->bytesize);
        if (n.block->base == nullptr) return set_error(cudaErrorMemoryAllocation);
    }
    n.alloc = *params;
    n.alloc.dptr = n.block->base;
    n.alloc.accessDescs = nullptr;  // not kept: the caller's array may go away
    n.alloc.accessDescCount = 0;
    std::weak_ptr<GraphBlock> weak = n.block;
    void* base = n.block->base;
    if (cudaError_t e = add_node(out, graph, deps, num_deps, std::move(n))) return e;
    g_blocks[reinterpret_cast<uintptr_t>(base)] = weak;
    params->dptr = base;
    return cudaSuccess;
}

// A new free node (g_graph_mu held): ``dptr`` must come from an allocation node, and be freed
// once in a graph (once per allocation node of this graph that reuses the address).
cudaError_t add_free_node(cudaGraphNode_t* out, cudaGraph_t graph, const cudaGraphNode_t* deps, size_t num_deps,
                          void* dptr) {
    const uintptr_t a = reinterpret_cast<uintptr_t>(dptr);
    auto it = g_blocks.find(a);
    if (!live_graph(graph) || it == g_blocks.end() || it->second.expired()) return set_error(cudaErrorInvalidValue);
    int allocs = 0, frees = 0;
    for (const auto& node : graph->nodes) {
        allocs += node->op.type == cudaGraphNodeTypeMemAlloc && address_of(node->op) == a;
        frees += node->op.type == cudaGraphNodeTypeMemFree && node->op.free_addr == a;
    }
    if (frees >= std::max(allocs, 1)) return set_error(cudaErrorInvalidValue);  // a second free
    NodeOp n;
    n.type = cudaGraphNodeTypeMemFree;
    n.free_addr = a;
    return add_node(out, graph, deps, num_deps, std::move(n));
}

bool has_memory_nodes(const CUgraph_st* g) {
    for (const auto& node : g->nodes) {
        const cudaGraphNodeType t = node->op.type;
        if (t == cudaGraphNodeTypeMemAlloc || t == cudaGraphNodeTypeMemFree) return true;
        if (node->op.child != nullptr && has_memory_nodes(node->op.child)) return true;
    }
    return false;
}

// A copy of ``g``, for the user (cudaGraphClone) or owned by a child graph node (g_graph_mu held).
CUgraph_st* clone_graph(const CUgraph_st* g, bool owned) {
    auto* c = new CUgraph_st();
    c->cloned_from = g;
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

bool exec_form(const NodeOp& op, NodeOp* out);

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
void expand(const NodeOp& op, std::vector<NodeOp>* out) {
    if (op.flat == nullptr) {
        out->push_back(op);
        return;
    }
    for (const NodeOp& inner : *op.flat) expand(inner, out);
}

}  // namespace

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

bool capture_malloc(void** ptr, size_t size, cudaError_t* result) {
    if (!capturing(nullptr)) return false;
    std::lock_guard<std::mutex> lock(g_graph_mu);
    if (!g_capture_active.load()) return false;
    if (ptr == nullptr) {
        *result = set_error(cudaErrorInvalidValue);
        return true;
    }
    if (size == 0) {  // as outside a capture: no allocation, a null pointer, no node
        *ptr = nullptr;
        *result = cudaSuccess;
        return true;
    }
    cudaMemAllocNodeParams params{};
    params.poolProps.allocType = cudaMemAllocationTypePinned;
    params.poolProps.location = cudaMemLocation{cudaMemLocationTypeDevice, 0};
    params.bytesize = size;
    cudaGraphNode_t node;
    CUgraphNode_st* prev = g_capture.last;
    *result = add_alloc_node(&node, g_capture.graph, prev != nullptr ? &prev : nullptr, prev != nullptr ? 1 : 0,
                             &params);
    if (*result == cudaSuccess) {
        g_capture.last = node;
        *ptr = params.dptr;
    }
    return true;
}

bool capture_free(void* ptr, cudaError_t* result) {
    if (!capturing(nullptr)) return false;
    std::lock_guard<std::mutex> lock(g_graph_mu);
    if (!g_capture_active.load()) return false;
    cudaGraphNode_t node;
    CUgraphNode_st* prev = g_capture.last;
    *result = add_free_node(&node, g_capture.graph, prev != nullptr ? &prev : nullptr, prev != nullptr ? 1 : 0, ptr);
    if (*result == cudaSuccess) g_capture.last = node;
    return true;
}

bool free_graph_allocation(void* ptr) {
    std::lock_guard<std::mutex> lock(g_graph_mu);
    return release_locked(reinterpret_cast<uintptr_t>(ptr));
}

void reset_graph_allocations() {
    std::lock_guard<std::mutex> lock(g_graph_mu);
    while (!g_live.empty()) release_locked(g_live.begin()->first);
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

void capture_kernel(const LaunchSpec& spec, const char* name, const char* file, int line, const void* kernel,
                    void (*invoke)(void*), void (*destroy)(void*), void* pack) {
    KernelOp op;
    op.spec = spec;
    op.name = name;
    op.file = file;
    op.line = line;
    op.kernel = kernel;
    op.invoke = invoke;
    op.pack = std::shared_ptr<void>(pack, destroy);
    capture_op(op);  // an error is this thread's last error, as for a launch
}

}  // namespace sim

using sim::g_graph_mu;
using sim::set_error;

extern "C" {

// ---- work that a capture records -------------------------------------------------------------
cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t count, enum cudaMemcpyKind kind, cudaStream_t stream) {
    if (sim::capturing(stream)) {
        if (cudaError_t e = sim::sticky_error()) return e;
        NodeOp n;
        n.type = cudaGraphNodeTypeMemcpy;
        n.copy.dst = static_cast<char*>(dst);
        n.copy.src = static_cast<const char*>(src);
        n.copy.width = count;
        n.copy.kind = kind;
        std::lock_guard<std::mutex> lock(g_graph_mu);
        if (sim::g_capture_active.load()) return sim::capture_node(std::move(n));
    }
    return cudaMemcpy(dst, src, count, kind);
}

cudaError_t cudaMemsetAsync(void* ptr, int value, size_t count, cudaStream_t stream) {
    if (sim::capturing(stream)) {
        if (cudaError_t e = sim::sticky_error()) return e;
        NodeOp n;
        n.type = cudaGraphNodeTypeMemset;
        n.set.dst = static_cast<char*>(ptr);
        n.set.value = (unsigned char)value;
        n.set.width = count;
        std::lock_guard<std::mutex> lock(g_graph_mu);
        if (sim::g_capture_active.load()) return sim::capture_node(std::move(n));
    }
    return cudaMemset(ptr, value, count);
}

// Work in a stream is done when the call returns, so a host function runs at once, in order.
cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void* user_data) {
    if (fn == nullptr) return set_error(cudaErrorInvalidValue);
    if (cudaError_t e = sim::sticky_error()) return e;
    if (sim::capturing(stream)) {
        NodeOp n;
        n.type = cudaGraphNodeTypeHost;
        n.host = cudaHostNodeParams{fn, user_data};
        std::lock_guard<std::mutex> lock(g_graph_mu);
        if (sim::g_capture_active.load()) return sim::capture_node(std::move(n));
    }
    fn(user_data);
    return cudaSuccess;
}

// ---- stream capture --------------------------------------------------------------------------
cudaError_t cudaStreamBeginCapture(cudaStream_t stream, enum cudaStreamCaptureMode mode) {
    (void)stream;
    if ((int)mode < 0 || (int)mode > 2) return set_error(cudaErrorInvalidValue);
    if (cudaError_t e = sim::sticky_error()) return e;
    std::lock_guard<std::mutex> lock(g_graph_mu);
    // One capture at a time; CUDA documents cudaErrorInvalidValue for a stream that cannot begin one.
    if (sim::g_capture_active.load()) return set_error(cudaErrorInvalidValue);
    auto* graph = new CUgraph_st();
    sim::g_graphs.insert(graph);
    sim::g_capture = sim::Capture{graph, mode, std::this_thread::get_id(), ++sim::g_capture_ids, nullptr};
    sim::g_capture_active.store(true);
    return cudaSuccess;
}

cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t* graph) {
    (void)stream;
    if (graph == nullptr) return set_error(cudaErrorInvalidValue);
    std::lock_guard<std::mutex> lock(g_graph_mu);
    if (!sim::g_capture_active.load()) return set_error(cudaErrorInvalidValue);  // not capturing
    if (sim::g_capture.mode != cudaStreamCaptureModeRelaxed && sim::g_capture.thread != std::this_thread::get_id())
        return set_error(cudaErrorStreamCaptureWrongThread);
    *graph = sim::g_capture.graph;
    sim::g_capture = sim::Capture{};
    sim::g_capture_active.store(false);
    return cudaSuccess;
}

cudaError_t cudaStreamIsCapturing(cudaStream_t stream, enum cudaStreamCaptureStatus* status) {
    if (status == nullptr) return set_error(cudaErrorInvalidValue);
    *status = sim::capturing(stream) ? cudaStreamCaptureStatusActive : cudaStreamCaptureStatusNone;
    return sim::sticky_error();
}

cudaError_t cudaStreamGetCaptureInfo(cudaStream_t stream, enum cudaStreamCaptureStatus* status,
                                     unsigned long long* id, cudaGraph_t* graph,
                                     const cudaGraphNode_t** dependencies, const cudaGraphEdgeData** edge_data,
                                     size_t* num_dependencies) {
    (void)stream;
    if (status == nullptr) return set_error(cudaErrorInvalidValue);
    std::lock_guard<std::mutex> lock(g_graph_mu);
    const bool active = sim::g_capture_active.load();
    *status = active ? cudaStreamCaptureStatusActive : cudaStreamCaptureStatusNone;
    if (id != nullptr) *id = active ? sim::g_capture.id : 0;
    if (graph != nullptr) *graph = active ? sim::g_capture.graph : nullptr;
    // The one node the next captured operation will depend on (none at the start).
    static thread_local cudaGraphNode_t last;
    last = active ? sim::g_capture.last : nullptr;
    if (dependencies != nullptr) *dependencies = last != nullptr ? &last : nullptr;
    if (edge_data != nullptr) *edge_data = nullptr;  // every edge is a plain full dependency
    if (num_dependencies != nullptr) *num_dependencies = last != nullptr ? 1 : 0;
    return sim::sticky_error();
}

cudaError_t cudaThreadExchangeStreamCaptureMode(enum cudaStreamCaptureMode* mode) {
    if (mode == nullptr || (int)*mode < 0 || (int)*mode > 2) return set_error(cudaErrorInvalidValue);
    std::swap(*mode, sim::tl_capture_mode);  // kept; no call is refused because of it
    return cudaSuccess;
}

// ---- building graphs -------------------------------------------------------------------------
cudaError_t cudaGraphCreate(cudaGraph_t* graph, unsigned int flags) {
    if (graph == nullptr || flags != 0) return set_error(cudaErrorInvalidValue);
    std::lock_guard<std::mutex> lock(g_graph_mu);
    *graph = new CUgraph_st();
    sim::g_graphs.insert(*graph);
    return cudaSuccess;
}

cudaError_t cudaGraphAddKernelNode(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* deps,
                                   size_t num_deps, const struct cudaKernelNodeParams* params, const char* file,
                                   int line) {
    if (params == nullptr) return set_error(cudaErrorInvalidValue);
    if (params->kernelParams == nullptr && params->extra != nullptr) {
        sim::note("cudaGraphAddKernelNode: arguments in the 'extra' format are not supported by the simulator "
                  "(pass kernelParams); returns cudaErrorNotSupported");
        return set_error(cudaErrorNotSupported);
    }
    NodeOp n;
    n.type = cudaGraphNodeTypeKernel;
    const sim::LaunchSpec spec{params->gridDim, params->blockDim, params->sharedMemBytes, nullptr};
    if (cudaError_t e = sim::make_kernel_op(params->func, spec, params->kernelParams, file, line,
                                            "cudaGraphAddKernelNode", &n.kernel))
        return e;
    std::lock_guard<std::mutex> lock(g_graph_mu);
    return sim::add_node(node, graph, deps, num_deps, std::move(n));
}

cudaError_t cudaGraphAddMemcpyNode(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* deps,
                                   size_t num_deps, const struct cudaMemcpy3DParms* params) {
    NodeOp n;
    n.type = cudaGraphNodeTypeMemcpy;
    if (cudaError_t e = sim::make_copy(params, &n.copy)) return e;
    std::lock_guard<std::mutex> lock(g_graph_mu);
    return sim::add_node(node, graph, deps, num_deps, std::move(n));
}

cudaError_t cudaGraphAddMemcpyNode1D(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* deps,
                                     size_t num_deps, void* dst, const void* src, size_t count,
                                     enum cudaMemcpyKind kind) {
    if (dst == nullptr || src == nullptr || count == 0 || (int)kind < 0 || (int)kind > 4)
        return set_error(cudaErrorInvalidValue);
    NodeOp n;
    n.type = cudaGraphNodeTypeMemcpy;
    n.copy.dst = static_cast<char*>(dst);
    n.copy.src = static_cast<const char*>(src);
    n.copy.width = count;
    n.copy.kind = kind;
    std::lock_guard<std::mutex> lock(g_graph_mu);
    return sim::add_node(node, graph, deps, num_deps, std::move(n));
}

cudaError_t cudaGraphAddMemsetNode(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* deps,
                                   size_t num_deps, const struct cudaMemsetParams* params) {
    if (params == nullptr || params->dst == nullptr || params->width == 0 || params->height == 0 ||
        (params->elementSize != 1 && params->elementSize != 2 && params->elementSize != 4) ||
        (params->height > 1 && params->pitch < params->width * params->elementSize))
        return set_error(cudaErrorInvalidValue);
    NodeOp n;
    n.type = cudaGraphNodeTypeMemset;
    n.set.dst = static_cast<char*>(params->dst);
    n.set.pitch = params->pitch;
    n.set.value = params->value;
    n.set.elem = params->elementSize;
    n.set.width = params->width;
    n.set.height = params->height;
    std::lock_guard<std::mutex> lock(g_graph_mu);
    return sim::add_node(node, graph, deps, num_deps, std::move(n));
}

cudaError_t cudaGraphAddHostNode(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* deps,
                                 size_t num_deps, const struct cudaHostNodeParams* params) {
    if (params == nullptr || params->fn == nullptr) return set_error(cudaErrorInvalidValue);
    NodeOp n;
    n.type = cudaGraphNodeTypeHost;
    n.host = *params;
    std::lock_guard<std::mutex> lock(g_graph_mu);
    return sim::add_node(node, graph, deps, num_deps, std::move(n));
}

cudaError_t cudaGraphAddEmptyNode(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* deps,
                                  size_t num_deps) {
    std::lock_guard<std::mutex> lock(g_graph_mu);
    return sim::add_node(node, graph, deps, num_deps, NodeOp{});
}

cudaError_t cudaGraphAddDependencies(cudaGraph_t graph, const cudaGraphNode_t* from, const cudaGraphNode_t* to,
                                     const cudaGraphEdgeData* edge_data, size_t count) {
    std::lock_guard<std::mutex> lock(g_graph_mu);
    if (!sim::live_graph(graph) || (count > 0 && (from == nullptr || to == nullptr)))
        return set_error(cudaErrorInvalidValue);
    for (size_t i = 0; i < count; ++i) {
        const cudaGraphEdgeData* d = edge_data != nullptr ? &edge_data[i] : nullptr;
        if (d != nullptr && (d->from_port != 0 || d->to_port != 0 || d->type != 0)) {
            sim::note("cudaGraphAddDependencies: only full (default) dependencies are supported by the simulator");
            return set_error(cudaErrorInvalidValue);
        }
        for (cudaGraphNode_t n : {from[i], to[i]})
            if (sim::g_nodes.count(n) == 0 || n->graph != graph) return set_error(cudaErrorInvalidValue);
        auto& deps = to[i]->deps;
        if (from[i] == to[i] || std::find(deps.begin(), deps.end(), from[i]) != deps.end())
            return set_error(cudaErrorInvalidValue);  // a self edge, or one that exists
    }
    for (size_t i = 0; i < count; ++i) to[i]->deps.push_back(from[i]);
    return cudaSuccess;
}

cudaError_t cudaGraphGetNodes(cudaGraph_t graph, cudaGraphNode_t* nodes, size_t* num_nodes) {
    std::lock_guard<std::mutex> lock(g_graph_mu);
    if (!sim::live_graph(graph) || num_nodes == nullptr) return set_error(cudaErrorInvalidValue);
    if (nodes != nullptr) {
        for (size_t i = 0; i < *num_nodes; ++i) nodes[i] = i < graph->nodes.size() ? graph->nodes[i].get() : nullptr;
    }
    *num_nodes = graph->nodes.size();
    return cudaSuccess;
}

cudaError_t cudaGraphGetRootNodes(cudaGraph_t graph, cudaGraphNode_t* nodes, size_t* num_nodes) {
    std::lock_guard<std::mutex> lock(g_graph_mu);
    if (!sim::live_graph(graph) || num_nodes == nullptr) return set_error(cudaErrorInvalidValue);
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
    if (type == nullptr || sim::g_nodes.count(node) == 0) return set_error(cudaErrorInvalidValue);
    *type = node->op.type;
    return cudaSuccess;
}

cudaError_t cudaGraphDestroy(cudaGraph_t graph) {
    std::lock_guard<std::mutex> lock(g_graph_mu);
    if (!sim::live_graph(graph) || sim::g_owned.count(graph) != 0 ||
        (sim::g_capture_active.load() && sim::g_capture.graph == graph))
        return set_error(cudaErrorInvalidValue);
    sim::destroy_graph(graph);
    return cudaSuccess;
}

// ---- executable graphs -----------------------------------------------------------------------
cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t* exec, cudaGraph_t graph, unsigned long long flags) {
    if (flags & cudaGraphInstantiateFlagDeviceLaunch) {
        sim::note("cudaGraphInstantiate: graphs launched from the device are not supported by the simulator; "
                  "returns cudaErrorNotSupported");
        return set_error(cudaErrorNotSupported);
    }
    // Upload is only for cudaGraphInstantiateWithParams; priorities and auto-free change nothing here.
    if ((flags & ~(unsigned long long)(cudaGraphInstantiateFlagAutoFreeOnLaunch |
                                       cudaGraphInstantiateFlagUseNodePriority)) != 0)
        return set_error(cudaErrorInvalidValue);
    std::lock_guard<std::mutex> lock(g_graph_mu);
    if (exec == nullptr || !sim::live_graph(graph)) return set_error(cudaErrorInvalidValue);
    auto x = std::make_unique<CUgraphExec_st>();
    x->flags = flags;
    x->deps = sim::dependency_indices(graph);
    bool acyclic = sim::topological_order(x->deps, &x->order);
    for (const auto& n : graph->nodes) {
        x->types.push_back(n->op.type);
        x->ops.emplace_back();
        acyclic = acyclic && sim::exec_form(n->op, &x->ops.back());
        x->index_of[n.get()] = n->index;
    }
    if (!acyclic) {
        sim::note("cudaGraphInstantiate: the graph's dependencies form a cycle; returns cudaErrorInvalidValue");
        return set_error(cudaErrorInvalidValue);
    }
    *exec = x.release();
    sim::g_execs.insert(*exec);
    return cudaSuccess;
}

cudaError_t cudaGraphInstantiate(cudaGraphExec_t* exec, cudaGraph_t graph, unsigned long long flags) {
    return cudaGraphInstantiateWithFlags(exec, graph, flags);
}

cudaError_t cudaGraphUpload(cudaGraphExec_t exec, cudaStream_t stream) {
    (void)stream;
    std::lock_guard<std::mutex> lock(g_graph_mu);
    if (sim::g_execs.count(exec) == 0) return set_error(cudaErrorInvalidValue);
    return sim::sticky_error();  // nothing to upload: graphs run from host memory
}

cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream) {
    std::vector<NodeOp> ops;
    {
        std::lock_guard<std::mutex> lock(g_graph_mu);
        if (sim::g_execs.count(exec) == 0) return set_error(cudaErrorInvalidValue);
        if (cudaError_t e = sim::sticky_error()) return e;
        for (size_t i : exec->order) sim::expand(exec->ops[i], &ops);
        // Allocations of its previous launch must be freed first (or be freed now, on request).
        for (const NodeOp& op : ops) {
            if (op.type != cudaGraphNodeTypeMemAlloc || sim::g_live.count(sim::address_of(op)) == 0) continue;
            if ((exec->flags & cudaGraphInstantiateFlagAutoFreeOnLaunch) == 0) {
                sim::note("cudaGraphLaunch: an allocation of the graph's previous launch is not freed (free it, or "
                          "instantiate with cudaGraphInstantiateFlagAutoFreeOnLaunch); returns cudaErrorInvalidValue");
                return set_error(cudaErrorInvalidValue);
            }
            sim::release_locked(sim::address_of(op));
        }
        if (sim::capturing(stream)) {
            // Launched into a capture: its work joins the captured chain, in its replay order.
            for (NodeOp& op : ops)
                if (cudaError_t e = sim::capture_node(std::move(op))) return e;
            return cudaSuccess;
        }
    }
    // Outside the lock: a host node may build or launch graphs itself.
    for (const NodeOp& op : ops)
        if (cudaError_t e = sim::run_op(op)) return e;
    return cudaSuccess;
}

cudaError_t cudaGraphExecUpdate(cudaGraphExec_t exec, cudaGraph_t graph, cudaGraphExecUpdateResultInfo* info) {
    std::lock_guard<std::mutex> lock(g_graph_mu);
    if (sim::g_execs.count(exec) == 0 || !sim::live_graph(graph) || info == nullptr)
        return set_error(cudaErrorInvalidValue);
    *info = cudaGraphExecUpdateResultInfo{cudaGraphExecUpdateSuccess, nullptr, nullptr};
    const auto deps = sim::dependency_indices(graph);
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
        if (!sim::exec_form(n->op, &ops[n->index])) return fail(cudaGraphExecUpdateErrorTopologyChanged, n.get());
    for (const auto& n : graph->nodes) exec->index_of[n.get()] = n->index;
    exec->ops = std::move(ops);
    return cudaSuccess;
}

cudaError_t cudaGraphExecKernelNodeSetParams(cudaGraphExec_t exec, cudaGraphNode_t node,
                                             const struct cudaKernelNodeParams* params) {
    if (params == nullptr) return set_error(cudaErrorInvalidValue);
    size_t index;
    sim::KernelOp old;
    {
        std::lock_guard<std::mutex> lock(g_graph_mu);
        if (sim::g_execs.count(exec) == 0) return set_error(cudaErrorInvalidValue);
        auto it = exec->index_of.find(node);
        if (it == exec->index_of.end() || exec->types[it->second] != cudaGraphNodeTypeKernel)
            return set_error(cudaErrorInvalidValue);
        index = it->second;
        old = exec->ops[index].kernel;
    }
    sim::KernelOp op;
    const sim::LaunchSpec spec{params->gridDim, params->blockDim, params->sharedMemBytes, nullptr};
    if (cudaError_t e = sim::make_kernel_op(params->func, spec, params->kernelParams, old.file, old.line,
                                            "cudaGraphExecKernelNodeSetParams", &op))
        return e;
    std::lock_guard<std::mutex> lock(g_graph_mu);
    if (sim::g_execs.count(exec) == 0) return set_error(cudaErrorInvalidValue);
    exec->ops[index].kernel = std::move(op);
    exec->ops[index].work = nullptr;  // a recorded library call becomes this kernel
    return cudaSuccess;
}

cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec) {
    std::lock_guard<std::mutex> lock(g_graph_mu);
    if (sim::g_execs.count(exec) == 0) return set_error(cudaErrorInvalidValue);
    sim::g_execs.erase(exec);
    delete exec;
    return cudaSuccess;
}

// ---- child graphs ------------------------------------------------------------------------------
cudaError_t cudaGraphAddChildGraphNode(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* deps,
                                       size_t num_deps, cudaGraph_t child_graph) {
    std::lock_guard<std::mutex> lock(g_graph_mu);
    if (!sim::live_graph(child_graph) || child_graph == graph || !sim::live_graph(graph))
        return set_error(cudaErrorInvalidValue);
    if (sim::has_memory_nodes(child_graph)) {
        sim::note("cudaGraphAddChildGraphNode: a graph with memory allocation or free nodes cannot be a child "
                  "graph; returns cudaErrorInvalidValue");
        return set_error(cudaErrorInvalidValue);
    }
    NodeOp n;
    n.type = cudaGraphNodeTypeGraph;
    n.child = sim::clone_graph(child_graph, true);
    CUgraph_st* child = n.child;
    cudaError_t e = sim::add_node(node, graph, deps, num_deps, std::move(n));
    if (e != cudaSuccess) sim::destroy_graph(child);
    return e;
}

cudaError_t cudaGraphChildGraphNodeGetGraph(cudaGraphNode_t node, cudaGraph_t* graph) {
    std::lock_guard<std::mutex> lock(g_graph_mu);
    if (graph == nullptr || sim::g_nodes.count(node) == 0 || node->op.type != cudaGraphNodeTypeGraph)
        return set_error(cudaErrorInvalidValue);
    *graph = node->op.child;  // the node's own copy: changes to it change the node
    return cudaSuccess;
}

cudaError_t cudaGraphClone(cudaGraph_t* clone, cudaGraph_t original) {
    std::lock_guard<std::mutex> lock(g_graph_mu);
    if (clone == nullptr || !sim::live_graph(original)) return set_error(cudaErrorInvalidValue);
    if (sim::has_memory_nodes(original)) {  // CUDA: a graph with memory nodes cannot be cloned
        sim::note("cudaGraphClone: a graph with memory allocation or free nodes cannot be cloned; returns "
                  "cudaErrorNotSupported");
        return set_error(cudaErrorNotSupported);
    }
    *clone = sim::clone_graph(original, false);
    return cudaSuccess;
}

cudaError_t cudaGraphNodeFindInClone(cudaGraphNode_t* node, cudaGraphNode_t original_node, cudaGraph_t cloned_graph) {
    std::lock_guard<std::mutex> lock(g_graph_mu);
    if (node == nullptr || sim::g_nodes.count(original_node) == 0 || !sim::live_graph(cloned_graph) ||
        cloned_graph->cloned_from != original_node->graph || original_node->index >= cloned_graph->nodes.size())
        return set_error(cudaErrorInvalidValue);
    *node = cloned_graph->nodes[original_node->index].get();  // a clone keeps the creation order
    return cudaSuccess;
}

// ---- graph memory ------------------------------------------------------------------------------
cudaError_t cudaGraphAddMemAllocNode(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* deps,
                                     size_t num_deps, struct cudaMemAllocNodeParams* params) {
    std::lock_guard<std::mutex> lock(g_graph_mu);
    return sim::add_alloc_node(node, graph, deps, num_deps, params);
}

cudaError_t cudaGraphMemAllocNodeGetParams(cudaGraphNode_t node, struct cudaMemAllocNodeParams* params) {
    std::lock_guard<std::mutex> lock(g_graph_mu);
    if (params == nullptr || sim::g_nodes.count(node) == 0 || node->op.type != cudaGraphNodeTypeMemAlloc)
        return set_error(cudaErrorInvalidValue);
    *params = node->op.alloc;
    return cudaSuccess;
}

cudaError_t cudaGraphAddMemFreeNode(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* deps,
                                    size_t num_deps, void* dptr) {
    std::lock_guard<std::mutex> lock(g_graph_mu);
    return sim::add_free_node(node, graph, deps, num_deps, dptr);
}

cudaError_t cudaGraphMemFreeNodeGetParams(cudaGraphNode_t node, void* dptr_out) {
    std::lock_guard<std::mutex> lock(g_graph_mu);
    if (dptr_out == nullptr || sim::g_nodes.count(node) == 0 || node->op.type != cudaGraphNodeTypeMemFree)
        return set_error(cudaErrorInvalidValue);
    *static_cast<void**>(dptr_out) = reinterpret_cast<void*>(node->op.free_addr);
    return cudaSuccess;
}

// Used and reserved memory are the same number here: the most graph memory live at once since
// the last trim (nothing else is cached, and launches never overlap).
cudaError_t cudaDeviceGetGraphMemAttribute(int device, enum cudaGraphMemAttributeType attr, void* value) {
    if (value == nullptr) return set_error(cudaErrorInvalidValue);
    if (device != 0) return set_error(cudaErrorInvalidDevice);
    std::lock_guard<std::mutex> lock(g_graph_mu);
    auto* out = static_cast<unsigned long long*>(value);
    switch (attr) {
        case cudaGraphMemAttrUsedMemCurrent:
        case cudaGraphMemAttrReservedMemCurrent: *out = sim::g_footprint; break;
        case cudaGraphMemAttrUsedMemHigh:
        case cudaGraphMemAttrReservedMemHigh: *out = sim::g_footprint_high; break;
        default: return set_error(cudaErrorInvalidValue);
    }
    return cudaSuccess;
}

cudaError_t cudaDeviceSetGraphMemAttribute(int device, enum cudaGraphMemAttributeType attr, void* value) {
    if (value == nullptr) return set_error(cudaErrorInvalidValue);
    if (device != 0) return set_error(cudaErrorInvalidDevice);
    // Only the high-water marks may be set, and only to 0: they restart from the current value.
    if ((attr != cudaGraphMemAttrUsedMemHigh && attr != cudaGraphMemAttrReservedMemHigh) ||
        *static_cast<unsigned long long*>(value) != 0)
        return set_error(cudaErrorInvalidValue);
    std::lock_guard<std::mutex> lock(g_graph_mu);
    sim::g_footprint_high = sim::g_footprint;
    return cudaSuccess;
}

cudaError_t cudaDeviceGraphMemTrim(int device) {
    if (device != 0) return set_error(cudaErrorInvalidDevice);
    std::lock_guard<std::mutex> lock(g_graph_mu);
    sim::g_footprint = sim::g_live_bytes;  // what live allocations still hold stays reserved
    return sim::sticky_error();
}

}  // extern "C"
