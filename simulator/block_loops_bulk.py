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
    SilentWalk,
    _extents,
    _local,
    _var,
    epoch_neighbours,
    operands,
    silent,
    silent_regions,
    subscripted,
    type_kind,
)
from .block_loops_index import OPERATIONS, IndexWalk
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


def bulk_regions(k: KernelAnalysis, plan: list, unjudged: dict) -> set[int]:
    """The ``id`` of each region of ``plan`` not in ``unjudged`` whose epoch holds no other region
    that touches shared memory (nor the region itself again): the candidates of :func:`bulk_guard`."""
    quiet = silent_regions(k)
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


class _Walk(SilentWalk):
    """One region's shared-memory accesses, each as the C++ that adds it to a ``bulk_judge``: the
    nodes ``silent`` allows, the pure calls, and elements of ``__shared__`` arrays read and written."""

    def __init__(self, k: KernelAnalysis, region: Region) -> None:
        super().__init__(k)
        self.indices = _Indices(k, region)
        self.accesses: list[list] = []  # parts of C++ each
        self.seen: set[str] = set()

    # ---- statements and expressions ------------------------------------------------------------
    def call(self, node) -> bool:
        return self._pure_call(node)

    def shared_read(self, node) -> bool | None:
        return self.access(node, False) if self._shared_root(node) is not None else None

    def target(self, lhs, op: str) -> bool:
        """An assignment's target: a local of the kernel, an element of a ``__shared__`` array (a
        write, which covers the read of a compound assignment), or one through a kernel parameter's
        pointer or of a thread's local array (no shared memory: a pointer the host passed cannot
        point into a block's shared memory)."""
        if super().target(lhs, op):
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
        node, subscripts = subscripted(node)
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
            part = self.indices.index(index)
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


class _Indices(IndexWalk):
    """A subscript's ``bulk_index``: its value as ``base + step * x`` over the threads the loop runs,
    checked to fit its type (runtime/block_loops_bulk.h); affine in ``threadIdx.x`` alone."""

    OF = "__sim_j.of("
    IN = "__sim_j.in("

    def __init__(self, k: KernelAnalysis, region: Region) -> None:
        super().__init__(k)
        self.region = region

    def thread(self, dim: str) -> list | None:
        return ["__sim_j.x()"] if dim == "x" else None

    def operation(self, op: str, a: list, b: list, node) -> list:
        return [f"__sim_j.{OPERATIONS[op]}(", *a, ", ", *b, ")"]

    def negate(self, inner: list) -> list:
        return ["__sim_j.sub(__sim_j.of(0), ", *inner, ")"]

    def owns(self, decl, key: int) -> bool:
        """A local the region declares (computed by each thread where it is never written)."""
        return self.region.start <= key < self.region.end and _local(self.k, decl)

    def local(self, decl, key: int) -> list | None:
        k = self.k
        if key in k.written or key in k.addressed or key in k.escaped:
            return None
        inits = operands(decl)
        return self.index(inits[0]) if len(inits) == 1 else None


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
