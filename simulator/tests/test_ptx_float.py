"""Inline PTX floating-point instructions and conversions run by the simulator
(``kernels/program_ptx.cu``) and checked against exact rationals (``ptx_reference``) for every
rounding mode, and the whole scalar program's checks again under memcheck (UBSan)."""

from __future__ import annotations

import math
from fractions import Fraction

from .conftest import PTX_SCALAR, run_cli
from .ptx_reference import (
    BF16,
    CANONICAL_NAN,
    F16,
    F32,
    F64,
    M32,
    M64,
    _bits_of,
    _check,
    _cvt_int,
    _f32,
    _f32_result,
    _f64,
    _from_half,
    _half_to_fraction,
    _ieee,
    _is_nan,
    _minmax,
    _round,
    _rows,
    _setp_mask,
    _signed,
    _to_half,
    check_arith,
    check_bits,
)


def test_float_instructions(scalar_run):
    _check_floats(scalar_run[0])


def _check_floats(stdout: str) -> None:
    rows = _rows(stdout, "float")
    assert len(rows) == 384
    for i, ((a, b, c), o) in enumerate(rows):
        x, y, z = _f32(a), _f32(b), _f32(c)
        d, e, f = _f64(o[80]), _f64(o[81]), _f64(o[82])
        if i % 2 == 0:  # the kernel's doubles: the floats widened (and scaled exactly)
            assert (o[80], o[81], o[82]) == (
                _bits_of(x * 3.0, F64),
                _bits_of(y * 0.75, F64),
                _bits_of(z, F64),
            )
        a64 = b << 32 | a
        what = f"case {i}: x={x!r} y={y!r} z={z!r}"
        checks = {
            0: _f32_result("add", [x, y], "rn"),
            1: _f32_result("add", [x, y], "rz"),
            2: _f32_result("add", [x, y], "rm"),
            3: _f32_result("add", [x, y], "rp"),
            4: _f32_result("sub", [x, y], "rz"),
            5: _f32_result("mul", [x, y], "rn"),
            6: _f32_result("mul", [x, y], "rz"),
            7: _f32_result("mul", [x, y], "rp"),
            8: _f32_result("fma", [x, y, z], "rn"),
            9: _f32_result("fma", [x, y, z], "rz"),
            10: _f32_result("fma", [x, y, z], "rm"),
            11: _f32_result("div", [x, y], "rn"),
            12: _f32_result("div", [x, y], "rz"),
            13: _f32_result("sqrt", [x], "rn"),
            14: _f32_result("sqrt", [x], "rp"),
            15: _f32_result("div", [1.0, x], "rn"),
            16: _f32_result("add", [x, y], "rn", ftz=True),
            17: _f32_result("add", [x, y], "rn", sat=True),
            18: _minmax(x, y, False),
            19: _minmax(x, y, True),
            20: _minmax(x, y, False, nan_wins=True),
            21: a & 0x7FFFFFFF,
            22: a ^ 0x80000000,
            23: _setp_mask(x, y),
            24: _cvt_int(x, "rni", 32, True, False),
            25: _cvt_int(x, "rzi", 32, True, False),
            26: _cvt_int(x, "rmi", 32, True, False),
            27: _cvt_int(x, "rpi", 32, True, False),
            28: _cvt_int(x, "rzi", 32, False, False),
            29: _cvt_int(x, "rni", 64, True, False),
            30: _cvt_int(x, "rzi", 8, False, False),
            31: _to_half(x, F16, "rn"),
            32: _to_half(x, F16, "rz"),
            33: _to_half(x, F16, "rm"),
            34: _to_half(x, F16, "rp"),
            35: _from_half(a & 0xFFFF, F16, F32),
            36: _to_half(x, BF16, "rn"),
            37: _to_half(x, BF16, "rz"),
            38: _from_half(b & 0xFFFF, BF16, F32),
            39: _round(Fraction(_signed(a, 32)), F32, "rn"),
            40: _round(Fraction(_signed(a, 32)), F32, "rz"),
            41: _round(Fraction(a), F32, "rm"),
            42: _round(Fraction(_signed(a64, 64)), F32, "rp"),
            43: _round(Fraction(a64), F64, "rn"),
            48: _bits_of(x, F64) if not math.isnan(x) else -1,
            49: _bits_of(float(round(Fraction(x))), F32)
            if math.isfinite(x)
            else (CANONICAL_NAN if math.isnan(x) else a),
            50: _bits_of(float(math.floor(Fraction(x))), F32)
            if math.isfinite(x)
            else (CANONICAL_NAN if math.isnan(x) else a),
            51: 0 if math.isnan(x) or not x > 0 else (0x3F800000 if x >= 1 else a),
            52: _cvt_int(d, "rzi", 64, True, True),
            53: _cvt_int(d, "rni", 32, True, True),
            56: max(-128, min(127, _signed(a, 32))) & M32,
            57: a & 0xFFFF,
            58: _signed(b & 0xFFFF, 16) & M64,
            59: min(max(_signed(a64, 64), 0), M32),
        }
        for k, mode in zip((44, 45, 46, 47), ("rn", "rz", "rm", "rp")):
            if math.isnan(d):
                checks[k] = -1
            elif math.isinf(d):
                checks[k] = _bits_of(d, F32)
            else:
                checks[k] = _round(Fraction(d), F32, mode, negative_zero=math.copysign(1, d) < 0)
        for k in (49, 50):  # an integral zero keeps the sign
            if math.isfinite(x) and math.copysign(1, x) < 0:
                checks[k] |= 0x80000000
        formats = {48: F64, 31: F16, 32: F16, 33: F16, 34: F16, 36: BF16, 37: BF16}
        for k, want in checks.items():
            _check(o[k], want, f"{what} result {k}", formats.get(k, F32))
        # Packed halves: a in the upper half, b in the lower.
        for k, mode in ((54, "rn"), (78, "rz")):
            hi, lo = _to_half(x, F16, mode), _to_half(y, F16, mode)
            _check(o[k] >> 16, hi, f"{what} f16x2 high {k}", F16)
            _check(o[k] & 0xFFFF, lo, f"{what} f16x2 low {k}", F16)
        relu = _to_half(x, F16, "rn")
        if relu != -1 and relu & 0x8000:
            relu = 0
        _check(o[55], relu, f"{what} relu", F16)
        # Doubles: add.rn, mul.rz, fma.rp, div.rm, neg, abs, max, setp, and the f16 conversions.
        for k, op, args, mode in (
            (60, "add", [d, e], "rn"),
            (61, "mul", [d, e], "rz"),
            (62, "fma", [d, e, f], "rp"),
            (63, "div", [d, e], "rm"),
        ):
            want = _ieee(op, args, F64, mode)
            _check(o[k], -1 if want is None else want, f"{what} f64 {op}.{mode}", F64)
        assert o[73] == o[80] ^ (1 << 63) and o[74] == o[80] & ~(1 << 63) & M64, what
        if not (math.isnan(d) or math.isnan(e)):
            assert _f64(o[75]) == max(d, e) or (d == e == 0), what
        assert o[83] == _setp_mask(d, e), what
        _check(o[76], _to_half(d, F16, "rn"), f"{what} f16 of f64", F16)
        _check(o[77], _from_half(c & 0xFFFF, F16, F64), f"{what} f64 of f16", F64)
        if math.isfinite(d):
            assert _f64(o[79]) == float(round(Fraction(d))), what
        assert o[71] == (a if x < y else b), what
        assert o[72] == _f32_result("add", [_f32(_f32_result("add", [x, 1.0], "rn")), 0.5], "rn"), what
        _check_approximations(x, o, what)
        # setp's boolean operations and p|q pairs, predicate logic.
        lt, ge, c = x < y, x >= y, z > 0
        assert o[84] == int(lt and c) | int(not lt and c) << 1, what
        assert o[85] == int(ge or not c) | int(not ge or not c) << 1, what
        p, q = x < y, y < z
        assert o[86] == int(p and q) | int(p or q) << 1 | int(p != q) << 2 | int(not p) << 3, what
        _check_divisions(x, y, o[87], o[88], what)
        if math.isnan(x):
            assert math.isnan(_f32(o[89])), what
        elif math.isinf(x):
            assert _f32(o[89]) == math.copysign(1.0, x), what
        else:
            want = math.tanh(x)
            assert abs(_f32(o[89]) - want) <= 2**-11 * abs(want) and math.copysign(
                1, _f32(o[89])
            ) == math.copysign(1, x)
        half = _to_half(x, F16, "rn")
        if half != -1 and half & 0x7FFF == 0x7C00:
            half -= 1  # .satfinite: the largest finite half of the sign
        _check(o[90], half, f"{what} satfinite", F16)
        _check(o[91], _round(Fraction(_signed(a, 32)), F16, "rn"), f"{what} f16 of s32", F16)
        h = _half_to_fraction(b & 0xFFFF, F16)
        if h is None:
            assert _is_nan(o[92], F16), what
        elif abs(h) > 2**1000:
            assert o[92] == b & 0xFFFF, what
        else:
            _check(o[92], _round(Fraction(round(h)), F16, "rn", negative_zero=bool(b & 0x8000)), what, F16)
        sat = 0 if math.isnan(x) or not x > 0 else (0x3C00 if x >= 1 else _to_half(x, F16, "rn"))
        _check(o[93], sat, f"{what} sat", F16)
        assert o[94] == _cvt_int(d, "rzi", 16, True, True), what
        assert o[95] == _round(Fraction(_signed(a64, 64)), F64, "rp"), what


def _check_divisions(x: float, y: float, approx: int, full: int, what: str) -> None:
    """div.approx.f32 (2 ulp for |y| in [2^-126, 2^126], a signed zero beyond) and div.full.f32
    (2 ulp across the range)."""
    if math.isnan(x) or math.isnan(y) or (math.isinf(x) and math.isinf(y)) or (x == 0 and y == 0):
        assert math.isnan(_f32(approx)) and math.isnan(_f32(full)), what
        return
    if y == 0 or math.isinf(x) or math.isinf(y) or x == 0:
        assert _f32(full) == x / y if y != 0 else math.isinf(_f32(full)), what
        return
    want = Fraction(x) / Fraction(y)
    if 2**-149 <= abs(want) < 2**128:
        assert abs(Fraction(_f32(full)) - want) <= 2 * Fraction(_f32_ulp(float(want))), what
    if 2**-126 <= abs(y) <= 2**126 and 2**-126 <= abs(want) < 2**128:
        assert abs(Fraction(_f32(approx)) - want) <= 2 * Fraction(_f32_ulp(float(want))), what
    if abs(y) > 2**126:
        assert _f32(approx) == 0 and math.copysign(1, _f32(approx)) == math.copysign(1, x) * math.copysign(
            1, y
        )


def _f32_ulp(v: float) -> float:
    """The spacing of single-precision floats at ``v``."""
    if abs(v) < 2**-126:
        return 2**-149
    return 2.0 ** (math.frexp(abs(v))[1] - 24)


def _check_approximations(x: float, o: list[int], what: str) -> None:
    """The .approx instructions, within the error bounds the ISA documents."""
    ex2, lg2, sin, cos, rsqrt, rcp, sqrt = (_f32(o[k]) for k in range(64, 71))
    if math.isnan(x):
        assert all(math.isnan(v) for v in (ex2, lg2, sin, cos, rsqrt, rcp, sqrt)), what
        return
    if -126 < x < 127:  # ex2: 2 ulp across the full range
        want = 2.0**x
        assert abs(ex2 - want) <= 2 * _f32_ulp(want), what
    if 0.5 < x < 2:
        assert abs(lg2 - math.log2(x)) <= 2**-22, what
    elif x > 0 and math.isfinite(x) and x >= 2**-126:
        assert abs(lg2 - math.log2(x)) <= 2**-22 * abs(math.log2(x)), what
    if abs(x) <= 2 * math.pi:
        assert abs(sin - math.sin(x)) <= 2**-20.5 and abs(cos - math.cos(x)) <= 2**-20.5, what
    if x > 0 and math.isfinite(x):
        assert abs(rsqrt - 1 / math.sqrt(x)) <= 2**-22.9 / math.sqrt(x), what
        assert abs(sqrt - math.sqrt(x)) <= 2**-23 * math.sqrt(x), what
    if x != 0 and math.isfinite(x) and 2**-126 <= abs(1 / x) < 2**128:
        want = 1 / x
        assert abs(rcp - want) <= _f32_ulp(want), what
    if x == 0:
        assert math.isinf(rcp) and math.copysign(1, rcp) == math.copysign(1, x), what
    if math.isinf(x):
        assert (
            ex2 == (math.inf if x > 0 else 0.0) and rcp == 0 and math.copysign(1, rcp) == math.copysign(1, x)
        ), what


def test_scalar_program_has_no_undefined_behaviour():
    # memcheck's UBSan watches every helper the translations call (shifts, signed overflow), and
    # the results are the ISA's there too (a NaN's payload is the one thing left to the compiler).
    proc = run_cli("run", str(PTX_SCALAR), "--mode", "memcheck")
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    check_bits(proc.stdout)
    check_arith(proc.stdout)
    _check_floats(proc.stdout)
