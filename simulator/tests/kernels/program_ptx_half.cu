// Inline PTX on 16-bit values, as NVIDIA's cuda_fp16.hpp and cuda_bf16.hpp write it ("h" operands,
// .f16/.bf16 and their .f16x2/.bf16x2 pairs): arithmetic with .rn/.ftz/.sat/.relu, min/max with
// .NaN, abs, neg, ex2/tanh .approx, setp and set, conversions, the .s16x2/.u16x2 integer pairs and
// atom.add.noftz. Each case prints "half case a b c A B C : results..." (hex; a b c are .f16
// patterns, A B C .bf16 ones) that test_ptx_half.py checks against numpy's float16 and a bfloat16
// reference. Some of these instructions are sm_90's: run it with --arch 900; also built by
// `nvcc -arch=sm_90 -c`.
#include <cstdio>

typedef unsigned int u32;
typedef unsigned long long u64;
typedef unsigned short u16;

#define CUDA_OK(call)                                                                      \
    do {                                                                                   \
        cudaError_t e_ = (call);                                                           \
        if (e_ != cudaSuccess) {                                                           \
            printf("failed %s at line %d: %s\n", #call, __LINE__, cudaGetErrorName(e_)); \
            return 1;                                                                      \
        }                                                                                  \
    } while (0)

// One instruction on 16-bit operands: OP1 (d, a), OP2 (d, a, b), OP3 (d, a, b, c); a predicate
// result through selp.
#define OP1(k, ins, x) do { asm(ins " %0, %1;" : "=h"(h) : "h"(x)); o[k] = h; } while (0)
#define OP2(k, ins, x, y) do { asm(ins " %0, %1, %2;" : "=h"(h) : "h"(x), "h"(y)); o[k] = h; } while (0)
#define OP3(k, ins, x, y, z) do { asm(ins " %0, %1, %2, %3;" : "=h"(h) : "h"(x), "h"(y), "h"(z)); o[k] = h; } while (0)
#define PAIR1(k, ins, x) do { asm(ins " %0, %1;" : "=r"(r) : "r"(x)); o[k] = r; } while (0)
#define PAIR2(k, ins, x, y) do { asm(ins " %0, %1, %2;" : "=r"(r) : "r"(x), "r"(y)); o[k] = r; } while (0)
#define PAIR3(k, ins, x, y, z) do { asm(ins " %0, %1, %2, %3;" : "=r"(r) : "r"(x), "r"(y), "r"(z)); o[k] = r; } while (0)
#define TEST(k, ins, x, y) \
    do { asm("{ .reg .pred p; " ins " p, %1, %2; selp.u32 %0, 1, 0, p; }" : "=r"(r) : "h"(x), "h"(y)); o[k] = r; } while (0)

constexpr int kOut = 64;
__global__ void half_kernel(const u16* in, u64* out, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const u16 a = in[6 * i], b = in[6 * i + 1], c = in[6 * i + 2];
    const u16 A = in[6 * i + 3], B = in[6 * i + 4], C = in[6 * i + 5];
    // Pairs: element 0 in the low half.
    const u32 p = a | (u32)b << 16, q = b | (u32)c << 16, s = c | (u32)a << 16;
    const u32 P = A | (u32)B << 16, Q = B | (u32)C << 16, S = C | (u32)A << 16;
    u64* o = out + (size_t)i * kOut;
    u16 h;
    u32 r;
    int si;
    float f;
    // .f16
    OP2(0, "add.f16", a, b);
    OP2(1, "sub.rn.f16", a, b);
    OP2(2, "mul.f16", a, b);
    OP3(3, "fma.rn.f16", a, b, c);
    OP3(4, "fma.rn.sat.f16", a, b, c);
    OP3(5, "fma.rn.relu.f16", a, b, c);
    OP2(6, "add.ftz.f16", a, b);
    OP2(7, "min.f16", a, b);
    OP2(8, "max.NaN.f16", a, b);
    OP1(9, "abs.f16", a);
    OP1(10, "neg.f16", a);
    OP1(11, "ex2.approx.f16", a);
    OP1(12, "tanh.approx.f16", a);
    TEST(13, "setp.eq.f16", a, b);
    TEST(14, "setp.ltu.f16", a, b);
    TEST(15, "setp.ge.f16", a, b);
    TEST(16, "setp.num.f16", a, b);
    OP2(17, "set.gtu.f16.f16", a, b);
    OP2(18, "mul.rn.sat.f16", a, b);
    // .f16x2
    PAIR2(19, "add.f16x2", p, q);
    PAIR3(20, "fma.rn.f16x2", p, q, s);
    PAIR3(21, "fma.rn.relu.f16x2", p, q, s);
    PAIR2(22, "min.NaN.f16x2", p, q);
    PAIR2(23, "max.f16x2", p, q);
    PAIR2(24, "set.lt.u32.f16x2", p, q);
    PAIR2(25, "set.le.f16x2.f16x2", p, q);
    asm("{ .reg .pred lo, hi; setp.gt.f16x2 lo|hi, %1, %2; selp.u32 %0, 1, 0, lo; @hi or.b32 %0, %0, 2; }"
        : "=r"(r) : "r"(p), "r"(q));
    o[26] = r;
    PAIR1(27, "abs.f16x2", p);
    PAIR1(28, "ex2.approx.f16x2", p);
    // .bf16
    OP2(29, "add.bf16", A, B);
    OP2(30, "sub.rn.bf16", A, B);
    OP2(31, "mul.bf16", A, B);
    OP3(32, "fma.rn.bf16", A, B, C);
    OP3(33, "fma.rn.relu.bf16", A, B, C);
    OP2(34, "min.bf16", A, B);
    OP2(35, "max.NaN.bf16", A, B);
    OP1(36, "abs.bf16", A);
    OP1(37, "neg.bf16", A);
    OP1(38, "ex2.approx.ftz.bf16", A);
    OP1(39, "tanh.approx.bf16", A);
    TEST(40, "setp.lt.bf16", A, B);
    TEST(41, "setp.neu.bf16", A, B);
    TEST(42, "setp.nan.bf16", A, B);
    // .bf16x2
    PAIR2(43, "add.bf16x2", P, Q);
    PAIR3(44, "fma.rn.bf16x2", P, Q, S);
    PAIR2(45, "max.bf16x2", P, Q);
    PAIR2(46, "min.NaN.bf16x2", P, Q);
    PAIR2(47, "set.ge.u32.bf16x2", P, Q);
    PAIR1(48, "neg.bf16x2", P);
    // Conversions: exact widening, rounding to an integer, to an integral value.
    asm("cvt.f32.bf16 %0, %1;" : "=f"(f) : "h"(A));
    o[49] = __float_as_uint(f);
    asm("cvt.rzi.s32.bf16 %0, %1;" : "=r"(si) : "h"(A));
    o[50] = (u32)si;
    asm("cvt.rni.bf16.bf16 %0, %1;" : "=h"(h) : "h"(A));
    o[51] = h;
    asm("cvt.rpi.f16.f16 %0, %1;" : "=h"(h) : "h"(a));
    o[52] = h;
    asm("cvt.rni.s16.f16 %0, %1;" : "=h"(h) : "h"(a));
    o[53] = h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));  // the bf16 as f16
    o[54] = h;
    // set with a 32-bit result from halves, and the packing NVIDIA's headers use.
    asm("{ .reg .b16 lo, hi; mov.b32 {lo, hi}, %1; set.ne.f16.f16 %0, hi, lo; }" : "=h"(h) : "r"(p));
    o[55] = h;
    // The 16-bit integer pairs (sm_90), and max.s32.relu.
    PAIR2(56, "add.s16x2", p, q);
    PAIR2(57, "add.u16x2", p, q);
    PAIR2(58, "min.u16x2", p, q);
    PAIR2(59, "max.s16x2", p, q);
    PAIR2(60, "min.s16x2.relu", p, q);
    PAIR2(61, "max.s32.relu", p, q);
    o[62] = 0;
    o[63] = 0;
}

// Many threads add 1.0 (and 0.5 in a pair's element 1) to one counter of each type: exact sums,
// and each old value seen once.
__global__ void atom_kernel(u32* counters, u32* olds) {
    u16 old;
    u32 old2;
    asm volatile("atom.global.add.noftz.f16 %0, [%1], %2;" : "=h"(old) : "l"(counters), "h"((u16)0x3c00));
    asm volatile("red.global.add.noftz.bf16 [%0], %1;" ::"l"(counters + 1), "h"((u16)0x3f80));
    asm volatile("atom.global.add.noftz.f16x2 %0, [%1], %2;" : "=r"(old2) : "l"(counters + 2), "r"(0x38003c00u));
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    olds[2 * t] = old;
    olds[2 * t + 1] = old2;
    asm volatile("red.add.noftz.bf16x2 [%0], %1;" ::"l"(counters + 3), "r"(0x3f003f80u));
}

int main() {
    // Edge values of each format, then a fixed pseudo-random sequence of patterns.
    const u16 f16_edges[] = {0x0000, 0x8000, 0x3c00, 0xbc00, 0x7c00, 0xfc00, 0x7e00, 0x0001, 0x83ff,
                             0x7bff, 0x3555, 0x4900, 0xc500, 0x0400, 0x3800, 0x7d01};
    const u16 bf16_edges[] = {0x0000, 0x8000, 0x3f80, 0xbf80, 0x7f80, 0xff80, 0x7fc0, 0x0001, 0x807f,
                              0x7f7f, 0x3eab, 0x4120, 0xc0a0, 0x0080, 0x3f00, 0x7f81};
    const int n = 16 * 16 + 256;
    static u16 in[6 * n];
    u32 seed = 2024u;
    for (int i = 0; i < n; ++i) {
        for (int k = 0; k < 6; ++k) {
            seed = seed * 1664525u + 1013904223u;
            u16 v = (u16)(seed >> 16);
            if (i < 256 && k % 3 < 2) v = (k < 3 ? f16_edges : bf16_edges)[k % 3 == 0 ? i / 16 : i % 16];
            in[6 * i + k] = v;
        }
    }
    // A bf16 fma whose exact result lies just below a tie, 3.0 * (1 + 2^-7) - 2^-120: a double
    // rounds it onto the tie (to even: 0x4042); one rounding gives 0x4041.
    in[6 * 256 + 3] = 0x4040, in[6 * 256 + 4] = 0x3f81, in[6 * 256 + 5] = 0x8380;
    u16* d_in = nullptr;
    u64* d_out = nullptr;
    CUDA_OK(cudaMalloc(&d_in, sizeof(in)));
    CUDA_OK(cudaMalloc(&d_out, sizeof(u64) * kOut * n));
    CUDA_OK(cudaMemcpy(d_in, in, sizeof(in), cudaMemcpyHostToDevice));
    half_kernel<<<(n + 127) / 128, 128>>>(d_in, d_out, n);
    CUDA_OK(cudaDeviceSynchronize());
    static u64 res[kOut * n];
    CUDA_OK(cudaMemcpy(res, d_out, sizeof(res), cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; ++i) {
        printf("half %d", i);
        for (int k = 0; k < 6; ++k) printf(" %x", in[6 * i + k]);
        printf(" :");
        for (int k = 0; k < kOut; ++k) printf(" %llx", res[(size_t)i * kOut + k]);
        printf("\n");
    }
    u32* d_counters = nullptr;
    u32* d_olds = nullptr;
    CUDA_OK(cudaMalloc(&d_counters, 4 * sizeof(u32)));
    CUDA_OK(cudaMemset(d_counters, 0, 4 * sizeof(u32)));
    CUDA_OK(cudaMalloc(&d_olds, 512 * sizeof(u32)));
    atom_kernel<<<2, 128>>>(d_counters, d_olds);
    u32 counters[4];
    static u32 olds[512];
    CUDA_OK(cudaMemcpy(counters, d_counters, sizeof(counters), cudaMemcpyDeviceToHost));
    CUDA_OK(cudaMemcpy(olds, d_olds, sizeof(olds), cudaMemcpyDeviceToHost));
    printf("atoms : %x %x %x %x\n", counters[0], counters[1], counters[2], counters[3]);
    printf("olds :");
    for (int t = 0; t < 512; ++t) printf(" %x", olds[t]);
    printf("\n");
    printf("done=1\n");
    return 0;
}
