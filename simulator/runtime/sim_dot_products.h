// The sm_61 integer dot products that <sm_61_intrinsics.h> declares (included by
// sim_intrinsics.h, which defines SIM_DEVICE).
#ifndef CUDA_SIM_DOT_PRODUCTS_H
#define CUDA_SIM_DOT_PRODUCTS_H

#include <cstring>

// sm_61 integer dot products (CUDA Math API): bytes of srcB times bytes (__dp4a) or 16-bit
// halves (__dp2a_lo/_hi: srcB's low or high two bytes) of srcA, summed into c; signed operands
// extend their sign, unsigned ones do not, and the sum wraps as the GPU's 32-bit add does.
namespace __sim {
template <class Part, class Word>
static inline Part word_part(Word w, int index) {
    return (Part)(w >> (8 * sizeof(Part) * index));
}
template <class Byte, class Half, class Word>
static inline Word dot_parts(Word a, Word b, Word c, bool halves, int first_byte) {
    using U = unsigned int;
    U sum = (U)c;
    for (int i = 0; i < (halves ? 2 : 4); ++i) {
        const U lhs = halves ? (U)word_part<Half>(a, i) : (U)word_part<Byte>(a, i);
        sum += lhs * (U)word_part<Byte>(b, first_byte + i);
    }
    return (Word)sum;
}
template <class V>
static inline unsigned int packed(V v) {
    unsigned int w;
    std::memcpy(&w, &v, sizeof w);
    return w;
}
}  // namespace __sim
SIM_DEVICE int __dp4a(int a, int b, int c) {
    return ::__sim::dot_parts<signed char, short>((unsigned)a, (unsigned)b, (unsigned)c, false, 0);
}
SIM_DEVICE unsigned int __dp4a(unsigned int a, unsigned int b, unsigned int c) {
    return ::__sim::dot_parts<unsigned char, unsigned short>(a, b, c, false, 0);
}
SIM_DEVICE int __dp4a(char4 a, char4 b, int c) { return __dp4a((int)::__sim::packed(a), (int)::__sim::packed(b), c); }
SIM_DEVICE unsigned int __dp4a(uchar4 a, uchar4 b, unsigned int c) {
    return __dp4a(::__sim::packed(a), ::__sim::packed(b), c);
}
#define SIM_DP2A(NAME, FIRST)                                                                      \
    SIM_DEVICE int NAME(int a, int b, int c) {                                                  \
        return ::__sim::dot_parts<signed char, short>((unsigned)a, (unsigned)b, (unsigned)c, true, FIRST); \
    }                                                                                              \
    SIM_DEVICE unsigned int NAME(unsigned int a, unsigned int b, unsigned int c) {              \
        return ::__sim::dot_parts<unsigned char, unsigned short>(a, b, c, true, FIRST);              \
    }                                                                                              \
    SIM_DEVICE int NAME(short2 a, char4 b, int c) {                                             \
        return NAME((int)::__sim::packed(a), (int)::__sim::packed(b), c);                              \
    }                                                                                              \
    SIM_DEVICE unsigned int NAME(ushort2 a, uchar4 b, unsigned int c) {                         \
        return NAME(::__sim::packed(a), ::__sim::packed(b), c);                                        \
    }
SIM_DP2A(__dp2a_lo, 0)
SIM_DP2A(__dp2a_hi, 2)
#undef SIM_DP2A
#endif  // CUDA_SIM_DOT_PRODUCTS_H
