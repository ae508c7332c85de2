"""The mutation operators for CUDA C, each finding its sites in a libclang-parsed file.

Every operator takes a ``CudaSource`` and returns its mutants, one per site (or a few, when one
site has more than one realistic bug). Sites are found from the syntax tree: the calls by name
(``__syncthreads``, ``__shfl_*_sync``, ``cudaMemcpy``), comparisons and loops by kind and by the
types libclang gives their operands, launches by their ``<<<...>>>`` configuration.
"""

from __future__ import annotations

from collections.abc import Iterator

from .cuda_source import CudaSource, Function
from .model import Edit, Mutant

BARRIER = "__syncthreads"
SHUFFLES = ("__shfl_xor_sync", "__shfl_down_sync", "__shfl_up_sync", "__shfl_sync")
RELATIONAL_SWAP = {"<": "<=", "<=": "<", ">": ">=", ">=": ">"}
ZERO_LITERALS = {"0", "0.0", "0.0f", "0.f"}
INFINITE_LITERALS = {"INFINITY", "-INFINITY"}
COPY_KIND_SWAP = {
    "cudaMemcpyHostToDevice": "cudaMemcpyDeviceToHost",
    "cudaMemcpyDeviceToHost": "cudaMemcpyHostToDevice",
}
# Parameters through which a kernel reads a broadcast operand: a stride that is 0 along a
# broadcast dim (the attention mask's msb, msh, msq, msk).
BROADCAST_STRIDE_PREFIX = "ms"
ONE_FLOAT = "sizeof(float)"
# What clang lowers a launch's <<<grid, block, shared, stream>>> to: the first for a toolkit from
# 9.2 on, the second where it finds none (the parse names no toolkit; see cuda_source.parse_args).
LAUNCH_CONFIG_CALLS = ("__cudaPushCallConfiguration", "cudaConfigureCall")


# --- helpers ------------------------------------------------------------------------------------


def _functions(src: CudaSource, device: bool) -> list[Function]:
    return [f for f in src.functions() if f.device == device]


def _cursors(src: CudaSource, fn: Function, kind: str) -> Iterator:
    for c in src.walk(fn.cursor):
        if c.kind.name == kind and src.in_file(c):
            yield c


def _calls(src: CudaSource, fn: Function, names: tuple[str, ...]) -> Iterator:
    for c in _cursors(src, fn, "CALL_EXPR"):
        if c.spelling in names:
            yield c


def _explicit_args(src: CudaSource, call) -> list:
    """The arguments written in the call (default arguments have no extent of their own)."""
    start, end = src.span(call)
    return [a for a in call.get_arguments() if start <= a.extent.start.offset < a.extent.end.offset <= end]


def _same(a, b) -> bool:
    """Whether two cursors are the same (libclang cursors refuse comparison with None)."""
    return a is not None and b is not None and a == b


def _decl_of(src: CudaSource, cursor):
    """The declaration a (possibly wrapped) name refers to, or None."""
    stripped = src.strip(cursor)
    return stripped.referenced if stripped.kind.name == "DECL_REF_EXPR" else None


def _local_init(src: CudaSource, fn: Function, decl):
    """The initializer of local variable ``decl`` in ``fn`` (its last child), or None."""
    for c in _cursors(src, fn, "VAR_DECL"):
        if _same(c, decl):
            children = list(c.get_children())
            return children[-1] if children and children[-1].kind.is_expression() else None
    return None


def _mentions(src: CudaSource, fn: Function, cursor, word: str) -> bool:
    """Whether ``cursor``'s text, or the initializer of a local it names, mentions ``word``."""
    if word in src.text(cursor):
        return True
    decl = _decl_of(src, cursor)
    init = _local_init(src, fn, decl) if decl is not None else None
    return init is not None and word in src.text(init)


def _for_parts(loop) -> tuple | None:
    """``(init, cond, inc, body)`` of a for statement that has all four, else None."""
    children = list(loop.get_children())
    return tuple(children) if len(children) == 4 else None


def _stride_loops(src: CudaSource, fn: Function) -> Iterator[tuple[object, object, object, object, str]]:
    """``(loop, var_ref, bound, step, kind)`` of each ``for (...; v < bound; v += step)`` loop."""
    for loop in _cursors(src, fn, "FOR_STMT"):
        parts = _for_parts(loop)
        if parts is None:
            continue
        _, cond, inc, _ = parts
        if inc.kind.name != "COMPOUND_ASSIGNMENT_OPERATOR" or src.operator(inc) != "+=":
            continue
        if cond.kind.name != "BINARY_OPERATOR" or src.operator(cond) != "<":
            continue
        var, step = list(inc.get_children())
        bound = list(cond.get_children())[1]
        if _mentions(src, fn, step, "gridDim"):
            yield loop, var, bound, step, "grid"
        elif _mentions(src, fn, step, "blockDim"):
            yield loop, var, bound, step, "block"


def _one_trip(src: CudaSource, operator: str, fn: Function, loop, var, bound) -> Mutant:
    """The loop's increment jumps to its bound: every thread (or block) runs one trip only."""
    inc = _for_parts(loop)[2]
    return src.replace(operator, fn.name, inc, f"{src.text(var)} = {src.text(bound)}")


def _shuffle_loop(src: CudaSource, fn: Function, call):
    """The for loop whose variable is ``call``'s lane offset, or None."""
    args = _explicit_args(src, call)
    decl = _decl_of(src, args[2]) if len(args) >= 3 else None
    if decl is None:
        return None
    for loop in _cursors(src, fn, "FOR_STMT"):
        parts = _for_parts(loop)
        if parts is None or not (src.span(loop)[0] <= src.span(call)[0] < src.span(loop)[1]):
            continue
        declared = [c for c in src.walk(parts[0]) if c.kind.name == "VAR_DECL"]
        if decl in declared:
            return loop
    return None


# --- operators ----------------------------------------------------------------------------------


def barrier_removed(src: CudaSource) -> list[Mutant]:
    """Each ``__syncthreads()`` deleted."""
    return [
        src.replace("barrier-removed", fn.name, call, "(void)0")
        for fn in _functions(src, device=True)
        for call in _calls(src, fn, (BARRIER,))
    ]


def barrier_in_branch(src: CudaSource) -> list[Mutant]:
    """Each ``__syncthreads()`` reached by some threads only: moved into the ``if`` just before it
    (where one ends right before it), else guarded by a condition half the threads fail."""
    out = []
    for fn in _functions(src, device=True):
        for call, parents in src.walk_with_parents(fn.cursor):
            if call.kind.name != "CALL_EXPR" or call.spelling != BARRIER or not parents:
                continue
            block = parents[-1]
            siblings = list(block.get_children()) if block.kind.name == "COMPOUND_STMT" else []
            index = siblings.index(call) if call in siblings else -1
            previous = siblings[index - 1] if index > 0 else None
            branch = list(previous.get_children()) if previous is not None else []
            if previous is not None and previous.kind.name == "IF_STMT" and len(branch) == 2:
                then = branch[1]
                if then.kind.name == "COMPOUND_STMT":
                    cond = src.text(branch[0])
                    start = src.span(call)[0]
                    stop = src.statement_end(call)
                    close = src.span(then)[1] - 1  # the then-block's closing brace
                    edits = [Edit(start, stop, ""), Edit(close, close, f"{BARRIER}();\n")]
                    out.append(
                        src.mutant(
                            "barrier-in-branch",
                            fn.name,
                            edits,
                            f"{BARRIER}() after if ({cond})",
                            f"{BARRIER}() inside if ({cond})",
                        )
                    )
                    continue
            guarded = f"if (threadIdx.x % 2 == 0) {BARRIER}()"
            out.append(src.replace("barrier-in-branch", fn.name, call, guarded))
    return out


def shuffle_offset(src: CudaSource) -> list[Mutant]:
    """The lane offsets of a shuffle loop: the first offset halved, or the last step (offset 1) left out."""
    out = []
    seen = set()
    for fn in _functions(src, device=True):
        for call in _calls(src, fn, SHUFFLES):
            loop = _shuffle_loop(src, fn, call)
            if loop is None or src.span(loop) in seen:
                continue
            seen.add(src.span(loop))
            init, cond, _, _ = _for_parts(loop)
            literals = [c for c in src.walk(init) if c.kind.name == "INTEGER_LITERAL"]
            if literals:
                first = literals[0]
                value = int(src.text(first), 0)
                out.append(src.replace("shuffle-offset", fn.name, first, str(value // 2)))
            ends = [c for c in cond.get_children() if src.strip(c).kind.name == "INTEGER_LITERAL"]
            if ends and src.text(ends[-1]) == "0" and src.operator(cond) == ">":
                out.append(src.replace("shuffle-offset", fn.name, ends[-1], "1"))
    return out


def shuffle_width(src: CudaSource) -> list[Mutant]:
    """Each shuffle over half a warp: a width of 16 added (or a given width halved)."""
    out = []
    for fn in _functions(src, device=True):
        for call in _calls(src, fn, SHUFFLES):
            args = _explicit_args(src, call)
            if len(args) == 4:
                width = args[3]
                out.append(src.replace("shuffle-width", fn.name, width, f"({src.text(width)}) / 2"))
            elif len(args) == 3:
                close = src.span(call)[1] - 1
                text = src.text(call)
                out.append(
                    src.mutant(
                        "shuffle-width", fn.name, [Edit(close, close, ", 16")], text, text[:-1] + ", 16)"
                    )
                )
    return out


def shuffle_mask(src: CudaSource) -> list[Mutant]:
    """Each shuffle's member mask naming half the warp (lanes 0-15) while every lane calls it."""
    return [
        src.replace("shuffle-mask", fn.name, _explicit_args(src, call)[0], "0x0000ffffu")
        for fn in _functions(src, device=True)
        for call in _calls(src, fn, SHUFFLES)
    ]


def _identity_replacement(text: str) -> str | None:
    if text in ZERO_LITERALS:
        return "1.0f"
    if text in INFINITE_LITERALS:
        return "0.0f"
    return None


def _accumulated(src: CudaSource, fn: Function, decl) -> bool:
    """Whether local ``decl`` is updated after its declaration (``op=``, ``=`` or its address taken)."""
    for c in src.walk(fn.cursor):
        kind = c.kind.name
        if kind in ("COMPOUND_ASSIGNMENT_OPERATOR", "BINARY_OPERATOR") and (
            kind == "COMPOUND_ASSIGNMENT_OPERATOR" or src.operator(c) == "="
        ):
            if _same(_decl_of(src, next(iter(c.get_children()))), decl):
                return True
        elif kind == "UNARY_OPERATOR" and src.text(c).startswith("&"):
            children = list(c.get_children())
            if children and _same(_decl_of(src, children[0]), decl):
                return True
    return False


def reduction_identity(src: CudaSource) -> list[Mutant]:
    """The start value of each reduction: an accumulator's 0 becomes 1, its -inf becomes 0; the same
    for the value idle lanes contribute (``lane < n ? v[lane] : 0``)."""
    out = []
    for fn in _functions(src, device=True):
        for decl in _cursors(src, fn, "VAR_DECL"):
            if decl.type.get_canonical().kind.name not in ("FLOAT", "DOUBLE"):
                continue
            children = list(decl.get_children())
            init = children[-1] if children and children[-1].kind.is_expression() else None
            if init is None:
                continue
            new = _identity_replacement(src.text(init))
            if new is not None and _accumulated(src, fn, decl):
                out.append(src.replace("reduction-identity", fn.name, init, new))
        for cond in _cursors(src, fn, "CONDITIONAL_OPERATOR"):
            _, yes, no = list(cond.get_children())
            for branch, other in ((yes, no), (no, yes)):
                new = _identity_replacement(src.text(branch))
                if new is not None and src.strip(other).kind.name == "ARRAY_SUBSCRIPT_EXPR":
                    out.append(src.replace("reduction-identity", fn.name, branch, new))
    return out


def bounds_guard(src: CudaSource) -> list[Mutant]:
    """Each integer comparison in device code (index against a size): ``<`` and ``<=`` swapped, as
    ``>`` and ``>=`` (the conditions of shuffle loops belong to shuffle-offset)."""
    out = []
    for fn in _functions(src, device=True):
        shuffle_conds = set()
        for call in _calls(src, fn, SHUFFLES):
            loop = _shuffle_loop(src, fn, call)
            if loop is not None:
                shuffle_conds.add(src.span(_for_parts(loop)[1]))
        for cmp in _cursors(src, fn, "BINARY_OPERATOR"):
            op = src.operator(cmp)
            if op not in RELATIONAL_SWAP or src.span(cmp) in shuffle_conds:
                continue
            lhs, rhs = list(cmp.get_children())
            if not (src.is_integer(src.strip(lhs)) and src.is_integer(src.strip(rhs))):
                continue
            start, end = src.operator_edit_span(cmp)
            text = src.text(cmp)
            local = start - src.span(cmp)[0]
            mutated = text[:local] + RELATIONAL_SWAP[op] + text[local + len(op) :]
            out.append(
                src.mutant("bounds-guard", fn.name, [Edit(start, end, RELATIONAL_SWAP[op])], text, mutated)
            )
    return out


def block_stride(src: CudaSource) -> list[Mutant]:
    """Each loop over a block's threads: one trip only (the first blockDim elements), or strided by a
    warp (32) instead of the block."""
    out = []
    for fn in _functions(src, device=True):
        for loop, var, bound, step, kind in _stride_loops(src, fn):
            if kind != "block":
                continue
            out.append(_one_trip(src, "block-stride", fn, loop, var, bound))
            if src.text(step) == "blockDim.x":
                out.append(src.replace("block-stride", fn.name, step, "32"))
    return out


def grid_stride(src: CudaSource) -> list[Mutant]:
    """Each grid-stride loop run once: a block handles one item, as if the grid covered them all."""
    return [
        _one_trip(src, "grid-stride", fn, loop, var, bound)
        for fn in _functions(src, device=True)
        for loop, var, bound, _, kind in _stride_loops(src, fn)
        if kind == "grid"
    ]


def shared_extent(src: CudaSource) -> list[Mutant]:
    """Each launch's dynamic shared memory one float short."""
    out = []
    for fn in _functions(src, device=False):
        for config in _calls(src, fn, LAUNCH_CONFIG_CALLS):
            args = _explicit_args(src, config)
            if len(args) < 3:
                continue
            size = args[2]
            decl = _decl_of(src, size)
            target = _local_init(src, fn, decl) if decl is not None else None
            target = target if target is not None else size
            out.append(src.replace("shared-extent", fn.name, target, f"({src.text(target)}) - {ONE_FLOAT}"))
    return out


def broadcast_index(src: CudaSource) -> list[Mutant]:
    """Each product of an index with a broadcast operand's stride (0 along a broadcast dim) read as
    if the stride were 1: the index used alone."""
    out = []
    for fn in _functions(src, device=True):
        params = {
            c.spelling
            for c in fn.cursor.get_children()
            if c.kind.name == "PARM_DECL" and c.spelling.startswith(BROADCAST_STRIDE_PREFIX)
        }
        for product in _cursors(src, fn, "BINARY_OPERATOR"):
            if src.operator(product) != "*":
                continue
            lhs, rhs = list(product.get_children())
            for stride, index in ((rhs, lhs), (lhs, rhs)):
                decl = _decl_of(src, stride)
                if decl is not None and decl.kind.name == "PARM_DECL" and decl.spelling in params:
                    out.append(src.replace("broadcast-index", fn.name, product, src.text(index)))
                    break
    return out


def host_copy_extent(src: CudaSource) -> list[Mutant]:
    """Each host<->device copy one float short (``n - 1`` elements), at ``cudaMemcpy`` and at each
    upload helper call."""
    out = []
    for fn in _functions(src, device=False):
        for call in _calls(src, fn, ("cudaMemcpy", "tl_upload")):
            _, args = src.call_spans(call)
            size = args[2] if call.spelling == "cudaMemcpy" else args[3]
            text = src.text_at(*size)
            out.append(src.replace_span("host-copy-extent", fn.name, size, f"({text}) - {ONE_FLOAT}"))
    return out


def host_copy_direction(src: CudaSource) -> list[Mutant]:
    """Each ``cudaMemcpy`` in the wrong direction: its kind swapped (host-to-device and
    device-to-host), or its source and destination swapped."""
    out = []
    for fn in _functions(src, device=False):
        for call in _calls(src, fn, ("cudaMemcpy",)):
            whole, (dst, source, _, kind) = src.call_spans(call)
            name = src.text_at(*kind)
            if name in COPY_KIND_SWAP:
                out.append(src.replace_span("host-copy-direction", fn.name, kind, COPY_KIND_SWAP[name]))
            a, b = src.text_at(*dst), src.text_at(*source)
            edits = [Edit(*dst, b), Edit(*source, a)]
            text = src.text_at(*whole)
            mutated = text.replace(f"{a}, {b}", f"{b}, {a}", 1)
            out.append(src.mutant("host-copy-direction", fn.name, edits, text, mutated))
    return out


def _leftmost(src: CudaSource, cursor):
    """The first operand of a chain of ``+`` and ``-`` (``a`` of ``a + b - 1``)."""
    cursor = src.strip(cursor)
    while cursor.kind.name == "BINARY_OPERATOR" and src.operator(cursor) in ("+", "-"):
        cursor = src.strip(next(iter(cursor.get_children())))
    return cursor


def launch_grid_rounding(src: CudaSource) -> list[Mutant]:
    """Each rounded-up division of a launch computation (``(n + b - 1) / b``) rounded down instead."""
    out = []
    for fn in _functions(src, device=False):
        for div in _cursors(src, fn, "BINARY_OPERATOR"):
            if src.operator(div) != "/":
                continue
            numerator = src.strip(next(iter(div.get_children())))
            if numerator.kind.name != "PAREN_EXPR":
                continue
            inner = src.strip(next(iter(numerator.get_children())))
            if inner.kind.name != "BINARY_OPERATOR" or src.operator(inner) not in ("+", "-"):
                continue
            first = _leftmost(src, inner)
            out.append(src.replace("launch-grid-rounding", fn.name, numerator, src.text(first)))
    return out
