"""The simulator's C++ front end: preprocessed CUDA in, C++ that g++ compiles out.

The build preprocesses a translation unit with g++ (``-DSIM_FRONTEND``, so the CUDA qualifiers
survive as clang's CUDA attributes and every line keeps its ``# N "file"`` marker), then this
module parses that text with libclang as CUDA (host side, ``-nocudainc``) and rewrites the
syntax tree's constructs at their exact ranges:

* a kernel-call expression ``k<<<grid, block, smem, stream>>>(args)`` becomes a call of
  ``::sim::launcher`` (or ``::sim::launch_deduced`` for a kernel template with deduced
  arguments or an overloaded kernel), marked barrier-free when the kernel's call graph reaches
  no barrier, warp operation or other wait;
* a function-scope ``__shared__`` variable becomes a reference to per-block storage and an
  ``extern __shared__`` array a pointer to the launch's dynamic shared memory;
* device-code uses of ``threadIdx``/``blockIdx``/``blockDim``/``gridDim``/``warpSize`` read the
  running thread's state (host code's own variables with these names are left alone);
* device-code shifts follow PTX (``::sim::shl``/``::sim::shr``);
* with a device pass (``__CUDA_ARCH__`` defined), each device function takes its device body.

Constructs the simulator cannot run are refused with the file, line and name. Only code in
the user's files is rewritten; system and runtime headers pass through untouched.
"""

from __future__ import annotations

import bisect
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["INSTALL_HINT", "SimBuildError", "TranslationUnit", "clang_module", "translate_preprocessed"]

RUNTIME_DIR = str(Path(__file__).resolve().parent / "runtime")
INSTALL_HINT = (
    'the simulator\'s C++ front end needs libclang: pip install "torchlight[simulator]" '
    '(in a source checkout: pip install "libclang>=18.1")'
)


class SimBuildError(Exception):
    """A source the simulator cannot build; the message names the file, line and construct."""


def clang_module():
    """``clang.cindex``, or a ``SimBuildError`` with the pip command when libclang is missing."""
    try:
        import clang.cindex as ci
    except ImportError as exc:
        raise SimBuildError(INSTALL_HINT) from exc
    return ci


# (name pattern, what it is, what to do instead): named constructs the simulator refuses.
_UNSUPPORTED = [
    (
        r"tex(?:1D|2D|3D|1Dfetch|Cubemap)\w*|texture|cudaTextureObject_t|cudaSurfaceObject_t|surf(?:1D|2D|3D)\w*",
        "textures / surfaces",
        "read global memory instead",
    ),
    (
        r"__shfl(?:_up|_down|_xor)?|__ballot|__any|__all",
        "warp intrinsic without _sync (removed in CUDA 9)",
        "use the *_sync form with a mask",
    ),
    (
        r"__(?:match_any|match_all|reduce_add|reduce_min|reduce_max|reduce_and|reduce_or|reduce_xor)_sync",
        "__match_*_sync / __reduce_*_sync warp intrinsics",
        "build the result from __shfl_*_sync",
    ),
    (r"wmma|nvcuda", "warp matrix (tensor core) operations", "use scalar arithmetic"),
    (
        r"cudaLaunchKernel|cudaLaunchCooperativeKernel|cudaGraph\w*|__nanosleep|clock64"
        r"|cudaMemcpy2D(?:To|From)Array\w*|cudaMemcpy3D\w*|cudaMalloc3D\w*|cudaMallocArray",
        "this CUDA runtime call or device intrinsic",
        "see simulator/README.md for the supported API",
    ),
]
_UNSUPPORTED_RE = [(re.compile(p), what, fix) for p, what, fix in _UNSUPPORTED]
# Clang's messages that name a declaration it could not find.
_UNDECLARED = re.compile(
    r"(?:use of undeclared identifier|unknown type name|no template named|no member named"
    r"|use of undeclared label|no type named) '([A-Za-z_]\w*)'"
)

# Runtime functions (namespace sim) that wait for other threads of the block or warp.
_WAITS = frozenset({"syncthreads", "syncthreads_reduce", "warp_op", "active_mask", "coalesced_mask"})
_ATOMIC = re.compile(r"atomic\w+|__atomic_\w+|__sync_\w+")
BUILTIN_NAMES = ("threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize")
_BUILTIN_READ = {
    "threadIdx": "(::sim::tl_thread->thread_idx)",
    "blockIdx": "(::sim::tl_thread->block_idx)",
    "blockDim": "(::sim::tl_thread->block_dim)",
    "gridDim": "(::sim::tl_thread->grid_dim)",
    "warpSize": "(32)",
}
# C library functions CUDA also provides in device code (math functions are allowed by header).
_DEVICE_LIBC = frozenset(
    "printf malloc free memcpy memset __assert_fail __assert_perror_fail __assert abs labs llabs".split()
)
_MATH_HEADER = re.compile(r"math|cmath|std_abs|fenv|complex|limits|numeric")
# The qualifiers as the front end sees them, and what g++ gets instead.
_ATTRIBUTES = {
    "__attribute__((global))": "",
    "__attribute__((device))": "",
    "__attribute__((host))": "",
    "__attribute__((constant))": "",
    "__attribute__((managed))": "",
    "__attribute__((shared))": "static thread_local",
}
# Declarations the parse needs that g++ does not: clang turns `<<<...>>>` into a call of this.
_PRELUDE = (
    '# 1 "<sim-frontend>"\nstruct dim3;\n'
    'extern "C" int __cudaPushCallConfiguration(dim3, dim3, unsigned long = 0, void* = 0);\n'
)
# libstdc++ preprocessed by g++ takes its GCC-only branch for index sequences (`__integer_pack`,
# which clang lacks); the parse gets clang's branch instead, same length, so offsets stay. The
# prelude declares the alias that branch needs.
_PRELUDE += (
    "namespace std { template <decltype(sizeof 0)...> struct _Index_tuple;\n"
    "template <class T, T... I> using __sim_it = _Index_tuple<I...>; }\n"
)
_GCC_ONLY = [
    (
        re.compile(r"(?m)^[ \t]*using __type = _Index_tuple<__integer_pack\(_Num\)\.\.\.>;$"),
        "using __type=__make_integer_seq<__sim_it,size_t,_Num>;",
    ),
    (
        re.compile(r"(?m)^[ \t]*= integer_sequence<_Tp, __integer_pack\(_Num\)\.\.\.>;$"),
        "= __make_integer_seq<integer_sequence, _Tp, _Num>;",
    ),
]


def _for_clang(text: str) -> str:
    """``text`` with the GCC-only library lines clang cannot parse swapped for clang's own (same length)."""
    for rx, repl in _GCC_ONLY:
        text = rx.sub(
            lambda m, r=repl: r.rjust(len(m.group(0))) if len(r) <= len(m.group(0)) else m.group(0), text
        )
    return text


_HD_BEGIN = "#pragma clang force_cuda_host_device begin\n"
_HD_END = "#pragma clang force_cuda_host_device end\n"
_MARKER = re.compile(r'# (\d+) "((?:[^"\\]|\\.)*)"((?: \d)*)$')


@dataclass
class _Edit:
    start: int
    end: int
    parts: list  # str, or (start, end) of a sub-range rendered with the edits inside it
    children: list = field(default_factory=list)
    exact: bool = False  # its text brings its own line markers: no padding to the line count


@dataclass
class _Func:
    key: int
    name: str
    kind: str  # "global", "device", "hd", "host"
    user: bool
    body: tuple[int, int] | None = None
    calls: set = field(default_factory=set)
    waits: bool = False
    unknown: bool = False


class _Source:
    """The preprocessed text, its line markers and the map from parse offsets back to it."""

    def __init__(self, text: str, user_file) -> None:
        self.text = text
        self.line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
        # One entry per line marker: the preprocessed line it starts, the file and line there,
        # and whether that stretch is the user's code or the simulator's runtime.
        self.marks: list[int] = [0]
        self.files: list[tuple[str, int, bool, bool]] = [("", 0, False, False)]
        chunks, pos, prev_user = [], 0, None
        self.inserted: list[tuple[int, int]] = [(0, len(_PRELUDE) + len(_HD_BEGIN))]
        chunks.append(_PRELUDE + _HD_BEGIN)
        for m in re.finditer(r'(?m)^# (\d+) "((?:[^"\\]|\\.)*)"((?: \d)*)$', text):
            path = m.group(2).replace('\\"', '"').replace("\\\\", "\\")
            flags = m.group(3).split()
            is_rt = path.startswith(RUNTIME_DIR)
            is_user = "3" not in flags and not path.startswith("<") and not is_rt and bool(user_file(path))
            line = bisect.bisect_right(self.line_starts, m.start()) - 1
            self.marks.append(line + 1)
            self.files.append((path, int(m.group(1)), is_user, is_rt))
            if prev_user is not None and is_user != prev_user:
                # Outside the user's code every function is callable from device code (math, the
                # runtime): clang's CUDA checks then apply to the user's own functions only.
                chunks.append(text[pos : m.start()])
                chunks.append(_HD_END if is_user else _HD_BEGIN)
                self.inserted.append((m.start(), len(chunks[-1])))
                pos = m.start()
            prev_user = is_user
        chunks.append(text[pos:])
        chunks = [_for_clang(c) for c in chunks]
        if not text.endswith("\n"):
            chunks.append("\n")
        if prev_user is not True:
            chunks.append(_HD_END)
        self.parse_text = "".join(chunks)
        acc, self._ins_pos, self._ins_acc = 0, [], []
        for at, n in self.inserted:
            acc += n
            self._ins_pos.append(at + acc)  # first parse offset after this insertion
            self._ins_acc.append(acc)

    def pre(self, parse_offset: int) -> int:
        """The preprocessed-text offset of a parse-buffer offset."""
        i = bisect.bisect_right(self._ins_pos, parse_offset) - 1
        return parse_offset - (self._ins_acc[i] if i >= 0 else len(_PRELUDE) + len(_HD_BEGIN))

    def line(self, pre_offset: int) -> int:
        return bisect.bisect_right(self.line_starts, pre_offset) - 1

    def _mark(self, pre_offset: int) -> int:
        return bisect.bisect_right(self.marks, self.line(pre_offset)) - 1

    def where(self, pre_offset: int) -> tuple[str, int]:
        line = self.line(pre_offset)
        i = bisect.bisect_right(self.marks, line) - 1
        path, first, _, _ = self.files[i]
        return path, first + line - self.marks[i]

    def is_user(self, pre_offset: int) -> bool:
        return 0 <= pre_offset < len(self.text) and self.files[self._mark(pre_offset)][2]

    def is_runtime(self, pre_offset: int) -> bool:
        return 0 <= pre_offset < len(self.text) and self.files[self._mark(pre_offset)][3]


def _error(src: _Source, pos: int, msg: str) -> SimBuildError:
    path, line = src.where(pos)
    return SimBuildError(f"{path}:{line}: {msg}")


def _unsupported(name: str) -> tuple[str, str] | None:
    for rx, what, fix in _UNSUPPORTED_RE:
        if rx.fullmatch(name):
            return what, fix
    return None


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
        self.src = _Source(text, user_file)
        self.func_kinds = {getattr(ci.CursorKind, n) for n in _FUNC_KINDS_NAMES}
        _bind_overloads(ci)
        index = ci.Index.create()
        args = ["-x", "cuda", "-nocudainc", "-nocudalib", "--cuda-host-only", "-std=gnu++17", "-w"]
        args += ["-Wno-unknown-cuda-version", "-ferror-limit=0", "-fno-spell-checking"]
        self.name = name = "sim_frontend.cu"
        began = time.perf_counter()
        self.tu = index.parse(name, args=args, unsaved_files=[(name, self.src.parse_text)])
        self.parse_seconds = time.perf_counter() - began  # libclang's share (benchmarks/bench_frontend.py)
        self.edits: list[_Edit] = []
        self.funcs: dict[int, _Func] = {}
        self.launches: list[tuple[_Edit, list]] = []  # edit, the keys of the kernels it may launch
        self.problems: list[tuple[int, str]] = []
        self.dyn_shared: dict[int, str] = {}  # file-scope extern __shared__: decl key -> element type
        self._parents: dict[int, tuple[int, int]] = {}  # local variable -> its declaration statement
        self._shared_groups: dict[tuple[int, int], list[str]] = {}
        self._overloads: dict = {}
        self._by_origin: dict | None = None
        self._roots: list | None = None
        self.walk()
        for (start, end), decls in self._shared_groups.items():
            self.edits.append(_Edit(start, end, [" ".join(decls)]))
        self._diagnostics()

    # ---- the walk over the tree ------------------------------------------------------------------
    def off(self, loc) -> int:
        return self.src.pre(loc.offset)

    def rng(self, cursor) -> tuple[int, int]:
        return self.off(cursor.extent.start), self.off(cursor.extent.end)

    def key_of(self, cursor) -> int | None:
        """A function's identity: the preprocessed offset of its definition's name."""
        if cursor is None:
            return None
        d = cursor.get_definition()
        if d is None:
            return None
        return self.off(d.location)

    def _kind(self, cursor) -> str:
        ck = self.ci.CursorKind
        kinds = {c.kind for c in cursor.get_children()}
        if ck.CUDAGLOBAL_ATTR in kinds:
            return "global"
        if ck.CUDADEVICE_ATTR in kinds:
            return "hd" if ck.CUDAHOST_ATTR in kinds else "device"
        return "host"

    def walk(self) -> None:
        for c in self.tu.cursor.get_children():
            start = self.off(c.extent.start)
            if start < 0:
                continue  # the prelude
            if self.src.is_user(start) or self.src.is_runtime(start):
                self._visit(c, None, self.src.is_user(start))

    def _visit(self, c, func: _Func | None, user: bool) -> None:
        ck = self.ci.CursorKind
        kind = c.kind
        if kind in self.func_kinds and c.is_definition():
            fkind = self._kind(c)
            f = _Func(self.off(c.location), c.spelling, fkind, user)
            self.funcs[f.key] = f
            for ch in c.get_children():
                if ch.kind == ck.COMPOUND_STMT:
                    f.body = self.rng(ch)
                self._visit(ch, f, user)
            return
        if kind == ck.LAMBDA_EXPR and (func is None or func.kind == "host"):
            # An extended lambda (`[] __device__ (...) {...}`) in host code is device code; other
            # lambdas are walked as part of the enclosing function (their calls are its calls).
            lam = self._lambda_kind(c)
            if lam != "host":
                inner = _Func(self.off(c.location), "<lambda>", lam, user)
                for ch in c.get_children():
                    self._visit(ch, inner, user)
                return
        if user:
            self._user_node(c, func)
        if func is not None:
            self._graph_node(c, func)
        for ch in c.get_children():
            self._visit(ch, func, user)

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

    def _device(self, func: _Func | None) -> bool:
        return func is not None and func.kind in ("global", "device", "hd")

    def _graph_node(self, c, func: _Func) -> None:
        ck = self.ci.CursorKind
        if c.kind == ck.CALL_EXPR:
            ref = c.referenced
            if ref is None or ref.kind not in self.func_kinds:
                if self._is_config(c):
                    return
                first = next(c.get_children(), None)
                if first is not None and first.kind == ck.TYPE_REF:
                    return  # `T(x)` in a template: a conversion, not a call
                candidates = self._candidates(first)
                if candidates is None:
                    func.unknown = True  # a call through a pointer or an unresolved member
                    return
                for cand in candidates:
                    self._add_call(func, cand)
                return
            self._add_call(func, ref, c)
        elif c.kind in (ck.WHILE_STMT, ck.DO_STMT, ck.FOR_STMT) and self._device(func):
            # A loop waiting on memory another thread writes (a volatile flag, an atomic read) is a
            # wait too: in a plain loop over the block's threads the writer would never run.
            if self._spins(c):
                func.waits = True

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

    def _add_call(self, func: _Func, ref, call=None) -> None:
        if ref.kind not in self.func_kinds:
            return
        if (
            ref.spelling in _WAITS
            and ref.semantic_parent is not None
            and ref.semantic_parent.spelling == "sim"
        ):
            func.waits = True
            return
        where = self.off(ref.location)
        if func.user and func.kind in ("global", "device") and call is not None:
            self._device_call(call, ref, func, where)
        if self.src.is_user(where) or self.src.is_runtime(where):
            key = self.key_of(ref)
            if key is None:
                if self.src.is_user(where):
                    func.unknown = True  # declared in the program, defined elsewhere
            else:
                func.calls.add(key)

    def _device_call(self, call, ref, func: _Func, where: int) -> None:
        """Refuse a call from device code of a function that exists only on the host, as nvcc does.

        Device-callable: functions marked __device__ (or constexpr), everything the simulator's
        runtime headers declare, and the C library functions CUDA provides in device code
        (printf, malloc/free, memcpy/memset, assert and the math headers).
        """
        ck = self.ci.CursorKind
        if ref.kind != ck.FUNCTION_DECL or self.src.is_runtime(where):
            return
        name = ref.spelling
        if self.src.is_user(where):
            decl = ref.get_definition() or ref
            if self._kind(decl) != "host" or self._kind(ref) != "host":
                return
            if any(t.spelling == "constexpr" for t in list(ref.get_tokens())[:12]):
                return
            if ref.semantic_parent is not None and ref.semantic_parent.kind == ck.CLASS_DECL:
                return
            why = "a host function of the program: mark it __device__ or __host__ __device__"
        else:
            parent = ref.semantic_parent
            if (
                parent is None
                or parent.kind not in (ck.TRANSLATION_UNIT, ck.LINKAGE_SPEC)
                or name.startswith("__b")
            ):
                return
            if name in _DEVICE_LIBC or _MATH_HEADER.search(self.src.where(where)[0]):
                return
            why = "a C library function that CUDA does not provide in device code"
        self.problems.append(
            (
                self.off(call.extent.start),
                f"a __{func.kind}__ function calls the host function '{name}' ({why})",
            )
        )

    def _spins(self, loop) -> bool:
        ck = self.ci.CursorKind
        children = list(loop.get_children())
        if loop.kind == ck.DO_STMT:
            conds = children[-1:]
        elif loop.kind == ck.WHILE_STMT:
            conds = children[:1]
        else:
            conds = [ch for ch in children[:-1] if ch.kind != ck.DECL_STMT][-1:]
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

    def _is_config(self, c) -> bool:
        return c.spelling == "__cudaPushCallConfiguration"

    def _user_node(self, c, func: _Func | None) -> None:
        ck = self.ci.CursorKind
        kind = c.kind
        if kind in (ck.ASM_STMT, ck.MS_ASM_STMT):
            self.problems.append(
                (
                    self.off(c.extent.start),
                    "unsupported CUDA construct 'asm' (inline assembly (asm / PTX)); write it in CUDA C++",
                )
            )
        elif kind == ck.CALL_EXPR:
            if c.referenced is None and c.spelling and _unsupported(c.spelling):
                # An unknown template called with explicit arguments (`tex1Dfetch<float>(...)`):
                # clang keeps the call unresolved rather than reporting the name.
                self._refuse(self.off(c.extent.start), c.spelling, _unsupported(c.spelling))
                return
            children = list(c.get_children())
            config = next(
                (ch for ch in children[1:2] if ch.kind == ck.CALL_EXPR and self._is_config(ch)), None
            )
            if config is not None:
                self._launch(c, children[0], config, func)
        elif kind == ck.DECL_STMT:
            rng = self.rng(c)
            for ch in c.get_children():
                if ch.kind == ck.VAR_DECL:
                    self._parents[self.off(ch.location)] = rng
        elif kind == ck.VAR_DECL and func is not None:
            if any(ch.kind == ck.CUDASHARED_ATTR for ch in c.get_children()):
                self._shared(c)
        elif kind == ck.VAR_DECL and func is None:
            if any(ch.kind == ck.CUDASHARED_ATTR for ch in c.get_children()) and c.storage_class == (
                self.ci.StorageClass.EXTERN
            ):
                # File scope `extern __shared__ T name[];`: each use reads the dynamic shared memory.
                start, end = self._decl_stmt(c)
                self.edits.append(_Edit(start, end, [""]))
                self.dyn_shared[self.off(c.location)] = c.type.get_array_element_type().spelling
        elif kind in (
            ck.DECL_REF_EXPR,
            ck.TYPE_REF,
            ck.TEMPLATE_REF,
            ck.NAMESPACE_REF,
            ck.OVERLOADED_DECL_REF,
        ):
            if kind == ck.OVERLOADED_DECL_REF and _unsupported(c.spelling):
                self._refuse(self.off(c.extent.start), c.spelling, _unsupported(c.spelling))
                return
            ref = c.referenced
            if ref is None:
                return
            where = self.off(ref.location)
            if kind == ck.DECL_REF_EXPR and ref.spelling in BUILTIN_NAMES and self.src.is_runtime(where):
                self._builtin(c, ref.spelling, func)
            elif kind == ck.DECL_REF_EXPR and where in self.dyn_shared:
                start, end = self.rng(c)
                elem = self.dyn_shared[where]
                self.edits.append(
                    _Edit(start, end, [f"(reinterpret_cast<{elem}*>(::sim::dynamic_shared()))"])
                )
            elif not self.src.is_user(where):
                found = _unsupported(ref.spelling)
                if found:
                    self._refuse(self.off(c.extent.start), ref.spelling, found)
        elif kind in (ck.BINARY_OPERATOR, ck.COMPOUND_ASSIGNMENT_OPERATOR) and self._device(func):
            self._shift(c)

    def _refuse(self, pos: int, name: str, found: tuple[str, str]) -> None:
        what, fix = found
        self.problems.append((pos, f"unsupported CUDA construct '{name}' ({what}); {fix}"))

    # ---- rewrites ------------------------------------------------------------------------------
    def _text(self, start: int, end: int) -> str:
        return self.src.text[start:end]

    def _builtin(self, c, name: str, func: _Func | None) -> None:
        start, end = self.rng(c)
        if func is not None and func.kind == "host":
            self.problems.append(
                (
                    start,
                    f"'{name}' is a device built-in variable: host code cannot use it "
                    "(as with nvcc, it exists only in __global__ and __device__ functions)",
                )
            )
            return
        self.edits.append(_Edit(start, end, [_BUILTIN_READ[name]]))

    def _shift(self, c) -> None:
        children = list(c.get_children())
        if len(children) != 2:
            return
        a, b = (self.rng(ch) for ch in children)
        op = self._text(a[1], b[0]).strip()
        helper = {"<<": "shl", ">>": "shr", "<<=": "shl_assign", ">>=": "shr_assign"}.get(op)
        if helper is None or a[0] < 0 or b[1] <= b[0]:
            return
        start, end = self.rng(c)
        self.edits.append(_Edit(start, end, [f"::sim::{helper}(", a, ", ", b, ")"]))

    def _shared(self, var) -> None:
        ci = self.ci
        name = var.spelling
        stmt_start, stmt_end = self._decl_stmt(var)
        if var.storage_class == ci.StorageClass.EXTERN:
            elem = var.type.get_array_element_type().spelling
            if var.type.kind != ci.TypeKind.INCOMPLETEARRAY:
                self.problems.append(
                    (stmt_start, "expected 'extern __shared__ T name[];' (or T name[][N]...)")
                )
                return
            decl = (
                f"using sim_shared_{name}_e = {elem}; sim_shared_{name}_e* const {name} = "
                f"reinterpret_cast<sim_shared_{name}_e*>(::sim::dynamic_shared());"
            )
        else:
            declarator = re.sub(r"\[[^\]]*\]", "", self._text(self.off(var.location), self.rng(var)[1]))
            if "=" in declarator or "{" in declarator:
                self.problems.append((stmt_start, "a __shared__ variable cannot have an initializer"))
                return
            typ = var.type.spelling
            alias, site = f"sim_shared_{name}_t", f"sim_shared_{name}_site"
            decl = (
                f"using {alias} = {typ}; static char {site}; "
                f"{alias}& {name} = ::sim::shared_var<{alias}>(&{site});"
            )
        group = self._shared_groups.setdefault((stmt_start, stmt_end), [])
        group.append(decl)

    def _decl_stmt(self, var) -> tuple[int, int]:
        parent = self._parents.get(self.off(var.location))
        if parent is not None:
            return parent
        start, end = self.rng(var)
        text = self.src.text
        j = end
        while j < len(text) and text[j] in " \t\n":
            j += 1
        if j < len(text) and text[j] == ";":
            end = j + 1
        return start, end

    def _launch(self, call, callee, config, func: _Func | None) -> None:
        ci = self.ci
        ck = ci.CursorKind
        start, end = self.rng(call)
        cfg_start, cfg_end = self.rng(config)
        path, line = self.src.where(start)
        kernel_text = " ".join(self._text(start, cfg_start).split())
        name = kernel_text.replace('"', "").replace("\\", "")
        if self._device(func) and func.kind != "hd":
            self.problems.append(
                (
                    start,
                    f"unsupported CUDA construct: kernel launch of '{name}' from device code "
                    "(dynamic parallelism)",
                )
            )
            return
        cfg = [self.rng(ch) for ch in list(config.get_children())[1:]]
        cfg = [r for r in cfg if r[1] > r[0]]
        if len(cfg) < 2 or len(cfg) > 4:
            self.problems.append((start, "a launch needs <<<grid, block[, shared_bytes[, stream]]>>>"))
            return
        text = self.src.text
        k = cfg_end
        while k < end and text[k] != "(":
            k += 1
        args = (k + 1, end - 1)
        parts: list = []
        for i in range(4):
            if i < len(cfg):
                parts += ["(cudaStream_t)(" if i == 3 else "(", cfg[i], ")"]
            else:
                parts.append("0")
            parts.append(", ")
        target = callee
        while target.kind == ck.UNEXPOSED_EXPR and len(list(target.get_children())) == 1:
            target = next(target.get_children())
        ref = target.referenced if target.kind in (ck.DECL_REF_EXPR, ck.OVERLOADED_DECL_REF) else None
        if ref is not None and ref.kind == ck.OVERLOADED_DECL_REF:
            target = ref  # an overload set, or a kernel template named in a template
        by_name = ref is not None and (ref.kind in self.func_kinds or target.kind == ck.OVERLOADED_DECL_REF)
        capture = "&" if func is not None else ""
        file_lit = '"' + path.replace("\\", "\\\\").replace('"', '\\"') + '"'
        head = f'"{name}", {file_lit}, {line}, '
        if by_name and target.kind == ck.OVERLOADED_DECL_REF:
            lib = ci.conf.lib
            keys = [
                self.key_of(lib.clang_getOverloadedDecl(target, i))
                for i in range(lib.clang_getNumOverloadedDecls(target))
            ]
        else:
            keys = [self.key_of(ref) if by_name else None]
        is_template = by_name and (
            target.kind == ck.OVERLOADED_DECL_REF
            or ref.kind == ck.FUNCTION_TEMPLATE
            or ref.get_num_template_arguments() > 0
        )
        explicit = kernel_text.endswith(">")
        bf = "SIM_BARRIER_FREE"
        call_args = (k + 1, end - 1)
        has_args = text[k + 1 : end - 1].strip() != ""
        if by_name and ((is_template and not explicit) or self._overloaded(ref, target)):
            # Deduced template arguments or an overload set: resolved per call, as nvcc does.
            deduce = f"[{capture}](auto... sim_a) {{ {kernel_text}(sim_a...); }}"
            edit = _Edit(start, end, ["::sim::launch_deduced(" + head, *parts, bf, f", {deduce}"])
            if has_args:
                edit.parts += [", ", call_args]
            edit.parts.append(")")
        elif by_name:
            lam = f"[{capture}](auto... sim_a) {{ {kernel_text}(sim_a...); }}"
            edit = _Edit(
                start,
                end,
                ["::sim::launcher(" + head, *parts, kernel_text, f", {lam}, ", bf, ")(", args, ")"],
            )
        else:
            edit = _Edit(
                start,
                end,
                [
                    "::sim::launcher(" + head,
                    *parts,
                    "(",
                    (start, cfg_start),
                    "), ::sim::no_default_args{}, ",
                    bf,
                    ")(",
                    args,
                    ")",
                ],
            )
            keys = [None]
        self.edits.append(edit)
        self.launches.append((edit, keys))

    def _overloaded(self, ref, target) -> bool:
        ck = self.ci.CursorKind
        if target.kind == ck.OVERLOADED_DECL_REF:
            return True
        parent = ref.semantic_parent
        if parent is None:
            return False
        count = self._overloads.get((parent.hash, ref.spelling))
        if count is None:
            count = sum(
                1
                for ch in parent.get_children()
                if ch.kind in self.func_kinds and ch.spelling == ref.spelling and ch.is_definition()
            )
            self._overloads[(parent.hash, ref.spelling)] = count
        return count > 1

    # ---- after the walk ------------------------------------------------------------------------
    def _diagnostics(self) -> None:
        """Refusals from clang's own checks: unsupported names it could not find, host-only calls."""
        for d in self.tu.diagnostics:
            if d.severity < 3 or d.location.file is None:
                continue
            pos = self.src.pre(d.location.offset)
            if not self.src.is_user(pos):
                continue
            m = _UNDECLARED.search(d.spelling)
            if m and _unsupported(m.group(1)):
                self._refuse(pos, m.group(1), _unsupported(m.group(1)))
                continue
            # A statement clang dropped for an error elsewhere in it: its tokens still name it.
            tokens = self._line_tokens(d.location.offset)
            for tok in tokens:
                if tok.kind == self.ci.TokenKind.IDENTIFIER and _unsupported(tok.spelling):
                    self._refuse(pos, tok.spelling, _unsupported(tok.spelling))
                    break
            else:
                launches = [e for e, _ in self.launches]
                for tok in tokens:
                    at = self.src.pre(tok.extent.start.offset)
                    if tok.spelling == "<<<" and not any(e.start <= at < e.end for e in launches):
                        self.problems.append(
                            (at, f"cannot read this kernel launch: the C++ front end reports: {d.spelling}")
                        )
                        break
            notes = " ".join(ch.spelling for ch in d.children)
            t = re.search(
                r"call to __host__ function from __(global|device)__ function", notes + " " + d.spelling
            )
            if t:
                callee = re.search(r"'([^']+)'", d.spelling)
                what = callee.group(1) if callee else "?"
                self.problems.append(
                    (
                        pos,
                        f"a __{t.group(1)}__ function calls the host function '{what}', which device code "
                        "cannot call (as with nvcc: mark it __device__ or __host__ __device__)",
                    )
                )

    def _line_tokens(self, offset: int) -> list:
        text = self.src.parse_text
        a = text.rfind("\n", 0, offset) + 1
        b = text.find("\n", offset)
        b = len(text) if b < 0 else b
        f = self.tu.get_file(self.name)
        extent = self.ci.SourceRange.from_locations(
            self.ci.SourceLocation.from_offset(self.tu, f, a),
            self.ci.SourceLocation.from_offset(self.tu, f, b),
        )
        return list(self.tu.get_tokens(extent=extent))

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

    def _tree(self) -> list[_Edit]:
        if self._roots is not None:
            return self._roots
        uniq = {}
        for e in self.edits:
            uniq.setdefault((e.start, e.end), e)
        edits = sorted(uniq.values(), key=lambda e: (e.start, -e.end))
        roots: list[_Edit] = []
        stack: list[_Edit] = []
        for e in edits:
            e.children = []
            while stack and stack[-1].end <= e.start:
                stack.pop()
            if stack:
                if e.end > stack[-1].end:
                    raise _error(self.src, e.start, "overlapping constructs the simulator cannot rewrite")
                stack[-1].children.append(e)
            else:
                roots.append(e)
            stack.append(e)
        self._roots = roots
        return roots

    def _render(self, start: int, end: int, edits: list[_Edit]) -> str:
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

    def _apply(self, e: _Edit) -> str:
        out = []
        for p in e.parts:
            if isinstance(p, tuple):
                out.append(self._render(p[0], p[1], e.children))
            else:
                out.append(p)
        s = "".join(out)
        if e.exact:
            return s
        missing = self.src.text.count("\n", e.start, e.end) - s.count("\n")
        # Keep the line count, so that every later line keeps its number.
        return s + "\n" * max(missing, 0)


def translate_preprocessed(text: str, user_file, device_text: str | None = None) -> str:
    """Parse ``text`` (``g++ -E`` output) and return the C++ that g++ compiles.

    ``user_file(path)`` tells the user's files (rewritten) from headers left alone. With
    ``device_text`` (the same source preprocessed with ``__CUDA_ARCH__``), each device
    function's body comes from that pass and a ``__host__ __device__`` function whose bodies
    differ chooses one at run time.
    """
    host = _parse_legacy(text, user_file)
    device = None
    if device_text is not None and device_text != text:
        device = _parse_legacy(device_text, user_file)
        # Each pass judges its own code: device function bodies the device pass, the rest the host.
        host.problems = [p for p in host.problems if host.function_kind(p[0]) not in ("global", "device")]
        device.problems = [
            p for p in device.problems if device.function_kind(p[0]) in ("global", "device", "hd")
        ]
    problems = [(tu, p) for tu in (host, device) if tu is not None for p in tu.problems]
    if problems:
        tu, (pos, msg) = min(problems, key=lambda tp: tp[0].src.where(tp[1][0]))
        raise _error(tu.src, pos, msg)
    for edit, keys in host.launches:
        runs = device if device is not None else host
        free = bool(keys) and all(runs.barrier_free(_match(host, runs, key)) for key in keys)
        edit.parts = [("true" if free else "false") if p == "SIM_BARRIER_FREE" else p for p in edit.parts]
    if device is not None:
        host.edits.extend(_device_bodies(host, device))
    out = host.render()
    for attribute, spelled in _ATTRIBUTES.items():
        out = out.replace(attribute, spelled)
    return out


_LEGACY = re.compile(r"<<[ \t]+<(?!<)|>>[ \t]+>(?!>)")


def _parse_legacy(text: str, user_file) -> TranslationUnit:
    """Parse ``text``, first joining the legacy launch spelling ``<< <``/``>> >`` where clang stops.

    nvcc accepts ``k<< <grid, block>> >(args)``; clang reads ``<< <`` as a shift and reports an
    error there. Only lines where the parse failed are joined, and then parsed again.
    """
    for _ in range(4):
        tu = TranslationUnit(text, user_file)
        lines = set()
        for d in tu.tu.diagnostics:
            if d.severity >= 3 and d.location.file is not None:
                pos = tu.src.pre(d.location.offset)
                if tu.src.is_user(pos):
                    lines.add(tu.src.line(pos))
        fixed = text
        for ln in sorted(lines, reverse=True):
            a = tu.src.line_starts[ln]
            b = tu.src.line_starts[ln + 1] if ln + 1 < len(tu.src.line_starts) else len(text)
            row = _LEGACY.sub(lambda m: m.group(0)[:2] + m.group(0)[-1], text[a:b])
            fixed = fixed[:a] + row + fixed[b:]
        if fixed == text:
            return tu
        text = fixed
    return tu


def _origin(tu: TranslationUnit, key: int) -> tuple[str, int, int, str]:
    f = tu.funcs[key]
    path, line = tu.src.where(key)
    return path, line, key - tu.src.line_starts[tu.src.line(key)], f.name


def _match(host: TranslationUnit, other: TranslationUnit, key: int | None) -> int | None:
    """The key in ``other`` of the function ``key`` of ``host`` (same file, line, column, name)."""
    if key is None or other is host:
        return key
    if key not in host.funcs:
        return None
    if other._by_origin is None:
        other._by_origin = {_origin(other, k): k for k in other.funcs}
    return other._by_origin.get(_origin(host, key))


def _marker(tu: TranslationUnit, pos: int) -> str:
    path, line = tu.src.where(pos)
    escaped = path.replace("\\", "\\\\").replace('"', '\\"')
    return f'\n# {line} "{escaped}"\n'


def _device_bodies(host: TranslationUnit, device: TranslationUnit) -> list[_Edit]:
    """Edits giving each device function of ``host`` its body from the ``__CUDA_ARCH__`` pass."""
    edits = []
    for key, f in host.funcs.items():
        if not f.user or f.body is None or f.kind == "host":
            continue
        dkey = _match(host, device, key)
        dbody = device.funcs[dkey].body if dkey is not None else None
        if dbody is None:
            continue
        dev = device.render(*dbody)
        start, end = f.body
        # The device body keeps its own line numbers; a marker after it puts the next line back.
        after = _marker(host, end)
        if f.kind == "hd":
            if dev == host.render(start, end):
                continue
            parts = [
                "{ if (::sim::on_device()) ",
                dev,
                _marker(host, start),
                " else ",
                (start, end),
                " }",
                after,
            ]
        else:
            parts = [dev, after]
        edits.append(_Edit(start, end, parts, exact=True))
    return edits
