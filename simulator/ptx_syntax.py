"""Inline PTX as written: an ``asm(...)`` statement's tokens split into its template, operands and
clobbers, and the template parsed into PTX statements (``ptx.py`` translates them to C++).

The template grammar is the part of PTX that inline assembly uses: instructions separated by
``;``, ``{ }`` scopes, ``.reg`` declarations, labels, predicate guards (``@p``, ``@!p``), ``%N``
and ``%[name]`` operand references (``%%`` is a literal ``%``), immediates in decimal, hex,
octal, binary and float forms (``0f3F800000``, ``0d...``), vector operands ``{a, b}``, memory
operands ``[addr]`` / ``[addr+off]``, ``d|p`` destination pairs, ``!p`` and the ``_`` sink.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass, field

__all__ = [
    "AsmOperand",
    "AsmStatement",
    "Imm",
    "Instr",
    "Label",
    "Mem",
    "Not",
    "OpRef",
    "Pair",
    "PtxRefusal",
    "Reg",
    "RegDecl",
    "Scope",
    "Sink",
    "Vec",
    "parse_template",
    "split_asm",
    "unsupported",
]


class PtxRefusal(Exception):
    """An asm statement the simulator does not translate; ``str()`` is the one-line reason."""


def unsupported(name: str, why: str = "") -> PtxRefusal:
    """The refusal of the PTX instruction (or register, directive) ``name``."""
    tail = f": {why}" if why else ""
    return PtxRefusal(f"inline PTX instruction '{name}' is not supported by the simulator{tail}")


# ---- the asm statement -------------------------------------------------------------------------
@dataclass(frozen=True)
class AsmOperand:
    """One operand: its constraint (``"=r"``, ``"l"``, ``"n"``, ...) and C++ expression.

    ``first``/``last`` index the expression's first and last token in the statement's token list
    (-1 when the operand was not made from tokens)."""

    constraint: str
    expr: str
    first: int = -1
    last: int = -1
    name: str | None = None


@dataclass
class AsmStatement:
    """An asm statement's pieces, as GCC's extended asm defines them."""

    template: str
    outputs: list[AsmOperand] = field(default_factory=list)
    inputs: list[AsmOperand] = field(default_factory=list)
    clobbers: list[str] = field(default_factory=list)
    volatile: bool = False

    @property
    def operands(self) -> list[AsmOperand]:
        """Outputs then inputs: the numbering of ``%N``."""
        return self.outputs + self.inputs


_ASM_WORDS = {"asm", "__asm__", "__asm"}
_QUALIFIERS = {"volatile", "__volatile__", "__volatile", "inline", "__inline", "__inline__", "goto"}
_STRING = re.compile(r'(?:u8|u|U|L)?R?"', re.S)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v", "0": "\0"}


def _is_string(tok: str) -> bool:
    return bool(_STRING.match(tok)) and tok.endswith('"')


def decode_string(tok: str) -> str:
    """The characters of a C++ string literal token (prefixes, raw strings and escapes)."""
    m = re.match(r'(u8|u|U|L)?(R)?"', tok)
    body = tok[m.end() : -1]
    if m.group(2):  # R"delim( ... )delim"
        delim = body[: body.index("(")]
        return body[len(delim) + 1 : len(body) - len(delim) - 1]
    out, i = [], 0
    while i < len(body):
        ch = body[i]
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        nxt = body[i + 1]
        if nxt in "01234567":
            digits = re.match(r"[0-7]{1,3}", body[i + 1 :]).group(0)
            out.append(chr(int(digits, 8)))
            i += 1 + len(digits)
        elif nxt == "x":
            digits = re.match(r"[0-9a-fA-F]+", body[i + 2 :]).group(0)
            out.append(chr(int(digits, 16)))
            i += 2 + len(digits)
        else:
            out.append(_ESCAPES.get(nxt, nxt))
            i += 2
    return "".join(out)


def split_asm(tokens: list[str]) -> AsmStatement:
    """Split an asm statement's token spellings (libclang's, ``asm`` to the closing parenthesis)
    into its template (literals joined and unescaped), operands, clobbers and qualifiers."""
    if not tokens or tokens[0] not in _ASM_WORDS:
        raise PtxRefusal("cannot read this asm statement: it does not start with 'asm'")
    i, volatile = 1, False
    while i < len(tokens) and tokens[i] in _QUALIFIERS:
        if tokens[i] == "goto":
            raise PtxRefusal("inline PTX with 'asm goto' is not supported by the simulator")
        volatile = volatile or "volatile" in tokens[i]
        i += 1
    if i >= len(tokens) or tokens[i] != "(":
        raise PtxRefusal("cannot read this asm statement: expected '(' after 'asm'")
    # Colons at the top level (a '::' token is two of them), with each token's index.
    items: list[tuple[str, int]] = []
    depth, j = 0, i + 1
    while j < len(tokens):
        tok = tokens[j]
        if tok in "([{":
            depth += 1
        elif tok in ")]}":
            if depth == 0:
                break
            depth -= 1
        if tok == "::" and depth == 0:
            items += [(":", j), (":", j)]
        else:
            items.append((tok, j))
        j += 1
    if j >= len(tokens):
        raise PtxRefusal("cannot read this asm statement: no closing ')'")
    sections: list[list[tuple[str, int]]] = [[]]
    depth = 0
    for tok, k in items:
        if tok in "([{":
            depth += 1
        elif tok in ")]}":
            depth -= 1
        if tok == ":" and depth == 0:
            sections.append([])
        else:
            sections[-1].append((tok, k))
    if len(sections) > 4:
        raise PtxRefusal("inline PTX with 'asm goto' labels is not supported by the simulator")
    template_toks = sections[0]
    if not template_toks or not all(_is_string(t) for t, _ in template_toks):
        raise PtxRefusal("cannot read this asm statement: its template is not a string literal")
    stmt = AsmStatement("".join(decode_string(t) for t, _ in template_toks), volatile=volatile)
    if len(sections) > 1:
        stmt.outputs = _operands(sections[1], tokens)
    if len(sections) > 2:
        stmt.inputs = _operands(sections[2], tokens)
    if len(sections) > 3:
        stmt.clobbers = [decode_string(t) for t, _ in sections[3] if _is_string(t)]
    return stmt


def _operands(section: list[tuple[str, int]], tokens: list[str]) -> list[AsmOperand]:
    """``[name] "constraint" (expr)`` operands, separated by commas (a missing comma between two
    operands, which nvcc accepts, is accepted too)."""
    out, pos = [], 0
    while pos < len(section):
        tok, _ = section[pos]
        if tok == ",":
            pos += 1
            continue
        name = None
        if tok == "[":
            name = section[pos + 1][0]
            pos += 3
        constraint = ""
        while pos < len(section) and _is_string(section[pos][0]):
            constraint += decode_string(section[pos][0])
            pos += 1
        if not constraint or pos >= len(section) or section[pos][0] != "(":
            raise PtxRefusal('cannot read this asm statement\'s operands: expected "constraint"(expression)')
        depth, start = 0, pos
        while pos < len(section):
            depth += {"(": 1, ")": -1}.get(section[pos][0], 0)
            pos += 1
            if depth == 0:
                break
        first, last = section[start][1] + 1, section[pos - 1][1] - 1
        if last < first:
            raise PtxRefusal("cannot read this asm statement's operands: an empty expression")
        out.append(AsmOperand(constraint, " ".join(tokens[first : last + 1]), first, last, name))
    return out


# ---- the template ------------------------------------------------------------------------------
@dataclass(frozen=True)
class OpRef:
    """``%N``: the statement's operand N."""

    index: int


@dataclass(frozen=True)
class Reg:
    """A register by name: one the template declares, or a special register (``%laneid``)."""

    name: str


@dataclass(frozen=True)
class Imm:
    """An immediate: kind ``int``, or ``f32bits``/``f64bits``, whose value is a bit pattern (the
    ``0f``/``0d`` forms, and a decimal floating-point literal as its double)."""

    value: int | float
    kind: str


@dataclass(frozen=True)
class Vec:
    items: tuple


@dataclass(frozen=True)
class Mem:
    """``[base+offset]`` (base None for an absolute address)."""

    base: object
    offset: int


@dataclass(frozen=True)
class Pair:
    """``d|p``: a destination and its predicate."""

    value: object
    pred: object


@dataclass(frozen=True)
class Not:
    operand: object


@dataclass(frozen=True)
class Sink:
    pass


@dataclass
class Instr:
    """One instruction: ``opcode`` (before the first dot), ``mods`` (the dotted qualifiers, in
    order), its operands and its guard (register, negated)."""

    opcode: str
    mods: list[str]
    operands: list
    guard: tuple | None = None

    @property
    def full(self) -> str:
        return ".".join([self.opcode, *self.mods])


@dataclass
class RegDecl:
    """``.reg .TYPE a, b<N>, ...``: the names (``b<N>`` expanded) and the type."""

    type: str
    names: list[str]


@dataclass
class Label:
    name: str


@dataclass
class Scope:
    """A ``{ ... }`` block (the template itself is the outermost one)."""

    body: list = field(default_factory=list)


_TOKEN = re.compile(
    r"""
    (?P<space>\s+|//[^\n]*|/\*.*?\*/)
  | %(?P<opref>\d+)
  | %\[(?P<opname>\w+)\]
  | (?P<num>0[fF][0-9a-fA-F]{8}(?![\w.])|0[dD][0-9a-fA-F]{16}(?![\w.])
        |0[xX][0-9a-fA-F]+U?|0[bB][01]+U?
        |\d+\.\d*(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+|\d+U?)
  | (?P<word>%?%?[A-Za-z_$][\w$]*(?:\.[\w]+(?:::[\w]+)*)*)
  | (?P<dot>\.[A-Za-z_][\w]*(?:::[\w]+)*)
  | (?P<punct>[{}\[\](),;|!@+\-:<>])
    """,
    re.X | re.S,
)


def _tokens(template: str, names: dict[str, int]) -> list:
    out, pos = [], 0
    while pos < len(template):
        m = _TOKEN.match(template, pos)
        if m is None:
            raise PtxRefusal(f"cannot read this inline PTX near {template[pos : pos + 20]!r}")
        pos = m.end()
        kind = m.lastgroup
        if kind == "space":
            continue
        if kind == "opref":
            out.append(OpRef(int(m.group("opref"))))
        elif kind == "opname":
            if m.group("opname") not in names:
                raise PtxRefusal(f"inline PTX names an operand '%[{m.group('opname')}]' the statement lacks")
            out.append(OpRef(names[m.group("opname")]))
        elif kind == "num":
            out.append(_number(m.group("num")))
        elif kind == "word":
            word = m.group("word")
            out.append(("word", word[1:] if word.startswith("%%") else word))
        else:
            out.append((kind, m.group(kind)))
    return out


def _number(text: str) -> Imm:
    if text[:2] in ("0f", "0F"):
        return Imm(int(text[2:], 16), "f32bits")
    if text[:2] in ("0d", "0D"):
        return Imm(int(text[2:], 16), "f64bits")
    t = text.rstrip("U")
    if t[:2] in ("0x", "0X"):
        return Imm(int(t[2:], 16), "int")
    if t[:2] in ("0b", "0B"):
        return Imm(int(t[2:], 2), "int")
    if re.fullmatch(r"\d+", t):
        return Imm(int(t, 8) if len(t) > 1 and t[0] == "0" else int(t), "int")
    return Imm(struct.unpack("<Q", struct.pack("<d", float(t)))[0], "f64bits")


def parse_template(template: str, operand_names: dict[str, int] | None = None) -> Scope:
    """The template's statements as a tree of ``Scope``, ``RegDecl``, ``Label`` and ``Instr``."""
    toks = _tokens(template, operand_names or {})
    root = Scope()
    stack = [root]
    stmt: list = []
    for tok in toks:
        if tok == ("punct", "{") and not stmt:
            scope = Scope()
            stack[-1].body.append(scope)
            stack.append(scope)
        elif tok == ("punct", "}") and not stmt:
            if len(stack) == 1:
                raise PtxRefusal("cannot read this inline PTX: a '}' closes no '{'")
            stack.pop()
        elif tok == ("punct", ";"):
            if stmt:
                stack[-1].body.append(_statement(stmt))
            stmt = []
        elif tok == ("punct", ":") and len(stmt) == 1 and isinstance(stmt[0], tuple) and stmt[0][0] == "word":
            stack[-1].body.append(Label(stmt[0][1]))
            stmt = []
        else:
            stmt.append(tok)
    if stmt:
        stack[-1].body.append(_statement(stmt))
    if len(stack) != 1:
        raise PtxRefusal("cannot read this inline PTX: a '{' is never closed")
    return root


def _statement(toks: list):
    head = toks[0]
    if isinstance(head, tuple) and head[0] == "dot":
        if head[1] != ".reg":
            raise unsupported(head[1], "only .reg declarations are translated")
        return _reg_decl(toks)
    guard = None
    if head == ("punct", "@"):
        negated = toks[1] == ("punct", "!")
        reg = toks[2 if negated else 1]
        guard = (_operand([reg]), negated)
        toks = toks[3 if negated else 2 :]
    if not toks or not (isinstance(toks[0], tuple) and toks[0][0] == "word"):
        raise PtxRefusal("cannot read this inline PTX: expected an instruction")
    opcode, *mods = toks[0][1].split(".")
    groups, depth, cur = [], 0, []
    for tok in toks[1:]:
        if tok in (("punct", "{"), ("punct", "[")):
            depth += 1
        elif tok in (("punct", "}"), ("punct", "]")):
            depth -= 1
        if tok == ("punct", ",") and depth == 0:
            groups.append(cur)
            cur = []
        else:
            cur.append(tok)
    if cur:
        groups.append(cur)
    return Instr(opcode, mods, [_operand(g) for g in groups], guard)


def _reg_decl(toks: list) -> RegDecl:
    rest = toks[1:]
    types = []
    while rest and isinstance(rest[0], tuple) and rest[0][0] == "dot":
        types.append(rest.pop(0)[1][1:])
    if len(types) != 1:
        raise unsupported(".reg ." + " .".join(types), "declare one scalar type per .reg")
    names, k = [], 0
    while k < len(rest):
        tok = rest[k]
        if not (isinstance(tok, tuple) and tok[0] == "word"):
            raise PtxRefusal("cannot read this inline PTX .reg declaration")
        if rest[k + 1 : k + 2] == [("punct", "<")]:
            count = rest[k + 2] if k + 2 < len(rest) else None
            if not isinstance(count, Imm) or count.kind != "int" or rest[k + 3 : k + 4] != [("punct", ">")]:
                raise PtxRefusal("cannot read this inline PTX .reg declaration (expected name<N>)")
            names += [f"{tok[1]}{n}" for n in range(count.value)]
            k += 4
        else:
            names.append(tok[1])
            k += 1
        if k < len(rest) and rest[k] == ("punct", ","):
            k += 1
    return RegDecl(types[0], names)


def _operand(toks: list):
    if not toks:
        raise PtxRefusal("cannot read this inline PTX: an empty operand")
    first = toks[0]
    if first == ("punct", "{"):
        if toks[-1] != ("punct", "}"):
            raise PtxRefusal("cannot read this inline PTX vector operand")
        items, cur = [], []
        for tok in toks[1:-1]:
            if tok == ("punct", ","):
                items.append(_operand(cur))
                cur = []
            else:
                cur.append(tok)
        items.append(_operand(cur))
        return Vec(tuple(items))
    if first == ("punct", "["):
        if toks[-1] != ("punct", "]"):
            raise PtxRefusal("cannot read this inline PTX address operand")
        return _address(toks[1:-1])
    if first == ("punct", "!"):
        return Not(_operand(toks[1:]))
    if first == ("punct", "-") and len(toks) == 2 and isinstance(toks[1], Imm):
        imm = toks[1]
        if imm.kind == "int":
            return Imm(-imm.value, "int")
        sign = 1 << 31 if imm.kind == "f32bits" else 1 << 63
        return Imm(imm.value ^ sign, imm.kind)
    if len(toks) == 3 and toks[1] == ("punct", "|"):
        return Pair(_operand(toks[:1]), _operand(toks[2:]))
    if len(toks) != 1:
        raise PtxRefusal("cannot read this inline PTX operand (constant expressions are not translated)")
    if isinstance(first, (OpRef, Imm)):
        return first
    if first[0] == "word":
        if first[1] == "_":
            return Sink()
        if first[1] == "WARP_SZ":
            return Imm(32, "int")
        return Reg(first[1])
    raise PtxRefusal(f"cannot read this inline PTX operand {first[1]!r}")


def _address(toks: list) -> Mem:
    if len(toks) == 1 and isinstance(toks[0], Imm):
        return Mem(None, toks[0].value)
    base = _operand(toks[:1])
    offset = 0
    if len(toks) == 3 and toks[1] in (("punct", "+"), ("punct", "-")) and isinstance(toks[2], Imm):
        offset = toks[2].value if toks[1][1] == "+" else -toks[2].value
    elif len(toks) != 1:
        raise PtxRefusal("cannot read this inline PTX address (expected [reg], [reg+imm] or [reg-imm])")
    return Mem(base, offset)
