"""Block-loop regions whose accesses the shared-memory race check need not judge.

A hazard of ``__shared__`` memory is two accesses of one block's threads, one of them a write,
between the same two barriers (an epoch, ``runtime/shared_races.cpp``). A region that a barrier
starts and a barrier ends (or the block's start and end) is all that its threads run in its epoch;
if it also writes no shared memory, each access it makes is a read that no write of the epoch can
meet, so none is a hazard and none need be recorded for a later access (the next epoch starts
afresh). The tiled matmul's inner product is such a region: every thread reads the two tiles and
writes only its own sum.

"Writes no shared memory" is decided on the source, conservatively: every statement and expression
of the region must be of a kind listed below (no call of any kind, so no atomic, copy, barrier or
constructor), and every assignment, compound assignment, ``++`` and ``--`` must name a local variable
of the kernel that is neither ``__shared__`` nor a reference. Anything else, such as a store
through a pointer, an array element or a member, keeps the region judged as before.
Two more kinds need no epoch to themselves (``block_loops_cells.py``): a region that touches no
shared memory at all, and one whose only shared-memory accesses are stores to its threads' own
elements, while the block's shape keeps them so (a condition tested when the region runs).
Only the racecheck-shared build asks for these regions (``modes.Build.unjudged_regions``); their
loop (``runtime/block_loops.h``, ``for_each_unjudged_thread``) and body are compiled without
ThreadSanitizer's calls there.
"""

from __future__ import annotations

from .block_loops_analysis import KernelAnalysis, Region
from .block_loops_cells import QUIET_KINDS as _QUIET
from .block_loops_cells import assignment, epoch_neighbours, local_target, own_cell_guard, silent_regions

__all__ = ["unjudged_regions"]


def unjudged_regions(k: KernelAnalysis, plan: list) -> dict[int, str | None]:
    """The ``id`` of each region of ``plan`` (``KernelAnalysis.plan``) that the race check need not
    judge, with the condition on the block's shape under which it need not (C++; None: always).

    Such a region is alone between two barriers and writes no shared memory (see the module's
    docstring), or touches no shared memory at all, or stores only to its threads' own elements of
    shared arrays in an epoch whose other regions touch no shared memory (``block_loops_cells.py``).
    """
    alone: set[int] = set()
    _walk(k, plan, True, alone)
    found: dict[int, str | None] = dict.fromkeys(alone)
    quiet = silent_regions(k)
    found.update(dict.fromkeys(quiet))
    neighbours: dict = {}
    epoch_neighbours(plan, frozenset(), frozenset(), neighbours)
    for region in k.regions:
        if id(region) in found:
            continue
        before, after = neighbours.get(id(region), (None, None))
        if before is None or after is None or not all(r in quiet or r == id(region) for r in before | after):
            continue
        guard = own_cell_guard(k, region)
        if guard is not None:
            found[id(region)] = guard
    return found


def _walk(k: KernelAnalysis, plan: list, top: bool, found: set[int]) -> None:
    for i, item in enumerate(plan):
        kind = item[0]
        if kind == "region":
            # The block's start and end bound an epoch as a barrier does (block_started).
            before = plan[i - 1][0] == "barrier" if i > 0 else top
            after = plan[i + 1][0] == "barrier" if i + 1 < len(plan) else top
            if before and after and _writes_no_shared_memory(k, item[1]):
                found.add(id(item[1]))
        elif kind == "compound":
            _walk(k, item[2], False, found)
        elif kind in ("loop", "do"):
            _walk(k, item[3], False, found)
        elif kind == "if":
            _walk(k, item[3], False, found)
            if item[4] is not None:
                _walk(k, item[4], False, found)


def _writes_no_shared_memory(k: KernelAnalysis, region: Region) -> bool:
    return all(_quiet(k, node) for node in [*region.stmts, *region.guards])


def _quiet(k: KernelAnalysis, node) -> bool:
    kind = node.kind.name
    if kind not in _QUIET:
        return False
    children = list(node.get_children())
    if kind == "VAR_DECL" and k.tu.off(node.location) in k.shared:
        return False
    assigned = assignment(k, node)
    if assigned is not None and not local_target(k, assigned[0]):
        return False
    if kind == "UNARY_OPERATOR" and len(children) == 1:
        start, end = k.tu.rng(node)
        cs, ce = k.tu.rng(children[0])
        around = k.text[start:cs] + k.text[ce:end]
        if ("++" in around or "--" in around) and not local_target(k, children[0]):
            return False
    return all(_quiet(k, ch) for ch in children)
