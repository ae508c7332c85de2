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

The checkers (memcheck, racecheck, synccheck) keep the plain loop's order and their findings:
the kernel is marked ``kInterchangedFast`` (``runtime/launch.h``), and ``SIMULATOR_FIBERS=1``
still forces fibers.
"""

from __future__ import annotations

from .block_loops import BlockLoops, _Emitter
from .block_loops_analysis import _PURE_CALLS, Fallback, KernelAnalysis
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

    def __init__(self, tu, cursor) -> None:
        super().__init__(tu, cursor)
        if self.barriers:
            raise Fallback("a barrier (block_loops.py rewrites such kernels)")
        if self.shared:
            raise Fallback("a __shared__ variable")
        if not self._threadless(self.body, []):
            raise Fallback("a call other than CUDA's math functions, or threadIdx other than .x, .y, .z")
        self.guards: dict[int, object] = {}  # IF_STMT start -> its condition, run per thread
        self.loops: list = []
        self._find(list(self.body.get_children()))
        if not self.loops:
            raise Fallback("no loop that walks a column, where lockstep order would pay")
        # Each chosen loop stands where a barrier would: its body becomes a region of its own.
        self.barriers = {self.tu.off(loop.extent.start) for loop in self.loops}

    # ---- which loops, under which conditions --------------------------------------------
    def _find(self, stmts: list) -> None:
        for s in stmts:
            if s.kind == self.ck.FOR_STMT and self._pays(s):
                self.loops.append(s)
            elif s.kind == self.ck.IF_STMT and self._guard(s):
                before = len(self.loops)
                self._find(self._stmts(list(s.get_children())[1]))
                if len(self.loops) > before:
                    self.guards[self.tu.off(s.extent.start)] = list(s.get_children())[0]
            elif s.kind == self.ck.COMPOUND_STMT:
                self._find(list(s.get_children()))

    def _guard(self, s) -> bool:
        """Whether if-statement ``s`` may be evaluated again per thread in each region it covers."""
        children = list(s.get_children())
        if len(children) != 2 or children[0].kind in (self.ck.VAR_DECL, self.ck.DECL_STMT):
            return False
        cond, then = children
        if self.tu.rng(cond)[0] < 0 or not self._pure(cond):
            return False
        start, end = self.tu.rng(then)
        read = {k for p, k, _ in self.refs if self.tu.rng(cond)[0] <= p < self.tu.rng(cond)[1]}
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
            return self._calls_toolkit(node, _PURE_CALLS) and all(self._pure(ch) for ch in children[1:])
        return False

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
            if region.guards and (region.hoisted or region.lead or region.trail):
                raise Fallback("a block-uniform statement under a thread's condition")
        return plan

    def _structure(self, s) -> tuple:
        """A condition holding a lockstep loop: its statements' plan, each region predicated on it."""
        cond = self.guards.get(self.tu.off(s.extent.start)) if s.kind == self.ck.IF_STMT else None
        if cond is None:
            return super()._structure(s)
        before = len(self.regions)
        plan = self._plan(self._stmts(list(s.get_children())[1]), False)
        for region in self.regions[before:]:
            region.guards.insert(0, cond)  # outermost first: an inner one is read only inside it
        return ("guard", s, cond, plan)


class _InterchangeEmitter(_Emitter):
    """The block-loop emitter, with a predicated condition's statements in a block of their own.

    Where the condition reads only locals each region computes again (``KernelAnalysis.recomputed``),
    a first loop counts the block's threads that pass it, and a block all of whose threads pass
    (every block but those at a matrix's edges) runs a copy of the statements without it: a
    region's loads are then unconditional and its loop over a row's threads can vectorise.
    """

    def __init__(self, k, fma: bool) -> None:
        super().__init__(k, fma)
        self.counters = 0

    def _emit(self, plan: list) -> list:
        parts: list = []
        for item in plan:
            if item[0] != "guard":
                parts += super()._emit([item])
                continue
            cond, inner = item[2], item[3]
            check = self._count_passing(cond)
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
            elif item[0] in ("loop", "do", "guard"):
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
