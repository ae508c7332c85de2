"""Kernel launches in the syntax tree, rewritten into calls of the simulator's runtime.

``<<<grid, block[, shared[, stream]]>>>`` launches (by name, of templates and overload sets, and
through pointers) become ``::__sim::launcher``/``::__sim::launch_deduced`` calls. One pass of a
``TranslationUnit`` (syntax.py): the unit's walk calls it at each launch; it writes its edits
into the unit's edit list and each launch, with the kernels it may start, into ``launches``.
"""

from __future__ import annotations

from .device_launches import failed_device_launches, split_config
from .edits import Edit, Func
from .syntax_cursors import children_of
from .syntax_registry import kernel_pointer_type

__all__ = ["CONFIG_CALLS", "LaunchRewrites", "is_config"]

# What clang calls for `<<<...>>>`: the CUDA 9.2+ launch API, or the old one when it finds no
# CUDA installation (linemap's prelude declares both).
CONFIG_CALLS = ("__cudaPushCallConfiguration", "cudaConfigureCall")


def c_string(text: str) -> str:
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


def is_config(call) -> bool:
    """Whether ``call`` is the configuration call clang makes of a launch's ``<<<...>>>``."""
    return call.spelling in CONFIG_CALLS


class LaunchRewrites:
    """The launch rewrites of one ``TranslationUnit``, and the launches it must not refuse."""

    def __init__(self, unit) -> None:
        self.unit = unit
        self.ci, self.src, self.func_kinds = unit.ci, unit.src, unit.func_kinds
        self._overloads: dict = {}  # (scope, name) -> how many overloads the name has there
        self._scope_functions: dict = {}  # scope -> its functions by name (_functions_by_name)
        self.runtime_launches: list[tuple[int, int]] = []  # ::__sim::launcher(...) written by hand
        # Kernel templates launched from device code, which clang's parse drops (device_launches.py).
        self._dropped = failed_device_launches(unit.tu.diagnostics)

    def dropped(self, c) -> bool:
        """Whether ``c`` is a device-side launch of a kernel template that clang's parse dropped."""
        return c.extent.start.offset in self._dropped

    def runtime_launch(self, call) -> bool:
        """The runtime's launch interface called by hand (its tests): kept, as the front end's own
        rewrite of a launch calls the kernel as a function in its lambda; True when it is one."""
        if not self._is_runtime_launch(call):
            return False
        self.runtime_launches.append(self.unit.rng(call))
        return True

    def launch(self, call, callee, config, func: Func | None) -> None:
        """Rewrite ``callee<<<config>>>(args)`` into a call of the runtime's launcher."""
        ci = self.ci
        ck = ci.CursorKind
        start, end = self.unit.rng(call)
        cfg_start, cfg_end = self.unit.rng(config)
        path, line = self.src.where(start)
        kernel_text = " ".join(self.unit.text_at(start, cfg_start).split())
        name = kernel_text.replace('"', "").replace("\\", "")
        cfg = [self.unit.rng(ch) for ch in list(config.get_children())[1:]]
        cfg = [r for r in cfg if r[1] > r[0]]
        if len(cfg) < 2 or len(cfg) > 4:
            self.unit.problems.append((start, "a launch needs <<<grid, block[, shared_bytes[, stream]]>>>"))
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
        file_lit = c_string(path)
        head = f'"{name}", {file_lit}, {line}, '
        if by_name and target.kind == ck.OVERLOADED_DECL_REF:
            lib = ci.conf.lib
            keys = [
                self.unit.key_of(lib.clang_getOverloadedDecl(target, i))
                for i in range(lib.clang_getNumOverloadedDecls(target))
            ]
        else:
            keys = [self.unit.key_of(ref) if by_name else None]
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
            deduce = f"[{capture}](auto... __sim_a) {{ {kernel_text}(__sim_a...); }}"
            edit = Edit(start, end, ["::__sim::launch_deduced(" + head, *parts, bf, f", {deduce}"])
            if has_args:
                edit.parts += [", ", call_args]
            edit.parts.append(")")
        elif by_name:
            lam = f"[{capture}](auto... __sim_a) {{ {kernel_text}(__sim_a...); }}"
            edit = Edit(
                start,
                end,
                [
                    "::__sim::launcher(" + head,
                    *parts,
                    self._kernel_pointer(ref, kernel_text),
                    f", {lam}, ",
                    bf,
                    ")(",
                    args,
                    ")",
                ],
            )
        else:
            edit = Edit(
                start,
                end,
                [
                    "::__sim::launcher(" + head,
                    *parts,
                    "(",
                    (start, cfg_start),
                    "), ::__sim::no_default_args{}, ",
                    bf,
                    ")(",
                    args,
                    ")",
                ],
            )
            keys = [None]
        self.unit.edits.append(edit)
        self.unit.launches.append((edit, keys))

    def recovered_launch(self, c, func: Func | None) -> None:
        """Rewrite a kernel template launched from device code, read from its text (device_launches.py)."""
        ck = self.ci.CursorKind
        children = list(c.get_children())
        start, end = self.unit.rng(c)
        text = self.src.text
        if not children or children[0].kind != ck.DECL_REF_EXPR:
            return
        target = next((ch for ch in children[0].get_children() if ch.kind == ck.OVERLOADED_DECL_REF), None)
        opened = text.find("<<<", self.unit.rng(children[0])[1], end)
        closed = text.find(">>>", opened + 3, end) if opened >= 0 else -1
        paren = text.find("(", closed + 3, end) if closed >= 0 else -1
        if target is None or paren < 0:
            return
        cfg = split_config(text, opened + 3, closed)
        if len(cfg) < 2 or len(cfg) > 4:
            self.unit.problems.append((start, "a launch needs <<<grid, block[, shared_bytes[, stream]]>>>"))
            return
        parts = _config_parts(cfg)
        kernel_text = " ".join(self.unit.text_at(start, opened).split())
        path, line = self.src.where(start)
        file_lit = c_string(path)
        name = kernel_text.replace('"', "").replace("\\", "")
        deduce = f"[&](auto... __sim_a) {{ {kernel_text}(__sim_a...); }}"
        edit = Edit(start, end, [f'::__sim::launch_deduced("{name}", {file_lit}, {line}, ', *parts])
        edit.parts += ["SIM_BARRIER_FREE", f", {deduce}"]
        if text[paren + 1 : end - 1].strip():
            edit.parts += [", ", (paren + 1, end - 1)]
        edit.parts.append(")")
        lib = self.ci.conf.lib
        keys = [
            self.unit.key_of(lib.clang_getOverloadedDecl(target, i))
            for i in range(lib.clang_getNumOverloadedDecls(target))
        ]
        self.unit.edits.append(edit)
        self.unit.launches.append((edit, keys))

    def _kernel_pointer(self, ref, kernel_text: str) -> str:
        """The launched kernel as the launcher's pointer argument: cast to its own type, so that a
        host function of the same name (a kernel called ``exit``, beside ``::exit(int)``) leaves
        no overload set to choose from."""
        pointer = None
        if ref.kind == self.ci.CursorKind.FUNCTION_DECL and ref.get_num_template_arguments() <= 0:
            pointer = kernel_pointer_type(ref)
        return kernel_text if pointer is None else f"static_cast<{pointer}>(&{kernel_text})"

    def _overloaded(self, ref, target) -> bool:
        ck = self.ci.CursorKind
        if target.kind == ck.OVERLOADED_DECL_REF:
            return True
        parent = ref.semantic_parent
        if parent is None:
            return False
        name = ref.spelling
        count = self._overloads.get((parent.hash, name))
        if count is None:
            # Overloads are declarations of different types, defined or not (a kernel declared
            # in a header with other parameters than its definition has is an overload too).
            same_name = self._functions_by_name(parent).get(name, [])
            count = len({ch.type.get_canonical().spelling for ch in same_name})
            self._overloads[(parent.hash, name)] = count
        return count > 1

    def _functions_by_name(self, scope) -> dict[str, list]:
        """The functions declared directly in ``scope``, by name: read once per scope, as a scope
        (the translation unit itself, most often) can hold thousands of declarations."""
        found = self._scope_functions.get(scope.hash)
        if found is None:
            found = {}
            for ch in children_of(scope):
                if ch.kind in self.func_kinds:
                    found.setdefault(ch.spelling, []).append(ch)
            self._scope_functions[scope.hash] = found
        return found

    def _is_runtime_launch(self, c) -> bool:
        ref = c.referenced
        parent = ref.semantic_parent if ref is not None else None
        return (
            ref is not None
            and ref.spelling in ("launcher", "launch_deduced")
            and parent is not None
            and parent.spelling == "__sim"
            and self.src.is_runtime(self.unit.off(ref.location))
        )
