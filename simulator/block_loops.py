"""Kernels with ``__syncthreads()`` written as loops over the block's threads, region by region.

A kernel whose every barrier is a ``__syncthreads();`` statement reached by the whole block (at
the top of its body, or inside ``for``/``while``/``do``/``if`` statements whose conditions are
block-uniform) gets a second body that the runtime calls once per block in a fast build
(``::__sim::block_loop()`` is then set, runtime/block_loops.h): the statements between barriers
become regions, each a loop over the block's threads, and a barrier is the end of one loop and
the start of the next. A local declared in one region and used in another lives in a
per-thread slot (``::__sim::per_thread``), and so does a parameter a thread writes (each thread's
own copy, as in CUDA), filled with the launch's value at the block's start; a local whose value is
the same for the whole block (its initializer reads only parameters no thread writes,
``blockIdx``/``blockDim``/``gridDim``, constants and other such locals, and nothing writes it) and
the ``__shared__`` variables are declared once for the block. The original body stays for
fibers (``SIMULATOR_FIBERS=1``, the checkers).

``wmma``'s warp-collective calls and ``__syncwarp()`` may be region boundaries too, and a uniform
``if (c) break;`` may run between regions (``block_loops_wmma.py``).

Anything the analysis cannot prove keeps the kernel on fibers: a barrier under a condition it
cannot show uniform, ``__syncthreads_count`` and the other waits (warp operations, cooperative
groups, spins), a callee that waits, ``goto``, a ``return`` before the last barrier, a
``break``/``continue`` that leaves a region, lambdas, inline assembly, types declared in the
kernel outside a region's statements, a parameter whose address is taken or that a thread writes
but is no scalar or pointer, the address of a local kept in a pointer or in memory (a call may take
it), a local living across a barrier whose type cannot be named.

This module writes the loops; ``block_loops_analysis.py`` decides which kernels qualify and what
their regions, block variables and slots are (``block_loops_threads.py`` what each region needs of
the running thread), ``block_loops_order.py`` whether the checkers may run them too.
"""

from __future__ import annotations

import re

from .block_loops_analysis import SCALARS, Fallback, KernelAnalysis, Region
from .block_loops_bulk import bulk_guard, bulk_regions
from .block_loops_epochs import unjudged_regions
from .block_loops_hoist import unchecked_guard, unchecked_parts
from .block_loops_order import checkers_may_loop
from .block_loops_simd import NARROW_LIMIT, below, below_index, narrow, narrow_declared, unroll_hints
from .block_loops_warps import exchange_declaration
from .block_loops_wmma import mma_parts
from .edits import Edit

__all__ = ["BlockLoops", "block_loop_edit"]

# The runtime's loop over every thread of the block, up to its body (runtime/block_loops_thread_loops.h).
_PLAIN_LOOP = "for_each_plain_thread(*__sim_blk, "
# A pointer's ``__restrict__`` as clang spells a type: g++ takes no array of such pointers (a slot).
_RESTRICT = re.compile(r"\b__restrict(?:__)?\b")


def block_loop_edit(tu, cursor, fma: bool = False, unjudged: bool = False) -> Edit | None:
    """The edit giving kernel ``cursor`` of ``tu`` its block-loop body, or None (fibers).

    ``fma``: the build contracts device code into fused multiply-adds (transform.DEVICE_FMA);
    each region's loop body then has the kernel's target too, inlined or not. ``unjudged``: the
    build is the shared-memory race check, and a region no hazard can involve runs uninstrumented
    (block_loops_epochs.py).
    """
    return _rewrite(tu, cursor, fma, unjudged)[0]


def _rewrite(
    tu, cursor, fma: bool, unjudged: bool = False, why: list | None = None, hoisted: bool = False
) -> tuple[Edit | None, bool]:
    """The edit (or None) and whether the checkers may run it too (block_loops_order.py); a
    ``Fallback`` is appended to ``why`` when given."""
    try:
        k = KernelAnalysis(tu, cursor)
        plan = k.plan()
        # Warp waits and exchanges, uniform jumps and parameters written by block statements
        # (block_loops_wmma.py, block_loops_warps.py): fibers for the checkers, whose findings were
        # compared for none of them. A parameter a thread writes lives in a slot, as a local does,
        # and is judged as one.
        waits = k.boundaries or k.exchanges
        block_params = k.written_params - k.private_params
        checkers = not (waits or k.jumps or block_params) and checkers_may_loop(k, plan)
        return _Emitter(k, fma, unjudged, hoisted, checkers).edit(plan), checkers
    except Fallback as fallback:
        if why is not None:
            why.append(fallback)
        return None, False


class BlockLoops:
    """Which kernels of a parsed pass got a block-loop body (each rewritten once, on first ask)."""

    def __init__(self, tu, fma: bool = False, unjudged: bool = False, hoisted: bool = False) -> None:
        self.tu = tu
        self.fma = fma
        self.unjudged = unjudged
        self.hoisted = hoisted
        self.done: dict[int, bool] = {}
        self.checked: dict[int, bool] = {}  # rewritten kernels that memcheck and racecheck may loop too
        self.fallbacks: dict[int, Fallback] = {}  # kernels kept on fibers: the analysis's reason
        self.kernels = {tu.off(c.location): c for c in tu.device_definitions}

    def rewritten(self, key: int | None) -> bool:
        """Whether kernel ``key`` runs as block loops (its edit is added to the pass the first time)."""
        if key is None:
            return False
        if key not in self.done:
            cursor = self.kernels.get(key)
            f = self.tu.funcs.get(key)
            kernel = cursor is not None and f is not None and f.kind == "global"
            edit, checked = self._rewrite(cursor) if kernel else (None, False)
            self.checked[key] = checked
            if edit is not None:
                self.tu.edits.append(edit)
            self.done[key] = edit is not None
        return self.done[key]

    def _rewrite(self, cursor) -> tuple[Edit | None, bool]:
        """The edit (or None) for kernel ``cursor`` and whether the checkers may run it too."""
        why: list[Fallback] = []
        result = _rewrite(self.tu, cursor, self.fma, self.unjudged, why, self.hoisted)
        if why:
            self.fallbacks[self.tu.off(cursor.location)] = why[0]
        return result

    def fibers_why(self, key: int | None) -> tuple[int | None, str] | None:
        """Where (a preprocessed offset, or None) and why kernel ``key`` keeps fibers; None when
        it runs as block loops or was not analysed."""
        if key is None or self.rewritten(key) or key not in self.fallbacks:
            return None
        fallback = self.fallbacks[key]
        at = fallback.at
        if at is not None and not isinstance(at, int):
            at = self.tu.off(at.extent.start)
        return at, str(fallback)

    def checkers_too(self, key: int | None) -> bool:
        """Whether rewritten kernel ``key`` runs as block loops under memcheck and racecheck too."""
        return key is not None and self.rewritten(key) and self.checked.get(key, False)


class _Emitter:
    """The block-loop body of an analysed kernel (``KernelAnalysis.plan``), as one edit."""

    def __init__(
        self,
        k: KernelAnalysis,
        fma: bool,
        unjudged: bool = False,
        hoisted: bool = False,
        checkers: bool = False,
    ) -> None:
        self.k = k
        self.tu = k.tu
        self.text = k.text
        self.target = ' __attribute__((target("fma")))' if fma else ""
        self.leave_unjudged = unjudged  # whether to leave the regions of unjudged_regions uninstrumented
        self.unjudged: dict[int, str | None] = {}  # those regions (their ids) -> when (None: always)
        self.bulk: set[int] = set()  # regions the race check may judge once per block (block_loops_bulk.py)
        self.hoisted = hoisted  # memcheck: regions whose checks a block can pass get a copy without them
        # A body that memcheck and the shared-memory race check never run (the launch's kind is
        # kBlockLoopsFast or kInterchangedFast) asks block_loop_fast(), which is null at compile
        # time in their builds, so that g++ drops the body instead of instrumenting it.
        self.guard = "::__sim::block_loop()" if checkers else "::__sim::block_loop_fast()"

    def edit(self, plan: list) -> Edit:
        """The edit replacing the kernel's body by the block loops, the original body kept for fibers."""
        start, end = self.tu.rng(self.k.body)
        self.unjudged = unjudged_regions(self.k, plan) if self.leave_unjudged else {}
        self.bulk = bulk_regions(self.k, plan, self.unjudged) if self.leave_unjudged else set()
        parts: list = [f"{{ if (const ::__sim::PlainBlock* const __sim_blk = {self.guard}) {{"]
        for i, (alias, var) in enumerate(self.k.slot_types):
            # A restrict pointer's slot and copies are plain pointers, which change no value.
            spelled = _RESTRICT.sub("", var.type.spelling)
            # A slot of a local every region computes again is used only where it is not.
            used = ", !::__sim::kRecompute" if self.tu.off(var.location) in self.k.recomputed else ""
            slot = f"::__sim::per_thread<{alias}> __sim_slot{i}(__sim_blk->dim{used});"
            parts.append(f" using {alias} = {spelled}; {slot}")
            if self.tu.off(var.location) in self.k.private_params:
                # Each thread's copy of a parameter it writes starts as the launch's value.
                parts.append(f" __sim_slot{i}.fill({var.spelling});")
        for key, (var, _init) in self.k.recomputed.items():
            if key not in self.k.slot_of:
                parts.append(f" using {self._recomputed_alias(key)} = {var.type.spelling};")
        parts += exchange_declaration(self.k)
        parts += self._emit(plan)
        parts += [" return; }", self._marker(start), (start, end), " }", self._marker(end)]
        return Edit(start, end, parts, exact=True)

    def _marker(self, pos: int) -> str:
        path, line = self.tu.src.where(pos)
        escaped = path.replace("\\", "\\\\").replace('"', '\\"')
        return f'\n# {line} "{escaped}"\n'

    def _emit(self, plan: list) -> list:
        parts: list = []
        for item in plan:
            kind = item[0]
            if kind == "barrier":
                # The end of one thread loop and the start of the next; memcheck and racecheck
                # builds follow the fibers' order and epochs there (nothing in other builds).
                parts.append(" ::__sim::block_loop_barrier(*__sim_blk);")
                continue
            if kind == "region":
                parts += self._emit_region(item[1])
            elif kind == "wmma_mma":
                parts += mma_parts(self, item[1])
            elif kind == "jump":
                parts.append(f" {item[1]};")
            elif kind == "compound":
                parts += [" {", *self._emit(item[2]), " }"]
            elif kind == "loop":
                s, body = item[1], item[2]
                head = (self.tu.rng(s)[0], self.tu.rng(body)[0])
                parts += [self._marker(head[0]), head, " {", *self._emit(item[3]), " }"]
            elif kind == "do":
                s, body, plan_ = item[1], item[2], item[3]
                cond = list(s.get_children())[1]
                parts += [" do {", *self._emit(plan_), " } while (", self._marker(self.tu.rng(cond)[0])]
                parts += [self.tu.rng(cond), ");"]
            elif kind == "if":
                cond = item[2]
                parts += [" if (", self._marker(self.tu.rng(cond)[0]), self.tu.rng(cond), ") {"]
                parts += [*self._emit(item[3]), " }"]
                if item[4] is not None:
                    parts += [" else {", *self._emit(item[4]), " }"]
        return parts

    def _emit_region(self, region: Region) -> list:
        tu = self.tu

        def whole(s) -> tuple[int, int]:
            a, b = tu.rng(s)
            return a, tu.src.through_semicolon(b)

        parts: list = []
        for s in region.lead:
            parts += [self._marker(whole(s)[0]), whole(s)]
        pos = whole(region.lead[-1])[1] if region.lead else region.start
        stop = tu.rng(region.trail[0])[0] if region.trail else region.end
        pieces = []
        for s in region.hoisted:
            hs, he = tu.rng(s) if s.kind == self.tu.ci.CursorKind.DECL_STMT else whole(s)
            parts += [self._marker(hs), (hs, he)]
            if hs > pos:
                pieces.append((pos, hs))
            pos = he
        if stop > pos:
            pieces.append((pos, stop))
        outside = {id(s) for s in (*region.hoisted, *region.lead, *region.trail)}
        after: list = []
        for s in region.trail:
            after += [self._marker(whole(s)[0]), whole(s)]
        if not any(self.text[a:b].strip() for a, b in pieces):
            return parts + after
        declared = {tu.off(v.location) for v in region.declared}
        names = {v.spelling for v in region.declared}
        recomputed = self.k.recomputed
        ranges = [(region.start, region.end), *(tu.rng(g) for g in region.guards), *self._read_too(region)]
        bound = sorted(
            {
                k
                for p, k, _ in self.k.refs
                if any(a <= p < b for a, b in ranges) and k in self.k.slot_of and k not in declared
            }
        )
        # The locals a recomputed one's initializer reads are computed again too, first.
        again = self._closure([k for k in bound if k in recomputed])
        kept = [k for k in sorted(declared) if k in self.k.slot_of]
        body: list = []
        if (bound or kept) and not region.simd:
            body.append(" const int __sim_t = *__sim_blk->linear;")
        # Column indices the loop may compute as signed sums in a block whose values allow it
        # (block_loops_simd.py): key -> (U, X) of the initializer U + X.
        narrowed: dict = {}
        # (condition, S, U) of a region that is one `if (X < S)` (U None; block_loops_simd.below) or
        # declares a column index V = U + X then is one `if (V < S)` (below_index).
        prefix = None
        loop_head = self._thread_loop(region)
        # The block's plain loop (a grid-stride round's loop runs the threads its flags leave in).
        every = loop_head == _PLAIN_LOOP
        plain = region.simd and every
        # The same for the column indices the region declares itself (a barrier-free kernel's one
        # region, block_loops_plain.py): their initializers in the region's text are rewritten.
        declared_narrow: dict = {}
        if plain:
            narrowed = {k: uv for k in again if (uv := narrow(self.k, k)) is not None}
            declared_narrow = narrow_declared(self.k, region, outside)
        for k in again:
            var, init = recomputed[k]
            if var.spelling in names:
                raise Fallback(f"a region declares '{var.spelling}' again after an earlier one's", var)
            body += self._recomputed_declaration(k, var, init, region.simd, narrowed.get(k))
        for k in bound:
            if k in recomputed:
                continue
            i = self.k.slot_of[k]
            alias, var = self.k.slot_types[i]
            if var.spelling in names:
                raise Fallback(f"a region declares '{var.spelling}' again after an earlier one's", var)
            if var.type.get_canonical().kind.name in SCALARS:
                # A scalar is copied in and out (every way out of a region but the kernel's last
                # `return` reaches its end, and its address is never taken): as a local the
                # compiler keeps it in a register, where a reference into the slots would be
                # read and written at every use in case the kernel's stores alias it.
                body.append(f" {alias} {var.spelling} = __sim_slot{i}.get(__sim_t);")
                if not var.type.is_const_qualified():
                    kept.append(k)
            else:
                body.append(f" {alias}& {var.spelling} = __sim_slot{i}[__sim_t];")
        if region.shadow:
            body.append(region.shadow)
        prelude = self._prelude(region)
        if plain and not region.guards and not kept and not prelude:
            prefix = below(self.k, region, outside, again)
            prefix = (*prefix, None) if prefix is not None else None
            if prefix is None and (narrowed or declared_narrow):
                prefix = below_index(self.k, region, outside, again, {**narrowed, **declared_narrow})
        body += prelude
        for g in region.guards:
            # A thread outside the condition does nothing in this region.
            body += [" if (!(", self._marker(tu.rng(g)[0]), tu.rng(g), ")) return;"]
        hints = unroll_hints(self.k, region, outside) if region.simd else {}
        inserts = {at: [f"\n#pragma GCC unroll {n}", self._marker(at)] for at, n in hints.items()}
        for key, uv in declared_narrow.items():
            init_start, init_end = tu.rng(recomputed[key][1])
            inserts[init_start] = ["(__sim_fast ? ", *self._signed_sum("int", uv), " : static_cast<int>("]
            inserts[init_start].append(self._marker(init_start))
            inserts[init_end] = ["))"]
        if prefix is not None:
            # The threads the loop runs pass the condition: where it runs only those, it is true.
            cs, ce = tu.rng(prefix[0])
            inserts[cs] = ["__sim_fast || ("]
            inserts[ce] = [")"]
        for a, b in pieces:
            body += [self._marker(a)]
            for at in sorted(p for p in inserts if a <= p < b):
                # A pragma is a line of its own, right before its loop.
                body += [(a, at), *inserts[at]]
                a = at
            body.append((a, b))
        if region.closing:
            body.append(region.closing)
        for k in kept:
            i = self.k.slot_of[k]
            keep = f"__sim_slot{i}.keep(__sim_t, {self.k.slot_types[i][1].spelling});"
            body.append(f"\n if (!::__sim::kRecompute) {keep}" if k in recomputed else f"\n {keep}")
        # A region that no shared-memory hazard can involve (block_loops_epochs.py): its loop and
        # body without ThreadSanitizer's calls (runtime/block_loops_thread_loops.h). Only the race
        # check's build has such regions, and only a fast build has grid-stride rounds (_thread_loop's
        # flags).
        # threadIdx is the loop's own index in a SIMD region: nothing is stored per thread.
        params = "const ::uint3 threadIdx, const int __sim_t" if region.simd else ""
        call: list = [f" ::__sim::{loop_head}"]
        # The loop's prefix bound (runtime/block_loops_thread_loops.h). An index's (``if (V < S)``,
        # V = U + x): x < S - (int)U in 64 bits, exact where the block's check passed, so a fast build's alone
        # (kRecompute); the checkers run every thread there. Else the builds that take any bound
        # evaluate it once for the block (kPrefixBound); memcheck's takes a name or a literal too,
        # whose evaluation nothing checks (kPrefixBelow).
        bound: list = ["2147483647"]
        if prefix is not None and prefix[2] is not None:
            at, u = tu.rng(prefix[1]), tu.rng(prefix[2])
            bound = ["::__sim::kRecompute ? ::__sim::index_below((long long)(", self._marker(at[0]), at]
            bound += ["), (int)(", self._marker(u[0]), u, ")) : 2147483647"]
        elif prefix is not None:
            at = tu.rng(prefix[1])  # below() gives it bare
            simple = prefix[1].kind.name in ("DECL_REF_EXPR", "INTEGER_LITERAL")
            flag = "kPrefixBelow" if simple else "kPrefixBound"
            bound = [f"::__sim::{flag} ? (int)(", self._marker(at[0]), at, ") : 2147483647"]
        if narrowed or declared_narrow or prefix is not None:
            # The loop's fast form, where the block's check passes: the signed sums, and only the
            # threads of a row below the prefix's bound (runtime/block_loops_thread_loops.h).
            # (The checkers' builds, whose loop ignores the first, do not evaluate it: kRecompute;
            # the bound's flags above say which take the second.)
            params = "const ::uint3 threadIdx, [[maybe_unused]] const auto __sim_fast, const int __sim_t"
            call.append("::__sim::kRecompute")
            for u, _x in (*narrowed.values(), *declared_narrow.values()):
                call += [" && (int)(", self._marker(tu.rng(u)[0]), tu.rng(u), f") <= {NARROW_LIMIT}"]
            call += [", ", *bound, ", "]

        def loop(judged: bool, checked: bool = True) -> list:
            if not checked:
                # memcheck's copy without ASan's and UBSan's checks (block_loops_hoist.py).
                head = call[0].replace("for_each_plain_thread", "for_each_unchecked_thread")
                attribute = ' __attribute__((no_sanitize("address", "undefined")))'
                text = [head, *call[1:], f"[&]({params}){self.target}{attribute} {{", *body, "\n });"]
                return unchecked_parts(text, again_names)
            if judged:
                return [*call, f"[&]({params}){self.target} {{", *body, "\n });"]
            attribute = " __attribute__((no_sanitize_thread))"
            head = f" ::__sim::for_each_unjudged_thread(*__sim_blk, [&]({params}){self.target}{attribute} {{"
            return [head, *body, "\n });"]

        guard, again_names = None, set()
        if self.hoisted and id(region) not in self.unjudged and not region.guards and not prelude and every:
            guard, again_names = unchecked_guard(self.k, region, outside, bound, again) or (None, set())
        if guard is not None:
            # memcheck's build alone: the copy without checks where the block's values keep every
            # check of the region from firing, the instrumented loop otherwise (runtime/block_loops_hoist.h).
            parts += [" if (::__sim::kHoistChecks && (", *guard, "))", *loop(True, False)]
            parts += [" else", *loop(True)]
        elif id(region) not in self.unjudged:
            accesses = None
            if id(region) in self.bulk and not prelude and every:
                accesses = bulk_guard(self.k, region, outside)
            if accesses is not None:
                # Unjudged where the block's values show that no two threads meet at a byte one of
                # them writes, judged otherwise (block_loops_bulk.py, runtime/block_loops_bulk.h).
                # A prefix region's fast form takes its condition as true, exact below its bound.
                taken = prefix is not None and prefix[2] is None and not narrowed and not declared_narrow
                judge = "[&](::__sim::bulk_judge& __sim_j) __attribute__((no_sanitize_thread)) {"
                parts += [" if (::__sim::bulk_clean(*__sim_blk, ", *bound, f", {judge}", *accesses, " }))"]
                head = f" ::__sim::for_each_bulk_thread<{'true' if taken else 'false'}>(*__sim_blk, "
                attribute = " __attribute__((no_sanitize_thread))"
                parts += [head, *bound, f", [&]({params}){self.target}{attribute} {{", *body, "\n });"]
                parts += [" else", *loop(True)]
            else:
                parts += loop(True)
        elif (guard := self.unjudged[id(region)]) is None:
            parts += loop(False)
        else:
            # Unjudged only while the block's shape keeps each thread's stores to its own elements of
            # shared memory (block_loops_cells.py); judged for any other shape.
            parts += [f" if ({guard})", *loop(False), " else", *loop(True)]
        return parts + after

    def _thread_loop(self, region: Region) -> str:
        """The call of the runtime's loop that runs ``region`` for the block's threads, up to its body."""
        del region
        return _PLAIN_LOOP

    def _read_too(self, region: Region) -> list[tuple[int, int]]:
        """Source ranges outside ``region`` whose locals its loop reads too (none here)."""
        del region
        return []

    def _prelude(self, region: Region) -> list:
        """Code each thread runs before ``region``'s conditions and statements (none here)."""
        del region
        return []

    def _recomputed_declaration(self, key, var, init, indexed: bool = False, narrowed=None) -> list:
        """The declaration of recomputed local ``key`` (``var = init``) at a region's start: its
        initializer again, or, in the checkers' builds (kRecompute false), the slot that keeps it
        (``indexed``: in a region whose threadIdx is its loop's index, kRecomputeIndexed).
        ``narrowed``: the ``(U, X)`` of an initializer ``U + X`` that the loop's ``__sim_fast``
        has it compute as the signed sum ``(int)U + (int)X`` (block_loops_simd.py)."""
        alias = self._recomputed_alias(key)
        other = f"{alias}()"
        if key in self.k.slot_of:
            alias = self.k.slot_types[self.k.slot_of[key]][0]
            other = f"__sim_slot{self.k.slot_of[key]}.get(__sim_t)"
        again = [f"static_cast<{alias}>(", self._marker(self.tu.rng(init)[0]), self.tu.rng(init), ")"]
        if narrowed is not None:
            again = ["(__sim_fast ? ", *self._signed_sum(alias, narrowed), " : ", *again, ")"]
        which = "kRecomputeIndexed" if indexed else "kRecompute"
        return [f" {alias} {var.spelling} = ::__sim::{which} ? ", *again, f" : {other};"]

    def _signed_sum(self, alias: str, narrowed) -> list:
        """``U + X`` of ``narrowed`` (its cursors) as the signed sum ``(int)U + (int)X``, as an ``alias``."""
        u, x = (self.tu.rng(c) for c in narrowed)
        return [
            f"static_cast<{alias}>((int)(",
            self._marker(u[0]),
            u,
            ") + (int)(",
            self._marker(x[0]),
            x,
            "))",
        ]

    def _recomputed_alias(self, key: int) -> str:
        """The type alias of a recomputed local that has no slot (it lives in one region only)."""
        return f"__sim_again{list(self.k.recomputed).index(key)}_t"

    def _closure(self, keys: list[int]) -> list[int]:
        """``keys`` and the recomputed locals their initializers read, in declaration order."""
        seen: set[int] = set()
        stack = list(keys)
        while stack:
            k = stack.pop()
            if k in seen:
                continue
            seen.add(k)
            start, end = self.tu.rng(self.k.recomputed[k][1])
            stack += [d for p, d, _ in self.k.refs if start <= p < end and d in self.k.recomputed]
        return sorted(seen)
