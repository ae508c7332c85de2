"""Inline PTX: the asm statement's splitting and the template's parsing (pure Python), refusals
by name, and every translated instruction family run by the simulator (``kernels/program_ptx.cu``
for one thread's instructions, ``kernels/program_ptx_threads.cu`` for warps, memory, barriers,
exit and trap) and checked against the PTX ISA's definitions, worked out here independently:
Python integers for carries, products and bit fields, exact rationals (``fractions``) for every
rounding mode, the ISA's pseudo-code for shfl.sync, bfe, bfi, prmt, bfind and the conversions.
Both programs are also compiled by ``nvcc -arch=sm_80 -c`` where nvcc is installed."""

from __future__ import annotations

import math
import struct
import time
from fractions import Fraction
from pathlib import Path

import pytest

from simulator import ptx
from simulator.ptx_syntax import (
    Imm,
    Instr,
    Label,
    Mem,
    Not,
    OpRef,
    Pair,
    Reg,
    RegDecl,
    Scope,
    Sink,
    Vec,
    parse_template,
)

from .conftest import KERNELS, line_of, nvcc_compile, run_cli

SCALAR = KERNELS / "program_ptx.cu"
THREADS = KERNELS / "program_ptx_threads.cu"
M32, M64 = (1 << 32) - 1, (1 << 64) - 1


# ---- the statement and the template (pure Python) ------------------------------------------------
def test_split_asm_reads_libclangs_tokens():
    # As libclang spells them: '::' is one token, a second operand may follow without a comma
    # (cuda-samples' conjugateGradientMultiDeviceCG writes `::"r"(v) "l"(p)`, which nvcc accepts).
    tokens = ["asm", "volatile", "(", '"st.release.sys.global.u8 [%1], %0;"', "::", '"r"', "(", "v", ")"]
    tokens += ['"l"', "(", "p", "+", "1", ")", ":", '"memory"', ")"]
    stmt = ptx.split_asm(tokens)
    assert stmt.template == "st.release.sys.global.u8 [%1], %0;"
    assert stmt.volatile and stmt.outputs == [] and stmt.clobbers == ["memory"]
    assert [(op.constraint, op.expr, op.first, op.last) for op in stmt.inputs] == [
        ("r", "v", 7, 7),
        ("l", "p + 1", 11, 13),
    ]


def test_split_asm_joins_literals_and_unescapes():
    tokens = ["__asm__", "(", r'"{\n\t.reg .pred p;\n\t"', r'"setp.ne.b32 p, %1, 0;\n\t}"', ":", '"=r"']
    tokens += ["(", "x", "[", "i", "]", ")", ":", '"r"', "(", "f", "(", "a", ",", "b", ")", ")", ")"]
    stmt = ptx.split_asm(tokens)
    assert stmt.template == "{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %1, 0;\n\t}"
    assert not stmt.volatile
    assert [op.expr for op in stmt.operands] == ["x [ i ]", "f ( a , b )"]


def test_parse_template_forms():
    tree = parse_template(
        "{ .reg .u32 lo, hi; .reg .pred p<2>;\n mov.b64 {lo, hi}, %1;\n"
        "@!p1 shfl.sync.down.b32 lo|p0, lo, 2, 0x1f, -1; L1: ld.global.nc.v2.f32 {%0, _}, [%2-8];"
        " add.f32 %0, %0, 0f3F800000; setp.lt.and.f64 p0, %%r1, 1.5, !p1; mov.u32 %0, %%laneid; }"
    )
    (scope,) = tree.body
    assert isinstance(scope, Scope)
    decls, pdecl, mov, shfl, label, ld, add, setp, lane = scope.body
    assert decls == RegDecl("u32", ["lo", "hi"]) and pdecl == RegDecl("pred", ["p0", "p1"])
    assert mov == Instr("mov", ["b64"], [Vec((Reg("lo"), Reg("hi"))), OpRef(1)])
    assert shfl.guard == (Reg("p1"), True) and shfl.operands[0] == Pair(Reg("lo"), Reg("p0"))
    assert shfl.operands[2:] == [Imm(2, "int"), Imm(0x1F, "int"), Imm(-1, "int")]
    assert label == Label("L1")
    assert ld.mods == ["global", "nc", "v2", "f32"] and ld.operands == [
        Vec((OpRef(0), Sink())),
        Mem(OpRef(2), -8),
    ]
    assert add.operands[2] == Imm(0x3F800000, "f32bits")
    assert setp.operands[1:] == [
        Reg("%r1"),
        Imm(struct.unpack("<Q", struct.pack("<d", 1.5))[0], "f64bits"),
        Not(Reg("p1")),
    ]
    assert lane.operands[1] == Reg("%laneid")


def _asm(template: str, outputs=(), inputs=(), clobbers=()) -> ptx.AsmStatement:
    ops = [ptx.AsmOperand(c, e) for c, e in outputs], [ptx.AsmOperand(c, e) for c, e in inputs]
    return ptx.AsmStatement(template, ops[0], ops[1], list(clobbers))


@pytest.mark.parametrize(
    "template, named",
    [
        ("vabsdiff2.u32.u32.u32.add %0, %1, %2, %3;", "vabsdiff2.u32.u32.u32.add"),
        ("sad.u32 %0, %1, %2, %3;", "sad.u32"),
        (
            "add.u32 %0, %1, %2; mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 %0, %1, %2, %3;",
            "mma.sync.aligned",
        ),
        ("add.foo.u32 %0, %1, %2;", "add.foo.u32"),
        ("shfl.down.b32 %0, %1, %2, %3;", "shfl.down.b32"),
        ("mov.u32 %0, %%pm0;", "%pm0"),
        (".shared .u32 s; mov.u32 %0, %1;", ".shared"),
        ("bar.arrive 1, 64;", "bar.arrive"),
        ("cvta.to.shared.u32 %0, %1;", "cvta.to.shared.u32"),
    ],
)
def test_unsupported_instructions_are_refused_by_name(template, named):
    with pytest.raises(ptx.PtxRefusal) as err:
        ptx.translate(_asm(template, [("=r", "x")], [("r", "a"), ("r", "b"), ("r", "c")]), "k.cu", 7)
    assert f"inline PTX instruction '{named}" in str(err.value)
    assert "not supported by the simulator" in str(err.value)


def test_other_refusals_name_the_construct():
    with pytest.raises(ptx.PtxRefusal, match="constraint '=m'"):
        ptx.translate(_asm("mov.u32 %0, 1;", [("=m", "x")]), "k.cu", 1)
    with pytest.raises(ptx.PtxRefusal, match="32-bit address"):
        ptx.translate(_asm("ld.shared.u32 %0, [%1];", [("=r", "x")], [("r", "a")]), "k.cu", 1)
    with pytest.raises(ptx.PtxRefusal, match="never declares"):
        ptx.translate(_asm("mov.u32 %0, r9;", [("=r", "x")]), "k.cu", 1)
    with pytest.raises(ptx.PtxRefusal, match="asm goto"):
        ptx.split_asm(["asm", "goto", "(", '"bra %l0;"', ":", ":", ":", ":", "done", ")"])


def test_waits_and_operand_places():
    # Warp operations, barriers, nanosleep and exit wait for other threads: the kernel must not
    # run as a plain loop; arithmetic does not. Each operand's expression appears exactly once.
    shfl = ptx.translate(_asm("shfl.sync.idx.b32 %0, %1, 0, 31, -1;", [("=r", "x")], [("r", "v")]), "k.cu", 3)
    add = ptx.translate(_asm("add.u32 %0, %0, %1;", [("+r", "x")], [("r", "v")]), "k.cu", 3)
    assert shfl.waits and not add.waits
    assert [p for p in add.parts if isinstance(p, int)] == [0, 1]
    assert '"k.cu", 3' in shfl.code and "\n" not in shfl.code
    tied = ptx.translate(_asm("add.u32 %0, %0, 1;", [("=r", "x")], [("0", "y")]), "k.cu", 3)
    assert "sim_ptx_o0 = ::__sim::ptx::bind" in tied.code


def test_supported_opcodes_cover_the_subset_real_code_uses():
    wanted = "mov cvta ld st atom red add sub addc subc mul mad madc fma min max abs neg and or xor not shl"
    wanted += " shr bfe bfi prmt lop3 brev popc clz bfind cvt selp setp shfl vote match membar fence"
    wanted += " nanosleep trap exit bar"
    assert set(wanted.split()) <= set(ptx.supported_opcodes())


# ---- runs ------------------------------------------------------------------------------------
def _rows(stdout: str, kernel: str) -> list[tuple[list[int], list[int]]]:
    """(inputs, results) of each ``kernel ... : ...`` line, as integers."""
    rows = []
    for line in stdout.splitlines():
        if line.startswith(kernel + " "):
            head, _, tail = line.partition(" : ")
            rows.append(([int(w, 16) for w in head.split()[2:]], [int(w, 16) for w in tail.split()]))
    return rows


@pytest.fixture(scope="module")
def scalar_run():
    began = time.time_ns()
    proc = run_cli("run", str(SCALAR))
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr
    assert "done=1" in proc.stdout
    return proc.stdout, began, time.time_ns()


@pytest.fixture(scope="module")
def threads_run():
    proc = run_cli("run", str(THREADS))
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr
    assert "done=1" in proc.stdout and proc.stderr == "", proc.stderr
    return proc.stdout


# ---- bits and integers: the ISA's pseudo-code in Python ---------------------------------------------
def _signed(x: int, bits: int) -> int:
    x &= (1 << bits) - 1
    return x - (1 << bits) if x >> (bits - 1) else x


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


# ---- warps, memory, barriers ------------------------------------------------------------------------
def _shfl(values: list[int], lane: int, mode: str, b: int, c: int) -> tuple[int, int]:
    """The ISA's shfl.sync: (value, predicate) for ``lane`` of a warp whose inputs are ``values``."""
    bval, cval, seg = b & 31, c & 31, (c >> 8) & 31
    max_lane = (lane & seg) | (cval & ~seg)
    min_lane = lane & seg
    if mode == "up":
        j, ok = lane - bval, lane - bval >= max_lane
    elif mode == "down":
        j, ok = lane + bval, lane + bval <= max_lane
    elif mode == "bfly":
        j, ok = lane ^ bval, lane ^ bval <= max_lane
    else:
        j = min_lane | (bval & ~seg)
        ok = j <= max_lane
    return values[j if ok else lane], int(ok)


SHFLS = [
    ("up", 1, 0),
    ("up", 5, 0),
    ("up", 3, (32 - 8) << 8),
    ("down", 1, 0x1F),
    ("down", 6, ((32 - 16) << 8) | 0x1F),
    ("down", 3, 0x10),
    ("bfly", 3, 0x1F),
    ("bfly", 9, ((32 - 8) << 8) | 0x1F),
    ("bfly", 5, ((32 - 8) << 8) | 0x1F),
    ("idx", 7, 0x1F),
    ("idx", 2, ((32 - 4) << 8) | 0x1F),
]


def test_warp_instructions(threads_run):
    lanes = [int(line.split()[2], 16) for line in threads_run.splitlines() if line.startswith("lane ")]
    rows = [o for _, o in _rows(threads_run, "warp")]
    assert len(lanes) == len(rows) == 64
    for w in range(2):
        v = lanes[32 * w : 32 * w + 32]
        # CUB's reduction: five guarded shuffle-down steps, replayed with the ISA's shfl.
        sums = [x & 0xFFFF for x in v]
        for offset in (1, 2, 4, 8, 16):
            moved = [_shfl(sums, lane, "down", offset, 31) for lane in range(32)]
            sums = [(s + m) & M32 if ok else s for s, (m, ok) in zip(sums, moved)]
        wide = [(x << 32) | (32 * w + lane) for lane, x in enumerate(v)]
        for lane in range(32):
            o = rows[32 * w + lane]
            assert o[:7] == [
                lane,
                w,
                1 << lane,
                (1 << lane) - 1,
                (2 << lane) - 1 & M32,
                ~((1 << lane) - 1) & M32,
                ~((2 << lane) - 1) & M32,
            ]
            for k, (mode, b, c) in enumerate(SHFLS):
                value, ok = _shfl(v, lane, mode, b, c)
                assert o[7 + k] == value | ok << 32, (w, lane, mode, b, c)
            assert o[18] == v[lane ^ 1] | 1 << 32 and o[19] == v[0]
            odd = [x & 1 for x in v]
            assert o[20:25] == [int(all(odd)), int(any(odd)), int(len(set(odd)) == 1), 1, 1]
            big = sum(1 << k for k, x in enumerate(v) if x > 0x80000000)
            assert o[25] == big and o[26] == ~big & M32
            assert o[27] == sum(1 << k for k, x in enumerate(v) if x % 4 == v[lane] % 4)
            assert o[28] == (M32 | 1 << 32 if w == 0 else 0)  # warp 0 matches (all 7), warp 1 does not
            assert o[29] == sum(1 << k for k, x in enumerate(v) if x % 3 == v[lane] % 3)
            assert o[30:35] == [
                sum(v) & M32,
                min(_signed(x, 32) for x in v) & M32,
                max(v),
                _or(1 << (x % 32) for x in v),
                M32,
            ]
            assert o[35] == sums[lane]
            moved = _shfl(wide, lane, "down", 2, 31)
            assert o[36] == ((wide[lane] + moved[0]) & M64 if moved[1] else wide[lane])


def _or(values) -> int:
    out = 0
    for x in values:
        out |= x
    return out


def test_memory_instructions(threads_run):
    rows = [o for _, o in _rows(threads_run, "memory")]
    assert len(rows) == 64
    src = [
        _bits_of(float(struct.unpack("<f", struct.pack("<f", i * 1.5 - 100.0))[0]), F32) for i in range(256)
    ]
    raw = bytes((i * 37 - 128) & 0xFF for i in range(64))
    for t, o in enumerate(rows):
        assert o[0:4] == src[4 * t : 4 * t + 4]  # ld.global.nc.v4.f32
        assert o[4] == raw[t] and o[5] == _signed(raw[t], 8) & M32  # ld.u8 zero-, ld.s8 sign-extended
        k = 2 * (t % 30) + 2
        assert o[6] == _signed(raw[k] | raw[k + 1] << 8, 16) & M64  # ld.s16 into 64 bits, [addr+2]
        assert o[7] == ((t & ~1) + 1) * 5 and o[8] == (63 - t) * 5  # st/ld.volatile.shared, generic ld
        assert (o[9], o[10]) == ((1, 1234) if t == 63 else (0, 0))  # st.release / ld.acquire
        assert o[14] == 3 * t and o[15] == 64 * 3  # ld.L2::cache_hint, red.shared.add
        assert o[16] == (t + 2) + t * 9  # st.local then ld.local through cvta.to.local
        assert o[17] == (0x1234 << 16 if t == 0 else 0)  # atom.cas.b16: old 0, then 0x1234
    assert sorted(o[11] for o in rows) == list(range(64))  # atom.add: every old value once
    assert sorted(o[12] for o in rows) == sorted(i % 17 for i in range(64))  # atom.inc wraps at 16
    counters = [int(w, 16) for w in _line(threads_run, "counters").split()]
    dec = 0
    for _ in range(64):
        dec = 20 if dec == 0 or dec > 20 else dec - 1
    xor = 0
    for t in range(64):
        xor ^= t * 0x01010101
    olds = sorted([o[13] for o in rows] + [counters[9]])
    assert olds == sorted([7] + [t + 100 for t in range(64)])  # atom.exch: a chain through every value
    assert counters[:9] + counters[10:] == [
        64,
        sum(range(64)),
        min([1000] + [t * 7 % 61 - 30 for t in range(64)]) & M32,
        max(t * 13 % 97 for t in range(64)),
        64 % 17,
        dec,
        0,
        (1 << 29) - 1,
        xor,
        sum(t + 1 for t in range(64)),  # the atom.cas loop
        128,
    ]
    words = [int(w, 16) for w in _line(threads_run, "words").split()]
    assert words == [v for t in range(64) for v in (3 * t, ~t & M32)]  # st.global.v2.u32
    fsum, dsum, big = (int(w, 16) for w in _line(threads_run, "sums").split())
    assert _f32(fsum) == sum(t * 0.5 for t in range(64)) and _f64(dsum) == sum(t * 0.25 for t in range(64))
    assert big == 64 << 33


def _line(stdout: str, key: str) -> str:
    return next(line for line in stdout.splitlines() if line.startswith(key + " :")).partition(" : ")[2]


def test_barriers_sleep_and_exit(threads_run):
    rows = [o for _, o in _rows(threads_run, "barrier")]
    assert len(rows) == 3 * 128
    unset = 0xEEEEEEEE
    for i, o in enumerate(rows):
        t = i % 128
        assert o[0] == (t + 1) % 128 * 3 and o[1] == (127 - t) * 7  # bar.sync / barrier.sync
        assert o[2:5] == [sum(1 for k in range(128) if k % 3 == 0), 1, 1]  # bar.red.popc/and/or
        assert o[5] == (42 if t == 5 else unset)  # nanosleep while waiting for an acquire load
        assert o[6] == (1 if t < 120 else unset) and o[7] == unset  # exit ends the thread


@pytest.mark.parametrize("what, marker", [("trap", "// TRAP"), ("named", "// NAMED")])
def test_trap_and_named_barriers_fail_the_launch_naming_the_line(what, marker):
    # trap stops the kernel as __trap() does; a named barrier (bar.sync 1) is refused when reached.
    proc = run_cli("run", str(THREADS), "--", what)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"{what}=cudaErrorLaunchFailure" in proc.stdout
    assert f"{THREADS}:{line_of(THREADS, marker)}" in proc.stderr
    if what == "named":
        assert "bar.sync with a named barrier" in proc.stderr


@pytest.mark.parametrize("mode", ["memcheck", "synccheck", "racecheck"])
def test_threads_program_runs_clean_in_every_checker(threads_run, mode):
    proc = run_cli("run", str(THREADS), "--mode", mode)
    assert proc.returncode == 0, proc.stdout[-1000:] + proc.stderr
    assert proc.stdout == threads_run and proc.stderr == ""


def test_scalar_program_has_no_undefined_behaviour():
    # memcheck's UBSan watches every helper the translations call (shifts, signed overflow), and
    # the results are the ISA's there too (a NaN's payload is the one thing left to the compiler).
    proc = run_cli("run", str(SCALAR), "--mode", "memcheck")
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    _check_bits(proc.stdout)
    _check_arith(proc.stdout)
    _check_floats(proc.stdout)


def test_unsupported_instruction_fails_the_build_with_one_line(tmp_path):
    src = tmp_path / "sad.cu"
    src.write_text(
        "#include <cstdio>\n__global__ void k(unsigned* out, unsigned a, unsigned b) {\n"
        "    unsigned r;\n"
        '    asm("sad.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(0u));\n'
        "    *out = r;\n}\nint main() { return 0; }\n"
    )
    proc = run_cli("run", str(src))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert f"{src}:4: inline PTX instruction 'sad.u32' is not supported by the simulator" in lines[-1]
    assert "Traceback" not in proc.stderr


@pytest.mark.kernels
@pytest.mark.parametrize("program", [SCALAR, THREADS], ids=lambda p: Path(p).stem)
def test_the_programs_build_with_nvcc(tmp_path, program):
    proc = nvcc_compile(program, tmp_path)
    assert proc.returncode == 0, proc.stderr
