"""The PTX ISA's definitions worked out independently for the inline-PTX tests: the rows a
test program prints, two's-complement views, exact-rational rounding of every float format
(``fractions``), and the bit and integer instructions' pseudo-code with the checks of their rows,
shared by ``test_ptx_*.py``."""

from __future__ import annotations

import math
import struct
from fractions import Fraction

M32, M64 = (1 << 32) - 1, (1 << 64) - 1


def _rows(stdout: str, kernel: str) -> list[tuple[list[int], list[int]]]:
    """(inputs, results) of each ``kernel ... : ...`` line, as integers."""
    rows = []
    for line in stdout.splitlines():
        if line.startswith(kernel + " "):
            head, _, tail = line.partition(" : ")
            rows.append(([int(w, 16) for w in head.split()[2:]], [int(w, 16) for w in tail.split()]))
    return rows


def _signed(x: int, bits: int) -> int:
    x &= (1 << bits) - 1
    return x - (1 << bits) if x >> (bits - 1) else x


# ---- floating point: exact rationals and the ISA's rules --------------------------------------------
# (significand bits with the hidden one, smallest and largest normal exponent, width)
F32, F64, F16, BF16 = (24, -126, 127, 32), (53, -1022, 1023, 64), (11, -14, 15, 16), (8, -126, 127, 16)


def _f32(bits: int) -> float:
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def _f64(bits: int) -> float:
    return struct.unpack("<d", struct.pack("<Q", bits))[0]


def _bits_of(x: float, fmt) -> int:
    return (
        struct.unpack("<I", struct.pack("<f", x))[0]
        if fmt == F32
        else struct.unpack("<Q", struct.pack("<d", x))[0]
    )


def _round(x: Fraction, fmt, mode: str, negative_zero: bool = False) -> int:
    """The bit pattern of ``x`` rounded to ``fmt`` as IEEE 754 rounds in ``mode`` (rn rz rm rp)."""
    p, emin, emax, width = fmt
    sign = x < 0 or (x == 0 and negative_zero)
    ax = -x if x < 0 else x
    top = 1 << (width - 1) if sign else 0
    if ax == 0:
        return top
    e = ax.numerator.bit_length() - ax.denominator.bit_length()
    while Fraction(2) ** e > ax:
        e -= 1
    while Fraction(2) ** (e + 1) <= ax:
        e += 1
    q = max(e, emin) - (p - 1)
    scaled = ax / Fraction(2) ** q
    m = math.floor(scaled)
    rest = scaled - m
    up = {
        "rn": rest > Fraction(1, 2) or (rest == Fraction(1, 2) and m % 2 == 1),
        "rz": False,
        "rm": sign and rest != 0,
        "rp": not sign and rest != 0,
    }[mode]
    m += up
    if m == 1 << p:
        m, q = m >> 1, q + 1
    ebits = width - p
    if m < 1 << (p - 1):
        return top | m
    exponent = q + p - 1
    if exponent > emax:
        to_inf = mode == "rn" or (mode == "rm" and sign) or (mode == "rp" and not sign)
        inf = ((1 << ebits) - 1) << (p - 1)
        return top | (inf if to_inf else inf - 1)
    return top | (exponent + (1 << (ebits - 1)) - 1) << (p - 1) | (m - (1 << (p - 1)))


def _is_nan(bits: int, fmt) -> bool:
    p, _, _, width = fmt
    exp_mask = ((1 << (width - p)) - 1) << (p - 1)
    return bits & exp_mask == exp_mask and bits & ((1 << (p - 1)) - 1) != 0


def _ieee(op: str, xs: list[float], fmt, mode: str) -> int | None:
    """IEEE add, sub, mul, div, fma, sqrt of floats ``xs`` rounded as ``mode`` says (None: NaN)."""
    if any(math.isnan(v) for v in xs):
        return None
    neg = [math.copysign(1, v) < 0 for v in xs]
    inf = [math.isinf(v) for v in xs]
    if op == "sqrt":
        x = xs[0]
        if x == 0 or x == math.inf:
            return _bits_of(x, fmt)
        return None if x < 0 else _round_sqrt(Fraction(x), fmt, mode)
    if op == "div":
        x, y = xs
        if (inf[0] and inf[1]) or (x == 0 and y == 0):
            return None
        if inf[0] or y == 0:
            return _bits_of(math.copysign(math.inf, -1.0 if neg[0] != neg[1] else 1.0), fmt)
        if inf[1]:
            return _round(Fraction(0), fmt, mode, negative_zero=neg[0] != neg[1])
    if op == "fma" and inf[2] and not (inf[0] or inf[1]):
        return _bits_of(xs[2], fmt)  # a finite product plus an infinity
    if any(inf):  # infinities: exact in Python's doubles (inf - inf and inf * 0 are NaN)
        v = (
            {"add": xs[0] + xs[1] if len(xs) > 1 else 0, "sub": xs[0] - xs[1]}.get(op)
            if op in ("add", "sub")
            else None
        )
        if op == "mul":
            v = xs[0] * xs[1]
        if op == "fma":
            v = xs[0] * xs[1] + xs[2]
        return None if math.isnan(v) else _bits_of(v, fmt)
    f = [Fraction(v) for v in xs]
    exact = {
        "add": lambda: f[0] + f[1],
        "sub": lambda: f[0] - f[1],
        "mul": lambda: f[0] * f[1],
        "div": lambda: f[0] / f[1],
        "fma": lambda: f[0] * f[1] + f[2],
    }[op]()
    zero_sign = False
    if exact == 0:  # the sign of an exact zero, as IEEE 754 defines it
        if op in ("mul", "div"):
            zero_sign = neg[0] != neg[1]
        else:
            if op == "fma":
                terms = [(f[0] * f[1], neg[0] != neg[1]), (f[2], neg[2])]
            else:
                terms = [(f[0], neg[0]), (f[1], neg[1] != (op == "sub"))]
            same_zeros = terms[0][0] == 0 and terms[1][0] == 0 and terms[0][1] == terms[1][1]
            zero_sign = terms[0][1] if same_zeros else mode == "rm"
    return _round(exact, fmt, mode, negative_zero=zero_sign)


def _round_sqrt(x: Fraction, fmt, mode: str) -> int:
    guess = _bits_of(math.sqrt(float(x)), fmt)
    width = fmt[3]
    candidates = [guess - 1, guess, guess + 1]
    value = {b: Fraction(_f32(b) if width == 32 else _f64(b)) for b in candidates}
    below = max((b for b in candidates if value[b] ** 2 <= x), key=lambda b: value[b])
    above = min((b for b in candidates if value[b] ** 2 >= x), key=lambda b: value[b])
    if below == above or mode in ("rz", "rm"):
        return below
    if mode == "rp":
        return above
    mid = (value[below] + value[above]) / 2
    return below if mid**2 > x or (mid**2 == x and below % 2 == 0) else above


CANONICAL_NAN = 0x7FFFFFFF


def _f32_result(op, xs, mode, ftz=False, sat=False):
    if ftz:
        xs = [math.copysign(0.0, v) if v != 0 and abs(v) < 2**-126 else v for v in xs]
    bits = _ieee(op, xs, F32, mode)
    if bits is None:
        return 0 if sat else CANONICAL_NAN
    v = _f32(bits)
    if ftz and v != 0 and abs(v) < 2**-126:
        bits = 0x80000000 if v < 0 else 0
    if sat:
        v = _f32(bits)
        bits = 0 if not v > 0 else (0x3F800000 if v >= 1 else bits)
    return bits


def _cvt_int(x: float, irnd: str, bits: int, signed: bool, source_f64: bool) -> int:
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    if math.isnan(x):
        return 0 if not source_f64 and bits < 64 else 1 << (bits - 1)
    if math.isinf(x):
        r = lo if x < 0 else hi
    else:
        f = Fraction(x)
        r = {"rzi": math.trunc(f), "rmi": math.floor(f), "rpi": math.ceil(f), "rni": round(f)}[irnd]
    return min(max(r, lo), hi) & ((1 << bits) - 1)


def _half_to_fraction(h: int, fmt) -> Fraction | None:
    p, emin, _, _ = fmt
    ebits = 16 - p
    exponent, mant = (h >> (p - 1)) & ((1 << ebits) - 1), h & ((1 << (p - 1)) - 1)
    sign = -1 if h & 0x8000 else 1
    if exponent == (1 << ebits) - 1:
        return None if mant else Fraction(sign * 10**400)  # infinity, as a number beyond every format
    if exponent == 0:
        return sign * Fraction(mant) * Fraction(2) ** (emin - (p - 1))
    return sign * Fraction(mant | 1 << (p - 1)) * Fraction(2) ** (exponent - (1 << (ebits - 1)) + 1 - (p - 1))


def _to_half(x: float, fmt, mode: str) -> int:
    if math.isnan(x):
        return -1  # any NaN
    if math.isinf(x):
        return (0x8000 if x < 0 else 0) | (((1 << (16 - fmt[0])) - 1) << (fmt[0] - 1))
    return _round(Fraction(x), fmt, mode, negative_zero=math.copysign(1, x) < 0)


def _from_half(h: int, fmt, out) -> int:
    v = _half_to_fraction(h, fmt)
    if v is None:
        return -1
    if abs(v) > 2**1000:
        return _bits_of(math.copysign(math.inf, v), out)
    return _round(v, out, "rn", negative_zero=bool(h & 0x8000))


def _setp_mask(x: float, y: float) -> int:
    unordered = math.isnan(x) or math.isnan(y)
    tests = [x == y, x != y, x < y, x <= y, x > y, x >= y]
    ordered = [not unordered and t for t in tests]
    unord = [unordered or t for t in tests]
    bits = ordered + unord + [not unordered, unordered]
    return sum(int(t) << k for k, t in enumerate(bits))


def _minmax(x: float, y: float, want_max: bool, nan_wins: bool = False) -> int:
    if math.isnan(x) or math.isnan(y):
        if nan_wins or (math.isnan(x) and math.isnan(y)):
            return CANONICAL_NAN
        return _bits_of(y if math.isnan(x) else x, F32)
    if x == y:
        neg_x = math.copysign(1, x) < 0
        pick_x = not neg_x if want_max else neg_x
    else:
        pick_x = x > y if want_max else x < y
    return _bits_of(x if pick_x else y, F32)


def _check(got: int, want: int, what: str, fmt=F32):
    if want == -1:  # any NaN
        assert _is_nan(got, fmt), what
    else:
        assert got == want, (what, hex(got), hex(want))


# ---- bits and integers: the ISA's pseudo-code in Python ---------------------------------------------


def _bfe(a: int, pos: int, length: int, bits: int, signed: bool) -> int:
    msb = bits - 1
    pos, length = pos & 0xFF, length & 0xFF
    sbit = 0 if not signed or length == 0 else (a >> min(pos + length - 1, msb)) & 1
    d = 0
    for i in range(bits):
        bit = (a >> (pos + i)) & 1 if i < length and pos + i <= msb else sbit
        d |= bit << i
    return d


def _bfi(a: int, b: int, pos: int, length: int, bits: int) -> int:
    f = b
    i = 0
    while i < length & 0xFF and (pos & 0xFF) + i <= bits - 1:
        f = (f & ~(1 << (pos + i))) | (((a >> i) & 1) << (pos + i))
        i += 1
    return f


# prmt's modes: for c[1:0] = 0..3, the source byte of each destination byte b3 b2 b1 b0.
PRMT_TABLE = {
    "f4e": [(3, 2, 1, 0), (4, 3, 2, 1), (5, 4, 3, 2), (6, 5, 4, 3)],
    "b4e": [(5, 6, 7, 0), (6, 7, 0, 1), (7, 0, 1, 2), (0, 1, 2, 3)],
    "rc8": [(0, 0, 0, 0), (1, 1, 1, 1), (2, 2, 2, 2), (3, 3, 3, 3)],
    "ecl": [(3, 2, 1, 0), (3, 2, 1, 1), (3, 2, 2, 2), (3, 3, 3, 3)],
    "ecr": [(0, 0, 0, 0), (1, 1, 1, 0), (2, 2, 1, 0), (3, 2, 1, 0)],
    "rc16": [(1, 0, 1, 0), (3, 2, 3, 2), (1, 0, 1, 0), (3, 2, 3, 2)],
}


def _prmt(a: int, b: int, c: int, mode: str | None) -> int:
    source = [((b << 32 | a) >> (8 * k)) & 0xFF for k in range(8)]
    d = 0
    for i in range(4):
        if mode is None:
            sel = (c >> (4 * i)) & 0xF
            byte = source[sel & 7]
            if sel & 8:
                byte = 0xFF if byte & 0x80 else 0
        else:
            byte = source[PRMT_TABLE[mode][c & 3][3 - i]]
        d |= byte << (8 * i)
    return d


def _bfind(a: int, bits: int, signed: bool, shiftamt: bool = False) -> int:
    if signed and a >> (bits - 1):
        a = ~a & ((1 << bits) - 1)
    if a == 0:
        return M32
    d = a.bit_length() - 1
    return bits - 1 - d if shiftamt else d


def _shf(a: int, b: int, c: int, left: bool, wrap: bool) -> int:
    n = c & 31 if wrap else min(c, 32)
    funnel = b << 32 | a
    return ((funnel << n) >> 32) & M32 if left else (funnel >> n) & M32


def _shift(a: int, n: int, bits: int, kind: str) -> int:
    if kind == "shl":
        return (a << n) & ((1 << bits) - 1) if n < bits else 0
    if kind == "u":
        return a >> n if n < bits else 0
    return (_signed(a, bits) >> min(n, bits - 1)) & ((1 << bits) - 1)


def _brev(a: int, bits: int) -> int:
    return int(format(a, f"0{bits}b")[::-1], 2)


def check_bits(stdout: str) -> None:
    """Each ``bits`` row of ``program_ptx.cu``'s output against the bit instructions' pseudo-code."""
    rows = _rows(stdout, "bits")
    assert len(rows) == 384
    for (a, b, c), o in rows:
        a64, b64 = b << 32 | a, c << 32 | b
        pos, length, sh = b & 63, c & 63, c & 63
        want = [
            _bfe(a, pos, length, 32, False),
            _bfe(a, pos, length, 32, True),
            _bfe(a64, pos, length, 64, False),
            _bfe(a64, pos + 16, length, 64, True),
            _bfi(a, b, pos, length, 32),
            _bfi(a64, b64, pos, length, 64),
            _prmt(a, b, c, None),
            *(_prmt(a, b, c, m) for m in ("f4e", "b4e", "rc8", "ecl", "ecr", "rc16")),
            a ^ b ^ c,
            (a & b) | (a & c) | (b & c),
            ((a & b) | c) ^ a,
            _brev(a, 32),
            _brev(a64, 64),
            bin(a).count("1"),
            bin(a64).count("1"),
            32 - (a >> (c & 31)).bit_length(),
            64 - (a64 >> sh).bit_length(),
            _bfind(a >> (c & 31), 32, False),
            _bfind(a, 32, True),
            _bfind(a >> (c & 31), 32, False, shiftamt=True),
            _bfind(a64, 64, True),
            _shf(a, b, sh, True, True),
            _shf(a, b, sh, False, False),
            _shf(a, b, sh, True, False),
            _shf(a, b, sh, False, True),
            _shift(a, sh, 32, "shl"),
            _shift(a, sh, 32, "u"),
            _shift(a, sh, 32, "s"),
            _shift(a64, c & 127, 64, "shl"),
            _shift(a64, c & 127, 64, "s"),
            ((a & b) | c) ^ a,
            ~a & M32,
            int(a & b == 0),
            (a64 >> 32) | (a64 & M32) << 32,
            (a & 0xFFFF) | (b >> 16) << 16,
            _video4("absdiff", a, b, c, (False, False, False), sat=False, add=True),
            _video4("add", a, b, c, (True, True, True), sat=True, add=False),
            _video4("sub", a, b, c, (False, False, False), sat=True, add=False),
            _video4("avrg", a, b, c, (True, True, True), sat=False, add=False),
            _video4("min", a, b, c, (True, True, True), sat=False, add=True),
            _video4("max", a, b, c, (False, False, True), sat=False, add=False),
        ]
        assert o == [w & M64 for w in want], (a, b, c)


def _video4(op: str, a: int, b: int, c: int, signed: tuple, sat: bool, add: bool) -> int:
    """vop4.dtype.atype.btype with the default selectors and mask, as the ISA's pseudo-code says
    (``signed``: dtype, atype, btype)."""
    total, packed = c, 0
    for i in range(4):
        x = _signed(a >> (8 * i), 8) if signed[1] else (a >> (8 * i)) & 0xFF
        y = _signed(b >> (8 * i), 8) if signed[2] else (b >> (8 * i)) & 0xFF
        t = {
            "add": x + y,
            "sub": x - y,
            "avrg": (x + y + 1) >> 1 if x + y >= 0 else (x + y) >> 1,
            "absdiff": abs(x - y),
            "min": min(x, y),
            "max": max(x, y),
        }[op]
        if sat:
            t = max(-128, min(127, t)) if signed[0] else max(0, min(255, t))
        total += t
        packed |= (t & 0xFF) << (8 * i)
    return (total & M32) if add else packed


def _trunc_div(x: int, y: int) -> int:
    q = abs(x) // abs(y)
    return q if (x < 0) == (y < 0) else -q


def _sat32(x: int) -> int:
    return max(-(1 << 31), min((1 << 31) - 1, x)) & M32


def check_arith(stdout: str) -> None:
    """Each ``arith`` row of ``program_ptx.cu``'s output against Python's exact integers."""
    for (a, b, c), o in _rows(stdout, "arith"):
        a64, b64, c64 = b << 32 | a, c << 32 | b, a << 32 | c
        sa, sb, sc = _signed(a, 32), _signed(b, 32), _signed(c, 32)
        x = a | b << 32 | c << 64 | (a ^ b) << 96
        y = c | a << 32 | b << 64 | (~c & M32) << 96
        add = x + y
        sub = (x - y) % (1 << 128)
        product = (b << 32 | a) * (c << 32 | (a ^ c))
        n = c & 255
        want = [
            *((add >> (32 * k)) & M32 for k in range(4)),
            add >> 128,
            *((sub >> (32 * k)) & M32 for k in range(4)),
            M32 if x < y else 0,  # subc.u32 0, 0 after a borrow
            *((product >> (32 * k)) & M32 for k in range(4)),
            (a * b) >> 32,
            ((sa * sb) >> 32) & M32,
            a * b,
            (sa * sb) & M64,
            (a64 * b64) >> 64,
            ((_signed(a64, 64) * _signed(b64, 64)) >> 64) & M64,
            (a64 * b64) & M64,
            (a * b + c) & M32,
            (((sa * sb) >> 32) + sc) & M32,
            (a * b + c64) & M64,
            _sat32(((sa * sb) >> 32) + sc),
            _sat32(sa + sb),
            _sat32(sa - sb),
            min(sa, sb) & M32,
            max(a, b),
            min(a64, b64),
            max(_signed(a64, 64), _signed(c64, 64)) & M64,
            abs(sa) & M32,
            -sa & M32,
            abs(_signed(a64, 64)) & M64,
            a // (b | 1),
            (sa - ((b | 1) & 0x7FFFFFFF) * _trunc_div(sa, (b | 1) & 0x7FFFFFFF)) & M32,
            _trunc_div(_signed(a64, 64), _signed(b64 | 1, 64)) & M64,
            (_signed(a & 0xFFFFFF, 24) * _signed(b & 0xFFFFFF, 24)) & M32,
            (((a & 0xFFFFFF) * (b & 0xFFFFFF)) >> 16) & M32,
            ((a & 0xFFFFFF) * (b & 0xFFFFFF) + c) & M32,
            (a + b) & 0xFFFF,
            (a & 0xFFFF) * (c & 0xFFFF),
            (a64 - b64) & M64,
            (a64 + c64) & M64,
            (b64 + a64 + ((a64 + c64) >> 64)) & M64,
            (n + 1) * (n + 2) // 2,
            (a + b) & M32,
            min(sa, sb) & M32,
        ]
        assert o == want, (a, b, c)
