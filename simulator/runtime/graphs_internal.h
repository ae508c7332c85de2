// Internal declarations shared by kernel_registry.cpp, launch.cpp, the graph sources, mem_pools.cpp,
// memory.cpp, devices.cpp, streams.cpp and the cuBLAS sources (never included by kernel code): a
// registered kernel, a kernel launch held by a graph node or a capture, and the capture hooks.
#ifndef SIM_GRAPHS_INTERNAL_H
#define SIM_GRAPHS_INTERNAL_H

#include "sim_internal.h"

#include <functional>
#include <memory>

#pragma GCC visibility push(hidden)

namespace __sim {

struct KernelEntry {
    const char* name;  // null when only typed forms registered it
    int nparams;
    MakePack make;
    void (*invoke)(void*);
    RunPlain run_plain;  // the kernel's own loop over a barrier-free block's threads
    void (*destroy)(void*);
    bool by_name;       // registered by its definition: the functions call the kernel by name
    bool barrier_free;  // the front end's finding: launches by address may run as plain loops
    bool block_loops;   // the front end wrote the kernel's barrier regions as loops (LoopKind)
    const char* fibers_why;  // the front end's reason it keeps fibers (LoopKind; null when none)
};

// A launch record (launch.h's KernelCall) that owns its copy of the arguments; copies of a
// KernelOp share the pack, which goes with the last of them.
struct KernelOp : KernelCall {
    KernelOp() = default;
    explicit KernelOp(const KernelCall& call)
        : KernelCall(call), owner(call.destroy != nullptr ? std::shared_ptr<void>(call.pack, call.destroy) : nullptr) {}
    std::shared_ptr<void> owner;  // holds ``pack``
};

// ---- kernel_registry.cpp ---------------------------------------------------------------------
bool find_kernel(const void* kernel, KernelEntry* out);
// cudaErrorInvalidDeviceFunction with the one-line note naming the registration rule.
cudaError_t unknown_kernel(const void* func, const char* call);
// Copies ``args`` into a KernelOp for the registered kernel ``func``.
cudaError_t make_kernel_op(const void* func, const LaunchSpec& spec, void** args, const char* file, int line,
                           const char* call, KernelOp* op);
// Runs it now; returns the launch's error (configuration, or the sticky error it caused).
cudaError_t run_kernel_op(const KernelOp& op);

// ---- graphs.cpp -------------------------------------------------------------------------------
// Appends a kernel node to the capturing graph.
cudaError_t capture_op(const KernelOp& op);
// Stream-captured cudaMallocAsync / cudaFreeAsync (mem_pools.cpp): true when a capture took the
// call and made a graph memory node; the call's status is then in *result.
bool capture_malloc(void** ptr, size_t size, cudaError_t* result);
bool capture_free(void* ptr, cudaError_t* result);
// cudaFree of a live graph allocation (memory.cpp): true when ``ptr`` was one and is now freed;
// its memory stays reserved for the graph's next launch.
bool free_graph_allocation(void* ptr);
// cudaDeviceReset: no graph allocation stays live (the graphs keep their reserved memory).
void reset_graph_allocations();
// Library work (cuBLAS) issued on a capturing stream: recorded as a node that calls ``work`` at
// each replay; false when nothing is capturing (the caller then does the work at once).
bool capture_library_call(cudaStream_t stream, std::function<void()> work);

// ---- graph_events.cpp / events.cpp ------------------------------------------------------------
// cudaEventRecordWithFlags(cudaEventRecordExternal) / cudaStreamWaitEvent(cudaEventWaitExternal)
// during a capture: true when a capture took the call as an event node (status in *result).
bool capture_event_node(cudaGraphNodeType type, cudaEvent_t event, cudaError_t* result);
bool event_is_live(cudaEvent_t event);

}  // namespace __sim

#pragma GCC visibility pop

#endif  // SIM_GRAPHS_INTERNAL_H
