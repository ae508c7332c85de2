"""Check that a file is a complete ELF shared object for this machine before it is ``dlopen``-ed.

``dlopen`` maps a library's segments straight from the file: a library cut short (an
interrupted copy or build) makes the process die with SIGBUS inside the loader, and a
library built for another machine is reported as "No such file or directory". Reading the
ELF header first turns both into a ``SharedObjectError`` that names the file, what is wrong
and what to do.
"""

from __future__ import annotations

import os
import struct
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO, NamedTuple

ELF_MAGIC = b"\x7fELF"
ET_REL, ET_EXEC, ET_DYN, ET_CORE = 1, 2, 3, 4
PT_LOAD, PT_DYNAMIC = 1, 2
SHT_NULL, SHT_NOBITS = 0, 8
PN_XNUM = 0xFFFF
DEFAULT_FIX = "rebuild the library for this machine"
_ELF64_HEADER = 64
# Header-table entries read per chunk: memory stays bounded whatever the tables claim.
_CHUNK = 4096
# More header-table entries than any real library has (ld's own limits are far lower): refused
# rather than walked, so a crafted count cannot make the check take minutes.
MAX_TABLE_ENTRIES = 1 << 20
# Systems whose shared libraries are ELF; elsewhere (macOS, Windows) the check does nothing.
ELF_PLATFORMS = ("linux", "freebsd", "openbsd", "netbsd", "dragonfly", "sunos")

# e_machine values of the architectures Python commonly runs on (from the ELF specification).
MACHINES = {
    3: "x86 (i386)",
    8: "MIPS",
    20: "PowerPC",
    21: "PowerPC64",
    22: "s390",
    40: "ARM",
    62: "x86-64",
    183: "AArch64",
    243: "RISC-V",
    258: "LoongArch",
}
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


class _Header(NamedTuple):
    bits: int
    endian: str
    type: int
    machine: int
    phoff: int
    shoff: int
    phentsize: int
    phnum: int
    shentsize: int
    shnum: int


def _machine_name(code: int) -> str:
    return f"{MACHINES.get(code, 'an unknown machine')} (e_machine {code})"


def _read_header(data: bytes) -> _Header:
    bits = 32 if data[4] == 1 else 64
    endian = "<" if data[5] == 1 else ">"
    if bits == 64:
        fields = struct.unpack_from(endian + "HHIQQQIHHHHHH", data, 16)
        e_type, machine, _, _, phoff, shoff, _, _, phentsize, phnum, shentsize, shnum, _ = fields
    else:
        fields = struct.unpack_from(endian + "HHIIIIIHHHHHH", data, 16)
        e_type, machine, _, _, phoff, shoff, _, _, phentsize, phnum, shentsize, shnum, _ = fields
    return _Header(bits, endian, e_type, machine, phoff, shoff, phentsize, phnum, shentsize, shnum)


def this_machine() -> int | None:
    """The ELF ``e_machine`` of the running Python (read from its own executable), or None if unknown."""
    try:
        with open(sys.executable, "rb") as handle:
            head = handle.read(64)
        if head[:4] == ELF_MAGIC and len(head) >= 20:
            return struct.unpack_from("<H" if head[5] == 1 else ">H", head, 18)[0]
    except OSError:
        pass
    import platform

    return _MACHINE_BY_NAME.get(platform.machine().lower())


def check_shared_object(path: str | os.PathLike, fix: str = DEFAULT_FIX, machine: int | None = None) -> None:
    """Raise SharedObjectError unless ``path`` is a complete ELF shared library this process can load.

    Checks the magic number, the word size and byte order against this Python, that it is a
    shared object (``ET_DYN``) for this machine (``machine`` overrides the ``e_machine``
    expected), and that the program headers, every loadable segment and the section header
    table lie inside the file, so a truncated file is refused before ``dlopen`` maps it.
    Only the ELF header and the two header tables are read (in bounded chunks), never the
    segments themselves, so a huge or sparse file costs no more than a small one.
    ``fix`` is appended to every message (e.g. the command that rebuilds the library). On
    systems whose libraries are not ELF (macOS, Windows) it checks nothing.
    """
    file = Path(path)
    if not sys.platform.startswith(ELF_PLATFORMS):
        return
    if not file.exists():
        raise SharedObjectError(file, "does not exist", fix)
    if not file.is_file():
        raise SharedObjectError(file, "is not a regular file", fix)
    with open(file, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        data = handle.read(_ELF64_HEADER)
        _check_header(file, handle, data, size, machine, fix)


def _check_header(
    file: Path, handle: BinaryIO, data: bytes, size: int, machine: int | None, fix: str
) -> None:
    if size == 0:
        raise SharedObjectError(file, "is empty (0 bytes)", fix)
    if size < 16 or data[:4] != ELF_MAGIC:
        if data[:4] == ELF_MAGIC[: min(size, 4)] and size < 16:
            raise SharedObjectError(file, f"is truncated: {size} bytes, shorter than an ELF header", fix)
        raise SharedObjectError(file, f"is not an ELF file (it starts with {data[:8]!r})", fix)
    if data[4] not in (1, 2):
        raise SharedObjectError(file, f"has an invalid ELF class {data[4]}", fix)
    if data[5] not in (1, 2):
        raise SharedObjectError(file, f"has an invalid ELF byte order {data[5]}", fix)
    bits = 32 if data[4] == 1 else 64
    ours = struct.calcsize("P") * 8
    if bits != ours:
        raise SharedObjectError(file, f"is a {bits}-bit library, but this Python is {ours}-bit", fix)
    order = "little" if data[5] == 1 else "big"
    if order != sys.byteorder:
        raise SharedObjectError(file, f"is {order}-endian, but this machine is {sys.byteorder}-endian", fix)
    header_size = _ELF64_HEADER if bits == 64 else 52
    if size < header_size:
        raise SharedObjectError(
            file, f"is truncated: {size} bytes, shorter than its {header_size}-byte header", fix
        )
    header = _read_header(data)
    if header.type != ET_DYN:
        raise SharedObjectError(file, f"is {_TYPES.get(header.type, f'of ELF type {header.type}')}", fix)
    expected = this_machine() if machine is None else machine
    if expected is not None and header.machine != expected:
        raise SharedObjectError(
            file,
            f"is built for {_machine_name(header.machine)}, but this machine is {_machine_name(expected)}",
            fix,
        )
    _check_tables(file, handle, size, header, fix)


def _read_at(handle: BinaryIO, offset: int, length: int) -> bytes:
    """``length`` bytes at ``offset`` (callers have checked that they lie inside the file)."""
    handle.seek(offset)
    return handle.read(length)


def _entries(handle: BinaryIO, offset: int, count: int, entry: int, fmt: str) -> Iterator[tuple]:
    """The ``count`` table entries at ``offset``, unpacked with ``fmt``, read ``_CHUNK`` at a time."""
    for first in range(0, count, _CHUNK):
        n = min(_CHUNK, count - first)
        data = _read_at(handle, offset + first * entry, n * entry)
        if len(data) < n * entry:  # the file shrank since it was measured
            return
        for i in range(n):
            yield struct.unpack_from(fmt, data, i * entry)


def _check_tables(file: Path, handle: BinaryIO, size: int, header: _Header, fix: str) -> None:
    entry_ph, entry_sh = (56, 64) if header.bits == 64 else (32, 40)
    shnum, phnum = header.shnum, header.phnum
    if header.shoff:
        if header.shentsize != entry_sh:
            raise SharedObjectError(
                file, f"has a malformed ELF header (section entry size {header.shentsize})", fix
            )
        if header.shoff + entry_sh > size:
            raise SharedObjectError(
                file,
                f"is truncated: {size} bytes, but its section header table starts at byte {header.shoff}",
                fix,
            )
        first = _section(_read_at(handle, header.shoff, entry_sh), header)
        if shnum == 0:
            shnum = first[2]  # more than 0xff00 sections: the count lives in section 0
        if phnum == PN_XNUM:
            phnum = first[3]
        end = header.shoff + shnum * entry_sh
        if max(shnum, phnum) > MAX_TABLE_ENTRIES:
            raise SharedObjectError(
                file,
                f"declares {max(shnum, phnum)} header-table entries, more than the {MAX_TABLE_ENTRIES} "
                f"a shared library can plausibly have",
                fix,
            )
        if end > size:
            raise SharedObjectError(
                file, f"is truncated: {size} bytes, but its section header table ends at byte {end}", fix
            )
    if phnum == 0:
        raise SharedObjectError(file, "has no program headers, so it cannot be loaded", fix)
    if header.phentsize != entry_ph:
        raise SharedObjectError(
            file, f"has a malformed ELF header (program entry size {header.phentsize})", fix
        )
    end = header.phoff + phnum * entry_ph
    if end > size:
        raise SharedObjectError(
            file, f"is truncated: {size} bytes, but its program headers end at byte {end}", fix
        )
    loads = 0
    dynamic = False
    for i, (p_type, offset, filesz) in enumerate(_segments(handle, header, phnum)):
        dynamic |= p_type == PT_DYNAMIC
        if p_type == PT_LOAD:
            loads += 1
            if offset + filesz > size:
                raise SharedObjectError(
                    file,
                    f"is truncated: {size} bytes, but its loadable segment {i} ends at byte "
                    f"{offset + filesz}",
                    fix,
                )
    if not loads:
        raise SharedObjectError(file, "has no loadable segment", fix)
    if not dynamic:
        raise SharedObjectError(file, "has no dynamic section, so it is not a shared library", fix)
    for i, (sh_type, offset, sh_size, _) in enumerate(
        _sections(handle, header, shnum if header.shoff else 0)
    ):
        if sh_type not in (SHT_NULL, SHT_NOBITS) and offset + sh_size > size:
            raise SharedObjectError(
                file, f"is truncated: {size} bytes, but its section {i} ends at byte {offset + sh_size}", fix
            )


def _segments(handle: BinaryIO, header: _Header, count: int) -> Iterator[tuple[int, int, int]]:
    """``(p_type, p_offset, p_filesz)`` of each program header."""
    if header.bits == 64:
        for p_type, _, offset, _, _, filesz in _entries(
            handle, header.phoff, count, 56, header.endian + "IIQQQQ"
        ):
            yield p_type, offset, filesz
    else:
        for p_type, offset, _, _, filesz in _entries(
            handle, header.phoff, count, 32, header.endian + "IIIII"
        ):
            yield p_type, offset, filesz


def _section_format(header: _Header) -> tuple[int, str]:
    return (64, header.endian + "IIQQQQII") if header.bits == 64 else (40, header.endian + "IIIIIIII")


def _sections(handle: BinaryIO, header: _Header, count: int) -> Iterator[tuple[int, int, int, int]]:
    """``(sh_type, sh_offset, sh_size, sh_info)`` of each section header."""
    entry, fmt = _section_format(header)
    for _, sh_type, _, _, offset, sh_size, _, info in _entries(handle, header.shoff, count, entry, fmt):
        yield sh_type, offset, sh_size, info


def _section(data: bytes, header: _Header) -> tuple[int, int, int, int]:
    """``(sh_type, sh_offset, sh_size, sh_info)`` of the section header held in ``data``."""
    _, fmt = _section_format(header)
    _, sh_type, _, _, offset, sh_size, _, info = struct.unpack_from(fmt, data, 0)
    return sh_type, offset, sh_size, info
