// Dynamic parallelism (CUDA 12/13's CDP2): kernels launched from device code.
//
// A `<<<>>>` launch made by a CUDA thread converts its arguments at the launch (the build's rewrite
// packs them as for a host launch; kernel_registry.cpp's dispatch_pack sends them here) and is
// queued on the launching grid. CDP2 lets a child grid start any time after its launch and counts
// the parent grid complete only when all its children are, so running the queued work after the
// parent's blocks finish is one schedule a GPU may take too: in launch order (which keeps the order
// of each launching thread and each stream), each child with all its own descendants before the
// next, and the tail launches (cudaStreamTailLaunch) after all other work of the parent. That holds
// for the default stream, created streams and cudaStreamFireAndForget alike. A stream-ordered copy
// or memset a CUDA thread issues after the grid launched a child is queued with the children, so it
// keeps its place after them.
//
// What a program can see differently from a GPU: a child never runs while its parent's blocks
// do, so a parent that waits (spins) for a child's result waits for ever here; the launch then
// runs into SIMULATOR_TIMEOUT (cudaErrorLaunchTimeout), where a GPU may finish it.
//
// CUDA 11 and older (CDP1) also let a CUDA thread call cudaDeviceSynchronize(): the thread waits
// until all the work its block launched so far has finished, children's children included.
// CUDA 12 removed it; older code still uses it, so it runs as it did (device_synchronize): the
// block's queued work runs there and then, on a thread of its own, while the waiting CUDA
// thread's worker stands still, so the block's other threads wait with it. On a GPU they would
// go on; a program that needs them to (a child that waits for its parent block) times out here.
#include "sim_internal.h"

namespace {
// The handle device code passes for cudaStreamTailLaunch (<cuda_device_runtime_api.h> defines it
// for nvcc's front end only, so host code such as this runtime does not see the macro).
const cudaStream_t kTailLaunchStream = reinterpret_cast<cudaStream_t>(0x3);
}  // namespace

#include <atomic>
#include <cstdio>
#include <functional>
#include <memory>
#include <thread>

namespace __sim {

// One piece of queued work: a child grid, or a deferred copy or memset (``op`` set).
// A child grid's record owns its pack (freed by release).
struct ChildWork : KernelCall {
    size_t smem_limit = 0;
    std::function<cudaError_t()> op;
    unsigned long long block = 0;  // the launching block, linear in its grid
};

struct ChildQueue {
    std::vector<ChildWork> work;   // in launch order
    std::vector<ChildWork> tails;  // cudaStreamTailLaunch: after all other work
};

namespace {

std::mutex g_children_mu;  // guards Launch::children while the launch's blocks run

void enqueue(Launch* parent, ChildWork&& w) {
    std::lock_guard<std::mutex> lock(g_children_mu);
    if (parent->children == nullptr) parent->children = new ChildQueue;
    (w.spec.stream == kTailLaunchStream ? parent->children->tails : parent->children->work).push_back(std::move(w));
}

void release(ChildWork& w) {
    if (w.pack != nullptr) w.destroy(w.pack);
    w.pack = nullptr;
}

void run_child(const Launch* parent, ChildWork& w) {
    if (sticky_error() != cudaSuccess) {
        release(w);
        return;
    }
    if (w.op) {
        // A copy or memset issued from device code: run now, after the grids launched before it.
        // Its failure is a fault of the grid that issued it, as on a GPU (sticky).
        const cudaError_t before = tl_last_error;
        const cudaError_t e = w.op();
        tl_last_error = before;
        if (e != cudaSuccess && sticky_error() == cudaSuccess) {
            report("%s: %s issued from device code by kernel '%s' failed: %s; the launch fails with "
                   "cudaErrorLaunchFailure, which is sticky",
                   mode_name(), w.name, w.file, cudaGetErrorName(e));
            set_sticky_error(cudaErrorLaunchFailure);
        }
        return;
    }
    Launch child(w, w.smem_limit);
    child.depth = parent->depth + 1;
    child.device = parent->device;
    execute_launch(&child);
    release(w);
}

// The running CUDA thread's block, numbered as in its grid.
unsigned long long running_block() {
    const Block* b = tl_run.block;
    const dim3 g = b->launch->spec.grid;
    return b->idx.x + (unsigned long long)g.x * (b->idx.y + (unsigned long long)g.y * b->idx.z);
}

void queue_from_running_block(Launch* parent, ChildWork&& w) {
    w.block = running_block();
    enqueue(parent, std::move(w));
}

// What ``block`` of ``parent`` has queued (tail launches excepted), taken off the queue in order.
std::vector<ChildWork> take_block_work(Launch* parent, unsigned long long block) {
    std::lock_guard<std::mutex> lock(g_children_mu);
    std::vector<ChildWork> mine;
    if (parent->children == nullptr) return mine;
    std::vector<ChildWork>& all = parent->children->work;
    std::vector<ChildWork> rest;
    for (ChildWork& w : all) (w.block == block ? mine : rest).push_back(std::move(w));
    all = std::move(rest);
    return mine;
}

// True when the running grid has queued work, so that a stream-ordered operation must wait behind it.
bool has_queued_work(Launch* parent) {
    std::lock_guard<std::mutex> lock(g_children_mu);
    return parent->children != nullptr && !parent->children->work.empty();
}

}  // namespace

Launch* device_launch_running() {
    const Block* b = tl_run.block;
    return b != nullptr && tl_run.fiber != nullptr ? b->launch : nullptr;
}

cudaError_t device_launch(const KernelCall& call) {
    RuntimeCall in_runtime;  // a launch timeout never stops the thread while it holds the queue's lock
    Launch* parent = device_launch_running();
    cudaError_t e = cudaSuccess;
    size_t limit = 0;
    if (parent == nullptr) {
        e = cudaErrorNotSupported;  // not reached: launch.h sends only CUDA threads' launches here
    } else if (sticky_error() != cudaSuccess) {
        e = sticky_error();
    } else if (parent->depth + 1 > kMaxLaunchDepth) {
        e = cudaErrorLaunchMaxDepthExceeded;
    } else {
        e = check_launch_config(call.spec, call.kernel, &limit);
    }
    if (e != cudaSuccess) {
        call.destroy(call.pack);
        return set_error(e);  // this CUDA thread's last error
    }
    queue_from_running_block(parent, ChildWork{call, limit, {}});
    return cudaSuccess;
}

bool device_defer(const char* what, cudaStream_t stream, std::function<cudaError_t()> op) {
    Launch* parent = device_launch_running();
    if (parent == nullptr) return false;
    RuntimeCall in_runtime;
    if (stream != kTailLaunchStream && !has_queued_work(parent)) return false;  // nothing to wait for: run now
    LaunchSpec spec{dim3(1), dim3(1), 0, stream};
    // (``file`` names the issuing kernel: a device-side copy has no launch site of its own.)
    queue_from_running_block(parent, ChildWork{KernelCall{spec, what, parent->name}, 0, std::move(op)});
    return true;
}

cudaError_t device_synchronize(Launch* parent) {
    RuntimeCall in_runtime;  // a launch timeout never abandons the thread while it waits here
    SIM_NOTE_GONE("cudaDeviceSynchronize() in device code (CUDA 11's dynamic parallelism)",
                  "in CUDA 11: the thread waits for the work its block launched");
    if (sticky_error() != cudaSuccess) return sticky_error();
    std::vector<ChildWork> mine = take_block_work(parent, running_block());
    if (mine.empty()) return cudaSuccess;
    // A thread of its own: this one is in the middle of a block (its worker's fibers, stacks and
    // shared memory are in use), and the pool's other workers may be running the parent's blocks.
    std::thread runner([parent, &mine] {
        tl_launches_inline = true;
        for (ChildWork& w : mine) run_child(parent, w);
    });
    runner.join();
    return sticky_error();
}

void run_children(Launch* L) {
    // The launch's blocks have finished: nothing adds to its queue any more.
    std::unique_ptr<ChildQueue> q(L->children);
    L->children = nullptr;
    if (q == nullptr) return;
    for (ChildWork& w : q->work) run_child(L, w);
    for (ChildWork& w : q->tails) run_child(L, w);
}

size_t queued_children(Launch* L) {
    std::lock_guard<std::mutex> lock(g_children_mu);
    const ChildQueue* q = L->children;
    if (q == nullptr) return 0;
    size_t n = 0;
    for (const auto* list : {&q->work, &q->tails}) {
        for (const ChildWork& w : *list) n += w.op ? 0 : 1;
    }
    return n;
}

void drop_children(Launch* L) {
    std::unique_ptr<ChildQueue> q(L->children);
    L->children = nullptr;
    if (q == nullptr) return;
    for (ChildWork& w : q->work) release(w);
    for (ChildWork& w : q->tails) release(w);
}

}  // namespace __sim
