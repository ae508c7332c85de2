"""A subscript's integer expression as C++ that bounds its values over the threads a region's loop runs.

memcheck's checks made once per block (``block_loops_hoist.py``: an ``index_span`` of each
expression) and the race check's judgement once per block (``block_loops_bulk.py``: a
``bulk_index``) read the same shapes of a subscript: ``+``, ``-`` and ``*`` of integer literals,
``blockIdx``/``blockDim``/``gridDim``, block-uniform names, members of ``threadIdx`` (or locals
initialised to one), and the locals each thread computes again from these (their initializers),
each value checked to fit its type. :class:`IndexWalk` walks them; a subclass says what each part
becomes in C++ (``OF``, ``IN``, :meth:`IndexWalk.thread`, :meth:`IndexWalk.operation`,
:meth:`IndexWalk.negate`) and which other locals it reads (:meth:`IndexWalk.owns`,
:meth:`IndexWalk.local`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from .block_loops_analysis import KernelAnalysis
from .block_loops_cells import BLOCK_VALUES, INDEX_LIMITS, _thread_member, operands, type_kind

__all__ = ["OPERATIONS", "IndexWalk"]

# The integer operations a walk follows, by the names the runtime's operations take.
OPERATIONS = {"+": "add", "-": "sub", "*": "mul"}
# Conversions and parentheses: the value of their one operand, checked to fit their own type.
_THROUGH = ("UNEXPOSED_EXPR", "PAREN_EXPR", "CSTYLE_CAST_EXPR", "CXX_STATIC_CAST_EXPR")


class IndexWalk(ABC):
    """The walk of a subscript's integer expressions into parts of C++ (strings, and ranges of the
    kernel's text), or None where an expression is not of the shapes the module's docstring lists."""

    OF = ""  # the call that makes a constant's value: OF, the value's C++, ")"
    IN = ""  # the call that checks a value fits a type: IN, the value, ", lo, hi)"

    def __init__(self, k: KernelAnalysis) -> None:
        self.k = k

    def index(self, node) -> list | None:
        """The C++ of integer expression ``node``'s values over the threads the loop runs, each
        checked to fit its type, or None where it is not of the walk's shapes."""
        dim = _thread_member(self.k, node)
        if dim is not None:
            return self.thread(dim)
        limits = INDEX_LIMITS.get(type_kind(node))
        if limits is None:
            return None
        inner = self._inner(node)
        return None if inner is None else [self.IN, *inner, f", {limits})"]

    def _inner(self, node) -> list | None:
        """``index`` of ``node`` before its own type's check."""
        k = self.k
        kind = node.kind.name
        children = operands(node)
        if kind in _THROUGH:
            return self.index(children[0]) if len(children) == 1 else None
        if kind == "INTEGER_LITERAL":
            return [self.OF, k.tu.rng(node), ")"]
        if kind == "BINARY_OPERATOR" and len(children) == 2:
            op = k.between(children[0], children[1])
            if op not in OPERATIONS:
                return None
            a, b = self.index(children[0]), self.index(children[1])
            if a is None or b is None:
                return None
            return self.operation(op, a, b, node)
        if kind == "UNARY_OPERATOR" and len(children) == 1:
            start, _ = k.tu.rng(node)
            if k.text[start : k.tu.rng(children[0])[0]].strip() != "-":
                return None
            inner = self.index(children[0])
            return None if inner is None else self.negate(inner)
        if kind == "DECL_REF_EXPR" and node.referenced is not None:
            return self._name(node)
        if kind == "MEMBER_REF_EXPR" and len(children) == 1:
            text = k.text[slice(*k.tu.rng(node))].replace(" ", "")
            if text in BLOCK_VALUES:
                return [f"{self.OF}(long long)(", k.tu.rng(node), "))"]
        return None

    def _name(self, node) -> list | None:
        """A name: a local each thread computes again from what an index may read (its
        initializer's values), one of the subclass's own (``owns``), or a block-uniform one."""
        k = self.k
        decl = node.referenced
        key = k.tu.off(decl.location)
        if key in k.shared or decl.kind.name not in ("PARM_DECL", "VAR_DECL"):
            return None
        if key in k.recomputed:
            return self.index(k.recomputed[key][1])
        if self.owns(decl, key):
            return self.local(decl, key)
        if k._uniform(node):
            return [f"{self.OF}(long long)(", k.tu.rng(node), "))"]
        return None

    # ---- what a subclass emits -----------------------------------------------------------------
    @abstractmethod
    def thread(self, dim: str) -> list | None:
        """The values of ``threadIdx``'s member ``dim`` (``x``, ``y`` or ``z``), or None."""

    @abstractmethod
    def operation(self, op: str, a: list, b: list, node) -> list:
        """Integer operation ``op`` (a key of ``OPERATIONS``) of ``a`` and ``b``, the operands of ``node``."""

    def negate(self, inner: list) -> list | None:
        """``-inner``, or None: a walk follows no unary ``-`` unless its subclass says how."""
        del inner
        return None

    @abstractmethod
    def owns(self, decl, key: int) -> bool:
        """Whether local ``decl`` (at ``key``) is one whose values ``local`` gives."""

    @abstractmethod
    def local(self, decl, key: int) -> list | None:
        """The values of a local that ``owns`` names, or None where the walk cannot bound them."""
