"""PTX integer and floating-point arithmetic and bit instructions (add through lop3, shf, the
``v*4`` video forms, shifts and logic), each registered into ``ptx_operands.REGISTRY``.
"""

from __future__ import annotations

from .ptx_operands import (
    TYPES,
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
    unsupported,
)

__all__: list[str] = []


def _int_or_refuse(ins: Instr, t: PtxType, kinds: str = "us") -> None:
    if t.kind not in kinds:
        raise unsupported(ins.full)


# ---- integer and floating-point arithmetic ----------------------------------------------------------
def _float_args(m: Mods, t: PtxType, ins: Instr) -> tuple[bool, bool]:
    ftz = m.flag("ftz")
    sat = m.flag("sat")
    if ftz and t.name != "f32":
        raise unsupported(ins.full)
    return ftz, sat


@instruction("add", "sub")
def _add_sub(ins: Instr, em: Emitter) -> list[str]:
    m = Mods(ins)
    cc = m.flag("cc")
    rnd = m.rounding()
    (t,) = m.types(1)
    d, a, b = operands(ins, 3)
    if t.kind == "f":
        ftz, sat = _float_args(m, t, ins)
        m.done()
        if cc:
            raise unsupported(ins.full)
        fn = "fadd" if ins.opcode == "add" else "fsub"
        flags = f"{rnd}, {cbool(ftz)}, {cbool(sat)}"
        return [em.write(d, t, f"{P}{fn}<{t.c}>({em.read(a, t)}, {em.read(b, t)}, {flags})")]
    sat = m.flag("sat")
    m.done()
    _int_or_refuse(ins, t)
    if rnd >= 0 or (sat and (t.name != "s32" or cc)) or (cc and t.bits < 32):
        raise unsupported(ins.full)
    x, y = em.read(a, t), em.read(b, t)
    if sat:
        return [em.write(d, t, f"{P}{ins.opcode}_sat({x}, {y})")]
    if cc:
        em.carry = True
        fn = "add_carry" if ins.opcode == "add" else "sub_borrow"
        return [em.write(d, t, f"{P}{fn}<{t.c}>({x}, {y}, 0u, &sim_ptx_cf)")]
    return [em.write(d, t, f"{P}{ins.opcode}<{t.c}>({x}, {y})")]


@instruction("addc", "subc")
def _addc_subc(ins: Instr, em: Emitter) -> list[str]:
    m = Mods(ins)
    cc = m.flag("cc")
    (t,) = m.types(1, ("u32", "s32", "u64", "s64"))
    m.done()
    d, a, b = operands(ins, 3)
    em.carry = True
    fn = "add_carry" if ins.opcode == "addc" else "sub_borrow"
    out = "&sim_ptx_cf" if cc else "nullptr"
    return [em.write(d, t, f"{P}{fn}<{t.c}>({em.read(a, t)}, {em.read(b, t)}, sim_ptx_cf, {out})")]


def _twice(t: PtxType) -> PtxType:
    return TYPES[f"{t.kind}{t.bits * 2}"]


@instruction("mul")
def _mul(ins: Instr, em: Emitter) -> list[str]:
    m = Mods(ins)
    rnd = m.rounding()
    mode = m.take("lo", "hi", "wide")
    (t,) = m.types(1)
    d, a, b = operands(ins, 3)
    if t.kind == "f":
        ftz, sat = _float_args(m, t, ins)
        m.done()
        if mode is not None:
            raise unsupported(ins.full)
        flags = f"{rnd}, {cbool(ftz)}, {cbool(sat)}"
        return [em.write(d, t, f"{P}fmul<{t.c}>({em.read(a, t)}, {em.read(b, t)}, {flags})")]
    m.done()
    _int_or_refuse(ins, t)
    if rnd >= 0 or mode is None or (mode == "wide" and t.bits not in (16, 32)):
        raise unsupported(ins.full)
    x, y = em.read(a, t), em.read(b, t)
    if mode == "wide":
        return [em.write(d, _twice(t), f"{P}mul_wide<{t.c}>({x}, {y})")]
    return [em.write(d, t, f"{P}mul_{mode}<{t.c}>({x}, {y})")]


@instruction("mul24", "mad24")
def _mul24(ins: Instr, em: Emitter) -> list[str]:
    m = Mods(ins)
    mode = m.take("lo", "hi")
    (t,) = m.types(1, ("u32", "s32"))
    m.done()
    if mode is None:
        raise unsupported(ins.full)
    ops = operands(ins, 4 if ins.opcode == "mad24" else 3)
    # The 48-bit product of the operands' low 24 bits (sign-extended for .s32): bits 0-31 (.lo)
    # or 16-47 (.hi).
    x, y = (f"static_cast<{P}s64>({P}bfe<{t.c}>({em.read(o, t)}, 0u, 24u))" for o in ops[1:3])
    product = f"static_cast<{P}u64>({x} * {y})"
    value = f"static_cast<{t.c}>({product} >> 16)" if mode == "hi" else f"static_cast<{t.c}>({product})"
    if ins.opcode == "mad24":
        value = f"{P}add<{t.c}>({value}, {em.read(ops[3], t)})"
    return [em.write(ops[0], t, value)]


@instruction("mad", "madc")
def _mad(ins: Instr, em: Emitter) -> list[str]:
    m = Mods(ins)
    rnd = m.rounding()
    mode = m.take("lo", "hi", "wide")
    cc = m.flag("cc")
    (t,) = m.types(1)
    d, a, b, c = operands(ins, 4)
    if t.kind == "f":
        ftz, sat = _float_args(m, t, ins)
        m.done()
        if mode is not None or cc or ins.opcode == "madc":
            raise unsupported(ins.full)
        # mad.f32 / mad.rnd.f64 are fma (an unrounded product), as on every target since sm_20.
        args = ", ".join(em.read(o, t) for o in (a, b, c))
        return [em.write(d, t, f"{P}ffma<{t.c}>({args}, {max(rnd, 0)}, {cbool(ftz)}, {cbool(sat)})")]
    sat = m.flag("sat")
    m.done()
    _int_or_refuse(ins, t)
    if (
        rnd >= 0
        or mode is None
        or (mode == "wide" and (t.bits not in (16, 32) or cc or ins.opcode == "madc"))
    ):
        raise unsupported(ins.full)
    if sat and (t.name != "s32" or mode != "hi" or cc or ins.opcode == "madc"):
        raise unsupported(ins.full)
    x, y = em.read(a, t), em.read(b, t)
    if mode == "wide":
        w = _twice(t)
        return [em.write(d, w, f"{P}add<{w.c}>({P}mul_wide<{t.c}>({x}, {y}), {em.read(c, w)})")]
    if sat:
        return [em.write(d, t, f"{P}mad_hi_sat({x}, {y}, {em.read(c, t)})")]
    product = f"{P}mul_{mode}<{t.c}>({x}, {y})"
    if ins.opcode == "madc" or cc:
        em.carry = True
        carry_in = "sim_ptx_cf" if ins.opcode == "madc" else "0u"
        carry_out = "&sim_ptx_cf" if cc else "nullptr"
        if t.bits < 32:
            raise unsupported(ins.full)
        return [em.write(d, t, f"{P}add_carry<{t.c}>({product}, {em.read(c, t)}, {carry_in}, {carry_out})")]
    return [em.write(d, t, f"{P}add<{t.c}>({product}, {em.read(c, t)})")]


@instruction("fma")
def _fma(ins: Instr, em: Emitter) -> list[str]:
    m = Mods(ins)
    rnd = m.rounding()
    (t,) = m.types(1, ("f32", "f64"))
    ftz, sat = _float_args(m, t, ins)
    m.done()
    if rnd < 0:
        raise unsupported(ins.full, "fma needs a rounding modifier")
    d, a, b, c = operands(ins, 4)
    args = ", ".join(em.read(o, t) for o in (a, b, c))
    return [em.write(d, t, f"{P}ffma<{t.c}>({args}, {rnd}, {cbool(ftz)}, {cbool(sat)})")]


@instruction("div", "rem")
def _div(ins: Instr, em: Emitter) -> list[str]:
    m = Mods(ins)
    rnd = m.rounding()
    approx = m.take("approx", "full")
    (t,) = m.types(1)
    d, a, b = operands(ins, 3)
    if t.kind == "f" and ins.opcode == "div":
        ftz, _ = _float_args(m, t, ins)
        m.done()
        x, y = em.read(a, t), em.read(b, t)
        if approx == "approx" and t.name == "f32" and rnd < 0:
            return [em.write(d, t, f"{P}fdiv_approx({x}, {y}, {cbool(ftz)})")]
        if (approx == "full" and t.name == "f32" and rnd < 0) or (approx is None and rnd >= 0):
            return [em.write(d, t, f"{P}fdiv<{t.c}>({x}, {y}, {max(rnd, 0)}, {cbool(ftz)})")]
        raise unsupported(ins.full)
    m.done()
    _int_or_refuse(ins, t)
    if rnd >= 0 or approx is not None or t.bits < 16:
        raise unsupported(ins.full)
    return [em.write(d, t, f"{P}{ins.opcode}<{t.c}>({em.read(a, t)}, {em.read(b, t)})")]


@instruction("rcp", "sqrt", "rsqrt", "ex2", "lg2", "sin", "cos", "tanh")
def _float_unary(ins: Instr, em: Emitter) -> list[str]:
    m = Mods(ins)
    rnd = m.rounding()
    approx = m.flag("approx")
    (t,) = m.types(1, ("f32", "f64"))
    ftz, _ = _float_args(m, t, ins)
    m.done()
    d, a = operands(ins, 2)
    x = em.read(a, t)
    if ins.opcode in ("rcp", "sqrt") and rnd >= 0 and not approx:
        fn = "frcp" if ins.opcode == "rcp" else "fsqrt"
        return [em.write(d, t, f"{P}{fn}<{t.c}>({x}, {rnd}, {cbool(ftz)})")]
    # .approx: the C library's function, within the ISA's error bounds.
    if not approx or rnd >= 0 or (t.name == "f64" and ins.opcode not in ("rcp", "rsqrt", "sqrt")):
        raise unsupported(ins.full)
    if ins.opcode in ("rcp", "sqrt"):
        fn = "frcp" if ins.opcode == "rcp" else "fsqrt"
        return [em.write(d, t, f"{P}{fn}<{t.c}>({x}, 0, {cbool(ftz)})")]
    fn = {"rsqrt": "frsqrt", "ex2": "fex2", "lg2": "flg2", "sin": "fsin", "cos": "fcos", "tanh": "ftanh"}
    return [em.write(d, t, f"{P}{fn[ins.opcode]}({x}, {cbool(ftz)})")]


@instruction("abs", "neg")
def _abs_neg(ins: Instr, em: Emitter) -> list[str]:
    m = Mods(ins)
    (t,) = m.types(1)
    d, a = operands(ins, 2)
    if t.kind == "f":
        ftz, _ = _float_args(m, t, ins)
        m.done()
        fn = "fabs_" if ins.opcode == "abs" else "fneg"
        return [em.write(d, t, f"{P}{fn}({em.read(a, t)}, {cbool(ftz)})")]
    m.done()
    _int_or_refuse(ins, t, "s")
    return [em.write(d, t, f"{P}{ins.opcode}<{t.c}>({em.read(a, t)})")]


@instruction("min", "max")
def _min_max(ins: Instr, em: Emitter) -> list[str]:
    m = Mods(ins)
    (t,) = m.types(1)
    d, a, b = operands(ins, 3)
    is_max = cbool(ins.opcode == "max")
    if t.kind == "f":
        ftz, _ = _float_args(m, t, ins)
        nan = m.flag("NaN")
        m.done()
        x, y = em.read(a, t), em.read(b, t)
        return [em.write(d, t, f"{P}fminmax<{t.c}>({x}, {y}, {is_max}, {cbool(ftz)}, {cbool(nan)})")]
    relu = m.flag("relu")
    m.done()
    _int_or_refuse(ins, t)
    if relu and t.name != "s32":
        raise unsupported(ins.full)
    value = f"{P}i{ins.opcode}<{t.c}>({em.read(a, t)}, {em.read(b, t)})"
    return [em.write(d, t, f"{P}imax<{t.c}>({value}, 0)" if relu else value)]


# ---- bits ----------------------------------------------------------------------------------------
@instruction("popc", "clz", "brev")
def _bit_count(ins: Instr, em: Emitter) -> list[str]:
    m = Mods(ins)
    (t,) = m.types(1, ("b32", "b64"))
    m.done()
    d, a = operands(ins, 2)
    x = em.read(a, t)
    if ins.opcode == "brev":
        return [em.write(d, t, f"{P}brev<{t.c}>({x})")]
    return [em.write(d, U[32], f"{P}{ins.opcode}<{t.c}>({x})")]


@instruction("bfind")
def _bfind(ins: Instr, em: Emitter) -> list[str]:
    m = Mods(ins)
    shiftamt = m.flag("shiftamt")
    (t,) = m.types(1, ("u32", "s32", "u64", "s64"))
    m.done()
    d, a = operands(ins, 2)
    return [em.write(d, U[32], f"{P}bfind<{t.c}>({em.read(a, t)}, {cbool(shiftamt)})")]


@instruction("bfe")
def _bfe(ins: Instr, em: Emitter) -> list[str]:
    m = Mods(ins)
    (t,) = m.types(1, ("u32", "s32", "u64", "s64"))
    m.done()
    d, a, b, c = operands(ins, 4)
    return [em.write(d, t, f"{P}bfe<{t.c}>({em.read(a, t)}, {em.read(b, U[32])}, {em.read(c, U[32])})")]


@instruction("bfi")
def _bfi(ins: Instr, em: Emitter) -> list[str]:
    m = Mods(ins)
    (t,) = m.types(1, ("b32", "b64"))
    m.done()
    f, a, b, c, d = operands(ins, 5)
    args = f"{em.read(a, t)}, {em.read(b, t)}, {em.read(c, U[32])}, {em.read(d, U[32])}"
    return [em.write(f, t, f"{P}bfi<{t.c}>({args})")]


PRMT_MODES = {None: 0, "f4e": 1, "b4e": 2, "rc8": 3, "ecl": 4, "ecr": 5, "rc16": 6}


@instruction("prmt")
def _prmt(ins: Instr, em: Emitter) -> list[str]:
    m = Mods(ins)
    mode = m.take(*[k for k in PRMT_MODES if k])
    m.types(1, ("b32",))
    m.done()
    d, a, b, c = operands(ins, 4)
    args = ", ".join(em.read(o, U[32]) for o in (a, b, c))
    return [em.write(d, U[32], f"{P}prmt({args}, {PRMT_MODES[mode]})")]


@instruction("lop3")
def _lop3(ins: Instr, em: Emitter) -> list[str]:
    m = Mods(ins)
    m.types(1, ("b32",))
    m.done()
    d, a, b, c, lut = operands(ins, 5)
    args = ", ".join(em.read(o, U[32]) for o in (a, b, c, lut))
    return [em.write(d, U[32], f"{P}lop3({args})")]


@instruction("shf")
def _shf(ins: Instr, em: Emitter) -> list[str]:
    m = Mods(ins)
    side = m.take("l", "r")
    mode = m.take("wrap", "clamp")
    m.types(1, ("b32",))
    m.done()
    if side is None or mode is None:
        raise unsupported(ins.full)
    d, a, b, c = operands(ins, 4)
    args = ", ".join(em.read(o, U[32]) for o in (a, b, c))
    return [em.write(d, U[32], f"{P}shf({cbool(side == 'l')}, {cbool(mode == 'wrap')}, {args})")]


_VIDEO4 = {"vadd4": 0, "vsub4": 1, "vavrg4": 2, "vabsdiff4": 3, "vmin4": 4, "vmax4": 5}


@instruction(*_VIDEO4)
def _video4(ins: Instr, em: Emitter) -> list[str]:
    # The SIMD video instructions with their default byte selectors and mask (a selector or mask
    # suffix on an operand is not read, and so refused).
    m = Mods(ins)
    add = m.flag("add")
    sat = m.flag("sat")
    dt, at, bt = m.types(3, ("u32", "s32"))
    m.done()
    if add and sat:
        raise unsupported(ins.full)
    d, a, b, c = operands(ins, 4)
    args = ", ".join(em.read(o, U[32]) for o in (a, b, c))
    flags = ", ".join(cbool(f) for f in (at.kind == "s", bt.kind == "s", dt.kind == "s", sat, add))
    return [em.write(d, U[32], f"{P}video4({_VIDEO4[ins.opcode]}, {args}, {flags})")]


@instruction("shl", "shr")
def _shift(ins: Instr, em: Emitter) -> list[str]:
    m = Mods(ins)
    (t,) = m.types(1)
    m.done()
    if not t.integer or t.bits < 16 or (ins.opcode == "shl" and t.kind != "b"):
        raise unsupported(ins.full)
    d, a, b = operands(ins, 3)
    return [em.write(d, t, f"{P}{ins.opcode}<{t.c}>({em.read(a, t)}, {em.read(b, U[32])})")]


@instruction("and", "or", "xor", "not", "cnot")
def _logic(ins: Instr, em: Emitter) -> list[str]:
    m = Mods(ins)
    (t,) = m.types(1)
    m.done()
    if (
        t.kind not in ("b", "pred")
        or (t.kind == "b" and t.bits < 16)
        or (ins.opcode == "cnot" and t.kind == "pred")
    ):
        raise unsupported(ins.full)
    unary = ins.opcode in ("not", "cnot")
    ops = operands(ins, 2 if unary else 3)
    x = [em.read(o, t) for o in ops[1:]]
    if ins.opcode == "not":
        value = f"!({x[0]})" if t.kind == "pred" else f"static_cast<{t.c}>(~{x[0]})"
    elif ins.opcode == "cnot":
        value = f"static_cast<{t.c}>({x[0]} == 0 ? 1 : 0)"
    else:
        op = {"and": "&", "or": "|", "xor": "^"}[ins.opcode]
        value = f"({x[0]} {op} {x[1]})" if t.kind == "pred" else f"static_cast<{t.c}>({x[0]} {op} {x[1]})"
    return [em.write(ops[0], t, value)]
