"""Inline PTX in device code translated to C++: ``asm(...)`` statements become blocks of C++ that
compute what the PTX ISA defines, through the helpers of ``runtime/sim_ptx.h``.

The front end hands ``split_asm`` the statement's tokens and ``translate`` the pieces; an
instruction, modifier or operand form outside the supported subset raises ``PtxRefusal``, whose
text names it (``inline PTX instruction 'vabsdiff4.u32.u32.u32.add' is not supported by the
simulator``). The supported subset is ``ptx_operands.REGISTRY``; docs/supported.md lists it.
"""

from __future__ import annotations

from dataclasses import dataclass

# Importing the opcode families registers them (ptx_half wraps some of the others' entries).
from . import ptx_arith, ptx_convert, ptx_half, ptx_memory_threads  # noqa: F401
from .ptx_operands import CONSTRAINTS, PRED, REGISTRY, Emitter, P, RegInfo
from .ptx_syntax import (
    AsmOperand,
    AsmStatement,
    Instr,
    Label,
    PtxRefusal,
    RegDecl,
    Scope,
    parse_template,
    split_asm,
    unsupported,
)

__all__ = [
    "AsmOperand",
    "AsmStatement",
    "PtxRefusal",
    "Translation",
    "split_asm",
    "supported_opcodes",
    "translate",
]


@dataclass
class Translation:
    """An asm statement's C++: ``parts`` are text and, where an operand's C++ expression goes,
    its index (outputs first, as ``%N`` counts); ``waits`` says whether it can wait for other
    threads (a barrier, a warp operation, ``nanosleep``, ``exit``)."""

    parts: list
    waits: bool
    operands: list[AsmOperand]

    @property
    def code(self) -> str:
        """The C++ with each operand's expression text in place (one ``do { ... } while (0)``)."""
        return "".join(p if isinstance(p, str) else self.operands[p].expr for p in self.parts)


def supported_opcodes() -> list[str]:
    """The PTX opcodes the simulator translates."""
    return sorted(REGISTRY)


def _constraint(op: AsmOperand) -> str:
    letters = op.constraint.lstrip("=+&").replace("&", "")
    if letters in CONSTRAINTS or letters in ("n", "i") or letters.isdigit():
        return letters
    raise PtxRefusal(f"inline PTX operand constraint '{op.constraint}' is not supported by the simulator")


def translate(stmt: AsmStatement, file: str, line: int) -> Translation:
    """C++ with the effect of ``stmt`` (``file``/``line``: the program's, for warp operations,
    barriers and traps to report)."""
    em = Emitter(stmt, file, line)
    head: list = []
    tail: list = []
    for i, op in enumerate(stmt.outputs):
        letters = _constraint(op)
        if letters not in CONSTRAINTS:
            raise PtxRefusal(
                f"inline PTX output constraint '{op.constraint}' is not supported by the simulator"
            )
        rtype, vtype = CONSTRAINTS[letters]
        em.operand_regs[i] = RegInfo(f"sim_ptx_o{i}", rtype)
        head += [f"auto&& sim_ptx_e{i} = (", i, "); "]
        init = f"{P}bind<{P}{rtype}, {P}{vtype}>(sim_ptx_e{i})" if op.constraint.startswith("+") else "0"
        head.append(f"{P}{rtype} sim_ptx_o{i} = {init}; ")
        tail.append(f"{P}store<{P}{vtype}>(sim_ptx_e{i}, sim_ptx_o{i}); ")
    for k, op in enumerate(stmt.inputs):
        i = len(stmt.outputs) + k
        letters = _constraint(op)
        if letters.isdigit():  # the same register as output N, which starts with this value
            tied = int(letters)
            if tied >= len(stmt.outputs):
                raise PtxRefusal(f"inline PTX input constraint '{op.constraint}' names no output")
            em.operand_regs[i] = em.operand_regs[tied]
            rtype, vtype = CONSTRAINTS[_constraint(stmt.outputs[tied])]
            head += [f"sim_ptx_o{tied} = {P}bind<{P}{rtype}, {P}{vtype}>((", i, ")); "]
        elif letters in ("n", "i"):
            em.operand_consts[i] = f"sim_ptx_o{i}"
            head += [f"const auto sim_ptx_o{i} = (", i, "); "]
            tail.append(f"(void)sim_ptx_o{i}; ")
        else:
            rtype, vtype = CONSTRAINTS[letters]
            em.operand_regs[i] = RegInfo(f"sim_ptx_o{i}", rtype)
            head += [f"{P}{rtype} sim_ptx_o{i} = {P}bind<{P}{rtype}, {P}{vtype}>((", i, ")); "]
            tail.append(f"(void)sim_ptx_o{i}; ")
    names = {op.name: i for i, op in enumerate(stmt.operands) if op.name}
    body = _scope(parse_template(stmt.template, names), em)
    if em.carry:  # the condition code's carry flag: it lives only as long as the statement
        head.append(f"{P}u32 sim_ptx_cf = 0; ")
    if "memory" in stmt.clobbers:  # the compiler may keep no memory value across the statement
        head.append(f"{P}compiler_fence(); ")
    parts = ["do { ", *head, " ".join(body), " ", *tail, "} while (0)"]
    return Translation(parts, em.waits, stmt.operands)


def _scope(scope: Scope, em: Emitter) -> list[str]:
    """C++ for a PTX scope: its registers first (a branch never skips a declaration), then its
    statements in order."""
    em.scopes.append({})
    out = [
        em.declare(name, node.type) for node in scope.body if isinstance(node, RegDecl) for name in node.names
    ]
    for node in scope.body:
        if isinstance(node, Scope):
            out.append("{ " + " ".join(_scope(node, em)) + " }")
        elif isinstance(node, Label):
            out.append(f"{em.label(node.name)}:;")
        elif isinstance(node, Instr):
            out.append(_instruction(node, em))
    em.scopes.pop()
    return out


def _instruction(ins: Instr, em: Emitter) -> str:
    handler = REGISTRY.get(ins.opcode)
    if handler is None:
        raise unsupported(ins.full)
    body = " ".join(handler(ins, em))
    if ins.guard is None:
        return "{ " + body + " }"
    cond = em.read(ins.guard[0], PRED)
    return f"if ({'!' if ins.guard[1] else ''}({cond})) {{ {body} }}"
