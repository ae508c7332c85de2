"""The PTX instructions the simulator translates: one entry per opcode family, each writing its
semantics once as C++ that calls the helpers of ``runtime/sim_ptx.h`` (namespace ``__sim::ptx``).

``Emitter`` turns operands into C++: a PTX register is an unsigned integer of its width (a
predicate a bool); an instruction reads it as its type and writes its result sign-extended for a
signed integer type and zero-extended otherwise, as the PTX ISA's relaxed type-checking rules for
``ld``, ``st`` and ``cvt`` say. An instruction or modifier without an entry here is refused by name.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass

from .ptx_syntax import (
    AsmStatement,
    Imm,
    Instr,
    Mem,
    Not,
    OpRef,
    Pair,
    PtxRefusal,
    Reg,
    Sink,
    Vec,
    unsupported,
)

__all__ = ["HALF_FORMATS", "REGISTRY", "TYPES", "Emitter", "c_string", "cbool", "memory_order", "operands"]

P = "::__sim::ptx::"


@dataclass(frozen=True)
class PtxType:
    """A PTX type: its name, width and kind (b, u, s, f, f16, bf16, f16x2, bf16x2, pred)."""

    name: str
    bits: int
    kind: str

    @property
    def c(self) -> str:
        """The C++ type an instruction of this type computes in (half types: their bits)."""
        if self.kind == "pred":
            return "bool"
        if self.kind == "f":
            return f"{P}f{self.bits}"
        return f"{P}{'s' if self.kind == 's' else 'u'}{self.bits}"

    @property
    def integer(self) -> bool:
        return self.kind in ("b", "u", "s")


TYPES = {
    **{f"{k}{n}": PtxType(f"{k}{n}", n, k) for k in "bus" for n in (8, 16, 32, 64)},
    "f32": PtxType("f32", 32, "f"),
    "f64": PtxType("f64", 64, "f"),
    "f16": PtxType("f16", 16, "f16"),
    "bf16": PtxType("bf16", 16, "bf16"),
    "f16x2": PtxType("f16x2", 32, "f16x2"),
    "bf16x2": PtxType("bf16x2", 32, "bf16x2"),
    "pred": PtxType("pred", 1, "pred"),
}
U = {n: TYPES[f"u{n}"] for n in (8, 16, 32, 64)}
PRED = TYPES["pred"]
# The C++ format constant of each half type (sim_ptx.h).
HALF_FORMATS = {"f16": f"{P}kF16", "bf16": f"{P}kBF16"}
ROUNDING = {"rn": 0, "rz": 1, "rm": 2, "rp": 3}
INT_ROUNDING = {"rni": 0, "rzi": 1, "rmi": 2, "rpi": 3}
# Constraint letter: (register type, the C++ value type an operand converts through).
CONSTRAINTS = {
    "h": ("u16", "u16"),
    "r": ("u32", "u32"),
    "l": ("u64", "u64"),
    "f": ("u32", "f32"),
    "d": ("u64", "f64"),
}
_WIDTH = {"u8": 8, "u16": 16, "u32": 32, "u64": 64, "bool": 1}
_COMPONENT = {"x": 0, "y": 1, "z": 2}
# Special registers: the helper that reads one, and its width.
SPECIAL = {
    "laneid": ("{P}laneid()", 32),
    "warpid": ("{P}warpid()", 32),
    "nwarpid": ("{P}u32(64)", 32),  # warps an sm_80 SM holds at once: 2048 threads / 32
    "smid": ("{P}smid()", 32),
    "nsmid": ("{P}nsmid()", 32),
    "clock": ("{P}clock_32()", 32),
    "clock_hi": ("{P}clock_hi()", 32),
    "clock64": ("{P}clock_64()", 64),
    "globaltimer": ("{P}globaltimer()", 64),
    "globaltimer_lo": ("{P}u32({P}globaltimer())", 32),
    "globaltimer_hi": ("{P}u32({P}globaltimer() >> 32)", 32),
    "dynamic_smem_size": ("{P}dynamic_smem_size()", 32),
    **{f"lanemask_{k}": (f"{{P}}lanemask_{k}()", 32) for k in ("eq", "le", "lt", "ge", "gt")},
    **{
        f"{r}.{c}": (f"{{P}}{r}({i})", 32)
        for r in ("tid", "ntid", "ctaid", "nctaid")
        for c, i in _COMPONENT.items()
    },
}


_STATEMENTS = itertools.count()


def _mangle(name: str) -> str:
    """A PTX name (``%r1``, ``$x``, ``_t``) as a C++ identifier part, one to one."""
    return "".join(ch if ch.isalnum() else f"_{ord(ch):02x}" for ch in name)


def c_string(text: str) -> str:
    """``text`` as a C++ string literal."""
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif 32 <= ord(ch) < 127:
            out.append(ch)
        else:
            out.extend(f"\\{b:03o}" for b in ch.encode())
    return '"' + "".join(out) + '"'


@dataclass
class RegInfo:
    """A C++ local standing for a PTX register."""

    cname: str
    rtype: str  # u8 u16 u32 u64 bool

    @property
    def bits(self) -> int:
        return _WIDTH[self.rtype]


class Emitter:
    """The C++ for one asm statement's operands and registers, and what the statement needs."""

    def __init__(self, stmt: AsmStatement, file: str, line: int) -> None:
        self.stmt = stmt
        self.where = f"{c_string(file)}, {line}"
        self.scopes: list[dict[str, RegInfo]] = []
        self.operand_regs: dict[int, RegInfo] = {}
        self.operand_consts: dict[int, str] = {}
        self.carry = False  # an instruction reads or writes the carry flag
        self.waits = False  # an instruction waits for other threads (barrier, warp operation, exit)
        self.temps = 0
        self.uid = next(_STATEMENTS)  # labels are unique per statement (several may share a function)

    # ---- registers ------------------------------------------------------------------------
    def declare(self, name: str, type_name: str) -> str:
        """A ``.reg`` declaration in the innermost scope: the C++ that declares its local."""
        t = TYPES.get(type_name)
        if t is None:
            raise unsupported(f".reg .{type_name}", "not a PTX register type")
        rtype = "bool" if t.kind == "pred" else f"u{t.bits}"
        cname = f"sim_ptx_r{len(self.scopes)}_{_mangle(name)}"
        self.scopes[-1][name] = RegInfo(cname, rtype)
        return f"{self.ctype(rtype)} {cname} = 0;"

    def ctype(self, rtype: str) -> str:
        return "bool" if rtype == "bool" else P + rtype

    def register(self, op) -> RegInfo | None:
        """The local a register operand names (None for an immediate or a special register)."""
        if isinstance(op, OpRef):
            if op.index >= len(self.stmt.operands):
                raise PtxRefusal(f"inline PTX names operand %{op.index}, which the statement does not have")
            return self.operand_regs.get(op.index)
        if isinstance(op, Reg):
            for scope in reversed(self.scopes):
                if op.name in scope:
                    return scope[op.name]
        return None

    def label(self, name: str) -> str:
        """The C++ label of PTX label ``name``."""
        return f"sim_ptx_L{self.uid}_{_mangle(name)}"

    def temp(self, ctype: str, expr: str) -> tuple[str, str]:
        """A fresh local holding ``expr``: (its name, its declaration)."""
        self.temps += 1
        name = f"sim_ptx_t{self.temps}"
        return name, f"const {ctype} {name} = {expr};"

    # ---- operands ---------------------------------------------------------------------------
    def read(self, op, t: PtxType) -> str:
        """C++ for operand ``op`` read as type ``t`` (an expression of ``t.c``)."""
        if isinstance(op, Not):
            if t.kind != "pred":
                raise PtxRefusal("inline PTX: '!' negates predicates only")
            return f"!({self.read(op.operand, t)})"
        if isinstance(op, Imm):
            return self.immediate(op, t)
        if isinstance(op, OpRef) and op.index in self.operand_consts:
            return f"static_cast<{t.c}>({self.operand_consts[op.index]})"
        info = self.register(op)
        if info is not None:
            if (info.rtype == "bool") != (t.kind == "pred"):
                raise PtxRefusal(
                    f"inline PTX reads a {'predicate' if info.rtype == 'bool' else 'register'} as .{t.name}"
                )
            if t.kind == "pred" or t.c == self.ctype(info.rtype):
                return info.cname
            return f"{P}get<{t.c}>({info.cname})"
        if isinstance(op, Reg):
            return f"static_cast<{t.c}>({self.special(op.name)})"
        if isinstance(op, Sink):
            raise PtxRefusal("inline PTX reads the sink '_'")
        raise PtxRefusal("inline PTX: this operand cannot be read here")

    def special(self, name: str) -> str:
        key = name[1:] if name.startswith("%") else name
        if key in SPECIAL:
            return SPECIAL[key][0].format(P=P)
        if name.startswith("%"):
            raise unsupported(name, "special register")
        raise PtxRefusal(f"inline PTX uses register '{name}', which it never declares")

    def immediate(self, imm: Imm, t: PtxType) -> str:
        if t.kind == "pred":
            return "true" if imm.value else "false"
        if imm.kind == "int":
            if t.kind == "f":
                return f"static_cast<{t.c}>({imm.value}.0)"
            if t.kind in ("f16", "bf16"):
                return f"{P}half_from_double({P}{'kF16' if t.kind == 'f16' else 'kBF16'}, {imm.value}.0, 0)"
            return f"static_cast<{t.c}>(0x{imm.value & ((1 << t.bits) - 1):x}ull)"
        bits32 = imm.kind == "f32bits"
        value = f"{P}f32_of(0x{imm.value:08x}u)" if bits32 else f"{P}f64_of(0x{imm.value:016x}ull)"
        if t.kind == "f":
            return f"static_cast<{t.c}>({value})"
        if t.kind in ("f16", "bf16"):
            return f"{P}half_from_double({P}{'kF16' if t.kind == 'f16' else 'kBF16'}, {value}, 0)"
        if t.kind == "b" and t.bits == (32 if bits32 else 64):
            return f"static_cast<{t.c}>(0x{imm.value:x}ull)"
        raise PtxRefusal(f"inline PTX: a floating-point immediate where .{t.name} is expected")

    def write(self, op, t: PtxType, value: str) -> str:
        """C++ that stores ``value`` (an expression of ``t.c``) into destination ``op``."""
        if isinstance(op, Sink):
            return f"(void)({value});"
        info = self.register(op)
        if info is None:
            if isinstance(op, OpRef):
                raise PtxRefusal(f"inline PTX writes operand %{op.index}, which is an input or an immediate")
            if isinstance(op, Reg) and (op.name[1:] if op.name.startswith("%") else op.name) in SPECIAL:
                raise PtxRefusal(f"inline PTX writes the special register '{op.name}'")
            raise PtxRefusal(
                f"inline PTX writes register '{getattr(op, 'name', op)}', which it never declares"
            )
        if info.rtype == "bool":
            if t.kind != "pred":
                raise PtxRefusal(f"inline PTX writes a .{t.name} result into a predicate")
            return f"{info.cname} = {value};"
        if t.kind == "pred":
            raise PtxRefusal("inline PTX writes a predicate into a register")
        if t.c == self.ctype(info.rtype):
            return f"{info.cname} = static_cast<{t.c}>({value});"
        return f"{info.cname} = {P}put<{self.ctype(info.rtype)}>(static_cast<{t.c}>({value}));"

    def address(self, mem) -> str:
        """C++ for a memory operand's generic address (a 64-bit value)."""
        if not isinstance(mem, Mem):
            raise PtxRefusal("inline PTX: expected a memory operand [address]")
        if mem.base is None:
            raise PtxRefusal(
                "inline PTX: an absolute address is not translated (addresses are host pointers here)"
            )
        info = self.register(mem.base)
        if info is not None and info.bits != 64:
            raise PtxRefusal(
                "inline PTX: a 32-bit address is not translated (addresses are 64-bit host pointers here; "
                'pass a pointer with an "l" constraint)'
            )
        base = self.read(mem.base, U[64])
        return base if mem.offset == 0 else f"({base} + static_cast<{P}u64>({mem.offset}ll))"


# ---- the registry ------------------------------------------------------------------------------
Handler = Callable[[Instr, Emitter], list[str]]
REGISTRY: dict[str, Handler] = {}


def instruction(*opcodes: str) -> Callable[[Handler], Handler]:
    """Registers a translation for ``opcodes``: it returns the C++ statements of one instruction."""

    def register(fn: Handler) -> Handler:
        for name in opcodes:
            REGISTRY[name] = fn
        return fn

    return register


class Mods:
    """An instruction's qualifiers, taken one by one; any left over refuse the instruction."""

    def __init__(self, ins: Instr) -> None:
        self.ins = ins
        self.rest = list(ins.mods)

    def flag(self, name: str) -> bool:
        if name in self.rest:
            self.rest.remove(name)
            return True
        return False

    def take(self, *names: str) -> str | None:
        for name in names:
            if self.flag(name):
                return name
        return None

    def drop(self, prefix: str) -> None:
        """Qualifiers that change no result here (cache hints and the like)."""
        self.rest = [m for m in self.rest if not m.startswith(prefix)]

    def types(self, count: int, allowed: tuple[str, ...] | None = None) -> list[PtxType]:
        found = [m for m in self.rest if m in TYPES]
        if len(found) != count or (allowed is not None and any(f not in allowed for f in found)):
            raise unsupported(self.ins.full)
        for f in found:
            self.rest.remove(f)
        return [TYPES[f] for f in found]

    def rounding(self) -> int:
        """A .rn/.rz/.rm/.rp qualifier's number, -1 when there is none."""
        name = self.take(*ROUNDING)
        return -1 if name is None else ROUNDING[name]

    def done(self) -> None:
        if self.rest:
            raise unsupported(self.ins.full)


def operands(ins: Instr, *counts: int) -> list:
    if len(ins.operands) not in counts:
        raise PtxRefusal(f"inline PTX instruction '{ins.full}' has {len(ins.operands)} operands")
    return ins.operands


def cbool(flag: bool) -> str:
    """A C++ bool literal."""
    return "true" if flag else "false"


def _int_or_refuse(ins: Instr, t: PtxType, kinds: str = "us") -> None:
    if t.kind not in kinds:
        raise unsupported(ins.full)


# ---- data movement -----------------------------------------------------------------------------
@instruction("mov")
def _mov(ins: Instr, em: Emitter) -> list[str]:
    m = Mods(ins)
    (t,) = m.types(1)
    m.done()
    d, a = operands(ins, 2)
    if isinstance(a, Vec) or isinstance(d, Vec):
        vec = a if isinstance(a, Vec) else d
        width = t.bits // len(vec.items)
        if (
            t.kind not in ("b", "u", "s", "f16x2", "bf16x2")
            or width not in (8, 16, 32)
            or width * len(vec.items) != t.bits
        ):
            raise unsupported(ins.full)
        part, whole = U[width], U[t.bits]
        if isinstance(a, Vec):  # pack: the first element is the lowest
            terms = [
                f"(static_cast<{whole.c}>({em.read(x, part)}) << {width * i})" for i, x in enumerate(a.items)
            ]
            return [em.write(d, whole, " | ".join(terms))]
        name, decl = em.temp(whole.c, em.read(a, whole))
        out = [decl]
        for i, x in enumerate(d.items):
            if not isinstance(x, Sink):
                out.append(em.write(x, part, f"static_cast<{part.c}>({name} >> {width * i})"))
        return out
    return [em.write(d, t, em.read(a, t))]


@instruction("cvta")
def _cvta(ins: Instr, em: Emitter) -> list[str]:
    m = Mods(ins)
    m.flag("to")
    m.take("global", "shared", "shared::cta", "local", "const", "param")
    (t,) = m.types(1, ("u64", "u32"))
    m.done()
    if t.bits != 64:
        raise unsupported(ins.full, "addresses are 64-bit host pointers here (use the .u64 form)")
    d, a = operands(ins, 2)
    return [em.write(d, t, em.read(a, t))]


def _state_space(m: Mods) -> None:
    m.take("global", "shared", "shared::cta", "local", "const")
    for hint in ("L1::", "L2::"):
        m.drop(hint)
    m.take("ca", "cg", "cs", "lu", "cv", "wb", "wt")
    m.flag("nc")


def memory_order(m: Mods, allowed: tuple[str, ...]) -> int:
    """The memory-order qualifier (0 none, 1 .volatile, 2 .relaxed, 3 .acquire, 4 .release,
    5 .acq_rel); its scope qualifier changes nothing here (one coherent machine)."""
    order = {"volatile": 1, "relaxed": 2, "acquire": 3, "release": 4, "acq_rel": 5}
    name = m.take(*[a for a in allowed if a in order])
    scope = m.take("cta", "gpu", "sys", "cluster")
    if scope is not None and name is None:
        raise unsupported(m.ins.full)
    return 0 if name is None else order[name]


def _vector(m: Mods) -> int:
    name = m.take("v2", "v4", "v8")
    return 1 if name is None else int(name[1:])


@instruction("ld", "ldu")
def _ld(ins: Instr, em: Emitter) -> list[str]:
    m = Mods(ins)
    order = memory_order(m, ("volatile", "relaxed", "acquire"))
    _state_space(m)
    count = _vector(m)
    (t,) = m.types(1)
    m.done()
    if t.kind == "pred":
        raise unsupported(ins.full)
    ops = operands(ins, 2, 3)  # a third operand is the .L2::cache_hint policy
    d, mem = ops[0], ops[1]
    items = d.items if isinstance(d, Vec) else (d,)
    if len(items) != count:
        raise PtxRefusal(f"inline PTX instruction '{ins.full}' has {len(items)} destinations")
    addr_name, decl = em.temp(f"{P}u64", em.address(mem))
    out = [decl]
    size = t.bits // 8
    for i, x in enumerate(items):
        loaded = f"{P}ld<{U[t.bits].c}>({addr_name} + {i * size}u, {order})"
        value = loaded if t.c == U[t.bits].c else f"{P}get<{t.c}>({loaded})"
        out.append(em.write(x, t, value))
    return out


@instruction("st")
def _st(ins: Instr, em: Emitter) -> list[str]:
    m = Mods(ins)
    order = memory_order(m, ("volatile", "relaxed", "release"))
    _state_space(m)
    count = _vector(m)
    (t,) = m.types(1)
    m.done()
    ops = operands(ins, 2, 3)
    mem, a = ops[0], ops[1]
    items = a.items if isinstance(a, Vec) else (a,)
    if len(items) != count or t.kind == "pred":
        raise unsupported(ins.full)
    addr_name, decl = em.temp(f"{P}u64", em.address(mem))
    out = [decl]
    size = t.bits // 8
    bits = U[t.bits].c
    for i, x in enumerate(items):
        value = em.read(x, t)
        if t.c != bits:
            value = f"{P}put<{bits}>({value})"
        out.append(f"{P}st<{bits}>({addr_name} + {i * size}u, {value}, {order});")
    return out


@instruction("prefetch", "prefetchu", "applypriority", "discard")
def _hint(ins: Instr, em: Emitter) -> list[str]:
    # Cache hints: nothing to do on a CPU (discard leaves the data as it was, one of the values
    # the ISA allows).
    for op in ins.operands:
        if isinstance(op, Mem):
            em.address(op)
    return []


@instruction("createpolicy")
def _createpolicy(ins: Instr, em: Emitter) -> list[str]:
    # A cache policy is an opaque 64-bit value that only cache hints read: any value will do.
    return [em.write(ins.operands[0], U[64], "0")]


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


# ---- atomics -------------------------------------------------------------------------------------
ATOM_OPS = {
    "add": 0,
    "min": 1,
    "max": 2,
    "inc": 3,
    "dec": 4,
    "and": 5,
    "or": 6,
    "xor": 7,
    "exch": 8,
    "cas": 9,
}


@instruction("atom", "red")
def _atom(ins: Instr, em: Emitter) -> list[str]:
    m = Mods(ins)
    order = memory_order(m, ("relaxed", "acquire", "release", "acq_rel"))
    m.take("global", "shared", "shared::cta")
    m.drop("L2::")
    op = m.take(*ATOM_OPS)
    (t,) = m.types(1)
    m.done()
    if op is None:
        raise unsupported(ins.full)
    if op in ("and", "or", "xor", "exch", "cas"):
        ok = t.kind == "b" and t.bits in ((16, 32, 64) if op == "cas" else (32, 64))
    elif op in ("inc", "dec"):
        ok = t.name == "u32"
    elif op == "add":
        ok = t.name in ("u32", "s32", "u64", "f32", "f64")
    else:
        ok = t.name in ("u32", "s32", "u64", "s64")
    if not ok:
        raise unsupported(ins.full)
    ops = list(ins.operands)
    dest = ops.pop(0) if ins.opcode == "atom" else None
    want = 3 if op == "cas" else 2
    if ins.opcode == "red" and op == "cas" or len(ops) != want:
        raise (
            unsupported(ins.full)
            if len(ops) == want
            else PtxRefusal(f"inline PTX instruction '{ins.full}' has {len(ins.operands)} operands")
        )
    addr = em.address(ops[0])
    ct = U[t.bits] if t.kind == "b" else t
    if op == "cas":
        value = f"{P}atom_cas<{ct.c}>({addr}, {em.read(ops[1], ct)}, {em.read(ops[2], ct)}, {order})"
    else:
        value = f"{P}atom<{ct.c}>({ATOM_OPS[op]}, {addr}, {em.read(ops[1], ct)}, {order})"
    if dest is None:
        return [f"(void){value};"]
    return [em.write(dest, ct, value)]


@instruction("membar", "fence")
def _fence(ins: Instr, em: Emitter) -> list[str]:
    m = Mods(ins)
    if ins.opcode == "membar":
        m.take("cta", "gl", "sys")
    elif "proxy" in m.rest:
        m.rest = []  # fence.proxy.*: one memory for every proxy here
    else:
        m.take("sc", "acq_rel")
        m.take("cta", "gpu", "sys", "cluster")
    m.done()
    operands(ins, 0)
    return [f"{P}fence();"]


# ---- threads: barriers, warps, sleep, trap, exit ------------------------------------------------------
@instruction("bar", "barrier")
def _bar(ins: Instr, em: Emitter) -> list[str]:
    m = Mods(ins)
    m.flag("cta")
    if m.flag("warp"):
        m.flag("sync")
        m.done()
        (mask,) = operands(ins, 1)
        em.waits = True
        return [f"{P}warp_sync({em.read(mask, U[32])}, {em.where});"]
    kind = m.take("sync", "red", "arrive")
    m.flag("aligned")
    if kind == "red":
        op = m.take("popc", "and", "or")
        (t,) = m.types(1, ("u32", "pred"))
        m.done()
        if op is None or (op == "popc") != (t.name == "u32"):
            raise unsupported(ins.full)
        ops = operands(ins, 3, 4)
        if len(ops) == 4:
            raise unsupported(ins.full, "a thread count (only the whole block's barrier 0 is run)")
        em.waits = True
        kind = ["popc", "and", "or"].index(op)
        call = f"{P}barrier_reduce({kind}, {em.read(ops[1], U[32])}, {em.read(ops[2], PRED)}, {em.where})"
        return [em.write(ops[0], t, call if t.name == "u32" else f"({call} != 0)")]
    m.done()
    if kind != "sync":
        raise unsupported(ins.full, "only barrier 0 of the whole block (bar.sync) is run")
    ops = operands(ins, 1, 2)
    em.waits = True
    if isinstance(ops[0], Imm) and ops[0].value == 0 and len(ops) == 1:
        return [f"::__sim::syncthreads({em.where});"]
    count = em.read(ops[1], U[32]) if len(ops) == 2 else "0u"
    return [f"{P}barrier({em.read(ops[0], U[32])}, {count}, {cbool(len(ops) == 2)}, {em.where});"]


_SHFL_MODES = {"up": 0, "down": 1, "bfly": 2, "idx": 3}


@instruction("shfl")
def _shfl(ins: Instr, em: Emitter) -> list[str]:
    m = Mods(ins)
    if not m.flag("sync"):
        raise unsupported(
            ins.full, "shfl without .sync is gone since sm_70: use shfl.sync with a member mask"
        )
    mode = m.take(*_SHFL_MODES)
    m.types(1, ("b32",))
    m.done()
    if mode is None:
        raise unsupported(ins.full)
    dest, a, b, c, mask = operands(ins, 5)
    em.waits = True
    d, p = (dest.value, dest.pred) if isinstance(dest, Pair) else (dest, None)
    args = ", ".join(em.read(o, U[32]) for o in (a, b, c, mask))
    if p is None:
        return [em.write(d, U[32], f"{P}shfl({_SHFL_MODES[mode]}, {args}, nullptr, {em.where})")]
    em.temps += 1
    in_range = f"sim_ptx_t{em.temps}"
    value, decl = em.temp(f"{P}u32", f"{P}shfl({_SHFL_MODES[mode]}, {args}, &{in_range}, {em.where})")
    return [f"bool {in_range} = false;", decl, em.write(d, U[32], value), em.write(p, PRED, in_range)]


@instruction("vote")
def _vote(ins: Instr, em: Emitter) -> list[str]:
    m = Mods(ins)
    if not m.flag("sync"):
        raise unsupported(
            ins.full, "vote without .sync is gone since sm_70: use vote.sync with a member mask"
        )
    mode = m.take("all", "any", "uni", "ballot")
    (t,) = m.types(1, ("pred", "b32"))
    m.done()
    if mode is None or (mode == "ballot") != (t.name == "b32"):
        raise unsupported(ins.full)
    d, a, mask = operands(ins, 3)
    em.waits = True
    call = f"{P}vote_{mode}({em.read(a, PRED)}, {em.read(mask, U[32])}, {em.where})"
    return [em.write(d, U[32] if mode == "ballot" else PRED, call)]


@instruction("match")
def _match(ins: Instr, em: Emitter) -> list[str]:
    m = Mods(ins)
    mode = m.take("any", "all")
    if not m.flag("sync") or mode is None:
        raise unsupported(ins.full)
    (t,) = m.types(1, ("b32", "b64"))
    m.done()
    dest, a, mask = operands(ins, 3)
    em.waits = True
    value = f"static_cast<{P}u64>({em.read(a, t)})"
    if mode == "any":
        if isinstance(dest, Pair):
            raise unsupported(ins.full)
        return [em.write(dest, U[32], f"{P}match_any({value}, {em.read(mask, U[32])}, {em.where})")]
    d, p = (dest.value, dest.pred) if isinstance(dest, Pair) else (dest, None)
    pname = f"sim_ptx_t{em.temps + 1}"
    em.temps += 1
    result, decl = em.temp(f"{P}u32", f"{P}match_all({value}, {em.read(mask, U[32])}, &{pname}, {em.where})")
    out = [f"bool {pname} = false;", decl, em.write(d, U[32], result)]
    if p is not None:
        out.append(em.write(p, PRED, pname))
    return out


_REDUX = {
    "add": "kReduceAdd",
    "min": "kReduceMin",
    "max": "kReduceMax",
    "and": "kReduceAnd",
    "or": "kReduceOr",
    "xor": "kReduceXor",
}


@instruction("redux")
def _redux(ins: Instr, em: Emitter) -> list[str]:
    m = Mods(ins)
    op = m.take(*_REDUX)
    if not m.flag("sync") or op is None:
        raise unsupported(ins.full)
    allowed = ("b32",) if op in ("and", "or", "xor") else ("u32", "s32")
    (t,) = m.types(1, allowed)
    m.done()
    d, a, mask = operands(ins, 3)
    em.waits = True
    args = f"::__sim::{_REDUX[op]}, {em.read(a, U[32])}, {cbool(t.name == 's32')}, {em.read(mask, U[32])}"
    return [em.write(d, U[32], f"{P}redux({args}, {em.where})")]


@instruction("activemask")
def _activemask(ins: Instr, em: Emitter) -> list[str]:
    m = Mods(ins)
    m.types(1, ("b32",))
    m.done()
    (d,) = operands(ins, 1)
    em.waits = True
    return [em.write(d, U[32], "::__sim::active_mask()")]


@instruction("nanosleep")
def _nanosleep(ins: Instr, em: Emitter) -> list[str]:
    m = Mods(ins)
    m.types(1, ("u32",))
    m.done()
    (t,) = operands(ins, 1)
    em.waits = True
    return [f"::__sim::nanosleep_thread({em.read(t, U[32])}, {em.where});"]


@instruction("trap")
def _trap(ins: Instr, em: Emitter) -> list[str]:
    Mods(ins).done()
    operands(ins, 0)
    return [f"::__sim::trap({em.where});"]


@instruction("exit")
def _exit(ins: Instr, em: Emitter) -> list[str]:
    Mods(ins).done()
    operands(ins, 0)
    em.waits = True
    return [f"{P}exit_thread({em.where});"]


@instruction("bra")
def _bra(ins: Instr, em: Emitter) -> list[str]:
    m = Mods(ins)
    m.flag("uni")
    m.done()
    (target,) = operands(ins, 1)
    if not isinstance(target, Reg):
        raise unsupported(ins.full, "the target must be a label")
    return [f"goto {em.label(target.name)};"]
