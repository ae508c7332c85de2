"""What a block-loop region that stores no thread index (``Region.simd``) needs to vectorise.

Such a region's loop (``for_each_plain_thread`` with a body taking ``threadIdx`` as a parameter,
``runtime/block_loops.h``) runs the threads of a row as adjacent iterations. Three things kept g++
from turning it into SIMD code, and the emitter (``block_loops.py``) answers each from here:

* A column index such as ``const int col = blockIdx.x * TILE + tx;`` is an unsigned sum converted
  to int: g++ cannot show that it does not wrap from thread to thread (it need not: with
  ``gridDim.x`` up to 2^31 - 1, ``blockIdx.x * TILE`` may pass INT_MAX and UINT_MAX), so the loads
  and stores at it are one per thread. For a local computed again in such a region whose
  initializer is ``U + X``, ``U`` block-uniform and ``X`` the thread's ``threadIdx.x`` (``narrow``),
  ``(int)(U + X)`` is ``(int)U + X`` exactly when ``(int)U + X`` does not pass INT_MAX, which
  holds for the whole block when ``(int)U <= INT_MAX - 1023`` (``X`` is below 1,024, the largest
  block's width), since the conversion is modular. The region's loop checks that once per block
  and runs the second form there, a signed sum g++ takes not to wrap, and the first elsewhere, so
  an index that wraps wraps as in CUDA. Such a local the region declares itself gets the same
  form (``narrow_declared``: a barrier-free kernel's one region, ``block_loops_plain.py``).
* A short loop of constant trip count inside the region (a tile's ``for (k = 0; k < 16; ++k)``)
  stays a loop at ``-O2`` (g++ unrolls such a loop completely before vectorising only at ``-O3``),
  so the thread loop around it is not the innermost one and needs run-time alias checks g++ does
  not make for an outer loop. ``unroll_hints`` names those loops, and the emitter puts
  ``#pragma GCC unroll N`` before each: unrolling changes no result.
* A region that is one ``if (X < S)`` (a tree reduction's ``if (t < s) sm[t] += sm[t + s];``)
  is a loop with a branch g++ does not if-convert. Only the threads of a row with ``x < S`` do
  anything in it (``below``): the loop runs those alone and takes the condition as true. So with
  a region that declares such column indices then is one ``if (V < S)``, ``V`` one of them (an
  elementwise kernel's ``if (i < n)``), whose threads with ``x < S - (int)U`` alone do anything
  where the check passed (``below_index``).

The fast forms are a fast build's only: the checkers' builds run the kernel's own code. The
shared-memory race check's loop takes a prefix region's bound as well (``kPrefixBound``,
``runtime/block_loops.h``): it runs the threads below it, each evaluating the condition, and
skips the others, which make no access there; memcheck's takes a bound that is a name or a literal
(``kPrefixBelow``), whose evaluation nothing checks, and still counts the threads past it in the
fibers' order.
"""

from __future__ import annotations

import re

from .block_loops_threads import bare

__all__ = ["MAX_UNROLL", "NARROW_LIMIT", "below", "below_index", "narrow", "narrow_declared", "unroll_hints"]

# ``(int)U`` at most this, ``(int)U + threadIdx.x`` cannot pass INT_MAX (threadIdx.x <= 1,023).
NARROW_LIMIT = "2147483647 - 1023"

# The longest constant trip count whose loop gets an unroll hint: a 32-wide tile's loop.
MAX_UNROLL = 32
_COUNTED = re.compile(
    r"for\s*\(\s*(?:(?:const\s+)?(?:unsigned\s+int|unsigned|int|long|size_t)\s+)?(?P<v>[A-Za-z_]\w*)\s*=\s*"
    r"(?P<lo>\d+)\s*;\s*(?P=v)\s*(?P<op><=?)\s*(?:(?P<hi>\d+)[uU]?|(?P<param>[A-Za-z_]\w*))\s*;\s*"
    r"(?:\+\+\s*(?P=v)|(?P=v)\s*\+\+|(?P=v)\s*\+=\s*1)\s*\)"
)


def _row_index(k, node) -> bool:
    """Whether ``node`` is the thread's ``threadIdx.x``: as such, or a local computed again in
    each region from ``threadIdx.x`` alone (``const int tx = threadIdx.x;``)."""
    node = bare(node)
    if node.kind.name == "MEMBER_REF_EXPR" and node.spelling == "x":
        children = list(node.get_children())
        return len(children) == 1 and k._thread_index(children[0])
    if node.kind.name != "DECL_REF_EXPR" or node.referenced is None:
        return False
    key = k.tu.off(node.referenced.location)
    if key not in k.recomputed:
        return False
    var, init = k.recomputed[key]
    return var.type.get_canonical().kind.name in ("INT", "UINT") and _row_index(k, init)


def narrow(k, key: int):
    """``(U, X)``, the cursors of the initializer ``U + X`` of recomputed local ``key`` of
    ``KernelAnalysis`` ``k`` when it is an int whose initializer is an unsigned int sum of a
    block-uniform ``U`` and the thread's ``threadIdx.x`` ``X`` (either order); else None."""
    var, init = k.recomputed[key]
    if var.type.get_canonical().kind.name != "INT":
        return None
    node = bare(init)
    children = list(node.get_children())
    if (
        node.kind.name != "BINARY_OPERATOR"
        or len(children) != 2
        or node.type.get_canonical().kind.name != "UINT"
        or k.between(children[0], children[1]) != "+"
    ):
        return None
    for u, x in (children, children[::-1]):
        if _row_index(k, x) and k._uniform(u):
            return u, x
    return None


def narrow_declared(k, region, outside: set[int]) -> dict:
    """The column indices ``region`` declares itself, at its top level (not in its statements of
    ``outside``): key -> ``(U, X)`` as ``narrow`` gives them, for a local of ``k.recomputed``
    (computed only from what the block shares and ``threadIdx``, so its initializer may be
    rewritten as a recomputed one's). A barrier-free kernel's one region declares its index so."""
    found: dict = {}
    for s in region.stmts:
        if id(s) in outside or s.kind.name != "DECL_STMT":
            continue
        for var in s.get_children():
            key = k.tu.off(var.location)
            if var.kind.name == "VAR_DECL" and key in k.recomputed and (uv := narrow(k, key)) is not None:
                found[key] = uv
    return found


def _reads_memory(node) -> bool:
    """Whether expression ``node`` may read memory or call a function (a subscript, a ``*``, a
    ``->``, a call): a thread that does not run it then would not fault where it would have."""
    for n in node.walk_preorder():
        kind = n.kind.name
        if kind in ("ARRAY_SUBSCRIPT_EXPR", "CALL_EXPR", "CXX_NEW_EXPR"):
            return True
        if kind in ("UNARY_OPERATOR", "MEMBER_REF_EXPR"):
            tokens = [tok.spelling for tok in n.get_tokens()]
            if (kind == "UNARY_OPERATOR" and tokens[:1] == ["*"]) or "->" in tokens:
                return True
    return False


def _less_than(k, cond):
    """The two sides of condition ``cond`` (bare) when it is ``A < B``, else None."""
    node = bare(cond)
    children = list(node.get_children())
    if node.kind.name != "BINARY_OPERATOR" or len(children) != 2:
        return None
    if k.between(children[0], children[1]) != "<":
        return None
    return bare(children[0]), bare(children[1])


def below(k, region, outside: set[int], again: list[int]):
    """``(condition, S)`` when ``region``'s statements are one ``if (X < S) ...`` without ``else``,
    ``X`` the thread's ``threadIdx.x`` as an int and ``S`` a block-uniform int, and the locals it
    computes again first (``again``) read no memory: only the threads of a row with ``x < S`` then
    do anything, so that its loop may run them alone and take the condition as true. Else None."""
    stmts = [s for s in region.stmts if id(s) not in outside]
    if len(stmts) != 1 or stmts[0].kind.name != "IF_STMT" or len(list(stmts[0].get_children())) != 2:
        return None
    cond = next(stmts[0].get_children())
    if (sides := _less_than(k, cond)) is None:
        return None
    x, s = sides
    if not (_row_index(k, x) and k._uniform(s)) or any(
        c.type.get_canonical().kind.name != "INT" for c in (x, s)
    ):
        return None
    if any(_reads_memory(k.recomputed[key][1]) for key in again):
        return None
    return cond, s


def below_index(k, region, outside: set[int], again: list[int], narrowed: dict):
    """``(condition, S, U)`` when ``region``'s statements are declarations of the column indices it
    narrows (``narrowed``: key -> ``(U, X)``, as ``narrow`` gives them) then one ``if (V < S)``
    without ``else``, ``V`` such an index, ``S`` a block-uniform int, and the locals it computes
    again first (``again``) read no memory. Where the block's check passed, ``V`` is ``(int)U + x``
    exactly, so only the threads of a row with ``x < S - (int)U`` do anything (the declarations
    have no effect): its loop may run them alone and take the condition as true, as ``below``'s
    does (an elementwise kernel's ``if (i < n)``). Else None."""
    stmts = [s for s in region.stmts if id(s) not in outside]
    if len(stmts) < 1 or stmts[-1].kind.name != "IF_STMT" or len(list(stmts[-1].get_children())) != 2:
        return None
    for s in stmts[:-1]:
        vars_ = list(s.get_children())
        if (
            s.kind.name != "DECL_STMT"
            or not vars_
            or any(k.tu.off(v.location) not in narrowed for v in vars_)
        ):
            return None
    cond = next(stmts[-1].get_children())
    if (sides := _less_than(k, cond)) is None:
        return None
    v, s = sides
    ref = v.referenced if v.kind.name == "DECL_REF_EXPR" else None
    key = k.tu.off(ref.location) if ref is not None else None
    if key not in narrowed or not k._uniform(s) or s.type.get_canonical().kind.name != "INT":
        return None
    if any(_reads_memory(k.recomputed[a][1]) for a in again):
        return None
    return cond, s, narrowed[key][0]


def _template_constant(loop, name: str) -> bool:
    """Whether ``name`` in the header of ``loop`` is a template's non-type parameter (``k < BS``)."""
    for node in loop.walk_preorder():
        if node.kind.name == "DECL_REF_EXPR" and node.spelling == name:
            ref = node.referenced
            return ref is not None and ref.kind.name == "TEMPLATE_NON_TYPE_PARAMETER"
    return False


def unroll_hints(k, region, outside: set[int]) -> dict[int, int]:
    """The loops of ``region`` (of ``KernelAnalysis`` ``k``; not those of its statements in
    ``outside``) that get ``#pragma GCC unroll``: start offset -> trip count. A ``for`` statement
    of a block (a compound statement, or the region itself) whose header counts a variable by one
    from a constant to a constant, at most ``MAX_UNROLL`` times, or to a template's non-type
    parameter (``MAX_UNROLL``: unrolled completely in an instantiation that counts no further)."""
    hints: dict[int, int] = {}
    tu = k.tu

    def visit(node, in_block: bool) -> None:
        kind = node.kind.name
        if kind == "FOR_STMT" and in_block:
            start, end = tu.rng(node)
            m = _COUNTED.match(k.text, start, end)
            if m is not None and m["hi"] is not None:
                count = int(m["hi"]) - int(m["lo"]) + (m["op"] == "<=")
                if 1 < count <= MAX_UNROLL:
                    hints[start] = count
            elif m is not None and _template_constant(node, m["param"]):
                # A count each instantiation fixes: unrolled completely where it is at most the hint.
                hints[start] = MAX_UNROLL
        # A hinted loop (``#pragma unroll`` then the loop) stands where its statement does.
        block = kind == "COMPOUND_STMT" or (kind == "UNEXPOSED_STMT" and in_block)
        for child in node.get_children():
            visit(child, block)

    for s in region.stmts:
        if id(s) not in outside:
            visit(s, True)
    return hints
