"""The kernel loader checks each library's ELF header and tables before ``dlopen``.

A truncated ``softmax_kernel.so`` used to kill the process with SIGBUS inside ``dlopen``, and a
library for another machine was reported as "No such file or directory". Each load runs in a
child process, so a regression shows as a failed test, not a crashed test run.
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import sys
import textwrap

import pytest

from torchlight.backends.cuda_c.loader import BUILD_HINT, KERNEL_DIR_ENV, LIBRARIES

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ELF libraries: Linux only")


@pytest.fixture(scope="module")
def library(tmp_path_factory) -> bytes:
    """A real shared library (not a kernel library: the ELF check comes before any symbol lookup)."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler (cc/gcc) to build a test library")
    work = tmp_path_factory.mktemp("lib")
    (work / "lib.c").write_text("static char pad[65536] = {1};\nchar *tl_pad(void) { return pad; }\n")
    subprocess.run(
        [compiler, "-shared", "-fPIC", "-o", str(work / "lib.so"), str(work / "lib.c")],
        check=True,
        capture_output=True,
    )
    return (work / "lib.so").read_bytes()


def _load_in_child(directory) -> subprocess.CompletedProcess:
    script = textwrap.dedent(
        """
        from torchlight.backends.cuda_c.loader import CudaCKernels, KernelLibraryError, find_kernel_dir
        try:
            CudaCKernels.load(find_kernel_dir())
        except KernelLibraryError as err:
            print("KernelLibraryError:", err)
        """
    )
    env = {**os.environ, KERNEL_DIR_ENV: str(directory)}
    return subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, env=env
    )


def _kernel_dir(tmp_path, broken: str, data: bytes, library: bytes):
    for name in LIBRARIES:
        (tmp_path / f"{name}.so").write_bytes(data if name == broken else library)
    return tmp_path


@pytest.mark.parametrize("broken", list(LIBRARIES))
@pytest.mark.parametrize("keep", [1024, 2048, 4096])
def test_a_truncated_kernel_library_is_refused_not_crashed(tmp_path, library, broken, keep):
    directory = _kernel_dir(tmp_path, broken, library[:keep], library)
    result = _load_in_child(directory)
    assert result.returncode == 0, f"the loader crashed (exit {result.returncode}): {result.stderr}"
    out = result.stdout
    assert f"{broken}.so is not a loadable shared library: it is truncated: {keep} bytes" in out, out
    assert f"rebuild it: {BUILD_HINT}" in out, out


def test_a_kernel_library_for_another_machine_names_the_machine(tmp_path, library):
    raw = bytearray(library)
    order = "<" if raw[5] == 1 else ">"
    (ours,) = struct.unpack_from(order + "H", raw, 18)
    struct.pack_into(order + "H", raw, 18, 183 if ours != 183 else 62)
    result = _load_in_child(_kernel_dir(tmp_path, "softmax_kernel", bytes(raw), library))
    assert result.returncode == 0, result.stderr
    assert "softmax_kernel.so is not a loadable shared library: it is built for" in result.stdout, (
        result.stdout
    )
    assert "No such file" not in result.stdout
