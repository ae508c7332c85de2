// Rounding for the simulator's 16-bit float types (<cuda_fp16.h> and <cuda_bf16.h>).
//
// Every operation computes its exact result (or the exact result's double rounding plus the
// sign of the remainder) and rounds it once to the 16-bit format, so results are correctly
// rounded to nearest even like the GPU's half and bfloat16 arithmetic. A NaN result is the
// canonical NaN 0x7fff, as the GPU's conversions produce.
#ifndef CUDA_SIM_FLOAT16_H
#define CUDA_SIM_FLOAT16_H

#include <cmath>
#include <cstring>

namespace sim {
namespace f16 {

enum Round { kNearest, kTowardZero, kDown, kUp };

// A binary format with M stored mantissa bits and normal exponents EMIN..EMAX.
template <int M, int EMIN, int EMAX>
struct Format {
    static constexpr unsigned int kInf = (unsigned int)(EMAX - EMIN + 2) << M;
    static constexpr unsigned short kNaN = 0x7fff;

    // Rounds ``s`` to the format. ``rem`` is the sign of what the exact value has beyond ``s``
    // (exact = s + r with |r| far below one unit of s): it breaks a tie that ``s`` lands on.
    static unsigned short from_double(double s, Round mode = kNearest, int rem = 0) {
        if (std::isnan(s)) return kNaN;
        const bool neg = std::signbit(s);
        const unsigned short sign = neg ? 0x8000 : 0;
        const double x = std::fabs(s);
        if (std::isinf(x)) return (unsigned short)(sign | kInf);
        int e2 = 0;
        std::frexp(x, &e2);
        int e = x == 0.0 ? EMIN : e2 - 1;
        if (e < EMIN) e = EMIN;  // subnormal: the quantum stays that of the smallest normal
        const double quantum = std::ldexp(1.0, e - M);
        const double scaled = x / quantum;  // exact: a power-of-two scale
        double r = std::floor(scaled);
        const double frac = scaled - r;
        const int beyond = neg ? -rem : rem;  // the remainder's direction in magnitude
        bool up = false;
        switch (mode) {
            case kNearest:
                up = frac > 0.5 || (frac == 0.5 && (beyond > 0 || (beyond == 0 && std::fmod(r, 2.0) == 1.0)));
                break;
            case kTowardZero:
                up = false;
                break;
            case kDown:
                up = neg && frac > 0.0;
                break;
            case kUp:
                up = !neg && frac > 0.0;
                break;
        }
        if (up) r += 1.0;
        const double bits = std::ldexp((double)(e - EMIN), M) + r;
        if (bits >= (double)kInf) {
            const bool to_inf = mode == kNearest || (mode == kUp && !neg) || (mode == kDown && neg);
            return (unsigned short)(sign | (to_inf ? kInf : kInf - 1));
        }
        return (unsigned short)(sign | (unsigned int)bits);
    }

    static double to_double(unsigned short h) {
        const bool neg = (h & 0x8000) != 0;
        const unsigned int mag = h & 0x7fffu;
        double v;
        if (mag >= kInf) {
            v = mag == kInf ? INFINITY : NAN;
        } else {
            const unsigned int field = mag >> M;
            const unsigned int mant = mag & ((1u << M) - 1u);
            v = field == 0 ? std::ldexp((double)mant, EMIN - M)
                           : std::ldexp((double)(mant | (1u << M)), (int)field - 1 + EMIN - M);
        }
        return neg ? -v : v;
    }

    // Widening to float is exact; a NaN keeps its payload, as the GPU's conversion does.
    static float to_float(unsigned short h) {
        if ((h & 0x7fffu) > kInf) {
            const unsigned int bits = ((unsigned int)(h & 0x8000u) << 16) | 0x7f800000u |
                                      ((unsigned int)(h & ((1u << M) - 1u)) << (23 - M));
            float f;
            std::memcpy(&f, &bits, 4);
            return f;
        }
        return (float)to_double(h);
    }

    // The sum a + b rounded once (the exact remainder of the double sum breaks ties).
    static unsigned short add(double a, double b) {
        const double s = a + b;
        if (!std::isfinite(s)) return from_double(s);
        const double bb = s - a;
        const double r = (a - (s - bb)) + (b - bb);
        return from_double(s, kNearest, r > 0 ? 1 : (r < 0 ? -1 : 0));
    }
    // a * b + c rounded once (a * b of two 16-bit values is exact in a double).
    static unsigned short fma(double a, double b, double c) { return add(a * b, c); }
    static unsigned short mul(double a, double b) { return from_double(a * b); }
    // A double quotient has more than twice the bits, so rounding it again is still exact.
    static unsigned short div(double a, double b) { return from_double(a / b); }
};

typedef Format<10, -14, 15> Half;
typedef Format<7, -126, 127> BFloat16;

}  // namespace f16
}  // namespace sim

#endif  // CUDA_SIM_FLOAT16_H
