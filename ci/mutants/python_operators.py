"""The mutation operators for the numba kernels (numba-cuda kernels, the twin's shared bodies).

Each operator takes a ``PythonSource`` and returns its mutants, found from the ``ast`` of the
kernel functions only (host code is left alone). They are the CUDA C operators' counterparts where
the Python kernels have the same construct; numba-cuda's simulator has no warp shuffles, so there
are no shuffle operators here, and host copies are numba-cuda's own (not these files').
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from .model import Edit, Mutant
from .python_source import PythonSource

RELATIONAL_SWAP = {ast.Lt: "<=", ast.LtE: "<", ast.Gt: ">=", ast.GtE: ">"}
SYMBOL = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}
ZERO_NAMES = {"zero"}
INFINITE_NAMES = {"inf"}
# Parameters and locals through which a kernel reads a broadcast operand (0 along a broadcast dim).
BROADCAST_STRIDE_PREFIX = "ms"


# --- helpers ------------------------------------------------------------------------------------


def _is_cuda(node: ast.AST, *attrs: str) -> bool:
    """Whether ``node`` is ``cuda.<attr>...`` for one of ``attrs`` (e.g. ``cuda.syncthreads``)."""
    while isinstance(node, ast.Attribute):
        if isinstance(node.value, ast.Name) and node.value.id == "cuda":
            return node.attr in attrs
        node = node.value
    return False


def _is_barrier(stmt: ast.stmt) -> bool:
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Call)
        and _is_cuda(stmt.value.func, "syncthreads")
    )


def _mentions_infinity(node: ast.AST) -> bool:
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and n.id in INFINITE_NAMES:
            return True
        if isinstance(n, ast.Attribute) and n.attr == "inf":
            return True
    return False


def _value_names(fn: ast.FunctionDef) -> set[str]:
    """Names holding data values rather than indices: those set from, or compared with, ±inf
    (a running max, the score it is compared with), and what is assigned from them."""
    names: set[str] = set()
    for n in ast.walk(fn):
        if isinstance(n, ast.Assign) and _mentions_infinity(n.value):
            names |= {t.id for t in n.targets if isinstance(t, ast.Name)}
        elif isinstance(n, ast.Compare) and any(_mentions_infinity(c) for c in [n.left, *n.comparators]):
            names |= {c.id for c in [n.left, *n.comparators] if isinstance(c, ast.Name)}
    changed = True
    while changed:
        changed = False
        for n in ast.walk(fn):
            if isinstance(n, ast.Assign) and any(
                isinstance(c, ast.Name) and c.id in names for c in ast.walk(n.value)
            ):
                new = {t.id for t in n.targets if isinstance(t, ast.Name)} - names
                if new:
                    names |= new
                    changed = True
    return names


def _stride_loops(
    src: PythonSource, fn: ast.FunctionDef
) -> Iterator[tuple[ast.While, str, ast.AST, ast.AugAssign, str]]:
    """``(loop, var, bound, increment, kind)`` of each ``while v < bound: ... v += step`` loop whose
    step is the grid (``cuda.gridDim``, ``cuda.gridsize``) or the block (``cuda.blockDim``)."""
    origin = {}
    for n in ast.walk(fn):
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
            origin[n.targets[0].id] = n.value
    for loop in ast.walk(fn):
        if not isinstance(loop, ast.While) or not isinstance(loop.test, ast.Compare):
            continue
        test = loop.test
        if len(test.ops) != 1 or not isinstance(test.ops[0], ast.Lt) or not isinstance(test.left, ast.Name):
            continue
        var = test.left.id
        for stmt in loop.body:
            if not (isinstance(stmt, ast.AugAssign) and isinstance(stmt.op, ast.Add)):
                continue
            if not (isinstance(stmt.target, ast.Name) and stmt.target.id == var):
                continue
            step = stmt.value
            source = origin.get(step.id, step) if isinstance(step, ast.Name) else step
            if _is_cuda(source, "gridDim", "gridsize") or (
                isinstance(source, ast.Call) and _is_cuda(source.func, "gridsize")
            ):
                yield loop, var, test.comparators[0], stmt, "grid"
            elif _is_cuda(source, "blockDim"):
                yield loop, var, test.comparators[0], stmt, "block"


def _one_trip(src: PythonSource, operator: str, fn: ast.FunctionDef, var: str, bound: ast.AST, inc) -> Mutant:
    return src.replace(operator, fn.name, inc, f"{var} = {src.text(bound)}")


# --- operators ----------------------------------------------------------------------------------


def barrier_removed(src: PythonSource) -> list[Mutant]:
    """Each ``cuda.syncthreads()`` deleted."""
    return [
        src.replace("barrier-removed", fn.name, stmt, "pass")
        for fn in src.kernel_functions()
        for stmt, _ in src.statements(fn)
        if _is_barrier(stmt)
    ]


def barrier_in_branch(src: PythonSource) -> list[Mutant]:
    """Each ``cuda.syncthreads()`` reached by some threads only: moved into the ``if`` just before it
    (one without ``else``), else guarded by a condition half the threads fail."""
    out = []
    for fn in src.kernel_functions():
        for stmt, block in src.statements(fn):
            if not _is_barrier(stmt):
                continue
            index = block.index(stmt)
            previous = block[index - 1] if index > 0 else None
            if isinstance(previous, ast.If) and not previous.orelse:
                inner = previous.body[-1]
                indent = src.indent_of(previous.body[0])
                start, end = src.line_span(stmt)
                insert = src.line_span(inner)[1]
                edits = [Edit(start, end, ""), Edit(insert, insert, f"{indent}{src.text(stmt)}\n")]
                cond = src.text(previous.test)
                original, mutated = f"syncthreads() after if {cond}", f"syncthreads() inside if {cond}"
                out.append(src.mutant("barrier-in-branch", fn.name, edits, original, mutated))
            else:
                guarded = f"if cuda.threadIdx.x % 2 == 0: {src.text(stmt)}"
                out.append(src.replace("barrier-in-branch", fn.name, stmt, guarded))
    return out


def _identity_replacement(value: ast.AST) -> str | None:
    if isinstance(value, ast.Name) and value.id in ZERO_NAMES:
        return "1.0"
    if isinstance(value, ast.Constant) and value.value == 0 and not isinstance(value.value, bool):
        return "1.0"
    if (
        isinstance(value, ast.UnaryOp)
        and isinstance(value.op, ast.USub)
        and _mentions_infinity(value.operand)
    ):
        return "0.0"
    if isinstance(value, ast.Name) and value.id == "start":  # the reduction's own identity
        return "start + 1"
    return None


def _accumulated(fn: ast.FunctionDef, name: str) -> bool:
    """Whether ``name`` is added to later (``+=``) or given to a block-wide tree."""
    for n in ast.walk(fn):
        if isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name) and n.target.id == name:
            return True
        if isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in n.targets):
            if any(isinstance(c, ast.Name) and c.id == name for c in ast.walk(n.value)):
                return True  # acc = combine(acc, ...)
            if isinstance(n.value, ast.Name):
                return True  # best = v inside a loop
    return False


def reduction_identity(src: PythonSource) -> list[Mutant]:
    """The start value of each reduction: an accumulator's 0 becomes 1, its -inf becomes 0, and a
    reduction's given identity ``start`` is off by one."""
    out = []
    for fn in src.kernel_functions():
        for stmt, _ in src.statements(fn):
            if not (
                isinstance(stmt, ast.Assign)
                and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name)
            ):
                continue
            new = _identity_replacement(stmt.value)
            if new is not None and _accumulated(fn, stmt.targets[0].id):
                out.append(src.replace("reduction-identity", fn.name, stmt.value, new))
    return out


def bounds_guard(src: PythonSource) -> list[Mutant]:
    """Each comparison of an index with a size: ``<`` and ``<=`` swapped, as ``>`` and ``>=``
    (comparisons of data values, marked by their ±inf, are left alone)."""
    out = []
    for fn in src.kernel_functions():
        values = _value_names(fn)
        for cmp in ast.walk(fn):
            if (
                not isinstance(cmp, ast.Compare)
                or len(cmp.ops) != 1
                or type(cmp.ops[0]) not in RELATIONAL_SWAP
            ):
                continue
            operands = [cmp.left, *cmp.comparators]
            if any(_mentions_infinity(o) for o in operands):
                continue
            if any(isinstance(n, ast.Name) and n.id in values for o in operands for n in ast.walk(o)):
                continue
            op = type(cmp.ops[0])
            lhs, rhs = src.text(cmp.left), src.text(cmp.comparators[0])
            out.append(src.replace("bounds-guard", fn.name, cmp, f"{lhs} {RELATIONAL_SWAP[op]} {rhs}"))
    return out


def block_stride(src: PythonSource) -> list[Mutant]:
    """Each loop over a block's threads: one trip only, or strided by a warp (32) instead of the block."""
    out = []
    for fn in src.kernel_functions():
        for _, var, bound, inc, kind in _stride_loops(src, fn):
            if kind == "block":
                out.append(_one_trip(src, "block-stride", fn, var, bound, inc))
                out.append(src.replace("block-stride", fn.name, inc.value, "32"))
    return out


def grid_stride(src: PythonSource) -> list[Mutant]:
    """Each grid-stride loop run once: a block (or thread) handles one item."""
    return [
        _one_trip(src, "grid-stride", fn, var, bound, inc)
        for fn in src.kernel_functions()
        for _, var, bound, inc, kind in _stride_loops(src, fn)
        if kind == "grid"
    ]


def shared_extent(src: PythonSource) -> list[Mutant]:
    """Each ``cuda.shared.array`` one element short (its last dim)."""
    out = []
    for fn in src.kernel_functions():
        for call in ast.walk(fn):
            if isinstance(call, ast.Call) and _is_cuda(call.func, "shared") and call.args:
                shape = call.args[0]
                last = shape.elts[-1] if isinstance(shape, ast.Tuple) else shape
                out.append(src.replace("shared-extent", fn.name, last, f"{src.text(last)} - 1"))
    return out


def _is_size_one_test(node: ast.AST) -> bool:
    """``shape[k] != 1`` or ``shape[k] == 1``: the test for a broadcast (size-1) dim."""
    return (
        isinstance(node, ast.Compare)
        and len(node.ops) == 1
        and isinstance(node.ops[0], ast.NotEq | ast.Eq)
        and isinstance(node.left, ast.Subscript)
        and isinstance(node.comparators[0], ast.Constant)
        and node.comparators[0].value == 1
    )


def broadcast_index(src: PythonSource) -> list[Mutant]:
    """The index of a broadcast dim: a broadcast stride taken as 1, the size-1 test dropped (the dim
    read as if full), or a broadcast operand's dims aligned from the left instead of the right."""
    out = []
    for fn in src.kernel_functions():
        loop_vars = {
            n.target.id for n in ast.walk(fn) if isinstance(n, ast.For) and isinstance(n.target, ast.Name)
        }
        for node in ast.walk(fn):
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
                for stride, index in ((node.right, node.left), (node.left, node.right)):
                    if isinstance(stride, ast.Name) and stride.id.startswith(BROADCAST_STRIDE_PREFIX):
                        out.append(src.replace("broadcast-index", fn.name, node, src.text(index)))
                        break
            elif isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And) and len(node.values) == 2:
                for i, value in enumerate(node.values):
                    if _is_size_one_test(value):
                        out.append(
                            src.replace("broadcast-index", fn.name, node, src.text(node.values[1 - i]))
                        )
            elif isinstance(node, ast.IfExp) and _is_size_one_test(node.test):
                kept = node.orelse if isinstance(node.test.ops[0], ast.Eq) else node.body
                out.append(src.replace("broadcast-index", fn.name, node, src.text(kept)))
            elif (
                isinstance(node, ast.Assign)
                and isinstance(node.value, ast.BinOp)
                and isinstance(node.value.op, ast.Sub)
                and isinstance(node.value.left, ast.Name)
                and node.value.left.id in loop_vars
            ):
                out.append(src.replace("broadcast-index", fn.name, node.value, node.value.left.id))
    return out


def _leftmost(node: ast.AST) -> ast.AST:
    while isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub):
        node = node.left
    return node


def launch_grid_rounding(src: PythonSource) -> list[Mutant]:
    """Each rounded-up tile count (``(n + t - 1) // t``) rounded down instead."""
    out = []
    for fn in src.kernel_functions():
        for node in ast.walk(fn):
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.FloorDiv):
                top = node.left
                if isinstance(top, ast.BinOp) and isinstance(top.op, ast.Add | ast.Sub):
                    first = _leftmost(top)
                    # The parentheses around the sum are part of the text to replace.
                    start, _ = src.span(node)
                    end = src.data.index(b")", src.span(top)[1]) + 1
                    text = src.data[start:end].decode()
                    out.append(
                        src.mutant(
                            "launch-grid-rounding",
                            fn.name,
                            [Edit(start, end, src.text(first))],
                            text,
                            src.text(first),
                        )
                    )
    return out
