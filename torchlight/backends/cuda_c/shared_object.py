"""Check that a file is a complete ELF shared object for this machine before it is ``dlopen``-ed.

``dlopen`` maps a library's segments straight from the file: a library cut short (an
interrupted copy or build) makes the process die with SIGBUS inside the loader, and a
library built for another machine is reported as "No such file or directory". Reading the
ELF header first turns both into a ``SharedObjectError`` that names the file, what is wrong
and what to do. pyelftools decodes the headers; it is imported only when a library is checked,
so ``import torchlight`` does not need it.
"""

from __future__ import annotations

import os
import platform
import struct
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

if TYPE_CHECKING:
    from elftools.elf.elffile import ELFFile

ELF_MAGIC = b"\x7fELF"
ET_REL, ET_EXEC, ET_DYN, ET_CORE = 1, 2, 3, 4
PN_XNUM = 0xFFFF
DEFAULT_FIX = "rebuild the library for this machine"
# The ELF header's size by word size: checked before pyelftools parses it, so a file cut short
# inside its header is named as truncated.
_HEADER_SIZE = {32: 52, 64: 64}
# More header-table entries than any real library has (ld's own limits are far lower): refused
# rather than walked, so a crafted count cannot make the check take minutes.
MAX_TABLE_ENTRIES = 1 << 20
# Systems whose shared libraries are ELF; elsewhere (macOS, Windows) the check does nothing.
ELF_PLATFORMS = ("linux", "freebsd", "openbsd", "netbsd", "dragonfly", "sunos")
# The extra whose install brings pyelftools with the kernel libraries' loader.
INSTALL_LINE = 'pip install "torchlight[cuda]"'

# platform.machine() -> e_machine, for a Python whose executable is not ELF.
_MACHINE_BY_NAME = {
    "x86_64": 62,
    "amd64": 62,
    "i386": 3,
    "i486": 3,
    "i586": 3,
    "i686": 3,
    "aarch64": 183,
    "arm64": 183,
    "armv7l": 40,
    "armv6l": 40,
    "ppc64le": 21,
    "ppc64": 21,
    "s390x": 22,
    "riscv64": 243,
    "loongarch64": 258,
}
_TYPES = {
    ET_REL: "a relocatable object file (.o), not a shared library: link it with -shared",
    ET_EXEC: "an executable, not a shared library: build it with -shared -fPIC",
    ET_CORE: "a core dump, not a shared library",
}


class SharedObjectError(ValueError):
    """A file that is not a complete ELF shared object for this machine; ``path`` and ``problem`` say why."""

    def __init__(self, path: str | os.PathLike, problem: str, fix: str = DEFAULT_FIX) -> None:
        self.path = os.fspath(path)
        self.problem = problem
        self.fix = fix
        super().__init__(f"{self.path} {problem}; {fix}")


def _elftools() -> Any:
    """The ``elftools`` package, or a ModuleNotFoundError that gives the install line."""
    try:
        import elftools.common.exceptions
        import elftools.common.utils
        import elftools.elf.elffile
        import elftools.elf.enums
    except ModuleNotFoundError as err:
        raise ModuleNotFoundError(
            f"checking a kernel library before it is loaded needs pyelftools, which is not installed: "
            f"{INSTALL_LINE} (or pip install pyelftools)",
            name="elftools",
        ) from err
    return elftools


def _code(value: int | str, table: dict) -> int:
    """The number of an enum field pyelftools decoded (a name when it knows the value, else the int)."""
    return value if isinstance(value, int) else table[value]


def _machine_name(code: int) -> str:
    from elftools.elf.descriptions import describe_e_machine
    from elftools.elf.enums import ENUM_E_MACHINE

    name = next((name for name, value in ENUM_E_MACHINE.items() if value == code), code)
    described = describe_e_machine(name)
    return f"{'an unknown machine' if described.startswith('<unknown') else described} (e_machine {code})"


def this_machine() -> int | None:
    """The ELF ``e_machine`` of the running Python (read from its own executable), or None if unknown."""
    elftools = _elftools()
    try:
        with open(sys.executable, "rb") as handle:
            found = elftools.elf.elffile.ELFFile(handle)["e_machine"]
        return _code(found, elftools.elf.enums.ENUM_E_MACHINE)
    except (OSError, elftools.common.exceptions.ELFError):
        return _MACHINE_BY_NAME.get(platform.machine().lower())


def check_shared_object(path: str | os.PathLike, fix: str = DEFAULT_FIX, machine: int | None = None) -> None:
    """Raise SharedObjectError unless ``path`` is a complete ELF shared library this process can load.

    Checks the magic number, the word size and byte order against this Python, that it is a
    shared object (``ET_DYN``) for this machine (``machine`` overrides the ``e_machine``
    expected), and that the program headers, every loadable segment and the section header
    table lie inside the file, so a truncated file is refused before ``dlopen`` maps it.
    Only the ELF header and the two header tables are read (one entry at a time), never the
    segments themselves, so a huge or sparse file costs no more than a small one.
    ``fix`` is appended to every message (e.g. the command that rebuilds the library). On
    systems whose libraries are not ELF (macOS, Windows) it checks nothing. Without pyelftools
    it raises ModuleNotFoundError naming the extra to install.
    """
    file = Path(path)
    if not sys.platform.startswith(ELF_PLATFORMS):
        return
    if not file.exists():
        raise SharedObjectError(file, "does not exist", fix)
    if not file.is_file():
        raise SharedObjectError(file, "is not a regular file", fix)
    elftools = _elftools()
    with open(file, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        bits = _check_ident(file, handle.read(16), size, fix)
        if size < _HEADER_SIZE[bits]:
            raise SharedObjectError(
                file, f"is truncated: {size} bytes, shorter than its {_HEADER_SIZE[bits]}-byte header", fix
            )
        try:
            elf = elftools.elf.elffile.ELFFile(handle)
            _check_type(file, elf, machine, fix)
            _check_tables(file, handle, elf, size, fix)
        except elftools.common.exceptions.ELFError as err:
            # A table entry that cannot be decoded (or a file that shrank while it was read).
            raise SharedObjectError(file, f"has malformed ELF headers ({err})", fix) from None


def _check_ident(file: Path, ident: bytes, size: int, fix: str) -> int:
    """Check ``e_ident`` (magic, class, byte order) against this Python; the word size in bits."""
    if size == 0:
        raise SharedObjectError(file, "is empty (0 bytes)", fix)
    if size < 16 or ident[:4] != ELF_MAGIC:
        if ident[:4] == ELF_MAGIC[: min(size, 4)] and size < 16:
            raise SharedObjectError(file, f"is truncated: {size} bytes, shorter than an ELF header", fix)
        raise SharedObjectError(file, f"is not an ELF file (it starts with {ident[:8]!r})", fix)
    if ident[4] not in (1, 2):
        raise SharedObjectError(file, f"has an invalid ELF class {ident[4]}", fix)
    if ident[5] not in (1, 2):
        raise SharedObjectError(file, f"has an invalid ELF byte order {ident[5]}", fix)
    bits = 32 if ident[4] == 1 else 64
    ours = struct.calcsize("P") * 8
    if bits != ours:
        raise SharedObjectError(file, f"is a {bits}-bit library, but this Python is {ours}-bit", fix)
    order = "little" if ident[5] == 1 else "big"
    if order != sys.byteorder:
        raise SharedObjectError(file, f"is {order}-endian, but this machine is {sys.byteorder}-endian", fix)
    return bits


def _check_type(file: Path, elf: ELFFile, machine: int | None, fix: str) -> None:
    from elftools.elf.enums import ENUM_E_MACHINE, ENUM_E_TYPE

    e_type = _code(elf["e_type"], ENUM_E_TYPE)
    if e_type != ET_DYN:
        raise SharedObjectError(file, f"is {_TYPES.get(e_type, f'of ELF type {e_type}')}", fix)
    found = _code(elf["e_machine"], ENUM_E_MACHINE)
    expected = this_machine() if machine is None else machine
    if expected is not None and found != expected:
        raise SharedObjectError(
            file, f"is built for {_machine_name(found)}, but this machine is {_machine_name(expected)}", fix
        )


def _check_tables(file: Path, handle: BinaryIO, elf: ELFFile, size: int, fix: str) -> None:
    from elftools.common.utils import struct_parse

    entry_ph, entry_sh = elf.structs.Elf_Phdr.sizeof(), elf.structs.Elf_Shdr.sizeof()
    shoff, phoff = elf["e_shoff"], elf["e_phoff"]
    shnum, phnum = 0, elf["e_phnum"]
    if shoff:
        if elf["e_shentsize"] != entry_sh:
            raise SharedObjectError(
                file, f"has a malformed ELF header (section entry size {elf['e_shentsize']})", fix
            )
        if shoff + entry_sh > size:
            raise SharedObjectError(
                file, f"is truncated: {size} bytes, but its section header table starts at byte {shoff}", fix
            )
        # Past 0xff00 sections (or 0xffff segments) the counts live in section 0: pyelftools reads them.
        shnum = elf.num_sections()
        if phnum == PN_XNUM:
            phnum = struct_parse(elf.structs.Elf_Shdr, handle, shoff)["sh_info"]
        if max(shnum, phnum) > MAX_TABLE_ENTRIES:
            raise SharedObjectError(
                file,
                f"declares {max(shnum, phnum)} header-table entries, more than the {MAX_TABLE_ENTRIES} "
                f"a shared library can plausibly have",
                fix,
            )
        end = shoff + shnum * entry_sh
        if end > size:
            raise SharedObjectError(
                file, f"is truncated: {size} bytes, but its section header table ends at byte {end}", fix
            )
    if phnum == 0:
        raise SharedObjectError(file, "has no program headers, so it cannot be loaded", fix)
    if elf["e_phentsize"] != entry_ph:
        raise SharedObjectError(
            file, f"has a malformed ELF header (program entry size {elf['e_phentsize']})", fix
        )
    end = phoff + phnum * entry_ph
    if end > size:
        raise SharedObjectError(
            file, f"is truncated: {size} bytes, but its program headers end at byte {end}", fix
        )
    loads = 0
    dynamic = False
    for i in range(phnum):
        segment = struct_parse(elf.structs.Elf_Phdr, handle, phoff + i * entry_ph)
        dynamic |= segment["p_type"] == "PT_DYNAMIC"
        if segment["p_type"] == "PT_LOAD":
            loads += 1
            seg_end = segment["p_offset"] + segment["p_filesz"]
            if seg_end > size:
                raise SharedObjectError(
                    file,
                    f"is truncated: {size} bytes, but its loadable segment {i} ends at byte {seg_end}",
                    fix,
                )
    if not loads:
        raise SharedObjectError(file, "has no loadable segment", fix)
    if not dynamic:
        raise SharedObjectError(file, "has no dynamic section, so it is not a shared library", fix)
    for i in range(shnum):
        section = struct_parse(elf.structs.Elf_Shdr, handle, shoff + i * entry_sh)
        sec_end = section["sh_offset"] + section["sh_size"]
        if section["sh_type"] not in ("SHT_NULL", "SHT_NOBITS") and sec_end > size:
            raise SharedObjectError(
                file, f"is truncated: {size} bytes, but its section {i} ends at byte {sec_end}", fix
            )
