"""Block-loop regions the shared-memory race check may judge once per block, from their ranges.

A region alone in its epoch (a barrier, or the block's start, before it and after it, or only
regions that touch no shared memory between) is all of its threads' shared accesses in that epoch.
Where each access is an element of a ``__shared__`` array of constant extents whose subscripts are
affine in the thread's ``threadIdx.x`` (``t + s``, ``2 * t``, ``s - 1 - t``: ``+``, ``-`` and ``*``
of literals, block-uniform names, ``blockIdx``/``blockDim``/``gridDim`` and ``threadIdx.x``, or
locals each thread computes from these), thread ``x`` touches the bytes ``[A + S*x, A + S*x + size)``
of each access, for the threads the region's loop runs (``x`` below a prefix region's bound and the
block's width). If no byte written by one thread is read or written by another thread in the region,
no access of the epoch can be half of a hazard, and none need be recorded for a later one (the next
epoch starts afresh at the barrier): the region runs unjudged (``runtime/block_loops_bulk.h``,
``bulk_clean`` and ``for_each_bulk_thread``), in thread order, which gives the same results since
no thread reads what another writes. Otherwise, or where any value is not known to fit the type the
program computes it in, the judged loop runs as before, so that a hazard is reported by the same
thread, line and access as with fibers.

The front end decides the shape, conservatively (:func:`bulk_guard`): every statement and
expression of a kind ``block_loops_cells.QUIET_KINDS`` lists (no call, atomic, copy or barrier but
the pure math functions below, whose parameters are values), every assignment, ``++`` and ``--``
to a local of the kernel, to such an element, or to an element through a kernel parameter's
pointer or of a thread's own local array (never shared memory), no address taken, no reference,
every other subscript through such a pointer or array. A region that stores to no shared memory
(its reads of that shape) qualifies too: its threads meet at no written byte. The block's values
decide the rest when the region runs (``bulk_clean``): the ranges over the threads the loop runs,
conditions left out (wider than what the threads touch, never narrower), every integer operation
of a subscript exact in its type over those threads, and, where the region stores to shared memory,
a block of one row (``dim.y`` and ``dim.z`` 1: threads apart only in ``y`` or ``z`` would share
every element a region subscripts by ``x`` alone).
"""

from __future__ import annotations

from .block_loops_analysis import KernelAnalysis, Region
from .block_loops_cells import (
    BLOCK_VALUES,
    INDEX_LIMITS,
    QUIET_KINDS,
    _array_root,
    _extents,
    _local,
    _thread_member,
    _var,
    assignment,
    epoch_neighbours,
    local_target,
    silent,
    type_kind,
)
from .block_loops_threads import PURE_CALLS, bare

__all__ = ["MAX_ACCESSES", "bulk_guard", "bulk_regions"]

# The most distinct accesses a region judged in bulk may make (runtime/block_loops_bulk.h).
MAX_ACCESSES = 16
# Calls whose arguments are values and which touch no memory of the program.
_PURE = PURE_CALLS | frozenset(
    {"fmaxf", "fminf", "fmax", "fmin", "fabsf", "fabs", "sqrtf", "sqrt", "expf", "exp", "fmaf", "fma"}
)
# Element types of one access each (the detector's bytes are the element's).
_SCALARS = frozenset(
    {
        "BOOL",
        "CHAR_S",
        "CHAR_U",
        "SCHAR",
        "UCHAR",
        "SHORT",
        "USHORT",
        "INT",
        "UINT",
        "LONG",
        "ULONG",
        "LONGLONG",
        "ULONGLONG",
        "FLOAT",
        "DOUBLE",
    }
)
_OPS = {"+": "add", "-": "sub", "*": "mul"}


def bulk_regions(k: KernelAnalysis, plan: list, unjudged: dict) -> set[int]:
    """The ``id`` of each region of ``plan`` not in ``unjudged`` whose epoch holds no other region
    that touches shared memory (nor the region itself again): the candidates of :func:`bulk_guard`."""
    quiet = {id(r) for r in k.regions if all(silent(k, node) for node in [*r.stmts, *r.guards])}
    neighbours: dict = {}
    epoch_neighbours(plan, frozenset(), frozenset(), neighbours)
    found: set[int] = set()
    for region in k.regions:
        if id(region) in unjudged:
            continue
        before, after = neighbours.get(id(region), (None, None))
        if before is None or after is None:
            continue
        if all(r in quiet and r != id(region) for r in before | after):
            found.add(id(region))
    return found


class _Walk:
    """One region's shared-memory accesses, each as the C++ that adds it to a ``bulk_judge``."""

    def __init__(self, k: KernelAnalysis, region: Region) -> None:
        self.k = k
        self.region = region
        self.accesses: list[list] = []  # parts of C++ each
        self.seen: set[str] = set()

    # ---- statements and expressions ------------------------------------------------------------
    def node(self, node) -> bool:
        """Whether ``node`` is of the shapes the module's docstring lists (its accesses recorded)."""
        k = self.k
        kind = node.kind.name
        children = list(node.get_children())
        if kind == "CALL_EXPR":
            return self._pure_call(node)
        if kind not in QUIET_KINDS:
            return False
        if kind == "VAR_DECL":
            if k.tu.off(node.location) in k.shared:
                start, end = k.tu.rng(node)
                return "=" not in k.text[start:end]
            if type_kind(node) in ("LVALUEREFERENCE", "RVALUEREFERENCE"):
                return False
            return all(self.node(ch) for ch in children)
        if kind == "ARRAY_SUBSCRIPT_EXPR" and self._shared_root(node) is not None:
            return self.access(node, False)
        if kind == "DECL_REF_EXPR":
            decl = node.referenced
            if decl is None or k.tu.off(decl.location) in k.shared:
                return False
            return type_kind(decl) not in ("LVALUEREFERENCE", "RVALUEREFERENCE")
        if kind == "ARRAY_SUBSCRIPT_EXPR" and not _array_root(k, node):
            return False
        if kind == "MEMBER_REF_EXPR" and children:
            if "->" in k.text[k.tu.rng(children[0])[1] : k.tu.rng(node)[1]]:
                return False
        if kind == "UNARY_OPERATOR" and len(children) == 1:
            start, end = k.tu.rng(node)
            cs, ce = k.tu.rng(children[0])
            before, after = k.text[start:cs].strip(), k.text[ce:end].strip()
            if before in ("*", "&"):
                return False
            if "++" in before + after or "--" in before + after:
                return self.target(children[0])
        assigned = assignment(k, node)
        if assigned is not None:
            lhs, rhs, _op = assigned
            return self.target(lhs) and self.node(rhs)
        return all(self.node(ch) for ch in children)

    def target(self, lhs) -> bool:
        """An assignment's target: a local of the kernel, an element of a ``__shared__`` array (a
        write, which covers the read of a compound assignment), or one through a kernel parameter's
        pointer or of a thread's local array (no shared memory: a pointer the host passed cannot
        point into a block's shared memory)."""
        if local_target(self.k, lhs):
            return True
        element = bare(lhs)
        if element.kind.name != "ARRAY_SUBSCRIPT_EXPR":
            return False
        if self._shared_root(element) is not None:
            return self.access(element, True)
        return self.node(element)

    def _pure_call(self, node) -> bool:
        ref = node.referenced
        if ref is None or ref.spelling not in _PURE or self.k.tu.src.is_user(self.k.tu.off(ref.location)):
            return False
        # Parameters taken by value: the function reads its own copies, never shared memory (it may be
        # compiled with the race check's calls where g++ does not inline it into the unjudged loop).
        if any(t.get_canonical().kind.name not in _SCALARS for t in ref.type.argument_types()):
            return False
        return all(self.node(a) for a in node.get_arguments())

    # ---- accesses ------------------------------------------------------------------------------
    def _shared_root(self, node):
        """The ``__shared__`` array of constant extents that subscript ``node`` is an element of,
        with its subscripts (outermost first), or None."""
        subscripts = []
        node = bare(node)
        while node.kind.name == "ARRAY_SUBSCRIPT_EXPR":
            base, index = list(node.get_children())
            subscripts.insert(0, index)
            node = bare(base)
        decl = _var(node)
        if decl is None or decl.kind.name != "VAR_DECL" or self.k.tu.off(decl.location) not in self.k.shared:
            return None
        return decl, subscripts

    def access(self, node, write: bool) -> bool:
        """Records the element ``node`` of a ``__shared__`` array (read, or written), or refuses it."""
        root = self._shared_root(node)
        if root is None:
            return False
        decl, subscripts = root
        extents = _extents(decl)
        if not extents or len(extents) != len(subscripts) or type_kind(node) not in _SCALARS:
            return False
        # The element's index in the array's elements, row-major: ((i1 * E2 + i2) * E3 + i3) ...
        flat: list = []
        for index, extent in zip(subscripts, extents, strict=True):
            part = self.index(index)
            if part is None:
                return False
            scaled = ["__sim_j.mul(", *flat, f", __sim_j.of({extent}))"]
            flat = ["__sim_j.add(", *scaled, ", ", *part, ")"] if flat else part
        name, zeros = decl.spelling, "[0]" * len(extents)
        head = f"__sim_j.access(&{name}{zeros}, sizeof({name}{zeros}), "
        parts = [head, *flat, f", {'true' if write else 'false'});"]
        text = "".join(p if isinstance(p, str) else self.k.text[p[0] : p[1]] for p in parts)
        if text not in self.seen:
            self.seen.add(text)
            self.accesses.append(parts)
        return len(self.accesses) <= MAX_ACCESSES

    def index(self, node) -> list | None:
        """The C++ ``bulk_index`` of integer expression ``node`` (its value as ``base + step * x``
        over the threads the loop runs, checked to fit its type), or None where it is not affine
        in ``threadIdx.x`` of the values the module's docstring lists."""
        k = self.k
        dim = _thread_member(k, node)
        if dim == "x":
            return ["__sim_j.x()"]
        if dim is not None:
            return None
        limits = INDEX_LIMITS.get(type_kind(node))
        if limits is None:
            return None
        inner = self._index(node)
        return None if inner is None else ["__sim_j.in(", *inner, f", {limits})"]

    def _index(self, node) -> list | None:
        k = self.k
        kind = node.kind.name
        children = [ch for ch in node.get_children() if ch.kind.name not in ("TYPE_REF", "NAMESPACE_REF")]
        if kind in ("UNEXPOSED_EXPR", "PAREN_EXPR", "CSTYLE_CAST_EXPR", "CXX_STATIC_CAST_EXPR"):
            return self.index(children[0]) if len(children) == 1 else None
        if kind == "INTEGER_LITERAL":
            return ["__sim_j.of(", k.tu.rng(node), ")"]
        if kind == "BINARY_OPERATOR" and len(children) == 2:
            op = k.between(children[0], children[1])
            if op not in _OPS:
                return None
            a, b = self.index(children[0]), self.index(children[1])
            if a is None or b is None:
                return None
            return [f"__sim_j.{_OPS[op]}(", *a, ", ", *b, ")"]
        if kind == "UNARY_OPERATOR" and len(children) == 1:
            start, _ = k.tu.rng(node)
            if k.text[start : k.tu.rng(children[0])[0]].strip() != "-":
                return None
            inner = self.index(children[0])
            return None if inner is None else ["__sim_j.sub(__sim_j.of(0), ", *inner, ")"]
        if kind == "DECL_REF_EXPR" and node.referenced is not None:
            return self._name(node)
        if kind == "MEMBER_REF_EXPR" and len(children) == 1:
            text = k.text[slice(*k.tu.rng(node))].replace(" ", "")
            if text in BLOCK_VALUES:
                return ["__sim_j.of((long long)(", k.tu.rng(node), "))"]
        return None

    def _name(self, node) -> list | None:
        """A name in a subscript: a local each thread computes from the values an index may have
        (computed again, or declared in the region and never written), or a block-uniform one."""
        k = self.k
        decl = node.referenced
        key = k.tu.off(decl.location)
        if key in k.shared or decl.kind.name not in ("PARM_DECL", "VAR_DECL"):
            return None
        if key in k.recomputed:
            return self.index(k.recomputed[key][1])
        if self.region.start <= key < self.region.end and _local(k, decl):
            if key in k.written or key in k.addressed or key in k.escaped:
                return None
            inits = [ch for ch in decl.get_children() if ch.kind.name not in ("TYPE_REF", "NAMESPACE_REF")]
            return self.index(inits[0]) if len(inits) == 1 else None
        if k._uniform(node):
            return ["__sim_j.of((long long)(", k.tu.rng(node), "))"]
        return None


def bulk_guard(k: KernelAnalysis, region: Region, outside: set[int]) -> list | None:
    """The statements (parts of C++) that give a ``bulk_judge`` named ``__sim_j`` each shared
    access of ``region`` (a candidate of :func:`bulk_regions`), or None where the region is not of
    the shapes the module's docstring lists. ``outside``: its statements run once for the block,
    not in the loop; they must touch no shared memory."""
    walk = _Walk(k, region)
    stmts = [s for s in region.stmts if id(s) not in outside]
    if any(not silent(k, s) for s in region.stmts if id(s) in outside):
        return None
    if not stmts or not all(walk.node(node) for node in [*stmts, *region.guards]):
        return None
    return [p for parts in walk.accesses for p in (" ", *parts)]
