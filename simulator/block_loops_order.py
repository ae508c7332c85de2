"""Whether the checkers may run a kernel's block loops: the same reports as its fibers, in order.

memcheck and the shared-memory racecheck judge what each access does when it happens, so a
kernel's block loops (``block_loops.py``) may stand in for its fibers only where they make the
same accesses in the same order. Between two barriers that holds: fibers run thread after thread
to the next barrier, and so does a region's loop. It fails where a region ends without a barrier
(a loop or an ``if`` with a barrier starts or ends): fibers run a thread through both regions
before the next thread starts, the loops run every thread through the first region first. So
each stretch between barriers (an *epoch*, followed through loops and branches) may hold at most
one region that can report anything; the others must be *inert*: no memory access, no call, no
arithmetic that UBSan checks (signed overflow, a division or shift by a non-constant), no
pointer. The loop headers and block statements, which run once for the block where fibers run
them in every thread, must be inert too, and no per-thread slot may be an array or a struct
(memcheck would see every thread's copy as one heap block, see ``runtime/block_loops.h``).
"""

from __future__ import annotations

__all__ = ["INTEGER_KINDS", "SCALAR_KINDS", "checkers_may_loop"]

_UNSIGNED_OR_FLOAT = frozenset(
    {"BOOL", "CHAR_U", "UCHAR", "USHORT", "UINT", "ULONG", "ULONGLONG", "FLOAT", "DOUBLE", "LONGDOUBLE"}
)
# The clang type kinds of an integer (bool and enums included): exact arithmetic.
INTEGER_KINDS = frozenset(
    {"BOOL", "CHAR_U", "UCHAR", "USHORT", "UINT", "ULONG", "ULONGLONG", "ENUM"}
    | {"CHAR_S", "SCHAR", "SHORT", "INT", "LONG", "LONGLONG"}
)
# The clang type kinds of a scalar held by value (a pointer is not one: the checkers follow it).
SCALAR_KINDS = INTEGER_KINDS | {"FLOAT", "DOUBLE", "LONGDOUBLE"}
# Operators no checker judges on scalars (an assignment's target is judged as its own node).
_PLAIN_BINARY = frozenset(
    {"<", ">", "<=", ">=", "==", "!=", "&&", "||", "&", "|", "^", "=", "&=", "|=", "^="}
)
_OVERFLOWING = frozenset({"+", "-", "*", "+=", "-=", "*="})
_DIVIDING = frozenset({"/", "%", "/=", "%="})
_SHIFTING = frozenset({">>", ">>=", "<<", "<<="})
_TRANSPARENT = frozenset(
    {
        "UNEXPOSED_EXPR",
        "PAREN_EXPR",
        "CSTYLE_CAST_EXPR",
        "CXX_STATIC_CAST_EXPR",
        "CXX_FUNCTIONAL_CAST_EXPR",
        "CONDITIONAL_OPERATOR",
        "DECL_STMT",
        "COMPOUND_STMT",
        "NULL_STMT",
        "IF_STMT",
    }
)
_LITERALS = frozenset({"INTEGER_LITERAL", "FLOATING_LITERAL", "CHARACTER_LITERAL", "CXX_BOOL_LITERAL_EXPR"})


class _Unordered(Exception):
    """An epoch holds two regions that may report: the loops would reorder their accesses."""


def checkers_may_loop(k, plan: list) -> bool:
    """Whether kernel ``k`` (a rewritten ``block_loops._Kernel``) with ``plan`` may run as block
    loops under memcheck and the shared-memory racecheck."""
    if any(var.type.get_canonical().kind.name not in SCALAR_KINDS for _alias, var in k.slot_types):
        return False
    counted = _counted_increments(k, plan)
    if not all(_Inert(k, counted).node(h) for h in k.headers):
        return False
    for region in k.regions:
        peeled = (*region.lead, *region.trail, *region.hoisted)
        if not all(_Inert(k).node(s) for s in peeled if not _shared_decl(k, s)):
            return False
    quiet = {id(r): all(_Inert(k).node(s) for s in r.stmts if not _shared_decl(k, s)) for r in k.regions}
    try:
        _epochs(plan, frozenset({False}), quiet)
    except _Unordered:
        return False
    return True


def _counted_increments(k, plan: list) -> set[int]:
    """Where the headers of ``plan``'s for loops step their counter by one below a bound
    (``for (int m = 0; m < n; ++m)``): that ``++m`` cannot overflow, whatever the counter's type."""
    found: set[int] = set()
    for item in plan:
        kind = item[0]
        if kind == "compound":
            found |= _counted_increments(k, item[2])
        elif kind == "if":
            found |= _counted_increments(k, item[3])
            found |= _counted_increments(k, item[4] or [])
        elif kind in ("loop", "do"):
            found |= _counted_increments(k, item[3])
            if item[1].kind.name == "FOR_STMT":
                inc = _counted_increment(k, item[1])
                if inc is not None:
                    found.add(inc)
    return found


def _counted_increment(k, loop) -> int | None:
    """The start of ``loop``'s ``++v`` or ``v++`` when its condition is ``v < bound`` and nothing
    else writes ``v``, else None."""
    children = list(loop.get_children())[:-1]
    if len(children) != 3:
        return None
    cond, inc = _bare(children[1]), _bare(children[2])
    if inc.kind.name != "UNARY_OPERATOR" or cond.kind.name != "BINARY_OPERATOR":
        return None
    (operand,) = list(inc.get_children()) or [None]
    if operand is None:
        return None
    start, end = k.tu.rng(inc)
    cs, ce = k.tu.rng(operand)
    if (k.text[start:cs] + k.text[ce:end]).strip() != "++":
        return None
    lhs, rhs = list(cond.get_children())
    if k.between(lhs, rhs) != "<":
        return None
    var, counted = _bare(lhs), _bare(operand)
    if var.kind.name != "DECL_REF_EXPR" or counted.kind.name != "DECL_REF_EXPR":
        return None
    if var.referenced is None or counted.referenced is None:
        return None
    key = k.tu.off(var.referenced.location)
    if key != k.tu.off(counted.referenced.location):
        return None
    lo, hi = k.tu.rng(children[0])[0], k.tu.rng(children[2])[1]
    if not all(lo <= at < hi for at in k.written.get(key, [])):
        return None
    return start


def _bare(node):
    """``node`` without parentheses and implicit conversions around it."""
    while node.kind.name in ("UNEXPOSED_EXPR", "PAREN_EXPR"):
        children = list(node.get_children())
        if len(children) != 1:
            break
        node = children[0]
    return node


def _shared_decl(k, s) -> bool:
    """A declaration of ``__shared__`` variables only: storage for the block, no access."""
    keys = [k.tu.off(v.location) for v in s.get_children() if v.kind.name == "VAR_DECL"]
    return s.kind.name == "DECL_STMT" and bool(keys) and all(key in k.shared for key in keys)


def _epochs(plan: list, state: frozenset, quiet: dict) -> frozenset:
    """The possible states after ``plan`` from ``state``: True where the epoch so far holds a
    region that may report. Raises _Unordered where a second one may join it."""
    for item in plan:
        kind = item[0]
        if kind == "barrier":
            state = frozenset({False})
        elif kind == "region":
            if not quiet[id(item[1])]:
                if True in state:
                    raise _Unordered
                state = frozenset({True})
        elif kind == "compound":
            state = _epochs(item[2], state, quiet)
        elif kind in ("loop", "do"):
            # Zero or more rounds (a do loop's one round at least is among them): to a fixpoint.
            while True:
                after = state | _epochs(item[3], state, quiet)
                if after == state:
                    break
                state = after
        elif kind == "if":
            then = _epochs(item[3], state, quiet)
            other = _epochs(item[4], state, quiet) if item[4] is not None else state
            state = then | other
    return state


class _Inert:
    """Whether a statement or expression can make no checker report (see the module's comment)."""

    def __init__(self, k, counted: set[int] | frozenset = frozenset()) -> None:
        self.k = k
        self.counted = counted  # the starts of loop counters' increments that cannot overflow

    def node(self, node) -> bool:
        kind = node.kind.name
        children = [ch for ch in node.get_children() if ch.kind.name not in ("TYPE_REF", "NAMESPACE_REF")]
        type_kind = node.type.get_canonical().kind.name
        if type_kind in ("POINTER", "LVALUEREFERENCE", "RVALUEREFERENCE"):
            return False  # pointer arithmetic is checked; a reference may be to memory
        if kind in _LITERALS or kind in ("CXX_UNARY_EXPR", "UNARY_EXPR"):
            return True
        if kind in _TRANSPARENT:
            return all(self.node(ch) for ch in children)
        if kind == "VAR_DECL":
            if type_kind not in SCALAR_KINDS or self.k.tu.off(node.location) in self.k.shared:
                return False
            return all(self.node(ch) for ch in children)
        if kind == "DECL_REF_EXPR":
            return self._name(node)
        if kind == "MEMBER_REF_EXPR" and len(children) == 1:
            if "->" in self.k.text[self.k.tu.rng(children[0])[1] : self.k.tu.rng(node)[1]]:
                return False
            return self.node(children[0])
        if kind in ("BINARY_OPERATOR", "COMPOUND_ASSIGNMENT_OPERATOR") and len(children) == 2:
            return self._binary(node, children, type_kind)
        if kind == "UNARY_OPERATOR" and len(children) == 1:
            start, end = self.k.tu.rng(node)
            cs, ce = self.k.tu.rng(children[0])
            op = (self.k.text[start:cs] + self.k.text[ce:end]).strip()
            if op in ("!", "~", "+"):
                return self.node(children[0])
            if op == "++" and start in self.counted:
                return self.node(children[0])
            if op in ("-", "++", "--"):
                return type_kind in _UNSIGNED_OR_FLOAT and self.node(children[0])
            return False  # * and &: memory
        return False  # calls, subscripts, loops, jumps and the rest

    def _name(self, node) -> bool:
        ref = node.referenced
        if ref is None:
            return False
        if ref.kind.name in ("ENUM_CONSTANT_DECL", "TEMPLATE_NON_TYPE_PARAMETER"):
            return True
        if ref.kind.name not in ("VAR_DECL", "PARM_DECL"):
            return False
        key = self.k.tu.off(ref.location)
        if key in self.k.shared:
            return False
        # A kernel's own local or parameter, or a builtin index (threadIdx, blockIdx, ...):
        # an array named alone is only sizeof's or a subscript's, which are judged themselves.
        return key in self.k.locals or key in self.k.params or not self.k.tu.src.is_user(key)

    def _binary(self, node, children: list, type_kind: str) -> bool:
        op = self.k.between(children[0], children[1])
        if not all(self.node(ch) for ch in children):
            return False
        if op in _PLAIN_BINARY:
            return True
        if op in _OVERFLOWING:
            return type_kind in _UNSIGNED_OR_FLOAT
        if op in _DIVIDING:
            value = self._literal(children[1])
            return value is not None and value > 0
        if op in _SHIFTING:
            value = self._literal(children[1])
            ok = value is not None and 0 <= value < 32
            return ok and (op.startswith(">") or type_kind in _UNSIGNED_OR_FLOAT)
        return False

    def _literal(self, node) -> int | None:
        """The value of an integer literal (through casts and parentheses), else None."""
        while node.kind.name in ("UNEXPOSED_EXPR", "PAREN_EXPR", "CSTYLE_CAST_EXPR"):
            children = [ch for ch in node.get_children() if ch.kind.name != "TYPE_REF"]
            if len(children) != 1:
                return None
            node = children[0]
        if node.kind.name != "INTEGER_LITERAL":
            return None
        start, end = self.k.tu.rng(node)
        try:
            return int(self.k.text[start:end].rstrip("uUlL"), 0)
        except ValueError:
            return None
