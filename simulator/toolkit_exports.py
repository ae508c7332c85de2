"""The toolkit's driver library, made to export the runtime to the driver API modules a program loads.

A module (``nvcc -fatbin``/``-cubin``, ``modules.py``) holds no runtime: its kernels bind, when
``cuModuleLoad*`` opens it, to the runtime of the program that loads it, which must therefore be in
the program's dynamic symbol table. nvcc's own link sees to that (the runtime's exported copy and
``-rdynamic``), but build systems link with the host compiler (CMake links every CUDA executable so,
and a target of ``.cpp`` sources calling the driver API with g++), naming only
``lib64/libcuda.so``. That linker script therefore names, ahead of the runtime's archive,

* an object that needs a symbol of the small shared library below, so that the linker keeps that
  library (also under ``--as-needed``, the default of many distributions' compilers), and
* the library, which refers to every symbol the runtime defines: an executable's linker exports each
  symbol a shared library of the link refers to, and takes the runtime's member from the archive
  for them, which is what ``-rdynamic`` does for the runtime.

The archive's runtime is the copy whose symbols have default visibility (the linker refuses to
export a hidden one). The library's soname is its absolute path, so a program finds it without an
``rpath``: a program linked with the toolkit's ``libcuda.so`` runs while that toolkit folder exists,
as one linked with NVIDIA's needs the driver installed.
"""

from __future__ import annotations

from pathlib import Path

from .compiler_run import run_tool
from .errors import SimBuildError
from .toolchain import compiler

__all__ = ["ANCHOR", "LIBRARY", "write_exports"]

LIBRARY = "libcudasim_exports.so"
ANCHOR = "cudasim_exports_anchor.o"
_ANCHOR_SYMBOL = "__sim_toolkit_exports_anchor"
# How the runtime's namespace, __sim, appears in a mangled name.
_RUNTIME_NAMESPACE = "5__sim"


def _defined(runtime: Path) -> tuple[list[str], list[str]]:
    """The symbols ``runtime`` defines and exports: (thread-local ones, the others)."""
    from elftools.elf.elffile import ELFFile
    from elftools.elf.sections import SymbolTableSection

    tls: set[str] = set()
    plain: set[str] = set()
    with open(runtime, "rb") as f:
        for section in ELFFile(f).iter_sections():
            if not isinstance(section, SymbolTableSection) or section.name != ".symtab":
                continue
            for sym in section.iter_symbols():
                # What -rdynamic would export (a defined symbol of default visibility), less the weak
                # ones of other namespaces: the program's own objects may define those (inline
                # functions, template instances, DW.ref.__gxx_personality_v0) hidden, and the linker
                # refuses a shared library's reference to a hidden definition.
                bind = sym["st_info"]["bind"]
                if (
                    not (bind == "STB_GLOBAL" or (bind == "STB_WEAK" and _RUNTIME_NAMESPACE in sym.name))
                    or sym["st_shndx"] == "SHN_UNDEF"
                    or sym["st_other"]["visibility"] != "STV_DEFAULT"
                    or not sym.name
                ):
                    continue
                (tls if sym["st_info"]["type"] == "STT_TLS" else plain).add(sym.name)
    return sorted(tls), sorted(plain)


def exports_source(tls: list[str], plain: list[str]) -> str:
    """C++ of the library that refers to each of ``tls`` and ``plain`` and defines the anchor."""
    lines = [f"int {_ANCHOR_SYMBOL};"]
    lines += [f'extern char sim_plain_{i} __asm__("{name}");' for i, name in enumerate(plain)]
    lines += [f'extern __thread char sim_tls_{i} __asm__("{name}");' for i, name in enumerate(tls)]
    refs = ", ".join(f"&sim_plain_{i}" for i in range(len(plain)))
    lines.append(f"extern const void *const sim_plain_refs[] = {{{refs}}};")
    # A thread-local's address is not a constant: a function takes them (never called).
    lines.append("extern const void *sim_tls_ref(int i) {\n  switch (i) {")
    lines += [f"  case {i}: return &sim_tls_{i};" for i in range(len(tls))]
    lines.append("  default: return nullptr;\n  }\n}")
    return "\n".join(lines) + "\n"


def write_exports(folder: Path, runtime: Path) -> tuple[Path, Path]:
    """Write the anchor object and the exports library of ``runtime`` (an object whose symbols have
    default visibility) into ``folder``; their paths."""
    tls, plain = _defined(runtime)
    source = folder / "cudasim_exports.cpp"
    source.write_text(exports_source(tls, plain))
    anchor_source = folder / "cudasim_exports_anchor.cpp"
    anchor_source.write_text(
        f"extern int {_ANCHOR_SYMBOL};\n"
        f'__attribute__((visibility("hidden"), used)) int *sim_toolkit_exports_use = &{_ANCHOR_SYMBOL};\n'
    )
    library, anchor = folder / LIBRARY, folder / ANCHOR
    steps = [
        [compiler(), "-shared", "-fPIC", "-O0", f"-Wl,-soname,{library}", str(source), "-o", str(library)],
        [compiler(), "-c", "-fPIC", "-O0", str(anchor_source), "-o", str(anchor)],
    ]
    try:
        for step in steps:
            made = run_tool(step)
            if made.returncode != 0:
                raise SimBuildError(f"the toolkit's driver library could not be made: {made.stderr.strip()}")
    finally:
        source.unlink(missing_ok=True)
        anchor_source.unlink(missing_ok=True)
    return anchor, library
