"""Driver API modules: what the simulator's ``nvcc -fatbin`` / ``-cubin`` writes and
``cuModuleLoad*`` loads (``runtime/driver_modules.cpp``).

A module file is a 40-byte header (``TLSIMMOD``, format version, build mode, the library's size;
little-endian) followed by a shared library of the unit's kernels, device functions and
``__device__``/``__constant__`` variables. The library holds no runtime of its own: its kernels'
calls into the runtime are dynamic references (``runtime/sim_device.h``'s ``SIM_API``), which bind
when it is loaded to the runtime of the program that loads it. A program
whose objects call ``cuModuleLoad*`` is linked with :func:`exported_runtime` and ``-rdynamic``
so that it exports that runtime; any other program links as before.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterable
from pathlib import Path

from .build_cache import cache_dir, cache_key, cached_output
from .compiler_errors import compile_step
from .errors import SimBuildError
from .modes import BUILD_NAMED
from .source_compile import DEFAULT_ARCH, kernel_object
from .toolchain import compiler

__all__ = ["MAGIC", "build_module", "exported_runtime", "loads_modules", "module_image", "runtime_link"]

MAGIC = b"TLSIMMOD"
_VERSION = 1
_HEADER = struct.Struct("<8sII16sQ")  # magic, version, reserved, mode, library size: 40 bytes
# The driver calls that load a module: a program calling one must export its runtime.
_MODULE_LOADS = frozenset({"cuModuleLoad", "cuModuleLoadData", "cuModuleLoadDataEx", "cuModuleLoadFatBinary"})


def module_image(library: bytes, mode: str) -> bytes:
    """The module file's bytes for the shared library ``library`` built for ``mode``."""
    return _HEADER.pack(MAGIC, _VERSION, 0, mode.encode()[:16], len(library)) + library


def build_module(
    source: str | os.PathLike,
    output: str | os.PathLike,
    mode: str,
    arch: int = DEFAULT_ARCH,
    fmad: bool = True,
    language: str | None = None,
    extra_flags: Iterable[str] = (),
) -> Path:
    """Build ``source`` into the module file ``output`` (see the module's docstring)."""
    obj = kernel_object(
        source,
        mode,
        arch=arch,
        fmad=fmad,
        language=language,
        extra_flags=list(extra_flags),
    )
    cxx = compiler()
    key = cache_key(obj.name, "module", mode)
    library = cache_dir() / f"{obj.stem}-{key}-module.so"
    cached_output(
        library,
        lambda tmp: compile_step(
            # No runtime and no -Bsymbolic: the kernels' runtime calls stay undefined here and
            # bind to the loading program's runtime.
            [cxx, "-shared", "-pthread", *BUILD_NAMED[mode].link_flags, str(obj), "-o", str(tmp)],
            f"{source} (module link)",
        ),
    )
    dest = Path(output)
    tmp = dest.with_name(f".{dest.name}.module{os.getpid()}")
    try:
        tmp.write_bytes(module_image(library.read_bytes(), mode))
        os.replace(tmp, dest)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise SimBuildError(f"cannot write {dest}: {exc.strerror or exc}; pass another -o") from None
    return dest


def loads_modules(undefined: Iterable[str]) -> bool:
    """Whether a program whose objects leave ``undefined`` undefined loads modules."""
    return not _MODULE_LOADS.isdisjoint(undefined)


def runtime_link(runtime: Path, undefined: Iterable[str]) -> tuple[Path, list[str]]:
    """The runtime object and extra link flags of a program whose objects leave ``undefined``
    undefined: ``runtime`` as it is, or, for a program that loads modules, its exported copy
    and ``-rdynamic``, so that the modules' kernels bind to the program's runtime."""
    if not loads_modules(undefined):
        return runtime, []
    return exported_runtime(runtime), ["-rdynamic"]


def _export_hidden(data: bytearray) -> None:
    """Make every defined global or weak hidden symbol of the ELF object ``data`` default."""
    import io

    from elftools.common.exceptions import ELFError
    from elftools.elf.elffile import ELFFile
    from elftools.elf.sections import SymbolTableSection

    try:
        elf = ELFFile(io.BytesIO(bytes(data)))
        tables = [s for s in elf.iter_sections() if isinstance(s, SymbolTableSection)]
    except ELFError as exc:
        raise SimBuildError(f"the runtime object is not an ELF file pyelftools reads: {exc}") from None
    for table in tables:
        if table["sh_type"] != "SHT_SYMTAB":
            continue
        for index, sym in enumerate(table.iter_symbols()):
            if (
                sym["st_info"]["bind"] in ("STB_GLOBAL", "STB_WEAK")
                and sym["st_shndx"] != "SHN_UNDEF"
                and sym["st_other"]["visibility"] == "STV_HIDDEN"
            ):
                # st_other's low two bits are the visibility; 0 is default. Its offset in a symbol
                # entry is 5 in ELF64 and 13 in ELF32.
                other = table["sh_offset"] + index * table["sh_entsize"] + (5 if elf.elfclass == 64 else 13)
                data[other] &= ~3


def exported_runtime(runtime: Path) -> Path:
    """A copy of the runtime object ``runtime`` whose symbols a program linked with ``-rdynamic``
    exports, for the modules it loads (cached)."""
    out = cache_dir() / f"{runtime.stem}-exported.o"

    def produce(tmp: Path) -> None:
        data = bytearray(runtime.read_bytes())
        _export_hidden(data)
        tmp.write_bytes(bytes(data))

    return cached_output(out, produce)
