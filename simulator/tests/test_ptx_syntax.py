"""Inline PTX in pure Python: the asm statement's splitting and the template's parsing, refusals
by name, and the supported subset."""

from __future__ import annotations

import struct

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
