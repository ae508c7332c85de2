// Inline PTX on a CPU, memory instructions: ld/st with their state spaces and cache hints, atom
// and red, membar/fence (sim_ptx.h's helpers for the other instruction families; ptx.py writes the
// calls).
#ifndef SIM_PTX_MEMORY_H
#define SIM_PTX_MEMORY_H

#include "sim_ptx.h"

namespace __sim {
namespace ptx {

// ---- memory --------------------------------------------------------------------------------------
// Memory orders of ld/st/atom: 0 plain, 1 .volatile, 2 .relaxed, 3 .acquire, 4 .release,
// 5 .acq_rel (scopes are all one here: the whole machine is one coherent CPU).
static inline int gcc_order(int order) {
    return order == 3 ? __ATOMIC_ACQUIRE : order == 4 ? __ATOMIC_RELEASE : order == 5 ? __ATOMIC_ACQ_REL : __ATOMIC_RELAXED;
}
template <class B>
static inline B ld(u64 a, int order) {
    B* p = address<B>(a);
    if (order == 0) return *p;
    if (order == 1) return *const_cast<const volatile B*>(p);
    return __atomic_load_n(p, order == 3 ? __ATOMIC_ACQUIRE : __ATOMIC_RELAXED);
}
template <class B>
static inline void st(u64 a, B v, int order) {
    B* p = address<B>(a);
    if (order == 0) {
        *p = v;
    } else if (order == 1) {
        *const_cast<volatile B*>(p) = v;
    } else {
        __atomic_store_n(p, v, order == 4 ? __ATOMIC_RELEASE : __ATOMIC_RELAXED);
    }
}
// The order an atomic takes: as asked, or what racecheck needs (atomic_order).
static inline int atom_order(const void* p, int order) {
#if defined(__SANITIZE_THREAD__)
    return atomic_order(p, gcc_order(order));
#else
    (void)p;
    return gcc_order(order);
#endif
}
static inline int fail_order(int mo) {
    return mo == __ATOMIC_RELEASE ? __ATOMIC_RELAXED : mo == __ATOMIC_ACQ_REL ? __ATOMIC_ACQUIRE : mo;
}
// A value of T from or to its bits, and T's addition, for integers and floats alike.
template <class T>
static inline T from_bits_any(bits_t<T> b) {
    if constexpr (std::is_floating_point<T>::value) return from_bits<T>(b); else return static_cast<T>(b);
}
template <class T>
static inline bits_t<T> to_bits_any(T v) {
    if constexpr (std::is_floating_point<T>::value) return to_bits(v); else return static_cast<bits_t<T>>(v);
}
template <class T>
static inline T add_any(T a, T b) {
    if constexpr (std::is_floating_point<T>::value) return a + b; else return add(a, b);
}
// atom.op: 0 add, 1 min, 2 max, 3 inc, 4 dec, 5 and, 6 or, 7 xor, 8 exch. T is the type of the
// operation (an integer or a float; bit-size ops use the unsigned type of their width).
template <class T>
static inline T atom(int op, u64 a, T b, int order) {
    using B = bits_t<T>;
    B* p = address<B>(a);
    const int mo = atom_order(p, order);
    if constexpr (std::is_integral<T>::value) {
        switch (op) {
            case 0: return static_cast<T>(__atomic_fetch_add(p, static_cast<B>(b), mo));
            case 5: return static_cast<T>(__atomic_fetch_and(p, static_cast<B>(b), mo));
            case 6: return static_cast<T>(__atomic_fetch_or(p, static_cast<B>(b), mo));
            case 7: return static_cast<T>(__atomic_fetch_xor(p, static_cast<B>(b), mo));
            case 8: return static_cast<T>(__atomic_exchange_n(p, static_cast<B>(b), mo));
            default: break;
        }
    } else if (op == 8) {
        return from_bits<T>(__atomic_exchange_n(p, to_bits(b), mo));
    }
    // The read-modify-write ones: a compare-and-swap loop over the bits.
    B old = __atomic_load_n(p, __ATOMIC_RELAXED);
    for (;;) {
        const T cur = from_bits_any<T>(old);
        T next = cur;
        switch (op) {
            case 0: next = add_any(cur, b); break;
            case 1: next = cur < b ? cur : b; break;
            case 2: next = cur > b ? cur : b; break;
            case 3: next = (cur >= b) ? T(0) : static_cast<T>(cur + 1); break;  // inc: u32 only
            case 4: next = (cur == T(0) || cur > b) ? b : static_cast<T>(cur - 1); break;
            default: break;
        }
        if (__atomic_compare_exchange_n(p, &old, to_bits_any(next), true, mo, fail_order(mo))) return cur;
    }
}
template <class B>
static inline B atom_cas(u64 a, B compare, B value, int order) {
    B* p = address<B>(a);
    const int mo = atom_order(p, order);
    __atomic_compare_exchange_n(p, &compare, value, false, mo, fail_order(mo));
    return compare;
}
// A "memory" clobber: the compiler keeps no memory value in a register across the statement.
static inline void compiler_fence() { __atomic_signal_fence(__ATOMIC_SEQ_CST); }
// membar and fence: a full fence here (racecheck records it, as for __threadfence()).
static inline void fence() { thread_fence(); }

}  // namespace ptx
}  // namespace __sim

#endif  // SIM_PTX_MEMORY_H
