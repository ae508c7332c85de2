"""Block-loop regions whose shared-memory accesses cannot be half of a hazard, whatever their epoch.

Two kinds, decided on the source, conservatively (every statement and expression of the region of a
kind ``QUIET_KINDS`` lists, so no call, atomic, copy or barrier):

* a *silent* region touches no shared memory: it names no ``__shared__`` variable, reads memory
  only through a kernel parameter's pointer or a thread's own local array (a kernel parameter
  cannot point to a block's shared memory), and writes only the kernel's own locals (neither
  ``__shared__`` nor references). None of its accesses is a shared-memory access, so none needs
  judging, in any epoch;
* an *own-cell* region is silent but for stores ``S[i1]...[ik] = value;`` to a ``__shared__`` array
  of constant extents, each subscript a distinct member of ``threadIdx`` (or a local initialised to
  one and never written). While the block's shape keeps each index within its extent (and leaves
  every member no subscript names at 1), each thread stores to elements no other thread stores to,
  so among these stores no two threads meet; every store of the region to ``S`` uses the same
  subscripts. If every other region that can run in the same epoch (with no barrier between) is
  silent, no access of that epoch reads the stored elements or stores to them again but the same
  thread's: none is a hazard. :func:`own_cell_guard` gives the condition on the block's shape, which
  the emitted code tests at run time (another shape runs the judged copy of the region).

Both kinds write nothing other threads read in the region, and read nothing other threads write in
it, so their threads may run in any order with the same results.
"""

from __future__ import annotations

from .block_loops_analysis import KernelAnalysis, Region
from .block_loops_threads import TRANSPARENT, bare
from .block_loops_uses import ASSIGNMENTS

__all__ = [
    "BLOCK_VALUES",
    "INDEX_LIMITS",
    "QUIET_KINDS",
    "SilentWalk",
    "assignment",
    "epoch_neighbours",
    "local_target",
    "operands",
    "own_cell_guard",
    "silent",
    "silent_regions",
    "subscripted",
    "type_kind",
]

# Statements and expressions that write nothing but what an assignment among them names.
QUIET_KINDS = frozenset(
    {
        "COMPOUND_STMT",
        "DECL_STMT",
        "VAR_DECL",
        "NULL_STMT",
        "IF_STMT",
        "FOR_STMT",
        "WHILE_STMT",
        "DO_STMT",
        "SWITCH_STMT",
        "CASE_STMT",
        "DEFAULT_STMT",
        "BREAK_STMT",
        "CONTINUE_STMT",
        "RETURN_STMT",
        "BINARY_OPERATOR",
        "COMPOUND_ASSIGNMENT_OPERATOR",
        "UNARY_OPERATOR",
        "CONDITIONAL_OPERATOR",
        "PAREN_EXPR",
        "UNEXPOSED_EXPR",
        "DECL_REF_EXPR",
        "MEMBER_REF_EXPR",
        "ARRAY_SUBSCRIPT_EXPR",
        "INTEGER_LITERAL",
        "FLOATING_LITERAL",
        "CHARACTER_LITERAL",
        "CXX_BOOL_LITERAL_EXPR",
        "CXX_NULL_PTR_LITERAL_EXPR",
        "CSTYLE_CAST_EXPR",
        "CXX_STATIC_CAST_EXPR",
        "CXX_REINTERPRET_CAST_EXPR",
        "CXX_CONST_CAST_EXPR",
        "CXX_UNARY_EXPR",
        "UNARY_EXPR",
        "TYPE_REF",
        "NAMESPACE_REF",
    }
)
_REFERENCES = frozenset({"LVALUEREFERENCE", "RVALUEREFERENCE"})
_DIMS = ("x", "y", "z")
# Integer types that hold every thread index (at most 1,024) unchanged.
_INDEX_KINDS = frozenset({"SHORT", "USHORT", "INT", "UINT", "LONG", "ULONG", "LONGLONG", "ULONGLONG"})
# The integer types a subscript's parts may have: the least and greatest value a walk of a
# subscript lets one take (an unsigned long's kept below 2^63, where a long long holds it).
INDEX_LIMITS = {
    "INT": "-2147483647LL - 1, 2147483647LL",
    "UINT": "0LL, 4294967295LL",
    "LONG": "-9223372036854775807LL - 1, 9223372036854775807LL",
    "LONGLONG": "-9223372036854775807LL - 1, 9223372036854775807LL",
    "ULONG": "0LL, 9223372036854775807LL",
    "ULONGLONG": "0LL, 9223372036854775807LL",
}
# Block-uniform values a subscript may read, which no thread writes.
BLOCK_VALUES = frozenset(f"{v}.{d}" for v in ("blockIdx", "blockDim", "gridDim") for d in "xyz")


def type_kind(node) -> str:
    """The name of the kind of ``node``'s canonical type (``INT``, ``POINTER``, ...)."""
    return node.type.get_canonical().kind.name


def _var(node):
    """The declaration a (bare) ``DECL_REF_EXPR`` names, or None."""
    node = bare(node)
    if node.kind.name != "DECL_REF_EXPR" or node.referenced is None:
        return None
    return node.referenced


def _is_reference(decl) -> bool:
    return decl.type.get_canonical().kind.name in _REFERENCES


def _local(k: KernelAnalysis, decl) -> bool:
    """A local of the kernel that is neither ``__shared__`` nor a reference."""
    key = k.tu.off(decl.location)
    return (
        decl.kind.name == "VAR_DECL" and key in k.locals and key not in k.shared and not _is_reference(decl)
    )


def _array_root(k: KernelAnalysis, node) -> bool:
    """Whether subscript ``node`` reads or writes memory no block's shared memory can be: an element
    of a local array of the thread, or through a kernel parameter's pointer that the kernel never
    assigns (``p[i]``, ``p[i][j]`` for a pointer to arrays); not through any other pointer."""
    node = bare(node)
    while node.kind.name == "ARRAY_SUBSCRIPT_EXPR":
        base = bare(next(node.get_children()))
        if base.type.get_canonical().kind.name != "CONSTANTARRAY":
            decl = _var(base)
            return (
                decl is not None
                and decl.kind.name == "PARM_DECL"
                and k.tu.off(decl.location) in k.params
                and k.tu.off(decl.location) not in k.written
                and decl.type.get_canonical().kind.name == "POINTER"
            )
        node = base
    decl = _var(node)
    return decl is not None and _local(k, decl) and decl.type.get_canonical().kind.name == "CONSTANTARRAY"


def local_target(k: KernelAnalysis, lhs) -> bool:
    """Whether ``lhs`` names a local of the kernel that is neither ``__shared__`` memory nor a
    reference (which may be bound to it)."""
    decl = _var(lhs)
    return decl is not None and _local(k, decl)


def assignment(k: KernelAnalysis, node) -> tuple | None:
    """``(lhs, rhs, op)`` of an assignment or compound assignment, else None."""
    kind = node.kind.name
    if kind not in ("BINARY_OPERATOR", "COMPOUND_ASSIGNMENT_OPERATOR"):
        return None
    children = list(node.get_children())
    if len(children) != 2:
        return None
    op = k.between(children[0], children[1])
    if kind == "COMPOUND_ASSIGNMENT_OPERATOR" or op in ASSIGNMENTS:
        return children[0], children[1], op
    return None


class SilentWalk:
    """The judgement of :func:`silent`, node by node; a subclass allows more through its hooks
    (:meth:`call`, :meth:`shared_read`, :meth:`target`), which here allow nothing but locals."""

    def __init__(self, k: KernelAnalysis) -> None:
        self.k = k

    def node(self, node) -> bool:
        """Whether ``node`` touches no shared memory and writes nothing but what ``target`` allows."""
        k = self.k
        kind = node.kind.name
        if kind == "CALL_EXPR":
            return self.call(node)
        if kind not in QUIET_KINDS:
            return False
        children = list(node.get_children())
        if kind == "VAR_DECL" and k.tu.off(node.location) in k.shared:
            # A declaration of shared memory accesses nothing: its children are the constant extents of
            # its type (CUDA allows it no initialiser; one the build would take is refused here).
            start, end = k.tu.rng(node)
            return "=" not in k.text[start:end]
        if kind == "VAR_DECL" and _is_reference(node):
            return False
        if kind == "ARRAY_SUBSCRIPT_EXPR":
            read = self.shared_read(node)
            if read is not None:
                return read
        if kind == "DECL_REF_EXPR":
            decl = node.referenced
            if decl is None or k.tu.off(decl.location) in k.shared:
                return False
            return not _is_reference(decl)
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
                return self.target(children[0], "++")
        assigned = assignment(k, node)
        if assigned is not None:
            lhs, rhs, op = assigned
            return self.target(lhs, op) and self.node(rhs)
        return all(self.node(ch) for ch in children)

    def call(self, node) -> bool:
        """Whether call ``node`` is allowed (none here)."""
        del node
        return False

    def shared_read(self, node) -> bool | None:
        """Whether subscript ``node``, read, is allowed as an element of shared memory; None where
        it is not one the walk takes (then it must be memory no block's shared memory can be)."""
        del node
        return None

    def target(self, lhs, op: str) -> bool:
        """Whether ``lhs`` may be written by ``op`` (an assignment's, or ``++`` for ``++``/``--``):
        a local of the kernel."""
        del op
        return local_target(self.k, lhs)


class _OwnCells(SilentWalk):
    """:func:`silent` that allows stores to an own cell of a ``__shared__`` array too (``cells``)."""

    def __init__(self, k: KernelAnalysis, cells: dict) -> None:
        super().__init__(k)
        self.cells = cells

    def target(self, lhs, op: str) -> bool:
        return super().target(lhs, op) or (op == "=" and _own_cell(self.k, lhs, self.cells))


def silent_regions(k: KernelAnalysis) -> set[int]:
    """The ``id`` of each region of ``k`` that is silent: its statements and conditions."""
    return {id(r) for r in k.regions if all(silent(k, node) for node in [*r.stmts, *r.guards])}


def silent(k: KernelAnalysis, node, cells: dict | None = None) -> bool:
    """Whether ``node`` touches no shared memory and writes nothing but the kernel's locals (see the
    module's docstring). With ``cells`` (a dict), a store to an own cell of a ``__shared__`` array is
    allowed too and recorded there: array declaration -> the ``threadIdx`` members of its subscripts."""
    walk = SilentWalk(k) if cells is None else _OwnCells(k, cells)
    return walk.node(node)


def _own_cell(k: KernelAnalysis, lhs, cells: dict) -> bool:
    """Whether ``lhs`` is ``S[i1]...[ik]``, an element of a ``__shared__`` array of constant extents
    subscripted by distinct members of ``threadIdx``, with the same members as every other store to
    ``S`` in ``cells``; records them there."""
    node, subscripts = subscripted(lhs)
    dims = [_thread_member(k, index) for index in subscripts]
    if None in dims:
        return False
    decl = _var(node)
    if decl is None or decl.kind.name != "VAR_DECL" or k.tu.off(decl.location) not in k.shared:
        return False
    if not dims or len(set(dims)) != len(dims) or len(_extents(decl)) != len(dims):
        return False
    key = k.tu.off(decl.location)
    if cells.setdefault(key, (decl, tuple(dims)))[1] != tuple(dims):
        return False
    return True


def operands(node) -> list:
    """``node``'s children but the names of types and namespaces written in it (``(int)x``: ``x``)."""
    return [ch for ch in node.get_children() if ch.kind.name not in ("TYPE_REF", "NAMESPACE_REF")]


def subscripted(node) -> tuple:
    """The array (bare) that subscript ``node`` is an element of, with its subscripts, outermost
    first (``S[i][j]``: ``S``, ``[i, j]``; any other ``node``: itself bare, and none)."""
    subscripts: list = []
    node = bare(node)
    while node.kind.name == "ARRAY_SUBSCRIPT_EXPR":
        base, index = list(node.get_children())
        subscripts.insert(0, index)
        node = bare(base)
    return node, subscripts


def _extents(decl) -> list[int]:
    """The constant extents of array ``decl``'s type, outermost first, down to a non-array element
    (empty when any is not a constant)."""
    out, t = [], decl.type.get_canonical()
    while t.kind.name == "CONSTANTARRAY":
        n = t.get_array_size()
        if n <= 0:
            return []
        out.append(n)
        t = t.get_array_element_type().get_canonical()
    if t.kind.name in ("INCOMPLETEARRAY", "DEPENDENTSIZEDARRAY", "VARIABLEARRAY"):
        return []
    return out


def _thread_member(k: KernelAnalysis, index) -> str | None:
    """``x``, ``y`` or ``z`` when ``index`` is that member of ``threadIdx``, or a local initialised
    to it and never written nor addressed; else None."""
    node = index
    # Conversions (implicit or written) to an integer type that holds any thread index.
    while node.kind.name in ("CSTYLE_CAST_EXPR", "CXX_STATIC_CAST_EXPR", *TRANSPARENT):
        kids = operands(node)
        if len(kids) != 1 or node.type.get_canonical().kind.name not in _INDEX_KINDS:
            return None
        node = kids[0]
    if node.kind.name == "MEMBER_REF_EXPR":
        kids = list(node.get_children())
        if len(kids) == 1 and k._thread_index(kids[0]) and node.spelling in _DIMS:
            start, end = k.tu.rng(node)
            if k.text[start:end].replace(" ", "") == f"threadIdx.{node.spelling}":
                return node.spelling
        return None
    decl = _var(node)
    if decl is None or not _local(k, decl):
        return None
    key = k.tu.off(decl.location)
    if key in k.written or key in k.addressed or key in k.escaped:
        return None
    if decl.type.get_canonical().kind.name not in _INDEX_KINDS:
        return None
    inits = operands(decl)
    if len(inits) != 1:
        return None
    return _thread_member(k, inits[0])


def own_cell_guard(k: KernelAnalysis, region: Region) -> str | None:
    """The C++ condition on the block's shape (``__sim_blk->dim``) under which every store of
    ``region`` to shared memory is to an element of its thread's own, when the region is silent
    but for such stores (at least one); else None."""
    cells: dict = {}
    if not all(silent(k, node, cells) for node in [*region.stmts, *region.guards]) or not cells:
        return None
    # A member that one array leaves unnamed must be 1 (threads apart in it only would share every
    # element); a named one at most the least extent it subscripts.
    unnamed = {dim for _decl, dims in cells.values() for dim in _DIMS if dim not in dims}
    bounds: dict[str, int] = {}
    for decl, dims in cells.values():
        for dim, extent in zip(dims, _extents(decl), strict=True):
            bounds[dim] = min(bounds.get(dim, extent), extent)
    parts = [
        f"__sim_blk->dim.{dim} == 1u" if dim in unnamed else f"__sim_blk->dim.{dim} <= {bounds[dim]}u"
        for dim in _DIMS
    ]
    return " && ".join(parts)


def epoch_neighbours(plan: list, before: frozenset | None, after: frozenset | None, out: dict) -> None:
    """For each region of ``plan``: the regions that may run next to it with no barrier between,
    before and after it (a frozenset), or None where a structure between makes that unknown.
    ``before``/``after``: those of the list's first and last items; ``out``: id(region) -> both."""

    def edge(item) -> frozenset | None:
        if item[0] == "barrier":
            return frozenset()
        if item[0] == "region":
            return frozenset({id(item[1])})
        return None

    def union(a, b):
        return None if a is None or b is None else a | b

    def last(i: int) -> frozenset | None:
        """What may run last of ``plan[:i + 1]``: a loop's body's last item, or, where a ``for``
        or ``while`` runs no step, what came before the loop (None where a jump leaves the body)."""
        item = plan[i]
        if item[0] in ("loop", "do") and item[3] and not _jumps(item[3]):
            body = edge(item[3][-1])
            return body if item[0] == "do" else union(body, last(i - 1) if i > 0 else before)
        return edge(item)

    def first(i: int) -> frozenset | None:
        """What may run first of ``plan[i:]``, as ``last`` does from the other end."""
        item = plan[i]
        if item[0] in ("loop", "do") and item[3] and not _jumps(item[3]):
            body = edge(item[3][0])
            return body if item[0] == "do" else union(body, first(i + 1) if i + 1 < len(plan) else after)
        return edge(item)

    for i, item in enumerate(plan):
        prev = last(i - 1) if i > 0 else before
        nxt = first(i + 1) if i + 1 < len(plan) else after
        kind = item[0]
        if kind == "region":
            out[id(item[1])] = (prev, nxt)
        elif kind == "compound":
            epoch_neighbours(item[2], prev, nxt, out)
        elif kind in ("loop", "do") and item[3]:
            # A body runs after what precedes the loop, and again after its own last item.
            body = item[3]
            epoch_neighbours(body, union(prev, edge(body[-1])), union(nxt, edge(body[0])), out)
        elif kind == "if":
            epoch_neighbours(item[3], prev, nxt, out)
            if item[4] is not None:
                epoch_neighbours(item[4], prev, nxt, out)


def _jumps(plan: list) -> bool:
    """Whether ``plan`` (a loop's body) holds a ``break`` or ``continue`` between its regions."""
    for item in plan:
        if item[0] == "jump":
            return True
        if item[0] == "compound" and _jumps(item[2]):
            return True
        if item[0] == "if" and (_jumps(item[3]) or (item[4] is not None and _jumps(item[4]))):
            return True
    return False
