"""PTX comparison, selection and conversion instructions (``setp``, ``set``, ``selp``, ``cvt``),
each registered into ``ptx_operands.REGISTRY``.
"""

from __future__ import annotations

from .ptx_operands import (
    HALF_FORMATS,
    INT_ROUNDING,
    PRED,
    Emitter,
    Mods,
    P,
    PtxType,
    U,
    cbool,
    instruction,
    operands,
)
from .ptx_syntax import (
    Instr,
    Pair,
    PtxRefusal,
    unsupported,
)

__all__: list[str] = []


# ---- comparison and selection -----------------------------------------------------------------
COMPARE = {
    **{
        op: i
        for i, op in enumerate(["eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu"])
    },
    "num": 12,
    "nan": 13,
}
_INT_COMPARE = {
    "eq": "==",
    "ne": "!=",
    "lt": "<",
    "le": "<=",
    "gt": ">",
    "ge": ">=",
    "lo": "<",
    "ls": "<=",
    "hi": ">",
    "hs": ">=",
}


def _compare(em: Emitter, ins: Instr, cmp: str | None, t: PtxType, a, b, ftz: bool) -> list[str]:
    """C++ tests of ``a cmp b`` as type ``t``: one, or two for a pair of halves (element 0 first)."""
    if cmp is None or (ftz and t.name not in ("f32", "f16", "f16x2")):
        raise unsupported(ins.full)
    if t.kind == "f":
        return [f"{P}fcompare<{t.c}>({COMPARE[cmp]}, {em.read(a, t)}, {em.read(b, t)}, {cbool(ftz)})"]
    if t.kind in ("f16x2", "bf16x2"):
        x, y = em.read(a, t), em.read(b, t)
        fmt = HALF_FORMATS[t.kind[:-2]]
        return [
            f"{P}half_compare({fmt}, {COMPARE[cmp]}, static_cast<{P}u16>({x} >> {shift}), "
            f"static_cast<{P}u16>({y} >> {shift}), {cbool(ftz)})"
            for shift in (0, 16)
        ]
    if t.kind in HALF_FORMATS:
        x, y = em.read(a, t), em.read(b, t)
        return [f"{P}half_compare({HALF_FORMATS[t.kind]}, {COMPARE[cmp]}, {x}, {y}, {cbool(ftz)})"]
    if t.integer and cmp in _INT_COMPARE:
        ct = U[t.bits] if cmp in ("lo", "ls", "hi", "hs") or t.kind == "b" else t
        if t.kind == "b" and cmp not in ("eq", "ne", "lo", "ls", "hi", "hs"):
            raise unsupported(ins.full)
        return [f"({em.read(a, ct)} {_INT_COMPARE[cmp]} {em.read(b, ct)})"]
    raise unsupported(ins.full)


_BOOL_OPS = {"and": "&&", "or": "||", "xor": "!="}


@instruction("setp")
def _setp(ins: Instr, em: Emitter) -> list[str]:
    m = Mods(ins)
    cmp = m.take(*COMPARE, "lo", "ls", "hi", "hs")
    bool_op = m.take(*_BOOL_OPS)
    (t,) = m.types(1)
    ftz = m.flag("ftz")
    m.done()
    ops = operands(ins, 4 if bool_op else 3)
    dest, a, b = ops[:3]
    tests = _compare(em, ins, cmp, t, a, b, ftz)
    out = []
    names = []
    for test in tests:
        name, decl = em.temp("bool", test)
        out.append(decl)
        names.append(name)
    c = em.read(ops[3], PRED) if bool_op else None
    combine = _BOOL_OPS.get(bool_op or "")
    p, q = (dest.value, dest.pred) if isinstance(dest, Pair) else (dest, None)
    if len(names) == 2:  # a pair of halves: p for element 0, q for element 1
        if q is None:
            raise PtxRefusal(f"inline PTX instruction '{ins.full}' writes a pair of predicates p|q")
        results = [f"({n} {combine} {c})" if c else n for n in names]
    else:  # p|q: the test and its complement
        n = names[0]
        results = [f"({n} {combine} {c})" if c else n, f"(!{n} {combine} {c})" if c else f"!{n}"]
    out.append(em.write(p, PRED, results[0]))
    if q is not None:
        out.append(em.write(q, PRED, results[1]))
    return out


# set's "true" of each destination type: all ones for an integer, 1.0 for a float.
_SET_TRUE = {"u32": 0xFFFFFFFF, "s32": 0xFFFFFFFF, "f32": 0x3F800000, "f16": 0x3C00, "bf16": 0x3F80}


@instruction("set")
def _set(ins: Instr, em: Emitter) -> list[str]:
    """set.CmpOp{.BoolOp}{.ftz}.dtype.stype: the comparison as a number (1.0 or all ones, else 0);
    with a pair of halves, each half of d for its element (an integer half all ones)."""
    m = Mods(ins)
    cmp = m.take(*COMPARE, "lo", "ls", "hi", "hs")
    bool_op = m.take(*_BOOL_OPS)
    ftz = m.flag("ftz")
    dt, st = m.types(2)
    m.done()
    ops = operands(ins, 4 if bool_op else 3)
    tests = _compare(em, ins, cmp, st, ops[1], ops[2], ftz)
    if bool_op:
        c = em.read(ops[3], PRED)
        tests = [f"({x} {_BOOL_OPS[bool_op]} {c})" for x in tests]
    if len(tests) == 2:
        if dt.name not in ("u32", "s32", st.name):
            raise unsupported(ins.full)
        true = 0xFFFF if dt.integer else _SET_TRUE[dt.kind[:-2]]
        lo, hi = (f"({x} ? 0x{true:x}u : 0u)" for x in tests)
        return [em.write(ops[0], U[32], f"static_cast<{P}u32>({lo} | ({hi} << 16))")]
    if dt.name not in _SET_TRUE:
        raise unsupported(ins.full)
    bits = U[dt.bits]
    return [em.write(ops[0], bits, f"static_cast<{bits.c}>({tests[0]} ? 0x{_SET_TRUE[dt.name]:x}u : 0u)")]


@instruction("selp")
def _selp(ins: Instr, em: Emitter) -> list[str]:
    m = Mods(ins)
    (t,) = m.types(1)
    m.done()
    d, a, b, c = operands(ins, 4)
    return [em.write(d, t, f"({em.read(c, PRED)} ? {em.read(a, t)} : {em.read(b, t)})")]


# ---- conversion ----------------------------------------------------------------------------------
def _exact_double(em: Emitter, a, t: PtxType, ftz: bool) -> str:
    """The value of float operand ``a`` of type ``t`` as a double (exact)."""
    if t.kind in HALF_FORMATS:
        return f"{P}half_value({HALF_FORMATS[t.kind]}, {em.read(a, t)})"
    value = em.read(a, t)
    if ftz:
        value = f"{P}ftz({value})"
    return f"static_cast<{P}f64>({value})"


def _half_finish(fmt: str, value: str, relu: bool, satfinite: bool, sat: bool) -> str:
    if satfinite:
        value = f"{P}half_satfinite({fmt}, {value})"
    if relu:
        value = f"{P}half_relu({fmt}, {value})"
    if sat:
        value = f"{P}half_sat({fmt}, {value})"
    return value


@instruction("cvt")
def _cvt(ins: Instr, em: Emitter) -> list[str]:
    m = Mods(ins)
    irnd = m.take(*INT_ROUNDING)
    rnd = m.rounding()
    ftz, sat, relu, satfinite = (m.flag(f) for f in ("ftz", "sat", "relu", "satfinite"))
    dt, at = m.types(2)
    m.done()
    if dt.kind == "pred" or at.kind == "pred" or (ftz and "f32" not in (dt.name, at.name)):
        raise unsupported(ins.full)
    if dt.kind in ("f16x2", "bf16x2"):
        d, a, b = operands(ins, 3)
        if at.name != "f32" or rnd not in (0, 1) or irnd or sat:
            raise unsupported(ins.full)
        fmt = HALF_FORMATS[dt.kind[:-2]]
        halves = [
            _half_finish(
                fmt,
                f"{P}half_from_double({fmt}, {_exact_double(em, x, at, ftz)}, {rnd})",
                relu,
                satfinite,
                False,
            )
            for x in (a, b)
        ]
        return [
            em.write(d, U[32], f"static_cast<{P}u32>((static_cast<{P}u32>({halves[0]}) << 16) | {halves[1]})")
        ]
    d, a = operands(ins, 2)
    if relu or satfinite:
        if dt.kind not in HALF_FORMATS or at.kind != "f":
            raise unsupported(ins.full)
    if dt.integer and at.integer:
        if irnd or rnd >= 0 or dt.kind == "b" or at.kind == "b":
            raise unsupported(ins.full)
        x = em.read(a, at)
        return [em.write(d, dt, f"{P}int_saturate<{dt.c}>({x})" if sat else f"static_cast<{dt.c}>({x})")]
    if dt.integer:  # float to integer: rounded (mandatory), clamped to the range, NaN to 0 or MININT
        if irnd is None or rnd >= 0 or dt.kind == "b":
            raise unsupported(ins.full, "a float-to-integer cvt needs .rni, .rzi, .rmi or .rpi")
        value = _exact_double(em, a, at, ftz)
        args = f"{value}, {INT_ROUNDING[irnd]}, {cbool(at.name == 'f64')}"
        return [em.write(d, dt, f"{P}float_to_int<{dt.c}>({args})")]
    if at.integer:  # integer to float: rounded (.rn when no modifier is given)
        if irnd or at.kind == "b":
            raise unsupported(ins.full)
        x = em.read(a, at)
        mode = max(rnd, 0)
        if dt.kind in HALF_FORMATS:
            fmt = HALF_FORMATS[dt.kind]
            value = _half_finish(fmt, f"{P}half_from_int({fmt}, {x}, {mode})", False, False, sat)
        else:
            value = f"{P}int_to_float<{dt.c}>({x}, {mode})"
            value = f"{P}sat({value})" if sat else value
        return [em.write(d, dt, value)]
    return [em.write(d, dt, _float_to_float(em, ins, a, dt, at, irnd, rnd, ftz, sat, relu, satfinite))]


def _float_to_float(em, ins, a, dt, at, irnd, rnd, ftz, sat, relu, satfinite) -> str:
    if irnd is not None:  # to an integral value of the same type
        if dt != at or rnd >= 0:
            raise unsupported(ins.full)
        if dt.kind in HALF_FORMATS:
            fmt = HALF_FORMATS[dt.kind]
            integral = f"{P}round_integral({P}half_value({fmt}, {em.read(a, at)}), {INT_ROUNDING[irnd]})"
            value = f"{P}half_from_double({fmt}, {integral}, 0)"
            return _half_finish(fmt, value, False, False, sat)
        x = em.read(a, at)
        if ftz:
            x = f"{P}ftz({x})"
        value = f"{P}round_integral<{dt.c}>({x}, {INT_ROUNDING[irnd]})"
        value = f"{P}finish<{dt.c}>({value}, {cbool(ftz)}, {cbool(sat)})"
        return value
    if dt.kind in HALF_FORMATS:
        fmt = HALF_FORMATS[dt.kind]
        value = f"{P}half_from_double({fmt}, {_exact_double(em, a, at, ftz)}, {max(rnd, 0)})"
        return _half_finish(fmt, value, relu, satfinite, sat)
    x = _exact_double(em, a, at, ftz)
    if dt.name == "f32" and at.name == "f64":
        value = f"{P}narrow_f32({x}, {max(rnd, 0)})"
    else:  # exact: to a wider type, or the same type (.ftz and .sat only)
        if rnd >= 0 and not (dt == at and rnd == 0):
            raise unsupported(ins.full)
        value = f"static_cast<{dt.c}>({x})"
    return f"{P}finish<{dt.c}>({value}, {cbool(ftz)}, {cbool(sat)})"
