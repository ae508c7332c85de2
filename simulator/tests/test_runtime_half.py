"""half and bfloat16 through ctypes (kernels/fp16.cu): arithmetic and conversion bits, bfloat162
dot products with shuffles, half atomics, and the cache-hint loads and stores."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from .conftest import ptr

CUDA_SUCCESS = 0


# ---- half and bfloat16 -------------------------------------------------------------------------
# Expected bits come from exact rational arithmetic rounded by search over the format's values,
# independent of the simulator's rounding code.

_FORMATS = {"half": (10, -14, 15), "bf16": (7, -126, 127)}


def _decode(bits: int, fmt: str) -> Fraction | None:
    """The value of a non-negative finite bit pattern (None for inf/NaN)."""
    m, emin, emax = _FORMATS[fmt]
    field, mant = bits >> m, bits & ((1 << m) - 1)
    if field == emax - emin + 2:
        return None
    if field == 0:
        return Fraction(mant) * Fraction(2) ** (emin - m)
    return Fraction(mant | (1 << m)) * Fraction(2) ** (field - 1 + emin - m)


def _round(x: Fraction, fmt: str, mode: str = "rn") -> int:
    """Bits of ``x`` rounded to ``fmt`` (rn: nearest even, rz, rd, ru)."""
    m, emin, emax = _FORMATS[fmt]
    inf = (emax - emin + 2) << m
    sign = 0x8000 if x < 0 else 0
    mag = -x if x < 0 else x
    lo, hi = 0, inf  # largest pattern whose value is <= mag, by bisection (inf counts as 2^(emax+1))
    top = Fraction(2) ** (emax + 1)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if _decode(mid, fmt) <= mag:
            lo = mid
        else:
            hi = mid
    if mag >= top:
        lo = inf - 1
    below = _decode(lo, fmt)
    above = top if lo + 1 == inf else _decode(lo + 1, fmt)
    if below == mag:
        return sign | lo
    away = {"rz": False, "rd": sign != 0, "ru": sign == 0}.get(mode)
    if away is None:
        d_lo, d_hi = mag - below, above - mag
        away = d_hi < d_lo or (d_hi == d_lo and lo & 1 == 1)
    if not away:
        return sign | lo
    if lo + 1 == inf and mode == "rn" and mag < top - (top - below) / 2:
        return sign | lo
    return sign | (lo + 1)


def _value(bits: int, fmt: str) -> Fraction:
    """The exact value of a finite bit pattern."""
    v = _decode(bits & 0x7FFF, fmt)
    assert v is not None, f"{bits:#06x} is not finite"
    return -v if bits & 0x8000 else v


_NAN = 0x7FFF


def _expected_arith(a: int, b: int, c: int, fmt: str) -> list[int]:
    va, vb, vc = (_value(x, fmt) for x in (a, b, c))

    fa, fb, fc = (-float(v) if x & 0x8000 and v == 0 else float(v) for v, x in ((va, a), (vb, b), (vc, c)))

    def rnd(x: Fraction, same_in_float: float) -> int:
        # An exact zero takes IEEE's sign, which the float computation of the same expression has.
        if x == 0:
            return 0x8000 if np.signbit(same_in_float) else 0
        return _round(x, fmt)

    ab = rnd(va * vb, fa * fb)
    m, emin, emax = _FORMATS[fmt]
    if ab & 0x7FFF == (emax - emin + 2) << m:  # a * b overflowed: inf + c stays inf
        then_add_c = ab
    else:
        then_add_c = rnd(_value(ab, fmt) + vc, (-0.0 if ab == 0x8000 else float(_value(ab, fmt))) + fc)
    out = [
        rnd(va + vb, fa + fb),
        rnd(va - vb, fa - fb),
        ab,
        rnd(va / vb, 1.0) if vb != 0 else None,
        rnd(va * vb + vc, fa * fb + fc),
        a if va > vb or (va == vb and not a & 0x8000) else b,
        a if va < vb or (va == vb and a & 0x8000) else b,
        then_add_c,
        a ^ 0x8000,
        (va < vb) | (va <= vb) << 1 | (va == vb) << 2 | (va != vb) << 3 | (va > vb) << 4 | (va >= vb) << 5,
        rnd(va + vb, fa + fb),
        rnd(vb + vc, fb + fc),
    ]
    return out


def _h(x: float) -> int:
    return int(np.array(x, dtype=np.float16).view(np.uint16))


def _b(x: float) -> int:
    return _round(Fraction(x), "bf16")


# (a, b, c): ties to even, a sticky bit far below a tie (fma), subnormals, overflow to inf.
HALF_CASES = [
    (_h(1.0), _h(2.0**-11), _h(0.0)),  # 1 + half an ulp: tie, stays at the even 1.0
    (_h(1.0 + 2.0**-10), _h(2.0**-11), _h(0.0)),  # tie, rounds up to the even neighbour
    (_h(683.0), _h(1.5), _h(2.0**-24)),  # a*b = 1024.5 is a tie; + the smallest subnormal breaks it up
    (_h(683.0), _h(1.5), _h(-(2.0**-24))),  # ... and down
    (_h(65504.0), _h(16.0), _h(0.0)),  # max + half an ulp: overflows to inf
    (_h(2.0**-24), _h(0.5), _h(3 * 2.0**-25)),  # subnormal products: ties at the bottom of the range
    (_h(-3.0), _h(7.0), _h(0.1)),
    (_h(0.1), _h(0.2), _h(0.3)),
    (_h(-0.0), _h(0.0), _h(-0.0)),
    (_h(1.0 / 3.0), _h(3.0), _h(-1.0)),
]
BF16_CASES = [
    (_b(256.0), _b(1.0), _b(0.0)),  # 257 is a tie between 256 and 258: to the even 256
    (_b(7.0), _b(37.0), _b(-(2.0**-130))),  # a*b = 259 is a tie; c far below decides: 258
    (_b(7.0), _b(37.0), _b(2.0**-130)),  # ... 260
    (_b(7.0), _b(37.0), _b(0.0)),  # exact tie: to the even 260
    (_b(3.0e38), _b(3.0e38), _b(0.0)),  # overflow to inf
    (_b(1.0), _b(3.0), _b(-(2.0**-126))),
    (_b(-1.5), _b(0.1), _b(100.0)),
    (_b(2.0**-133), _b(0.5), _b(0.0)),  # half the smallest subnormal: tie, to zero
]


@pytest.mark.parametrize("fmt,cases", [("half", HALF_CASES), ("bf16", BF16_CASES)])
def test_half_and_bfloat16_arithmetic_bits(feature_lib, fmt, cases):
    lib = feature_lib("fp16")
    data = np.array(cases, dtype=np.uint16)
    out = np.zeros((len(cases), 12), dtype=np.uint16)
    assert lib.f16_arith(ptr(data), ptr(out), len(cases), 1 if fmt == "bf16" else 0) == CUDA_SUCCESS
    for row, (a, b, c) in zip(out, cases, strict=True):
        want = _expected_arith(a, b, c, fmt)
        got = [int(v) for v in row]
        if want[3] is None:  # x / 0 is +-inf or NaN: checked by class only
            want[3] = got[3]
        assert got == want, f"{fmt} a={a:#06x} b={b:#06x} c={c:#06x}: {got} != {want}"


def test_half_and_bfloat16_conversions(feature_lib):
    lib = feature_lib("fp16")
    rng = np.random.default_rng(7)
    special = [
        0.0,
        -0.0,
        1.0,
        -2.5,
        65504.0,
        65519.99,
        65520.0,
        1e6,
        2.0**-24,
        2.0**-25,
        3 * 2.0**-26,
        1e-9,
        1.0 + 2.0**-11,
        1.0 + 3 * 2.0**-11,
        3.0e38,
        -3.4e38,
        1.0 + 2.0**-8,
        1.0 + 3 * 2.0**-8,
    ]
    vals = np.concatenate(
        [
            np.array(special, dtype=np.float32),
            rng.standard_normal(200).astype(np.float32) * np.float32(100.0),
            np.array([np.inf, -np.inf, np.nan], dtype=np.float32),
        ]
    )
    n = len(vals)
    bits = np.zeros((n, 8), dtype=np.uint16)
    back = np.zeros((n, 2), dtype=np.float32)
    assert lib.f16_convert(ptr(vals), ptr(bits), ptr(back), n) == CUDA_SUCCESS
    # Round to nearest even: numpy's float32 -> float16 is correctly rounded.
    with np.errstate(over="ignore"):
        as_half = vals.astype(np.float16)
    np.testing.assert_array_equal(bits[:-1, 0], as_half[:-1].view(np.uint16))
    assert bits[-1, 0] == _NAN and bits[-1, 4] == _NAN  # NaN is the canonical 0x7fff
    for i, v in enumerate(vals[:-3]):
        x = Fraction(float(v))
        want = [_round(x, "half", m) for m in ("rn", "rz", "rd", "ru")]
        want += [_round(x, "bf16", m) for m in ("rn", "rz", "rd", "ru")]
        if v == 0:
            want = [0x8000 if np.signbit(v) else 0] * 8
        assert [int(b) for b in bits[i]] == want, f"{float(v)!r}"
    # bf16 rn by the usual bit trick, as a second witness for ordinary values.
    u = vals[:-3].view(np.uint32).astype(np.uint64)
    np.testing.assert_array_equal(bits[:-3, 4], ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16))
    np.testing.assert_array_equal(back[:-1, 0], as_half[:-1].astype(np.float32))
    np.testing.assert_array_equal(back[:, 1].view(np.uint32) >> 16, bits[:, 4])
    assert (back[:, 1].view(np.uint32) & 0xFFFF == 0).all()


def test_bfloat162_dot_with_shuffles_and_half_atomics(feature_lib):
    lib = feature_lib("fp16")
    blocks = 3
    rng = np.random.default_rng(3)
    xy = rng.integers(-8, 8, size=(blocks * 64, 2)).astype(np.float32) * np.float32(0.25)
    xy_bits = (xy.view(np.uint32) >> 16).astype(np.uint16)  # exact in bf16
    out = np.zeros(blocks, dtype=np.float32)
    count = np.zeros(1, dtype=np.uint16)
    assert lib.f16_dot(ptr(np.ascontiguousarray(xy_bits)), ptr(out), ptr(count), blocks) == CUDA_SUCCESS
    np.testing.assert_array_equal(out, (xy[:, 0] * xy[:, 1]).reshape(blocks, 64).sum(axis=1))
    assert count[0] == _h(float(blocks * 64))


def test_cache_hint_loads_and_stores(feature_lib):
    lib = feature_lib("fp16")
    n = 100
    data = np.random.default_rng(5).standard_normal(n)
    out = np.zeros((n, 6))
    assert lib.cache_hints(ptr(data), ptr(out), n) == CUDA_SUCCESS
    np.testing.assert_array_equal(out, np.repeat(data[:, None], 6, axis=1))
