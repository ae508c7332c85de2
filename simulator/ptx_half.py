"""The 16-bit and packed forms of PTX instructions: ``.f16``/``.bf16`` values and their
``.f16x2``/``.bf16x2`` pairs (add, sub, mul, fma, min, max, abs, neg, ex2/tanh ``.approx``,
``atom.add.noftz``) and the ``.s16x2``/``.u16x2`` integer pairs (add, min, max).

Each entry wraps the registry's entry for its opcode: an instruction whose type qualifier is one
of these goes to the translation here (calling ``runtime/sim_ptx_half.h``), any other to the
entry it replaced. Importing this module registers them; ``ptx.py`` does.
"""

from __future__ import annotations

from . import ptx_arith, ptx_memory_threads  # noqa: F401  (the entries this module wraps)
from .ptx_operands import (
    HALF_FORMATS,
    REGISTRY,
    TYPES,
    Emitter,
    Handler,
    Mods,
    P,
    PtxType,
    U,
    cbool,
    memory_order,
    operands,
)
from .ptx_syntax import Instr, PtxRefusal, unsupported

__all__: list[str] = []

_HALF_KINDS = ("f16", "bf16", "f16x2", "bf16x2")
_INT_PAIRS = ("s16x2", "u16x2")


def _dispatch(opcode: str, wanted: tuple[str, ...], handler: Handler) -> None:
    """Routes ``opcode`` with a type qualifier in ``wanted`` to ``handler``, others as before."""
    previous = REGISTRY[opcode]

    def route(ins: Instr, em: Emitter) -> list[str]:
        if any(m in wanted for m in ins.mods):
            return handler(ins, em)
        return previous(ins, em)

    REGISTRY[opcode] = route


def _half_type(m: Mods) -> PtxType:
    found = [name for name in m.rest if name in _HALF_KINDS]
    if len(found) != 1:
        raise unsupported(m.ins.full)
    m.rest.remove(found[0])
    return TYPES[found[0]]


def _format(t: PtxType) -> tuple[str, bool]:
    """The C++ format constant of a half type, and whether it is a pair."""
    return HALF_FORMATS[t.kind.removesuffix("x2")], t.kind.endswith("x2")


def _ftz(m: Mods, t: PtxType) -> bool:
    ftz = m.flag("ftz")
    if ftz and not t.kind.startswith("f16"):
        raise unsupported(m.ins.full)  # .bf16 instructions take no .ftz, except ex2's (required)
    return ftz


_ARITH = {"add": 0, "sub": 1, "mul": 2, "fma": 3}


def _arith(ins: Instr, em: Emitter) -> list[str]:
    """add/sub/mul{.rn}{.ftz}{.sat} and fma.rn{.ftz}{.sat|.relu} of halves and pairs."""
    m = Mods(ins)
    rnd = m.take("rn")
    t = _half_type(m)
    ftz = _ftz(m, t)
    sat = m.flag("sat")
    relu = ins.opcode == "fma" and m.flag("relu")
    m.done()
    if (ins.opcode == "fma" and rnd is None) or (sat and (relu or t.kind.startswith("bf16"))):
        raise unsupported(ins.full)
    ops = operands(ins, 4 if ins.opcode == "fma" else 3)
    fmt, pair = _format(t)
    args = [em.read(o, t) for o in ops[1:]] + ["0"] * (4 - len(ops))
    fn = "half2_op" if pair else "half_op"
    flags = ", ".join(cbool(f) for f in (ftz, sat, relu))
    return [em.write(ops[0], t, f"{P}{fn}({fmt}, {_ARITH[ins.opcode]}, {', '.join(args)}, {flags})")]


def _minmax(ins: Instr, em: Emitter) -> list[str]:
    m = Mods(ins)
    t = _half_type(m)
    ftz = _ftz(m, t)
    nan = m.flag("NaN")
    m.done()
    d, a, b = operands(ins, 3)
    fmt, pair = _format(t)
    fn = "half2_minmax" if pair else "half_minmax"
    flags = ", ".join(cbool(f) for f in (ins.opcode == "max", ftz, nan))
    return [em.write(d, t, f"{P}{fn}({fmt}, {em.read(a, t)}, {em.read(b, t)}, {flags})")]


def _abs_neg(ins: Instr, em: Emitter) -> list[str]:
    m = Mods(ins)
    t = _half_type(m)
    ftz = _ftz(m, t)
    m.done()
    d, a = operands(ins, 2)
    fmt, pair = _format(t)
    fn = f"half{'2' if pair else ''}_{ins.opcode}"
    return [em.write(d, t, f"{P}{fn}({fmt}, {em.read(a, t)}, {cbool(ftz)})")]


def _approx(ins: Instr, em: Emitter) -> list[str]:
    """ex2.approx.f16/.f16x2, ex2.approx.ftz.bf16/.bf16x2, tanh.approx of all four."""
    m = Mods(ins)
    approx = m.flag("approx")
    t = _half_type(m)
    ftz = m.flag("ftz")
    m.done()
    bf16 = t.kind.startswith("bf16")
    if not approx or (ins.opcode == "ex2" and ftz != bf16) or (ins.opcode == "tanh" and ftz):
        raise unsupported(ins.full)
    d, a = operands(ins, 2)
    fmt, pair = _format(t)
    fn = "half2_approx" if pair else "half_approx"
    kind = 0 if ins.opcode == "ex2" else 1
    return [em.write(d, t, f"{P}{fn}({fmt}, {kind}, {em.read(a, t)}, {cbool(ftz)})")]


def _atom_add(ins: Instr, em: Emitter) -> list[str]:
    """atom/red{.sem}{.scope}{.space}.add.noftz of a half or a pair."""
    m = Mods(ins)
    order = memory_order(m, ("relaxed", "acquire", "release", "acq_rel"))
    m.take("global", "shared", "shared::cta")
    m.drop("L2::")
    op, noftz = m.take("add"), m.flag("noftz")
    t = _half_type(m)
    m.done()
    if op is None or not noftz:
        raise unsupported(ins.full)
    ops = list(ins.operands)
    dest = ops.pop(0) if ins.opcode == "atom" else None
    if len(ops) not in (2, 3):  # a third is the L2::cache_hint policy
        raise PtxRefusal(f"inline PTX instruction '{ins.full}' has {len(ins.operands)} operands")
    fmt, pair = _format(t)
    bits = U[32] if pair else U[16]
    fn = "atom_half2_add" if pair else "atom_half_add"
    call = f"{P}{fn}({fmt}, {em.address(ops[0])}, {em.read(ops[1], t)}, {order})"
    return [f"(void){call};"] if dest is None else [em.write(dest, bits, call)]


_INT_OPS = {"add": 0, "min": 2, "max": 3}  # (PTX has no sub.s16x2)


def _int_pair(ins: Instr, em: Emitter) -> list[str]:
    """add/min/max{.relu}.s16x2 and .u16x2: each 16-bit half on its own."""
    m = Mods(ins)
    name = m.take(*_INT_PAIRS)
    relu = m.flag("relu")
    m.done()
    if relu and (name != "s16x2" or ins.opcode not in ("min", "max")):
        raise unsupported(ins.full)
    d, a, b = operands(ins, 3)
    args = f"{em.read(a, U[32])}, {em.read(b, U[32])}, {cbool(name == 's16x2')}, {cbool(relu)}"
    return [em.write(d, U[32], f"{P}int16x2_op({_INT_OPS[ins.opcode]}, {args})")]


for _op in ("add", "sub", "mul", "fma"):
    _dispatch(_op, _HALF_KINDS, _arith)
for _op in ("min", "max"):
    _dispatch(_op, _HALF_KINDS, _minmax)
for _op in ("abs", "neg"):
    _dispatch(_op, _HALF_KINDS, _abs_neg)
for _op in ("ex2", "tanh"):
    _dispatch(_op, _HALF_KINDS, _approx)
for _op in ("atom", "red"):
    _dispatch(_op, _HALF_KINDS, _atom_add)
for _op in _INT_OPS:
    _dispatch(_op, _INT_PAIRS, _int_pair)
