"""What a region's loop needs of the running thread, for the block-loop analysis.

``ThreadValues`` is a part of ``block_loops_analysis.KernelAnalysis``: which expressions read the
running thread (``threadIdx`` named as such, a call that may read it), which regions may run as
loops that store no thread index (``Region.simd``), and which locals a later region computes
again from ``threadIdx``'s members instead of keeping them in a per-thread slot.
"""

from __future__ import annotations

import re

from .block_loops_order import INTEGER_KINDS

__all__ = ["PURE_CALLS", "TRANSPARENT", "UNNAMEABLE", "ThreadValues", "bare"]

# Callees whose result depends only on their arguments (CUDA's integer helpers and the like).
PURE_CALLS = frozenset(
    {"min", "max", "umin", "umax", "llmin", "llmax", "ullmin", "ullmax", "__mul24", "__umul24", "abs"}
)
# Callees a region may call and still run as a loop that stores no thread index (``Region.simd``):
# they read nothing of the running thread (no threadIdx, no report naming it).
_THREADLESS_CALLS = PURE_CALLS | frozenset(
    {
        "sqrtf",
        "sqrt",
        "rsqrtf",
        "expf",
        "exp",
        "exp2f",
        "__expf",
        "logf",
        "log",
        "__logf",
        "fmaxf",
        "fminf",
        "fmax",
        "fmin",
        "fabsf",
        "fabs",
        "fmaf",
        "fma",
        "floorf",
        "ceilf",
        "tanhf",
        "__fdividef",
    }
)
# The clang type kinds a local may have to be computed again in each region that uses it
# (``KernelAnalysis.recomputed``): exact arithmetic only, so the value is the one the thread had.
_EXACT_KINDS = INTEGER_KINDS | {"POINTER"}

TRANSPARENT = frozenset({"UNEXPOSED_EXPR", "PAREN_EXPR"})


def bare(node):
    """``node`` without the implicit casts and parentheses (``TRANSPARENT``) around it."""
    while node.kind.name in TRANSPARENT and len(list(node.get_children())) == 1:
        node = next(node.get_children())
    return node


UNNAMEABLE = re.compile(r"\bauto\b|lambda|anonymous|unnamed|type-parameter|decltype|volatile|&")


class ThreadValues:
    """The thread-reading half of ``KernelAnalysis`` (its scan's facts: ``refs``, ``written``, ...)."""

    def _thread_index(self, node) -> bool:
        """Whether ``node`` is the built-in ``threadIdx`` named as such (not ``::threadIdx``)."""
        while node.kind.name in TRANSPARENT and len(list(node.get_children())) == 1:
            node = next(node.get_children())
        ref = node.referenced if node.kind == self.ck.DECL_REF_EXPR else None
        if ref is None or ref.spelling != "threadIdx" or self.tu.src.is_user(self.tu.off(ref.location)):
            return False
        start, end = self.tu.rng(node)
        return self.text[start:end] == "threadIdx"

    def _calls_toolkit(self, call, names: frozenset) -> bool:
        """Whether the call ``call`` is to a function of ``names`` that the program does not define."""
        ref = call.referenced
        if ref is None or ref.spelling not in names:
            return False
        return not self.tu.src.is_user(self.tu.off(ref.location))

    def _threadless(self, node, parents: list) -> bool:
        """Whether ``node`` calls nothing that may read the running thread and reads threadIdx
        only as ``threadIdx.x/.y/.z`` values (``Region.simd``)."""
        kind = node.kind.name
        if kind == "CALL_EXPR":
            if not self._calls_toolkit(node, _THREADLESS_CALLS):
                return False
        elif (
            kind == "DECL_REF_EXPR"
            and node.referenced is not None
            and node.referenced.spelling == "threadIdx"
        ):
            up = self._up(parents)
            chain = [p for p in parents if p.kind.name not in TRANSPARENT]
            if not self._thread_index(node) or up is None or up.kind != self.ck.MEMBER_REF_EXPR:
                return False
            if len(chain) >= 2 and chain[-2].kind == self.ck.UNARY_OPERATOR:
                start, end = self.tu.rng(chain[-2])
                if self.text[start:end].lstrip().startswith("&"):
                    return False
        elif kind in ("CXX_NEW_EXPR", "CXX_DELETE_EXPR"):
            return False
        return all(self._threadless(ch, [*parents, node]) for ch in node.get_children())

    def _choose_recomputed(self) -> None:
        """The locals (declared at a region's top level, in order) that a later region may compute
        again from their initializer instead of reading a per-thread slot: an integer or pointer
        never written nor addressed, whose initializer reads only ``threadIdx``'s members,
        parameters, constants, block variables no thread writes and other such locals, and calls
        only CUDA's integer helpers (``_uniform`` with ``derived``). Every name it reads, and its
        own, is declared once in the kernel, so that it means the same wherever it is copied."""
        counts: dict[str, int] = {}
        for name in [*self.param_names, *(v.spelling for v in self.locals.values())]:
            counts[name] = counts.get(name, 0) + 1
        for region in self.regions:
            for var in region.declared:
                key = self.tu.off(var.location)
                if (
                    key in self.block_vars
                    or key in self.shared
                    or key in self.written
                    or key in self.addressed
                    or key in self.escaped
                    or var.type.get_canonical().kind.name not in _EXACT_KINDS
                    or UNNAMEABLE.search(var.type.spelling)
                    or counts.get(var.spelling, 0) != 1
                ):
                    continue
                inits = [
                    ch
                    for ch in var.get_children()
                    if ch.kind.name not in ("TYPE_REF", "NAMESPACE_REF", "TEMPLATE_REF")
                ]
                if len(inits) != 1 or not self._uniform(inits[0], derived=True):
                    continue
                start, end = self.tu.rng(inits[0])
                if any(
                    start <= p < end and (k in self.locals or k in self.params) and counts.get(name, 0) != 1
                    for p, k, name in self.refs
                ):
                    continue
                self.recomputed[key] = (var, inits[0])

    def _choose_simd(self) -> None:
        """Which regions run as loops that store no thread index (``Region.simd``)."""
        for region in self.regions:
            outside = {id(s) for s in (*region.hoisted, *region.lead, *region.trail)}
            region.simd = all(self._threadless(s, []) for s in region.stmts if id(s) not in outside)
