// CUDA 12.8's built-in atomic functions (__nv_atomic_*), included by sim_intrinsics.h where its
// atomics are defined: these use its SIM_WITH_ORDER and MO, so they are defined in that place.
#ifndef CUDA_CPU_SIMULATOR_NV_ATOMIC_H
#define CUDA_CPU_SIMULATOR_NV_ATOMIC_H

// nvcc's front end knows these without a declaration and defines their order and scope macros;
// CUDA's headers declare neither. Here every such atomic runs in the memory order the atomics of
// sim_intrinsics.h do (MO: at least as strong as the program asks for); the scope is one address
// space.
#ifndef __NV_ATOMIC_RELAXED
#define __NV_ATOMIC_RELAXED __ATOMIC_RELAXED
#define __NV_ATOMIC_CONSUME __ATOMIC_CONSUME
#define __NV_ATOMIC_ACQUIRE __ATOMIC_ACQUIRE
#define __NV_ATOMIC_RELEASE __ATOMIC_RELEASE
#define __NV_ATOMIC_ACQ_REL __ATOMIC_ACQ_REL
#define __NV_ATOMIC_SEQ_CST __ATOMIC_SEQ_CST
#endif
#ifndef __NV_THREAD_SCOPE_SYSTEM
#define __NV_THREAD_SCOPE_THREAD 0
#define __NV_THREAD_SCOPE_BLOCK 1
#define __NV_THREAD_SCOPE_CLUSTER 2
#define __NV_THREAD_SCOPE_DEVICE 3
#define __NV_THREAD_SCOPE_SYSTEM 4
#endif

namespace __sim {
// ``*p = op(*p, v)`` for any T (floating-point ones included) by compare-and-swap; the old value.
template <int MO, class T, class Op>
static inline T atomic_update(T* p, T v, Op op) {
    T old;
    __atomic_load(p, &old, MO);
    T next = op(old, v);
    while (!__atomic_compare_exchange(p, &old, &next, true, MO, MO)) next = op(old, v);
    return old;
}
}  // namespace __sim

#define SIM_NV_FETCH(NAME, EXPR)                                                                           \
    template <class T>                                                                                     \
    SIM_DEVICE T __nv_atomic_fetch_##NAME(T* p, T v, int, int = __NV_THREAD_SCOPE_SYSTEM) {                \
        SIM_WITH_ORDER(p, return ::__sim::atomic_update<MO>(p, v, [](T a, T b) { return (T)(EXPR); });)   \
    }                                                                                                      \
    template <class T>                                                                                     \
    SIM_DEVICE void __nv_atomic_##NAME(T* p, T v, int order, int scope = __NV_THREAD_SCOPE_SYSTEM) {       \
        (void)__nv_atomic_fetch_##NAME(p, v, order, scope);                                                \
    }
SIM_NV_FETCH(add, a + b)
SIM_NV_FETCH(sub, a - b)
SIM_NV_FETCH(and, a & b)
SIM_NV_FETCH(or, a | b)
SIM_NV_FETCH(xor, a ^ b)
SIM_NV_FETCH(min, b < a ? b : a)
SIM_NV_FETCH(max, a < b ? b : a)
#undef SIM_NV_FETCH

template <class T>
SIM_DEVICE T __nv_atomic_load_n(const T* p, int, int = __NV_THREAD_SCOPE_SYSTEM) {
    T out;
    SIM_WITH_ORDER(p, __atomic_load(const_cast<T*>(p), &out, MO);)
    return out;
}
template <class T>
SIM_DEVICE void __nv_atomic_load(const T* p, T* ret, int, int = __NV_THREAD_SCOPE_SYSTEM) {
    SIM_WITH_ORDER(p, __atomic_load(const_cast<T*>(p), ret, MO);)
}
template <class T>
SIM_DEVICE void __nv_atomic_store_n(T* p, T v, int, int = __NV_THREAD_SCOPE_SYSTEM) {
    SIM_WITH_ORDER(p, __atomic_store(p, &v, MO);)
}
template <class T>
SIM_DEVICE void __nv_atomic_store(T* p, T* v, int, int = __NV_THREAD_SCOPE_SYSTEM) {
    SIM_WITH_ORDER(p, __atomic_store(p, v, MO);)
}
template <class T>
SIM_DEVICE T __nv_atomic_exchange_n(T* p, T v, int, int = __NV_THREAD_SCOPE_SYSTEM) {
    T old;
    SIM_WITH_ORDER(p, __atomic_exchange(p, &v, &old, MO);)
    return old;
}
template <class T>
SIM_DEVICE void __nv_atomic_exchange(T* p, T* v, T* ret, int, int = __NV_THREAD_SCOPE_SYSTEM) {
    SIM_WITH_ORDER(p, __atomic_exchange(p, v, ret, MO);)
}
// A failed exchange leaves the value it found in *expected, as the GPU's does; a weak one here
// never fails spuriously.
template <class T>
SIM_DEVICE bool __nv_atomic_compare_exchange_n(T* p, T* expected, T desired, bool, int, int,
                                               int = __NV_THREAD_SCOPE_SYSTEM) {
    SIM_WITH_ORDER(p, return __atomic_compare_exchange(p, expected, &desired, false, MO, MO);)
}
template <class T>
SIM_DEVICE bool __nv_atomic_compare_exchange(T* p, T* expected, T* desired, bool, int, int,
                                             int = __NV_THREAD_SCOPE_SYSTEM) {
    SIM_WITH_ORDER(p, return __atomic_compare_exchange(p, expected, desired, false, MO, MO);)
}
SIM_DEVICE void __nv_atomic_thread_fence(int, int = __NV_THREAD_SCOPE_SYSTEM) { ::__sim::thread_fence(); }

#endif  // CUDA_CPU_SIMULATOR_NV_ATOMIC_H
