"""Inline PTX on 16-bit floats (``kernels/program_ptx_half.cu``, the forms NVIDIA's cuda_fp16.hpp
and cuda_bf16.hpp use) checked against numpy's float16 and a bfloat16 reference made from float32
bits: every result rounded once to nearest even, NaN, signed-zero, .ftz, .sat and .relu rules as
the PTX ISA states them, pairs element by element. Where a double cannot hold an exact result
(fma, bfloat16 sums far apart) the reference rounds the exact rational instead."""

from __future__ import annotations

import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from .conftest import KERNELS, nvcc_compile, run_cli
from .ptx_reference import BF16, F16, _cvt_int, _round, _rows, _signed

HALF = KERNELS / "program_ptx_half.cu"
NAN = -1  # any NaN
CANONICAL = 0x7FFF


@pytest.fixture(scope="module")
def half_run():
    proc = run_cli("run", "--arch", "900", str(HALF))
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr
    assert "done=1" in proc.stdout and proc.stderr == "", proc.stderr
    return proc.stdout


# ---- the two formats ------------------------------------------------------------------------------
def _value(h: int, fmt) -> float:
    """A half's value (bfloat16: the float32 with the same upper bits)."""
    if fmt == F16:
        return float(np.uint16(h).view(np.float16))
    return float(np.uint32(h << 16).view(np.float32))


def _nearest(v: float, fmt) -> int:
    """A double rounded to the format: numpy's float16, or for bfloat16 float32 rounded to nearest
    even by its bits (exact when the double is a float32, which the callers ensure)."""
    if math.isnan(v):
        return NAN
    if fmt == F16:
        with np.errstate(over="ignore"):
            return int(np.float16(v).view(np.uint16))
    with np.errstate(over="ignore"):
        bits = int(np.float32(v).view(np.uint32))
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) & 0xFFFF


def _rounded(exact: Fraction | None, v: float, fmt) -> int:
    """The correctly rounded result whose exact value is ``exact`` (None: ``v`` is exact, an
    infinity, a NaN or a zero, with IEEE's sign) and whose double is ``v``."""
    if exact is None or math.isinf(v) or math.isnan(v) or v == 0:
        return _nearest(v, fmt)
    with np.errstate(over="ignore"):
        representable = Fraction(v) == exact and (fmt == F16 or float(np.float32(v)) == v)
    if representable:
        return _nearest(v, fmt)
    return _round(exact, fmt, "rn")


def _arith(op: str, hs: list[int], fmt, ftz: bool = False) -> int:
    xs = [_value(h, fmt) for h in hs]
    if ftz:
        xs = [math.copysign(0.0, x) if x != 0 and abs(x) < 2**-14 else x for x in xs]
    if any(math.isnan(x) for x in xs):
        return NAN
    x, y = xs[0], xs[1]
    v = {"add": lambda: x + y, "sub": lambda: x - y, "mul": lambda: x * y, "fma": lambda: x * y + xs[2]}[op]()
    exact = None
    if all(math.isfinite(t) for t in xs):
        f = [Fraction(t) for t in xs]
        exact = {"add": f[0] + f[1], "sub": f[0] - f[1], "mul": f[0] * f[1]}.get(op)
        exact = f[0] * f[1] + f[2] if op == "fma" else exact
    r = _rounded(exact, v, fmt)
    if ftz and r != NAN and r & 0x7C00 == 0:
        r &= 0x8000
    return r


def _sat(r: int, fmt) -> int:
    one = 0x3C00 if fmt == F16 else 0x3F80
    if r == NAN or r & 0x8000:
        return 0
    return one if _value(r, fmt) >= 1 else r


def _relu(r: int) -> int:
    return CANONICAL if r == NAN else (0 if r & 0x8000 else r)


def _minmax(a: int, b: int, fmt, want_max: bool, nan_wins: bool = False) -> int:
    x, y = _value(a, fmt), _value(b, fmt)
    if math.isnan(x) or math.isnan(y):
        return CANONICAL if nan_wins or (math.isnan(x) and math.isnan(y)) else (b if math.isnan(x) else a)
    if x == y:  # -0 < +0
        pick_a = not (a & 0x8000) if want_max else bool(a & 0x8000)
    else:
        pick_a = x > y if want_max else x < y
    return a if pick_a else b


def _compare(op: str, a: int, b: int, fmt) -> bool:
    """setp's comparison: the plain ones false with a NaN operand, the u ones true."""
    x, y = _value(a, fmt), _value(b, fmt)
    unordered = math.isnan(x) or math.isnan(y)
    if op in ("num", "nan"):
        return unordered == (op == "nan")
    if unordered:
        return op.endswith("u")
    base = op.removesuffix("u")
    return {"eq": x == y, "ne": x != y, "lt": x < y, "le": x <= y, "gt": x > y, "ge": x >= y}[base]


def _function(fn, h: int, fmt, ftz: bool = False) -> int:
    """ex2 or tanh of a half, rounded (the .approx result may be off by one unit in the last place)."""
    x = _value(h, fmt)
    if ftz and x != 0 and abs(x) < 2**-126:
        x = math.copysign(0.0, x)
    if math.isnan(x):
        return NAN
    try:
        v = fn(x)
    except OverflowError:
        v = math.inf
    return _nearest(v, fmt)


def _check(got: int, want: int, what: str, fmt, ulps: int = 0):
    """``got`` is ``want`` (any NaN for NAN; with ``ulps``, that many units in the last place off)."""
    if want == NAN:
        assert got & 0x7FFF > (0x7C00 if fmt == F16 else 0x7F80), (what, hex(got))
    elif ulps and (got ^ want) & 0x8000 == 0:
        assert abs((got & 0x7FFF) - (want & 0x7FFF)) <= ulps, (what, hex(got), hex(want))
    else:
        assert got == want, (what, hex(got), hex(want))


def _pair(lo: int, hi: int) -> int:
    return lo | hi << 16


def _halves(x: int) -> tuple[int, int]:
    return x & 0xFFFF, x >> 16


def _check_pair(got: int, want_lo: int, want_hi: int, what: str, fmt, ulps: int = 0):
    lo, hi = _halves(got)
    _check(lo, want_lo, what + " (element 0)", fmt, ulps)
    _check(hi, want_hi, what + " (element 1)", fmt, ulps)


# ---- the checks ---------------------------------------------------------------------------------------
def test_reference_rounding_agrees_with_exact_rationals():
    # The two references (numpy's float16, float32 bits for bfloat16) against exact rounding.
    for v in (1 + 2**-11, 1 + 3 * 2**-11, 65520.0, 2**-25, 3 * 2**-26, -(1 + 2**-8), 1 + 2**-8 + 2**-20):
        assert _nearest(v, F16) == _round(Fraction(v), F16, "rn"), v
        assert _nearest(v, BF16) == _round(Fraction(v), BF16, "rn"), v


def _scalar_checks(o: list[int], a: int, b: int, c: int, fmt, ks: dict) -> None:
    what = f"{'f16' if fmt == F16 else 'bf16'} a={a:04x} b={b:04x} c={c:04x}"
    for k, want in ks.items():
        _check(o[k], want, f"{what} result {k}", fmt)


def test_f16_instructions(half_run):
    rows = _rows(half_run, "half")
    assert len(rows) == 512
    for (a, b, c, *_), o in rows:
        fma = _arith("fma", [a, b, c], F16)
        _scalar_checks(
            o,
            a,
            b,
            c,
            F16,
            {
                0: _arith("add", [a, b], F16),
                1: _arith("sub", [a, b], F16),
                2: _arith("mul", [a, b], F16),
                3: fma,
                4: _sat(fma, F16),
                5: _relu(fma),
                6: _arith("add", [a, b], F16, ftz=True),
                7: _minmax(a, b, F16, False),
                8: _minmax(a, b, F16, True, nan_wins=True),
                9: a & 0x7FFF,
                10: a ^ 0x8000,
                13: int(_compare("eq", a, b, F16)),
                14: int(_compare("ltu", a, b, F16)),
                15: int(_compare("ge", a, b, F16)),
                16: int(_compare("num", a, b, F16)),
                17: 0x3C00 if _compare("gtu", a, b, F16) else 0,
                18: _sat(_arith("mul", [a, b], F16), F16),
            },
        )
        what = f"f16 a={a:04x} b={b:04x} c={c:04x}"
        _check(o[11], _function(lambda x: 2.0**x, a, F16), what + " ex2", F16, ulps=1)
        _check(o[12], _function(math.tanh, a, F16), what + " tanh", F16, ulps=1)
        # Pairs p = (a, b), q = (b, c), s = (c, a).
        _check_pair(o[19], _arith("add", [a, b], F16), _arith("add", [b, c], F16), what + " add.f16x2", F16)
        lo, hi = _arith("fma", [a, b, c], F16), _arith("fma", [b, c, a], F16)
        _check_pair(o[20], lo, hi, what + " fma.f16x2", F16)
        _check_pair(o[21], _relu(lo), _relu(hi), what + " fma.relu.f16x2", F16)
        _check_pair(
            o[22],
            _minmax(a, b, F16, False, True),
            _minmax(b, c, F16, False, True),
            what + " min.NaN.f16x2",
            F16,
        )
        _check_pair(o[23], _minmax(a, b, F16, True), _minmax(b, c, F16, True), what + " max.f16x2", F16)
        lt = [_compare("lt", a, b, F16), _compare("lt", b, c, F16)]
        assert o[24] == _pair(*(0xFFFF if t else 0 for t in lt)), what
        le = [_compare("le", a, b, F16), _compare("le", b, c, F16)]
        assert o[25] == _pair(*(0x3C00 if t else 0 for t in le)), what
        assert o[26] == int(_compare("gt", a, b, F16)) | int(_compare("gt", b, c, F16)) << 1, what
        assert o[27] == _pair(a & 0x7FFF, b & 0x7FFF), what
        ex2 = [_function(lambda x: 2.0**x, h, F16) for h in (a, b)]
        _check_pair(o[28], *ex2, what + " ex2.f16x2", F16, ulps=1)
        # Conversions of f16.
        x = _value(a, F16)
        if math.isfinite(x):
            want = _round(Fraction(math.ceil(Fraction(x))), F16, "rn", negative_zero=bool(a & 0x8000))
            _check(o[52], want, what + " cvt.rpi", F16)
        else:
            _check(o[52], NAN if math.isnan(x) else a, what + " cvt.rpi", F16)
        assert o[53] == _cvt_int(x, "rni", 16, True, False), what
        assert o[55] == (0x3C00 if _compare("ne", b, a, F16) else 0), what


def test_bf16_instructions(half_run):
    rows = _rows(half_run, "half")
    assert rows[256][0][3:] == [0x4040, 0x3F81, 0x8380] and rows[256][1][32] == 0x4041  # no double rounding
    for (_a, _b, _c, a, b, c), o in _rows(half_run, "half"):
        _scalar_checks(
            o,
            a,
            b,
            c,
            BF16,
            {
                29: _arith("add", [a, b], BF16),
                30: _arith("sub", [a, b], BF16),
                31: _arith("mul", [a, b], BF16),
                32: _arith("fma", [a, b, c], BF16),
                33: _relu(_arith("fma", [a, b, c], BF16)),
                34: _minmax(a, b, BF16, False),
                35: _minmax(a, b, BF16, True, nan_wins=True),
                36: a & 0x7FFF,
                37: a ^ 0x8000,
                40: int(_compare("lt", a, b, BF16)),
                41: int(_compare("neu", a, b, BF16)),
                42: int(_compare("nan", a, b, BF16)),
            },
        )
        what = f"bf16 a={a:04x} b={b:04x} c={c:04x}"
        ex2 = _function(lambda x: 2.0**x, a, BF16, ftz=True)
        if ex2 != NAN and ex2 & 0x7F80 == 0:
            ex2 &= 0x8000  # .ftz: a subnormal result is flushed too
        _check(o[38], ex2, what + " ex2.ftz", BF16, ulps=1)
        _check(o[39], _function(math.tanh, a, BF16), what + " tanh", BF16, ulps=1)
        _check_pair(
            o[43], _arith("add", [a, b], BF16), _arith("add", [b, c], BF16), what + " add.bf16x2", BF16
        )
        lo, hi = _arith("fma", [a, b, c], BF16), _arith("fma", [b, c, a], BF16)
        _check_pair(o[44], lo, hi, what + " fma.bf16x2", BF16)
        _check_pair(o[45], _minmax(a, b, BF16, True), _minmax(b, c, BF16, True), what + " max.bf16x2", BF16)
        _check_pair(
            o[46], _minmax(a, b, BF16, False, True), _minmax(b, c, BF16, False, True), what + " min.NaN", BF16
        )
        ge = [_compare("ge", a, b, BF16), _compare("ge", b, c, BF16)]
        assert o[47] == _pair(*(0xFFFF if t else 0 for t in ge)), what
        assert o[48] == _pair(a ^ 0x8000, b ^ 0x8000), what
        x = _value(a, BF16)
        if math.isnan(x):
            assert math.isnan(float(np.uint32(o[49]).view(np.float32))), what
        else:
            assert o[49] == a << 16, what  # cvt.f32.bf16 is exact
        assert o[50] == _cvt_int(x, "rzi", 32, True, False), what
        if math.isfinite(x):
            want = _round(Fraction(round(Fraction(x))), BF16, "rn", negative_zero=bool(a & 0x8000))
            _check(o[51], want, what + " cvt.rni", BF16)
        else:
            _check(o[51], NAN if math.isnan(x) else a, what + " cvt.rni", BF16)
        _check(o[54], _nearest(x, F16), what + " cvt.rn.f16.f32", F16)


def test_integer_pairs(half_run):
    for (a, b, c, *_), o in _rows(half_run, "half"):
        p, q = _pair(a, b), _pair(b, c)
        pairs = [(a, b), (b, c)]
        sign = [(_signed(x, 16), _signed(y, 16)) for x, y in pairs]
        assert o[56] == _pair(*((x + y) & 0xFFFF for x, y in sign))
        assert o[57] == _pair(*((x + y) & 0xFFFF for x, y in pairs))
        assert o[58] == _pair(*(min(x, y) for x, y in pairs))
        assert o[59] == _pair(*(max(x, y) & 0xFFFF for x, y in sign))
        assert o[60] == _pair(*(max(min(x, y), 0) for x, y in sign))
        assert o[61] == max(_signed(p, 32), _signed(q, 32), 0)


def test_atomic_half_additions_sum_exactly(half_run):
    line = next(ln for ln in half_run.splitlines() if ln.startswith("atoms :"))
    f16, bf16, f16x2, bf16x2 = (int(w, 16) for w in line.split()[2:])
    # 256 additions of 1.0 (and 0.5 in the pairs' element 1): 256.0 and 128.0.
    assert (f16, bf16) == (0x5C00, 0x4380)
    assert f16x2 == _pair(0x5C00, 0x5800) and bf16x2 == _pair(0x4380, 0x4300)
    olds = [
        int(w, 16) for w in next(ln for ln in half_run.splitlines() if ln.startswith("olds :")).split()[2:]
    ]
    halves = [_nearest(float(k), F16) for k in range(256)]
    assert sorted(olds[0::2]) == halves  # atom.add.noftz.f16: every partial sum returned once
    assert sorted(olds[1::2]) == sorted(_pair(h, _nearest(k / 2, F16)) for k, h in enumerate(halves))


@pytest.mark.kernels
def test_the_half_program_builds_with_nvcc(tmp_path):
    proc = nvcc_compile(Path(HALF), tmp_path, arch="sm_90")
    assert proc.returncode == 0, proc.stderr
