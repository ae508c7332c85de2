// Inline PTX, one thread's instructions: integer, bit, floating-point and conversion instructions
// and the special registers, run on inputs the host makes (every pair of 16 edge values, then a
// fixed pseudo-random sequence) and printed as "kernel case a b c : results..." lines (hex) that
// test_ptx_*.py check against the PTX ISA's definitions, worked out there in Python. Also built by
// `nvcc -arch=sm_80 -c` (test_ptx_threads.py, where nvcc is): the PTX here is PTX that nvcc accepts.
#include <cstdio>
#include <cstring>

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

// ---- integer and bit instructions ------------------------------------------------------------
constexpr int kBits = 46;
__global__ void bits_kernel(const u32* in, u64* out, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const u32 a = in[3 * i], b = in[3 * i + 1], c = in[3 * i + 2];
    const u64 a64 = ((u64)b << 32) | a, b64 = ((u64)c << 32) | b;
    const u32 pos = b & 63, len = c & 63, sh = c & 63;
    u64* o = out + (size_t)i * kBits;
    u32 r;
    u64 r64;
    asm("bfe.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(pos), "r"(len));
    o[0] = r;
    asm("bfe.s32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(pos), "r"(len));
    o[1] = r;
    asm("bfe.u64 %0, %1, %2, %3;" : "=l"(r64) : "l"(a64), "r"(pos), "r"(len));
    o[2] = r64;
    asm("bfe.s64 %0, %1, %2, %3;" : "=l"(r64) : "l"(a64), "r"(pos + 16), "r"(len));
    o[3] = r64;
    asm("bfi.b32 %0, %1, %2, %3, %4;" : "=r"(r) : "r"(a), "r"(b), "r"(pos), "r"(len));
    o[4] = r;
    asm("bfi.b64 %0, %1, %2, %3, %4;" : "=l"(r64) : "l"(a64), "l"(b64), "r"(pos), "r"(len));
    o[5] = r64;
    asm("prmt.b32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
    o[6] = r;
    asm("prmt.b32.f4e %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
    o[7] = r;
    asm("prmt.b32.b4e %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
    o[8] = r;
    asm("prmt.b32.rc8 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
    o[9] = r;
    asm("prmt.b32.ecl %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
    o[10] = r;
    asm("prmt.b32.ecr %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
    o[11] = r;
    asm("prmt.b32.rc16 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
    o[12] = r;
    asm("lop3.b32 %0, %1, %2, %3, 0x96;" : "=r"(r) : "r"(a), "r"(b), "r"(c));  // a ^ b ^ c
    o[13] = r;
    asm("lop3.b32 %0, %1, %2, %3, %4;" : "=r"(r) : "r"(a), "r"(b), "r"(c), "n"(0xE8));  // majority
    o[14] = r;
    asm("lop3.b32 %0, %1, %2, %3, 0x1A;" : "=r"(r) : "r"(a), "r"(b), "r"(c));  // (a & b | c) ^ a
    o[15] = r;
    asm("brev.b32 %0, %1;" : "=r"(r) : "r"(a));
    o[16] = r;
    asm("brev.b64 %0, %1;" : "=l"(r64) : "l"(a64));
    o[17] = r64;
    asm("popc.b32 %0, %1;" : "=r"(r) : "r"(a));
    o[18] = r;
    asm("popc.b64 %0, %1;" : "=r"(r) : "l"(a64));
    o[19] = r;
    asm("clz.b32 %0, %1;" : "=r"(r) : "r"(a >> (c & 31)));
    o[20] = r;
    asm("clz.b64 %0, %1;" : "=r"(r) : "l"(a64 >> sh));
    o[21] = r;
    asm("bfind.u32 %0, %1;" : "=r"(r) : "r"(a >> (c & 31)));
    o[22] = r;
    asm("bfind.s32 %0, %1;" : "=r"(r) : "r"(a));
    o[23] = r;
    asm("bfind.shiftamt.u32 %0, %1;" : "=r"(r) : "r"(a >> (c & 31)));
    o[24] = r;
    asm("bfind.s64 %0, %1;" : "=r"(r) : "l"(a64));
    o[25] = r;
    asm("shf.l.wrap.b32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(sh));
    o[26] = r;
    asm("shf.r.clamp.b32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(sh));
    o[27] = r;
    asm("shf.l.clamp.b32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(sh));
    o[28] = r;
    asm("shf.r.wrap.b32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(sh));
    o[29] = r;
    asm("shl.b32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(sh));
    o[30] = r;
    asm("shr.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(sh));
    o[31] = r;
    asm("shr.s32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(sh));
    o[32] = r;
    asm("shl.b64 %0, %1, %2;" : "=l"(r64) : "l"(a64), "r"(c & 127));
    o[33] = r64;
    asm("shr.s64 %0, %1, %2;" : "=l"(r64) : "l"(a64), "r"(c & 127));
    o[34] = r64;
    asm("{\n\t.reg .b32 t;\n\tand.b32 t, %1, %2;\n\tor.b32 t, t, %3;\n\txor.b32 %0, t, %1;\n\t}"
        : "=r"(r)
        : "r"(a), "r"(b), "r"(c));
    o[35] = r;
    asm("not.b32 %0, %1;" : "=r"(r) : "r"(a));
    o[36] = r;
    asm("cnot.b32 %0, %1;" : "=r"(r) : "r"(a & b));
    o[37] = r;
    // Unpack a 64-bit value into halves and pack them back swapped (CUB's shuffle of 64 bits).
    asm("{\n\t.reg .u32 lo, hi;\n\tmov.b64 {lo, hi}, %1;\n\tmov.b64 %0, {hi, lo};\n\t}" : "=l"(r64) : "l"(a64));
    o[38] = r64;
    u16 h0 = (u16)a, h1 = (u16)(b >> 16);
    asm("mov.b32 %0, {%1, %2};" : "=r"(r) : "h"(h0), "h"(h1));
    o[39] = r;
    // The SIMD video instructions (stereoDisparity's sum of absolute differences among them).
    asm("vabsdiff4.u32.u32.u32.add %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
    o[40] = r;
    asm("vadd4.s32.s32.s32.sat %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
    o[41] = r;
    asm("vsub4.u32.u32.u32.sat %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
    o[42] = r;
    asm("vavrg4.s32.s32.s32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
    o[43] = r;
    asm("vmin4.s32.s32.s32.add %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
    o[44] = r;
    asm("vmax4.u32.u32.s32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
    o[45] = r;
}

// ---- integer arithmetic: carries, products, saturation, division ------------------------------------
constexpr int kArith = 48;
__global__ void arith_kernel(const u32* in, u64* out, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const u32 a = in[3 * i], b = in[3 * i + 1], c = in[3 * i + 2];
    const u64 a64 = ((u64)b << 32) | a, b64 = ((u64)c << 32) | b, c64 = ((u64)a << 32) | c;
    u64* o = out + (size_t)i * kArith;
    u32 r[5];
    // 128-bit X + Y, X = (a, b, c, a ^ b) and Y = (c, a, b, ~c) from the low word up; the carry out last.
    asm("add.cc.u32 %0, %5, %9;\n\taddc.cc.u32 %1, %6, %10;\n\taddc.cc.u32 %2, %7, %11;\n\taddc.cc.u32 %3, %8, %12;\n\t"
        "addc.u32 %4, 0, 0;"
        : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]), "=r"(r[4])
        : "r"(a), "r"(b), "r"(c), "r"(a ^ b), "r"(c), "r"(a), "r"(b), "r"(~c));
    for (int k = 0; k < 5; ++k) o[k] = r[k];
    asm("sub.cc.u32 %0, %5, %9;\n\tsubc.cc.u32 %1, %6, %10;\n\tsubc.cc.u32 %2, %7, %11;\n\tsubc.cc.u32 %3, %8, %12;\n\t"
        "subc.u32 %4, 0, 0;"
        : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]), "=r"(r[4])
        : "r"(a), "r"(b), "r"(c), "r"(a ^ b), "r"(c), "r"(a), "r"(b), "r"(~c));
    for (int k = 0; k < 5; ++k) o[5 + k] = r[k];
    // The ISA's extended-precision multiply: [r3, r2, r1, r0] = [b, a] * [c, a ^ c].
    asm("mul.lo.u32 %0, %4, %6;\n\tmul.hi.u32 %1, %4, %6;\n\tmad.lo.cc.u32 %1, %5, %6, %1;\n\tmadc.hi.u32 %2, %5, %6, 0;\n\t"
        "mad.lo.cc.u32 %1, %4, %7, %1;\n\tmadc.hi.cc.u32 %2, %4, %7, %2;\n\taddc.u32 %3, 0, 0;\n\t"
        "mad.lo.cc.u32 %2, %5, %7, %2;\n\tmadc.hi.u32 %3, %5, %7, %3;"
        : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
        : "r"(a), "r"(b), "r"(a ^ c), "r"(c));
    for (int k = 0; k < 4; ++k) o[10 + k] = r[k];
    u32 x;
    u64 x64;
    asm("mul.hi.u32 %0, %1, %2;" : "=r"(x) : "r"(a), "r"(b));
    o[14] = x;
    asm("mul.hi.s32 %0, %1, %2;" : "=r"(x) : "r"(a), "r"(b));
    o[15] = x;
    asm("mul.wide.u32 %0, %1, %2;" : "=l"(x64) : "r"(a), "r"(b));
    o[16] = x64;
    asm("mul.wide.s32 %0, %1, %2;" : "=l"(x64) : "r"(a), "r"(b));
    o[17] = x64;
    asm("mul.hi.u64 %0, %1, %2;" : "=l"(x64) : "l"(a64), "l"(b64));
    o[18] = x64;
    asm("mul.hi.s64 %0, %1, %2;" : "=l"(x64) : "l"(a64), "l"(b64));
    o[19] = x64;
    asm("mul.lo.u64 %0, %1, %2;" : "=l"(x64) : "l"(a64), "l"(b64));
    o[20] = x64;
    asm("mad.lo.u32 %0, %1, %2, %3;" : "=r"(x) : "r"(a), "r"(b), "r"(c));
    o[21] = x;
    asm("mad.hi.s32 %0, %1, %2, %3;" : "=r"(x) : "r"(a), "r"(b), "r"(c));
    o[22] = x;
    asm("mad.wide.u32 %0, %1, %2, %3;" : "=l"(x64) : "r"(a), "r"(b), "l"(c64));
    o[23] = x64;
    asm("mad.hi.sat.s32 %0, %1, %2, %3;" : "=r"(x) : "r"(a), "r"(b), "r"(c));
    o[24] = x;
    asm("add.sat.s32 %0, %1, %2;" : "=r"(x) : "r"(a), "r"(b));
    o[25] = x;
    asm("sub.sat.s32 %0, %1, %2;" : "=r"(x) : "r"(a), "r"(b));
    o[26] = x;
    asm("min.s32 %0, %1, %2;" : "=r"(x) : "r"(a), "r"(b));
    o[27] = x;
    asm("max.u32 %0, %1, %2;" : "=r"(x) : "r"(a), "r"(b));
    o[28] = x;
    asm("min.u64 %0, %1, %2;" : "=l"(x64) : "l"(a64), "l"(b64));
    o[29] = x64;
    asm("max.s64 %0, %1, %2;" : "=l"(x64) : "l"(a64), "l"(c64));
    o[30] = x64;
    asm("abs.s32 %0, %1;" : "=r"(x) : "r"(a));
    o[31] = x;
    asm("neg.s32 %0, %1;" : "=r"(x) : "r"(a));
    o[32] = x;
    asm("abs.s64 %0, %1;" : "=l"(x64) : "l"(a64));
    o[33] = x64;
    asm("div.u32 %0, %1, %2;" : "=r"(x) : "r"(a), "r"(b | 1));
    o[34] = x;
    asm("rem.s32 %0, %1, %2;" : "=r"(x) : "r"(a), "r"((b | 1) & 0x7fffffff));
    o[35] = x;
    asm("div.s64 %0, %1, %2;" : "=l"(x64) : "l"(a64), "l"(b64 | 1));
    o[36] = x64;
    asm("mul24.lo.s32 %0, %1, %2;" : "=r"(x) : "r"(a), "r"(b));
    o[37] = x;
    asm("mul24.hi.u32 %0, %1, %2;" : "=r"(x) : "r"(a), "r"(b));
    o[38] = x;
    asm("mad24.lo.u32 %0, %1, %2, %3;" : "=r"(x) : "r"(a), "r"(b), "r"(c));
    o[39] = x;
    u16 h = 0;
    asm("add.u16 %0, %1, %2;" : "=h"(h) : "h"((u16)a), "h"((u16)b));
    o[40] = h;
    asm("mul.wide.u16 %0, %1, %2;" : "=r"(x) : "h"((u16)a), "h"((u16)c));
    o[41] = x;
    asm("sub.s64 %0, %1, %2;" : "=l"(x64) : "l"(a64), "l"(b64));
    o[42] = x64;
    // 128-bit (a64, b64) + (c64, a64) with 64-bit carries.
    u64 lo, hi;
    asm("add.cc.u64 %0, %2, %4;\n\taddc.u64 %1, %3, %5;" : "=l"(lo), "=l"(hi) : "l"(a64), "l"(b64), "l"(c64), "l"(a64));
    o[43] = lo;
    o[44] = hi;
    // A loop with a label and a predicated branch: 1 + 2 + ... + (c & 255) + 1 terms.
    asm("{\n\t.reg .pred p;\n\t.reg .u32 k;\n\tmov.u32 %0, 0;\n\tadd.u32 k, %1, 1;\n"
        "LOOP:\n\tadd.u32 %0, %0, k;\n\tsub.u32 k, k, 1;\n\tsetp.ne.u32 p, k, 0;\n\t@p bra LOOP;\n\t}"
        : "=r"(x)
        : "r"(c & 255));
    o[45] = x;
    // "+r": read and written; %% is a literal %.
    x = a;
    asm("{\n\t.reg .u32 %%t;\n\tmov.u32 %%t, %1;\n\tadd.u32 %0, %0, %%t;\n\t}" : "+r"(x) : "r"(b));
    o[46] = x;
    asm("{\n\t.reg .pred p;\n\tsetp.lt.s32 p, %1, %2;\n\tselp.b32 %0, %1, %2, p;\n\t}" : "=r"(x) : "r"(a), "r"(b));
    o[47] = x;  // min.s32 by a signed comparison
}

// ---- floating point: rounding modifiers, conversions, comparisons, approximations -------------------
constexpr int kFloat = 96;
#define SETP_BIT(TYPE, C, OP, BIT, X, Y)                                                              \
    asm("{\n\t.reg .pred p;\n\tsetp." #OP "." #TYPE " p, %1, %2;\n\tselp.u32 %0, 1, 0, p;\n\t}" \
        : "=r"(t)                                                                                 \
        : C(X), C(Y));                                                                            \
    mask |= (u64)t << (BIT)
#define SETP_ALL(TYPE, C, X, Y)                                                                 \
    SETP_BIT(TYPE, C, eq, 0, X, Y);                                                             \
    SETP_BIT(TYPE, C, ne, 1, X, Y);                                                             \
    SETP_BIT(TYPE, C, lt, 2, X, Y);                                                             \
    SETP_BIT(TYPE, C, le, 3, X, Y);                                                             \
    SETP_BIT(TYPE, C, gt, 4, X, Y);                                                             \
    SETP_BIT(TYPE, C, ge, 5, X, Y);                                                             \
    SETP_BIT(TYPE, C, equ, 6, X, Y);                                                            \
    SETP_BIT(TYPE, C, neu, 7, X, Y);                                                            \
    SETP_BIT(TYPE, C, ltu, 8, X, Y);                                                            \
    SETP_BIT(TYPE, C, leu, 9, X, Y);                                                            \
    SETP_BIT(TYPE, C, gtu, 10, X, Y);                                                           \
    SETP_BIT(TYPE, C, geu, 11, X, Y);                                                           \
    SETP_BIT(TYPE, C, num, 12, X, Y);                                                           \
    SETP_BIT(TYPE, C, nan, 13, X, Y)

__global__ void float_kernel(const u32* in, u64* out, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const u32 a = in[3 * i], b = in[3 * i + 1], c = in[3 * i + 2];
    const u64 a64 = ((u64)b << 32) | a, b64 = ((u64)c << 32) | b, c64 = ((u64)a << 32) | c;
    const float x = __uint_as_float(a), y = __uint_as_float(b), z = __uint_as_float(c);
    // Doubles: the words' bit patterns, or the floats widened and scaled (exactly) so that sums and
    // products round.
    const double d = (i & 1) ? __longlong_as_double((long long)a64) : (double)x * 3.0;
    const double e = (i & 1) ? __longlong_as_double((long long)b64) : (double)y * 0.75;
    const double f = (i & 1) ? __longlong_as_double((long long)c64) : (double)z;
    u64* o = out + (size_t)i * kFloat;
    float r;
    double dr;
    u32 t;
    u16 h;
    u64 mask = 0;
    long long s64;
#define F32(k) o[k] = __float_as_uint(r)
#define F64(k) o[k] = (u64)__double_as_longlong(dr)
    asm("add.rn.f32 %0, %1, %2;" : "=f"(r) : "f"(x), "f"(y));
    F32(0);
    asm("add.rz.f32 %0, %1, %2;" : "=f"(r) : "f"(x), "f"(y));
    F32(1);
    asm("add.rm.f32 %0, %1, %2;" : "=f"(r) : "f"(x), "f"(y));
    F32(2);
    asm("add.rp.f32 %0, %1, %2;" : "=f"(r) : "f"(x), "f"(y));
    F32(3);
    asm("sub.rz.f32 %0, %1, %2;" : "=f"(r) : "f"(x), "f"(y));
    F32(4);
    asm("mul.rn.f32 %0, %1, %2;" : "=f"(r) : "f"(x), "f"(y));
    F32(5);
    asm("mul.rz.f32 %0, %1, %2;" : "=f"(r) : "f"(x), "f"(y));
    F32(6);
    asm("mul.rp.f32 %0, %1, %2;" : "=f"(r) : "f"(x), "f"(y));
    F32(7);
    asm("fma.rn.f32 %0, %1, %2, %3;" : "=f"(r) : "f"(x), "f"(y), "f"(z));
    F32(8);
    asm("fma.rz.f32 %0, %1, %2, %3;" : "=f"(r) : "f"(x), "f"(y), "f"(z));
    F32(9);
    asm("fma.rm.f32 %0, %1, %2, %3;" : "=f"(r) : "f"(x), "f"(y), "f"(z));
    F32(10);
    asm("div.rn.f32 %0, %1, %2;" : "=f"(r) : "f"(x), "f"(y));
    F32(11);
    asm("div.rz.f32 %0, %1, %2;" : "=f"(r) : "f"(x), "f"(y));
    F32(12);
    asm("sqrt.rn.f32 %0, %1;" : "=f"(r) : "f"(x));
    F32(13);
    asm("sqrt.rp.f32 %0, %1;" : "=f"(r) : "f"(x));
    F32(14);
    asm("rcp.rn.f32 %0, %1;" : "=f"(r) : "f"(x));
    F32(15);
    asm("add.ftz.f32 %0, %1, %2;" : "=f"(r) : "f"(x), "f"(y));
    F32(16);
    asm("add.sat.f32 %0, %1, %2;" : "=f"(r) : "f"(x), "f"(y));
    F32(17);
    asm("min.f32 %0, %1, %2;" : "=f"(r) : "f"(x), "f"(y));
    F32(18);
    asm("max.f32 %0, %1, %2;" : "=f"(r) : "f"(x), "f"(y));
    F32(19);
    asm("min.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(x), "f"(y));
    F32(20);
    asm("abs.f32 %0, %1;" : "=f"(r) : "f"(x));
    F32(21);
    asm("neg.f32 %0, %1;" : "=f"(r) : "f"(x));
    F32(22);
    SETP_ALL(f32, "f", x, y);
    o[23] = mask;
    asm("cvt.rni.s32.f32 %0, %1;" : "=r"(t) : "f"(x));
    o[24] = t;
    asm("cvt.rzi.s32.f32 %0, %1;" : "=r"(t) : "f"(x));
    o[25] = t;
    asm("cvt.rmi.s32.f32 %0, %1;" : "=r"(t) : "f"(x));
    o[26] = t;
    asm("cvt.rpi.s32.f32 %0, %1;" : "=r"(t) : "f"(x));
    o[27] = t;
    asm("cvt.rzi.u32.f32 %0, %1;" : "=r"(t) : "f"(x));
    o[28] = t;
    asm("cvt.rni.s64.f32 %0, %1;" : "=l"(s64) : "f"(x));
    o[29] = (u64)s64;
    asm("cvt.rzi.u8.f32 %0, %1;" : "=h"(h) : "f"(x));
    o[30] = h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(x));
    o[31] = h;
    asm("cvt.rz.f16.f32 %0, %1;" : "=h"(h) : "f"(x));
    o[32] = h;
    asm("cvt.rm.f16.f32 %0, %1;" : "=h"(h) : "f"(x));
    o[33] = h;
    asm("cvt.rp.f16.f32 %0, %1;" : "=h"(h) : "f"(x));
    o[34] = h;
    asm("cvt.f32.f16 %0, %1;" : "=f"(r) : "h"((u16)a));
    F32(35);
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(x));
    o[36] = h;
    asm("cvt.rz.bf16.f32 %0, %1;" : "=h"(h) : "f"(x));
    o[37] = h;
    asm("cvt.f32.bf16 %0, %1;" : "=f"(r) : "h"((u16)b));
    F32(38);
    asm("cvt.rn.f32.s32 %0, %1;" : "=f"(r) : "r"(a));
    F32(39);
    asm("cvt.rz.f32.s32 %0, %1;" : "=f"(r) : "r"(a));
    F32(40);
    asm("cvt.rm.f32.u32 %0, %1;" : "=f"(r) : "r"(a));
    F32(41);
    asm("cvt.rp.f32.s64 %0, %1;" : "=f"(r) : "l"(a64));
    F32(42);
    asm("cvt.rn.f64.u64 %0, %1;" : "=d"(dr) : "l"(a64));
    F64(43);
    asm("cvt.rn.f32.f64 %0, %1;" : "=f"(r) : "d"(d));
    F32(44);
    asm("cvt.rz.f32.f64 %0, %1;" : "=f"(r) : "d"(d));
    F32(45);
    asm("cvt.rm.f32.f64 %0, %1;" : "=f"(r) : "d"(d));
    F32(46);
    asm("cvt.rp.f32.f64 %0, %1;" : "=f"(r) : "d"(d));
    F32(47);
    asm("cvt.f64.f32 %0, %1;" : "=d"(dr) : "f"(x));
    F64(48);
    asm("cvt.rni.f32.f32 %0, %1;" : "=f"(r) : "f"(x));
    F32(49);
    asm("cvt.rmi.f32.f32 %0, %1;" : "=f"(r) : "f"(x));
    F32(50);
    asm("cvt.sat.f32.f32 %0, %1;" : "=f"(r) : "f"(x));
    F32(51);
    asm("cvt.rzi.s64.f64 %0, %1;" : "=l"(s64) : "d"(d));
    o[52] = (u64)s64;
    asm("cvt.rni.s32.f64 %0, %1;" : "=r"(t) : "d"(d));
    o[53] = t;
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(t) : "f"(x), "f"(y));
    o[54] = t;
    asm("cvt.rn.relu.f16.f32 %0, %1;" : "=h"(h) : "f"(x));
    o[55] = h;
    asm("cvt.sat.s8.s32 %0, %1;" : "=r"(t) : "r"(a));
    o[56] = t;
    asm("cvt.u16.s32 %0, %1;" : "=h"(h) : "r"(a));
    o[57] = h;
    asm("cvt.s64.s16 %0, %1;" : "=l"(s64) : "h"((u16)b));
    o[58] = (u64)s64;
    asm("cvt.sat.u32.s64 %0, %1;" : "=r"(t) : "l"(a64));
    o[59] = t;
    asm("add.rn.f64 %0, %1, %2;" : "=d"(dr) : "d"(d), "d"(e));
    F64(60);
    asm("mul.rz.f64 %0, %1, %2;" : "=d"(dr) : "d"(d), "d"(e));
    F64(61);
    asm("fma.rp.f64 %0, %1, %2, %3;" : "=d"(dr) : "d"(d), "d"(e), "d"(f));
    F64(62);
    asm("div.rm.f64 %0, %1, %2;" : "=d"(dr) : "d"(d), "d"(e));
    F64(63);
    asm("ex2.approx.f32 %0, %1;" : "=f"(r) : "f"(x));
    F32(64);
    asm("lg2.approx.f32 %0, %1;" : "=f"(r) : "f"(x));
    F32(65);
    asm("sin.approx.f32 %0, %1;" : "=f"(r) : "f"(x));
    F32(66);
    asm("cos.approx.f32 %0, %1;" : "=f"(r) : "f"(x));
    F32(67);
    asm("rsqrt.approx.f32 %0, %1;" : "=f"(r) : "f"(x));
    F32(68);
    asm("rcp.approx.f32 %0, %1;" : "=f"(r) : "f"(x));
    F32(69);
    asm("sqrt.approx.f32 %0, %1;" : "=f"(r) : "f"(x));
    F32(70);
    asm("{\n\t.reg .pred p;\n\tsetp.lt.f32 p, %1, %2;\n\tselp.f32 %0, %1, %2, p;\n\t}" : "=f"(r) : "f"(x), "f"(y));
    F32(71);
    asm("{\n\t.reg .f32 one;\n\tmov.f32 one, 0f3F800000;\n\tadd.f32 %0, %1, one;\n\tadd.f32 %0, %0, 0.5;\n\t}"
        : "=f"(r)
        : "f"(x));
    F32(72);
    asm("neg.f64 %0, %1;" : "=d"(dr) : "d"(d));
    F64(73);
    asm("abs.f64 %0, %1;" : "=d"(dr) : "d"(d));
    F64(74);
    asm("max.f64 %0, %1, %2;" : "=d"(dr) : "d"(d), "d"(e));
    F64(75);
    asm("cvt.rn.f16.f64 %0, %1;" : "=h"(h) : "d"(d));
    o[76] = h;
    asm("cvt.f64.f16 %0, %1;" : "=d"(dr) : "h"((u16)c));
    F64(77);
    asm("cvt.rz.f16x2.f32 %0, %1, %2;" : "=r"(t) : "f"(x), "f"(y));
    o[78] = t;
    asm("cvt.rni.f64.f64 %0, %1;" : "=d"(dr) : "d"(d));
    F64(79);
    o[80] = (u64)__double_as_longlong(d);
    o[81] = (u64)__double_as_longlong(e);
    o[82] = (u64)__double_as_longlong(f);
    mask = 0;
    SETP_ALL(f64, "d", d, e);
    o[83] = mask;
    // setp with a boolean operation and a p|q pair, and predicate logic.
    asm("{\n\t.reg .pred c, p, q;\n\t.reg .u32 t;\n\tsetp.gt.f32 c, %3, 0f00000000;\n\t"
        "setp.lt.and.f32 p|q, %1, %2, c;\n\tselp.u32 %0, 1, 0, p;\n\tselp.u32 t, 2, 0, q;\n\tor.b32 %0, %0, t;\n\t}"
        : "=r"(t)
        : "f"(x), "f"(y), "f"(z));
    o[84] = t;
    asm("{\n\t.reg .pred c, p, q;\n\t.reg .u32 t;\n\tsetp.gt.f32 c, %3, 0f00000000;\n\t"
        "setp.ge.or.f32 p|q, %1, %2, !c;\n\tselp.u32 %0, 1, 0, p;\n\tselp.u32 t, 2, 0, q;\n\tor.b32 %0, %0, t;\n\t}"
        : "=r"(t)
        : "f"(x), "f"(y), "f"(z));
    o[85] = t;
    asm("{\n\t.reg .pred a, b, r;\n\t.reg .u32 k;\n\tsetp.lt.f32 a, %1, %2;\n\tsetp.lt.f32 b, %2, %3;\n\t"
        "and.pred r, a, b;\n\tselp.u32 %0, 1, 0, r;\n\tor.pred r, a, b;\n\tselp.u32 k, 2, 0, r;\n\tor.b32 %0, %0, k;\n\t"
        "xor.pred r, a, b;\n\tselp.u32 k, 4, 0, r;\n\tor.b32 %0, %0, k;\n\tnot.pred r, a;\n\tselp.u32 k, 8, 0, r;\n\t"
        "or.b32 %0, %0, k;\n\t}"
        : "=r"(t)
        : "f"(x), "f"(y), "f"(z));
    o[86] = t;
    asm("div.approx.f32 %0, %1, %2;" : "=f"(r) : "f"(x), "f"(y));
    F32(87);
    asm("div.full.f32 %0, %1, %2;" : "=f"(r) : "f"(x), "f"(y));
    F32(88);
    asm("tanh.approx.f32 %0, %1;" : "=f"(r) : "f"(x));
    F32(89);
    asm("cvt.rn.satfinite.f16.f32 %0, %1;" : "=h"(h) : "f"(x));
    o[90] = h;
    asm("cvt.rn.f16.s32 %0, %1;" : "=h"(h) : "r"(a));
    o[91] = h;
    asm("cvt.rni.f16.f16 %0, %1;" : "=h"(h) : "h"((u16)b));
    o[92] = h;
    asm("cvt.rn.sat.f16.f32 %0, %1;" : "=h"(h) : "f"(x));
    o[93] = h;
    asm("cvt.rzi.s16.f64 %0, %1;" : "=h"(h) : "d"(d));
    o[94] = h;
    asm("cvt.rp.f64.s64 %0, %1;" : "=d"(dr) : "l"(a64));
    F64(95);
#undef F32
#undef F64
}

// ---- special registers (grid 2x3x1 of 4x2x2 threads, 96 bytes of dynamic shared memory) ----------------
constexpr int kSpecial = 20;
__global__ void special_kernel(u64* out) {
    const u32 block = (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
    const u32 rank = (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
    u64* o = out + (size_t)(block * 16 + rank) * kSpecial;
    u32 r;
    u64 r64, r64b;
    asm("mov.u32 %0, %%tid.x;" : "=r"(r));
    o[0] = r;
    asm("mov.u32 %0, %%tid.y;" : "=r"(r));
    o[1] = r;
    asm("mov.u32 %0, %%tid.z;" : "=r"(r));
    o[2] = r;
    asm("mov.u32 %0, %%ntid.x;" : "=r"(r));
    o[3] = r;
    asm("mov.u32 %0, %%ntid.y;" : "=r"(r));
    o[4] = r;
    asm("mov.u32 %0, %%ntid.z;" : "=r"(r));
    o[5] = r;
    asm("mov.u32 %0, %%ctaid.x;" : "=r"(r));
    o[6] = r;
    asm("mov.u32 %0, %%ctaid.y;" : "=r"(r));
    o[7] = r;
    asm("mov.u32 %0, %%ctaid.z;" : "=r"(r));
    o[8] = r;
    asm("mov.u32 %0, %%nctaid.x;" : "=r"(r));
    o[9] = r;
    asm("mov.u32 %0, %%nctaid.y;" : "=r"(r));
    o[10] = r;
    asm("mov.u32 %0, %%nctaid.z;" : "=r"(r));
    o[11] = r;
    asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(r));
    o[12] = r;
    u32 sm, nsm;
    asm volatile("mov.u32 %0, %%smid;\n\tmov.u32 %1, %%nsmid;" : "=r"(sm), "=r"(nsm));
    o[13] = sm < nsm;
    o[14] = nsm;
    asm("mov.u32 %0, %%nwarpid;" : "=r"(r));
    o[15] = r;
    asm volatile("mov.u64 %0, %%clock64;" : "=l"(r64));
    asm volatile("mov.u64 %0, %%clock64;" : "=l"(r64b));
    o[16] = r64b >= r64;
    u32 c1, c2, hi;
    asm volatile("mov.u32 %0, %%clock;\n\tmov.u32 %1, %%clock_hi;\n\tmov.u32 %2, %%clock;" : "=r"(c1), "=r"(hi), "=r"(c2));
    o[17] = (u32)(c2 - c1) < 0x80000000u;
    // %globaltimer as cudaGraphsPerfScaling reads it (one % in a template with operands, as nvcc takes).
    asm volatile("mov.u64 %0, %globaltimer;" : "=l"(r64));
    asm volatile("mov.u32 %0, %%globaltimer_hi;" : "=r"(hi));
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(r64b));
    o[18] = r64;
    o[19] = (r64 >> 32) <= hi && hi <= (r64b >> 32);
}

// ---- host ------------------------------------------------------------------------------------------
static void print_rows(const char* name, const u32* in, const u64* res, int n, int width) {
    for (int i = 0; i < n; ++i) {
        printf("%s %d %x %x %x :", name, i, in[3 * i], in[3 * i + 1], in[3 * i + 2]);
        for (int k = 0; k < width; ++k) printf(" %llx", res[(size_t)i * width + k]);
        printf("\n");
    }
}

template <class T>
static T* device_copy(const T* host, size_t count) {
    T* p = nullptr;
    cudaMalloc(&p, count * sizeof(T));
    cudaMemcpy(p, host, count * sizeof(T), cudaMemcpyHostToDevice);
    return p;
}

int main() {
    // Cases: every pair of 16 edge values (zeros, ones, halves, infinities, NaNs, the largest and
    // smallest floats, powers of two at the integer limits), then 128 pseudo-random ones.
    const u32 edges[16] = {0x00000000u, 0x80000000u, 0x3f800000u, 0xbfc00000u, 0x3f000000u, 0x40200000u,
                           0x7f800000u, 0xff800000u, 0x7fc00000u, 0x7f7fffffu, 0x00000001u, 0x4b800001u,
                           0x477ff000u, 0xcf000000u, 0xffffffffu, 0x7fffffffu};
    const int n = 256 + 128;
    static u32 in[3 * n];
    u32 seed = 12345u;
    for (int i = 0; i < n; ++i) {
        for (int k = 0; k < 3; ++k) {
            seed = seed * 1664525u + 1013904223u;
            in[3 * i + k] = seed;
        }
        if (i < 256) {
            in[3 * i] = edges[i / 16];
            in[3 * i + 1] = edges[i % 16];
            in[3 * i + 2] = (i % 3 == 0) ? edges[(i * 7) % 16] : in[3 * i + 2];
        }
    }
    u32* d_in = device_copy(in, 3 * n);
    const int widths[3] = {kBits, kArith, kFloat};
    const char* names[3] = {"bits", "arith", "float"};
    static u64 res[(size_t)n * kFloat];
    u64* d_res = nullptr;
    CUDA_OK(cudaMalloc(&d_res, sizeof(res)));
    for (int k = 0; k < 3; ++k) {
        CUDA_OK(cudaMemset(d_res, 0, sizeof(res)));
        if (k == 0) bits_kernel<<<(n + 63) / 64, 64>>>(d_in, d_res, n);
        if (k == 1) arith_kernel<<<(n + 63) / 64, 64>>>(d_in, d_res, n);
        if (k == 2) float_kernel<<<(n + 63) / 64, 64>>>(d_in, d_res, n);
        CUDA_OK(cudaGetLastError());
        CUDA_OK(cudaMemcpy(res, d_res, (size_t)n * widths[k] * sizeof(u64), cudaMemcpyDeviceToHost));
        print_rows(names[k], in, res, n, widths[k]);
    }
    CUDA_OK(cudaMemset(d_res, 0, sizeof(res)));
    special_kernel<<<dim3(2, 3, 1), dim3(4, 2, 2), 96>>>(d_res);
    CUDA_OK(cudaGetLastError());
    CUDA_OK(cudaMemcpy(res, d_res, 96 * kSpecial * sizeof(u64), cudaMemcpyDeviceToHost));
    for (int t = 0; t < 96; ++t) {
        printf("special %d :", t);
        for (int k = 0; k < kSpecial; ++k) printf(" %llx", res[(size_t)t * kSpecial + k]);
        printf("\n");
    }
    cudaFree(d_in);
    cudaFree(d_res);
    printf("done=1\n");
    return 0;
}
