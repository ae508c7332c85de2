"""The operand and type layer of the PTX translation: PTX types, the ``Emitter`` that turns
operands into C++, instruction qualifiers (``Mods``), and the one ``REGISTRY`` of opcode families
that ``ptx_arith``, ``ptx_convert``, ``ptx_memory_threads`` and ``ptx_half`` fill through
``instruction``. Each family writes its semantics once as C++ that calls the helpers of
``runtime/sim_ptx.h`` (namespace ``__sim::ptx``).

``Emitter`` turns operands into C++: a PTX register is an unsigned integer of its width (a
predicate a bool); an instruction reads it as its type and writes its result sign-extended for a
signed integer type and zero-extended otherwise, as the PTX ISA's relaxed type-checking rules for
``ld``, ``st`` and ``cvt`` say. An instruction or modifier without an entry in ``REGISTRY`` is
refused by name.
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
    PtxRefusal,
    Reg,
    Sink,
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


def restart_statement_numbers() -> None:
    """Number the next translation's statements from 0 again, so that a source translates to the
    same text whatever the process translated before it (``transform.translate_preprocessed``)."""
    global _STATEMENTS
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


def memory_order(m: Mods, allowed: tuple[str, ...]) -> int:
    """The memory-order qualifier (0 none, 1 .volatile, 2 .relaxed, 3 .acquire, 4 .release,
    5 .acq_rel); its scope qualifier changes nothing here (one coherent machine)."""
    order = {"volatile": 1, "relaxed": 2, "acquire": 3, "release": 4, "acq_rel": 5}
    name = m.take(*[a for a in allowed if a in order])
    scope = m.take("cta", "gpu", "sys", "cluster")
    if scope is not None and name is None:
        raise unsupported(m.ins.full)
    return 0 if name is None else order[name]
