"""Barrier-free kernels whose loop walks memory across threads, run a step for all threads at a time.

A barrier-free kernel runs as a plain loop over the block's threads, each thread its whole body
(``for (thread) { for (k) body }``). Where each step of a thread's loop touches memory that the
next thread touches at the same step (``B[k * n + col]`` with ``col`` following ``threadIdx.x``,
a column walk), that order reads one element per cache line and a large matrix from memory at
every step, where a GPU's warp reads the neighbouring elements together. Threads that never wait
for each other may run in any interleaving (CUDA promises no other), so such a loop may run as
``for (k) { for (thread) body }`` instead: the *lockstep* order, in which the threads of a row
are adjacent iterations of a loop the compiler vectorises.

The rewrite is the block loops' (``block_loops.py``): the kernel gets a second body that the
runtime calls once per block in a fast build, with the chosen loop taken for a barrier between
regions. Locals that live across the loop (``sum``) are kept per thread, the loop's counter once
for the block. A loop under a condition that depends on the thread (``if (row < n && col < n)``)
is handled by predication: each region the condition covers evaluates it again per thread and a
thread outside it does nothing there.

A kernel qualifies only where all of this is proven, else it keeps today's order:

* the kernel reaches no wait and declares no ``__shared__`` variable; it calls only CUDA's math
  functions (no ``printf``, atomics or functions of the program, whose effects the new order
  could reorder) and reads ``threadIdx`` only as ``.x/.y/.z``;
* the loop is a ``for`` at the body's top level or under such conditions only, with a
  block-uniform header (bounds from parameters, constants and block-uniform locals) and a
  counter nothing else writes; no ``break``, ``continue`` or ``return`` leaves a region;
* a condition has no ``else``, reads only thread and block indices, parameters, constants and
  locals that the statements it covers do not write, and no memory; no block-uniform local is
  declared under it (the block loops compute one once for the block, which here would be even
  where no thread passes the condition);
* it pays: some subscript in the loop adds the loop's counter scaled (``k * n``) to an index
  that follows ``threadIdx.x`` unscaled, so that threads adjacent in x touch adjacent elements
  at each step (``_pays``).

A *grid-stride* loop (``for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)``)
has no uniform header: its counter starts from the thread's index and its trip count differs
from thread to thread. In the plain order each thread walks memory a whole grid apart; on a GPU
a warp's threads take step k together. It runs in lockstep *rounds* instead (``Stride``,
``_InterchangeEmitter._emit_stride``): round k runs the body for each thread whose counter, its
start plus k steps, has passed the condition in every round so far; the rounds go on while any
thread of the block is in. The body is written once: a round in which all are in runs it over
every thread without the per-thread condition, its loads unconditional, so that g++ may
vectorise it; a round that leaves some out runs the same loop over the runs of adjacent threads
still in (``for_each_flagged_thread``, runtime/block_loops.h). Such a loop qualifies (in the kernel
shape above, at the body's top level, under thread conditions or inside block-uniform loops)
where:

* it declares one ``int``/``unsigned``/``long``/``size_t``-like counter, whose start reads
  ``threadIdx`` and no memory; the step is ``v += s``, ``v = v + s`` or ``++v`` with ``s``
  block-uniform; the condition reads no memory; start and condition read only what each round
  may compute again (parameters, block-uniform locals, locals computed from ``threadIdx``) and
  nothing of the header is written in the loop, the counter only by its step;
* its body has no block-uniform statement, no ``break``, ``continue`` or ``return``;
* it pays: a subscript adds the counter unscaled (``a[i]``, ``in[i + j * blockDim.x]``) or walks
  a column with it (``in[y * w + x]``, ``x`` following ``threadIdx.x``).

The checkers (memcheck, racecheck, synccheck) keep the plain loop's order and their findings:
the kernel is marked ``kInterchangedFast`` (``runtime/launch.h``), and ``SIMULATOR_FIBERS=1``
still forces fibers.
"""

from __future__ import annotations

import re

from .block_loops import BlockLoops, _Emitter
from .block_loops_analysis import Fallback, KernelAnalysis, require_plain
from .block_loops_threads import PURE_CALLS
from .edits import Edit

__all__ = ["Interchange", "interchange_edit"]

# Operators a condition may not hold: they write.
_WRITES = frozenset({"=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>=", ","})
_PASS_THROUGH = frozenset(
    {
        "UNEXPOSED_EXPR",
        "PAREN_EXPR",
        "CSTYLE_CAST_EXPR",
        "CXX_STATIC_CAST_EXPR",
        "CXX_FUNCTIONAL_CAST_EXPR",
    }
)
_LITERALS = frozenset({"INTEGER_LITERAL", "FLOATING_LITERAL", "CHARACTER_LITERAL", "CXX_BOOL_LITERAL_EXPR"})
_INDEX_BUILTINS = frozenset({"threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize"})
_DEPTH = 8  # how many locals deep an index is followed to its initializers
# The clang type kinds a grid-stride counter may have: integers whose arithmetic is not promoted.
_COUNTERS = frozenset({"INT", "UINT", "LONG", "ULONG", "LONGLONG", "ULONGLONG"})
_UNNAMEABLE = re.compile(r"\bauto\b|lambda|anonymous|unnamed|type-parameter|decltype|volatile|&")


class Stride:
    """A grid-stride loop's header: ``for (T v = init; cond; v += step) body``."""

    def __init__(self, loop, var, key: int, init, cond, inc, step) -> None:
        self.loop, self.var, self.key = loop, var, key
        self.init, self.cond, self.inc = init, cond, inc
        self.step = step  # an expression, or "1" for ``++v``
        self.body = list(loop.get_children())[-1]
        self.regions: list = []  # the regions of its body
        self.guards: list = []  # the thread conditions around it, outermost first


def interchange_edit(tu, cursor, fma: bool = False) -> Edit | None:
    """The edit giving barrier-free kernel ``cursor`` of ``tu`` its lockstep body, or None."""
    try:
        k = InterchangeAnalysis(tu, cursor)
        plan = k.plan()
        return _InterchangeEmitter(k, fma).edit(plan)
    except Fallback:
        return None


class Interchange(BlockLoops):
    """Which barrier-free kernels of a parsed pass got a lockstep body (each rewritten once)."""

    def _rewrite(self, cursor) -> tuple[Edit | None, bool]:
        """The lockstep edit (or None) for kernel ``cursor``; the checkers keep the plain loop."""
        return interchange_edit(self.tu, cursor, self.fma), False


class InterchangeAnalysis(KernelAnalysis):
    """A barrier-free kernel's body with its lockstep loops taken for barriers (see the module)."""

    thread_params = False  # a parameter a thread writes keeps the plain loop

    def __init__(self, tu, cursor) -> None:
        super().__init__(tu, cursor)
        require_plain(self)
        self.guards: dict[int, object] = {}  # IF_STMT start -> its condition, run per thread
        self.loops: list = []
        self.strides: dict[int, Stride] = {}  # FOR_STMT start -> its grid-stride header
        self.stride_of: dict[int, Stride] = {}  # id(Region) -> the grid-stride loop it is the body of
        self._find(list(self.body.get_children()))
        if not self.loops:
            raise Fallback("no loop that walks a column, where lockstep order would pay")
        # Each chosen loop stands where a barrier would: its body becomes a region of its own.
        self.barriers = {self.tu.off(loop.extent.start) for loop in self.loops}

    # ---- which loops, under which conditions --------------------------------------------
    def _find(self, stmts: list, strides_only: bool = False) -> None:
        for s in stmts:
            stride = self._grid_stride(s) if s.kind == self.ck.FOR_STMT else None
            if stride is not None:
                self.loops.append(s)
                self.strides[self.tu.off(s.extent.start)] = stride
            elif s.kind == self.ck.FOR_STMT and not strides_only and self._pays(s):
                self.loops.append(s)
            elif s.kind == self.ck.FOR_STMT and not any(
                self._reads_thread(h) for h in list(s.get_children())[:-1]
            ):
                # A block-uniform loop around a grid-stride one (``for (y = blockIdx.y; ...)``).
                self._find(self._stmts(list(s.get_children())[-1]), True)
            elif s.kind == self.ck.IF_STMT and self._guard(s):
                before = len(self.loops)
                self._find(self._stmts(list(s.get_children())[1]), strides_only)
                if len(self.loops) > before:
                    self.guards[self.tu.off(s.extent.start)] = list(s.get_children())[0]
            elif s.kind == self.ck.COMPOUND_STMT:
                self._find(list(s.get_children()), strides_only)

    def _guard(self, s) -> bool:
        """Whether if-statement ``s`` may be evaluated again per thread in each region it covers."""
        children = list(s.get_children())
        if len(children) != 2 or children[0].kind in (self.ck.VAR_DECL, self.ck.DECL_STMT):
            return False
        cond, then = children
        lo, hi = self.tu.rng(cond)  # asked of libclang once, not once for each of the kernel's reads
        if lo < 0 or not self._pure(cond):
            return False
        start, end = self.tu.rng(then)
        read = {k for p, k, _ in self.refs if lo <= p < hi}
        return not any(start <= at < end for k in read for at in self.written.get(k, []))

    def _pure(self, node) -> bool:
        """Whether expression ``node`` reads no memory, writes nothing and calls only pure helpers."""
        kind = node.kind.name
        children = [ch for ch in node.get_children() if ch.kind.name not in ("TYPE_REF", "NAMESPACE_REF")]
        if kind in _LITERALS or kind in ("CXX_UNARY_EXPR", "UNARY_EXPR"):
            return True
        if kind in _PASS_THROUGH or kind == "CONDITIONAL_OPERATOR":
            return bool(children) and all(self._pure(ch) for ch in children)
        if kind == "DECL_REF_EXPR":
            ref = node.referenced
            if ref is None:
                return False
            key = self.tu.off(ref.location)
            if ref.kind.name in ("ENUM_CONSTANT_DECL", "TEMPLATE_NON_TYPE_PARAMETER"):
                return True
            if ref.kind.name == "PARM_DECL":
                return key in self.params
            if ref.kind.name != "VAR_DECL":
                return False
            if key in self.locals:
                return key not in self.shared and ref.type.get_canonical().kind.name != "CONSTANTARRAY"
            return self._uniform_name(node)  # a namespace-scope constant or blockIdx, blockDim, ...
        if kind == "MEMBER_REF_EXPR" and len(children) == 1:
            if "->" in self.text[self.tu.rng(children[0])[1] : self.tu.rng(node)[1]]:
                return False
            base = children[0]
            while base.kind.name in _PASS_THROUGH and len(list(base.get_children())) == 1:
                base = next(base.get_children())
            ref = base.referenced if base.kind == self.ck.DECL_REF_EXPR else None
            if (
                ref is not None
                and ref.spelling in _INDEX_BUILTINS
                and not self.tu.src.is_user(self.tu.off(ref.location))
            ):
                return True
            return self._pure(children[0])
        if kind in ("BINARY_OPERATOR", "COMPOUND_ASSIGNMENT_OPERATOR") and len(children) == 2:
            if kind == "COMPOUND_ASSIGNMENT_OPERATOR" or self.between(*children) in _WRITES:
                return False
            return all(self._pure(ch) for ch in children)
        if kind == "UNARY_OPERATOR" and len(children) == 1:
            start, end = self.tu.rng(node)
            cs, ce = self.tu.rng(children[0])
            op = (self.text[start:cs] + self.text[ce:end]).strip()
            return op in ("-", "+", "!", "~") and self._pure(children[0])
        if kind == "CALL_EXPR":
            return self._calls_toolkit(node, PURE_CALLS) and all(self._pure(ch) for ch in children[1:])
        return False

    # ---- grid-stride loops -------------------------------------------------------------
    def _grid_stride(self, loop) -> Stride | None:
        """``loop``'s header where it has the grid-stride shape and its lockstep order pays, else None.

        The shape: one integer counter declared by the loop and initialised from the thread's
        index, a condition that reads no memory, and a step ``v += s``, ``v = v + s`` or ``++v``
        whose ``s`` reads no memory and not the counter. Whether the rest is block-uniform and
        unwritten is proven in ``plan``, once the block variables are known."""
        children = list(loop.get_children())
        if len(children) != 4:
            return None
        first, cond, inc, body = children
        start = self._start(first)
        if start is None:
            return None
        var, init = start
        if var.type.get_canonical().kind.name not in _COUNTERS or _UNNAMEABLE.search(var.type.spelling):
            return None
        if not self._pure(init) or not self._reads_thread(init):
            return None
        key = self.tu.off(var.location)
        step = self._step(inc, key)

        if step is None or not self._pure(cond) or not self._reads(cond, {key}, 0):
            return None
        if not isinstance(step, str) and (not self._pure(step) or self._reads(step, {key}, 0)):
            return None
        stride = Stride(loop, var, key, init, cond, inc, step)
        # It pays where a subscript adds the counter unscaled (adjacent threads, adjacent
        # elements) or is a column walk across the threads (``in[y * w + x]``).
        for sub in self._subscripts(body):
            index = list(sub.get_children())[1]
            if self._adds(index, key, _DEPTH) or self._column_walk(index, {key}):
                return stride
        return None

    def _start(self, first) -> tuple | None:
        """(the counter's VAR_DECL, its start) of a loop's first clause: ``T v = start`` declaring
        one variable, or ``v = start`` assigning a local of the kernel; else None."""
        if first.kind == self.ck.DECL_STMT:
            vars_ = list(first.get_children())
            if len(vars_) != 1 or vars_[0].kind != self.ck.VAR_DECL:
                return None
            inits = [
                ch for ch in vars_[0].get_children() if ch.kind.name not in ("TYPE_REF", "NAMESPACE_REF")
            ]
            return (vars_[0], inits[0]) if len(inits) == 1 else None
        first = self._bare(first)
        children = list(first.get_children())
        if first.kind.name != "BINARY_OPERATOR" or len(children) != 2 or self.between(*children) != "=":
            return None
        lhs = self._bare(children[0])
        ref = lhs.referenced if lhs.kind == self.ck.DECL_REF_EXPR else None
        var = self.locals.get(self.tu.off(ref.location)) if ref is not None else None
        return None if var is None else (var, children[1])

    def _adds(self, node, key: int, depth: int) -> bool:
        """Whether index ``node`` adds counter ``key`` unscaled (through ``+``, ``-``, casts and
        the initializers of locals)."""
        node = self._bare(node)
        children = list(node.get_children())
        if node.kind.name == "BINARY_OPERATOR" and len(children) == 2:
            return self.between(*children) in ("+", "-") and any(
                self._adds(ch, key, depth) for ch in children
            )
        if self._is_counter(node, key):
            return True
        init = self._initializer(node) if depth > 0 else None
        return init is not None and self._adds(init, key, depth - 1)

    def _step(self, inc, key: int):
        """The step of increment ``inc`` of counter ``key`` (an expression, or "1"), else None."""
        inc = self._bare(inc)
        children = list(inc.get_children())
        if inc.kind.name == "UNARY_OPERATOR" and len(children) == 1:
            start, end = self.tu.rng(inc)
            cs, ce = self.tu.rng(children[0])
            op = (self.text[start:cs] + self.text[ce:end]).strip()
            return "1" if op == "++" and self._is_counter(children[0], key) else None
        if len(children) != 2 or not self._is_counter(children[0], key):
            return None
        op = self.between(*children)
        if inc.kind.name == "COMPOUND_ASSIGNMENT_OPERATOR" and op == "+=":
            return children[1]
        if inc.kind.name == "BINARY_OPERATOR" and op == "=":
            rhs = self._bare(children[1])
            sides = list(rhs.get_children())
            if rhs.kind.name == "BINARY_OPERATOR" and len(sides) == 2 and self.between(*sides) == "+":
                if self._is_counter(sides[0], key):
                    return sides[1]
                if self._is_counter(sides[1], key):
                    return sides[0]
        return None

    def _is_counter(self, node, key: int) -> bool:
        """Whether ``node`` is the variable ``key`` itself."""
        node = self._bare(node)
        ref = node.referenced if node.kind == self.ck.DECL_REF_EXPR else None
        return ref is not None and self.tu.off(ref.location) == key

    def _reads_thread(self, node, depth: int = _DEPTH) -> bool:
        """Whether ``node`` reads ``threadIdx``, itself or through locals' initializers."""
        if node.kind == self.ck.DECL_REF_EXPR and node.referenced is not None:
            if node.referenced.spelling == "threadIdx" and self._thread_index(node):
                return True
            init = self._initializer(node) if depth > 0 else None
            return init is not None and self._reads_thread(init, depth - 1)
        return any(self._reads_thread(ch, depth) for ch in node.get_children())

    def _thread_free(self, node, counter: int | None = None) -> bool:
        """Whether each local ``node`` reads is one a lockstep round may compute again or share:
        a recomputed local, a block variable (or ``counter``)."""
        start, end = self.tu.rng(node)
        for pos, key, _name in self.refs:
            if start <= pos < end and key in self.locals and key != counter:
                if key not in self.recomputed and key not in self.block_vars:
                    return False
        return True

    # ---- whether the lockstep order pays ------------------------------------------------
    def _pays(self, loop) -> bool:
        """Whether a subscript in ``loop`` adds its counter scaled to an index following
        ``threadIdx.x`` unscaled: then threads adjacent in x touch adjacent elements at a step,
        and a thread's own steps are a row (or more) apart."""
        children = list(loop.get_children())
        if len(children) != 4 or children[0].kind != self.ck.DECL_STMT:
            return False
        counters = {self.tu.off(v.location) for v in children[0].get_children() if v.kind == self.ck.VAR_DECL}
        if not counters:
            return False
        return any(
            self._column_walk(list(s.get_children())[1], counters) for s in self._subscripts(children[3])
        )

    def _subscripts(self, node):
        if node.kind == self.ck.ARRAY_SUBSCRIPT_EXPR and len(list(node.get_children())) == 2:
            yield node
        for ch in node.get_children():
            yield from self._subscripts(ch)

    def _column_walk(self, index, counters: set[int]) -> bool:
        terms = self._terms(index, _DEPTH)
        scaled_counter = any(scaled and self._reads(t, counters, _DEPTH) for t, scaled in terms)
        unscaled_x = any(not scaled and self._follows_x(t, _DEPTH) for t, scaled in terms)
        return scaled_counter and unscaled_x

    def _terms(self, node, depth: int) -> list[tuple[object, bool]]:
        """The terms an index adds up (through ``+``, ``-``, casts and the initializers of locals),
        each with whether it is scaled (a product or a shift)."""
        node = self._bare(node)
        kind = node.kind.name
        children = list(node.get_children())
        if kind == "BINARY_OPERATOR" and len(children) == 2:
            op = self.between(*children)
            if op in ("+", "-"):
                return self._terms(children[0], depth) + self._terms(children[1], depth)
            if op in ("*", "<<"):
                return [(node, True)]
        init = self._initializer(node) if depth > 0 else None
        if init is not None:
            return self._terms(init, depth - 1)
        return [(node, False)]

    def _bare(self, node):
        while node.kind.name in _PASS_THROUGH:
            children = [ch for ch in node.get_children() if ch.kind.name != "TYPE_REF"]
            if len(children) != 1:
                break
            node = children[0]
        return node

    def _initializer(self, node):
        """The initializer of the kernel's local that ``node`` names, else None."""
        if node.kind != self.ck.DECL_REF_EXPR or node.referenced is None:
            return None
        var = self.locals.get(self.tu.off(node.referenced.location))
        if var is None:
            return None
        inits = [ch for ch in var.get_children() if ch.kind.name not in ("TYPE_REF", "NAMESPACE_REF")]
        return inits[0] if len(inits) == 1 else None

    def _reads(self, node, keys: set[int], depth: int) -> bool:
        """Whether ``node`` reads one of ``keys``, itself or through locals' initializers."""
        if node.kind == self.ck.DECL_REF_EXPR and node.referenced is not None:
            if self.tu.off(node.referenced.location) in keys:
                return True
            init = self._initializer(node) if depth > 0 else None
            return init is not None and self._reads(init, keys, depth - 1)
        return any(self._reads(ch, keys, depth) for ch in node.get_children())

    def _follows_x(self, node, depth: int) -> bool:
        """Whether ``node`` reads ``threadIdx.x``, itself or through locals' initializers."""
        if node.kind == self.ck.MEMBER_REF_EXPR and node.spelling == "x":
            children = list(node.get_children())
            if len(children) == 1 and self._thread_index(children[0]):
                return True
        if node.kind == self.ck.DECL_REF_EXPR:
            init = self._initializer(node) if depth > 0 else None
            return init is not None and self._follows_x(init, depth - 1)
        return any(self._follows_x(ch, depth) for ch in node.get_children())

    # ---- the plan ---------------------------------------------------------------------------
    def plan(self) -> list:
        """The block loops' plan, with no statement run once for the block under a condition a
        thread decides (it would run even where no thread passes it: ``q = n / d`` under ``d != 0``)."""
        plan = super().plan()
        for region in self.regions:
            per_thread = region.guards or id(region) in self.stride_of
            if per_thread and (region.hoisted or region.lead or region.trail):
                raise Fallback("a block-uniform statement under a thread's condition")
        for stride in self.strides.values():
            self._check_stride(stride)
        return plan

    def _check_stride(self, stride: Stride) -> None:
        """Raises Fallback unless ``stride``'s header means the same in every lockstep round: the
        counter written only by its step, the step block-uniform, the start and the condition
        reading only what each round may compute again, nothing of them written in the loop."""
        clauses = [self.tu.rng(stride.inc), self.tu.rng(list(stride.loop.get_children())[0])]
        if not all(any(lo <= at < hi for lo, hi in clauses) for at in self.written.get(stride.key, [])):
            raise Fallback("a grid-stride loop's counter written other than by its step")
        if not isinstance(stride.step, str) and not self._uniform(stride.step):
            raise Fallback("a grid-stride loop whose step is not block-uniform")
        if not self._thread_free(stride.init) or not self._thread_free(stride.cond, stride.key):
            raise Fallback("a grid-stride loop whose start or condition reads a thread's own local")
        start, end = self.tu.rng(stride.loop)
        parts = [stride.init, stride.cond] + ([] if isinstance(stride.step, str) else [stride.step])
        for node in parts:
            a, b = self.tu.rng(node)
            read = {k for p, k, _ in self.refs if a <= p < b and k != stride.key}
            if any(start <= at < end for k in read for at in self.written.get(k, [])):
                raise Fallback("a grid-stride loop whose body writes what its header reads")
        for g in stride.guards:
            if not self._thread_free(g):
                raise Fallback("a grid-stride loop under a condition that reads a thread's own local")

    def _structure(self, s) -> tuple:
        """A condition holding a lockstep loop: its statements' plan, each region predicated on it;
        a grid-stride loop: its body's plan, run round by round (``_InterchangeEmitter``)."""
        stride = self.strides.get(self.tu.off(s.extent.start)) if s.kind == self.ck.FOR_STMT else None
        if stride is not None:
            before = len(self.regions)
            plan = self._plan(self._stmts(stride.body), False)
            stride.regions = self.regions[before:]
            if not stride.regions:
                raise Fallback("a grid-stride loop with an empty body")
            for region in stride.regions:
                self.stride_of[id(region)] = stride
            return ("stride", s, stride, plan)
        cond = self.guards.get(self.tu.off(s.extent.start)) if s.kind == self.ck.IF_STMT else None
        if cond is None:
            return super()._structure(s)
        before = len(self.regions)
        plan = self._plan(self._stmts(list(s.get_children())[1]), False)
        for region in self.regions[before:]:
            region.guards.insert(0, cond)  # outermost first: an inner one is read only inside it
            if id(region) in self.stride_of:
                self.stride_of[id(region)].guards.insert(0, cond)
        return ("guard", s, cond, plan)


class _InterchangeEmitter(_Emitter):
    """The block-loop emitter, with a predicated condition's statements in a block of their own.

    Where the condition reads only locals each region computes again (``KernelAnalysis.recomputed``),
    a first loop counts the block's threads that pass it, and a block all of whose threads pass
    (every block but those at a matrix's edges) runs a copy of the statements without it: a
    region's loads are then unconditional and its loop over a row's threads can vectorise. A
    condition holding a grid-stride loop gets no such copy: the loop's rounds judge it per thread.
    """

    def __init__(self, k, fma: bool) -> None:
        super().__init__(k, fma)
        self.counters = 0
        self.rounds: dict[int, int] = {}  # id(Region) -> the number of its grid-stride loop

    def _emit(self, plan: list) -> list:
        parts: list = []
        for item in plan:
            if item[0] == "stride":
                parts += self._emit_stride(item[2], item[3])
                continue
            if item[0] != "guard":
                parts += super()._emit([item])
                continue
            cond, inner = item[2], item[3]
            # A grid-stride loop's rounds judge the condition per thread themselves: a copy of it
            # without the condition would be a second copy of its body for nothing.
            strided = any(id(r) in self.k.stride_of for r in self._regions(inner))
            check = None if strided else self._count_passing(cond)
            if check is None:
                parts += [" {", *self._emit(inner), " }"]
                continue
            name, counting = check
            regions = self._regions(inner)
            kept = [list(r.guards) for r in regions]
            for r in regions:
                r.guards = [g for g in r.guards if g is not cond]
            unguarded = self._emit(inner)
            for r, guards in zip(regions, kept, strict=True):
                r.guards = guards
            total = "(int)(__sim_blk->dim.x * __sim_blk->dim.y * __sim_blk->dim.z)"
            parts += [" {", *counting, f" if ({name} == {total}) {{", *unguarded, " } else {"]
            parts += [*self._emit(inner), " } }"]
        return parts

    def _regions(self, plan: list) -> list:
        """The regions of ``plan``, nested structures included."""
        found: list = []
        for item in plan:
            if item[0] == "region":
                found.append(item[1])
            elif item[0] == "compound":
                found += self._regions(item[2])
            elif item[0] in ("loop", "do", "guard", "stride"):
                found += self._regions(item[3])
            elif item[0] == "if":
                found += self._regions(item[3]) + self._regions(item[4] or [])
        return found

    def _count_passing(self, cond) -> tuple[str, list] | None:
        """A loop counting the block's threads that pass ``cond`` (its counter's name and the code),
        or None where ``cond`` reads a local that is not computed again in each region."""
        tu, k = self.tu, self.k
        start, end = tu.rng(cond)
        keys = {key for p, key, _ in k.refs if start <= p < end and key in k.locals}
        if any(key not in k.recomputed for key in keys):
            return None
        name = f"__sim_passing{self.counters}"
        self.counters += 1
        body: list = []
        for key in self._closure(sorted(keys)):
            body += self._recomputed_declaration(key, *k.recomputed[key])
        params = "const ::uint3 threadIdx, [[maybe_unused]] const int __sim_t"
        head = f" ::__sim::for_each_plain_thread(*__sim_blk, [&]({params}){self.target} {{"
        counting = [
            f" int {name} = 0;",
            head,
            *body,
            " if (",
            self._marker(start),
            (start, end),
            f") ++{name};",
            "\n });",
        ]
        return name, counting

    # ---- grid-stride loops, round by round ----------------------------------------------
    def _emit_stride(self, stride: Stride, plan: list) -> list:
        """``stride``'s loop in lockstep rounds: round ``k`` runs the body for each thread whose
        counter (its start plus ``k`` steps) has passed the condition in every round so far.

        The counter is computed from the round, not carried: ``k`` steps added one by one wrap
        as ``k * step`` added once does in the counter's unsigned type, and the conversion back
        to a signed counter is modular, so each thread sees the value its own loop would. Each
        round first runs a loop over the threads still in that evaluates the condition once per
        thread, clears the flag of a thread it leaves out (for good, as leaving its loop would)
        and counts the others. The body is written once, run by ``for_each_flagged_thread``
        (runtime/block_loops.h): for every thread while all are in (every round but the last few),
        a loop g++ may vectorise, else for the runs of adjacent threads still in, through the
        same inlined loop.
        """
        n = self.counters
        self.counters += 1
        tu, k = self.tu, self.k
        alias, ualias = f"__sim_gs{n}_t", f"__sim_gsu{n}_t"
        alive, total = f"__sim_alive{n}", f"__sim_total{n}"
        guards = list(stride.regions[0].guards)
        keys = set()
        for node in (stride.init, stride.cond, *guards):
            start, end = tu.rng(node)
            keys |= {key for p, key, _ in k.refs if start <= p < end and key in k.recomputed}
        decls: list = []
        for key in self._closure(sorted(keys)):
            decls += self._recomputed_declaration(key, *k.recomputed[key])
        inside = ["true"]
        for g in guards:
            inside += [" && (", self._marker(tu.rng(g)[0]), tu.rng(g), ")"]
        params = "const ::uint3 threadIdx, [[maybe_unused]] const int __sim_t"
        # A counter read after the loop keeps the value that ended the thread's loop.
        slot = k.slot_of.get(stride.key)
        keep = [] if slot is None else [f" __sim_slot{slot}[__sim_t] = {stride.var.spelling};"]
        parts = [
            f" {{ using {alias} = {stride.var.type.spelling};",
            f" using {ualias} = ::std::make_unsigned_t<{alias}>;",
            f" const int {total} = (int)(__sim_blk->dim.x * __sim_blk->dim.y * __sim_blk->dim.z);",
            f" unsigned char {alive}[::__sim::kMaxBlockThreads];",
            f" ::std::memset({alive}, 1, (::std::size_t){total});",
            f" {ualias} __sim_off{n} = 0;",
            f" for ({ualias} __sim_k{n} = 0;; ++__sim_k{n}) {{",
            " if (__sim_blk->timed_out->load(::std::memory_order_relaxed)) return;",
            f" __sim_off{n} = ({ualias})(__sim_k{n} * ({ualias})(",
        ]
        if isinstance(stride.step, str):
            parts.append(stride.step)
        else:
            parts += [self._marker(tu.rng(stride.step)[0]), tu.rng(stride.step)]
        parts += [
            "));",
            f" int __sim_active{n} = 0;",
            f" ::__sim::for_each_plain_thread(*__sim_blk, [&]({params}){self.target} {{",
            *decls,
            # No early return and no store under a condition (but a kept counter's).
            f" bool __sim_in{n} = false;",
            f" if ({alive}[__sim_t] && (",
            *inside,
            ")) {",
            *self._counter(stride, n, True),
            f" __sim_in{n} = (",
            self._marker(tu.rng(stride.cond)[0]),
            tu.rng(stride.cond),
            ");",
            *([f" if (!__sim_in{n})", *keep] if keep else []),
            " }",
            f" {alive}[__sim_t] = __sim_in{n};",
            f" __sim_active{n} += __sim_in{n};",
            "\n });",
            f" if (__sim_active{n} == 0) break;",
            f" const unsigned char* const __sim_flags{n} = __sim_active{n} == {total} ? nullptr : {alive};",
            *self._stride_body(stride, plan, n),
            " } }",
        ]
        return parts

    def _counter(self, stride: Stride, n: int, declare: bool) -> list:
        """``stride``'s counter as it stands in round ``__sim_k<n>``: declared, or assigned to the
        local a region loaded from its per-thread slot (a counter declared before the loop)."""
        start, end = self.tu.rng(stride.init)
        declared = f"__sim_gs{n}_t " if declare or stride.key not in self.k.slot_of else ""
        value = f"(__sim_gs{n}_t)((__sim_gsu{n}_t)(__sim_gs{n}_t)("
        return [
            f" {declared}{stride.var.spelling} = {value}",
            self._marker(start),
            (start, end),
            f") + __sim_off{n});",
        ]

    def _stride_body(self, stride: Stride, plan: list, n: int) -> list:
        """``plan``, the body of ``stride``, for the threads in this round (``__sim_flags<n>``):
        the thread conditions around the loop were judged by the round's count."""
        kept = [list(r.guards) for r in stride.regions]
        for r in stride.regions:
            r.guards = []
            self.rounds[id(r)] = n
        try:
            return self._emit(plan)
        finally:
            for r, guards in zip(stride.regions, kept, strict=True):
                r.guards = guards

    def _read_too(self, region) -> list[tuple[int, int]]:
        """A grid-stride body's region reads the locals of its loop's first clause too (the
        counter's start, and the counter itself where it is declared before the loop)."""
        stride = self.k.stride_of.get(id(region))
        return [] if stride is None else [self.tu.rng(list(stride.loop.get_children())[0])]

    def _thread_loop(self, region) -> str:
        """A grid-stride body's region runs for the threads its round's flags leave in."""
        if id(region) not in self.k.stride_of:
            return super()._thread_loop(region)
        return f"for_each_flagged_thread(*__sim_blk, __sim_flags{self.rounds[id(region)]}, "

    def _prelude(self, region) -> list:
        """A grid-stride body's region: the thread's counter in this round."""
        stride = self.k.stride_of.get(id(region))
        if stride is None:
            return []
        return self._counter(stride, self.rounds[id(region)], False)
