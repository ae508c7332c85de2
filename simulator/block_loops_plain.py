"""Barrier-free kernels whose column index may be narrowed, run as one loop the compiler vectorises.

A barrier-free kernel runs as a plain loop over the block's threads (``Packed::run_plain``,
runtime/launch.h), the kernel inlined into it, which g++ does not vectorise: the loop stores the
running thread's index for every thread, the kernel's body starts with a test of whether it runs
on the device, and ``const int i = blockIdx.x * blockDim.x + threadIdx.x;`` is an unsigned sum
converted to int, which g++ cannot show steps by one from thread to thread (block_loops_simd.py).
Where the kernel declares such a column index at its body's top level, the front end writes it a
block-loop body whose one region is the whole body (``block_loops.py``, as a barrier kernel's
regions are written): the loop over the block's threads takes ``threadIdx`` as its own index,
stores nothing per thread, and computes the index as ``(int)U + (int)X`` in a block whose check
``(int)U <= INT_MAX - 1023`` passed, the kernel's own expression in any other (``narrow_declared``
in block_loops_simd.py), so that an index that wraps wraps as in CUDA. The threads run in the
plain loop's order, each its whole body in turn, so nothing but speed changes; a fault in such a
loop names the first thread of its row, as in any region whose loop stores no thread index.

Only shapes proven so qualify, else the kernel keeps the plain loop: no ``__shared__`` variable,
calls of CUDA's math functions only, ``threadIdx`` named only as ``.x/.y/.z`` (the region's loop
then needs nothing of the running thread), and no statement the block would run once for all its
threads but a declaration that cannot trap (a thread that returned before it never evaluated it).
The kernel is marked ``kInterchangedFast`` (runtime/launch.h) as the lockstep kernels are: this
loop in a fast build, the plain loop under memcheck, racecheck and synccheck, whose findings stay
as they were, and fibers with ``SIMULATOR_FIBERS=1``.
"""

from __future__ import annotations

from .block_loops import _Emitter
from .block_loops_analysis import Fallback, KernelAnalysis, require_plain
from .block_loops_interchange import Interchange, interchange_edit
from .block_loops_simd import narrow_declared
from .edits import Edit

__all__ = ["PlainLoops", "plain_loop_edit"]

# Operators of a block-uniform declaration that may trap (SIGFPE on a zero divisor).
_TRAPS = frozenset({"/", "%", "/=", "%="})


class PlainLoops(Interchange):
    """Which barrier-free kernels of a parsed pass got a loop body of their own (each rewritten
    once): a lockstep body (block_loops_interchange.py), else one whose column index narrows."""

    def _rewrite(self, cursor) -> tuple[Edit | None, bool]:
        """The edit (or None) for kernel ``cursor``; the checkers keep the plain loop."""
        edit = interchange_edit(self.tu, cursor, self.fma)
        return (edit if edit is not None else plain_loop_edit(self.tu, cursor, self.fma)), False


class _OneRegion(KernelAnalysis):
    """A barrier-free kernel's body planned as one region."""

    one_region = True
    thread_params = False

    def __init__(self, tu, cursor) -> None:
        super().__init__(tu, cursor)
        require_plain(self)


def plain_loop_edit(tu, cursor, fma: bool = False) -> Edit | None:
    """The edit giving barrier-free kernel ``cursor`` of ``tu`` a one-region loop body whose column
    index narrows, or None where it keeps the plain loop."""
    try:
        k = _OneRegion(tu, cursor)
        plan = k.plan()
        if len(k.regions) != 1 or not k.regions[0].simd:
            return None
        region = k.regions[0]
        if region.trail or region.moved or not all(_declaration_that_cannot_trap(s) for s in region.lead):
            return None
        if not all(_declaration_that_cannot_trap(s) for s in region.hoisted):
            return None
        outside = {id(s) for s in (*region.hoisted, *region.lead)}
        if not narrow_declared(k, region, outside):
            return None
        return _Emitter(k, fma).edit(plan)
    except Fallback:
        return None


def _declaration_that_cannot_trap(s) -> bool:
    """Whether statement ``s`` (run once for the block, before its threads' loop) is a declaration
    without a division: a thread that returned before it would never have evaluated it."""
    if s.kind.name != "DECL_STMT":
        return False
    return not any(tok.spelling in _TRAPS for tok in s.get_tokens())
