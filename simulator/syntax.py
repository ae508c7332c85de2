"""One parsed pass of a translation unit: the syntax-tree walk that collects the rewrites.

``TranslationUnit`` parses the preprocessed text with libclang (CUDA, host side) and walks the
program's code once, collecting edits at exact ranges, each function's call graph for the
barrier-free marking, and the constructs it refuses. The unit holds the parse and what every
pass shares (the source map, the edits, the functions met, the launches, the refusals); the
walk and the rendering of the edits live here. What the walk does at each kind of node belongs
to three passes, each an object with its own state, made for the unit and called by its walk:
``LaunchRewrites`` (syntax_launches.py, kernel launches), ``KernelRegistrations``
(syntax_registry.py, kernels and symbols the runtime finds by address or name) and
``DeviceCodeWalk`` (syntax_device.py, device code: calls, waits, built-ins, ``__shared__``
variables, shifts). ``edits.py`` holds the records they share; ``syntax_diagnostics.py`` turns
clang's own diagnostics of the parse into refusals after the walk.
"""

from __future__ import annotations

import bisect
import re
import sys
import time

from . import syntax_pch
from .edits import Edit, Func, on_device, source_error
from .errors import RUNTIME_DIR, clang_module
from .linemap import SourceMap
from .refusals import unsupported
from .syntax_cursors import children_of, offset_of
from .syntax_device import BUILTIN_NAMES, DeviceCodeWalk
from .syntax_diagnostics import clang_diagnostics
from .syntax_launches import LaunchRewrites, is_config
from .syntax_registry import KernelRegistrations
from .syntax_spaces import declaration_spaces

__all__ = ["BUILTIN_NAMES", "Edit", "TranslationUnit", "source_error"]


def _bind_overloads(ci) -> None:
    """Give ``clang.cindex`` the two libclang calls that list an overload set's members."""
    import ctypes

    lib = ci.conf.lib
    if getattr(lib, "_sim_overloads", False):
        return
    lib.clang_getNumOverloadedDecls.argtypes = [ci.Cursor]
    lib.clang_getNumOverloadedDecls.restype = ctypes.c_uint
    lib.clang_getOverloadedDecl.argtypes = [ci.Cursor, ctypes.c_uint]
    lib.clang_getOverloadedDecl.restype = ci.Cursor
    lib.clang_getOverloadedDecl.errcheck = ci.Cursor.from_result
    lib._sim_overloads = True


# Text that marks a construct g++ cannot compile as a library header writes it (a launch, a
# __shared__ variable, inline assembly); _library_walk rewrites the functions that hold one.
# The lookahead names the characters every alternative starts with: the same matches, found in a
# third of the time (the scan then tests one character where a match cannot start).
_LIBRARY_CONSTRUCTS = re.compile(r"(?=[<_a])(?:<<<|__attribute__\(\(shared\)\)|\basm\b|\b__asm__\b)")
# The texts those alternatives start with: where one occurs the pattern is tried (str.find, some
# six times faster than the pattern's own scan of a CCCL program's megabytes).
_LIBRARY_WORDS = ("<<<", "__attribute__((shared))", "asm", "__asm__")


def _library_constructs(text: str) -> list[int]:
    """Where ``_LIBRARY_CONSTRUCTS`` matches in ``text``: the starts of ``finditer``'s matches."""
    places = set()
    for word in _LIBRARY_WORDS:
        at = text.find(word)
        while at >= 0:
            places.add(at)
            at = text.find(word, at + 1)
    found, end = [], 0
    for at in sorted(places):
        m = _LIBRARY_CONSTRUCTS.match(text, at) if at >= end else None
        if m is not None:  # as finditer does, the next match starts at or after this one's end
            found.append(at)
            end = m.end()
    return found


_LINE_MARKER = re.compile(r'\n# \d+ "')


def _escape(path: str) -> str:
    return path.replace("\\", "\\\\").replace('"', '\\"')


# Declarations a function may be inside of.
_CONTAINERS = frozenset(
    {
        "NAMESPACE",
        "LINKAGE_SPEC",
        "CLASS_DECL",
        "STRUCT_DECL",
        "UNION_DECL",
        "CLASS_TEMPLATE",
        "CLASS_TEMPLATE_PARTIAL_SPECIALIZATION",
    }
)

# How deep brackets may nest in the parse (clang's default is 256; g++ has no limit). libclang
# parses on the calling thread's stack, which deeper nesting could overflow.
BRACKET_DEPTH = 1024


def _spelling(token) -> str:
    """A token's text, or "" when its bytes are not UTF-8 (libclang's spelling decodes them)."""
    try:
        return token.spelling
    except UnicodeDecodeError:
        return ""


_FUNC_KINDS_NAMES = (
    "FUNCTION_DECL",
    "CXX_METHOD",
    "FUNCTION_TEMPLATE",
    "CONSTRUCTOR",
    "DESTRUCTOR",
    "CONVERSION_FUNCTION",
)


class TranslationUnit:
    """One parsed pass (host, or device with ``__CUDA_ARCH__``) and the rewrites it asks for."""

    def __init__(self, text: str, user_file) -> None:
        self.ci = ci = clang_module()
        self.src = SourceMap(text, user_file)
        self.func_kinds = {getattr(ci.CursorKind, n) for n in _FUNC_KINDS_NAMES}
        _bind_overloads(ci)
        index = ci.Index.create()
        args = ["-x", "cuda", "-nocudainc", "-nocudalib", "--cuda-host-only", "-std=gnu++17", "-w"]
        args += ["-Wno-unknown-cuda-version", "-ferror-limit=0", "-fno-spell-checking"]
        args += [f"-fbracket-depth={BRACKET_DEPTH}"]
        # Never a CUDA installation of the machine's: the parse is the same with or without one
        # (clang then reads `<<<...>>>` with the pre-9.2 launch API, cudaConfigureCall).
        args += [f"--cuda-path={RUNTIME_DIR}"]
        self.name = "sim_frontend.cu"
        began = time.perf_counter()
        self.tu = self._parse(index, args, text)
        spaces = declaration_spaces(ci, self.tu, self.src)
        if spaces:  # a member's space named only where it is defined, as nvcc takes it: parse again
            self.src = SourceMap(text, user_file, spaces)
            self.tu = self._parse(index, args, text)
        self.parse_seconds = time.perf_counter() - began  # libclang's share (benchmarks/bench_frontend.py)
        # What the passes write, in the order of the walk (the order decides between two edits
        # of one construct, and numbers the registrations' variables).
        self.edits: list[Edit] = []
        self.funcs: dict[int, Func] = {}
        # edit, the keys of the kernels it may launch (a launch, or a kernel's registration)
        self.launches: list[tuple[Edit, list]] = []
        self.problems: list[tuple[int, str]] = []
        self._by_origin: tuple[dict[int, tuple], dict[tuple, int]] | None = None  # see _origins
        self._children: dict = {}  # container cursor -> its children by offset (_function_at)
        self._roots: list | None = None
        self._top: tuple[list, list[int]] | None = None  # see _top_level
        # The user's host-only function definitions with a body (see unchecked_host_starts).
        self.host_definitions: list = []
        # The user's __global__, __device__ and __host__ __device__ definitions (see device_starts).
        self.device_definitions: list = []
        self._library = False  # walking a library header's function (see _library_walk)
        self.launch_rewrites = LaunchRewrites(self)
        self.registrations = KernelRegistrations(self)
        self.device_code = DeviceCodeWalk(self)
        # The walk recurses once or twice a nesting level; a deep expression must not stop it
        # part way (an error raised in libclang's callback is dropped, the rest left unwalked).
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, 8 * BRACKET_DEPTH))
        try:
            self.walk()
            self._library_walk()
        finally:
            sys.setrecursionlimit(limit)
        self.device_code.finish()
        clang_diagnostics(self, BRACKET_DEPTH)

    def _parse(self, index, args: list[str], text: str):
        """libclang's parse of ``self.src``'s text, with the precompiled prelude where it splits off."""
        src = self.src
        cut = syntax_pch.layout(src.parse_text, text, src.inserted) if syntax_pch.ENABLED else None
        tu, cut = syntax_pch.parse(self.ci, index, self.name, args, src.parse_bytes, cut)
        if cut is not None:
            src.loaded(cut)
        return tu

    # ---- the walk over the tree ------------------------------------------------------------------
    def off(self, loc) -> int:
        """A libclang location's offset in the preprocessed text."""
        return self.src.pre(offset_of(loc))

    def rng(self, cursor) -> tuple[int, int]:
        """A cursor's extent in the preprocessed text."""
        return self.off(cursor.extent.start), self.off(cursor.extent.end)

    def text_at(self, start: int, end: int) -> str:
        """The preprocessed text of ``[start, end)``, unrewritten."""
        return self.src.text[start:end]

    def key_of(self, cursor) -> int | None:
        """A function's identity: the preprocessed offset of its definition's name."""
        if cursor is None:
            return None
        d = cursor.get_definition()
        if d is None:
            return None
        return self.off(d.location)

    def kind_of(self, cursor) -> str:
        """``global``, ``device``, ``hd`` or ``host``: the execution space of a function, from its
        qualifiers here and on its first declaration (nvcc applies a declaration's qualifiers to a
        definition written without them)."""
        ck = self.ci.CursorKind
        kinds = {c.kind for c in children_of(cursor)}
        first = cursor.canonical
        if first is not None and first != cursor:
            kinds |= {c.kind for c in children_of(first)}
        if ck.CUDAGLOBAL_ATTR in kinds:
            return "global"
        if ck.CUDADEVICE_ATTR in kinds:
            return "hd" if ck.CUDAHOST_ATTR in kinds else "device"
        return "host"

    def _top_level(self) -> tuple[list, list[int]]:
        """The translation unit's top-level cursors and libclang's offsets of their starts, read
        once: the walk and :meth:`_function_at` both go through all of them."""
        if self._top is None:
            kids = children_of(self.tu.cursor)
            self._top = (kids, [offset_of(c.extent.start) for c in kids])
        return self._top

    def walk(self) -> None:
        std = self.ci.CursorKind.NAMESPACE
        pre = self.src.pre
        for c, raw in zip(*self._top_level()):
            start = pre(raw)
            if start < 0:
                continue  # the prelude
            # The runtime's functions are walked when device code calls them (see _add_call).
            if self.src.is_user(start):
                self.visit(c, None, True)
            elif c.kind == std and c.spelling == "std" and not self.src.is_runtime(start):
                self._drop_device_redeclarations(c)

    def _library_walk(self) -> None:
        """Rewrite what g++ cannot compile as a library's header writes it (CCCL: CUB's and
        Thrust's kernels and their launches): the functions whose text holds a launch, a
        __shared__ variable or an asm statement are walked as the program's are, with the
        program-only checks and marks left out."""
        text, src = self.src.text, self.src
        found = {}
        for at in _library_constructs(text):
            if src.is_user(at) or src.is_runtime(at):
                continue
            f = self._function_at(src.parse(at))
            if f is not None:
                found.setdefault(src.whole(offset_of(f.extent.start)), f)
        self._library = True
        try:
            for _, f in sorted(found.items()):
                # Also a function the walk of device code's calls went through (see _graph_node):
                # that walk only follows calls, and rewrites nothing.
                seen = self.funcs.get(self.off(f.location))
                if seen is None or not seen.user:
                    self.visit(f, None, True)
        finally:
            self._library = False

    def _function_at(self, parse_offset: int):
        """The function definition whose text holds ``parse_offset``, or None."""
        cursor, top = self.tu.cursor, self._top_level()
        while True:
            starts, ends, children = self._sorted_children(cursor, top)
            i = bisect.bisect_right(starts, parse_offset) - 1
            # Declarations may nest in extent (a template and its pattern): the last that starts
            # at or before the offset and still holds it.
            while i >= 0 and ends[i] <= parse_offset:
                i -= 1
            if i < 0:
                return None
            inner = children[i]
            if inner.kind in self.func_kinds:
                return inner if inner.is_definition() else None
            if inner.kind.name not in _CONTAINERS:
                return None
            cursor, top = inner, None

    def _sorted_children(self, cursor, read: tuple[list, list[int]] | None = None) -> tuple[list, list, list]:
        """``cursor``'s children sorted by where they start: (starts, ends, children); ``read``: its
        children and libclang's offsets of their starts, when already read."""
        key = cursor.hash
        found = self._children.get(key)
        if found is None:
            whole = self.src.whole
            kids, raws = read if read is not None else (children_of(cursor), None)
            if raws is None:
                raws = [offset_of(c.extent.start) for c in kids]
            pairs = sorted(
                ((whole(raw), whole(offset_of(c.extent.end)), c) for c, raw in zip(kids, raws)),
                key=lambda t: t[0],
            )
            found = ([p[0] for p in pairs], [p[1] for p in pairs], [p[2] for p in pairs])
            self._children[key] = found
        return found

    def _drop_device_redeclarations(self, namespace) -> None:
        """Leave out of what g++ compiles the toolkit's device-only redeclarations of the C++
        library's functions (``std::abs(float)`` for device code, in <crt/math_functions.h>), as
        nvcc's host compilation never sees a device-only declaration: g++ would take them for
        redeclarations of its own (constexpr) ones. Device code calls the host's, which run here."""
        ck = self.ci.CursorKind
        for c in children_of(namespace):
            if c.kind != ck.FUNCTION_DECL or c.is_definition():
                continue
            attrs = {a.kind for a in children_of(c)}
            if ck.CUDADEVICE_ATTR in attrs and ck.CUDAHOST_ATTR not in attrs:
                start, end = self.rng(c)
                if 0 <= start < end:
                    self.edits.append(Edit(start, self.src.through_semicolon(end), [""]))

    def visit(self, c, func: Func | None, user: bool) -> None:
        """Walk ``c`` and what it holds, inside function ``func`` (None at namespace scope)."""
        ck = self.ci.CursorKind
        kind = c.kind
        if kind in self.func_kinds and c.is_definition():
            fkind = self.kind_of(c)
            f = Func(self.off(c.location), c.spelling, fkind, user and not self._library)
            self.funcs[f.key] = f
            for ch in children_of(c):
                if ch.kind == ck.COMPOUND_STMT:
                    f.body = self.rng(ch)
                self.visit(ch, f, user)
            if self._library:
                return
            if user and fkind == "host" and f.body is not None:
                self.host_definitions.append(c)
            elif user and fkind in ("global", "device") and f.body is not None:
                self.device_definitions.append(c)
            if user and fkind == "global":
                self.registrations.register(c, f.key)
                if f.body is not None:
                    # Entered outside a launch (called through a pointer or a template from host
                    # code, which nvcc cannot refuse): the call records the error and returns.
                    name = c.spelling.replace('"', "")
                    guard = (
                        f'{{ if (!::__sim::on_device()) {{ ::__sim::unconfigured_call("{name}"); return; }} '
                    )
                    self.edits.append(Edit(f.body[0], f.body[0] + 1, [guard]))
            return
        if kind == ck.LAMBDA_EXPR and (func is None or func.kind == "host"):
            # An extended lambda (`[] __device__ (...) {...}`) in host code is device code; other
            # lambdas are walked as part of the enclosing function (their calls are its calls).
            lam = self._lambda_kind(c)
            if lam != "host":
                inner = Func(self.off(c.location), "<lambda>", lam, user)
                for ch in children_of(c):
                    self.visit(ch, inner, user)
                return
        if user:
            self._user_node(c, func)
        if func is not None:
            self.device_code.graph_node(c, func)
        for ch in children_of(c):
            self.visit(ch, func, user)

    def unchecked_host_starts(self) -> list[int]:
        """Where the host functions that may go uninstrumented start (the attribute's place).

        Not templates or explicit specializations (the attribute would precede ``template``),
        friends, constexpr functions (device code may call those), or a function that names an
        atomic: host threads that synchronise through one must stay visible to racecheck. Read
        only for a build that asks (their tokens are scanned here, not during the walk)."""
        starts = []
        for c in self.host_definitions:
            if c.kind == self.ci.CursorKind.FUNCTION_TEMPLATE:
                continue
            words = [tok.spelling for tok in c.get_tokens()]
            head = words[: words.index("{")] if "{" in words else words
            if not head or head[0] == "template" or {"constexpr", "consteval", "friend"} & set(head):
                continue
            if not any("atomic" in w for w in words):
                starts.append(self.off(c.extent.start))
        return starts

    def device_starts(self) -> list[int]:
        """Where each of the user's __global__ and __device__ definitions starts after its template
        headers (``template <...>``), the place of an attribute for the function itself; not those
        marked always_inline, which host code may inline (a target attribute would forbid that)."""
        starts = []
        for c in self.device_definitions:
            # The tokens before the body only, by spelling; text that is not UTF-8 (a Latin-1
            # string literal, or the path in a line marker g++ left between the attribute and the
            # name) has no spelling to read and matches nothing here.
            tokens, words = [], []
            for t in c.get_tokens():
                word = _spelling(t)
                if word == "{":
                    break
                tokens.append(t)
                words.append(word)
            if "always_inline" in words:
                continue
            i = 0
            while i < len(tokens) and words[i] == "template":
                depth, i = 0, i + 1
                while i < len(tokens):
                    depth += {"<": 1, ">": -1, ">>": -2}.get(words[i], 0)
                    i += 1
                    if depth <= 0:
                        break
            if i < len(tokens):
                starts.append(self.off(tokens[i].extent.start))
        return starts

    def _lambda_kind(self, lam) -> str:
        """``device``/``hd`` for a lambda marked __device__ (before its parameters), else ``host``."""
        words = []
        for tok in lam.get_tokens():
            if tok.spelling in ("{", "->"):
                break
            words.append(tok.spelling)
        opener = ["__attribute__", "(", "("]
        marks = {words[i + 3] for i in range(len(words) - 3) if words[i : i + 3] == opener}
        if "device" not in marks:
            return "host"
        return "hd" if "host" in marks else "device"

    def _user_node(self, c, func: Func | None) -> None:
        ck = self.ci.CursorKind
        kind = c.kind
        if self._library:
            self._library_node(c, func)
            return
        if kind in (ck.ASM_STMT, ck.MS_ASM_STMT):
            self.device_code.inline_asm(c, func)
        elif kind == ck.CALL_EXPR:
            if c.referenced is None and c.spelling and unsupported(c.spelling):
                # An unknown template called with explicit arguments (`tex1Dfetch<float>(...)`):
                # clang keeps the call unresolved rather than reporting the name.
                self.refuse(self.off(c.extent.start), c.spelling, unsupported(c.spelling))
                return
            children = children_of(c)
            config = next((ch for ch in children[1:2] if ch.kind == ck.CALL_EXPR and is_config(ch)), None)
            if config is not None:
                self.launch_rewrites.launch(c, children[0], config, func)
            elif self.launch_rewrites.runtime_launch(c):
                pass
            elif self.device_code.record_site(c, c.referenced):
                pass
            elif on_device(func) and (c.spelling or "").startswith("operator"):
                operands = [children[0], children[2]] if len(children) == 3 else []  # (a, operator, b)
                self.device_code.lockstep(c, operands, c.spelling[len("operator") :])
        elif kind == ck.UNEXPOSED_EXPR and self.launch_rewrites.dropped(c):
            self.launch_rewrites.recovered_launch(c, func)
        elif kind == ck.DECL_STMT:
            self.device_code.declaration(c)
        elif kind == ck.VAR_DECL and func is not None:
            if any(ch.kind == ck.CUDASHARED_ATTR for ch in children_of(c)):
                self.device_code.shared(c)
        elif kind == ck.VAR_DECL and func is None:
            if any(ch.kind == ck.CUDASHARED_ATTR for ch in children_of(c)) and c.storage_class == (
                self.ci.StorageClass.EXTERN
            ):
                self.device_code.file_scope_shared(c)
            else:
                self.registrations.register_symbol_name(c)
        elif kind in (
            ck.DECL_REF_EXPR,
            ck.TYPE_REF,
            ck.TEMPLATE_REF,
            ck.NAMESPACE_REF,
            ck.OVERLOADED_DECL_REF,
        ):
            if kind == ck.OVERLOADED_DECL_REF and unsupported(c.spelling):
                self.refuse(self.off(c.extent.start), c.spelling, unsupported(c.spelling))
                return
            ref = c.referenced
            if ref is None:
                return
            where = self.off(ref.location)
            if kind == ck.DECL_REF_EXPR and ref.spelling in BUILTIN_NAMES and not self.src.is_user(where):
                self.device_code.builtin(c, ref.spelling, func)
            elif (
                kind == ck.DECL_REF_EXPR
                and not on_device(func)
                and (templates := self.registrations.kernel_instance(c, ref))
            ):
                self.registrations.register_instance(c, ref, templates)
            elif kind == ck.DECL_REF_EXPR and where in self.device_code.dyn_shared:
                self.device_code.dynamic_shared_use(c, where)
            elif not self.src.is_user(where):
                found = unsupported(ref.spelling)
                if found:
                    self.refuse(self.off(c.extent.start), ref.spelling, found)
        elif kind in (ck.BINARY_OPERATOR, ck.COMPOUND_ASSIGNMENT_OPERATOR) and on_device(func):
            if not self.device_code.shift(c):
                self.device_code.lockstep(c, children_of(c))
        elif kind in (ck.WHILE_STMT, ck.DO_STMT, ck.FOR_STMT) and on_device(func):
            self.device_code.spin_loop(c)

    def _library_node(self, c, func: Func | None) -> None:
        """What a library header's function needs rewritten (see _library_walk): its launches,
        its __shared__ variables and device code's shifts and warpSize; nothing is refused."""
        ck = self.ci.CursorKind
        kind = c.kind
        if kind == ck.CALL_EXPR:
            children = children_of(c)
            config = next((ch for ch in children[1:2] if ch.kind == ck.CALL_EXPR and is_config(ch)), None)
            if config is not None:
                self.launch_rewrites.launch(c, children[0], config, func)
        elif kind == ck.DECL_STMT:
            self.device_code.declaration(c)
        elif kind == ck.VAR_DECL and func is not None:
            if any(ch.kind == ck.CUDASHARED_ATTR for ch in children_of(c)):
                self.device_code.shared(c)
        elif kind == ck.DECL_REF_EXPR and c.spelling == "warpSize" and on_device(func):
            self.device_code.builtin(c, "warpSize", func)
        elif kind in (ck.BINARY_OPERATOR, ck.COMPOUND_ASSIGNMENT_OPERATOR) and on_device(func):
            self.device_code.shift(c)
        elif kind in (ck.ASM_STMT, ck.MS_ASM_STMT):
            self.device_code.library_asm(c, func)

    def refuse(self, pos: int, name: str, found: tuple[str, str]) -> None:
        """Record the refusal of construct ``name`` at ``pos`` (``found``: what it is, the fix)."""
        what, fix = found
        self.problems.append((pos, f"unsupported CUDA construct '{name}' ({what}); {fix}"))

    def barrier_free(self, key: int | None) -> bool:
        """Whether kernel ``key`` reaches no wait (barrier, warp operation, spin) and no unknown callee."""
        if key is None or key not in self.funcs:
            return False
        seen, stack = set(), [key]
        while stack:
            k = stack.pop()
            if k in seen:
                continue
            seen.add(k)
            f = self.funcs.get(k)
            if f is None:
                continue  # a lambda's body, walked with its enclosing function
            if f.waits or f.unknown:
                return False
            stack.extend(f.calls)
        return True

    def fibers_why(
        self, key: int | None, skip: frozenset | set = frozenset(), own: bool = True
    ) -> tuple[int, str] | None:
        """Where and why kernel ``key`` is not barrier-free: its own first wait or unknown callee
        (unless not ``own``), or the call of the first callee (not in ``skip``) that reaches one;
        None when it is."""
        f = self.funcs.get(key) if key is not None else None
        if f is None:
            return None
        if own and f.why is not None:
            return f.why
        for callee, at in f.sites.items():
            if callee in skip:
                continue
            seen, stack = set(), [callee]
            while stack:
                k = stack.pop()
                g = self.funcs.get(k)
                if k in seen or g is None:
                    continue
                seen.add(k)
                if g.why is not None:
                    return at, f"a call of '{self.funcs[callee].name}' that reaches {g.why[1]}"
                stack.extend(g.calls)
        return None

    def origin(self, key: int) -> tuple[str, int, int, str, int]:
        """Where function ``key`` is defined: file, line, column and name, and how many functions
        before it in the text have those four (the same in either pass)."""
        return self._origins()[0][key]

    def function_at(self, origin: tuple[str, int, int, str, int]) -> int | None:
        """The key of the function defined at ``origin`` (see ``origin``), or None."""
        return self._origins()[1].get(origin)

    def _origins(self) -> tuple[dict[int, tuple], dict[tuple, int]]:
        # One macro's expansion puts all the functions it defines on one line of its file, often
        # each at a line start of the preprocessed text (after a line marker): the same file, line,
        # column and name for the four operator() of a macro that defines four class templates. The
        # count of earlier ones tells them apart, in the same order in both passes.
        if self._by_origin is None:
            seen: dict[tuple, int] = {}
            by_key = {}
            for key in sorted(self.funcs):
                path, line = self.src.where(key)
                place = (path, line, key - self.src.line_starts[self.src.line(key)], self.funcs[key].name)
                by_key[key] = (*place, seen.get(place, 0))
                seen[place] = seen.get(place, 0) + 1
            self._by_origin = (by_key, {o: k for k, o in by_key.items()})
        return self._by_origin

    def function_kind(self, pos: int) -> str | None:
        """The kind of the function whose body holds ``pos`` (None outside any)."""
        best = None
        for f in self.funcs.values():
            if f.body is not None and f.body[0] <= pos < f.body[1]:
                if best is None or f.body[0] > best.body[0]:
                    best = f
        return best.kind if best is not None else None

    def render(self, start: int = 0, end: int | None = None) -> str:
        """The text of ``[start, end)`` with every edit inside it applied."""
        end = len(self.src.text) if end is None else end
        self._roots = None
        return self._render(start, end, self._tree())

    def _tree(self) -> list[Edit]:
        if self._roots is not None:
            return self._roots
        uniq = {}
        for e in self.edits:
            # Insertions (empty ranges) are each their own; a construct visited twice is one edit.
            uniq.setdefault((e.start, e.end) if e.end > e.start else (e.start, e.end, id(e)), e)
        # An insertion (empty range) goes before, never inside, a construct that starts where it is.
        edits = sorted(uniq.values(), key=lambda e: (e.start, e.end != e.start, -e.end))
        roots: list[Edit] = []
        stack: list[Edit] = []
        for e in edits:
            e.children = []
            while stack and stack[-1].end <= e.start:
                stack.pop()
            if stack:
                if e.end > stack[-1].end:
                    raise source_error(
                        self.src, e.start, "overlapping constructs the simulator cannot rewrite"
                    )
                stack[-1].children.append(e)
            else:
                roots.append(e)
            stack.append(e)
        self._roots = roots
        return roots

    def _render(self, start: int, end: int, edits: list[Edit]) -> str:
        text = self.src.text
        out, pos = [], start
        for e in edits:
            if e.end <= start or e.start >= end:
                continue
            if e.start < start or e.end > end:
                continue  # a construct that straddles the range is not rewritten inside it
            out.append(text[pos : e.start])
            out.append(self._apply(e))
            pos = e.end
        out.append(text[pos:end])
        return "".join(out)

    def _apply(self, e: Edit) -> str:
        out = []
        for p in e.parts:
            if isinstance(p, tuple):
                out.append(self._render(p[0], p[1], e.children))
            else:
                out.append(p)
        s = "".join(out)
        if e.exact:
            return s
        if _LINE_MARKER.search(self.src.text, e.start, e.end):
            # The construct held a line marker (a qualifier written with a system header's macro):
            # a marker of its own puts the text after it back on its file and line.
            path, line = self.src.where(e.end)
            return s + f'\n# {line} "{_escape(path)}"\n'
        missing = self.src.text.count("\n", e.start, e.end) - s.count("\n")
        # Keep the line count, so that every later line keeps its number.
        return s + "\n" * max(missing, 0)
