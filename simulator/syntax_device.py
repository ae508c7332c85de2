"""Device code in the syntax tree: each function's calls and waits (for the barrier-free
marking), device-only rewrites (built-in variables, ``__shared__`` variables, shifts, ``clock()``)
and the host functions device code may not call.

One pass of a ``TranslationUnit`` (syntax.py): the unit's walk calls it at each node of a
function's code; it writes its edits into the unit's edit list, its refusals into ``problems``
and each function's calls and waits into the unit's ``funcs``.
"""

from __future__ import annotations

import re

from . import ptx
from .cuda_headers import is_toolkit_header
from .edits import Edit, Func, on_device
from .refusals import DEVICE_LIBC, MATH_HEADER
from .syntax_cursors import children_of
from .syntax_launches import CONFIG_CALLS, c_string, is_config
from .syntax_shared_externs import SharedExterns

__all__ = ["BUILTIN_NAMES", "DeviceCodeWalk", "block_sync", "wait_what"]

# Runtime functions (namespace __sim) that wait for, or let run, other threads of the block or warp
# (nanosleep_thread yields to the block's other threads, so a spin-wait on them makes progress).
RUNTIME_WAITS = _WAITS = frozenset(
    {
        "syncthreads",
        "syncthreads_reduce",
        "warp_op",
        "active_mask",
        "coalesced_mask",
        "nanosleep_thread",
        "grid_sync",
        "tile_sync",
    }
)
# CUDA's own functions that wait for other threads of the block or warp (NVIDIA declares them;
# clang knows some as builtins, so their definitions here are not what the parse resolves them to).
CUDA_WAITS = _CUDA_WAITS = re.compile(
    r"__syncthreads\w*|__syncwarp|__shfl\w*|__(?:ballot|any|all|uni)_sync|__match_\w+|__reduce_\w+_sync|"
    r"__activemask|__nanosleep|__barrier_sync\w*"
)
_ATOMIC = re.compile(r"atomic\w+|__atomic_\w+|__sync_\w+")
# CUDA's functions whose reports name the call site (barriers, warp operations, faults, launches
# by address): a call of one in the program's own code records its file and line first.
SITE_CALLS = re.compile(
    r"__syncthreads(?:_count|_and|_or)?|__syncwarp|__shfl(?:_up|_down|_xor)?_sync|__(?:ballot|any|all|uni)_sync|"
    r"__match_(?:any|all)_sync|__reduce_\w+_sync|__nanosleep|__trap|__brkpt|"
    r"tex(?:1D|2D|3D|Cubemap)\w*|surf(?:1D|2D|3D|Cubemap)\w*|"
    r"cudaLaunchKernel(?:Ex|ExC)?|cudaLaunchCooperativeKernel|cudaGraphAddKernelNode"
)


# What each wait is, in the program's terms (the launch log's reason a kernel keeps fibers).
_WAIT_WHAT = (
    (re.compile(r"__syncthreads|syncthreads"), "a barrier"),
    (re.compile(r"__syncthreads_\w+|syncthreads_reduce"), "a barrier that counts or votes"),
    (re.compile(r"__shfl\w*"), "a warp shuffle"),
    (re.compile(r"__syncwarp"), "a warp barrier"),
    (re.compile(r"__(?:ballot|any|all|uni)_sync"), "a warp vote"),
    (re.compile(r"__match_\w+"), "a warp match"),
    (re.compile(r"__reduce_\w+_sync"), "a warp reduction"),
    (re.compile(r"__nanosleep|nanosleep_thread"), "a sleep that lets other threads run"),
    (re.compile(r"__barrier_sync\w*"), "a named barrier"),
    (re.compile(r"grid_sync"), "a grid-wide sync"),
    (re.compile(r"tile_sync"), "a cooperative groups tile sync"),
)


def wait_what(name: str) -> str:
    """What the wait ``name`` is: "a warp shuffle (__shfl_sync)" for CUDA's, whose name the program
    wrote; the runtime's own names (``warp_op``) mean nothing to it and are left out."""
    what = next((w for pattern, w in _WAIT_WHAT if pattern.fullmatch(name)), "a warp operation")
    return f"{what} ({name})" if name.startswith("__") else what


def _note(func: Func, pos: int, what: str) -> None:
    """Keep ``what`` at ``pos`` as ``func``'s reason to keep fibers unless it has one."""
    if func.why is None:
        func.why = (pos, what)


# The statement tests below look at the text next to a statement: they scan from it, since a
# slice of the preprocessed text up to it (megabytes: the C++ library's headers) costs more than
# the whole analysis of a small kernel.


def _stop(text: str, end: int) -> int:
    """Where ``text[:end]`` ends (a negative or too large ``end`` taken as a slice takes it)."""
    return slice(None, end).indices(len(text))[1]


def _stripped_end(text: str, end: int) -> int:
    """``len(text[:end].rstrip())``, without the copy."""
    while end > 0 and text[end - 1].isspace():
        end -= 1
    return end


def _stripped_start(text: str, start: int) -> int:
    """Where ``text[start:].lstrip()`` starts in ``text``, without the copy."""
    while start < len(text) and text[start].isspace():
        start += 1
    return start


def _ends_with_if(text: str, end: int) -> bool:
    """``re.search(r"\\bif\\s*$", text[:end])``: the keyword ``if`` last before ``end`` but whitespace."""
    end = _stripped_end(text, end)
    if end < 2 or text[end - 2 : end] != "if":
        return False
    return end == 2 or not (text[end - 3].isalnum() or text[end - 3] == "_")


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


_ASSIGNMENTS = frozenset({"=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^="})
BUILTIN_NAMES = ("threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize")
# The one built-in device code reads as a constant (the others are the running thread's own
# thread-local objects, runtime/sim_device.h).
_BUILTIN_READ = {"warpSize": "(32)"}


class DeviceCodeWalk:
    """The call graph and device-code rewrites of one ``TranslationUnit``."""

    def __init__(self, unit) -> None:
        self.unit = unit
        self.ci, self.src, self.func_kinds = unit.ci, unit.src, unit.func_kinds
        self.dyn_shared: dict[int, str] = {}  # file-scope extern __shared__: decl key -> element type
        self._externs = SharedExterns(unit)
        self._parents: dict[int, tuple[int, int]] = {}  # local variable -> its declaration statement
        self._shared_groups: dict[tuple[int, int], list[str]] = {}  # declaration -> its variables
        self._lazy: set[int] = set()  # runtime functions walked because device code calls them

    def finish(self) -> None:
        """After the walk: one edit per declaration of ``__shared__`` variables (all its variables)."""
        for (start, end), decls in self._shared_groups.items():
            self.unit.edits.append(Edit(start, end, [" ".join(decls)]))

    def declaration(self, stmt) -> None:
        """Note a declaration statement's variables (a __shared__ one is rewritten whole)."""
        rng = self.unit.rng(stmt)
        for ch in children_of(stmt):
            if ch.kind == self.ci.CursorKind.VAR_DECL:
                self._parents[self.unit.off(ch.location)] = rng

    def file_scope_shared(self, var) -> None:
        """File scope ``extern __shared__ T name[];``: each use reads the dynamic shared memory."""
        start, end = self._decl_stmt(var)
        if (refused := self._externs.incompatible(var)) is not None:
            self.unit.problems.append((start, refused))
        self.unit.edits.append(Edit(start, end, [""]))
        self.dyn_shared[self.unit.off(var.location)] = var.type.get_array_element_type().spelling

    def dynamic_shared_use(self, c, where: int) -> None:
        """Rewrite ``c``, a use of the file-scope ``extern __shared__`` array declared at ``where``."""
        start, end = self.unit.rng(c)
        elem = self.dyn_shared[where]
        self.unit.edits.append(Edit(start, end, [f"(reinterpret_cast<{elem}*>(::__sim::dynamic_shared()))"]))

    def graph_node(self, c, func: Func) -> None:
        """Record in ``func`` the call or the spinning loop ``c`` (the barrier-free marking)."""
        ck = self.ci.CursorKind
        if c.kind == ck.CALL_EXPR:
            ref = c.referenced
            if ref is None or ref.kind not in self.func_kinds:
                if is_config(c):
                    return
                first = next(iter(children_of(c)), None)
                if first is not None and first.kind == ck.TYPE_REF:
                    return  # `T(x)` in a template: a conversion, not a call
                candidates = self._candidates(first)
                if candidates is None:
                    func.unknown = True  # a call through a pointer or an unresolved member
                    at = self.unit.off(c.extent.start)
                    _note(func, at, self._unfollowed(first))
                    return
                for cand in candidates:
                    self._add_call(func, cand, site=c)
                return
            self._add_call(func, ref, c)
        elif c.kind in (ck.WHILE_STMT, ck.DO_STMT, ck.FOR_STMT) and on_device(func):
            # A loop waiting on memory another thread writes (a volatile flag, an atomic read) is a
            # wait too: in a plain loop over the block's threads the writer would never run.
            if self.spins(c):
                func.waits = True
                _note(func, self.unit.off(c.extent.start), "a loop that spins on volatile or atomic memory")

    def _unfollowed(self, callee) -> str:
        """What a call the walk cannot follow calls: a name a template's parameters decide
        (``Policy::template scan<T>(v)``, ``g.sync()`` of a dependent type), or a pointer."""
        ck = self.ci.CursorKind
        while callee is not None and callee.kind == ck.UNEXPOSED_EXPR:
            callee = next(callee.get_children(), None)
        if (
            callee is not None
            and callee.kind in (ck.DECL_REF_EXPR, ck.MEMBER_REF_EXPR)
            and callee.referenced is None
        ):
            name = " ".join(self.unit.text_at(*self.unit.rng(callee)).split())
            return f"a call of '{name}', which depends on a template's parameters (not followed)"
        return "a call through a function pointer or a virtual method"

    def _candidates(self, callee) -> list | None:
        """The functions an unresolved (dependent) call by name may call, or None when not by name."""
        ck = self.ci.CursorKind
        node = callee
        while node is not None and node.kind == ck.UNEXPOSED_EXPR:
            node = next(node.get_children(), None)
        if node is None:
            return None
        if node.kind == ck.DECL_REF_EXPR:
            node = next((ch for ch in node.get_children() if ch.kind == ck.OVERLOADED_DECL_REF), None)
        if node is None or node.kind != ck.OVERLOADED_DECL_REF:
            return None
        lib = self.ci.conf.lib
        return [lib.clang_getOverloadedDecl(node, i) for i in range(lib.clang_getNumOverloadedDecls(node))]

    def _add_call(self, func: Func, ref, call=None, site=None) -> None:
        if ref.kind not in self.func_kinds:
            return
        site = call if site is None else site
        at = self.unit.off(site.extent.start) if site is not None else self.unit.off(ref.location)
        if (
            ref.spelling in _WAITS
            and ref.semantic_parent is not None
            and ref.semantic_parent.spelling == "__sim"
        ):
            func.waits = True
            _note(func, at, wait_what(ref.spelling))
            return
        where = self.unit.off(ref.location)
        if _CUDA_WAITS.fullmatch(ref.spelling) and not self.src.is_user(where):
            func.waits = True
            _note(func, at, wait_what(ref.spelling))
            return
        if func.user and on_device(func) and call is not None and self._device_clock(call, ref, where):
            return
        if func.user and func.kind in ("global", "device") and call is not None:
            self._device_call(call, ref, func, where)
        definition = ref.get_definition()
        if definition is None:
            if self.src.is_user(where):
                func.unknown = True  # declared in the program, defined elsewhere
                _note(func, at, f"a call of '{ref.spelling}', which this file does not define")
            return
        key = self.unit.off(definition.location)
        if key < 0:
            return
        func.calls.add(key)
        func.sites.setdefault(key, at)
        # A function of the runtime or a library's header (NVIDIA's, CCCL's) is walked when device
        # code calls it: what it waits for is the caller's wait too.
        lazy = not self.src.is_user(key) and (func.kind != "host" or not func.user)
        if lazy and key not in self.unit.funcs and key not in self._lazy:
            self._lazy.add(key)
            self.unit.visit(definition, None, False)

    def record_site(self, call, ref) -> bool:
        """``((void)::__sim::call_site("file", line), CALL)`` for a call of one of CUDA's functions
        that report their call site (SITE_CALLS); True when ``call`` was one."""
        if (
            ref is None
            or not SITE_CALLS.fullmatch(ref.spelling)
            or self.src.is_user(self.unit.off(ref.location))
        ):
            return False
        start, end = self.unit.rng(call)
        if start < 0 or end <= start:
            return False
        path, line = self.src.where(start)
        # One edit around the call, not an insertion at each end: a construct that starts or ends
        # where the call does (``__syncthreads_count(p) << bit``, whose shift is rewritten) must
        # hold both halves, or the closing one is lost between the shift's operands.
        opening = f"((void)::__sim::call_site({c_string(path)}, {line}), "
        self.unit.edits.append(Edit(start, end, [opening, (start, end), ")"], exact=True))
        return True

    def _device_clock(self, call, ref, where: int) -> bool:
        """Rewrite device code's ``clock()`` (the C library's name) to read the modelled SM clock."""
        ck = self.ci.CursorKind
        parent = ref.semantic_parent
        if (
            ref.spelling != "clock"
            or self.src.is_user(where)
            or parent is None
            or parent.kind not in (ck.TRANSLATION_UNIT, ck.LINKAGE_SPEC)
        ):
            return False
        callee = next(call.get_children(), None)
        if callee is None:
            return False
        start, end = self.unit.rng(callee)
        if end <= start:
            return False
        self.unit.edits.append(Edit(start, end, ["::__sim::device_clock"]))
        return True

    def _device_call(self, call, ref, func: Func, where: int) -> None:
        """Refuse a call from device code of a function that exists only on the host, as nvcc does.

        Device-callable: functions marked __device__ (or constexpr), everything the simulator's
        runtime headers declare, the device functions of NVIDIA's and CCCL's headers, and the C
        library functions CUDA provides in device code (printf, malloc/free, memcpy/memset,
        assert and the math headers).
        """
        ck = self.ci.CursorKind
        if ref.kind != ck.FUNCTION_DECL or self.src.is_runtime(where) or ref.spelling in CONFIG_CALLS:
            return  # (the configuration call of a device-side <<<>>> launch is rewritten with it)
        name = ref.spelling
        if self.src.is_user(where):
            decl = ref.get_definition() or ref
            if self.unit.kind_of(decl) != "host" or self.unit.kind_of(ref) != "host":
                return
            if any(t.spelling == "constexpr" for t in list(ref.get_tokens())[:12]):
                return
            if ref.semantic_parent is not None and ref.semantic_parent.kind == ck.CLASS_DECL:
                return
            why = "a host function of the program: mark it __device__ or __host__ __device__"
        else:
            definition = ref.get_definition() or ref
            if self.unit.kind_of(ref) != "host" or self.unit.kind_of(definition) != "host":
                return  # a toolkit's or library's device function (NVIDIA's headers, CCCL)
            if is_toolkit_header(self.src.where(where)[0]):
                return  # CUDA's own (clang knows some as builtins, without their attributes)
            parent = ref.semantic_parent
            if (
                parent is None
                or parent.kind not in (ck.TRANSLATION_UNIT, ck.LINKAGE_SPEC)
                or name.startswith("__b")
            ):
                return
            if name in DEVICE_LIBC or MATH_HEADER.search(self.src.where(where)[0]):
                return
            why = "a C library function that CUDA does not provide in device code"
        self.unit.problems.append(
            (
                self.unit.off(call.extent.start),
                f"a __{func.kind}__ function calls the host function '{name}' ({why})",
            )
        )

    def inline_asm(self, c, func: Func | None) -> None:
        """Replace a device-code ``asm`` statement by its C++ translation (ptx.py), or refuse it."""
        start, _ = self.unit.rng(c)
        if not on_device(func) or c.kind != self.ci.CursorKind.ASM_STMT:
            what = (
                "inline assembly in host code" if not on_device(func) else "Microsoft-style inline assembly"
            )
            self.unit.problems.append(
                (start, f"unsupported CUDA construct 'asm' ({what}); write it in CUDA C++")
            )
            return
        refusal = self._translate_asm(c, func)
        if refusal is not None:
            self.unit.problems.append((start, refusal))

    def library_asm(self, c, func: Func | None) -> None:
        """An ``asm`` statement of a library header's device function: translated as a program's
        is; one outside the supported subset becomes a trap naming it, so that a program which
        never reaches it (most of CUB's and cuda_fp16.hpp's functions) builds and runs."""
        if not on_device(func) or c.kind != self.ci.CursorKind.ASM_STMT:
            return  # host code's assembly is the host compiler's
        refusal = self._translate_asm(c, func)
        if refusal is not None:
            start, end = self.unit.rng(c)
            path, line = self.src.where(start)
            self.unit.edits.append(
                Edit(
                    start, end, [f"::__sim::ptx::unsupported({c_string(refusal)}, {c_string(path)}, {line})"]
                )
            )

    def _translate_asm(self, c, func: Func) -> str | None:
        """Rewrite ``c`` to its C++ translation; the refusal's text when PTX outside the subset."""
        start, end = self.unit.rng(c)
        tokens = list(c.get_tokens())
        path, line = self.src.where(start)
        try:
            result = ptx.translate(ptx.split_asm([t.spelling for t in tokens]), path, line)
        except ptx.PtxRefusal as refusal:
            return str(refusal)
        func.waits = func.waits or result.waits
        if result.waits:
            _note(func, start, "inline assembly that waits (a barrier or a warp operation)")
        exprs = [
            (self.unit.off(tokens[op.first].extent.start), self.unit.off(tokens[op.last].extent.end))
            for op in result.operands
        ]
        self.unit.edits.append(
            Edit(start, end, [p if isinstance(p, str) else exprs[p] for p in result.parts])
        )
        return None

    def spin_loop(self, loop) -> None:
        """Wrap the condition of ``loop``, if it spins, in ``::__sim::spinning(...)``: each turn that
        goes on waiting lets the block's other threads run, and a block that only spins lets a
        block not yet started run beside it (runtime/scheduler.cpp, take_turns)."""
        if not self.spins(loop):
            return
        found = self._condition(loop)
        if found is None:
            return
        start, end = found
        text = self.src.text
        opening = f"{text[start]}::__sim::spinning(static_cast<bool>("
        # One edit from the punctuation before the condition to the one after it: a construct
        # that starts or ends where the condition does (a shift rewritten whole) stays inside it.
        self.unit.edits.append(
            Edit(start, end + 1, [opening, (start + 1, end), f")){text[end]}"], exact=True)
        )

    def _condition(self, loop) -> tuple[int, int] | None:
        """Where the punctuation around ``loop``'s condition is: its parentheses (``while``,
        ``do``) or the two semicolons of a ``for`` header; None when it has none to wrap."""
        ck = self.ci.CursorKind
        text = self.src.text
        if loop.kind == ck.FOR_STMT:
            semis, depth = [], 0
            for tok in loop.get_tokens():
                word = tok.spelling
                if word in ("(", "[", "{"):
                    depth += 1
                elif word in (")", "]", "}"):
                    depth -= 1
                    if depth == 0:
                        break
                elif word == ";" and depth == 1:
                    semis.append(self.unit.off(tok.extent.start))
            if len(semis) != 2:
                return None
            start, end = semis
            if start < 0 or end <= start or text[start] != ";" or text[end] != ";":
                return None
            return (start, end) if text[start + 1 : end].strip() else None
        children = list(loop.get_children())
        cond = children[-1] if loop.kind == ck.DO_STMT else children[0] if children else None
        if cond is None or not cond.kind.is_expression():
            return None
        start, end = self.unit.rng(cond)
        if start <= 0 or end <= start:
            return None
        before = _stripped_end(text, start) - 1
        after = _stripped_start(text, end)
        if before < 0 or after >= len(text) or text[before] != "(" or text[after] != ")":
            return None
        return before, after

    def spins(self, loop) -> bool:
        """Whether ``loop`` waits on memory another thread writes (a volatile or atomic read)."""
        ck = self.ci.CursorKind
        children = list(loop.get_children())
        if loop.kind == ck.DO_STMT:
            conds = children[-1:]
        elif loop.kind == ck.WHILE_STMT:
            conds = children[:1]
        else:
            conds = [ch for ch in children[:-1] if ch.kind != ck.DECL_STMT][-1:]
            # The header's last part may be the increment: the condition between its semicolons too.
            found = self._condition(loop)
            if found is not None:
                conds += [ch for ch in children[:-1] if found[0] < self.unit.off(ch.extent.start) < found[1]]
        stack = list(conds)
        while stack:
            n = stack.pop()
            if n.kind in (ck.DECL_REF_EXPR, ck.MEMBER_REF_EXPR, ck.UNARY_OPERATOR, ck.ARRAY_SUBSCRIPT_EXPR):
                if n.type.is_volatile_qualified():
                    return True
            if n.kind == ck.CALL_EXPR and _ATOMIC.fullmatch(n.spelling or ""):
                return True
            stack.extend(n.get_children())
        return False

    def builtin(self, c, name: str, func: Func | None) -> None:
        """A device built-in variable: refused in host code; warpSize reads as its constant."""
        start, end = self.unit.rng(c)
        if func is not None and func.kind == "host":
            self.unit.problems.append(
                (
                    start,
                    f"'{name}' is a device built-in variable: host code cannot use it "
                    "(as with nvcc, it exists only in __global__ and __device__ functions)",
                )
            )
            return
        if name in _BUILTIN_READ:
            self.unit.edits.append(Edit(start, end, [_BUILTIN_READ[name]]))

    def shift(self, c) -> bool:
        """Rewrite a shift to PTX's semantics; True when ``c`` was one."""
        children = list(c.get_children())
        if len(children) != 2:
            return False
        a, b = (self.unit.rng(ch) for ch in children)
        op = self.unit.text_at(a[1], b[0]).strip()
        helper = {"<<": "shl", ">>": "shr", "<<=": "shl_assign", ">>=": "shr_assign"}.get(op)
        if helper is None or a[0] < 0 or b[1] <= b[0]:
            return False
        start, end = self.unit.rng(c)
        self.unit.edits.append(Edit(start, end, [f"::__sim::{helper}(", a, ", ", b, ")"]))
        return True

    def lockstep(self, c, operands: list, op: str | None = None) -> None:
        """Route ``a[i] op= ...a[j]...;`` through ``::__sim::lockstep_assign`` (cuda_sim.h).

        A statement that stores to an element of an array and reads another element of the same
        array is how warp-synchronous code exchanges values between lanes; on a GPU the lanes of
        a warp read before any of them writes. Only a whole statement is rewritten, and only when
        its target has no side effects (it is evaluated twice).
        """
        if len(operands) != 2:
            return
        lhs, rhs = operands
        start, end = self.unit.rng(c)
        a, b = self.unit.rng(lhs), self.unit.rng(rhs)
        if op is None:
            op = self.unit.text_at(a[1], b[0]).strip()
        if op not in _ASSIGNMENTS or a[0] < 0 or b[1] <= b[0] or not self._whole_statement(start, end):
            return
        target = self._element(lhs)
        if target is None or self._has_effects(lhs):
            return
        base, index = target
        if self._own_array(lhs):
            return  # a thread's own array: no other lane reads or writes it
        others = [o[1] for o in self._elements(rhs) if o[0] == base and o[1] != index]
        if not others or self._disjoint_halves(start, index, others):
            return
        if self.unit.text_at(*b).lstrip().startswith("{"):
            return
        if op == "=":
            value = ["[&]() { return ", b, "; }"]
        else:
            value = ["[&]() { auto __sim_lockstep_value = ", a, "; __sim_lockstep_value ", op, " ", b]
            value.append("; return __sim_lockstep_value; }")
        self.unit.edits.append(Edit(start, end, ["::__sim::lockstep_assign(", a, ", ", *value, ")"]))

    def _disjoint_halves(self, start: int, index: str, others: list[str]) -> bool:
        """True for ``if (i < n) a[i] op= a[i + n];`` (a tree reduction's step): the lanes that
        store (``i < n``) read only elements no active lane stores, so lockstep changes nothing."""
        text = self.src.text
        # The text before the statement, up to ``head`` (its whitespace and an opening brace left out).
        head = _stripped_end(text, _stop(text, start))
        if text[head - 1 : head] == "{" and head > 0:
            head = _stripped_end(text, head - 1)
        if not (head > 0 and text[head - 1] == ")"):
            return False
        depth, pos = 0, head - 1
        while pos >= 0:
            depth += {")": 1, "(": -1}.get(text[pos], 0)
            if depth == 0:
                break
            pos -= 1
        if pos < 0 or not _ends_with_if(text, pos):
            return False
        bounds = set()
        for part in text[pos + 1 : head - 1].split("&&"):
            m = re.fullmatch(r"\s*\(?\s*(.+?)\s*<\s*(.+?)\s*\)?\s*", part)
            if m and _squash(m.group(1)) == _squash(index):
                bounds.add(_squash(m.group(2)))
        stride_reads = {f"{_squash(index)}+{b}" for b in bounds}
        return bool(bounds) and all(_squash(o) in stride_reads for o in others)

    def _whole_statement(self, start: int, end: int) -> bool:
        """True when ``[start, end)`` is an expression statement of its own (not inside another)."""
        text = self.src.text
        at = _stripped_start(text, slice(end, None).indices(len(text))[0])
        after = text[at : at + 1]
        before_end = _stripped_end(text, _stop(text, start))
        before = text[before_end - 1 : before_end] if before_end > 0 else ""
        return (
            after == ";"
            and before in ("{", "}", ";", ")", ":")
            or (after == ";" and text[max(0, before_end - 4) : before_end] == "else")
        )

    def _element(self, node) -> tuple | None:
        """(array variable, index text) of ``name[index]`` (through parentheses and casts)."""
        ck = self.ci.CursorKind
        while node is not None and node.kind in (ck.UNEXPOSED_EXPR, ck.PAREN_EXPR):
            node = next(node.get_children(), None)
        if node is None or node.kind != ck.ARRAY_SUBSCRIPT_EXPR:
            return None
        array, index = list(node.get_children())[:2]
        while array.kind in (ck.UNEXPOSED_EXPR, ck.PAREN_EXPR):
            inner = next(array.get_children(), None)
            if inner is None:
                return None  # an expression libclang shows without parts (a dependent one)
            array = inner
        if array.kind != ck.DECL_REF_EXPR or array.referenced is None:
            return None
        return self.unit.off(array.referenced.location), self.unit.text_at(*self.unit.rng(index)).strip()

    def _own_array(self, node) -> bool:
        """Whether ``node`` is an element of an array local to the thread (``float call[9];`` in a
        function's body, neither ``__shared__`` nor ``static``): each lane has its own copy."""
        ck = self.ci.CursorKind
        while node is not None and node.kind in (ck.UNEXPOSED_EXPR, ck.PAREN_EXPR, ck.ARRAY_SUBSCRIPT_EXPR):
            node = next(node.get_children(), None)
        ref = node.referenced if node is not None and node.kind == ck.DECL_REF_EXPR else None
        if ref is None or ref.kind != ck.VAR_DECL:
            return False
        parent = ref.semantic_parent
        return (
            ref.type.get_canonical().kind == self.ci.TypeKind.CONSTANTARRAY
            and ref.storage_class == self.ci.StorageClass.NONE
            and parent is not None
            and parent.kind in (ck.FUNCTION_DECL, ck.CXX_METHOD, ck.FUNCTION_TEMPLATE)
            and not any(ch.kind == ck.CUDASHARED_ATTR for ch in ref.get_children())
        )

    def _elements(self, node) -> list[tuple]:
        """Every ``name[index]`` inside ``node``."""
        subscript = self.ci.CursorKind.ARRAY_SUBSCRIPT_EXPR
        found, stack = [], [node]
        while stack:
            n = stack.pop()
            # Only at the subscript itself (the walk reaches it through any parentheses), so that
            # nested parentheses cost one look each, not one a level below them.
            element = self._element(n) if n.kind == subscript else None
            if element is not None:
                found.append(element)
            stack.extend(n.get_children())
        return found

    def _has_effects(self, node) -> bool:
        ck = self.ci.CursorKind
        stack = [node]
        while stack:
            n = stack.pop()
            if n.kind in (ck.CALL_EXPR, ck.COMPOUND_ASSIGNMENT_OPERATOR):
                return True
            if n.kind in (ck.UNARY_OPERATOR, ck.BINARY_OPERATOR):
                words = {t.spelling for t in n.get_tokens()}
                if words & {"++", "--", "="}:
                    return True
            stack.extend(n.get_children())
        return False

    def shared(self, var) -> None:
        """Rewrite a function-scope ``__shared__`` variable into a reference to per-block storage."""
        ci = self.ci
        name = var.spelling
        stmt_start, stmt_end = self._decl_stmt(var)
        if var.storage_class == ci.StorageClass.EXTERN:
            if (refused := self._externs.incompatible(var)) is not None:
                self.unit.problems.append((stmt_start, refused))
                return
            elem = var.type.get_array_element_type().spelling
            if var.type.kind != ci.TypeKind.INCOMPLETEARRAY:
                self.unit.problems.append(
                    (stmt_start, "expected 'extern __shared__ T name[];' (or T name[][N]...)")
                )
                return
            decl = (
                f"using __sim_shared_{name}_e = {elem}; __sim_shared_{name}_e* const {name} = "
                f"reinterpret_cast<__sim_shared_{name}_e*>(::__sim::dynamic_shared());"
            )
        else:
            declarator = re.sub(
                r"\[[^\]]*\]", "", self.unit.text_at(self.unit.off(var.location), self.unit.rng(var)[1])
            )
            if "=" in declarator or "{" in declarator:
                self.unit.problems.append((stmt_start, "a __shared__ variable cannot have an initializer"))
                return
            typ = var.type.spelling
            alias, site = f"__sim_shared_{name}_t", f"__sim_shared_{name}_site"
            inline = self._inline_type(var)
            # A type defined in the declaration itself (`__shared__ union { ... } temp;`, as CUB's
            # kernels write their scratch space) keeps its definition, now naming the alias.
            named = f"typedef {inline} {alias};" if inline else f"using {alias} = {typ};"
            decl = f"{named} static char {site}; {alias}& {name} = ::__sim::shared_var<{alias}>(&{site});"
        group = self._shared_groups.setdefault((stmt_start, stmt_end), [])
        group.append(decl)

    def _inline_type(self, var) -> str | None:
        """The text of a struct or union defined in ``var``'s declaration (``__shared__ union
        { ... } temp;``, named or not), else None."""
        ck = self.ci.CursorKind
        kinds = (ck.STRUCT_DECL, ck.UNION_DECL, ck.CLASS_DECL)
        found = [ch for ch in var.get_children() if ch.kind in kinds and ch.is_anonymous()]
        decl = var.type.get_canonical().get_declaration()
        if not found and decl is not None and decl.kind in kinds and decl.is_definition():
            start, end = self.unit.rng(decl)
            stmt_start, _ = self._decl_stmt(var)
            if stmt_start <= start < end <= self.unit.off(var.location):
                found = [decl]
        if not found:
            return None
        start, end = self.unit.rng(found[0])
        return re.sub(r"__attribute__\(\(shared\)\)", "", self.unit.text_at(start, end))

    def _decl_stmt(self, var) -> tuple[int, int]:
        parent = self._parents.get(self.unit.off(var.location))
        if parent is not None:
            return parent
        start, end = self.unit.rng(var)
        return start, self.src.through_semicolon(end)


def block_sync(ref, call) -> bool:
    """Whether ``call`` (of ``ref``, a declaration of the toolkit's headers) is cooperative groups'
    barrier of the whole block, which is ``__syncthreads()``: ``thread_block::sync()``, or
    ``cg::sync(g)`` where ``g`` is a ``thread_block``."""
    if ref.spelling != "sync" or ref.semantic_parent is None:
        return False
    parent = ref.semantic_parent
    if parent.spelling == "thread_block":
        return parent.semantic_parent is not None and parent.semantic_parent.spelling == "cooperative_groups"
    args = list(call.get_arguments())
    if parent.spelling != "cooperative_groups" or not args:
        return False
    group = (
        args[0].type.get_canonical().get_pointee() if args[0].type.kind.name.endswith("REFERENCE") else None
    )
    group = (group or args[0].type.get_canonical()).get_declaration()
    return group.spelling == "thread_block" and group.semantic_parent.spelling == "cooperative_groups"
