"""check_shared_object: a complete ELF shared library for this machine passes; anything else is named.

The library under test is compiled here from a few lines of C (a real ``-shared`` build),
then cut short or patched byte by byte into each broken form.
"""

from __future__ import annotations

import ctypes
import os
import platform
import shutil
import struct
import subprocess
import sys
import textwrap
import tracemalloc

import pytest

from torchlight.backends.cuda_c.shared_object import (
    _MACHINE_BY_NAME,
    ET_EXEC,
    ET_REL,
    SharedObjectError,
    check_shared_object,
    this_machine,
)

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="ELF shared objects: the check is for Linux libraries"
)

SOURCE = (
    "int tl_answer(void) { return 42; }\nstatic char pad[65536] = {1};\nchar *tl_pad(void) { return pad; }\n"
)


@pytest.fixture(scope="module")
def library(tmp_path_factory) -> bytes:
    """The bytes of a freshly built shared library exporting ``tl_answer``."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler (cc/gcc) to build a test library")
    work = tmp_path_factory.mktemp("so")
    (work / "answer.c").write_text(SOURCE)
    subprocess.run(
        [compiler, "-shared", "-fPIC", "-o", str(work / "answer.so"), str(work / "answer.c")],
        check=True,
        capture_output=True,
    )
    return (work / "answer.so").read_bytes()


def _write(tmp_path, data: bytes, name: str = "softmax_kernel.so"):
    path = tmp_path / name
    path.write_bytes(data)
    return path


def _patched(data: bytes, offset: int, fmt: str, value: int) -> bytes:
    raw = bytearray(data)
    struct.pack_into(fmt, raw, offset, value)
    return bytes(raw)


def _refused(path, *fragments: str, **kwargs) -> str:
    with pytest.raises(SharedObjectError) as info:
        check_shared_object(path, **kwargs)
    message = str(info.value)
    assert str(path) in message, message
    for fragment in fragments:
        assert fragment in message, f"{message!r} does not say {fragment!r}"
    assert info.value.path == str(path)
    return message


def test_a_complete_library_passes_and_loads(tmp_path, library):
    path = _write(tmp_path, library)
    check_shared_object(path)
    assert ctypes.CDLL(str(path)).tl_answer() == 42


@pytest.mark.parametrize("keep", [0, 3, 15, 40, 1024, 2048, 3072, 4096, "half", "all but 1"])
def test_a_truncated_library_is_refused(tmp_path, library, keep):
    size = {"half": len(library) // 2, "all but 1": len(library) - 1}.get(keep, keep)
    path = _write(tmp_path, library[:size])
    fragment = "is empty" if size == 0 else "is truncated"
    _refused(path, fragment, "rebuild")


def test_the_fix_is_part_of_the_message(tmp_path, library):
    path = _write(tmp_path, library[:2048])
    message = _refused(path, fix="run `python -m simulator build` again")
    assert message.endswith("run `python -m simulator build` again")


def test_other_word_size_and_byte_order_are_named(tmp_path, library):
    other_class = 1 if struct.calcsize("P") == 8 else 2
    _refused(_write(tmp_path, _patched(library, 4, "B", other_class), "a.so"), "-bit library", "this Python")
    other_order = 2 if sys.byteorder == "little" else 1
    _refused(_write(tmp_path, _patched(library, 5, "B", other_order), "b.so"), "-endian, but this machine")
    _refused(_write(tmp_path, _patched(library, 4, "B", 7), "c.so"), "invalid ELF class 7")


@pytest.mark.parametrize(
    "e_type, fragment",
    [(ET_REL, "relocatable object file"), (ET_EXEC, "an executable"), (4, "core dump"), (9, "ELF type 9")],
)
def test_other_file_types_are_named(tmp_path, library, e_type, fragment):
    order = "<" if library[5] == 1 else ">"
    _refused(_write(tmp_path, _patched(library, 16, order + "H", e_type)), fragment)


def test_a_library_for_another_machine_names_both_machines(tmp_path, library):
    order = "<" if library[5] == 1 else ">"
    ours = this_machine()
    other = 183 if ours != 183 else 62
    message = _refused(_write(tmp_path, _patched(library, 18, order + "H", other)), "is built for")
    assert f"e_machine {other}" in message and f"e_machine {ours}" in message
    check_shared_object(_write(tmp_path, _patched(library, 18, order + "H", other), "x.so"), machine=other)


def test_not_a_library_at_all(tmp_path):
    _refused(_write(tmp_path, b"#!/bin/sh\necho hi\n"), "is not an ELF file", "#!/bin/s")
    _refused(_write(tmp_path, b"\x7fEL", "short.so"), "is truncated")
    _refused(tmp_path / "missing.so", "does not exist")
    (tmp_path / "dir.so").mkdir()
    _refused(tmp_path / "dir.so", "not a regular file")


def test_this_machine_agrees_with_the_platform_name():
    expected = _MACHINE_BY_NAME.get(platform.machine().lower())
    if expected is None:
        pytest.skip(f"platform.machine() {platform.machine()!r} is not in the table")
    assert this_machine() == expected


def test_checked_load_of_a_truncated_library_does_not_crash(tmp_path, library):
    """In a child process: the check refuses the file, so dlopen never maps it and the child exits cleanly."""
    path = _write(tmp_path, library[:4096])
    script = textwrap.dedent(
        f"""
        import ctypes
        from torchlight.backends.cuda_c.shared_object import SharedObjectError, check_shared_object
        try:
            check_shared_object({str(path)!r})
        except SharedObjectError as err:
            print("refused:", err)
        else:
            ctypes.CDLL({str(path)!r})
        """
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, (result.returncode, result.stderr)
    assert "refused:" in result.stdout and "is truncated" in result.stdout


def test_control_unchecked_load_of_the_same_file_fails(tmp_path, library):
    """Without the check the same truncated file cannot be loaded (glibc's dlopen dies with SIGBUS)."""
    path = _write(tmp_path, library[:4096])
    script = f"import ctypes; ctypes.CDLL({str(path)!r})"
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert result.returncode != 0, "a truncated library loaded: the check above tests nothing"


@pytest.fixture
def peak_allocation():
    """A callable giving the most memory Python allocated since the test began (tracemalloc)."""
    tracemalloc.start()
    try:
        yield lambda: tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


GIB3 = 3 << 30


def test_a_huge_sparse_library_is_checked_from_its_headers_alone(tmp_path, library, peak_allocation):
    # A real library grown to 3 GiB of holes (what `truncate -s 3G` makes): the segments still lie
    # inside the file, so it passes, and only the ELF header and header tables are read.
    path = _write(tmp_path, library)
    os.truncate(path, GIB3)
    check_shared_object(path)
    assert peak_allocation() < 1 << 20, f"the check allocated {peak_allocation()} bytes"


def test_a_huge_sparse_file_of_zeros_is_refused_after_reading_its_first_bytes(tmp_path, peak_allocation):
    path = tmp_path / "holes.so"
    path.touch()
    os.truncate(path, GIB3)
    _refused(path, "is not an ELF file")
    assert peak_allocation() < 1 << 20, f"the check allocated {peak_allocation()} bytes"


def test_a_crafted_section_count_is_refused_not_walked(tmp_path, library, peak_allocation):
    # e_shnum 0 moves the count into section 0's sh_size; a count of 2**24 in a sparse file
    # long enough to hold that table would otherwise be walked entry by entry.
    if library[4] != 2:
        pytest.skip("the offsets below are those of a 64-bit ELF header")
    order = "<" if library[5] == 1 else ">"
    (shoff,) = struct.unpack_from(order + "Q", library, 40)
    data = _patched(_patched(library, 60, order + "H", 0), shoff + 32, order + "Q", 1 << 24)
    path = _write(tmp_path, data)
    os.truncate(path, shoff + (64 << 24) + 64)
    _refused(path, f"declares {1 << 24} header-table entries")
    assert peak_allocation() < 1 << 20, f"the check allocated {peak_allocation()} bytes"


def test_no_corruption_of_the_headers_escapes_as_another_exception(tmp_path, library):
    # Every byte of the ELF header and of the program header table set to 0x00, 0x7f and 0xff in
    # turn: the check either passes or names the file, never a parser's own exception.
    order = "<" if library[5] == 1 else ">"
    if library[4] == 2:
        phoff, phentsize, phnum = struct.unpack_from(order + "Q", library, 32)[0], 56, library[56]
    else:
        phoff, phentsize, phnum = struct.unpack_from(order + "I", library, 28)[0], 32, library[44]
    offsets = list(range(16, 64)) + list(range(phoff, phoff + phentsize * phnum, 3))
    path = tmp_path / "patched.so"
    refused = 0
    for offset in offsets:
        for value in (0x00, 0x7F, 0xFF):
            path.write_bytes(_patched(library, offset, "B", value))
            try:
                check_shared_object(path)
            except SharedObjectError as err:
                assert err.path == str(path)
                refused += 1
    # Many fields (addresses, flags, alignments) do not matter to the check; the sizes and offsets do.
    assert refused, "no patched file was refused: the patches missed the headers"


def test_without_pyelftools_the_error_names_the_extra(tmp_path, library, monkeypatch):
    path = _write(tmp_path, library)
    for name in [m for m in sys.modules if m == "elftools" or m.startswith("elftools.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "elftools", None)
    with pytest.raises(ModuleNotFoundError, match=r'pyelftools.*pip install "torchlight\[cuda\]"'):
        check_shared_object(path)
    from torchlight.backends.cuda_c.loader import KernelLibraryError, _open_library

    with pytest.raises(KernelLibraryError, match=r'pyelftools.*pip install "torchlight\[cuda\]"'):
        _open_library(path)
