"""Registrations the runtime needs to find kernels and symbols that host code names by address
or by string (``cudaLaunchKernel``, graph kernel nodes, ``cudaMemcpyToSymbol("name", ...)``).

One pass of a ``TranslationUnit`` (syntax.py): the unit's walk calls it at each kernel definition,
file-scope variable and kernel template instance host code names; it writes its edits into the
unit's edit list and each registration, with the kernels it stands for, into ``launches``.
"""

from __future__ import annotations

from .edits import Edit

__all__ = ["KernelRegistrations", "kernel_pointer_type"]


def kernel_pointer_type(kernel) -> str | None:
    """The C++ spelling of a pointer to the (non-template) function ``kernel``, e.g.
    ``void (*)(float *, int)``; None when its type has no spelling C++ can read back (a type in an
    anonymous namespace, a lambda's)."""
    signature = kernel.type.get_canonical().spelling  # e.g. "void (float *, int)"
    if "(" not in signature or "(anonymous" in signature or "(lambda" in signature or "(unnamed" in signature:
        return None
    result, params = signature.split("(", 1)
    return f"{result.strip()} (*)({params}"


class KernelRegistrations:
    """The registrations of one ``TranslationUnit``."""

    def __init__(self, unit) -> None:
        self.unit = unit
        self.ci, self.src = unit.ci, unit.src
        # a file-scope declaration's start -> registrations of its declarators before the last
        self._symbol_pending: dict[int, list[str]] = {}

    def register(self, kernel, key: int) -> None:
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
        end = self.unit.off(kernel.extent.end)
        pointer = kernel_pointer_type(kernel)
        if pointer is None:
            return
        name = kernel.spelling
        edit = Edit(
            end,
            end,
            [
                f" static const bool __sim_registered_{len(self.unit.edits)}_{name} = "
                f'::__sim::register_kernel(static_cast<{pointer}>(&{name}), "{name}", ',
                "SIM_BARRIER_FREE",
                f", [](auto... __sim_a) {{ {name}(__sim_a...); }});",
            ],
        )
        self.unit.edits.append(edit)
        self.unit.launches.append((edit, [key]))

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
        if all(
            self.unit.kind_of(d) == "global" and self.src.is_user(self.unit.off(d.location)) for d in decls
        ):
            return decls
        return []

    def kernel_instance(self, c, ref) -> list:
        """The templates when ``c`` names an instance of a user's kernel template with its arguments
        (``k<float>``), else none."""
        start, end = self.unit.rng(c)
        return self._kernel_instances(ref) if self.unit.text_at(start, end).rstrip().endswith(">") else []

    def register_instance(self, c, ref, templates: list) -> None:
        """Host code names a kernel template's instance: register it where it is named.

        Templates have no definition to register (see ``_register``), so an instance that host
        code only passes by address (``cudaLaunchKernel((void*)k<float>, ...)``, a graph kernel
        node) would be unknown to the runtime. The name becomes a call that returns the function
        itself (its address can be taken; ``decltype`` sees the same type), registered with a call
        by name and the template's barrier-free finding each time the expression runs (cheap
        after the first time).
        """
        start, end = self.unit.rng(c)
        text = self.unit.text_at(start, end)
        name = ref.spelling.replace('"', "").replace("\\", "")
        edit = Edit(
            start,
            end,
            [f'::__sim::registered_kernel<&{text} >("{name}", ', "SIM_BARRIER_FREE", ")"],
        )
        self.unit.edits.append(edit)
        self.unit.launches.append((edit, [self.unit.key_of(d) for d in templates]))

    def register_symbol_name(self, var) -> None:
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
        start = self.unit.off(var.extent.start)
        if start < 0 or not self.src.is_user(start):
            return
        last = self.unit.off(var.extent.end)
        end = self.src.through_semicolon(last)
        name = var.spelling
        text = (
            f" static const bool __sim_symbol_{len(self.unit.edits)}_{name} ="
            f' ::__sim::register_symbol_name("{name}", (const void*)&{name}, sizeof({name}));'
        )
        # Declarators of one declaration (`__constant__ float a, b;`) share its start; the
        # registrations can only follow the `;` after the last of them.
        pending = self._symbol_pending.pop(start, []) + [text]
        text_after = self.src.text
        j = last
        while j < len(text_after) and text_after[j] in " \t\n":
            j += 1
        if j < len(text_after) and text_after[j] == ",":
            self._symbol_pending[start] = pending
            return
        self.unit.edits.append(Edit(end, end, pending))
