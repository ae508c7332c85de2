"""One parsed pass of a translation unit: the syntax-tree walk that collects the rewrites.

``TranslationUnit`` parses the preprocessed text with libclang (CUDA, host side) and walks the
program's code once, collecting edits at exact ranges (launches, ``__shared__`` variables,
built-in reads, PTX shifts), each function's call graph for the barrier-free marking, and the
constructs it refuses.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

from .device_launches import failed_device_launches, split_config
from .errors import RUNTIME_DIR, SimBuildError, clang_module
from .linemap import SourceMap
from .refusals import DEVICE_LIBC, DEVICE_REMOVED, MATH_HEADER, UNDECLARED, unsupported

__all__ = ["BUILTIN_NAMES", "Edit", "TranslationUnit", "source_error"]

# Runtime functions (namespace sim) that wait for, or let run, other threads of the block or warp
# (nanosleep_thread yields to the block's other threads, so a spin-wait on them makes progress).
_WAITS = frozenset(
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
_ATOMIC = re.compile(r"atomic\w+|__atomic_\w+|__sync_\w+")
# What clang calls for `<<<...>>>`: the CUDA 9.2+ launch API, or the old one when it finds no
# CUDA installation (linemap's prelude declares both).
_CONFIG_CALLS = ("__cudaPushCallConfiguration", "cudaConfigureCall")
BUILTIN_NAMES = ("threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize")
_BUILTIN_READ = {
    "threadIdx": "(::sim::tl_thread->thread_idx)",
    "blockIdx": "(::sim::tl_thread->block_idx)",
    "blockDim": "(::sim::tl_thread->block_dim)",
    "gridDim": "(::sim::tl_thread->grid_dim)",
    "warpSize": "(32)",
}


def _c_string(text: str) -> str:
    """``text`` as a C string literal."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _config_parts(cfg: list) -> list:
    """A launch's <<<grid, block[, shared_bytes[, stream]]>>> as the four leading arguments of
    the runtime's launch call (missing ones 0; the stream cast to cudaStream_t)."""
    parts: list = []
    for i in range(4):
        if i < len(cfg):
            parts += ["(cudaStream_t)(" if i == 3 else "(", cfg[i], ")"]
        else:
            parts.append("0")
        parts.append(", ")
    return parts


@dataclass
class Edit:
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


def source_error(src: SourceMap, pos: int, msg: str) -> SimBuildError:
    """A build error naming the user's file and line of preprocessed offset ``pos``."""
    path, line = src.where(pos)
    return SimBuildError(f"{path}:{line}: {msg}")


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
        self.src = SourceMap(text, user_file)
        self.func_kinds = {getattr(ci.CursorKind, n) for n in _FUNC_KINDS_NAMES}
        _bind_overloads(ci)
        index = ci.Index.create()
        args = ["-x", "cuda", "-nocudainc", "-nocudalib", "--cuda-host-only", "-std=gnu++17", "-w"]
        args += ["-Wno-unknown-cuda-version", "-ferror-limit=0", "-fno-spell-checking"]
        # Never a CUDA installation of the machine's: the parse is the same with or without one
        # (clang then reads `<<<...>>>` with the pre-9.2 launch API, cudaConfigureCall).
        args += [f"--cuda-path={RUNTIME_DIR}"]
        self.name = name = "sim_frontend.cu"
        began = time.perf_counter()
        self.tu = index.parse(name, args=args, unsaved_files=[(name, self.src.parse_text)])
        self.parse_seconds = time.perf_counter() - began  # libclang's share (benchmarks/bench_frontend.py)
        self.edits: list[Edit] = []
        self.funcs: dict[int, _Func] = {}
        # edit, the keys of the kernels it may launch (a launch, or a kernel's registration)
        self.launches: list[tuple[Edit, list]] = []
        self.problems: list[tuple[int, str]] = []
        self.dyn_shared: dict[int, str] = {}  # file-scope extern __shared__: decl key -> element type
        self._parents: dict[int, tuple[int, int]] = {}  # local variable -> its declaration statement
        self._shared_groups: dict[tuple[int, int], list[str]] = {}
        self._overloads: dict = {}
        self._lazy: set[int] = set()  # runtime functions walked because device code calls them
        self._runtime_launches: list[tuple[int, int]] = []  # ::sim::launcher(...) written by hand
        self._by_origin: dict | None = None
        # Kernel templates launched from device code, which clang's parse drops (device_launches.py).
        self._device_template_launches = failed_device_launches(self.tu.diagnostics)
        self._roots: list | None = None
        self.walk()
        for (start, end), decls in self._shared_groups.items():
            self.edits.append(Edit(start, end, [" ".join(decls)]))
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
            # The runtime's functions are walked when device code calls them (see _add_call).
            if self.src.is_user(start):
                self._visit(c, None, True)

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
            if user and fkind == "global":
                self._register(c, f.key)
                if f.body is not None:
                    # Entered outside a launch (called through a pointer or a template from host
                    # code, which nvcc cannot refuse): the call records the error and returns.
                    name = c.spelling.replace('"', "")
                    guard = f'{{ if (!::sim::on_device()) {{ ::sim::unconfigured_call("{name}"); return; }} '
                    self.edits.append(Edit(f.body[0], f.body[0] + 1, [guard]))
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

    def _register(self, kernel, key: int) -> None:
        """After a (non-template) kernel's definition, register it for launches by address.

        ``cudaLaunchKernel((void*)k, ...)`` and graph kernel nodes name a kernel by its address
        alone; the runtime needs its parameter types to unpack ``void** args``. It also gets a
        call by name and whether the kernel is barrier-free (decided with the launches', see
        ``launches``), so that such a launch runs as the kernel's ``<<<>>>`` launch would.
        """
        ck = self.ci.CursorKind
        if kernel.kind != ck.FUNCTION_DECL or kernel.get_num_template_arguments() > 0:
            return  # templates: registered by their typed launches instead
        if kernel.semantic_parent is None or kernel.semantic_parent.kind not in (
            ck.TRANSLATION_UNIT,
            ck.NAMESPACE,
            ck.LINKAGE_SPEC,  # extern "C" __global__ void k(...), as NVIDIA's samples write it
        ):
            return
        end = self.off(kernel.extent.end)
        signature = kernel.type.get_canonical().spelling  # e.g. "void (float *, int)"
        if "(" not in signature:
            return
        result, params = signature.split("(", 1)
        pointer = f"{result.strip()} (*)({params}"
        name = kernel.spelling
        edit = Edit(
            end,
            end,
            [
                f" static const bool sim_registered_{len(self.edits)}_{name} = "
                f'::sim::register_kernel(static_cast<{pointer}>(&{name}), "{name}", ',
                "SIM_BARRIER_FREE",
                f", [](auto... sim_a) {{ {name}(sim_a...); }});",
            ],
        )
        self.edits.append(edit)
        self.launches.append((edit, [key]))

    def _kernel_instances(self, ref) -> list:
        """The user's ``__global__`` function templates an instance name ``ref`` can stand for."""
        ck = self.ci.CursorKind
        if ref.kind == ck.FUNCTION_DECL and ref.get_num_template_arguments() > 0:
            decls = [ref]
        elif ref.kind == ck.OVERLOADED_DECL_REF:  # named in a template: resolved per instantiation
            lib = self.ci.conf.lib
            decls = [lib.clang_getOverloadedDecl(ref, i) for i in range(lib.clang_getNumOverloadedDecls(ref))]
            if not decls or any(d.kind != ck.FUNCTION_TEMPLATE for d in decls):
                return []
        else:
            return []
        if all(self._kind(d) == "global" and self.src.is_user(self.off(d.location)) for d in decls):
            return decls
        return []

    def _kernel_instance(self, c, ref) -> list:
        """The templates when ``c`` names an instance of a user's kernel template with its arguments
        (``k<float>``), else none."""
        start, end = self.rng(c)
        return self._kernel_instances(ref) if self._text(start, end).rstrip().endswith(">") else []

    def _register_instance(self, c, ref, templates: list) -> None:
        """Host code names a kernel template's instance: register it where it is named.

        Templates have no definition to register (see ``_register``), so an instance that host
        code only passes by address (``cudaLaunchKernel((void*)k<float>, ...)``, a graph kernel
        node) would be unknown to the runtime. The name becomes a call that returns the function
        itself (its address can be taken; ``decltype`` sees the same type), registered with a call
        by name and the template's barrier-free finding each time the expression runs (cheap
        after the first time).
        """
        start, end = self.rng(c)
        text = self._text(start, end)
        name = ref.spelling.replace('"', "").replace("\\", "")
        edit = Edit(
            start,
            end,
            [f'::sim::registered_kernel<&{text} >("{name}", ', "SIM_BARRIER_FREE", ")"],
        )
        self.edits.append(edit)
        self.launches.append((edit, [self.key_of(d) for d in templates]))

    def _register_symbol_name(self, var) -> None:
        """Register a file-scope ``__device__``/``__constant__`` variable under its name.

        Code from before CUDA 5 names a symbol by a string, ``cudaMemcpyToSymbol("c_clusters",
        ...)`` (Rodinia's kmeans); the runtime finds the variable by that name.
        """
        ck = self.ci.CursorKind
        if not any(ch.kind in (ck.CUDACONSTANT_ATTR, ck.CUDADEVICE_ATTR) for ch in var.get_children()):
            return
        parent = var.semantic_parent
        if parent is None or parent.kind != ck.TRANSLATION_UNIT or not var.is_definition():
            return
        start = self.off(var.extent.start)
        if start < 0 or not self.src.is_user(start):
            return
        end = self.src.through_semicolon(self.off(var.extent.end))
        name = var.spelling
        self.edits.append(
            Edit(
                end,
                end,
                [
                    f" static const bool sim_symbol_{len(self.edits)}_{name} = ::sim::register_symbol_name("
                    f'"{name}", (const void*)&{name}, sizeof({name}));'
                ],
            )
        )

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
        removed = DEVICE_REMOVED.get(ref.spelling) if self.src.is_runtime(where) else None
        if removed and call is not None and func.user and func.kind in ("global", "device"):
            self.problems.append((self.off(call.extent.start), removed))
            return
        if func.user and self._device(func) and call is not None and self._device_clock(call, ref, where):
            return
        if func.user and func.kind in ("global", "device") and call is not None:
            self._device_call(call, ref, func, where)
        if self.src.is_user(where) or self.src.is_runtime(where):
            key = self.key_of(ref)
            if key is None:
                if self.src.is_user(where):
                    func.unknown = True  # declared in the program, defined elsewhere
            else:
                func.calls.add(key)
                lazy = self.src.is_runtime(where) and (func.kind != "host" or not func.user)
                if lazy and key not in self.funcs and key not in self._lazy:
                    self._lazy.add(key)
                    self._visit(ref.get_definition(), None, False)

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
        start, end = self.rng(callee)
        if end <= start:
            return False
        self.edits.append(Edit(start, end, ["::sim::device_clock"]))
        return True

    def _device_call(self, call, ref, func: _Func, where: int) -> None:
        """Refuse a call from device code of a function that exists only on the host, as nvcc does.

        Device-callable: functions marked __device__ (or constexpr), everything the simulator's
        runtime headers declare, and the C library functions CUDA provides in device code
        (printf, malloc/free, memcpy/memset, assert and the math headers).
        """
        ck = self.ci.CursorKind
        if ref.kind != ck.FUNCTION_DECL or self.src.is_runtime(where) or ref.spelling in _CONFIG_CALLS:
            return  # (the configuration call of a device-side <<<>>> launch is rewritten with it)
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
            if name in DEVICE_LIBC or MATH_HEADER.search(self.src.where(where)[0]):
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

    def _is_runtime_launch(self, c) -> bool:
        ref = c.referenced
        parent = ref.semantic_parent if ref is not None else None
        return (
            ref is not None
            and ref.spelling in ("launcher", "launch_deduced")
            and parent is not None
            and parent.spelling == "sim"
            and self.src.is_runtime(self.off(ref.location))
        )

    def _is_config(self, c) -> bool:
        return c.spelling in _CONFIG_CALLS

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
            if c.referenced is None and c.spelling and unsupported(c.spelling):
                # An unknown template called with explicit arguments (`tex1Dfetch<float>(...)`):
                # clang keeps the call unresolved rather than reporting the name.
                self._refuse(self.off(c.extent.start), c.spelling, unsupported(c.spelling))
                return
            children = list(c.get_children())
            config = next(
                (ch for ch in children[1:2] if ch.kind == ck.CALL_EXPR and self._is_config(ch)), None
            )
            if config is not None:
                self._launch(c, children[0], config, func)
            elif self._is_runtime_launch(c):
                # The runtime's launch interface called by hand (its tests): its lambda calls the
                # kernel as a function, as the front end's own rewrite of a launch does.
                self._runtime_launches.append(self.rng(c))
        elif kind == ck.UNEXPOSED_EXPR and c.extent.start.offset in self._device_template_launches:
            self._recovered_launch(c, func)
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
                self.edits.append(Edit(start, end, [""]))
                self.dyn_shared[self.off(c.location)] = c.type.get_array_element_type().spelling
            else:
                self._register_symbol_name(c)
        elif kind in (
            ck.DECL_REF_EXPR,
            ck.TYPE_REF,
            ck.TEMPLATE_REF,
            ck.NAMESPACE_REF,
            ck.OVERLOADED_DECL_REF,
        ):
            if kind == ck.OVERLOADED_DECL_REF and unsupported(c.spelling):
                self._refuse(self.off(c.extent.start), c.spelling, unsupported(c.spelling))
                return
            ref = c.referenced
            if ref is None:
                return
            where = self.off(ref.location)
            if kind == ck.DECL_REF_EXPR and ref.spelling in BUILTIN_NAMES and self.src.is_runtime(where):
                self._builtin(c, ref.spelling, func)
            elif (
                kind == ck.DECL_REF_EXPR
                and not self._device(func)
                and (templates := self._kernel_instance(c, ref))
            ):
                self._register_instance(c, ref, templates)
            elif kind == ck.DECL_REF_EXPR and where in self.dyn_shared:
                start, end = self.rng(c)
                elem = self.dyn_shared[where]
                self.edits.append(Edit(start, end, [f"(reinterpret_cast<{elem}*>(::sim::dynamic_shared()))"]))
            elif not self.src.is_user(where):
                found = unsupported(ref.spelling)
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
        self.edits.append(Edit(start, end, [_BUILTIN_READ[name]]))

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
        self.edits.append(Edit(start, end, [f"::sim::{helper}(", a, ", ", b, ")"]))

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
        return start, self.src.through_semicolon(end)

    def _launch(self, call, callee, config, func: _Func | None) -> None:
        ci = self.ci
        ck = ci.CursorKind
        start, end = self.rng(call)
        cfg_start, cfg_end = self.rng(config)
        path, line = self.src.where(start)
        kernel_text = " ".join(self._text(start, cfg_start).split())
        name = kernel_text.replace('"', "").replace("\\", "")
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
        parts = _config_parts(cfg)
        target = callee
        while target.kind == ck.UNEXPOSED_EXPR and len(list(target.get_children())) == 1:
            target = next(target.get_children())
        ref = target.referenced if target.kind in (ck.DECL_REF_EXPR, ck.OVERLOADED_DECL_REF) else None
        if ref is not None and ref.kind == ck.OVERLOADED_DECL_REF:
            target = ref  # an overload set, or a kernel template named in a template
        by_name = ref is not None and (ref.kind in self.func_kinds or target.kind == ck.OVERLOADED_DECL_REF)
        capture = "&" if func is not None else ""
        file_lit = _c_string(path)
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
            edit = Edit(start, end, ["::sim::launch_deduced(" + head, *parts, bf, f", {deduce}"])
            if has_args:
                edit.parts += [", ", call_args]
            edit.parts.append(")")
        elif by_name:
            lam = f"[{capture}](auto... sim_a) {{ {kernel_text}(sim_a...); }}"
            edit = Edit(
                start,
                end,
                ["::sim::launcher(" + head, *parts, kernel_text, f", {lam}, ", bf, ")(", args, ")"],
            )
        else:
            edit = Edit(
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

    def _recovered_launch(self, c, func: _Func | None) -> None:
        """A kernel template launched from device code, read from the text (see device_launches.py)."""
        ck = self.ci.CursorKind
        children = list(c.get_children())
        start, end = self.rng(c)
        text = self.src.text
        if not children or children[0].kind != ck.DECL_REF_EXPR:
            return
        target = next((ch for ch in children[0].get_children() if ch.kind == ck.OVERLOADED_DECL_REF), None)
        opened = text.find("<<<", self.rng(children[0])[1], end)
        closed = text.find(">>>", opened + 3, end) if opened >= 0 else -1
        paren = text.find("(", closed + 3, end) if closed >= 0 else -1
        if target is None or paren < 0:
            return
        cfg = split_config(text, opened + 3, closed)
        if len(cfg) < 2 or len(cfg) > 4:
            self.problems.append((start, "a launch needs <<<grid, block[, shared_bytes[, stream]]>>>"))
            return
        parts = _config_parts(cfg)
        kernel_text = " ".join(self._text(start, opened).split())
        path, line = self.src.where(start)
        file_lit = _c_string(path)
        name = kernel_text.replace('"', "").replace("\\", "")
        deduce = f"[&](auto... sim_a) {{ {kernel_text}(sim_a...); }}"
        edit = Edit(start, end, [f'::sim::launch_deduced("{name}", {file_lit}, {line}, ', *parts])
        edit.parts += ["SIM_BARRIER_FREE", f", {deduce}"]
        if text[paren + 1 : end - 1].strip():
            edit.parts += [", ", (paren + 1, end - 1)]
        edit.parts.append(")")
        lib = self.ci.conf.lib
        keys = [
            self.key_of(lib.clang_getOverloadedDecl(target, i))
            for i in range(lib.clang_getNumOverloadedDecls(target))
        ]
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
            # Overloads are declarations of different types, defined or not (a kernel declared
            # in a header with other parameters than its definition has is an overload too).
            count = len(
                {
                    ch.type.get_canonical().spelling
                    for ch in parent.get_children()
                    if ch.kind in self.func_kinds and ch.spelling == ref.spelling
                }
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
            m = UNDECLARED.search(d.spelling)
            if m and unsupported(m.group(1)):
                self._refuse(pos, m.group(1), unsupported(m.group(1)))
                continue
            # A statement clang dropped for an error elsewhere in it: its tokens still name it.
            tokens = self._line_tokens(d.location.offset)
            for tok in tokens:
                if tok.kind == self.ci.TokenKind.IDENTIFIER and unsupported(tok.spelling):
                    self._refuse(pos, tok.spelling, unsupported(tok.spelling))
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
            unconfigured = re.match(r"call to global function '([^']+)' not configured", d.spelling)
            if unconfigured and not any(a <= pos < b for a, b in self._runtime_launches):
                name = unconfigured.group(1)
                self.problems.append(
                    (
                        pos,
                        f"a __global__ function called without <<<...>>>: '{name}' (as with nvcc, which "
                        f"refuses it too: launch it as {name}<<<grid, block>>>(...))",
                    )
                )
                continue
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
        missing = self.src.text.count("\n", e.start, e.end) - s.count("\n")
        # Keep the line count, so that every later line keeps its number.
        return s + "\n" * max(missing, 0)
