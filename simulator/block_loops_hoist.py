"""memcheck: block-loop regions whose checks can be made once per block, before the thread loop.

A memcheck build checks every access of a region's loop (AddressSanitizer) and every operation
UBSan watches, thread by thread, which keeps the loop scalar and costs most of its time. For a
region whose every access is an element of a ``__shared__`` array of constant extents or
``p[i]`` through a pointer parameter the kernel never assigns, and whose integer arithmetic is
``+``, ``-`` and ``*`` of literals, block-uniform values (parameters, block variables,
``blockIdx``/``blockDim``/``gridDim``), members of ``threadIdx`` (or locals initialised to one),
locals each thread computes from those (``const int row = blockIdx.y * TILE + ty;``) and counters
of the region's own loops from a literal to a literal, the front end writes a test of the block's
values (``runtime/block_loops_hoist.h``): each integer expression gets its range over the threads the
loop runs (``index_span``: a member of ``threadIdx`` from 0 to the block's extent less one, or to
the prefix bound less one where the loop runs only the threads of a row below it), every
operation and conversion on the way must keep its value in its type (no signed overflow, no
unsigned wrap), each shared subscript must lie within its extent, and each global range must be
addressable to AddressSanitizer (``__asan_region_is_poisoned`` over the first to the last
element's bytes) from a pointer aligned for its type. Where the test passes, no check of the
region can fire for any of the block's threads, and the region runs as a copy of itself compiled
without ASan's and UBSan's checks (``for_each_unchecked_thread``), in the same order (the
fibers'). Where it fails, the instrumented loop runs as before, so that a finding is raised by the
same thread's own access at the same line. The ranges are an interval over the whole box of
threads, conditions left out: wider than what the threads touch, never narrower.

What the region may contain is a short list; anything else keeps it instrumented: compound
statements, ``if`` (with or without ``else``) whose condition compares such values, a ``for``
that counts an ``int`` by one from a literal to a literal and writes it nowhere else, scalar
declarations, expression statements that assign a ``float``/``double`` local or an element
(``=`` for any scalar, ``+=`` and the like for floating types), floating arithmetic (GCC's
``-fsanitize=undefined`` checks no floating operation), conversions to a floating type, and reads
of ``int``/``unsigned``/``float``/``double`` locals, parameters and elements. Calls, pointers
other than a parameter's subscript, references, ``/``, ``%``, shifts and members other than the
built-in indices' are refused.
"""

from __future__ import annotations

import re

from .block_loops_analysis import KernelAnalysis, Region
from .block_loops_cells import (
    INDEX_LIMITS,
    _extents,
    _local,
    _thread_member,
    operands,
    subscripted,
    type_kind,
)
from .block_loops_index import OPERATIONS, IndexWalk
from .block_loops_simd import _COUNTED
from .block_loops_threads import bare

__all__ = ["unchecked_guard", "unchecked_parts"]

# Values a region may read, assign or compare: no load of them is checked but ASan's.
_VALUES = frozenset({"INT", "UINT", "FLOAT", "DOUBLE"})
_FLOATS = frozenset({"FLOAT", "DOUBLE"})
_COMPARES = frozenset({"<", "<=", ">", ">=", "==", "!="})
_LOGICAL = frozenset({"&&", "||"})
_FLOAT_OPS = frozenset({"+", "-", "*", "/"})
_ASSIGN = frozenset({"=", "+=", "-=", "*=", "/="})


class _Region:
    """The walk of one region: its subscripts' ranges as C++ text, or a refusal (``ok`` false)."""

    def __init__(self, k: KernelAnalysis, below: list) -> None:
        self.k = k
        self.counters: dict[int, tuple[int, int]] = {}  # a region loop's counter -> its first and last value
        self.checks: list[list] = []  # one per subscript: parts of a C++ bool
        self.seen: set[str] = set()  # the checks' text, each made once
        # The ranges of the region's integer expressions (``below``: the C++ text of the loop's
        # prefix bound, 2147483647: none).
        self.spans = _Spans(k, below, self.counters)

    # ---- statements ---------------------------------------------------------------------------
    def stmt(self, node) -> bool:
        """Whether statement ``node`` is of the short list (its subscripts recorded)."""
        kind = node.kind.name
        children = list(node.get_children())
        if kind == "NULL_STMT":
            return True
        if kind == "COMPOUND_STMT" or (kind == "UNEXPOSED_STMT" and len(children) == 1):
            return all(self.stmt(ch) for ch in children)
        if kind == "IF_STMT":
            branches = children[1:]
            return (
                len(children) in (2, 3) and self.cond(children[0]) and all(self.stmt(ch) for ch in branches)
            )
        if kind == "FOR_STMT":
            return self.loop(node, children)
        if kind == "DECL_STMT":
            return all(self.declaration(ch) for ch in children)
        return self.effect(node)

    def declaration(self, var) -> bool:
        """A scalar local (not a reference), its initializer a value."""
        if var.kind.name != "VAR_DECL" or not _local(self.k, var) or type_kind(var) not in _VALUES:
            return False
        inits = operands(var)
        return len(inits) <= 1 and all(self.value(ch) for ch in inits)

    def loop(self, node, children) -> bool:
        """A ``for`` counting a local by one from a literal to a literal, written only by its header."""
        tu, k = self.k.tu, self.k
        start, end = tu.rng(node)
        m = _COUNTED.match(k.text, start, end)
        if m is None or m["hi"] is None or len(children) != 4 or children[0].kind.name != "DECL_STMT":
            return False
        decls = list(children[0].get_children())
        if len(decls) != 1 or decls[0].spelling != m["v"] or type_kind(decls[0]) != "INT":
            return False
        key = tu.off(decls[0].location)
        body_start = tu.rng(children[3])[0]
        if key in k.addressed or key in k.escaped or any(p >= body_start for p in k.written.get(key, [])):
            return False
        lo, hi = int(m["lo"]), int(m["hi"]) - (m["op"] == "<")
        if hi >= 2**31 - 1:
            return False  # its last ``++`` would pass INT_MAX
        self.counters[key] = (lo, hi)
        return self.stmt(children[3])

    def effect(self, node) -> bool:
        """An expression statement: an assignment to a floating local or to an element."""
        node = bare(node)
        kind = node.kind.name
        children = list(node.get_children())
        if kind not in ("BINARY_OPERATOR", "COMPOUND_ASSIGNMENT_OPERATOR") or len(children) != 2:
            return False
        op = self.k.between(children[0], children[1])
        if op not in _ASSIGN:
            return False
        lhs, rhs = bare(children[0]), children[1]
        if op != "=" and type_kind(lhs) not in _FLOATS:
            return False
        if lhs.kind.name == "ARRAY_SUBSCRIPT_EXPR":
            target = type_kind(lhs) in _VALUES and self.element(lhs)
        else:
            target = self.local(lhs) and type_kind(lhs) in _FLOATS
        return target and self.value(rhs)

    # ---- expressions --------------------------------------------------------------------------
    def cond(self, node) -> bool:
        """A condition: comparisons of values, joined by ``&&``, ``||`` and ``!``."""
        node = bare(node)
        children = list(node.get_children())
        if node.kind.name == "BINARY_OPERATOR" and len(children) == 2:
            op = self.k.between(children[0], children[1])
            if op in _LOGICAL:
                return all(self.cond(ch) for ch in children)
            return op in _COMPARES and all(self.value(ch) for ch in children)
        if node.kind.name == "UNARY_OPERATOR" and len(children) == 1:
            return self._prefix(node, children[0]) == "!" and self.cond(children[0])
        return False

    def value(self, node) -> bool:
        """A value: literals, locals, parameters, ``threadIdx``'s members, elements, floating
        arithmetic, and integer arithmetic the walk can bound (checked to fit its types)."""
        if type_kind(node) in INDEX_LIMITS and bare(node).kind.name in (
            "BINARY_OPERATOR",
            "CSTYLE_CAST_EXPR",
        ):
            span = self.spans.index(node)
            if span is not None:
                self._record(["::__sim::span_fits(", *span, ")"])
                return True
        node = bare(node)
        kind = node.kind.name
        children = list(node.get_children())
        if kind in ("INTEGER_LITERAL", "FLOATING_LITERAL"):
            return True
        if type_kind(node) not in _VALUES:
            return False
        if kind == "DECL_REF_EXPR":
            return self.local(node) or self.param(node)
        if kind == "ARRAY_SUBSCRIPT_EXPR":
            return self.element(node)
        if kind == "MEMBER_REF_EXPR":
            return _thread_member(self.k, node) is not None
        if kind in ("CSTYLE_CAST_EXPR", "CXX_STATIC_CAST_EXPR"):
            kids = operands(node)
            # Only to a floating type: a floating value converted to an integer may be out of range.
            return len(kids) == 1 and type_kind(node) in _FLOATS and self.value(kids[0])
        if kind == "UNEXPOSED_EXPR" and len(children) == 1:  # an implicit conversion
            inner = bare(children[0])
            return (type_kind(node) in _FLOATS or type_kind(inner) not in _FLOATS) and self.value(inner)
        if kind == "BINARY_OPERATOR" and len(children) == 2:
            op = self.k.between(children[0], children[1])
            return op in _FLOAT_OPS and type_kind(node) in _FLOATS and all(self.value(ch) for ch in children)
        if kind == "UNARY_OPERATOR" and len(children) == 1:
            negated = self._prefix(node, children[0]) == "-"
            return negated and type_kind(node) in _FLOATS and self.value(children[0])
        return False

    def _prefix(self, node, child) -> str:
        start, _ = self.k.tu.rng(node)
        return self.k.text[start : self.k.tu.rng(child)[0]].strip()

    def local(self, node) -> bool:
        """A scalar local of the kernel (neither ``__shared__`` nor a reference)."""
        decl = bare(node).referenced if bare(node).kind.name == "DECL_REF_EXPR" else None
        return decl is not None and _local(self.k, decl) and type_kind(decl) in _VALUES

    def param(self, node) -> bool:
        decl = node.referenced
        return (
            decl is not None
            and decl.kind.name == "PARM_DECL"
            and self.k.tu.off(decl.location) in self.k.params
            and type_kind(decl) in _VALUES
        )

    def element(self, node) -> bool:
        """``S[i1]...[ik]``, every extent of a ``__shared__`` array of constant extents subscripted,
        or ``p[i]`` through a pointer parameter the kernel never assigns (global memory), each
        subscript a sum the walk can bound; each check recorded."""
        node, subscripts = subscripted(node)
        decl = node.referenced if node.kind.name == "DECL_REF_EXPR" else None
        if decl is None:
            return False
        key = self.k.tu.off(decl.location)
        if decl.kind.name == "PARM_DECL":
            pointee = decl.type.get_canonical().get_pointee().get_canonical().kind.name
            if type_kind(decl) != "POINTER" or pointee not in _VALUES or key in self.k.written:
                return False
            if key in self.k.addressed or key in self.k.escaped or len(subscripts) != 1:
                return False
            span = self.spans.index(subscripts[0])
            if span is None:
                return False
            # Every byte the threads may touch addressable, the pointer aligned (runtime/block_loops_hoist.h).
            self._record(["::__sim::global_within(", self.k.tu.rng(node), ", ", *span, ")"])
            return True
        if decl.kind.name != "VAR_DECL" or key not in self.k.shared:
            return False
        extents = _extents(decl)
        if len(extents) != len(subscripts):
            return False
        for index, extent in zip(subscripts, extents):
            span = self.spans.index(index)
            if span is None:
                return False
            self._record(["::__sim::span_within(", *span, f", {extent})"])
        return True

    def _record(self, check: list) -> None:
        text = "".join(p if isinstance(p, str) else self.k.text[p[0] : p[1]] for p in check)
        if text not in self.seen:
            self.seen.add(text)
            self.checks.append(check)


class _Spans(IndexWalk):
    """A subscript's ``index_span`` over the threads the loop runs (runtime/block_loops_hoist.h),
    each value checked to fit its type (a signed sum that would overflow, an unsigned one that
    would wrap, a conversion that would change it); a region loop's counter from its first value to
    its last."""

    OF = "::__sim::span_of("
    IN = "::__sim::span_in("

    def __init__(self, k: KernelAnalysis, below: list, counters: dict[int, tuple[int, int]]) -> None:
        super().__init__(k)
        self.below = below
        self.counters = counters

    def thread(self, dim: str) -> list:
        # An index type holding any thread index, unchanged.
        below = self.below if dim == "x" else ["2147483647"]
        return [f"::__sim::thread_span(__sim_blk->dim.{dim}, ", *below, ")"]

    def operation(self, op: str, a: list, b: list, node) -> list:
        # Each operand converted to the operation's type, which must keep its value.
        limits = INDEX_LIMITS[type_kind(node)]
        head = f"::__sim::span_{OPERATIONS[op]}(::__sim::span_in("
        return [head, *a, f", {limits}), ::__sim::span_in(", *b, f", {limits}))"]

    def owns(self, decl, key: int) -> bool:
        return key in self.counters

    def local(self, decl, key: int) -> list:
        lo, hi = self.counters[key]
        return [f"::__sim::index_span{{{lo}, {hi}, true}}"]


def unchecked_guard(
    k: KernelAnalysis, region: Region, outside: set[int], below: list, again: list[int] = ()
) -> tuple[list, set[str]] | None:
    """Parts of a C++ condition, evaluated once per block before ``region``'s loop, under which no
    check of the region can fire for any of the block's threads, and the names of the recomputed
    locals (``again``: their keys) that the region's copy without checks may compute again, or None
    when the region is not of the short list (see the module's docstring). ``outside``: its
    statements run for the block, not in the loop; ``below``: the loop's prefix bound (parts of C++;
    ``2147483647``: none). A recomputed local qualifies where its initializer is an integer
    expression the walk can bound, which then must fit its types for the block's threads too: the
    copy computes the slot's value again, with no operation that could overflow."""
    walk = _Region(k, below)
    stmts = [s for s in region.stmts if id(s) not in outside]
    if not stmts or not all(walk.stmt(s) for s in stmts):
        return None
    names: set[str] = set()
    for key in again:
        var, init = k.recomputed[key]
        limits = INDEX_LIMITS.get(type_kind(var))
        span = walk.spans.index(init) if limits is not None else None
        if span is not None:
            walk._record(["::__sim::span_fits(::__sim::span_in(", *span, f", {limits}))"])
            names.add(var.spelling)
    if not walk.checks:
        return ["true"], names
    parts: list = []
    for i, check in enumerate(walk.checks):
        parts += ([" && "] if i else []) + check
    return parts, names


# The front end's own text in a region's loop and body (block_loops.py), as the copy without checks
# has it: the loop's fast form and prefix bound where the block's checks allow them (a fast build's,
# kRecompute there; the parts that begin so), and the per-thread slots by plain accesses
# (per_thread::load and store; anywhere in a part).
_UNCHECKED_FLAGS = (
    ("::__sim::kRecompute ? ", "::__sim::kRecomputeUnchecked ? "),
    ("::__sim::kPrefixBound ? ", "::__sim::kRecomputeUnchecked ? "),
    ("::__sim::kPrefixBelow ? ", "::__sim::kRecomputeUnchecked ? "),
)
_UNCHECKED_SLOTS = ((".get(__sim_t)", ".load(__sim_t)"), (".keep(__sim_t, ", ".store(__sim_t, "))
_RECOMPUTED = re.compile(r"^ \S+ (\w+) = ::__sim::kRecomputeIndexed \? ")


def unchecked_parts(parts: list, names: set[str]) -> list:
    """``parts`` (the front end's text: strings, and ranges of the kernel's) as the region's copy
    without checks has them: see ``_UNCHECKED_FLAGS`` and ``_UNCHECKED_SLOTS``; the declarations
    of the recomputed locals ``names`` of a region whose threadIdx is its loop's index compute
    them again (kRecomputeUnchecked), where the other copy reads their slots. A bound a prefix
    region's condition gives is evaluated once for the block: it is a name, a literal, or an
    integer expression whose every operation the block's test showed to fit its type."""
    out: list = []
    for p in parts:
        if isinstance(p, str):
            if p == "::__sim::kRecompute":  # the fast form's check (block_loops_simd.py)
                p = "::__sim::kRecomputeUnchecked"
            for old, new in _UNCHECKED_FLAGS:
                if p.startswith(old):
                    p = new + p[len(old) :]
            for old, new in _UNCHECKED_SLOTS:
                p = p.replace(old, new)
            m = _RECOMPUTED.match(p)
            if m is not None and m[1] in names:
                p = p.replace("::__sim::kRecomputeIndexed ? ", "::__sim::kRecomputeUnchecked ? ", 1)
        out.append(p)
    return out
