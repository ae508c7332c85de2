"""Warp shuffles and votes as two lockstep rounds of a block-loop kernel's thread loop.

A ``__shfl_sync``, ``__shfl_up_sync``, ``__shfl_down_sync``, ``__shfl_xor_sync``,
``__ballot_sync``, ``__any_sync`` or ``__all_sync`` waits for its warp's lanes, so a kernel that
calls one ran with fibers. Where the call has the full mask written as a literal, arguments whose
evaluation changes nothing, and is evaluated whenever its statement runs (not under ``?:``, ``&&``
or ``||``), and that statement (a declaration or an expression, one such call in it) is reached by
the whole block in block-uniform control flow, as a ``__syncthreads()`` would be
(``block_loops_analysis.py`` shows that), the statement becomes an *exchange*:

- a region boundary before it;
- round 1: a loop over the block's threads that evaluates the call alone, which calls a local of
  the call's name that the region declares (``runtime/block_loops_warps.h``), keeping the
  thread's operands in the worker's exchange (``runtime/warp_exchange.cpp``);
- a boundary;
- round 2: the statement as a region of its own, whose local of that name returns the thread's
  result, computed from its warp's operands of round 1 as fibers compute it.

Every lane of a warp has then put its operand before any lane reads one, as the warp's wait
orders them; the boundaries order more than that wait, a schedule a GPU may run. A kernel with an
exchange runs as block loops in fast builds only: the checkers keep fibers.
"""

from __future__ import annotations

from .block_loops_wmma import unchanging
from .syntax_device import wait_what

__all__ = ["EXCHANGES", "exchange_declaration", "note_exchange", "plan_exchange", "statement_exchange"]

# The warp operations an exchange takes (sim_intrinsics.h defines each through warp_op), and
# their kinds (runtime/sim_device.h's WarpKind).
EXCHANGES = {
    "__shfl_sync": "kShflIdx",
    "__shfl_up_sync": "kShflUp",
    "__shfl_down_sync": "kShflDown",
    "__shfl_xor_sync": "kShflXor",
    "__ballot_sync": "kBallot",
    "__any_sync": "kAny",
    "__all_sync": "kAll",
}
_VOTES = frozenset({"__ballot_sync", "__any_sync", "__all_sync"})
# The value types of the shuffles sim_intrinsics.h defines (runtime/block_loops_warps.h's too).
_SHUFFLED = frozenset(
    {"int", "unsigned int", "long", "unsigned long", "long long", "unsigned long long", "float", "double"}
)
_FULL = 0xFFFFFFFF
_CONDITIONAL = frozenset({"&&", "||"})


def _full_mask(text: str) -> bool:
    """Whether ``text`` is an integer literal (a macro's expansion included) of all 32 lanes."""
    t = text.strip()
    while t.startswith("(") and t.endswith(")"):
        t = t[1:-1].strip()
    t = t.rstrip("uUlL")
    try:
        return int(t, 0) == _FULL
    except ValueError:
        return False


def note_exchange(k, node, name: str) -> bool:
    """Records toolkit call ``node`` of kernel analysis ``k`` as an exchange (a barrier of its own)
    when it is one of ``EXCHANGES``; raises the analysis's ``Fallback`` where such a call cannot be
    one. False for any other call."""
    from .block_loops_analysis import Fallback

    if name not in EXCHANGES:
        return False
    children = list(node.get_children())
    args = children[1:]
    # Each round's region declares a local of the call's name, which only an unqualified call names.
    if not children or k.text[slice(*k.tu.rng(children[0]))].strip() != name:
        raise Fallback(f"{wait_what(name)} not called by its bare name", node)
    params = list(node.referenced.get_arguments()) if node.referenced is not None else []
    if name not in _VOTES and (len(params) < 2 or params[1].type.get_canonical().spelling not in _SHUFFLED):
        raise Fallback(f"{wait_what(name)} of a type the block loops do not exchange", node)
    if not args or not _full_mask(k.text[slice(*k.tu.rng(args[0]))]):
        raise Fallback(f"{wait_what(name)} whose mask is not a literal full mask (0xffffffff)", node)
    if not all(unchanging(k, a) for a in args):
        raise Fallback(f"{wait_what(name)} whose arguments change something when evaluated", node)
    start = k.tu.off(node.extent.start)
    k.exchanges[start] = (node, name)
    k.barriers.add(start)
    return True


def statement_exchange(k, s):
    """The exchange call of statement ``s``, when ``s`` is a declaration or an expression holding
    exactly one exchange and no other barrier, evaluated whenever ``s`` runs; else None. Raises
    ``Fallback`` for such a statement whose exchange only some evaluations of it reach."""
    from .block_loops_analysis import Fallback

    if s.kind.name.endswith("_STMT") and s.kind.name != "DECL_STMT":
        return None
    start, end = k.tu.rng(s)
    inside = [b for b in k.barriers if start <= b < end]
    if not any(b in k.exchanges for b in inside):
        return None
    if len(inside) != 1:
        raise Fallback("a statement with a warp shuffle or vote and another wait", s)
    call, name = k.exchanges[inside[0]]
    if _conditional_path(k, s, call):
        raise Fallback(f"{wait_what(name)} evaluated under a condition within its statement", call)
    # The first round copies the call's text alone: an edit of an expression around it (a shift
    # of its result, ``__shfl_down_sync(m, v, 1) << 4``) would not be rendered inside that text.
    cs, ce = k.tu.rng(call)
    if any(start <= e.start <= cs and ce <= e.end and (e.start, e.end) != (cs, ce) for e in k.tu.edits):
        raise Fallback(f"{wait_what(name)} inside an expression the build rewrites", call)
    return call


def _conditional_path(k, node, call) -> bool:
    """Whether ``call`` lies under a ``?:``, ``&&`` or ``||`` within ``node``."""
    if node == call:
        return False
    cs = k.tu.off(call.extent.start)
    for ch in node.get_children():
        a, b = k.tu.rng(ch)
        if not a <= cs < b:
            continue
        kind = node.kind.name
        if kind == "CONDITIONAL_OPERATOR":
            return True
        if kind == "BINARY_OPERATOR":
            children = list(node.get_children())
            if len(children) == 2 and k.between(*children) in _CONDITIONAL:
                return True
        return _conditional_path(k, ch, call)
    return False


def plan_exchange(k, s, call, plan: list, region_of) -> None:
    """Adds statement ``s`` with exchange ``call`` to a plan being built: round 1 over the call,
    a barrier, and round 2 over the statement (``region_of(stmts, start, end)`` makes a region)."""
    start, end = k.tu.rng(call)
    name = k.exchanges[k.tu.off(call.extent.start)][1]
    kind = f"::__sim::{EXCHANGES[name]}"
    put = region_of([call], start, end)
    put.closing = ";"
    put.shadow = (
        f" const ::__sim::{'ExchangeVotePut' if name in _VOTES else 'ExchangePut'}<{kind}> {name}{_ROUND};"
    )
    take = region_of([s], k.tu.rng(s)[0], None)
    take.shadow = (
        f" const ::__sim::{'ExchangeVote' if name in _VOTES else 'ExchangeTake'}<{kind}> {name}{_ROUND};"
    )
    plan.append(("region", put))
    plan.append(("barrier", s))
    plan.append(("region", take))


# A round's local of the call's name: the block's exchange (``exchange_declaration``) and block.
_ROUND = "{{__sim_exchange, *__sim_blk}}"


def exchange_declaration(k) -> list[str]:
    """The block-loop body's declaration of the worker's exchange, where kernel ``k`` has one."""
    if not k.exchanges:
        return []
    dim = "(int)(__sim_blk->dim.x * __sim_blk->dim.y * __sim_blk->dim.z)"
    return [f" ::__sim::WarpOperand* const __sim_exchange = ::__sim::warp_exchange_buffer({dim});"]
