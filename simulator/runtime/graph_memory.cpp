// sim-runtime: per mode
// Graph memory (see graphs.cpp's header for the model): allocation and free nodes, their runs,
// the stream-captured cudaMallocAsync/cudaFreeAsync, cudaFree of a graph allocation, and the
// footprint attributes. An allocation node reserves its block when it is made (the address is
// fixed across launches) and the block is live, a device allocation that memcheck and the copy
// checks accept, from the node's run to its free; otherwise it is poisoned under memcheck.
#include "graph_state.h"

#include <algorithm>

#if defined(SIM_MEMCHECK)
#include <sanitizer/asan_interface.h>  // the runtime is not instrumented, but links with ASan
#endif

namespace __sim {
namespace {

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

// Every block ever reserved (by address, for free-node checks), the live allocations and the
// footprint counters (g_graph_mu guards them all).
// Graph allocations: every block ever reserved (by address, for free-node checks) and the
// live ones; the footprint counters (g_graph_mu guards them all).
struct LiveAlloc {
    std::shared_ptr<GraphBlock> block;
    size_t bytes;
};
std::map<uintptr_t, std::weak_ptr<GraphBlock>> g_blocks;
std::map<uintptr_t, LiveAlloc> g_live;
unsigned long long g_live_bytes = 0, g_footprint = 0, g_footprint_high = 0;

// A live graph allocation stops being live (g_graph_mu held); false if ``a`` is none.
bool release_locked(uintptr_t a) {
    auto it = g_live.find(a);
    if (it == g_live.end()) return false;
    {
        std::lock_guard<std::mutex> lock(g_state_mu);
        g_allocs.erase(a);
        forget_alloc(a);
    }
    set_live(reinterpret_cast<void*>(a), it->second.bytes, false);
    g_live_bytes -= it->second.bytes;
    g_live.erase(it);
    return true;
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

}  // namespace

GraphBlock::GraphBlock(size_t n) : size(n) {
    base = device_alloc(n);
    if (base != nullptr) set_live(base, n, false);  // not live until its node runs
}

GraphBlock::~GraphBlock() {
    if (base != nullptr) set_live(base, size, true);
    device_free(base);
}

uintptr_t address_of(const NodeOp& op) { return reinterpret_cast<uintptr_t>(op.block->base); }

cudaError_t run_alloc(const NodeOp& op) {
    std::lock_guard<std::mutex> lock(g_graph_mu);
    if (cudaError_t e = sticky_error()) return e;
    const uintptr_t a = address_of(op);
    if (g_live.count(a) != 0) {  // cudaGraphLaunch checks this first; a capture replay may not
        graph_note("graph allocation node: its address is still allocated (free it before the graph runs again); "
             "returns cudaErrorInvalidValue");
        return set_error(cudaErrorInvalidValue);
    }
    const size_t bytes = op.alloc.bytesize;
    g_live[a] = LiveAlloc{op.block, bytes};
    {
        std::lock_guard<std::mutex> state(g_state_mu);
        g_allocs[a] = bytes;
        record_alloc(a, current_device(), false);
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

bool has_memory_nodes(const CUgraph_st* g) {
    for (const auto& node : g->nodes) {
        const cudaGraphNodeType t = node->op.type;
        if (t == cudaGraphNodeTypeMemAlloc || t == cudaGraphNodeTypeMemFree) return true;
        if (node->op.child != nullptr && has_memory_nodes(node->op.child)) return true;
    }
    return false;
}

cudaError_t free_previous_allocations(const std::vector<NodeOp>& ops, bool auto_free) {
    for (const NodeOp& op : ops) {
        if (op.type != cudaGraphNodeTypeMemAlloc || g_live.count(address_of(op)) == 0) continue;
        if (!auto_free) {
            graph_note("cudaGraphLaunch: an allocation of the graph's previous launch is not freed (free it, or "
                       "instantiate with cudaGraphInstantiateFlagAutoFreeOnLaunch); returns cudaErrorInvalidValue");
            return set_error(cudaErrorInvalidValue);
        }
        release_locked(address_of(op));
    }
    return cudaSuccess;
}

namespace {

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

}  // namespace

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

}  // namespace __sim

using __sim::g_graph_mu;
using __sim::NodeOp;
using __sim::set_error;

extern "C" {

// ---- graph memory ------------------------------------------------------------------------------
cudaError_t cudaGraphAddMemAllocNode(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* deps,
                                     size_t num_deps, struct cudaMemAllocNodeParams* params) {
    std::lock_guard<std::mutex> lock(g_graph_mu);
    return __sim::add_alloc_node(node, graph, deps, num_deps, params);
}

cudaError_t cudaGraphMemAllocNodeGetParams(cudaGraphNode_t node, struct cudaMemAllocNodeParams* params) {
    std::lock_guard<std::mutex> lock(g_graph_mu);
    if (params == nullptr || __sim::g_nodes.count(node) == 0 || node->op.type != cudaGraphNodeTypeMemAlloc)
        return set_error(cudaErrorInvalidValue);
    *params = node->op.alloc;
    return cudaSuccess;
}

cudaError_t cudaGraphAddMemFreeNode(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* deps,
                                    size_t num_deps, void* dptr) {
    std::lock_guard<std::mutex> lock(g_graph_mu);
    return __sim::add_free_node(node, graph, deps, num_deps, dptr);
}

cudaError_t cudaGraphMemFreeNodeGetParams(cudaGraphNode_t node, void* dptr_out) {
    std::lock_guard<std::mutex> lock(g_graph_mu);
    if (dptr_out == nullptr || __sim::g_nodes.count(node) == 0 || node->op.type != cudaGraphNodeTypeMemFree)
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
        case cudaGraphMemAttrReservedMemCurrent: *out = __sim::g_footprint; break;
        case cudaGraphMemAttrUsedMemHigh:
        case cudaGraphMemAttrReservedMemHigh: *out = __sim::g_footprint_high; break;
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
    __sim::g_footprint_high = __sim::g_footprint;
    return cudaSuccess;
}

cudaError_t cudaDeviceGraphMemTrim(int device) {
    if (device != 0) return set_error(cudaErrorInvalidDevice);
    std::lock_guard<std::mutex> lock(g_graph_mu);
    __sim::g_footprint = __sim::g_live_bytes;  // what live allocations still hold stays reserved
    return __sim::sticky_error();
}

}  // extern "C"
