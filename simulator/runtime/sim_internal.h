// Internal declarations shared by the runtime's sources (never included by kernel code):
//
//   scheduler.cpp   fibers, blocks and the run of one launch; what each mode adds there is in
//                   mode_hooks.h, one definition per hook and mode
//   worker_pool.cpp the threads that share out a launch's blocks
//   resident_blocks.cpp  blocks that wait for blocks not yet started: more of a launch's blocks on
//                   a worker whose blocks only spin
//   watchdog.cpp    the launch time limit and faults in kernel code (signals)
//   device_api.cpp  what a CUDA thread calls: barriers, warp operations, shared memory
//   group_barriers.cpp  the barriers of cooperative groups' big tiles and of grid.sync()
//   device_props.cpp  the modelled device: properties, attributes, device queries, occupancy
//   reports.cpp     what the checkers print: findings, deadlocks (memcheck's hooks: memcheck_reports.cpp)
//   launch.cpp, kernel_registry.cpp  launches and their checks; launches by address (graphs_internal.h)
//   knobs.cpp       the environment's knobs
//   the host API's calls, one file per area: host_api.h's index names the file of each
//
// Headers kernel code sees: cuda_sim.h (force-included) includes NVIDIA's <cuda_runtime.h>
// (every cuda* call and type), sim_device.h (the scheduler's entry points), host_api.h (launch.h:
// the launch machinery and the kernel registry; sim_textures.h with sim_texture_fetch.h; the names
// current CUDA no longer declares) and sim_intrinsics.h (the device functions NVIDIA declares).
//
// The runtime is compiled once per mode without sanitizer instrumentation (its bookkeeping is
// shared by fibers on purpose) and linked into every simulated library or check executable.
// Modes (set by the build): SIM_MEMCHECK (AddressSanitizer fiber annotations, every device
// and shared allocation is its own heap block), SIM_RACECHECK (ThreadSanitizer fibers, a
// release/acquire pair per barrier and __syncwarp), SIM_SYNCCHECK (barrier site checks).
#ifndef SIM_INTERNAL_H
#define SIM_INTERNAL_H

#include <cuda_runtime.h>

#include "sim_device.h"
#include "host_api.h"

#include <pthread.h>
#include <setjmp.h>

#include <atomic>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#if !defined(__x86_64__)
#include <ucontext.h>
#endif

// The build's mode (its macro) reaches none of the runtime's mode-free sources (mode_free.h).
#if !defined(SIM_MODE_FREE)
#if defined(SIM_RACECHECK)
extern "C" {
void* __tsan_get_current_fiber(void);
void* __tsan_create_fiber(unsigned flags);
void __tsan_destroy_fiber(void* fiber);
void __tsan_switch_to_fiber(void* fiber, unsigned flags);
void __tsan_set_fiber_name(void* fiber, const char* name);
void __tsan_acquire(void* addr);
void __tsan_release(void* addr);
void __tsan_ignore_thread_begin(void);
void __tsan_ignore_thread_end(void);
void AnnotateIgnoreSyncBegin(const char* file, int line);
void AnnotateIgnoreSyncEnd(const char* file, int line);
}
#endif
#endif  // !SIM_MODE_FREE

// Nothing of the runtime's internals leaves the shared object it is linked into.
#pragma GCC visibility push(hidden)

namespace __sim {

#if !defined(SIM_MODE_FREE)
#if defined(SIM_SYNCCHECK)
constexpr bool kSyncCheck = true;
#else
constexpr bool kSyncCheck = false;
#endif
#endif  // !SIM_MODE_FREE

// ---- the state of a launch, a block and a CUDA thread ---------------------------------------
// kTile: at the barrier of a tile of 64..1024 threads; kGrid: at grid.sync() (cooperative launch).
enum class FState : unsigned char { kReady, kBarrier, kWarp, kCoalesce, kTile, kGrid, kDone };

struct Block;
struct Worker;

// A cooperative launch: every block is resident at once on one worker, and grid.sync() is a
// barrier over every live thread of every block (see run_cooperative).
struct Grid {
    Block* blocks = nullptr;
    Worker* workers = nullptr;   // one per block: its stacks, fibers and shared memory
    unsigned long long nblocks = 0;
    long long live = 0;          // threads of the grid not yet exited
    long long arrived = 0;       // threads waiting at the current grid barrier
    unsigned long long gen = 0;  // grid barriers released so far
    const char* file = nullptr;  // where the first thread of the current barrier waits
    int line = 0;
    const Block* exited = nullptr;  // synccheck: the first block whose threads have all exited
    char tsan_sync[2][64];       // racecheck: release/acquire addresses per generation parity
};

// One CUDA thread: its built-in variables (ThreadState), its stack and where it waits.
struct Fiber : ThreadState {
#if defined(__x86_64__)
    void* sp = nullptr;
#else
    ucontext_t uc;
#endif
    // What every barrier reads and writes sits in the first cache line with sp and the built-in
    // variables: a barrier in a 1024-thread block touches every fiber's line.
    int linear = 0;
    FState state = FState::kReady;
    char* stack = nullptr;
    size_t stack_size = 0;
    int warp = 0;
    int lane = 0;
    const char* wfile = nullptr;  // where it waits
    int wline = 0;
    int wkind = 0;
    unsigned int wmask = 0;
    unsigned long long wvalue = 0;
    int wparam = 0;
    int wwidth = 32;
    unsigned long long wresult = 0;
    void* asan_fake = nullptr;
    void* tsan_fiber = nullptr;
    bool fenced = false;  // racecheck: __threadfence() since this thread's last atomic
    unsigned int wmma_turn = 0;  // wmma_gather() calls so far: which of its warp's buffers is next
    // Device code's last error (cudaGetLastError in a kernel), for the CUDA thread that set it:
    // the launch's serial, block and thread index tell it apart from the next user of this
    // fiber (fibers are reused from block to block; a plain loop reuses one for every thread).
    cudaError_t dev_error = cudaSuccess;
    unsigned long long dev_error_launch = 0;
    uint3 dev_error_block{0, 0, 0};
    int dev_error_thread = -1;
};
struct ChildQueue;

// ---- knobs.cpp: environment knobs -------------------------------------------------------------
// SIMULATOR_THREADS, SIMULATOR_STACK_KB or SIMULATOR_DEVICES when set to a whole number in its
// range, else ``fallback`` (a bad value is refused when the runtime is loaded).
long knob_value(const char* name, long fallback);
// A knob was refused at load: every device call fails, and cudaDeviceReset does not clear that.
extern bool g_knob_error;

// ---- devices.cpp ---------------------------------------------------------------------------
// The modelled machine: SIMULATOR_DEVICES identical devices (1 to kMaxDevices; default 1).
constexpr int kMaxDevices = 16;
int device_count();
bool valid_device(int device);
// The calling host thread's current device (cudaSetDevice), or in device code the device the
// running launch belongs to.
int current_device();
// Device allocations' owners (g_state_mu held): ``record_alloc`` when one is made on ``device``,
// ``forget_alloc`` when it goes; ``alloc_device`` is the device of the allocation starting at ``start``.
void record_alloc(uintptr_t start, int device, bool managed);
void forget_alloc(uintptr_t start);
int alloc_device(uintptr_t start);
// Peer access of every device to and from ``device`` ends (its context was reset).
void forget_peers(int device);
// Memory pools (mem_pools.cpp): cudaFree of a pool allocation takes it off its pool's books;
// cudaDeviceReset of ``device`` drops its pools' allocations (the reset freed them), restarts
// the high-water marks, and makes its default pool new and current again.
void forget_pool_allocation(void* ptr);
void reset_device_pools(int device);
// Device memory for cudaMalloc and graph allocations (device_heap.cpp), zero-filled: side by side
// in 2 MiB pages, 512-byte aligned, in fast and synccheck mode; the exact size in the C heap under
// memcheck and racecheck (the next byte is a redzone). device_free takes it back. An allocation
// is on the current device's books: past device_memory_total() in all, device_alloc returns nullptr.
void* device_alloc(size_t size);
void device_free(void* p);
size_t device_memory_total();            // each device's memory (SIMULATOR_DEVICE_MEMORY_MIB)
size_t device_memory_used(int device);   // what its live allocations take
// A stream a call may use (streams.cpp): the default, legacy or per-thread stream, or one created
// and not destroyed; any other handle is refused with cudaErrorInvalidResourceHandle, as on a GPU.
bool known_stream(cudaStream_t stream);
// Pinned host memory (cudaMallocHost, cudaHostAlloc, cudaHostRegister): made on the current device; gone.
void record_host_alloc(void* p, size_t size);
void forget_host_alloc(void* p);

// A launch while it runs: its record (launch.h's KernelCall; a Launch never frees its pack) and
// the state its blocks share.
struct Launch : KernelCall {
    Launch(const KernelCall& call, size_t smem) : KernelCall(call), smem_limit(smem) {}
    size_t smem_limit;
    unsigned long long nblocks;
    std::atomic<unsigned long long> next{0};
    std::atomic<bool> failed{false};
    double timeout_s = 0;                 // SIMULATOR_TIMEOUT for this launch (0: none)
    std::atomic<bool> timed_out{false};   // set by the watchdog at the deadline
    std::mutex threads_mu;                // guards threads
    std::vector<pthread_t> threads;       // the OS threads running its blocks now
    uintptr_t code_lo = 0, code_hi = 0;   // executable segment of the object with the kernel
    std::atomic<bool> faulted{false};     // a thread touched unmapped memory (fast/synccheck)
    std::atomic<bool> asserted{false};    // a thread's assert() failed
    std::atomic<bool> trapped{false};     // a thread called __trap() (reported once)
    bool plain = false;                   // its blocks run as plain loops (see Block::plain)
    bool block_loops = false;             // ... by calling the kernel once per block (LaunchSpec::block_loops)
    bool checked = true;                  // the checker checks it (launch_filter.cpp)
    // Dynamic parallelism (device_launch.cpp): 0 for a host launch, its parent's + 1 for a
    // launch from device code; the launches its threads made, run after its blocks finish.
    int depth = 0;
    unsigned long long serial = 0;        // unique per launch
    ChildQueue* children = nullptr;       // made by the first device-side launch
    Grid* grid = nullptr;                 // a cooperative launch's grid barrier (else null)
    // Blocks started beside a spinning one (resident_blocks.cpp, take_turns): not finished yet, in all,
    // and the most at once (the last two for SIMULATOR_LAUNCH_LOG=1).
    std::atomic<long long> extra_resident{0};
    // Per OS thread running its blocks (run_blocks numbers them): 0 while it runs them, the host
    // time (ns) at which it last found that every block it holds only spins, -1 once it is done.
    static constexpr int kMaxWorkers = 65;  // SIMULATOR_THREADS' most, and one launching inline
    std::atomic<long long> stalled_at[kMaxWorkers] = {};
    std::atomic<int> workers_seen{0};
    std::atomic<long long> extra_started{0};
    std::atomic<long long> extra_peak{0};
    int device = current_device();        // the device it runs on (the launching thread's current one)
};

struct Block {
    Launch* launch = nullptr;
    char* smem = nullptr;  // the worker's shared-memory arena in fast/synccheck mode (else null)
    uint3 idx{0, 0, 0};
    Fiber* fibers = nullptr;
    int nthreads = 0;
    int nwarps = 0;
    int live = 0;
    int bar_arrived = 0;
    int bar_pred = 0;
    int bar_result[2] = {0, 0};
    int bar_kind = -1;
    const char* bar_file = nullptr;
    int bar_line = 0;
    unsigned long long bar_gen = 0;  // barriers released so far: each live thread passed every one
    // synccheck: the first thread that exited after taking part in barriers, and after how many.
    // Each live thread has passed bar_gen barriers, so a thread that leaves while others go on
    // to another barrier took a different number of barriers than they did.
    int left_thread = -1;
    unsigned long long left_after = 0;
    int cursor = 0;  // the fiber that last handed control back to the scheduler
    // Turns its threads spent spinning (spin_wait, __nanosleep): a block whose threads only spin
    // may wait for a block not yet started (resident_blocks.cpp, take_turns).
    unsigned long long spins = 0;
    // Per warp (nwarps entries each, in the worker's storage): lanes that exist, have exited,
    // wait in a warp operation.
    unsigned int* warp_present = nullptr;
    unsigned int* warp_exited = nullptr;
    unsigned int* warp_arrived = nullptr;
    // Threads waiting at the barrier of their tile of 64..1024 threads, per first warp of the tile
    // (nwarps entries, in the worker's storage).
    int* tile_arrived = nullptr;
    bool tiles_used = false;  // a thread reached the barrier of such a tile
    std::vector<std::pair<const void*, void*>>* statics = nullptr;  // the worker's, emptied per block
    size_t static_bytes = 0;
    char* dyn = nullptr;
    bool failed = false;
    // memcheck: the warp of the block's first faulting thread (-1: none). The rest of that warp
    // still runs up to its next switch, as a GPU's warp makes the faulting access in lockstep;
    // then the block fails (fault_block). last_fault: the thread that faulted last, whose later
    // faults before that switch are not counted again (a GPU would have stopped it).
    int fault_warp = -1;
    int last_fault = -1;
    // A barrier-free launch (see runs_plain): the threads run one after another on the worker's
    // own stack (no fibers); a wait of any kind is refused (see refuse_wait).
    bool plain = false;
    char tsan_sync[2][64];  // addresses for barrier release/acquire (per generation parity)
    char tsan_done[64];
    Worker* worker = nullptr;  // whose stacks and shared memory the block uses
};

// Per worker thread: the fiber stacks and shared-memory arena are kept between blocks.
struct Worker {
    int launch_slot = 0;  // its index in Launch::stalled_at while it runs a launch's blocks
    char* stacks = nullptr;
    size_t stacks_bytes = 0;
    int stack_slots = 0;
    char* arena = nullptr;  // shared memory in fast/synccheck mode
    size_t arena_used = 0;
    std::vector<Fiber> fibers;
    std::vector<unsigned int> warp_bits;                      // Block::warp_present/exited/arrived
    std::vector<int> tile_counts;                             // Block::tile_arrived
    std::vector<unsigned long long> tile_scratch;             // tile_scratch(): collectives of big tiles
    std::vector<unsigned long long> wmma_buffers;             // wmma_gather(): two per warp
    std::vector<std::pair<const void*, void*>> statics;      // Block::statics
    sigjmp_buf plain_exit;     // where a plain-loop thread that stops early returns to
    int stacks_ready = 0;      // fiber stacks whose guard page is in place
    std::vector<void*> tsan_fibers;  // reused between blocks: creating one per thread per block is slow
    char tsan_start[64];             // released by the scheduler before a block's fibers start
    void* race_state = nullptr;      // racecheck of shared memory: the arena's shadow (shared_races.cpp)
    // memcheck: the heap blocks of a launch's __shared__ variables (by site) and of its dynamic
    // shared memory, kept from one block of the launch to the next on this worker and freed when
    // the worker's part of the launch ends (device_api.cpp: keep_shared, release_kept_shared).
    struct KeptShared {
        const void* site;
        size_t size, align;
        void* p;
    };
    std::vector<KeptShared> kept_shared;
    char* kept_dyn = nullptr;
    // memcheck: the storage of the per-thread slots of a block-loop kernel's locals (block_loops.h),
    // in the order a block asks for them (kept_slots), kept between its blocks as its shared memory is.
    std::vector<KeptShared> kept_slots;
    size_t slots_asked = 0;
    ~Worker();
};

// ---- limits --------------------------------------------------------------------------------
constexpr size_t kArenaBytes = 256 * 1024;
constexpr size_t kDefaultSmemLimit = 48 * 1024;
constexpr size_t kOptinSmemLimit = 227 * 1024;
// Tiles of 64, 128, 256, 512 and 1024 threads: each size has its own barrier (as on a GPU).
constexpr int kTileSizes = 5;

// ---- scheduler.cpp -------------------------------------------------------------------------
// Whether two block or thread indices are the same (uint3 has no operator==, as in CUDA).
inline bool same_index(const uint3& a, const uint3& b) { return a.x == b.x && a.y == b.y && a.z == b.z; }

// What this OS thread runs now. One thread-local object rather than several: in a shared
// object each thread-local variable a function touches costs it a call (__tls_get_addr), and
// these are read at every barrier and context switch.
struct RunState {
    Block* block;    // the block this worker runs (null outside a launch)
    Fiber* fiber;    // the running CUDA thread (null in the scheduler)
    bool in_kernel;  // see RuntimeCall below
    Worker* worker;  // this thread's Worker once worker() made it
    void* sched_sp;  // the scheduler's saved stack pointer while a fiber runs (x86-64)
};
extern __thread RunState tl_run;
// tl_run's address, looked up once: hidden from the optimiser, which would otherwise compute it
// again (another __tls_get_addr call) at each use rather than keep it in a register. Valid for
// the caller's whole run: a fiber never changes OS thread.
inline RunState& run_state() {
    RunState* p = &tl_run;
    asm("" : "+r"(p));
    return *p;
}
#if !defined(SIM_MODE_FREE)
#if defined(SIM_SHARED_RACES)
// shared_races.cpp: what orders the accesses of a block's threads to its shared memory.
void block_started(Worker* wk);     // a new block on the worker: nothing before it counts
void block_finished(Worker* wk);    // its block ended while its shared memory is still there
void new_epoch(Worker* wk);         // a barrier released: what came before is ordered before
void warp_synced(Worker* wk, int warp);  // a __syncwarp of ``warp`` completed
#endif
#if defined(SIM_RACECHECK)
extern __thread void* tl_sched_tsan;  // the worker's own ThreadSanitizer fiber
#endif
#endif  // !SIM_MODE_FREE

Worker* worker();
// Back to the scheduler; returns when the scheduler resumes this fiber (never when final_exit).
void yield_to_scheduler(bool final_exit);
// The same, for a caller that has this thread's run state at hand (a barrier: one thread-local
// lookup less per wait).
void yield_from(RunState& run, bool final_exit);
// Ends the running CUDA thread of a fiber block as if its kernel had returned (PTX exit, and
// every fiber at the end of its kernel); never returns.
[[noreturn]] void finish_thread(RunState& run);
// Marks the block (and so its launch) failed; its fibers are abandoned at their next switch.
void fail_block(Block* b);
// A memory fault of thread ``linear`` (memcheck): the launch fails and starts no further block;
// the block fails once the rest of the thread's warp has run up to its next switch (fault_warp).
void fault_block(Block* b, int linear);
// Whether a memory fault lets the rest of its warp run (memcheck's builds only, which alone set
// Block::fault_warp: the other builds' barriers and scheduler pay nothing for it).
#if !defined(SIM_MODE_FREE)
#if defined(SIM_MEMCHECK)
constexpr bool kFaultWarps = true;
#else
constexpr bool kFaultWarps = false;
#endif
// Whether the block's fibers may no longer release one another (failed, or a warp has faulted).
inline bool stopping(const Block* b) { return b->failed || (kFaultWarps && b->fault_warp >= 0); }
// Whether the scheduler may run fiber ``i``: after a memory fault only the rest of the faulting
// warp does; at the first other thread the block fails.
inline bool may_run(Block& b, int i) {
    if (!kFaultWarps || b.fault_warp < 0 || i / 32 == b.fault_warp) return true;
    b.failed = true;
    return false;
}
#endif  // !SIM_MODE_FREE
// Ends the running CUDA thread ``f`` of ``b`` for good (assert, trap, fault, timeout): fails the
// block and never returns.
[[noreturn]] void stop_thread(Block* b, Fiber* f);
// Set on a thread that runs the grids a waiting CUDA thread waits for (device_launch.cpp): its
// launches run every block on it alone, since the pool's workers may be running the waiting grid.
extern __thread bool tl_launches_inline;
// Runs every block of ``L`` on the worker pool (or inline, above); returns when all have finished, one failed or
// the launch ran past L->timeout_s (then L->timed_out is set).
void run_launch(Launch* L);
// Runs blocks of ``L`` on the calling thread, the next not yet taken each time, until there are
// none left or the launch failed.
void run_blocks(Launch* L);
// Runs every block of a cooperative launch on the calling thread, all resident at once.
void run_cooperative(Launch* L);
// A block set up beside a worker's own (resident_blocks.cpp uses these): block ``id`` of ``L`` on
// ``wk``'s storage, its stacks guarded if ``guard``, fibers ready, the mode told (``new_launch``:
// ``wk``'s first block of the launch); false, the block failed, when its stacks cannot be mapped.
bool start_resident_block(Launch* L, unsigned long long id, Block& b, Worker* wk, bool new_launch, bool guard);
// One pass over ``b``'s ready threads on its own storage (a block none of whose threads can run
// has deadlocked and fails); true when any ran.
bool resident_block_pass(Block& b);
// The end of such a block, and of its worker's part of the launch.
void end_resident_block(Block& b);
void release_resident_worker(Worker* wk);

// ---- resident_blocks.cpp -------------------------------------------------------------------
// How a block's passes went lately: spins without a barrier released or a thread exited.
struct BlockProgress {
    unsigned long long spins = 0;    // Block::spins at the last pass that spun
    unsigned long long bar_gen = 0;  // Block::bar_gen then
    int live = 0;                    // Block::live then
    int idle = 0;                    // passes in a row that spun and did nothing else
    long long idle_since_ns = 0;     // host time of the first of them
};
// After a pass of ``b`` that spun: true when it has only spun for long enough to be waiting for
// another block.
bool stalled(const Block& b, BlockProgress& p);
// ``first`` (the calling worker's block) only spins: it runs on together with blocks not yet
// started until it and they have all finished, the launch failed or timed out.
void take_turns(Launch* L, Block& first, BlockProgress& first_progress);

// ---- device_launch.cpp (dynamic parallelism) ---------------------------------------------
constexpr int kMaxLaunchDepth = 24;  // CUDA's nesting limit: a host launch is depth 0
// Runs the work ``L``'s threads queued (child grids, deferred copies), each child with its own
// children, in the order CDP2 allows; then frees the queue. Stops at a sticky error.
void run_children(Launch* L);
// How many child grids ``L``'s threads have queued (not run yet).
size_t queued_children(Launch* L);
// Frees what ``L``'s threads queued without running it (the launch failed).
void drop_children(Launch* L);
// The launch running on this OS thread's current CUDA thread (null on the host).
Launch* device_launch_running();
// From device code: queues ``op`` (a stream-ordered copy or memset named ``what``) behind the
// work the running grid has queued, and returns true; false when it should run now (on the
// host, or nothing is queued yet).
bool device_defer(const char* what, cudaStream_t stream, std::function<cudaError_t()> op);
// CDP1's device-side cudaDeviceSynchronize(): runs, to completion, the work the running CUDA
// thread's block of ``parent`` has queued; returns the sticky error, if any.
cudaError_t device_synchronize(Launch* parent);

// ---- watchdog.cpp --------------------------------------------------------------------------
// The executable segment of the loaded object that holds ``addr`` (the launch's code).
void code_range(const void* addr, uintptr_t* lo, uintptr_t* hi);
// Fast and synccheck builds: a fault in kernel code fails the launch (cudaErrorIllegalAddress)
// instead of killing the process; memcheck and racecheck leave faults to their sanitizer.
void install_fault_handler();
// On each thread that runs blocks: an alternate signal stack for the fault handler.
void ensure_signal_stack();
// Watches ``L`` against its time limit until unwatch_launch(L) (a launch without one is not watched).
void watch_launch(Launch* L);
void unwatch_launch(Launch* L);
// tl_run.in_kernel: true while the running fiber executes kernel code, false in the runtime and the scheduler:
// a launch timeout stops a fiber only there (never inside the runtime's own bookkeeping).

// Marks a runtime call made from kernel code (barriers, warp operations, shared memory).
struct RuntimeCall {
    RunState& run;
    RuntimeCall() : run(run_state()) { run.in_kernel = false; }
    ~RuntimeCall() { run.in_kernel = true; }
    RuntimeCall(const RuntimeCall&) = delete;
    RuntimeCall& operator=(const RuntimeCall&) = delete;
};

// True when barrier-free launches must run with fibers (SIMULATOR_FIBERS=1); read at the first launch
// and kept (launch_kind.cpp): each linked program or library holds its own copy of the runtime.
bool fibers_forced();
// True when a launch marked ``barrier_free`` runs its blocks as plain loops: every mode but
// racecheck (mode::kPlainLoops) and in racecheck a launch it does not check, unless
// SIMULATOR_FIBERS=1.
bool runs_plain(bool barrier_free, bool checked);
// True when a launch marked ``block_loops`` runs each block by calling the kernel once, its
// rewritten body looping over the threads region by region: fast builds only, not with
// SIMULATOR_FIBERS=1.
bool runs_block_loops(bool block_loops);
// Why a launch that runs with fibers does, when the reason is the run's rather than the kernel's
// (SIMULATOR_FIBERS=1, a cooperative launch, the mode); null when it is the kernel's own
// (LaunchSpec::fibers_why). Asked only for the launch log.
const char* runtime_fibers_why(const LaunchSpec& spec, bool checked);
// SIMULATOR_LAUNCH_LOG=1: every launch reports how its blocks run (fibers, a plain loop, block
// loops), and for fibers why.
bool launch_log();
// Whether the checker checks this launch of kernel ``name`` (launch_filter.cpp: run's
// --kernel-name, --kernel-name-exclude, --launch-skip, --launch-count); counts it when it matches.
bool launch_checked(const char* name);
#if !defined(SIM_MODE_FREE)
// Whether synccheck judges what the threads of ``b`` do.
inline bool sync_checked(const Block* b) { return kSyncCheck && b->launch->checked; }
#endif  // !SIM_MODE_FREE
// The CPUs this process may run on (device_props.cpp): its affinity mask, capped by its cgroup's
// CPU quota (a container's --cpus), by the rule of simulator/host.py's cpu_count.
unsigned host_cpu_count();

// ---- worker_pool.cpp -----------------------------------------------------------------------
// Threads that share out a launch's blocks (or a GEMM): SIMULATOR_THREADS, else the CPU count, 1..64.
unsigned worker_threads();
// Runs every block of ``L`` on the calling thread and the pool's workers; returns when all have
// finished or the launch failed.
void run_on_pool(Launch* L);

// ---- device_api.cpp ------------------------------------------------------------------------
// In a plain-loop block: reports that the running thread reached ``what`` (a barrier, warp
// operation or other wait) although its launch was marked barrier-free, fails the block and
// leaves the thread. Never returns.
[[noreturn]] void refuse_wait(Block* b, const char* what, const char* file, int line);
// Device-only runtime calls made outside a kernel: say so and abort instead of dereferencing nothing.
void require_device(const RunState& run, const char* what, const char* file, int line);
void release_barrier(Block* b);
// memcheck (defined in its build alone): the heap block of a __shared__ variable of ``b`` (kept on
// its worker between the blocks of a launch), and the end of the worker's part of a launch, which
// frees what it kept.
void* keep_shared(Block* b, const void* site, size_t size, size_t align);
void release_kept_shared(Worker* wk);
// The operand buffers of wmma_gather (wmma_exchange.cpp) for a block's warps.
void init_wmma_buffers(Worker* wk, Block* b);
// A thread of ``b`` finished its kernel (synccheck: after how many barriers, see Block).
void thread_exited(Block* b, Fiber* f);
// After a lane exits: completes warp operations that were waiting only for exited lanes.
void check_pending_warps(Block* b, int w);
// When no thread of the block can run: forms the coalesced groups of the lanes waiting in
// coalesced_threads() (one group per warp and call site); false when none was waiting.
bool release_coalesced(Block* b);
// ---- group_barriers.cpp ----------------------------------------------------------------------
// After a thread of ``b`` exits: completes the tile and grid barriers that waited only for it.
void release_after_exit(Block* b, Fiber* f);
// Lets every thread waiting at grid.sync() go on.
void release_grid(Grid* g);

// ---- knobs.cpp -------------------------------------------------------------------------------
// SIMULATOR_TIMEOUT in seconds (default kDefaultLaunchTimeoutS; 0 turns the limit off).
constexpr double kDefaultLaunchTimeoutS = 60.0;
double launch_timeout_s();

// ---- memory.cpp ------------------------------------------------------------------------------
extern std::mutex g_state_mu;   // guards the allocation tables below and g_smem_optin
extern std::map<uintptr_t, size_t> g_allocs;              // device allocations: start -> size
extern std::map<uintptr_t, const void*> g_alloc_sites;    // memcheck: who called cudaMalloc
// True when [p, p + n) lies inside one live device allocation (g_state_mu held).
bool find_alloc(const void* p, size_t n, bool* known_start);
// ---- driver_vmm.cpp --------------------------------------------------------------------------
// Whether the device-allocation table's range at ``start`` is mapped virtual memory (cuMemMap),
// not a cudaMalloc (g_state_mu held).
bool vmm_range(uintptr_t start);

// ---- errors.cpp ------------------------------------------------------------------------------
extern __thread cudaError_t tl_last_error;  // this host thread's last (non-sticky) error
extern std::atomic<int> g_sticky_error;      // the context's sticky error (cudaSuccess: none)
// Records a non-sticky error as this thread's last error; returns it.
cudaError_t set_error(cudaError_t e);
// Records a sticky error (the first one stays); returns the sticky error.
cudaError_t set_sticky_error(cudaError_t e);
cudaError_t sticky_error();

// ---- launch.cpp ------------------------------------------------------------------------------
extern std::mutex g_launch_mu;  // one launch (and error-state update) at a time
extern std::map<const void*, int> g_smem_optin;           // cudaFuncSetAttribute opt-ins
// Checks ``spec`` against an sm_80 GPU's launch limits: cudaSuccess (and *smem_limit, the
// kernel's shared-memory limit), or the error the launch returns.
cudaError_t check_launch_config(const LaunchSpec& spec, const void* kernel, size_t* smem_limit);
// Runs a checked launch ``L``, then what its threads launched; records a failure as the sticky error.
void execute_launch(Launch* L);
// A fresh Launch's serial number.
unsigned long long next_launch_serial();

// ---- reports.cpp ---------------------------------------------------------------------------
const char* mode_name();
// Whether a source file is the runtime's own (or the C/C++ runtime's, or a sanitizer's): never
// the place a finding names.
bool runtime_file(const char* path);
// "func at file:line" of the first frame of code address ``pc`` (inlined frames included) outside
// the runtime, read by addr2line from the module's debug information (reports.cpp).
std::string source_of(uintptr_t pc);
// A kernel fault of the simulator's own (device_api.cpp): the kernel stops as at __trap(), with
// ``what`` in the report.
[[noreturn]] void trap_with(const char* what);
// A call of a function NVIDIA's headers declare and the simulator does not define (the stubs the
// build links: simulator/link_stubs.py): says so once per function; ``returns`` is what the stub
// returns, empty for a device function, which stops the kernel (unimplemented.cpp).
void unimplemented_call(const char* name, const char* header, const char* returns, void* caller);
// "kernel K block (x,y,z) thread (x,y,z)" into ``out`` (at least 160 bytes): how racecheck's
// findings name a CUDA thread (findings.py reads it back).
void fiber_name(char* out, size_t size, const char* kernel, uint3 block, uint3 thread);
// One line on stderr, prefixed "simulator: " (silent with SIMULATOR_QUIET=1).
void report(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
// Whether SIMULATOR_QUIET=1 silences reports; the lock every multi-line report holds.
bool quiet();
extern std::mutex g_report_mu;
// "kernel 'NAME' block (x,y,z) (launched at FILE:LINE)"
std::string where(const Block* b);
// "(x,y,z)"
std::string tid_str(const Fiber& f);
const char* warp_kind_name(int kind);
void report_deadlock(Block* b);
// No thread of a cooperative launch can go on: reports who waits where and fails the launch.
void report_grid_deadlock(Grid* g);
#if !defined(SIM_MODE_FREE)
#if defined(SIM_MEMCHECK)
// Lists the device buffers still allocated (called at exit; only with SIMULATOR_LEAK_CHECK=full).
void report_leaks();
// "FUNC at FILE:LINE" of the program's code that allocated the heap block ``block`` (the first
// frame of its allocation stack outside the runtime), else of ``call_site`` (a return address).
std::string user_frame(const void* block, const void* call_site);
#endif
#endif  // !SIM_MODE_FREE

// One line on stderr per call site and process, that ``what`` is gone from current CUDA and runs
// as ``instead`` (a loop of legacy calls prints one note).
void note_gone(std::atomic<bool>& said, const char* what, const char* instead);

// ---- the host API's shared pieces ----------------------------------------------------------
// Occupancy, modelled on the device from the block size and the dynamic shared memory only: the
// simulator does not know a kernel's registers or static shared memory (device_props.cpp).
int occupancy_blocks_per_sm(int block_size, size_t dynamic_smem);
int occupancy_sm_count();
// One attribute of a valid device (cudaDeviceGetAttribute's switch, also the driver API's); false
// for an attribute the model does not answer (device_props.cpp).
bool device_attribute(int* value, cudaDeviceAttr attr, int device);
// A copy to or from a __device__/__constant__ variable (device memory is host memory here).
cudaError_t symbol_copy(void* dst, const void* src, size_t count);
// A launch by address from FILE:LINE (the call site of the launch form, when known); a
// cooperative one keeps every block resident at once (grid.sync()) and fails with
// cudaErrorCooperativeLaunchTooLarge when the modelled device cannot hold its grid
// (kernel_registry.cpp).
cudaError_t launch_by_address(const void* func, const LaunchSpec& spec, void** args, bool cooperative,
                              const char* file, int line);
cudaError_t launch_ex(const cudaLaunchConfig_t* config, const void* func, void** args, const char* file, int line);
cudaError_t func_get_attributes(struct cudaFuncAttributes* attr, const void* func);
cudaError_t func_set_attribute(const void* kernel, int attr, int value);

}  // namespace __sim

#define SIM_NOTE_GONE(what, instead)                  \
    do {                                              \
        static std::atomic<bool> sim_said_{false};    \
        __sim::note_gone(sim_said_, what, instead);     \
    } while (0)

#pragma GCC visibility pop

#endif  // SIM_INTERNAL_H
