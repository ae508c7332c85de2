"""Which kernels may run as block loops (``block_loops.py``), and the facts their rewrite needs.

``KernelAnalysis`` scans a kernel's body once (its barriers, locals, ``__shared__`` variables, and
the uses, writes and addresses taken of each variable, which ``block_loops_uses.py`` records), then
``plan`` cuts the body into regions between barriers, shows the conditions and loop headers that
hold a barrier block-uniform, chooses the locals one copy of which serves the block and the
per-thread slots of the locals that live across a barrier. Whatever it cannot prove raises
``Fallback``: the kernel keeps its fibers. What reads the running thread (regions that store no
thread index, locals computed again) is ``block_loops_threads.py``; ``wmma``'s boundaries and jumps
are ``block_loops_wmma.py``, warp shuffles and votes ``block_loops_warps.py``.
"""

from __future__ import annotations

from . import block_loops_warps as warps
from . import block_loops_wmma as wmma
from .block_loops_order import SCALAR_KINDS
from .block_loops_threads import PURE_CALLS, TRANSPARENT, UNNAMEABLE, ThreadValues
from .block_loops_uses import ASSIGNMENTS, VariableUses
from .syntax_device import CUDA_WAITS, RUNTIME_WAITS, block_sync, wait_what

__all__ = ["SCALARS", "Fallback", "KernelAnalysis", "Region"]

_UNIFORM_BUILTINS = frozenset({"blockIdx", "blockDim", "gridDim", "warpSize"})
# What the rewrite refuses in a kernel's body, as the launch log names it.
_REFUSED = {
    "GOTO_STMT": "a goto",
    "INDIRECT_GOTO_STMT": "a computed goto",
    "LABEL_STMT": "a label",
    "LAMBDA_EXPR": "a lambda",
    "ASM_STMT": "inline assembly",
    "MS_ASM_STMT": "inline assembly",
    "STRUCT_DECL": "a struct declared in the kernel",
    "UNION_DECL": "a union declared in the kernel",
    "CLASS_DECL": "a class declared in the kernel",
    "ENUM_DECL": "an enum declared in the kernel",
    "TYPEDEF_DECL": "a typedef in the kernel",
    "TYPE_ALIAS_DECL": "a type alias in the kernel",
    "CXX_TRY_STMT": "a try statement",
    "CXX_THROW_EXPR": "a throw",
}
_LOOPS = frozenset({"FOR_STMT", "WHILE_STMT", "DO_STMT", "CXX_FOR_RANGE_STMT"})
SCALARS = SCALAR_KINDS | {"POINTER"}


class Fallback(Exception):
    """The kernel is not a shape the rewrite handles: it keeps its fibers.

    ``at``: the node or offset the reason is about (the launch log names its line), or None.
    """

    def __init__(self, reason: str, at=None) -> None:
        super().__init__(reason)
        self.at = at


class Region:
    """Statements between barriers, run as one loop over the block's threads."""

    def __init__(self, stmts: list, start: int, end: int, final: bool) -> None:
        self.stmts = stmts
        self.start, self.end = start, end
        self.final = final  # the last statements of the kernel's body: a `return` may end a thread
        self.hoisted: list = []  # DECL_STMTs and moved statements run once for the block, before the loop
        self.lead: list = []  # block statements and declarations run before the loop, in order
        self.trail: list = []  # block statements run after the loop
        self.moved: list = []  # block statements between the others, run before the loop (hoisted)
        self.declared: list = []  # VAR_DECLs at the region's top level
        # Conditions each thread evaluates again before the region's statements, outermost first
        # (a loop run in lockstep order under `if (row < n)`, block_loops_interchange.py).
        self.guards: list = []
        # Its loop may store no thread index (an indexed body of for_each_plain_thread,
        # ``runtime/block_loops.h``): it calls nothing that could read one and names threadIdx only
        # as ``threadIdx.x/.y/.z``.
        self.simd = False
        self.closing = ""  # text after its statements: an exchange's first round is a call alone
        self.shadow = ""  # a declaration before them: an exchange's local of its call's name


class KernelAnalysis(VariableUses, ThreadValues):
    """One kernel's body: the facts of a scan, then (``plan``) its regions, block variables and slots."""

    # Whether a kernel without barriers may be planned too, as one region (block_loops_plain.py).
    one_region = False
    # Whether a parameter a thread writes may be its own, in a slot (kernels with barriers); the
    # barrier-free kernels' loops (block_loops_plain.py, block_loops_interchange.py) keep theirs.
    thread_params = True

    def __init__(self, tu, cursor) -> None:
        self.tu = tu
        self.ck = tu.ci.CursorKind
        self.text = tu.src.text
        body = [ch for ch in cursor.get_children() if ch.kind == self.ck.COMPOUND_STMT]
        if not body:
            raise Fallback("a kernel without a body in this file", cursor)
        self.body = body[0]
        self.func = tu.funcs.get(tu.off(cursor.location))
        params = [ch for ch in cursor.get_children() if ch.kind == self.ck.PARM_DECL]
        self.params = {tu.off(ch.location) for ch in params}
        self.param_decls = {tu.off(ch.location): ch for ch in params}
        # Parameters a thread writes (each thread's own copy in CUDA): per-thread slots, as locals
        # living across a barrier are, filled with the launch's value at the block's start.
        self.private_params: set[int] = set()
        self.param_names = [ch.spelling for ch in params]
        self.barriers: set[int] = set()  # starts of the __syncthreads() calls (and of the boundaries)
        # Warp-collective calls that are region boundaries too (block_loops_wmma.py): start -> kind.
        self.boundaries: dict[int, str] = {}
        self.boundary_callees: set[int] = set()  # their definitions, whose waits the boundaries stand for
        # Warp shuffles and votes run as exchanges (block_loops_warps.py): start -> (call, name).
        self.exchanges: dict[int, tuple] = {}
        self.header_stmts: dict[tuple[int, int], object] = {}  # a condition's range -> its statement
        # Cooperative groups' block barriers (``cta.sync()``, ``cg::sync(cta)``): their callees'
        # definitions, and those of the kernel's other calls (``cg::sync`` of a tile shares one).
        self.block_syncs: set[int] = set()
        self.other_callees: dict[int | None, int] = {}  # definition -> the first other call's start
        self.local_types: list[int] = []  # typedefs and aliases declared in the body
        self.jumps = 0  # uniform `if (c) break;` statements between regions
        self.start_uses()
        self.locals: dict[int, object] = {}  # the body's own variables (VAR_DECL)
        self.shared: set[int] = set()
        # Locals each region that uses them computes again (key -> (VAR_DECL, initializer)).
        self.recomputed: dict[int, tuple] = {}
        self._scan(self.body, [])

    # ---- facts about the whole body ---------------------------------------------------------
    def _scan(self, node, parents: list) -> None:
        ck, tu = self.ck, self.tu
        kind = node.kind.name
        if wmma.local_type(node):
            self.local_types.append(self.tu.off(node.location))  # allowed where they stay in a region
        elif kind in _REFUSED:
            raise Fallback(_REFUSED[kind], node)
        if node.kind == ck.VAR_DECL:
            key = tu.off(node.location)
            self.locals[key] = node
            if any(ch.kind == ck.CUDASHARED_ATTR for ch in node.get_children()):
                self.shared.add(key)
            elif node.storage_class == tu.ci.StorageClass.STATIC:
                raise Fallback("a static local variable", node)
        elif node.kind == ck.CALL_EXPR:
            self._call(node)
        elif node.kind in (ck.WHILE_STMT, ck.DO_STMT, ck.FOR_STMT) and tu.device_code.spins(node):
            raise Fallback("a loop that spins on volatile or atomic memory", node)
        else:
            self._note_uses(node, parents)
        for ch in node.get_children():
            self._scan(ch, [*parents, node])

    def _call(self, node) -> None:
        """A call: the block's barrier, another wait (fibers), or a method that may write its object."""
        ref = node.referenced
        name = node.spelling or ""
        callee = next(node.get_children(), None)
        if ref is None and callee is not None and self.tu.rng(callee)[0] >= 0:
            # A call in a template whose overload its parameters pick (``__shfl_down_sync`` of a
            # T): the rewrite cannot see which one, nor its arguments' types.
            written = self.text[slice(*self.tu.rng(callee))].strip().removeprefix("::")
            if CUDA_WAITS.fullmatch(written):
                raise Fallback(f"{wait_what(written)} whose overload a template's parameters pick", node)
        if ref is not None and not self.tu.src.is_user(self.tu.off(ref.location)):
            if name == "__syncthreads":
                if list(node.get_children())[1:]:
                    raise Fallback("a __syncthreads call written with arguments", node)
                self.barriers.add(self.tu.off(node.extent.start))
                return
            definition = ref.get_definition()
            callee = self.tu.off(definition.location) if definition is not None else None
            if block_sync(ref, node):
                self.barriers.add(self.tu.off(node.extent.start))
                self.block_syncs.add(callee)
                return
            self.other_callees.setdefault(callee, self.tu.off(node.extent.start))
            if warps.note_exchange(self, node, name):
                return
            op = wmma.note_boundary(self, node, name)
            if op == wmma.REFUSED:
                raise Fallback("an mma_sync whose arguments change something when evaluated", node)
            if op is None and (
                CUDA_WAITS.fullmatch(name)
                or (name in RUNTIME_WAITS and ref.semantic_parent.spelling == "__sim")
            ):
                raise Fallback(wait_what(name), node)
        self._call_writes(node)

    def _has_barrier(self, node) -> bool:
        start, end = self.tu.rng(node)
        return any(start <= b < end for b in self.barriers)

    def _callees_wait(self, calls) -> bool:
        """Whether a function called from the kernel waits or calls something unknown."""
        seen, stack = set(), list(calls)
        while stack:
            k = stack.pop()
            if k in seen:
                continue
            seen.add(k)
            f = self.tu.funcs.get(k)
            if f is None:
                continue  # a lambda's body (refused) or a function the walk does not know
            if f.waits or f.unknown:
                return True
            stack.extend(f.calls)
        return False

    # ---- uniformity -------------------------------------------------------------------------
    def _uniform(self, node, header: bool = False, derived: bool = False) -> bool:
        """Whether ``node`` has one value for the whole block (``header``: a loop header, which may
        also assign the block's own variables; ``derived``: or one that each thread computes again
        alike, from ``threadIdx``'s members and what no thread writes, see ``_choose_recomputed``)."""
        ck = self.ck
        kind = node.kind.name
        children = list(node.get_children())
        if kind in (
            "INTEGER_LITERAL",
            "FLOATING_LITERAL",
            "CHARACTER_LITERAL",
            "CXX_BOOL_LITERAL_EXPR",
            "CXX_NULL_PTR_LITERAL_EXPR",
        ):
            return True
        if kind == "DECL_STMT" and header:
            return all(self._uniform(ch, derived=derived) for ch in children)
        if kind == "VAR_DECL":
            key = self.tu.off(node.location)
            inits = [
                ch for ch in children if ch.kind.name not in ("TYPE_REF", "NAMESPACE_REF", "TEMPLATE_REF")
            ]
            return key in self.block_vars and all(self._uniform(ch, derived=derived) for ch in inits)
        if kind == "DECL_REF_EXPR":
            return self._uniform_name(node, derived)
        if kind in ("BINARY_OPERATOR", "COMPOUND_ASSIGNMENT_OPERATOR") and len(children) == 2:
            op = self.between(children[0], children[1])
            if kind == "COMPOUND_ASSIGNMENT_OPERATOR" or op in ASSIGNMENTS:
                return (
                    header and self._block_target(children[0]) and self._uniform(children[1], derived=derived)
                )
            if op == ",":  # `a += s, b += t` in a loop header: each side on its own terms
                return all(self._uniform(ch, header, derived) for ch in children)
            return all(self._uniform(ch, derived=derived) for ch in children)
        if kind == "UNARY_OPERATOR" and len(children) == 1:
            start, end = self.tu.rng(node)
            cs, ce = self.tu.rng(children[0])
            around = (self.text[start:cs] + self.text[ce:end]).strip()
            if around in ("++", "--"):
                return header and self._block_target(children[0])
            return around in ("-", "+", "!", "~") and self._uniform(children[0], derived=derived)
        if kind == "MEMBER_REF_EXPR" and len(children) == 1:
            if "->" in self.text[self.tu.rng(children[0])[1] : self.tu.rng(node)[1]]:
                return False
            if derived and self._thread_index(children[0]):
                return True
            return self._uniform(children[0], derived=derived)
        if kind in ("CXX_UNARY_EXPR", "UNARY_EXPR"):
            return True  # sizeof/alignof: a constant
        if kind in (
            "PAREN_EXPR",
            "UNEXPOSED_EXPR",
            "CSTYLE_CAST_EXPR",
            "CXX_STATIC_CAST_EXPR",
            "CXX_FUNCTIONAL_CAST_EXPR",
            "CONDITIONAL_OPERATOR",
        ):
            return bool(children) and all(
                self._uniform(ch, derived=derived)
                for ch in children
                if ch.kind.name not in ("TYPE_REF", "NAMESPACE_REF")
            )
        if kind == "CALL_EXPR":
            if not self._calls_toolkit(node, PURE_CALLS):
                return False
            return all(self._uniform(ch, derived=derived) for ch in children[1:])
        del ck
        return False

    def _uniform_name(self, node, derived: bool = False) -> bool:
        ref = node.referenced
        if ref is None:
            return False
        key = self.tu.off(ref.location)
        kind = ref.kind.name
        if kind in ("ENUM_CONSTANT_DECL", "TEMPLATE_NON_TYPE_PARAMETER"):
            return True
        if kind == "PARM_DECL":
            if key not in self.params or key in self.private_params:
                return False
            return not (derived and key in self.written)
        if kind != "VAR_DECL":
            return False
        if key in self.locals:
            if derived:
                return key in self.recomputed or (key in self.block_vars and key not in self.written)
            return key in self.block_vars
        if not self.tu.src.is_user(key):
            return ref.spelling in _UNIFORM_BUILTINS
        # A constant at namespace scope.
        return (
            ref.type.is_const_qualified()
            and ref.semantic_parent is not None
            and (ref.semantic_parent.kind.name in ("TRANSLATION_UNIT", "NAMESPACE", "LINKAGE_SPEC"))
        )

    def _block_target(self, lhs) -> bool:
        while lhs.kind.name in TRANSPARENT and len(list(lhs.get_children())) == 1:
            lhs = next(lhs.get_children())
        if lhs.kind != self.ck.DECL_REF_EXPR or lhs.referenced is None:
            return False
        return self.tu.off(lhs.referenced.location) in self.block_vars

    # ---- the regions ------------------------------------------------------------------------
    def _plan(self, stmts: list, top: bool) -> list:
        """The block-level plan of a statement list: regions, and structures with barriers."""
        plan, run = [], []

        def close(final: bool) -> None:
            if run:
                start = self.tu.rng(run[0])[0]
                end = wmma.statement_end(self.text, self.tu.rng(run[-1])[1])
                region = Region(list(run), start, end, final)
                self.regions.append(region)
                plan.append(("region", region))
                run.clear()

        for s in stmts:
            if not top and wmma.plan_jump(self, s, plan, close):
                continue
            if not self._has_barrier(s):
                run.append(s)
                continue
            close(False)
            call = warps.statement_exchange(self, s)
            if call is not None:
                warps.plan_exchange(self, s, call, plan, self._region)
                continue
            op = self.boundaries.get(self.tu.off(s.extent.start)) if s.kind == self.ck.CALL_EXPR else None
            if op is not None:
                wmma.plan_boundary(self, s, op, run, plan, close)
            else:
                plan.append(self._structure(s))
        close(top)
        return plan

    def _region(self, stmts: list, start: int, end: int | None) -> Region:
        """A new region of ``stmts`` from ``start`` to ``end`` (None: past the last one's ``;``)."""
        if end is None:
            end = wmma.statement_end(self.text, self.tu.rng(stmts[-1])[1])
        region = Region(list(stmts), start, end, False)
        self.regions.append(region)
        return region

    def _structure(self, s) -> tuple:
        ck, tu = self.ck, self.tu
        hinted = wmma.hinted_loop(self, s)
        if hinted is not None:
            return self._structure(hinted)
        children = list(s.get_children())
        call = s
        while call.kind == ck.UNEXPOSED_EXPR and len(list(call.get_children())) == 1:
            call = next(call.get_children())  # `cg::this_thread_block().sync();`: its temporary's cleanup
        if call.kind == ck.CALL_EXPR and tu.off(call.extent.start) in self.barriers:
            return ("barrier", s)
        if s.kind == ck.COMPOUND_STMT:
            return ("compound", s, self._plan(children, False))
        if s.kind == ck.FOR_STMT and children:
            body = children[-1]
            self.headers.extend(children[:-1])
            self.header_stmts.update((tu.rng(ch), s) for ch in children[:-1])
            for ch in children[:-1]:
                if ch.kind == ck.DECL_STMT:
                    for v in ch.get_children():
                        if v.kind != ck.VAR_DECL or v.type.get_canonical().kind.name not in SCALARS:
                            raise Fallback("a loop with a barrier declares a non-scalar variable", v)
                        self.block_vars.add(tu.off(v.location))
            return ("loop", s, body, self._plan(self._stmts(body), False))
        if s.kind == ck.WHILE_STMT and len(children) == 2 and children[0].kind != ck.VAR_DECL:
            self.headers.append(children[0])
            self.header_stmts[tu.rng(children[0])] = s
            return ("loop", s, children[1], self._plan(self._stmts(children[1]), False))
        if s.kind == ck.DO_STMT and len(children) == 2:
            self.headers.append(children[1])
            self.header_stmts[tu.rng(children[1])] = s
            return ("do", s, children[0], self._plan(self._stmts(children[0]), False))
        if s.kind == ck.IF_STMT and len(children) in (2, 3):
            if children[0].kind in (ck.VAR_DECL, ck.DECL_STMT) or tu.rng(children[0])[0] < 0:
                raise Fallback("an if with a barrier declares a variable in its condition", s)
            self.headers.append(children[0])
            self.header_stmts[tu.rng(children[0])] = s
            then = self._plan(self._stmts(children[1]), False)
            other = self._plan(self._stmts(children[2]), False) if len(children) == 3 else None
            return ("if", s, children[0], then, other)
        raise Fallback("a barrier inside a switch, a range for or an expression", s)

    def _stmts(self, node) -> list:
        return list(node.get_children()) if node.kind == self.ck.COMPOUND_STMT else [node]

    def _check_region(self, region: Region) -> None:
        """A region's statements run inside a lambda per thread: what they may not do there."""
        for s in region.stmts:
            self._check_jumps(s, loops=0, switches=0, final=region.final)
            if s.kind == self.ck.DECL_STMT:
                region.declared.extend(v for v in s.get_children() if v.kind == self.ck.VAR_DECL)

    def _check_jumps(self, node, loops: int, switches: int, final: bool) -> None:
        kind = node.kind.name
        if kind == "RETURN_STMT" and not final:
            raise Fallback("a return before the last barrier", node)
        if kind == "BREAK_STMT" and loops + switches == 0:
            raise Fallback("a break that leaves a region between barriers", node)
        if kind == "CONTINUE_STMT" and loops == 0:
            raise Fallback("a continue that leaves a region between barriers", node)
        loops += kind in _LOOPS
        switches += kind == "SWITCH_STMT"
        for ch in node.get_children():
            self._check_jumps(ch, loops, switches, final)

    def plan(self) -> list:
        """The block-level plan of the body (regions, and the structures that hold barriers), with
        the block variables and per-thread slots chosen; raises ``Fallback`` where fibers stay."""
        tu = self.tu
        f = self.func
        if f is None:
            raise Fallback("a kernel the front end's walk did not reach")
        shared = sorted(self.other_callees[k] for k in self.block_syncs if k in self.other_callees)
        if shared:
            raise Fallback("a cooperative groups' sync of a group other than the block", shared[0])
        self.boundary_callees |= self.block_syncs
        if (
            not (self.barriers or self.one_region)
            or f.unknown
            or self._callees_wait(f.calls - self.boundary_callees)
        ):
            raise Fallback(*self._why_fibers(f))
        start, end = tu.rng(self.body)
        lockstep = [
            e.start
            for e in tu.edits
            if start <= e.start < end and any("lockstep_assign" in p for p in e.parts if isinstance(p, str))
        ]
        if lockstep:
            raise Fallback(
                "warp-synchronous code (no __syncwarp) that needs a warp's lanes in lockstep", min(lockstep)
            )
        if any(k in self.locals and k not in self.shared for k in self.escaped):
            key = next(k for k in self.escaped if k in self.locals and k not in self.shared)
            raise Fallback("the address of a local kept in a pointer or memory", self.locals[key])
        for key in self.params:
            if key in self.addressed or key in self.escaped:
                raise Fallback("a parameter whose address is taken", key)
        self.regions: list[Region] = []
        self.headers: list = []
        # A written parameter is a block variable while only block statements write it, else a
        # thread's own (``private_params``).
        self.written_params = {key for key in self.params if key in self.written}
        self.block_vars: set[int] = set(self.written_params)
        plan = self._plan(list(self.body.get_children()), True)
        for region in self.regions:
            self._check_region(region)
        if not wmma.types_stay_inside(self, self.local_types):
            raise Fallback("a type declared in the kernel and used across a barrier")
        self._choose_block_vars()
        for h in self.headers:
            if not self._uniform(h, header=True):
                raise Fallback(f"{self._guarded(h)} under a condition not shown to be block-uniform", h)
        self._choose_slots()
        return plan

    def _guarded(self, header) -> str:
        """What the statement of condition ``header`` holds: "a barrier", or the warp shuffle or
        vote that is the first of its barriers when all of them are (block_loops_warps.py)."""
        s = self.header_stmts.get(self.tu.rng(header))
        if s is None:
            return "a barrier"
        start, end = self.tu.rng(s)
        inside = sorted(b for b in self.barriers if start <= b < end)
        if inside and all(b in self.exchanges for b in inside):
            return wait_what(self.exchanges[inside[0]][1])
        return "a barrier"

    def _why_fibers(self, f) -> tuple[str, int | None]:
        """The call graph's first wait or unknown callee, from the call in this kernel: the
        kernel's own first one, unless that is one of its barriers (``__syncthreads``, a boundary),
        which the loops would take; then the first callee's that reaches one."""
        tu = self.tu
        own = f.why is not None and (f.why[0] in self.barriers or f.why[0] in self.boundaries)
        found = tu.fibers_why(f.key, self.boundary_callees, own=not own)
        if found is not None:
            return found[1], found[0]
        if f.unknown:
            return "a call through a function pointer or of a function this file does not define", None
        return "a callee that waits or is unknown", None

    def _choose_block_vars(self) -> None:
        """Locals one copy of which serves the block, and the statements that run once for it.

        A candidate is a scalar declared at a region's top level with an initializer, whose
        address is not taken. It stays one while its initializer is uniform and every write to
        it is in a loop header or in a *block statement*: an assignment of a uniform value to
        a block variable at the start or the end of a region (``++k;``, ``offset *= 2;``), which
        then runs once before or after the region's loop, where every thread would have run it
        with the same values at the same point.
        """
        ck = self.ck
        candidates: dict[int, tuple] = {}  # declaration -> (DECL_STMT, region)
        for region in self.regions:
            for s in region.stmts:
                if s.kind != ck.DECL_STMT:
                    continue
                vars_ = [v for v in s.get_children() if v.kind == ck.VAR_DECL]
                keys = [self.tu.off(v.location) for v in vars_]
                if vars_ and all(k in self.shared for k in keys):
                    region.hoisted.append(s)  # __shared__: once per block
                    continue
                if vars_ and all(self._candidate(v, k, region) for v, k in zip(vars_, keys, strict=True)):
                    for k in keys:
                        candidates[k] = (s, region)
        loop_vars = set(self.block_vars)
        self.block_vars |= set(candidates)
        while True:
            for region in self.regions:
                self._peel(region)
            peeled = [self.tu.rng(s) for r in self.regions for s in (*r.lead, *r.moved, *r.trail)]
            headers = [self.tu.rng(h) for h in self.headers]
            dropped = set()
            for key in self.block_vars:
                for at in self.written.get(key, []):
                    if not any(a <= at < b for a, b in (*peeled, *headers)):
                        dropped.add(key)
                if key in candidates:
                    s, _region = candidates[key]
                    var = next(v for v in s.get_children() if self.tu.off(v.location) == key)
                    if not self._uniform(var):
                        dropped.add(key)
            if not dropped:
                break
            private = {k for k in dropped & loop_vars if self._may_be_private(k)}
            if private:
                # A parameter a thread writes: its own from now on, which may make other block
                # variables (and statements) depend on the thread; judged again without it.
                self.private_params |= private
                self.block_vars -= private
                loop_vars -= private
                continue
            if dropped & loop_vars:
                spans = (*peeled, *headers)
                writes = [w for k in dropped & loop_vars for w in self.written.get(k, [])]
                at = min((w for w in writes if not any(a <= w < b for a, b in spans)), default=None)
                if dropped & loop_vars & self.params and self.thread_params:
                    raise Fallback("a thread writes a parameter other than a scalar or a pointer", at)
                if at in self.call_writes:
                    # As it is, by a method or to a reference parameter: the call may change it.
                    raise Fallback("a call passed a loop's block-uniform variable that it may change", at)
                raise Fallback("a thread writes a loop's block-uniform variable", at)
            # A declaration whose variables are not all block variables stays in its region.
            for key in list(dropped):
                s, _region = candidates[key]
                dropped |= {self.tu.off(v.location) for v in s.get_children() if v.kind == ck.VAR_DECL}
            self.block_vars -= dropped
        for key, (s, region) in candidates.items():
            if key in self.block_vars and s not in region.hoisted and s not in region.lead:
                region.hoisted.append(s)
        for region in self.regions:
            region.hoisted += region.moved
            region.hoisted.sort(key=lambda s: self.tu.off(s.extent.start))

    def _may_be_private(self, key: int) -> bool:
        """Whether block variable ``key``, which a thread writes, may be that thread's own: a scalar
        or pointer parameter, where ``thread_params`` allows."""
        var = self.param_decls.get(key)
        if var is None or not self.thread_params:
            return False
        return var.type.get_canonical().kind.name in SCALARS

    def _candidate(self, var, key: int, region: Region) -> bool:
        if var.type.get_canonical().kind.name not in SCALARS or key in self.addressed:
            return False
        inits = [
            ch
            for ch in var.get_children()
            if ch.kind.name not in ("TYPE_REF", "NAMESPACE_REF", "TEMPLATE_REF")
        ]
        if not inits:
            return False
        # Moved before the region's first statement: no earlier statement may name something else
        # by the same name.
        at = self.tu.off(var.location)
        return not any(
            region.start <= pos < at and k != key and name == var.spelling for pos, k, name in self.refs
        )

    def _block_statement(self, s) -> bool:
        """An assignment of a uniform value to a block variable, as a whole statement."""
        kind = s.kind.name
        children = list(s.get_children())
        if kind == "UNARY_OPERATOR" or kind == "COMPOUND_ASSIGNMENT_OPERATOR":
            return self._uniform(s, header=True)
        if kind == "BINARY_OPERATOR" and len(children) == 2 and self.between(*children) == "=":
            return self._uniform(s, header=True)
        return False

    def _peel(self, region: Region) -> None:
        """The block statements (and block declarations) at the start and the end of ``region``."""
        ck = self.ck
        stmts = region.stmts

        def block_decl(s) -> bool:
            keys = [self.tu.off(v.location) for v in s.get_children() if v.kind == ck.VAR_DECL]
            return s.kind == ck.DECL_STMT and bool(keys) and all(k in self.block_vars for k in keys)

        i = 0
        while i < len(stmts) and (self._block_statement(stmts[i]) or block_decl(stmts[i])):
            i += 1
        j = len(stmts)
        while j > i and self._block_statement(stmts[j - 1]):
            j -= 1
        region.lead, region.trail = stmts[:i], stmts[j:]
        # A block statement among the thread's own (`beta /= alpha;` after the declarations of
        # warpId and laneId) runs once before the loop too, where the statements before it that
        # stay in the loop neither name nor declare anything it names: no thread's statement
        # then sees the difference (its variables are a parameter or block variables, whose
        # addresses no one takes).
        region.moved, stay = [], set()
        for s in stmts[i:j]:
            names = self._names(s)
            if self._block_statement(s) and not names & stay:
                region.moved.append(s)
            else:
                stay |= names

    def _names(self, s) -> set[int]:
        """The variables statement ``s`` names or declares."""
        start, end = self.tu.rng(s)
        return {k for p, k, _ in self.refs if start <= p < end} | {k for k in self.locals if start <= k < end}

    def _outside(self, pos: int, region: Region) -> bool:
        return not region.start <= pos < region.end

    def _choose_slots(self) -> None:
        """The per-thread slots: locals declared in one region and used in another."""
        self.slot_types: list[tuple[str, object]] = []
        self.slot_of: dict[int, int] = {}
        self._choose_recomputed()
        self._choose_simd()
        for key in sorted(self.private_params):
            var = self.param_decls[key]
            if UNNAMEABLE.search(var.type.spelling):
                raise Fallback("a parameter a thread writes whose type the build cannot name", var)
            self.slot_of[key] = len(self.slot_types)
            self.slot_types.append((f"__sim_slot{len(self.slot_types)}_t", var))
        for region in self.regions:
            for var in region.declared:
                key = self.tu.off(var.location)
                if key in self.block_vars or key in self.shared:
                    continue
                if not any(self._outside(pos, region) for pos, k, _ in self.refs if k == key):
                    continue
                kind = var.type.kind.name
                if UNNAMEABLE.search(var.type.spelling) or kind in ("LVALUEREFERENCE", "RVALUEREFERENCE"):
                    raise Fallback("a local living across a barrier whose type the build cannot name", var)
                self.slot_of[key] = len(self.slot_types)
                self.slot_types.append((f"__sim_slot{len(self.slot_types)}_t", var))


def require_plain(k: KernelAnalysis) -> None:
    """:class:`Fallback` unless kernel ``k`` is barrier-free, has no ``__shared__`` variable, calls
    only CUDA's math functions and names threadIdx only by its components: what a body of one
    thread loop over the block (``block_loops_interchange.py``'s and ``block_loops_plain.py``'s) needs."""
    if k.barriers:
        raise Fallback("a barrier (block_loops.py rewrites such kernels)")
    if k.shared:
        raise Fallback("a __shared__ variable")
    if not k._threadless(k.body, []):
        raise Fallback("a call other than CUDA's math functions, or threadIdx other than .x, .y, .z")
