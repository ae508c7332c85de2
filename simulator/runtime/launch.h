// Launches (included by host_api.h): the machinery every `kernel<<<...>>>(args)` that the
// build rewrites goes through (__sim::launch, __sim::launcher, __sim::launch_deduced), stream
// capture's hook and the kernel registry that launches by address use, and the one record of a
// launch (KernelCall). Definitions are in launch.cpp (launch_raw), device_launch.cpp
// (device_launch), graphs.cpp (capturing, capture_kernel) and kernel_registry.cpp (the registry,
// and launch_at_site and dispatch_pack, which every launch goes through).
#ifndef CUDA_CPU_SIMULATOR_LAUNCH_H
#define CUDA_CPU_SIMULATOR_LAUNCH_H

#include <atomic>
#include <cstring>
#include <memory>
#include <new>
#include <optional>
#include <type_traits>

// A build whose device code contracts into fused multiply-adds marks the program's kernels with the
// FMA target (simulator/transform.py, DEVICE_FMA), and the plain loop that calls a kernel by name
// with it too, so that the kernel is inlined into the loop.
#if defined(SIM_DEVICE_FMA)
#define SIM_DEVICE_FMA_TARGET __attribute__((target("fma")))
#else
#define SIM_DEVICE_FMA_TARGET
#endif

#include "block_loops.h"

// The code of a launch site that only hands the launch to the runtime, reading no memory of the
// program's but the arguments' copies it made itself: compiled without memcheck's checks, as the
// runtime is (an instrumented copy of it in every launch site was most of a memcheck object's
// launch code). It calls no inline function, which g++ would then not inline into it.
#define SIM_LAUNCH_GLUE __attribute__((no_sanitize("address", "undefined")))

// ---- launch machinery ------------------------------------------------------------------
namespace __sim {

template <class T>
struct nondeduced {
    using type = T;
};

struct LaunchSpec {
    dim3 grid;
    dim3 block;
    size_t smem;
    cudaStream_t stream;
    bool barrier_free = false;  // reaches no barrier, warp operation or other wait: threads may run as a plain loop
    bool cooperative = false;   // cudaLaunchCooperativeKernel: every block co-resident, grid.sync() allowed
    bool block_loops = false;   // the kernel's barriers split it into regions run as loops over the threads
    const char* fibers_why = nullptr;  // the front end's reason the kernel keeps fibers (the launch log's)
};

// The front end's finding for a launched kernel: barrier-free (true), or a kernel whose
// __syncthreads are all block-uniform and whose body it also wrote as loops over the block's
// threads, one per region between barriers (kBlockLoops; simulator/block_loops.py).
// A kernel it keeps on fibers carries the first reason it found, with the source line
// (``LoopKind{false, false, "a warp shuffle (__shfl_down_sync) (k.cu:17)"}``): read only by
// SIMULATOR_LAUNCH_LOG=1.
struct LoopKind {
    bool barrier_free = false;
    bool block_loops = false;
    const char* fibers_why = nullptr;
    constexpr LoopKind(bool free) : barrier_free(free) {}
    constexpr LoopKind(bool free, bool loops) : barrier_free(free), block_loops(loops) {}
    constexpr LoopKind(bool free, bool loops, const char* why)
        : barrier_free(free), block_loops(loops), fibers_why(why) {}
};
// A kind of a kernel that reaches a barrier or another wait: no launch of it runs as a plain
// loop, so its launches and registration take no Packed::run_plain (null in its KernelCall). That
// loop inlines the whole kernel (flatten) into the registration's copy (and a launch site's that
// passes fewer arguments or one not trivially copyable), and compiling it (instrumented, under the
// checkers) was a third of such a source's object. Only a type apart from LoopKind can tell the
// templates; it takes no lone bool, so `true` and `false` stay LoopKinds.
struct BarrierKind : LoopKind {
    explicit constexpr BarrierKind(bool free, bool loops, const char* why = nullptr) : LoopKind(free, loops, why) {}
};
inline constexpr BarrierKind kBlockLoops{false, true};
// A kernel whose block loops would order some accesses otherwise than its fibers do (two regions
// that may report between the same two barriers, simulator/block_loops_order.py): loops in a
// fast build, fibers under memcheck, racecheck and synccheck, whose findings depend on that order.
#if !defined(SIM_MODE_FREE)  // the build's mode: never in a mode-free source (mode_free.h)
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__) || defined(SIM_SHARED_RACES) || \
    defined(SIM_SYNCCHECK)
inline constexpr BarrierKind kBlockLoopsFast{
    false, false, "its block loops run in fast builds only: they differ from fibers in what this checker sees"};
#else
inline constexpr BarrierKind kBlockLoopsFast{false, true};
#endif
#endif  // !SIM_MODE_FREE

// A barrier-free kernel whose loop the front end also wrote to run one step for all the block's
// threads at a time (simulator/block_loops_interchange.py): that order in a fast build, and the
// plain loop through a pointer launch that knows only "barrier-free"; the plain loop's order under
// memcheck, racecheck and synccheck, whose findings stay as they were.
#if !defined(SIM_MODE_FREE)  // the build's mode: never in a mode-free source (mode_free.h)
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__) || defined(SIM_SHARED_RACES) || \
    defined(SIM_SYNCCHECK)
inline constexpr LoopKind kInterchangedFast{true, false};
#else
inline constexpr LoopKind kInterchangedFast{true, true};
#endif
#endif  // !SIM_MODE_FREE

// One kernel launch as the runtime records it, however it was made (<<<>>>, a launch by address, a
// graph's kernel node, a capture, a launch from device code): what runs, with which arguments, and
// where the program launched it. A running launch (Launch), a graph's kernel node (KernelOp) and a
// launch queued by device code (ChildWork) each are one, so a launch's fields are set in one place.
struct KernelCall {
    LaunchSpec spec{};
    const char* name = nullptr;        // the kernel's name, for reports
    const char* file = nullptr;        // where the program launched it
    int line = 0;
    const void* kernel = nullptr;      // its address (null: a launch through a null kernel pointer)
    void (*invoke)(void*) = nullptr;   // calls the kernel with *pack's arguments for the running thread
    RunPlain run_plain = nullptr;      // its own loop over a plain block's threads (null: the runtime's)
    void* pack = nullptr;              // the converted arguments
    void (*destroy)(void*) = nullptr;  // frees pack where the record owns it (queued, recorded); else null
    // Whether it runs the call by name of the kernel's definition's registration in place of a lambda
    // at the launch (launch_by_name): memcheck's reports leave that call's frame out as they did the lambda's.
    bool registered_call = false;
};

// Runs a launch now; ``call.pack`` stays the caller's.
SIM_API void launch_raw(const KernelCall& call);

// A kernel and its converted arguments. A launch runs it from the caller's stack; a launch
// made while a stream capture is active copies it to the heap and the graph node owns it.
template <class F, class Tuple>
struct Packed {
    F fn;
    Tuple args;
    static void invoke(void* p) {
        Packed* pk = static_cast<Packed*>(p);
        std::apply(pk->fn, pk->args);
    }
    // Every thread of a barrier-free block in turn. The loop is instantiated with the kernel
    // call, so that a kernel named at the launch is a direct call (often inlined) instead of
    // two indirect calls per thread through the runtime.
    __attribute__((flatten)) SIM_DEVICE_FMA_TARGET static void run_plain(void* p, const PlainBlock& b) {
        Packed* pk = static_cast<Packed*>(p);
        // The block's own copy: the kernel's stores could alias the pack, which would then be
        // read again for every thread. Each call still copies the arguments into parameters.
        F fn = pk->fn;
        Tuple args = pk->args;
        for_each_plain_thread(b, [&fn, &args] { std::apply(fn, args); });
    }
    static void destroy(void* p) { delete static_cast<Packed*>(p); }
};

// Dynamic parallelism (device_launch.cpp): a launch made by a CUDA thread is queued with its
// converted arguments (``pack``, heap, freed by ``destroy``) and runs after the launching grid's
// blocks finish, before the grid counts as complete.
// Returns the launch's error (also the CUDA thread's last error).
SIM_API cudaError_t device_launch(const KernelCall& call);
struct ThreadState;
extern __thread ThreadState* tl_thread SIM_API;  // (cuda_sim.h) non-null while a CUDA thread runs

// Stream capture (graphs.cpp): true while a capture is active (every stream is one stream).
SIM_API bool capturing(cudaStream_t stream);
// Records a launch in the capturing graph; the node takes ownership of ``pack``.
SIM_API void capture_kernel(const KernelCall& call);

// Makes a launch's pack (KernelCall::pack) on the heap, which the record's ``destroy`` frees, from the
// arguments ``args[i]`` points at; ``fn`` is what the pack calls, as the function that makes it
// reads it (the kernel's address for KernelPacker's, the call by name itself for MovedPacker's).
using MakePack = void* (*)(const void* fn, void** args);

// The one way every launch runs (kernel_registry.cpp): ``call`` (with no pack) with the pack
// ``make(fn, args)``. A launch by a CUDA thread is queued and one during a capture recorded, each
// owning the pack; any other runs now, and its pack is freed when it returns.
SIM_API void dispatch_pack(KernelCall call, MakePack make, const void* fn, void** args);

// The pack of ``F`` and arguments of types ``A...``, moved from where ``args[i]`` points (the
// launch's own copies, which it does not read again); ``fn`` points at the F.
template <class F, class... A>
struct MovedPacker {
    using Pk = Packed<F, std::tuple<A...>>;
    template <size_t... I>
    static void* take_at(const void* fn, void** args, std::index_sequence<I...>) {
        (void)args;
        return new Pk{*static_cast<const F*>(fn), std::tuple<A...>(std::move(*static_cast<A*>(args[I]))...)};
    }
    static void* take(const void* fn, void** args) { return take_at(fn, args, std::index_sequence_for<A...>{}); }
};

template <class F, class... A, size_t... I>
static inline void dispatch_moved(const KernelCall& call, const F& fn, std::tuple<A...>& args,
                                  std::index_sequence<I...>) {
    void* argv[sizeof...(A) + 1] = {static_cast<void*>(&std::get<I>(args))..., nullptr};
    dispatch_pack(call, &MovedPacker<F, A...>::take, &fn, argv);
}

// Runs a launch of ``fn`` with ``args`` (a typed launch's, a deduced one's), or queues or records it
// (dispatch_pack). ``Plain``: whether the launch may run as a plain loop (false for a BarrierKind's:
// no run_plain).
template <bool Plain = true, class F, class... A>
static inline void dispatch(const LaunchSpec& spec, const char* name, const char* file, int line,
                            const void* kernel, F fn, std::tuple<A...>&& args) {
    using Pk = typename MovedPacker<F, A...>::Pk;
    RunPlain run_plain = nullptr;
    if constexpr (Plain) run_plain = &Pk::run_plain;
    const KernelCall call{spec, name, file, line, kernel, &Pk::invoke, run_plain, nullptr, &Pk::destroy};
    dispatch_moved(call, fn, args, std::index_sequence_for<A...>{});
}

// ---- the kernel registry (kernel_registry.cpp) -----------------------------------------------
// A launch by address (cudaLaunchKernel, cudaLaunchKernelExC, a graph's kernel node) passes
// the arguments as `void** args`; the registry knows, per kernel address, how to copy them
// into the kernel's parameter types. Every <<<>>> launch and every typed launch form
// registers its kernel on first use; the front end registers every kernel definition, with a
// call by name and whether the kernel is barrier-free, so that a launch by address runs as its
// <<<>>> launch would (that registration wins over the others).
// make_pack returns a heap Packed that ``destroy`` frees.
SIM_API bool register_kernel_raw(const void* kernel, const char* name, int nparams, MakePack make,
                                 void (*invoke)(void*), RunPlain run_plain, void (*destroy)(void*),
                                 bool by_name = false, bool barrier_free = false, bool block_loops = false,
                                 const char* fibers_why = nullptr);

// ``make`` copies the arguments (a launch by address: they are the program's); ``take`` moves them
// (a launch's own copies: Launcher::run's).
template <class... P>
struct KernelPacker {
    using Fn = void (*)(P...);
    using Pk = Packed<Fn, std::tuple<std::decay_t<P>...>>;
    template <bool Move, size_t... I>
    static void* pack_at(const void* kernel, void** args, std::index_sequence<I...>) {
        (void)args;
        if constexpr (Move) {
            return new Pk{reinterpret_cast<Fn>(const_cast<void*>(kernel)),
                          std::tuple<std::decay_t<P>...>(std::move(*static_cast<std::decay_t<P>*>(args[I]))...)};
        } else {
            return new Pk{reinterpret_cast<Fn>(const_cast<void*>(kernel)),
                          std::tuple<std::decay_t<P>...>(*static_cast<std::decay_t<P>*>(args[I])...)};
        }
    }
    static void* make(const void* kernel, void** args) {
        return pack_at<false>(kernel, args, std::index_sequence_for<P...>{});
    }
    static void* take(const void* kernel, void** args) {
        return pack_at<true>(kernel, args, std::index_sequence_for<P...>{});
    }
};

// Launches ``site`` (whose kernel, pack and loop are unset) with the functions of its kernel's
// definition's registration, which call the kernel by name: ``args[i]`` points at the i-th argument,
// already of the i-th parameter's type, and the registry copies them. False, launching nothing,
// where no definition registered the kernel with a plain loop.
SIM_API bool launch_by_name(const KernelCall& site, void** args);

// A launch site's own call by name (Launcher::run): the lambda the front end wrote, and the
// functions of its pack.
struct SiteCall {
    const void* fn;  // the lambda, which ``make`` copies into the pack (MovedPacker)
    MakePack make;
    void (*invoke)(void*);
    RunPlain run_plain;  // null for a BarrierKind's launch
    void (*destroy)(void*);
    bool only;      // fewer arguments than parameters: only the call by name applies the defaults
    bool outlives;  // it captures nothing, so its pack may be queued or recorded
};

// A <<<>>> launch: the site's record with the functions of the kernel pointer's pack (KernelPacker),
// which the runtime registers and runs where no call by name serves.
struct SiteLaunch {
    KernelCall call;  // no pack: the runtime makes one from the arguments
    MakePack make;    // KernelPacker's copy, which the registration keeps
    MakePack pack;    // this launch's kernel pointer's pack (null: it has fewer arguments than parameters)
    int nparams;
    bool through_pointer;     // the kernel is an expression: the front end could not tell which
    const SiteCall* by_name;  // the site's own call by name; null: its definition's registration's
};
// Runs ``site`` with the arguments ``args[i]`` points at, every <<<>>> launch's one way: a null
// kernel fails; a launch through a pointer takes its definition's barrier-free finding; a launch
// by name runs its call by name where it must (fewer arguments) or may (barrier-free, and the call
// outlives the statement or the launch runs now): the site's own, or with every argument, each
// trivially copyable (Launcher::run_at_site), its registration's loop (launch_by_name); any other
// runs the kernel pointer's pack.
SIM_API void launch_at_site(const SiteLaunch& site, void** args);

// Records the parameter layout of the kernel at ``kernel`` (its definition's registration);
// kernel_params answers it (false for a kernel no definition registered).
SIM_API void register_kernel_params(const void* kernel, int n, const size_t* sizes, const size_t* aligns);
SIM_API bool kernel_params(const void* kernel, int* n, const size_t** sizes, const size_t** aligns);

// Whether the front end found the kernel at ``kernel`` barrier-free (false when unknown).
SIM_API bool registered_barrier_free(const void* kernel);
// The front end's reason the kernel at ``kernel`` keeps fibers (null when none or unknown).
SIM_API const char* registered_fibers_why(const void* kernel);

// The same for a kernel called by name through ``F``, a lambda that captures nothing (one type
// per kernel definition, so the stored copy is that kernel's).
template <class F, class... P>
struct ByNamePacker {
    using Pk = Packed<F, std::tuple<std::decay_t<P>...>>;
    static inline std::optional<F> call;
    template <size_t... I>
    static void* make_at(void** args, std::index_sequence<I...>) {
        (void)args;
        return new Pk{*call, std::tuple<std::decay_t<P>...>(*static_cast<std::decay_t<P>*>(args[I])...)};
    }
    static void* make(const void*, void** args) { return make_at(args, std::index_sequence_for<P...>{}); }
};

// Records ``k`` (with its name for reports; may be null) so that it can be launched by
// address. Cheap after the first call for a kernel; true when ``k`` is (now) registered.
template <class... P>
static inline bool register_kernel(void (*k)(P...), const char* name) {
    if (k == nullptr) return false;
    return register_kernel_raw(reinterpret_cast<const void*>(k), name, (int)sizeof...(P),
                               &KernelPacker<P...>::make, &KernelPacker<P...>::Pk::invoke,
                               &KernelPacker<P...>::Pk::run_plain,
                               &KernelPacker<P...>::Pk::destroy);
}

// What the front end writes after a kernel's definition: ``by_name`` calls the kernel by its
// name (so the launch's loop may inline it) and ``barrier_free`` is the front end's finding for
// it, which launches by address then use as <<<>>> launches do.
template <bool Plain, class F, class... P>
static inline bool register_by_name(void (*k)(P...), const char* name, LoopKind loops, F by_name) {
    static_assert(std::is_empty<F>::value, "a kernel's call by name captures nothing");
    using Packer = ByNamePacker<F, P...>;
    if (!Packer::call) Packer::call.emplace(by_name);
    // The parameters' sizes and alignments (a trailing 0 keeps the arrays non-empty), for a
    // driver API launch that passes them packed in one buffer (cuLaunchKernel's ``extra``).
    static constexpr size_t sizes[] = {sizeof(std::decay_t<P>)..., 0};
    static constexpr size_t aligns[] = {alignof(std::decay_t<P>)..., 0};
    register_kernel_params(reinterpret_cast<const void*>(k), (int)sizeof...(P), sizes, aligns);
    RunPlain run_plain = nullptr;
    if constexpr (Plain) run_plain = &Packer::Pk::run_plain;
    return register_kernel_raw(reinterpret_cast<const void*>(k), name, (int)sizeof...(P), &Packer::make,
                               &Packer::Pk::invoke, run_plain, &Packer::Pk::destroy, true,
                               loops.barrier_free, loops.block_loops, loops.fibers_why);
}
template <class F, class... P>
static inline bool register_kernel(void (*k)(P...), const char* name, LoopKind loops, F by_name) {
    return register_by_name<true>(k, name, loops, by_name);
}
template <class F, class... P>
static inline bool register_kernel(void (*k)(P...), const char* name, BarrierKind loops, F by_name) {
    return register_by_name<false>(k, name, loops, by_name);
}

// A kernel called through a pointer that is a constant, which the compiler can inline as it can
// a call written by name (the front end's lambdas do that where a lambda may appear).
template <auto K>
struct call_by_name {
    template <class... A>
    void operator()(A... a) const {
        K(a...);
    }
};

// What the front end makes of host code naming a kernel template's instance (``k<float>``):
// registers it as a definition's registration would and is the function itself, so that
// ``(void*)k<float>``, ``&k<float>``, calls and ``decltype`` keep their meaning (no lambda:
// one may not appear in an unevaluated operand before C++20).
template <auto K>
static inline auto registered_kernel(const char* name, LoopKind loops) -> decltype(*K) {
    register_kernel(K, name, loops, call_by_name<K>{});
    return *K;
}
template <auto K>
static inline auto registered_kernel(const char* name, BarrierKind loops) -> decltype(*K) {
    register_kernel(K, name, loops, call_by_name<K>{});
    return *K;
}

// A <<<grid, block, smem, stream>>> launch, as the build rewrites it: the arguments convert
// to the kernel's parameter types once, on the host, like a real launch. ``spec`` carries the
// launch configuration and whether the kernel is barrier-free (then a fast build runs each
// block's threads as a plain loop instead of fibers).
template <class... P>
static inline void launch(const LaunchSpec& spec, const char* name, const char* file, int line,
                          void (*kernel)(P...), typename nondeduced<std::decay_t<P>>::type... args) {
    register_kernel(kernel, name);
    dispatch(spec, name, file, line, reinterpret_cast<const void*>(kernel), kernel,
             std::tuple<std::decay_t<P>...>(args...));
}

template <class... P>
static inline void launch(const char* name, const char* file, int line, dim3 grid, dim3 block, size_t smem,
                          cudaStream_t stream, void (*kernel)(P...),
                          typename nondeduced<std::decay_t<P>>::type... args) {
    launch<P...>(LaunchSpec{grid, block, smem, stream}, name, file, line, kernel, args...);
}

// A launch of a kernel template whose arguments are deduced from the call, as the build
// rewrites it: ``call`` is a generic lambda that calls the kernel by name.
template <bool Plain = true, class F, class... A>
static inline void launch_deduced(const LaunchSpec& spec, const char* name, const char* file, int line, F call,
                                  A&&... args) {
    dispatch<Plain>(spec, name, file, line, nullptr, call, std::tuple<std::decay_t<A>...>(std::forward<A>(args)...));
}

// The form the front end emits: barrier_free is its finding that the kernel reaches no barrier
// or other wait.
template <class F, class... A>
static inline void launch_deduced(const char* name, const char* file, int line, dim3 grid, dim3 block, size_t smem,
                                  cudaStream_t stream, LoopKind loops, F call, A&&... args) {
    launch_deduced(LaunchSpec{grid, block, smem, stream, loops.barrier_free, false, loops.block_loops, loops.fibers_why},
                   name, file, line, call, std::forward<A>(args)...);
}
template <class F, class... A>
static inline void launch_deduced(const char* name, const char* file, int line, dim3 grid, dim3 block, size_t smem,
                                  cudaStream_t stream, BarrierKind loops, F call, A&&... args) {
    launch_deduced<false>(
        LaunchSpec{grid, block, smem, stream, loops.barrier_free, false, loops.block_loops, loops.fibers_why}, name,
        file, line, call, std::forward<A>(args)...);
}

}  // namespace __sim

// ---- launches --------------------------------------------------------------------------------
namespace __sim {

// Passed instead of a call-by-name function when the launched kernel is an expression (a
// pointer through a table, a conditional, ...): C++ applies no default arguments through a
// pointer, so every argument must be given.
struct no_default_args {};

template <size_t N, class Tuple, class Seq = std::make_index_sequence<N>>
struct tuple_prefix;
template <size_t N, class Tuple, size_t... I>
struct tuple_prefix<N, Tuple, std::index_sequence<I...>> {
    using type = std::tuple<std::tuple_element_t<I, Tuple>...>;
};

// One call operator per accepted argument count: its parameters are the kernel's first
// sizeof...(T) parameter types, so arguments convert at the call site as in a real launch
// (a literal 0 or NULL becomes a null pointer, a double a float, ...).
template <class Self, class Prefix>
struct launch_with;
template <class Self, class... T>
struct launch_with<Self, std::tuple<T...>> {
    void operator()(T... args) const {
        const Self& self = static_cast<const Self&>(*this);
        if constexpr (Self::template kAtSite<T...>) {
            at_site(self, args...);
        } else {
            self.run(std::tuple<T...>(std::move(args)...));
        }
    }
    // The addresses of its own copies of the arguments, which only the runtime reads (SIM_LAUNCH_GLUE).
    static SIM_LAUNCH_GLUE void at_site(const Self& self, T... args) {
        void* argv[sizeof...(T) + 1] = {static_cast<void*>(&args)..., nullptr};
        self.run_at_site(argv);
    }
};

template <class F>
struct by_name_counts {
    template <size_t M>
    using type = std::make_index_sequence<M + 1>;  // every prefix: defaults fill the rest
};
template <>
struct by_name_counts<no_default_args> {
    template <size_t M>
    using type = std::index_sequence<M>;  // all arguments
};

// ``Plain``: whether the launch may run as a plain loop (its own call by name's run_plain).
template <bool Plain, class F, class Seq, class... P>
struct Launcher;
template <bool Plain, class F, size_t... N, class... P>
struct Launcher<Plain, F, std::index_sequence<N...>, P...>
    : launch_with<Launcher<Plain, F, std::index_sequence<N...>, P...>,
                  typename tuple_prefix<N, std::tuple<std::decay_t<P>...>>::type>... {
    using launch_with<Launcher, typename tuple_prefix<N, std::tuple<std::decay_t<P>...>>::type>::operator()...;

    const char* name;
    const char* file;
    int line;
    LaunchSpec spec;
    void (*kernel)(P...);
    F by_name;

    Launcher(const char* n, const char* f, int l, const LaunchSpec& s, void (*k)(P...), F b)
        : name(n), file(f), line(l), spec(s), kernel(k), by_name(b) {}

    // Whether a launch with arguments of types T goes to the runtime whole (launch_at_site): every
    // argument, each trivially copyable, so that the runtime's copies of them are unobservable.
    template <class... T>
    static constexpr bool kAtSite = sizeof...(T) == sizeof...(P) && (std::is_trivially_copyable<T>::value && ...);

    // ``args[i]`` points at the i-th argument. The launch's only code here: what it runs is the
    // registration's loop (by name) or the kernel pointer's pack, which every launch of a kernel
    // with these parameter types shares, not a copy of this site's own.
    SIM_LAUNCH_GLUE void run_at_site(void** args) const {
        using Pk = typename KernelPacker<P...>::Pk;
        const void* address = reinterpret_cast<const void*>(kernel);
        const KernelCall call{spec, name, file, line, address, &Pk::invoke, &Pk::run_plain, nullptr, &Pk::destroy};
        launch_at_site(SiteLaunch{call, &KernelPacker<P...>::make, &KernelPacker<P...>::make, (int)sizeof...(P),
                                  std::is_same<F, no_default_args>::value, nullptr},
                       args);
    }

    // Every other launch: fewer arguments than parameters, or one not trivially copyable. The
    // runtime takes the arguments from ``args``, whose copies this launch does not read again.
    template <class... T>
    void run(std::tuple<T...>&& args) const {
        run_moved(args, std::index_sequence_for<T...>{});
    }
    template <class... T, size_t... I>
    void run_moved(std::tuple<T...>& args, std::index_sequence<I...>) const {
        using Pk = typename KernelPacker<P...>::Pk;
        constexpr bool all = sizeof...(T) == sizeof...(P);
        constexpr bool through_pointer = std::is_same<F, no_default_args>::value;
        const void* address = reinterpret_cast<const void*>(kernel);
        const KernelCall call{spec, name, file, line, address, &Pk::invoke, &Pk::run_plain, nullptr, &Pk::destroy};
        void* argv[sizeof...(T) + 1] = {static_cast<void*>(&std::get<I>(args))..., nullptr};
        MakePack pack = nullptr;
        if constexpr (all) pack = &KernelPacker<P...>::take;
        if constexpr (through_pointer) {
            // C++ applies no default arguments through a pointer: every argument is given, and no
            // call by name is written.
            launch_at_site(SiteLaunch{call, &KernelPacker<P...>::make, pack, (int)sizeof...(P), true, nullptr}, argv);
        } else {
            // The arguments have the parameters' types, so a call by name chooses the same kernel.
            using Own = MovedPacker<F, T...>;
            RunPlain run_plain = nullptr;
            if constexpr (Plain) run_plain = &Own::Pk::run_plain;
            const SiteCall own{&by_name,          &Own::take, &Own::Pk::invoke,          run_plain,
                               &Own::Pk::destroy, !all,       std::is_empty<F>::value};
            launch_at_site(SiteLaunch{call, &KernelPacker<P...>::make, pack, (int)sizeof...(P), false, &own}, argv);
        }
    }
};

// `kernel<<<grid, block, smem, stream>>>(args)` becomes
// `::__sim::launcher(name, __FILE__, __LINE__, grid, block, smem, stream, kernel, by_name, barrier_free)(args)`,
// where barrier_free is the front end's finding that the kernel reaches no barrier or other wait;
// or, with the whole configuration in a LaunchSpec, `::__sim::launcher(spec, name, __FILE__,
// __LINE__, kernel, by_name)(args)`.
template <bool Plain = true, class F, class... P>
static inline auto launcher(const LaunchSpec& spec, const char* name, const char* file, int line,
                            void (*kernel)(P...), F by_name) {
    using Counts = typename by_name_counts<F>::template type<sizeof...(P)>;
    return Launcher<Plain, F, Counts, P...>(name, file, line, spec, kernel, by_name);
}

template <class F, class... P>
static inline auto launcher(const char* name, const char* file, int line, dim3 grid, dim3 block, size_t smem,
                            cudaStream_t stream, void (*kernel)(P...), F by_name, LoopKind loops = false) {
    return launcher(LaunchSpec{grid, block, smem, stream, loops.barrier_free, false, loops.block_loops, loops.fibers_why},
                    name, file, line, kernel, by_name);
}
template <class F, class... P>
static inline auto launcher(const char* name, const char* file, int line, dim3 grid, dim3 block, size_t smem,
                            cudaStream_t stream, void (*kernel)(P...), F by_name, BarrierKind loops) {
    return launcher<false>(
        LaunchSpec{grid, block, smem, stream, loops.barrier_free, false, loops.block_loops, loops.fibers_why}, name,
        file, line, kernel, by_name);
}

}  // namespace __sim

#endif  // CUDA_CPU_SIMULATOR_LAUNCH_H
