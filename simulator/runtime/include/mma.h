// Simulator stand-in for <mma.h>: nvcuda::wmma warp matrix fragments (tensor-core operations).
//
// A GPU spreads a fragment's elements over the warp's lanes in an order CUDA leaves
// unspecified. Here lane L holds elements [L * num_elements, (L + 1) * num_elements) of the tile
// in row-major order (num_elements = rows * cols / 32, which for accumulators and for tf32,
// bf16, double and 8-bit inputs is the count a GPU gives), so element-wise loops over
// `x[0..num_elements)` mean what they mean on a GPU. Every operation is warp-collective and
// waits for the warp's lanes like __syncwarp (synccheck checks them the same way) and needs all
// 32 lanes. mma_sync pools the lanes' shares of A and B (__sim::wmma_gather) and each lane
// computes its own share of D: products are formed in the input type converted exactly to
// float (double, int for the 8-bit types) and added in order of k, then C is added. A GPU's
// float accumulation order differs, so float results may differ from a GPU's in the last bits.
// tf32 inputs keep their top 19 bits (the low 13 bits of the float are dropped, as tensor cores
// do); __float_to_tf32 rounds to nearest, ties away.
#ifndef CUDA_SIM_MMA_H
#define CUDA_SIM_MMA_H

#include "../cuda_sim.h"
#include "cuda_bf16.h"
#include "cuda_fp16.h"

namespace nvcuda {
namespace wmma {

struct matrix_a {};
struct matrix_b {};
struct accumulator {};
struct row_major {};
struct col_major {};
enum layout_t { mem_row_major, mem_col_major };
namespace precision {
struct tf32 {};
}  // namespace precision

namespace detail {

template <class T>
struct element {
    using type = T;
};
template <>
struct element<precision::tf32> {
    using type = float;
};

// Rows and columns of a fragment's tile: A is M x K, B is K x N, C and D are M x N.
template <class Use, int M, int N, int K>
struct tile;
template <int M, int N, int K>
struct tile<matrix_a, M, N, K> {
    static constexpr int rows = M, cols = K;
};
template <int M, int N, int K>
struct tile<matrix_b, M, N, K> {
    static constexpr int rows = K, cols = N;
};
template <int M, int N, int K>
struct tile<accumulator, M, N, K> {
    static constexpr int rows = M, cols = N;
};

// The shapes CUDA offers for each multiplicand type (sm_80).
template <class T, int M, int N, int K>
struct shape_ok {
    static constexpr bool mk16 = (M == 16 && N == 16 && K == 16) || (M == 32 && N == 8 && K == 16) ||
                                 (M == 8 && N == 32 && K == 16);
    static constexpr bool value = std::is_same<T, __half>::value || std::is_same<T, __nv_bfloat16>::value ||
                                          std::is_same<T, signed char>::value || std::is_same<T, unsigned char>::value
                                      ? mk16
                                  : std::is_same<T, precision::tf32>::value ? (M == 16 && N == 16 && K == 8)
                                  : std::is_same<T, double>::value          ? (M == 8 && N == 8 && K == 4)
                                  : std::is_same<T, float>::value || std::is_same<T, int>::value
                                      ? (mk16 || (M == 16 && N == 16 && K == 8) || (M == 8 && N == 8 && K == 4))
                                      : false;
};

inline float tf32_bits(float v) {
    unsigned int u;
    std::memcpy(&u, &v, 4);
    u &= 0xffffe000u;
    std::memcpy(&v, &u, 4);
    return v;
}

template <class T>
inline double widen(T v) {
    return (double)v;
}
inline double widen(__half v) { return (double)__half2float(v); }
inline double widen(__nv_bfloat16 v) { return (double)__bfloat162float(v); }

// A multiplicand as float. A __half is converted here without a branch per value (the host
// conversion of cuda_fp16.h has them, and they kept mma_sync's operand loops scalar, most of
// its time): its exponent and mantissa moved to a float's places and scaled by 2^112, which is
// exact for normal and subnormal values alike; Inf gets the float's all-ones exponent and NaN
// the one NaN __half2float gives; then the sign. The same value as __half2float, bit for bit.
template <class V>
inline float to_float(V v) {
    return (float)widen(v);
}
inline float to_float(__half v) {
    unsigned short h;
    std::memcpy(&h, &v, sizeof h);
    const unsigned int em = h & 0x7fffu, moved = em << 13;
    float f;
    std::memcpy(&f, &moved, sizeof f);
    f *= 0x1p112f;
    unsigned int bits;
    std::memcpy(&bits, &f, sizeof bits);
    bits = (em >= 0x7c00u ? 0x7f800000u : bits) | (unsigned int)(h & 0x8000u) << 16;
    bits = em > 0x7c00u ? 0x7fffffffu : bits;  // NaN: the one cuda_fp16.h gives
    std::memcpy(&f, &bits, sizeof f);
    return f;
}

// A block-loop kernel (simulator/block_loops_wmma.py) has a region boundary where the warp would
// wait, which orders more than the warp's wait: nothing to do here then.
inline void warp_sync(const char* file, int line) {
    if (::__sim::block_loop() == nullptr) (void)::__sim::warp_op(::__sim::kSyncWarp, 0xffffffffu, 0, 0, 32, file, line);
}

// A block-loop kernel runs each mma_sync as two rounds of the block's thread loop with a region
// boundary between them (simulator/block_loops_wmma.py): in round 1 every lane puts its shares
// of A and B in its warp's buffer (``buffer``, from __sim::wmma_loop_buffer), in round 2 each lane
// multiplies. ``round`` is 0 outside them. One block runs at a time on a worker thread.
struct LoopExchange {
    char* buffer = nullptr;
    int round = 0;
};
inline thread_local LoopExchange loop_exchange;

// Called by the block-loop body before each round (1, 2) and after the second (0).
inline void loop_round(int round, const char* file, int line) {
    if (round == 1) loop_exchange.buffer = ::__sim::wmma_loop_buffer(file, line);
    loop_exchange.round = round;
}

// The calling thread's linear index in the block, and its lane (that modulo 32).
inline unsigned int lane_index() { return ::__sim::block_rank(); }
inline int lane() { return (int)(lane_index() & 31u); }

// What mma_sync multiplies in: int for 8-bit inputs, double for double, float otherwise.
template <class TC>
using compute_t = typename std::conditional<std::is_same<TC, int>::value || std::is_same<TC, double>::value, TC,
                                            float>::type;

// An element of A or B as mma_sync multiplies it (tf32: the low 13 bits dropped).
template <class E, class T, class V>
inline E operand(V v) {
    if constexpr (std::is_same<E, float>::value) {
        const float f = to_float(v);
        return std::is_same<T, precision::tf32>::value ? tf32_bits(f) : f;
    } else {
        return (E)v;
    }
}

}  // namespace detail

template <class Use, int M, int N, int K, class T, class Layout = void>
class fragment {
    static_assert(detail::shape_ok<T, M, N, K>::value, "wmma: no fragment of this shape for this element type");

  public:
    using element_type = typename detail::element<T>::type;
    using storage_element_type = element_type;
    static constexpr int rows = detail::tile<Use, M, N, K>::rows;
    static constexpr int cols = detail::tile<Use, M, N, K>::cols;
    static_assert(rows * cols % 32 == 0, "wmma: a tile spreads evenly over the warp's 32 lanes");
    static constexpr int num_elements = rows * cols / 32;  // this lane's share (see the top of the file)
    element_type x[num_elements];
};

template <class Use, int M, int N, int K, class T, class Layout, class V>
inline void fill_fragment(fragment<Use, M, N, K, T, Layout>& f, const V& v) {
    using E = typename fragment<Use, M, N, K, T, Layout>::element_type;
    for (int i = 0; i < f.num_elements; ++i) f.x[i] = E(v);
}

// A or B: the layout is part of the fragment's type. Each lane reads its own elements.
template <class Use, int M, int N, int K, class T, class Layout, class P>
inline void load_tile(fragment<Use, M, N, K, T, Layout>& f, const P* p, unsigned ldm, bool row_major_mem,
                      const char* file, int line) {
    using F = fragment<Use, M, N, K, T, Layout>;
    detail::warp_sync(file, line);
    const int first = detail::lane() * F::num_elements;
    for (int e = 0; e < F::num_elements; ++e) {
        const int r = (first + e) / F::cols, c = (first + e) % F::cols;
        f.x[e] = row_major_mem ? p[(size_t)r * ldm + c] : p[(size_t)c * ldm + r];
    }
}

template <class Use, int M, int N, int K, class T, class P>
inline void store_matrix_sync_at(P* p, const fragment<Use, M, N, K, T, void>& f, unsigned ldm, layout_t layout,
                                 const char* file, int line) {
    using F = fragment<Use, M, N, K, T, void>;
    detail::warp_sync(file, line);
    const int first = detail::lane() * F::num_elements;
    for (int e = 0; e < F::num_elements; ++e) {
        const int r = (first + e) / F::cols, c = (first + e) % F::cols;
        p[layout == mem_row_major ? (size_t)r * ldm + c : (size_t)c * ldm + r] = f.x[e];
    }
    detail::warp_sync(file, line);
}

template <int M, int N, int K, class TA, class LA, class TB, class LB, class TC>
inline void mma_sync_at(fragment<accumulator, M, N, K, TC>& d, const fragment<matrix_a, M, N, K, TA, LA>& a,
                        const fragment<matrix_b, M, N, K, TB, LB>& b, const fragment<accumulator, M, N, K, TC>& c,
                        const char* file, int line) {
    static_assert(std::is_same<TA, TB>::value, "wmma::mma_sync: A and B must have the same element type");
    using E = detail::compute_t<TC>;
    constexpr int SA = M * K / 32, SB = K * N / 32, SD = M * N / 32;
    static_assert(N % SD == 0, "wmma: a lane's share of D lies in one row");
    static_assert((M * K + K * N) * sizeof(E) <= ::__sim::kWmmaBufferBytes, "wmma: operands exceed the buffer");
    E share_a[SA], share_b[SB];
    const E* A = nullptr;
    const int round = ::__sim::block_loop() != nullptr ? detail::loop_exchange.round : 0;
    // This warp's buffer (block loops only: outside them there is none).
    char* const mine = round != 0 ? detail::loop_exchange.buffer +
                                        (size_t)(detail::lane_index() >> 5) * 2 * ::__sim::kWmmaBufferBytes
                                  : nullptr;
    if (round != 2) {
        for (int e = 0; e < SA; ++e) share_a[e] = detail::operand<E, TA>(a.x[e]);
        for (int e = 0; e < SB; ++e) share_b[e] = detail::operand<E, TA>(b.x[e]);
    }
    if (round == 1) {
        const int l = detail::lane();
        std::memcpy(mine + (size_t)l * sizeof share_a, share_a, sizeof share_a);
        std::memcpy(mine + 32 * sizeof share_a + (size_t)l * sizeof share_b, share_b, sizeof share_b);
        return;
    }
    if (round == 2) {
        A = reinterpret_cast<const E*>(mine);
    } else {
        // Fibers (or a block loop outside the two rounds, which wmma_gather refuses by name).
        A = static_cast<const E*>(::__sim::wmma_gather(share_a, sizeof share_a, share_b, sizeof share_b, file, line));
    }
    const E* B = A + M * K;
    // This lane's elements of D: row i, columns j0 .. j0 + SD - 1. Each sum runs in order of k
    // (the loop over e is the inner one so that it can use vector instructions).
    const int first = detail::lane() * SD, i = first / N, j0 = first % N;
    E acc[SD] = {};
    for (int k = 0; k < K; ++k) {
        const E av = A[i * K + k];
        const E* brow = B + k * N + j0;
        // Products of half, bf16 and tf32 values are exact in float: av * b + acc rounds once, as
        // a fused multiply-add would. A float (non-tf32) operand fuses explicitly.
        if constexpr (std::is_same<E, float>::value && std::is_same<TA, float>::value) {
            for (int e = 0; e < SD; ++e) acc[e] = std::fmaf(av, brow[e], acc[e]);
        } else {
            for (int e = 0; e < SD; ++e) acc[e] += av * brow[e];
        }
    }
    for (int e = 0; e < SD; ++e) {
        if constexpr (std::is_same<E, float>::value) {
            d.x[e] = TC((float)detail::widen(c.x[e]) + acc[e]);
        } else {
            d.x[e] = acc[e] + c.x[e];
        }
    }
}

// __float_to_tf32: round to nearest, ties away from zero, to 10 mantissa bits (cvt.rna.tf32.f32).
inline float __float_to_tf32(float v) {
    if (!std::isfinite(v)) return v;
    unsigned int u;
    std::memcpy(&u, &v, 4);
    u = (u + 0x1000u) & 0xffffe000u;
    std::memcpy(&v, &u, 4);
    return v;
}

}  // namespace wmma
}  // namespace nvcuda

// The collective calls carry the caller's line, so synccheck names the user's code: the names
// CUDA spells `wmma::load_matrix_sync(...)` expand to the `_at` overloads with file and line.
namespace nvcuda {
namespace wmma {
template <class Use, int M, int N, int K, class T, class P>
inline void load_matrix_sync_at(fragment<Use, M, N, K, T, void>& f, const P* p, unsigned ldm, layout_t layout,
                                const char* file, int line) {
    load_tile(f, p, ldm, layout == mem_row_major, file, line);
}
template <class Use, int M, int N, int K, class T, class L, class P>
inline void load_matrix_sync_at(fragment<Use, M, N, K, T, L>& f, const P* p, unsigned ldm, const char* file,
                                int line) {
    static_assert(!std::is_same<L, void>::value, "wmma::load_matrix_sync: an accumulator needs a layout_t");
    load_tile(f, p, ldm, std::is_same<L, row_major>::value, file, line);
}
template <int M, int N, int K, class TA, class LA, class TB, class LB, class TC>
inline void mma_sync_at(fragment<accumulator, M, N, K, TC>& d, const fragment<matrix_a, M, N, K, TA, LA>& a,
                        const fragment<matrix_b, M, N, K, TB, LB>& b, const fragment<accumulator, M, N, K, TC>& c,
                        bool satf, const char* file, int line) {
    (void)satf;  // saturation applies to integer overflow, which the int accumulation here does not reach
    mma_sync_at(d, a, b, c, file, line);
}
}  // namespace wmma
}  // namespace nvcuda

#define load_matrix_sync(...) load_matrix_sync_at(__VA_ARGS__, __FILE__, __LINE__)
#define store_matrix_sync(...) store_matrix_sync_at(__VA_ARGS__, __FILE__, __LINE__)
#define mma_sync(...) mma_sync_at(__VA_ARGS__, __FILE__, __LINE__)

#endif  // CUDA_SIM_MMA_H
