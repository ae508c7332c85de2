"""Inline PTX bit and integer instructions and special registers run by the simulator
(``kernels/program_ptx.cu``) and checked against the PTX ISA's pseudo-code in Python: Python
integers for carries, products and bit fields; bfe, bfi, prmt, bfind as the ISA defines them."""

from __future__ import annotations

from .ptx_reference import (
    M32,
    M64,
    _rows,
    _signed,
)

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


def test_bit_instructions(scalar_run):
    _check_bits(scalar_run[0])


def _check_bits(stdout: str) -> None:
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


def test_integer_arithmetic(scalar_run):
    _check_arith(scalar_run[0])


def _check_arith(stdout: str) -> None:
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


def test_special_registers(scalar_run):
    stdout, began, ended = scalar_run
    rows = _rows(stdout, "special")
    assert len(rows) == 96
    for t, (_, o) in enumerate(rows):
        block, rank = divmod(t, 16)
        bx, by = block % 2, block // 2
        tx, ty, tz = rank % 4, (rank // 4) % 2, rank // 8
        assert o[:12] == [tx, ty, tz, 4, 2, 2, bx, by, 0, 2, 3, 1], t
        assert o[12] == 96  # %dynamic_smem_size: the launch's dynamic shared memory
        assert o[13] == 1 and o[14] >= 1  # %smid < %nsmid
        assert o[15] == 64  # %nwarpid: an sm_80 SM's 64 warps
        assert o[16] == 1 and o[17] == 1  # %clock64 and %clock do not go back
        assert began <= o[18] <= ended  # %globaltimer: nanoseconds of the host's real-time clock
        assert o[19] == 1  # %globaltimer_hi between two reads of %globaltimer
