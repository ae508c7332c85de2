"""Warp-collective ``wmma`` calls and ``__syncwarp()`` as region boundaries of block loops.

``nvcuda::wmma``'s loads, stores and multiplies (``runtime/include/mma.h``) wait for the warp's
lanes; a kernel that calls them runs with fibers unless each such call is a whole statement that
the whole block reaches in block-uniform control flow, as a ``__syncthreads()`` would be
(``block_loops_analysis.py`` shows that). Then a boundary between two of the block's thread
loops stands in for the warp's wait: every lane of every warp gets there before any goes on,
which orders more than the warp's wait does and so is a schedule a GPU may run.

- ``load_matrix_sync``: a boundary before the call (mma.h waits there); the call opens the next region.
- ``store_matrix_sync``: a boundary before the call and one after it (mma.h waits at both).
- ``mma_sync``: two rounds of the thread loop over that one statement, a boundary between them:
  in the first each lane puts its shares of A and B in its warp's buffer, in the second each
  lane multiplies (``detail::loop_round`` in mma.h says which).
- ``__syncwarp()`` with the full mask, or none: a boundary.

``fill_fragment`` and element loops over ``x[]`` wait for nothing and stay ordinary statements.
A kernel with these boundaries runs as block loops in fast builds only: the checkers keep fibers.
"""

from __future__ import annotations

import re

__all__ = [
    "BOUNDARY_CALLS",
    "REFUSED",
    "boundary_op",
    "hinted_loop",
    "local_type",
    "mma_parts",
    "note_boundary",
    "plan_boundary",
    "plan_jump",
    "statement_end",
    "types_stay_inside",
    "unchanging",
    "uniform_jump",
]

# mma.h's names for the collective calls (the macros load_matrix_sync(...) etc. expand to them).
BOUNDARY_CALLS = {
    "load_matrix_sync_at": "load",
    "store_matrix_sync_at": "store",
    "mma_sync_at": "mma",
    "__syncwarp": "syncwarp",
}
# boundary_op's answer for a call that must keep the kernel on fibers.
REFUSED = "refused"
_ASSIGN = re.compile(r"(?<![=!<>])=(?!=)")
_FULL_MASKS = frozenset(
    {"0xffffffff", "0xFFFFFFFF", "0xffffffffu", "0xFFFFFFFFu", "0xffffffffU", "0xFFFFFFFFU"}
)


def boundary_op(k, node, name: str) -> str | None:
    """The kind of boundary a toolkit call ``node`` of kernel ``k`` is (see the module), or None.

    A ``__syncwarp`` with a mask other than a literal full one is none (it may leave lanes out);
    an ``mma_sync`` whose arguments change something when evaluated is ``REFUSED``.
    """
    op = BOUNDARY_CALLS.get(name)
    if op is None:
        return None
    ref = node.referenced
    if op == "syncwarp":
        # The arguments as written (a default argument has no text of its own).
        args = [k.text[slice(*k.tu.rng(a))].strip() for a in list(node.get_children())[1:]]
        args = [a for a in args if a]
        if args and (len(args) > 1 or args[0] not in _FULL_MASKS):
            return None
    elif ref is None or ref.semantic_parent is None or ref.semantic_parent.spelling != "wmma":
        return None
    elif op == "mma" and not all(unchanging(k, a) for a in list(node.get_children())[1:]):
        return REFUSED  # its two rounds would evaluate the arguments twice
    return op


def note_boundary(k, node, name: str) -> str | None:
    """``boundary_op`` of toolkit call ``node``, recorded in kernel analysis ``k`` when it is a
    boundary: a barrier of its own, whose callee's waits it stands for."""
    op = boundary_op(k, node, name)
    if op is not None and op != REFUSED:
        k.boundaries[k.tu.off(node.extent.start)] = op
        k.barriers.add(k.tu.off(node.extent.start))
        definition = node.referenced.get_definition()
        if definition is not None:
            k.boundary_callees.add(k.tu.off(definition.location))
    return op


def unchanging(k, node) -> bool:
    """Whether evaluating ``node`` again changes nothing: no call, assignment, ``++`` or ``--``."""
    kind = node.kind.name
    if kind in ("CALL_EXPR", "COMPOUND_ASSIGNMENT_OPERATOR", "CXX_NEW_EXPR", "CXX_DELETE_EXPR"):
        return False
    if kind in ("UNARY_OPERATOR", "BINARY_OPERATOR"):
        text = k.text[slice(*k.tu.rng(node))]
        if "++" in text or "--" in text or (kind == "BINARY_OPERATOR" and _ASSIGN.search(text)):
            return False
    return all(unchanging(k, ch) for ch in node.get_children())


def plan_boundary(k, s, op: str, run: list, plan: list, close) -> None:
    """Adds statement ``s`` (a boundary call of kind ``op``) to a plan being built: ``run`` holds
    the statements of the open region, ``close(final)`` ends it."""
    if op == "syncwarp":
        plan.append(("barrier", s))
    elif op == "load":
        plan.append(("barrier", s))
        run.append(s)
    elif op == "store":
        plan.append(("barrier", s))
        run.append(s)
        close(False)
        plan.append(("barrier", s))
    else:  # mma: its own region, run twice
        run.append(s)
        close(False)
        kind, region = plan.pop()
        assert kind == "region"
        plan.append(("wmma_mma", region))


def mma_parts(emitter, region) -> list:
    """The block-loop code of an ``mma_sync`` statement's region: two rounds, a boundary between."""
    path, line = emitter.tu.src.where(region.start)
    escaped = path.replace("\\", "\\\\").replace('"', '\\"')
    site = f'"{escaped}", {line}'
    return [
        f" ::nvcuda::wmma::detail::loop_round(1, {site});",
        *emitter._emit_region(region),
        " ::__sim::block_loop_barrier(*__sim_blk);",
        f" ::nvcuda::wmma::detail::loop_round(2, {site});",
        *emitter._emit_region(region),
        f" ::nvcuda::wmma::detail::loop_round(0, {site});",
    ]


# ---- what the tensor-core samples' kernels need besides: not wmma's own, but in their way --------
_LOCAL_TYPES = frozenset({"TYPEDEF_DECL", "TYPE_ALIAS_DECL"})
_HINTED = frozenset({"FOR_STMT", "WHILE_STMT", "DO_STMT"})


def local_type(node) -> bool:
    """Whether ``node`` declares a type name (``typedef int4 copy_t;``), which a region may hold
    where ``types_stay_inside`` says so."""
    return node.kind.name in _LOCAL_TYPES


def types_stay_inside(k, positions: list[int]) -> bool:
    """Whether each type name declared at ``positions`` lies inside a statement of one region
    (not at the region's top level): its scope is then that statement, copied whole into the
    region's loop, so no other region or per-thread slot can name it."""
    for pos in positions:
        inside = [
            s
            for r in k.regions
            for s in r.stmts
            if k.tu.rng(s)[0] <= pos < k.tu.rng(s)[1] and s.kind.name not in ("DECL_STMT", *_LOCAL_TYPES)
        ]
        if not inside:
            return False
    return True


def uniform_jump(k, s) -> str | None:
    """``"break"`` or ``"continue"`` where ``s`` is ``if (c) break;`` (or ``continue``, braced or
    not, no else): with ``c`` block-uniform it runs once for the block between two regions."""
    children = list(s.get_children())
    if s.kind.name != "IF_STMT" or len(children) != 2 or k.tu.rng(children[0])[0] < 0:
        return None
    then = children[1]
    if then.kind.name == "COMPOUND_STMT":
        inner = list(then.get_children())
        if len(inner) != 1:
            return None
        then = inner[0]
    return {"BREAK_STMT": "break", "CONTINUE_STMT": "continue"}.get(then.kind.name)


def plan_jump(k, s, plan: list, close) -> bool:
    """Adds statement ``s`` to a plan being built (see ``plan_boundary``) when it is a
    ``uniform_jump``: once for the block, between regions, its condition checked as a loop's."""
    jump = uniform_jump(k, s)
    if jump is None:
        return False
    close(False)
    k.headers.append(next(s.get_children()))
    k.jumps += 1
    plan.append(("if", s, next(s.get_children()), [("jump", jump)], None))
    return True


def hinted_loop(k, s):
    """The loop of ``#pragma unroll`` followed by a loop (libclang shows both as one unexposed
    statement), or None. The hint means nothing to a loop that holds a barrier, run for the block."""
    children = list(s.get_children())
    if s.kind.name != "UNEXPOSED_STMT" or len(children) != 1 or children[0].kind.name not in _HINTED:
        return None
    start, end = k.tu.rng(s)
    return children[0] if k.text[start:end].lstrip().startswith("#pragma") else None


def statement_end(text: str, end: int) -> int:
    """``end`` moved past the ``;`` that follows it across white space and line markers, if one
    does: a statement that ends in a macro's expansion (``wmma::mma_sync(...)``) has a line
    marker before its ``;``. (A region's text is copied whole, so the marker stays with it.)"""
    j = end
    while j < len(text):
        if text[j] in " \t\n":
            j += 1
        elif text[j] == "#" and (j == 0 or text[j - 1] == "\n"):
            j = text.find("\n", j)
            j = len(text) if j < 0 else j
        else:
            break
    return j + 1 if j < len(text) and text[j] == ";" else end
